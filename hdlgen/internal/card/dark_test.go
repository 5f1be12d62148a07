package card

import (
	"testing"

	"onic/hdlgen/internal/optlink"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/tlp"
)

// TestDarkPortDropsNotWedges: host A reads host B's memory across the
// link; the link goes dark while host B's completion is on its way, so
// card B's manager routes the completion to a port that is down. The
// card drops it and counts it (port_a_down_drops, the emulator's
// port-down under fail) instead of holding it at the link, where it would
// stall card B's manager and every host request behind it until the port
// came back: a request host B makes afterwards is still answered.
func TestDarkPortDropsNotWedges(t *testing.T) {
	link := testLink(t)
	a := newDUT(t, fullCard(t, "onic_card_a", 0, link))
	b := newDUT(t, fullCard(t, "onic_card_b", 1, link))
	a.drive("cfg_bus_number", 1)
	b.drive("cfg_bus_number", 2)
	for _, s := range []*dut{a, b} {
		s.SetReset(true)
		s.Step()
		s.SetReset(false)
		for _, in := range []string{"s_axis_cc_tready", "s_axis_rq_tready", "m_kernel_tlp_ready", "port_a_tx_ready", "port_b_tx_ready"} {
			s.drive(in, 1)
		}
	}
	w := design(t, 0).Windows[0]
	cq := func(s *dut, x *tlp.TLP, bar int) [][]byte {
		c, err := pg213.ToCQ(x, bar, 20, 0)
		if err != nil {
			t.Fatal(err)
		}
		return [][]byte{c.Descriptor[:]} // no payload: reads only
	}
	type word struct {
		data       []uint64
		ctl, valid bool
	}
	const delay = 5
	ab, ba := make([]word, delay), make([]word, delay)
	for i := range ab {
		ab[i].data, ba[i].data = make([]uint64, 8), make([]uint64, 8)
	}
	phy := true
	var sendA, sendB [][]byte // CQ beats waiting for each card
	var rcB [][]byte          // RC beats waiting for card B
	var rqB, ccB []byte
	var readsAtB []tlp.TLP
	var gotCC []tlp.TLP
	cycle := func() {
		for k, s := range []*dut{a, b} {
			in := [2]word{ba[0], ab[0]}[k]
			s.drive("port_a_phy_up", b2u(phy))
			s.drive("port_a_rx_data", in.data...)
			s.drive("port_a_rx_ctl", b2u(in.ctl))
			s.drive("port_a_rx_valid", b2u(in.valid))
		}
		offer := func(s *dut, q *[][]byte, prefix string) bool {
			if len(*q) == 0 {
				s.drive(prefix+"tvalid", 0)
				return false
			}
			s.drive(prefix+"tvalid", 1)
			s.drive(prefix+"tdata", words((*q)[0], 512)...)
			s.drive(prefix+"tkeep", 1<<((len((*q)[0])+3)/4)-1)
			s.drive(prefix+"tlast", 1)
			s.drive(prefix+"tuser", 0xF, 0, 0)
			return true
		}
		oa, ob, orc := offer(a, &sendA, "m_axis_cq_"), offer(b, &sendB, "m_axis_cq_"), offer(b, &rcB, "m_axis_rc_")
		a.Settle()
		b.Settle()
		if oa && a.bit("m_axis_cq_tready") {
			sendA = sendA[1:]
		}
		if ob && b.bit("m_axis_cq_tready") {
			sendB = sendB[1:]
		}
		if orc && b.bit("m_axis_rc_tready") {
			rcB = rcB[1:]
		}
		if b.bit("s_axis_rq_tvalid") {
			rqB = keptDWs(rqB, b.get("s_axis_rq_tdata"), b.get("s_axis_rq_tkeep")[0])
			if b.bit("s_axis_rq_tlast") {
				var q pg213.RQ
				copy(q.Descriptor[:], rqB[:16])
				x, err := q.TLP(tlp.NewID(2, 0, 0))
				if err != nil {
					t.Fatal(err)
				}
				readsAtB, rqB = append(readsAtB, x), nil
			}
		}
		if b.bit("s_axis_cc_tvalid") {
			ccB = keptDWs(ccB, b.get("s_axis_cc_tdata"), b.get("s_axis_cc_tkeep")[0])
			if b.bit("s_axis_cc_tlast") {
				var c pg213.CC
				copy(c.Descriptor[:], ccB[:12])
				c.Payload = ccB[12:]
				x, err := c.TLP(tlp.NewID(2, 0, 0))
				if err != nil {
					t.Fatal(err)
				}
				gotCC, ccB = append(gotCC, x), nil
			}
		}
		ab = append(ab[1:], word{append([]uint64(nil), a.get("port_a_tx_data")...), a.bit("port_a_tx_ctl"), a.bit("port_a_tx_valid")})
		ba = append(ba[1:], word{append([]uint64(nil), b.get("port_a_tx_data")...), b.bit("port_a_tx_ctl"), b.bit("port_a_tx_valid")})
		a.Step()
		b.Step()
	}
	run := func(what string, done func() bool) {
		for i := 0; !done(); i++ {
			if i == 5000 {
				t.Fatalf("%s: not after 5000 cycles", what)
			}
			cycle()
		}
	}
	up := func(s *dut) bool { return s.get("port_a_state")[0] == optlink.StateUp }
	run("the link comes up", func() bool { return up(a) && up(b) })

	// Host A reads 8 DWs of host B's memory through its window, reads more
	// than the link's input slice can hold.
	const reads = 6
	fm, typ, _ := tlp.FmtType(tlp.MRd, true, 0)
	for i := range reads {
		rd := tlp.TLP{Fmt: fm, Type: typ, Length: 8, Tag: uint16(i), RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF, LastBE: 0xF,
			Address: bases[w.BAR] + w.Offset + 0x1000*uint64(i)}
		sendA = append(sendA, cq(a, &rd, w.BAR)...)
	}
	run("the reads reach host B", func() bool { return len(readsAtB) == reads })

	// The link goes dark; then host B answers them all.
	phy = false
	run("card B's port goes down", func() bool { return !up(b) })
	for _, x := range readsAtB {
		c := pcie.Completion(&x, tlp.NewID(0, 0, 0), tlp.StatusSC, make([]byte, 32))
		rc, err := pg213.ToRC(&c, x.Address, true)
		if err != nil {
			t.Fatal(err)
		}
		rcB = append(rcB, append(rc.Descriptor[:], rc.Payload...))
	}
	run("card B drops the completions for the dark port", func() bool { return b.get("port_a_down_drops")[0] == reads })

	// Card B still answers its host: a read that misses every window
	// gets its UR completion.
	miss := tlp.TLP{Fmt: fm, Type: typ, Length: 1, Tag: 9, RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF,
		Address: bases[w.BAR] + w.Offset + w.Size + 0x1000}
	sendB = cq(b, &miss, w.BAR)
	run("host B's next request is answered", func() bool { return len(gotCC) == 1 })
	if gotCC[0].Tag != 9 || gotCC[0].Status != tlp.StatusUR {
		t.Errorf("host B got %s, want the UR completion of tag 9", gotCC[0].String())
	}
}
