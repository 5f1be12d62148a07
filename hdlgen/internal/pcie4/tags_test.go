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
	s, err := sim.New(TagsModule())
	if err != nil {
		t.Fatal(err)
	}
	set := func(name string, v ...uint64) {
		if err := s.Drive(name, v); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	self := tlp.NewID(0x03, 0, 0)
	set("self_id", uint64(self))
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
	ri, got, maxOut := 0, 0, 0
	for cyc := 0; cyc < 60000 && (ri < len(reqs) || len(queue) > 0 || got < len(expect)); cyc++ {
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
			out := fromWords(t, get("rq_hdr"), x.HeaderLen())
			if out.Address != x.Address || out.RequesterID != self {
				t.Fatalf("request %d: %v left as %v", ri, x, out)
			}
			if x.Kind() == tlp.MWr {
				if out.Tag != x.Tag {
					t.Fatalf("request %d: a posted write's tag %d became %d", ri, x.Tag, out.Tag)
				}
			} else {
				if out.Tag > 255 {
					t.Fatalf("request %d: local tag %d", ri, out.Tag)
				}
				local := uint8(out.Tag)
				if _, busy := outstanding[local]; busy {
					t.Fatalf("request %d: tag %d handed out while outstanding", ri, local)
				}
				outstanding[local] = x
				ports[local] = port[ri%2]
				maxOut = max(maxOut, len(outstanding))
				n := 1 + r.IntN(3)
				for j := range n {
					c := tlp.TLP{Tag: uint16(local), RequesterID: self, CompleterID: tlp.NewID(0, 0, 0), ByteCount: uint16(4 * (n - j)),
						Length: 1, Data: make([]byte, 4), Status: tlp.StatusSC}
					c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
					queue[local] = append(queue[local], c)
				}
			}
			ri++
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
	if ri != len(reqs) || len(queue) != 0 || got != len(expect) {
		t.Fatalf("%d of %d requests, %d completions pending, %d of %d out", ri, len(reqs), len(queue), got, len(expect))
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
	t.Logf("%d requests, %d completions (%d unexpected), up to %d outstanding", len(reqs), got, unexpected, maxOut)
}

func TestTagsLint(t *testing.T) { verilator.Lint(t, TagsModule()) }
