package card

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// holdCard builds card i of the two-party scenario under the hold policy,
// its ports' buffers keeping holdTLPs TLPs.
func holdCard(t testing.TB, name string, i, holdTLPs int, link *ir.Module) *ir.Module {
	c := config(t, i)
	c.Hold, c.HoldTLPs = true, holdTLPs
	return cardOf(t, name, c, link)
}

// TestHoldBuffer: under the hold policy, host A writes through its window
// while the link has never come up. Card A's manager forwards what the
// model says the emulator holds (the access check passes, a proxy ID),
// and port A's buffer keeps as many as it has room for — hold_tlps TLPs,
// or HoldBeats beats of them — dropping the rest whole and counting them
// (port_a_hold_drops, the emulator's hold-buffer-full). Once the link is
// up, host B gets exactly the kept writes, in order, as the two models
// forward them.
func TestHoldBuffer(t *testing.T) {
	for _, tc := range []struct {
		name          string
		holdTLPs, dws int // dws: each write's payload, 0 for 1 to 16 DWs
		writes, kept  int
	}{
		{"tlp-limit", 8, 0, 12, 8},
		{"beat-limit", DefaultHoldTLPs, 1024, 20, HoldBeats / 64}, // 4 KiB writes take 64 beats each
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := testLink(t)
			p := newPair(t, [2]*ir.Module{holdCard(t, "onic_card_a", 0, tc.holdTLPs, link), holdCard(t, "onic_card_b", 1, tc.holdTLPs, link)})
			p.phy = false
			modelA, _ := modelOf(t, config(t, 0), p.ids[0])
			modelB, _ := modelOf(t, config(t, 1), p.ids[1])
			modelA.PortDown = [2]bool{true, true}
			w := design(t, 0).Windows[0]
			r := rand.New(rand.NewPCG(3, 4))
			var want []string
			for i := range tc.writes {
				n := tc.dws
				if n == 0 {
					n = 1 + r.IntN(16)
				}
				fm, typ, _ := tlp.FmtType(tlp.MWr, true, 0)
				x := tlp.TLP{Fmt: fm, Type: typ, Length: uint16(n), RequesterID: tlp.NewID(0, 0, 0), FirstBE: 0xF, LastBE: 0xF,
					Address: bases[w.BAR] + w.Offset + uint64(i)<<12, Data: make([]byte, 4*n)}
				if n == 1 {
					x.LastBE = 0
				}
				for j := range x.Data {
					x.Data[j] = byte(r.Uint32())
				}
				var oa, ob pmgr.Outcome
				modelA.Process(&x, pmgr.FromHost, &oa)
				if oa.Reason != pmgr.PortDown || !oa.Holdable || oa.Egress.Kind != ntb.EgressPortA {
					t.Fatalf("write %d: model A %+v, want held for port A", i, oa)
				}
				if i < tc.kept {
					y := x
					oa.Apply(&y)
					modelB.Process(&y, pmgr.FromPortA, &ob)
					if ob.Action != pmgr.Forward || ob.Egress.Kind != ntb.EgressHost {
						t.Fatalf("write %d: model B %+v", i, ob)
					}
					ob.Apply(&y)
					want = append(want, fmt.Sprintf("%s %x", y.String(), sha256.Sum256(y.Data)))
				}
				p.request(0, &x, w.BAR)
			}
			p.run("card A takes the writes", 100*tc.writes+100*len(p.cq[0]), func() bool { return len(p.cq[0]) == 0 })
			for range 100 {
				p.cycle()
			}
			if d := p.cards[0].get("port_a_hold_drops")[0]; d != uint64(tc.writes-tc.kept) {
				t.Fatalf("card A dropped %d writes, want %d", d, tc.writes-tc.kept)
			}
			if len(p.rq[1]) != 0 {
				t.Fatalf("host B got %d writes before the link came up", len(p.rq[1]))
			}
			p.phy = true
			p.run("the held writes reach host B", 5000+200*tc.writes, func() bool { return len(p.rq[1]) == tc.kept })
			for range 300 {
				p.cycle()
			}
			var got []string
			for _, x := range p.rq[1] {
				got = append(got, fmt.Sprintf("%s %x", x.String(), sha256.Sum256(x.Data)))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("host B got:\n %v\nwant\n %v", got, want)
			}
			if d := p.cards[0].get("port_a_hold_drops")[0]; d != uint64(tc.writes-tc.kept) {
				t.Errorf("port_a_hold_drops %d, want %d", d, tc.writes-tc.kept)
			}
		})
	}
}
