package card

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"onic/designs/internal/slot"
	"onic/emu/cluster"
	"onic/emu/scenario"

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
// forward them. The emulator, run on the same writes while its circuit
// is dark (emulatorHold), keeps and drops the same writes: the same
// ones reach host B's memory, and it counts as many hold-buffer-full.
func TestHoldBuffer(t *testing.T) {
	for _, tc := range []struct {
		name          string
		holdTLPs, dws int // dws: each write's payload, 0 for 1 to 16 DWs, -1 for 1 to 128
		writes, kept  int // kept: -1 when only the emulator says
	}{
		{"tlp-limit", 8, 0, 12, 8},
		{"beat-limit", DefaultHoldTLPs, 128, 140, HoldBeats / 8}, // writes of the O-NIC's MPS, 512 bytes, take 8 beats each
		{"mixed", DefaultHoldTLPs, -1, 300, -1},                  // big ones dropped, smaller ones after them kept
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
			var writes []tlp.TLP
			for i := range tc.writes {
				n := tc.dws
				switch n {
				case 0:
					n = 1 + r.IntN(16)
				case -1:
					n = 1 + r.IntN(128)
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
				writes = append(writes, x)
			}
			keptBy := emulatorHold(t, tc.holdTLPs, writes)
			if tc.kept < 0 {
				tc.kept = len(keptBy.kept)
				if last := keptBy.kept[len(keptBy.kept)-1]; last < tc.kept {
					t.Fatalf("the emulator kept writes 0 to %d: the mixed case should drop a big write and keep a smaller one after it", last)
				}
			}
			t.Logf("%d writes: both keep %d (the emulator: %v), drop %d", tc.writes, tc.kept, keptBy.kept[max(0, len(keptBy.kept)-5):], tc.writes-tc.kept)
			if len(keptBy.kept) != tc.kept || keptBy.dropped != tc.writes-tc.kept {
				t.Fatalf("the emulator kept %d writes and dropped %d as hold-buffer-full; want %d and %d", len(keptBy.kept), keptBy.dropped, tc.kept, tc.writes-tc.kept)
			}
			for i := range writes {
				x := writes[i]
				var oa, ob pmgr.Outcome
				modelA.Process(&x, pmgr.FromHost, &oa)
				if oa.Reason != pmgr.PortDown || !oa.Holdable || oa.Egress.Kind != ntb.EgressPortA {
					t.Fatalf("write %d: model A %+v, want held for port A", i, oa)
				}
				if keptBy.has(i) {
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

// heldWrites is what the emulator did with a run of writes to a dark
// port: the indices of those that reached the far host, and how many it
// dropped as hold-buffer-full.
type heldWrites struct {
	kept    []int
	dropped int
}

func (h heldWrites) has(i int) bool { return slices.Contains(h.kept, i) }

// emulatorHold runs writes (card requests into card A's window, in
// order) in the emulator's two-party cluster while its circuit is still
// dark — host A's software writing each at the same offset of its O-NIC's
// window, the O-NICs holding hold_tlps TLPs a port — then lights the
// circuit and says which writes reached host B's memory.
func emulatorHold(t *testing.T, holdTLPs int, writes []tlp.TLP) heldWrites {
	t.Helper()
	cfg := scenario.TwoParty()
	cfg.Flows, cfg.Duration = nil, 20*time.Millisecond
	lit := cfg.Circuits
	cfg.Circuits = nil
	cfg.Phases = []scenario.PhaseConfig{{At: 20 * time.Microsecond, Circuits: lit}}
	cfg.Hosts[0].MPS = 512 // the O-NIC's most: one TLP a write, as the card was given them
	for i := range cfg.ONICs {
		cfg.ONICs[i].DownPolicy, cfg.ONICs[i].HoldTLPs = "hold", holdTLPs
	}
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cl.Attach("A", 1<<32, make([]byte, 4096))
	if err != nil {
		t.Fatal(err)
	}
	memB := make([]byte, 2<<20)
	if _, err := cl.Attach("B", 1<<32, memB); err != nil {
		t.Fatal(err)
	}
	w := cfg.ONICs[0].Manager.Translation.Windows[0]
	win := a.ONICFunction("onicA").BARAddress(w.BAR) + w.Offset
	cardWin := bases[w.BAR] + w.Offset
	for _, x := range writes {
		if err := a.Write(win+x.Address-cardWin, x.Data); err != nil {
			t.Fatal(err)
		}
	}
	cl.Advance(20*time.Microsecond + scenario.DefaultReconfig + scenario.DefaultBringUp + 500*time.Microsecond)
	rep, err := cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	var h heldWrites
	for i, x := range writes {
		off := x.Address - cardWin // the window translates to B's memory at 4 GiB
		if bytes.Equal(memB[off:off+uint64(len(x.Data))], x.Data) {
			h.kept = append(h.kept, i)
		}
	}
	h.dropped = int(rep.Accounting.Reasons["hold-buffer-full"])
	if ac := rep.Accounting; ac.Injected != uint64(len(writes)) || ac.Delivered+ac.Dropped != ac.Injected {
		t.Fatalf("the emulator's accounting %+v for %d writes", ac, len(writes))
	}
	return h
}

// TestLimitsAgree: the limits a scenario's O-NIC is checked against are
// the card's, so the emulator accepts no O-NIC the generator refuses:
// the hold buffer's beats and a two-input kernel's pair buffer.
func TestLimitsAgree(t *testing.T) {
	if scenario.HoldBeats != HoldBeats {
		t.Errorf("scenario.HoldBeats %d, the card's %d", scenario.HoldBeats, HoldBeats)
	}
	if scenario.MaxPairBufferKiB<<10 != slot.MaxPairBytes {
		t.Errorf("scenario.MaxPairBufferKiB %d KiB, the card's slot takes %d bytes", scenario.MaxPairBufferKiB, slot.MaxPairBytes)
	}
}
