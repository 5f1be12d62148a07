package card

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/hdlgen/ir"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/pcie/pg213"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// fullCard builds card i of the two-party scenario with link.
func fullCard(t testing.TB, name string, i int, link *ir.Module) *ir.Module {
	return cardOf(t, name, config(t, i), link)
}

// cardOf builds the card name around the manager for c, with link.
func cardOf(t testing.TB, name string, c manager.Config, link *ir.Module) *ir.Module {
	return stallCard(t, name, c, link, 0)
}

func TestFullLint(t *testing.T) {
	l, err := optlink.Module(optlink.Config{})
	if err != nil {
		t.Fatal(err)
	}
	verilator.Lint(t, fullCard(t, "onic_card", 0, l))
}

// requestsFlag is how many requests TestTwoFullCards sends (make soak
// raises it).
var requestsFlag = flag.Int("requests", 24, "requests host A sends in TestTwoFullCards")

// axisPacket collects one AXI4-Stream packet's kept DWs.
type axisPacket struct {
	dws  []byte
	user []uint64
}

// TestTwoFullCards: two whole cards of the two-party scenario joined by
// their port A lanes over a fibre that flips bits. Host A writes and
// reads through its window (CQ packets from the pcie/pg213 model): every
// write reaches card B's RQ interface as the two O-NICs' models forward
// it (address and requester translated by A, checked by B's port
// pipeline); every read does too, host B answers it on RC, card B's remote
// table sends the completion back over the link, and card A's port
// pipeline hands it to CC with A's local requester back: the completion
// host A receives is the one the models predict. Card B's RQ keeps the
// order PCIe requires of it (Base Specification §2.4.1, Table 2-40): a read
// never passes a write sent before it, and reads and writes each keep
// their order, while a write may pass a read waiting for a tag.
func TestTwoFullCards(t *testing.T) {
	tools.Long(t)
	link := testLink(t)
	topA := fullCard(t, "onic_card_a", 0, link)
	a := newDUT(t, topA)
	b := newDUT(t, fullCard(t, "onic_card_b", 1, link))
	// Card A's every input and output, for the HDL replay below.
	rec := replay.New(topA, a.Sim)
	selfA, selfB := tlp.NewID(0x01, 0, 0), tlp.NewID(0x02, 0, 0)
	a.drive("cfg_bus_number", uint64(selfA.Bus()))
	b.drive("cfg_bus_number", uint64(selfB.Bus()))
	rec.Reset(true)
	a.Settle()
	if err := rec.Cycle(); err != nil {
		t.Fatal(err)
	}
	rec.Reset(false)
	for _, s := range []*dut{a, b} {
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
	}
	// The models, their functions enumerated at bases.
	modelA, _ := modelOf(t, config(t, 0), selfA)
	modelB, _ := modelOf(t, config(t, 1), selfB)
	d := design(t, 0)
	w := d.Windows[0]
	r := rand.New(rand.NewPCG(41, 42))

	// The requests host A makes, and what the models say B's host sees.
	var cqBeats []func(*dut)
	var wantRQ []string
	var wantReq []tlp.TLP           // the requests as B's host should get them (with A's tags), in order
	var fromA []tlp.TLP             // the requests as they reach card B
	reads := 0                      // how many of the requests are reads
	modelTag := map[uint16]uint16{} // card B's local tag -> model B's for the same read
	for i := range *requestsFlag {
		k := []tlp.Kind{tlp.MWr, tlp.MRd}[i%2]
		fm, typ, _ := tlp.FmtType(k, true, 0)
		x := tlp.TLP{Fmt: fm, Type: typ, Length: uint16(1 + r.IntN(16)), Tag: uint16(i % 256), RequesterID: tlp.NewID(0, 0, 0), // (the CQ descriptor has 8 tag bits)
			FirstBE: 0xF, LastBE: 0xF, Address: bases[w.BAR] + w.Offset + uint64(r.IntN(1<<16))&^3}
		if x.Length == 1 {
			x.LastBE = 0
		}
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
		}
		var oa, ob pmgr.Outcome
		modelA.Process(&x, pmgr.FromHost, &oa)
		if oa.Action != pmgr.Forward || oa.Egress.Kind != ntb.EgressPortA {
			t.Fatalf("request %d: model A %+v", i, oa)
		}
		y := x
		oa.Apply(&y)
		fromA = append(fromA, y)
		if k == tlp.MWr {
			// (Model B takes reads as card B sends them to its host,
			// below: each holds a tag until its completion.)
			modelB.Process(&y, pmgr.FromPortA, &ob)
			if ob.Action != pmgr.Forward || ob.Egress.Kind != ntb.EgressHost {
				t.Fatalf("request %d: model B %+v", i, ob)
			}
			ob.Apply(&y)
		} else {
			y.RequesterID = selfB // as card B's own, under a tag of B's
		}
		wantRQ = append(wantRQ, y.String())
		wantReq = append(wantReq, y)
		if k == tlp.MRd {
			reads++
		}
		c, err := pg213.ToCQ(&x, w.BAR, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkt := append(c.Descriptor[:], c.Payload...)
		for o := 0; o < len(pkt); o += 64 {
			end := min(o+64, len(pkt))
			chunk, last := pkt[o:end], end == len(pkt)
			cqBeats = append(cqBeats, func(s *dut) {
				s.drive("m_axis_cq_tdata", words(chunk, 512)...)
				s.drive("m_axis_cq_tkeep", 1<<((len(chunk)+3)/4)-1)
				s.drive("m_axis_cq_tlast", b2u(last))
				s.drive("m_axis_cq_tuser", uint64(c.FirstBE)|uint64(c.LastBE)<<8, 0, 0)
			})
		}
	}

	type word struct {
		data  []uint64
		ctl   bool
		valid bool
	}
	const delay = 9
	ab, ba := make([]word, delay), make([]word, delay)
	for i := range ab {
		ab[i].data, ba[i].data = make([]uint64, 8), make([]uint64, 8)
	}
	var rqPkt, ccPkt axisPacket
	localTags := map[uint16]bool{}
	var gotCC, wantCC []string
	gotRQ := make([]string, len(wantRQ)) // in wantRQ's order
	got := 0                             // requests at RQ
	next := func(i int, k tlp.Kind) int {
		for i < len(wantReq) && wantReq[i].Kind() != k {
			i++
		}
		return i
	}
	// The first read and the first write not yet at RQ.
	nextRead, nextWrite := next(0, tlp.MRd), next(0, tlp.MWr)
	var rcBeats []func(*dut) // host B's answers, queued as its reads arrive
	bi, ri, upAt, flips := 0, 0, -1, 0
	for cyc := 0; cyc < 30000+300*len(wantRQ) && (len(gotCC) < reads || got < len(wantRQ)); cyc++ {
		in := [2]word{ba[cyc%delay], ab[cyc%delay]}
		rqReady := r.IntN(4) != 0
		for k, s := range []*dut{a, b} {
			s.drive("port_a_phy_up", 1)
			s.drive("port_b_phy_up", 0)
			s.drive("port_a_tx_ready", 1)
			s.drive("port_b_tx_ready", 1)
			s.drive("port_a_rx_data", in[k].data...)
			s.drive("port_a_rx_ctl", b2u(in[k].ctl))
			s.drive("port_a_rx_valid", b2u(in[k].valid))
			s.drive("s_axis_cc_tready", 1)
			s.drive("s_axis_rq_tready", b2u(rqReady))
			s.drive("m_kernel_tlp_ready", 1)
			s.drive("m_axis_cq_tvalid", 0)
			s.drive("m_axis_rc_tvalid", 0)
		}
		offer := upAt >= 0 && bi < len(cqBeats) && r.IntN(3) != 0
		if offer {
			a.drive("m_axis_cq_tvalid", 1)
			cqBeats[bi](a)
		}
		rcOffer := ri < len(rcBeats) && r.IntN(2) == 0
		if rcOffer {
			b.drive("m_axis_rc_tvalid", 1)
			rcBeats[ri](b)
		}
		a.Settle()
		b.Settle()
		if offer && a.bit("m_axis_cq_tready") {
			bi++
		}
		if rcOffer && b.bit("m_axis_rc_tready") {
			ri++
		}
		if upAt < 0 && a.get("port_a_state")[0] == optlink.StateUp && b.get("port_a_state")[0] == optlink.StateUp {
			upAt = cyc
		}
		// Card B's RQ: requests for host B.
		if b.bit("s_axis_rq_tvalid") && rqReady {
			if len(rqPkt.dws) == 0 {
				rqPkt.user = append([]uint64(nil), b.get("s_axis_rq_tuser")...)
			}
			rqPkt.dws = keptDWs(rqPkt.dws, b.get("s_axis_rq_tdata"), b.get("s_axis_rq_tkeep")[0])
			if b.bit("s_axis_rq_tlast") {
				var q pg213.RQ
				copy(q.Descriptor[:], rqPkt.dws[:16])
				q.FirstBE, q.LastBE, q.Payload = uint8(rqPkt.user[0]&15), uint8(rqPkt.user[0]>>8&15), rqPkt.dws[16:]
				x, err := q.TLP(selfB)
				if err != nil {
					t.Fatalf("RQ at card B: %v", err)
				}
				// A read leaves with a local tag from card B's tag table,
				// which no other outstanding read has; its completion gets
				// the read's own tag back.
				orig := uint16(0)
				k := &nextWrite
				if x.Kind() == tlp.MRd {
					k = &nextRead
				}
				if *k >= len(wantReq) {
					t.Fatalf("RQ at card B: %s, not one host A sent", x.String())
				}
				if x.Kind() == tlp.MRd && nextWrite < *k {
					t.Fatalf("RQ at card B: read %d passed write %d (PCIe §2.4.1)", *k, nextWrite)
				}
				slot := *k
				*k = next(*k+1, x.Kind())
				got++
				if k := slot; x.Kind() == tlp.MRd {
					orig = wantReq[k].Tag
					// Model A sends it out of port A with a tag of the
					// port's, model B takes it: now, as card B sends it
					// on, so that no more are outstanding in the models
					// than in the cards.
					yb := fromA[k]
					if !modelA.Issue(&yb, 0) {
						t.Fatalf("read %d: model A's port tags ran out", k)
					}
					var ob pmgr.Outcome
					modelB.Process(&yb, pmgr.FromPortA, &ob)
					if ob.Action != pmgr.Forward || ob.Egress.Kind != ntb.EgressHost || ob.Requester != selfB {
						t.Fatalf("read %d: model B %+v", k, ob)
					}
					modelTag[x.Tag] = ob.Tag
					if _, busy := localTags[x.Tag]; busy {
						t.Fatalf("card B gave local tag %d to two outstanding reads", x.Tag)
					}
					localTags[x.Tag] = true
					y := x
					y.Tag = orig
					gotRQ[k] = y.String()
				} else {
					gotRQ[k] = x.String()
				}
				if x.Kind() == tlp.MRd {
					// Host B answers with data from its memory.
					data := make([]byte, 4*int(x.Length))
					for j := range data {
						data[j] = byte(r.Uint32())
					}
					c := readCompletion(&x, tlp.NewID(0, 0, 0), data)
					rcPkt, err := pg213.ToRC(&c, x.Address, true)
					if err != nil {
						t.Fatal(err)
					}
					// The card frees the tag once it has taken this, its
					// one completion: it may hand it out again after.
					delete(localTags, x.Tag)
					pkt := append(rcPkt.Descriptor[:], rcPkt.Payload...)
					for o := 0; o < len(pkt); o += 64 {
						end := min(o+64, len(pkt))
						chunk, last := pkt[o:end], end == len(pkt)
						rcBeats = append(rcBeats, func(s *dut) {
							s.drive("m_axis_rc_tdata", words(chunk, 512)...)
							s.drive("m_axis_rc_tkeep", 1<<((len(chunk)+3)/4)-1)
							s.drive("m_axis_rc_tlast", b2u(last))
							s.drive("m_axis_rc_tuser", 0, 0, 0)
						})
					}
					// What host A should get: B's model sends the completion
					// back out of port A, A's model gives it A's requester.
					var ob, oa pmgr.Outcome
					back := c
					back.Tag = modelTag[x.Tag]
					modelB.Process(&back, pmgr.FromHost, &ob)
					if ob.Action != pmgr.Forward || ob.Egress.Kind != ntb.EgressPortA || !ob.Freed {
						t.Fatalf("model B routes the completion %+v", ob)
					}
					ob.Apply(&back)
					modelA.Process(&back, pmgr.FromPortA, &oa)
					if oa.Action != pmgr.Forward || oa.Egress.Kind != ntb.EgressHost || !oa.Freed || oa.Tag != orig {
						t.Fatalf("model A routes the completion %+v", oa)
					}
					oa.Apply(&back)
					// The CC adapter leaves Completer ID Enable clear, so the
					// block puts its own ID in: host A addressed card A's BAR,
					// and card A completes. (The model keeps host B's ID;
					// docs/hdl.md notes the difference.)
					back.CompleterID = selfA
					wantCC = append(wantCC, back.String())
				}
				rqPkt = axisPacket{}
			}
		}
		// Card A's CC: completions for host A.
		if a.bit("s_axis_cc_tvalid") {
			ccPkt.dws = keptDWs(ccPkt.dws, a.get("s_axis_cc_tdata"), a.get("s_axis_cc_tkeep")[0])
			if a.bit("s_axis_cc_tlast") {
				var c pg213.CC
				copy(c.Descriptor[:], ccPkt.dws[:12])
				c.Payload = ccPkt.dws[12:]
				x, err := c.TLP(selfA)
				if err != nil {
					t.Fatalf("CC at card A: %v", err)
				}
				gotCC = append(gotCC, x.String())
				ccPkt = axisPacket{}
			}
		}
		for k, s := range []*dut{a, b} {
			wd := word{data: append([]uint64(nil), s.get("port_a_tx_data")...), ctl: s.bit("port_a_tx_ctl"), valid: s.bit("port_a_tx_valid")}
			// A data word in 20 damaged (only a replay repairs it), a
			// control word in 60 (dropped; the next one says the same).
			rate := 20
			if wd.ctl {
				rate = 60
			}
			if wd.valid && r.IntN(rate) == 0 {
				wd.data[r.IntN(8)] ^= 1 << r.IntN(64)
				flips++
			}
			if k == 0 {
				ab[cyc%delay] = wd
			} else {
				ba[cyc%delay] = wd
			}
		}
		if err := rec.Cycle(); err != nil {
			t.Fatal(err)
		}
		a.Step()
		b.Step()
	}
	if fmt.Sprint(gotRQ) != fmt.Sprint(wantRQ) {
		t.Fatalf("card B's RQ:\n got  %v\n want %v", gotRQ, wantRQ)
	}
	if len(wantCC) != reads || fmt.Sprint(gotCC) != fmt.Sprint(wantCC) {
		t.Fatalf("card A's CC (%d reads):\n got  %v\n want %v", reads, gotCC, wantCC)
	}
	t.Logf("%d requests across, %d completions back; %d bits flipped, replays %d (A) %d (B)", got, len(gotCC), flips,
		a.get("port_a_replays")[0], b.get("port_a_replays")[0])
	if a.get("port_a_replays")[0]+b.get("port_a_replays")[0] == 0 {
		t.Fatal("no frame was damaged and replayed: the test needs more flipped bits")
	}
	// Card A's Verilog, replayed with every input it saw, does what the
	// IR simulation did, cycle for cycle, in Icarus and in Verilator.
	replay.Verify(t, rec)
	t.Logf("card A replayed in Icarus and Verilator: %d cycles alike", rec.Cycles())
}

// keptDWs appends the DWs of a 512-bit beat that keep selects.
func keptDWs(p []byte, data []uint64, keep uint64) []byte {
	for k := range 16 {
		if keep>>k&1 == 1 {
			p = binary.LittleEndian.AppendUint32(p, uint32(data[k/2]>>(32*(k%2))))
		}
	}
	return p
}
