package card

import (
	"bytes"
	"encoding/binary"
	"testing"

	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/hdlgen/ir"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// stallCard is cardOf with the egress stall timeout cycles (0: the
// default).
func stallCard(t testing.TB, name string, c manager.Config, link *ir.Module, cycles int) *ir.Module {
	d, err := manager.Build(c)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := PartsOf(d, link, onicFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	parts.EgressStallCycles = cycles
	top := Build(name, parts)
	if err := top.Check(); err != nil {
		t.Fatal(err)
	}
	return top
}

// TestSlowPartnerIsolated: card B's link stays up but returns credits to
// card A only a trickle at a time (8 words every 2,000 cycles: never
// long enough without any for the link's credit timeout), while host A
// floods port A with 600 writes of 256 bytes and then reads its O-NIC's
// ID register. Before the egress stall gate the read waited behind the
// writes at the partner's pace (hundreds of thousands of cycles), and
// every other request of host A's with it. Now, once a TLP has waited
// EgressStallCycles at port A's egress, the port counts as stalled:
// what does not fit is dropped (hold: the hold buffer's drops; fail:
// the manager's port-down and the down gate's drops), host A's read is
// answered within a bound, the link stays up throughout, and once the
// partner behaves the writes that were kept arrive, in order, and with
// those dropped account for all 600; a write sent afterwards arrives
// too.
//
// A third partner returns 8 words every 150 cycles: a TLP never waits
// EgressStallCycles in a row, but a window of them passes with fewer
// than SlowTLPs TLPs sent while the egress waited, and the slow rule
// stalls the port. Before it, the read waited behind the writes at the
// trickle's pace (about 56,000 cycles).
func TestSlowPartnerIsolated(t *testing.T) {
	const (
		writes = 600
		stall  = 512
	)
	for _, tc := range []struct {
		name   string
		hold   bool
		period int // cycles per 8 words of credit
	}{{"hold", true, 2000}, {"fail", false, 2000}, {"trickle", true, 150}} {
		t.Run(tc.name, func(t *testing.T) {
			link, err := optlink.Module(optlink.Config{TrainCycles: 32, ReplayCycles: 400, LostCycles: 2000})
			if err != nil {
				t.Fatal(err)
			}
			cards := [2]*ir.Module{}
			for i := range 2 {
				c := withRegisters(config(t, i))
				c.Hold = tc.hold
				cards[i] = stallCard(t, []string{"onic_card_a", "onic_card_b"}[i], c, link, stall)
			}
			p := newPair(t, cards)
			p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
			w := design(t, 0).Windows[0]
			winBase := bases[w.BAR] + w.Offset

			// The slow partner: card B's credit limit toward card A moves
			// on by 8 words every period cycles.
			limit, from := -1, p.cycles
			p.lie = rewriteDL(func(c *optlink.Control) {
				if limit < 0 {
					limit = int(c.Limit)
				}
				c.Limit = uint16(limit + 8*((p.cycles-from)/tc.period))
			})
			var sentData [][]byte
			for i := range writes {
				data := make([]byte, 256)
				binary.LittleEndian.PutUint64(data, uint64(i))
				for j := 8; j < len(data); j++ {
					data[j] = byte(i*7 + j)
				}
				x := tlp.TLP{Length: 64, FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Address: winBase + 256*uint64(i%256), Data: data}
				x.Fmt, x.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
				p.request(0, &x, w.BAR)
				sentData = append(sentData, data)
			}
			rd := tlp.TLP{Length: 1, FirstBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Tag: 7, Address: bases[pcie.ONICRegBAR]}
			rd.Fmt, rd.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
			p.request(0, &rd, pcie.ONICRegBAR)
			// The writes go in at a beat a cycle (2,400 cycles), the hold
			// buffer fills, a TLP waits stall cycles, and the rest pass.
			start := p.cycles
			const bound = writes*4 + stall + 3000
			p.run("host A's ID read is answered behind the flood", bound, func() bool { return len(p.cc[0]) > 0 })
			if c := p.cc[0][0]; c.Status != tlp.StatusSC || !bytes.Equal(c.Data, []byte("CINO")) {
				t.Fatalf("host A's ID read got %s % x", c.String(), c.Data)
			}
			t.Logf("the ID read was answered %d cycles after the flood began", p.cycles-start)
			if !p.up(0) || !p.up(1) {
				t.Fatalf("a link went down (%v, %v): the partner was slow, not silent", p.up(0), p.up(1))
			}
			a := p.cards[0]
			if n := a.get("port_a_egress_stalls")[0]; n == 0 {
				t.Errorf("port_a_egress_stalls = 0: the port never counted as stalled")
			}

			// The partner behaves again: what was kept arrives.
			p.lie = nil
			var got []uint64
			seen := 0
			collect := func() {
				for ; seen < len(p.rq[1]); seen++ {
					x := p.rq[1][seen]
					seq := binary.LittleEndian.Uint64(x.Data)
					if seq >= writes || !bytes.Equal(x.Data, sentData[seq]) {
						t.Fatalf("host B got a write %d with other bytes", seq)
					}
					if n := len(got); n > 0 && seq <= got[n-1] {
						t.Fatalf("host B got write %d after write %d", seq, got[n-1])
					}
					got = append(got, seq)
				}
			}
			for range 20000 {
				p.cycle()
				collect()
			}
			cc := len(p.cc[0])
			cnt := rd
			cnt.Tag, cnt.Address = 8, bases[pcie.ONICRegBAR]+pmgr.RegCount0+4*uint64(pmgr.PortDown)
			p.request(0, &cnt, pcie.ONICRegBAR)
			p.run("COUNT_PORT_DOWN is read", 5000, func() bool { return len(p.cc[0]) > cc })
			failed := uint64(binary.LittleEndian.Uint32(p.cc[0][cc].Data))
			// Under hold the manager counts port-down for what it sends on
			// to the hold buffer too (kept or dropped there); under fail
			// what it counts is what it failed.
			dropped := uint64(0)
			if tc.hold {
				dropped, failed = a.get("port_a_hold_drops")[0], 0
			} else {
				dropped = a.get("port_a_down_drops")[0]
			}
			if dropped+failed == 0 {
				t.Errorf("nothing dropped or failed: the flood did not stall the port")
			}
			if n := uint64(len(got)) + dropped + failed + a.get("port_a_lost")[0]; n != writes {
				t.Errorf("%d writes arrived, %d dropped, %d failed as port-down, %d lost: %d, want %d",
					len(got), dropped, failed, a.get("port_a_lost")[0], n, writes)
			}
			t.Logf("%d writes arrived, %d dropped, %d failed as port-down", len(got), dropped, failed)

			// The port takes TLPs again.
			x := tlp.TLP{Length: 64, FirstBE: 0xF, LastBE: 0xF, RequesterID: tlp.NewID(0, 0, 0), Address: winBase, Data: sentData[writes-1]}
			x.Fmt, x.Type, _ = tlp.FmtType(tlp.MWr, true, 0)
			before := len(p.rq[1])
			p.request(0, &x, w.BAR)
			p.run("a write after the stall arrives", 5000, func() bool { return len(p.rq[1]) > before })
		})
	}
}
