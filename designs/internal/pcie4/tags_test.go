package pcie4

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"onic/hdlgen/sim"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// hdrWords is a TLP's header on the 128-bit bus (DW0 on top), as words.
func hdrWords(t testing.TB, x *tlp.TLP) []uint64 {
	b, err := x.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var h [16]byte
	copy(h[:], b[:x.HeaderLen()])
	return []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])}
}

// fromWords decodes a header bus of n bytes (12 or 16).
func fromWords(t testing.TB, w []uint64, n int) tlp.TLP {
	var h [16]byte
	binary.BigEndian.PutUint64(h[:], w[1])
	binary.BigEndian.PutUint64(h[8:], w[0])
	b := h[:n]
	if h[0]&0x40 != 0 { // Fmt says a payload follows: give it zeros
		l := int(binary.BigEndian.Uint16(h[2:]) & 0x3ff)
		if l == 0 {
			l = 1024
		}
		b = append(b, make([]byte, 4*l)...)
	}
	var x tlp.TLP
	if err := x.Decode(b); err != nil {
		t.Fatal(err)
	}
	return x
}

// tagsSim simulates the tag table, with helpers that drive its inputs and
// read its outputs or fail the test.
func tagsSim(t *testing.T) (s *sim.Sim, set func(string, ...uint64), get func(string) []uint64) {
	s, err := sim.New(TagsModule())
	if err != nil {
		t.Fatal(err)
	}
	set = func(name string, v ...uint64) {
		if err := s.Drive(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get = func(name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return s, set, get
}

// TestTags: requests with colliding tags (eight tags shared by four
// requesters, from either port) leave under the card's requester ID,
// with local tags no two of which are outstanding at once; posted writes
// keep their tags; completions — routed to the card by its ID, split in
// up to three, returned in any order, under backpressure — come back
// with their request's own requester ID and tag and the port it came
// from, and a request's local tag is free again once its last completion
// says it is done; a completion for a tag nothing holds comes out as it
// went in, with port 0 (unexpected); 600 requests go through 256 tags.
func TestTags(t *testing.T) {
	s, set, get := tagsSim(t)
	self := tlp.NewID(0x03, 0, 0)
	set("self_id", uint64(self))
	set("nph_av", 15)
	set("npd_av", 15)
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	r := rand.New(rand.NewPCG(51, 52))
	var reqs []tlp.TLP
	for i := range 600 {
		k := tlp.MRd
		if r.IntN(3) == 0 {
			k = tlp.MWr
		}
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, Tag: uint16(r.IntN(8)) | uint16(r.IntN(2))<<9,
			RequesterID: tlp.NewID(0x10, 0, uint8(r.IntN(4))), Address: uint64(0x1000 + 4*i)}
		if k == tlp.MWr {
			x.Data = make([]byte, 4)
		}
		reqs = append(reqs, x)
	}
	outstanding := map[uint8]tlp.TLP{} // local tag -> the request as it came
	ports := map[uint8]uint64{}        // local tag -> the port it came from
	queue := map[uint8][]tlp.TLP{}     // completions still to come, per local tag, in order
	type cplOut struct {
		req        tlp.ID
		tag        uint16
		port       uint64
		unexpected bool
	}
	var expect []cplOut // the completions as they should leave, in the order taken
	port := []uint64{1, 2}
	var cur = -1 // the local tag whose completion is on offer
	ri, left, got, maxOut, passed := 0, 0, 0, 0, 0
	var waiting []int                // requests taken and not yet out, in the order taken
	npBehindWrite := map[int][]int{} // a read -> the writes waiting when it was taken
	for cyc := 0; cyc < 60000 && (left < len(reqs) || len(queue) > 0 || got < len(expect)); cyc++ {
		offer := ri < len(reqs) && r.IntN(3) != 0
		set("req_valid", b2u(offer))
		if offer {
			x := reqs[ri]
			set("req_hdr", hdrWords(t, &x)...)
			set("req_sop", 1)
			set("req_eop", 1)
			set("req_port", port[ri%2])
		}
		rqReady := r.IntN(4) != 0
		set("rq_ready", b2u(rqReady))
		if cur < 0 && len(queue) > 0 && r.IntN(2) == 0 {
			keys := make([]int, 0, len(queue))
			for k := range queue {
				keys = append(keys, int(k))
			}
			slices.Sort(keys)
			cur = keys[r.IntN(len(keys))]
		}
		if cur < 0 && r.IntN(40) == 0 {
			// A completion for a tag nothing holds.
			for k := range 256 {
				if _, busy := outstanding[uint8(k)]; !busy && len(queue[uint8(k)]) == 0 {
					c := tlp.TLP{Tag: uint16(k), RequesterID: self, ByteCount: 4, Length: 1, Data: make([]byte, 4)}
					c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
					queue[uint8(k)] = []tlp.TLP{c}
					cur = k
					break
				}
			}
		}
		if cur >= 0 {
			c := queue[uint8(cur)][0]
			w := hdrWords(t, &c)
			set("rc_hdr", w[0]>>32|w[1]<<32, w[1]>>32)
			set("rc_sop", 1)
			set("rc_eop", 1)
			set("rc_done", b2u(len(queue[uint8(cur)]) == 1))
		}
		set("rc_valid", b2u(cur >= 0))
		cplReady := r.IntN(3) != 0
		set("cpl_ready", b2u(cplReady))
		s.Settle()
		if offer && get("req_ready")[0] == 1 {
			x := reqs[ri]
			if x.Kind() != tlp.MWr {
				for _, w := range waiting {
					if reqs[w].Kind() == tlp.MWr {
						npBehindWrite[ri] = append(npBehindWrite[ri], w)
					}
				}
			}
			waiting = append(waiting, ri)
			ri++
		}
		if get("rq_valid")[0] == 1 && rqReady {
			h := get("rq_hdr")
			hl := 12
			if h[1]>>61&1 == 1 { // Fmt bit 0: a 4-DW header
				hl = 16
			}
			out := fromWords(t, h, hl)
			i := slices.IndexFunc(waiting, func(i int) bool { return reqs[i].Address == out.Address })
			if i < 0 {
				t.Fatalf("a request nobody sent left: %v", out)
			}
			at := waiting[i]
			waiting = slices.Delete(waiting, i, i+1)
			x := reqs[at]
			if out.RequesterID != self || out.Kind() != x.Kind() {
				t.Fatalf("request %d: %v left as %v", at, x, out)
			}
			// Each kind in order; a read never passes a write sent before it
			// (PCIe Table 2-39: only the other way round).
			for _, w := range waiting[:i] {
				if reqs[w].Kind() == x.Kind() {
					t.Fatalf("request %d left before request %d, of its kind, sent before it", at, w)
				}
			}
			for _, w := range npBehindWrite[at] {
				if slices.Contains(waiting, w) {
					t.Fatalf("read %d passed write %d sent before it", at, w)
				}
			}
			if i > 0 {
				passed++
			}
			if x.Kind() == tlp.MWr {
				if out.Tag != x.Tag {
					t.Fatalf("request %d: a posted write's tag %d became %d", at, x.Tag, out.Tag)
				}
			} else {
				if out.Tag > 255 {
					t.Fatalf("request %d: local tag %d", at, out.Tag)
				}
				local := uint8(out.Tag)
				if _, busy := outstanding[local]; busy {
					t.Fatalf("request %d: tag %d handed out while outstanding", at, local)
				}
				outstanding[local] = x
				ports[local] = port[at%2]
				maxOut = max(maxOut, len(outstanding))
				n := 1 + r.IntN(3)
				for j := range n {
					c := tlp.TLP{Tag: uint16(local), RequesterID: self, CompleterID: tlp.NewID(0, 0, 0), ByteCount: uint16(4 * (n - j)),
						Length: 1, Data: make([]byte, 4), Status: tlp.StatusSC}
					c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
					queue[local] = append(queue[local], c)
				}
			}
			left++
		}
		if cur >= 0 && get("rc_ready")[0] == 1 {
			local := uint8(cur)
			if x, busy := outstanding[local]; busy {
				expect = append(expect, cplOut{req: x.RequesterID, tag: x.Tag, port: ports[local]})
			} else {
				expect = append(expect, cplOut{req: self, tag: uint16(local), unexpected: true})
			}
			queue[local] = queue[local][1:]
			if len(queue[local]) == 0 {
				delete(queue, local)
				delete(outstanding, local) // free from the next cycle
			}
			cur = -1
		}
		if get("cpl_valid")[0] == 1 && cplReady {
			h := get("cpl_hdr")
			out := fromWords(t, []uint64{h[0] << 32, h[1]<<32 | h[0]>>32}, 12)
			if got >= len(expect) {
				t.Fatalf("completion %d: more than were taken", got)
			}
			if e := expect[got]; out.Tag != e.tag || out.RequesterID != e.req || get("cpl_port")[0] != e.port {
				t.Fatalf("completion %d: %s tag %d port %d, want %+v", got, out.RequesterID, out.Tag, get("cpl_port")[0], e)
			}
			got++
		}
		s.Step()
	}
	if left != len(reqs) || len(queue) != 0 || got != len(expect) {
		t.Fatalf("%d of %d requests out, %d completions pending, %d of %d out", left, len(reqs), len(queue), got, len(expect))
	}
	if passed == 0 {
		t.Fatal("no write passed a read waiting for a tag: the test misses the park")
	}
	unexpected := 0
	for _, e := range expect {
		if e.unexpected {
			unexpected++
		}
	}
	if unexpected == 0 {
		t.Fatal("no completion for a free tag was sent: the test misses the unexpected case")
	}
	if maxOut < 20 {
		t.Fatalf("at most %d requests were outstanding: the test does not load the table", maxOut)
	}
	t.Logf("%d requests, %d completions (%d unexpected), up to %d outstanding, %d passed a waiting read", len(reqs), got, unexpected, maxOut, passed)
}

func TestTagsLint(t *testing.T) { verilator.Lint(t, TagsModule()) }

// TestPostedPassStarvedReads: with every one of the 256 tags out and no
// completion coming, reads wait and the writes sent after them still
// reach RQ (PCIe §2.4.1: posted requests must be able to pass non-posted
// ones); a read waits too while the block's pcie_tfc_nph_av says it has
// no non-posted header credit, or pcie_tfc_npd_av too little data credit
// for an AtomicOp (PG213, "Avoiding Head-of-Line Blocking for Posted
// Requests"), counting what the card sent in the two cycles those lag by.
func TestPostedPassStarvedReads(t *testing.T) { postedPassStarvedReads(t, false) }

// TestParkOverflowDrops: with every tag out and the park of ParkDepth
// full (a peer that ignores the tags it was given: the optical link has
// one credit type), a read that arrives is dropped and counted in
// np_overflows rather than left at the input, where it would hold up the
// posted writes behind it, which still leave.
func TestParkOverflowDrops(t *testing.T) { postedPassStarvedReads(t, true) }

// postedPassStarvedReads runs the two tests: with overflow, the flood
// past a full park and then no more.
func postedPassStarvedReads(t *testing.T, overflow bool) {
	s, set, getWords := tagsSim(t)
	get := func(name string) uint64 { return getWords(name)[0] }
	self := tlp.NewID(0x03, 0, 0)
	set("self_id", uint64(self))
	set("nph_av", 15)
	set("npd_av", 15)
	set("rq_ready", 1)
	set("cpl_ready", 1)
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	addr := uint64(0x10000)
	mk := func(k tlp.Kind, n int) tlp.TLP {
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, Length: uint16(n), FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0x10, 0, 0), Address: addr}
		if n == 1 {
			x.LastBE = 0
		}
		if f&2 != 0 {
			x.Data = make([]byte, 4*n)
		}
		addr += 0x100
		return x
	}
	// send offers the requests one after another and runs until idle
	// cycles pass with nothing on RQ; it gives what left, in order, with
	// the cycle each left in.
	type sent struct {
		kind tlp.Kind
		tag  uint16
		at   int
	}
	cyc := 0
	send := func(xs []tlp.TLP, idle int) []sent {
		var out []sent
		quiet := 0
		for i := 0; i < len(xs) || quiet < idle; cyc++ {
			set("req_valid", b2u(i < len(xs)))
			if i < len(xs) {
				set("req_hdr", hdrWords(t, &xs[i])...)
				set("req_sop", 1)
				set("req_eop", 1)
				set("req_port", 1)
			}
			s.Settle()
			if i < len(xs) && get("req_ready") == 1 {
				i++
			}
			if get("rq_valid") == 1 {
				o := fromWords(t, getWords("rq_hdr"), 12)
				out = append(out, sent{o.Kind(), o.Tag, cyc})
				quiet = 0
			} else {
				quiet++
			}
			s.Step()
			if cyc > 1_000_000 {
				t.Fatal("no end")
			}
		}
		return out
	}
	count := func(out []sent, k tlp.Kind) int {
		n := 0
		for _, o := range out {
			if o.kind == k {
				n++
			}
		}
		return n
	}
	complete := func(tag uint16) {
		c := tlp.TLP{Tag: tag, RequesterID: self, ByteCount: 4, Length: 1, Data: make([]byte, 4)}
		c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
		w := hdrWords(t, &c)
		set("rc_hdr", w[0]>>32|w[1]<<32, w[1]>>32)
		set("rc_sop", 1)
		set("rc_eop", 1)
		set("rc_done", 1)
		set("rc_valid", 1)
		s.Settle()
		if get("rc_ready") != 1 {
			t.Fatal("a completion was not taken")
		}
		s.Step()
		cyc++
		set("rc_valid", 0)
	}

	// Every tag out.
	var reads []tlp.TLP
	for range 256 {
		reads = append(reads, mk(tlp.MRd, 1))
	}
	out := send(reads, 8)
	if count(out, tlp.MRd) != 256 {
		t.Fatalf("%d of 256 reads left with tags free", len(out))
	}
	if overflow {
		// A peer that ignores tags: the park fills (ParkDepth reads in
		// its FIFO, two in the register slice at its head), the reads
		// after it are dropped and counted, and the writes among them
		// still leave.
		var flood []tlp.TLP
		for range ParkDepth + 2 {
			flood = append(flood, mk(tlp.MRd, 1))
		}
		for range 10 {
			flood = append(flood, mk(tlp.MRd, 1), mk(tlp.MWr, 2))
		}
		out = send(flood, 300)
		if r, w := count(out, tlp.MRd), count(out, tlp.MWr); r != 0 || w != 10 {
			t.Fatalf("a full park: %d reads and %d of 10 writes left", r, w)
		}
		if n := get("np_overflows"); n != 10 {
			t.Fatalf("np_overflows %d, want the 10 reads that found the park full", n)
		}
		return
	}
	// Reads and writes, one after the other: the writes all leave.
	var mixed []tlp.TLP
	for range 40 {
		mixed = append(mixed, mk(tlp.MRd, 1), mk(tlp.MWr, 1+int(addr%7)))
	}
	out = send(mixed, 300)
	if r, w := count(out, tlp.MRd), count(out, tlp.MWr); r != 0 || w != 40 {
		t.Fatalf("with every tag out: %d reads and %d of 40 writes left", r, w)
	}
	// One tag back, one read out.
	complete(7)
	out = send(nil, 300)
	if len(out) != 1 || out[0].kind != tlp.MRd || out[0].tag != 7 {
		t.Fatalf("one tag freed: %+v left", out)
	}
	// No header credit: tags free, the reads still wait; writes pass.
	set("nph_av", 0)
	for tag := range uint16(20) {
		complete(100 + tag)
	}
	out = send([]tlp.TLP{mk(tlp.MWr, 1), mk(tlp.MWr, 2)}, 300)
	if r, w := count(out, tlp.MRd), count(out, tlp.MWr); r != 0 || w != 2 {
		t.Fatalf("without credit: %d reads and %d of 2 writes left", r, w)
	}
	// One credit the block does not update: one read every three cycles,
	// the two cycles its outputs lag by.
	set("nph_av", 1)
	out = send(nil, 300)
	if count(out, tlp.MRd) != 20 {
		t.Fatalf("%d of the 20 waiting reads left with a credit", count(out, tlp.MRd))
	}
	for i := 1; i < len(out); i++ {
		if out[i].at-out[i-1].at < 3 {
			t.Fatalf("reads left at cycles %d and %d on one credit", out[i-1].at, out[i].at)
		}
	}
	// AtomicOps: a CAS of 32 bytes takes two data credits, a FetchAdd of
	// 8 one.
	set("nph_av", 15)
	set("npd_av", 1)
	for tag := range uint16(21) { // the 19 reads still waiting, and two
		complete(200 + tag)
	}
	if out := send(nil, 50); count(out, tlp.MRd) != 19 {
		t.Fatalf("%d of the 19 waiting reads left", count(out, tlp.MRd))
	}
	cas, add := mk(tlp.CAS, 8), mk(tlp.FetchAdd, 2)
	out = send([]tlp.TLP{cas}, 50)
	if len(out) != 0 {
		t.Fatalf("a 32-byte CAS left on one data credit: %+v", out)
	}
	set("npd_av", 2)
	out = send([]tlp.TLP{add}, 50)
	if len(out) != 2 || out[0].kind != tlp.CAS || out[1].kind != tlp.FetchAdd {
		t.Fatalf("with two data credits: %+v left, want the CAS then the FetchAdd", out)
	}
}
