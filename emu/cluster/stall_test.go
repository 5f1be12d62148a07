package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// twoPorts is the two-party scenario with both ports of each O-NIC
// joined, host A writing to host B through two windows — one out of port
// A ("A->B via a"), one out of port B ("A->B via b") — and a fault at
// onicB's port A, the receiving end of the first.
func twoPorts(policy string, f scenario.FaultConfig) scenario.Config {
	c := scenario.TwoParty()
	c.Duration = 300 * time.Microsecond
	c.Circuits = append(c.Circuits, scenario.CircuitConfig{A: "onicA.b", B: "onicB.b"})
	a := &c.ONICs[0]
	a.DownPolicy = policy
	a.Manager.Translation.Windows = append(a.Manager.Translation.Windows,
		ntb.WindowConfig{Name: "peer-memory-b", BAR: 2, Offset: 1 << 30, Size: 1 << 30, Egress: "port-b", Translated: 1 << 32})
	a.Manager.Access.Domains[0].Egress = []string{"port-a", "port-b"}
	c.ONICs[1].Manager.Access.Domains[1].Ingress = []string{"port-a", "port-b"}
	c.Flows = []scenario.FlowConfig{
		{Name: "A->B via a", From: "A", Op: "write", Size: 64 << 10},
		{Name: "A->B via b", From: "A", Op: "write", Size: 64 << 10, Offset: 1 << 30},
	}
	if f.Kind != "" {
		c.Faults = []scenario.FaultConfig{f}
	}
	return c
}

// TestStalledPeer: a link partner that stops returning credits, or
// returns them a trickle at a time, stalls the port that faces it —
// after egress_stall_cycles without progress, or a window of them with
// fewer than SlowTLPs sent while the host's pipeline waited half of it
// for the port's full egress buffer (a credit a microsecond), the port
// counts as stalled and the down policy takes what comes for it (held
// while the hold buffer has room, then dropped as hold-buffer-full; or
// failed as port-down), and after credit_timeout_cycles its link goes
// down (what was queued on it lost, link-down) and retrains; once the
// partner behaves again the port takes traffic again. The other port's
// flow never fails, and waits at most while the watch decides: the
// host's one pipeline waits for the full egress buffer until the port
// counts as stalled, so no transfer of it takes longer than with a
// healthy partner plus a stall timeout for each stall and one more. A
// partner that is slow but not slow enough to stall the port (a credit
// every 100 ns, about 20 Gb/s) holds the host's pipeline back, and the
// other port's flow with it, as on the card. The card does the same
// (docs/hdl.md, "What each fault from a link partner does").
func TestStalledPeer(t *testing.T) {
	healthy := run(t, twoPorts("hold", scenario.FaultConfig{}))
	if healthy.ONICs[0].Stalls != nil {
		t.Fatalf("with no fault, onicA's ports stalled: %+v", *healthy.ONICs[0].Stalls)
	}
	for _, tc := range []struct {
		name     string
		policy   string
		holdTLPs int
		fault    scenario.FaultConfig
		stalls   bool     // the port counts as stalled at least once
		retrains bool     // its link went down for want of credits
		reasons  []string // accounting reasons that must appear
	}{
		{"stall shorter than the credit timeout, fail", "fail", 0,
			scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 60 * time.Microsecond},
			true, false, []string{"port-down"}},
		{"stall shorter than the credit timeout, small hold buffer", "hold", 16,
			scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 60 * time.Microsecond},
			true, false, []string{"hold-buffer-full"}},
		{"stall past the credit timeout", "hold", 0,
			scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 150 * time.Microsecond},
			true, true, []string{"link-down"}},
		{"slow partner, a credit every 20 µs", "fail", 0,
			scenario.FaultConfig{Port: "onicB.a", Kind: "slow", From: 20 * time.Microsecond, To: 120 * time.Microsecond, Hold: 20 * time.Microsecond},
			true, false, []string{"port-down"}},
		{"slow partner, a credit every µs: the slow rule", "hold", 0,
			scenario.FaultConfig{Port: "onicB.a", Kind: "slow", From: 20 * time.Microsecond, To: 120 * time.Microsecond, Hold: time.Microsecond},
			true, false, []string{"hold-buffer-full"}},
		{"slow partner, a credit every 100 ns: slower, never stalled", "fail", 0,
			scenario.FaultConfig{Port: "onicB.a", Kind: "slow", From: 20 * time.Microsecond, To: 120 * time.Microsecond, Hold: 100 * time.Nanosecond},
			false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := twoPorts(tc.policy, tc.fault)
			if tc.holdTLPs > 0 {
				c.ONICs[0].HoldTLPs = tc.holdTLPs
			}
			r := run(t, c)
			balanced(t, r.Accounting)
			st := r.ONICs[0].Stalls
			if st == nil {
				st = &StallReport{}
			}
			if (st.EgressStalls[0] > 0) != tc.stalls || (st.Retrains[0] > 0) != tc.retrains || st.EgressStalls[1] != 0 || st.Retrains[1] != 0 {
				t.Fatalf("onicA's stalls %+v: want port A stalled %v, retrained %v, port B neither", *st, tc.stalls, tc.retrains)
			}
			for _, why := range tc.reasons {
				if r.Accounting.Reasons[why] == 0 {
					t.Errorf("no TLP was accounted %s: %v", why, r.Accounting.Reasons)
				}
			}
			// The other port's flow waited at most while the watch made
			// up its mind, each time.
			viaA, viaB := r.Flows[0], r.Flows[1]
			o := c.ONICs[0]
			watch := float64(o.EgressStallCycles) * 1e3 / o.ClockMHz * float64(st.EgressStalls[0]+1)
			if viaB.Failed != 0 || viaB.Transfers < healthy.Flows[1].Transfers/2 || tc.stalls && viaB.MaxNs > healthy.Flows[1].MaxNs+watch {
				t.Errorf("the flow out of port B: %+v; with a healthy partner %+v (the watch's time: %.0f ns)", viaB, healthy.Flows[1], watch)
			}
			// Once the partner behaves, the port takes traffic again: the
			// faulty port's flow finished more transfers than it could
			// have before the fault began.
			if viaA.Transfers <= healthy.Flows[0].Transfers*int(tc.fault.From)/int(c.Duration)+4 {
				t.Errorf("the flow out of port A: %+v; with a healthy partner %+v: it did not resume", viaA, healthy.Flows[0])
			}
			var text strings.Builder
			r.WriteText(&text)
			if tc.stalls && !strings.Contains(text.String(), "onicA's ports stopped making progress: port A stalled") {
				t.Errorf("the text report does not say that port A stalled:\n%s", text.String())
			}
			t.Logf("stalls %+v; via a %d transfers, via b %d (healthy %d, %d); reasons %v", *st, viaA.Transfers, viaB.Transfers,
				healthy.Flows[0].Transfers, healthy.Flows[1].Transfers, r.Accounting.Reasons)
		})
	}
}

// TestFaultErrors: a fault that names no port, no kind, an empty time or
// a hold where none belongs is refused at load with its field.
func TestFaultErrors(t *testing.T) {
	for _, tc := range []struct {
		f    scenario.FaultConfig
		want string
	}{
		{scenario.FaultConfig{Port: "onicC.a", Kind: "stall", To: time.Microsecond}, `faults[0].port: "onicC.a" is not an O-NIC port`},
		{scenario.FaultConfig{Port: "onicA.c", Kind: "stall", To: time.Microsecond}, `faults[0].port: "onicA.c" is not an O-NIC port`},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "lies", To: time.Microsecond}, `faults[0].kind: "lies" must be stall, slow or errors`},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "stall", From: time.Microsecond, To: time.Microsecond}, "faults[0]: from 1µs and to 1µs must have 0 <= from < to"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "stall", To: time.Microsecond, Hold: time.Nanosecond}, "faults[0].hold: 1ns: hold is for kind slow"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "errors", To: time.Microsecond}, "faults[0].ber: 0 must be more than 0 and at most 0.0001"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "errors", To: time.Microsecond, BER: 0.01}, "faults[0].ber: 0.01 must be more than 0"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "stall", To: time.Microsecond, BER: 1e-6}, "faults[0].ber: 1e-06: ber is for kind errors"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "errors", To: time.Microsecond, BER: 1e-6, Hold: time.Nanosecond}, "faults[0].hold: 1ns: hold is for kind slow"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "slow", To: time.Microsecond}, "faults[0].hold: 0s must be more than 0"},
	} {
		c := twoPorts("hold", tc.f)
		if _, err := Build(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}

// TestLinkErrors: bit errors on the fibre into onicB's port A (a fault of
// kind errors) damage some of the TLPs onicA sends out of port A; onicB's
// data link layer discards each, answers with a Nak, and onicA's replays
// them (PCIe Base §3.6). Nothing is lost: every write is delivered, in
// order, none dropped; the flow slows by the replays only; the report
// says what each end's data link layer did, the counts agree with one
// another (a Nak per damage found, no more Naks than damaged TLPs, a
// replay per Nak), the rate matches the bit error rate and a run repeats
// exactly. At a far higher rate REPLAY_NUM rolls over and the link
// retrains.
func TestLinkErrors(t *testing.T) {
	healthy := run(t, twoPorts("hold", scenario.FaultConfig{}))
	if healthy.ONICs[0].LinkErrors != nil || healthy.ONICs[1].LinkErrors != nil {
		t.Fatalf("link errors with no fault: %+v", healthy.ONICs[1].LinkErrors)
	}
	f := scenario.FaultConfig{Port: "onicB.a", Kind: "errors", From: 10 * time.Microsecond, To: 290 * time.Microsecond, BER: 3e-6}
	r := run(t, twoPorts("hold", f))
	balanced(t, r.Accounting)
	if r.Accounting.Dropped != 0 || r.Flows[0].Failed != 0 {
		t.Fatalf("bit errors lost TLPs: %+v; flow %+v", r.Accounting, r.Flows[0])
	}
	le := r.ONICs[1].LinkErrors
	if le == nil || r.ONICs[0].LinkErrors == nil {
		t.Fatalf("no link errors reported: %+v, %+v", r.ONICs[0].LinkErrors, le)
	}
	rx, tx := le[0], r.ONICs[0].LinkErrors[0]
	// A 256-byte write's frame is 5 words, 2,560 bits: 0.77% damaged at
	// 3e-6. Port A carries about 32 64 KiB transfers' TLPs, 8,192, in the
	// 300 µs run, nearly all of them in the fault's 280 µs.
	if rx.CRCErrors < 10 || rx.Naks == 0 || rx.Naks > rx.CRCErrors || tx.Replays < rx.Naks || tx.CRCErrors != 0 || rx.Replays != 0 {
		t.Errorf("onicB's port A %+v, onicA's %+v", rx, tx)
	}
	if r.Flows[0].Transfers*10 < healthy.Flows[0].Transfers*8 {
		t.Errorf("the flow through the errors: %d transfers; %d without them", r.Flows[0].Transfers, healthy.Flows[0].Transfers)
	}
	var text strings.Builder
	r.WriteText(&text)
	if !strings.Contains(text.String(), fmt.Sprintf("onicB's port A's data link layer: %d damaged TLPs received, %d Naks sent", rx.CRCErrors, rx.Naks)) {
		t.Errorf("the text report does not say what onicB's port A did:\n%s", text.String())
	}
	if again := run(t, twoPorts("hold", f)); *again.ONICs[1].LinkErrors != *le {
		t.Errorf("a second run: %+v, the first %+v", *again.ONICs[1].LinkErrors, *le)
	}
	t.Logf("onicB's port A %+v, onicA's %+v; via a %d transfers (%d healthy)", rx, tx, r.Flows[0].Transfers, healthy.Flows[0].Transfers)

	// At 1e-4 (a 256-byte write's frame damaged one time in four) a TLP
	// is damaged in four replays running: REPLAY_NUM rolls over and the
	// link retrains, losing what is queued on it (link-down); replays
	// damaged twice stall the port too. Port B's flow goes on.
	f.BER = 1e-4
	r = run(t, twoPorts("hold", f))
	balanced(t, r.Accounting)
	tx = r.ONICs[0].LinkErrors[0]
	if st := r.ONICs[0].Stalls; tx.Rollovers == 0 || st == nil || st.Retrains[0] < tx.Rollovers || r.Accounting.Reasons["link-down"] == 0 {
		t.Errorf("at 1e-4: onicA's port A %+v, stalls %+v, reasons %v", tx, st, r.Accounting.Reasons)
	}
	if b := r.Flows[1]; b.Failed != 0 || b.Transfers < healthy.Flows[1].Transfers {
		t.Errorf("at 1e-4, the flow out of port B: %+v; healthy %+v", b, healthy.Flows[1])
	}
}

// queueProbe samples a port's egress buffer (its link queue) every 32 ns.
type queueProbe struct {
	pt          *port
	tlps, beats int64
}

func (q *queueProbe) Handle(s *sim.Sim, _ uint64) {
	if q.pt.l != nil {
		q.tlps = max(q.tlps, int64(q.pt.queued()))
		q.beats = max(q.beats, q.pt.l.QueuedRoom(q.pt.side))
	}
	s.After(32*sim.Nanosecond, q, 0)
}

// TestEgressBufferBounded: a port whose partner withholds credits takes
// no more than the card's egress buffer would — under hold its hold
// buffer (HoldBeats, hold_tlps), under fail its two-TLP buffer in front
// of the link (manager.FailEgressTLPs) — while the watch decides: the
// host's pipeline waits for room instead — its writes to port B wait
// too, as on the card — until the port counts as stalled. (The queue
// used to grow without bound: the model dropped twice what the card did
// once the port stalled; and under fail it used to take a hold buffer's
// worth, which the card has not.)
func TestEgressBufferBounded(t *testing.T) {
	for _, policy := range []string{"hold", "fail"} {
		c := twoPorts(policy, scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 60 * time.Microsecond})
		c.ONICs[0].HoldTLPs = 100
		cl, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		pt := cl.onics[0].ports[0]
		q := &queueProbe{pt: pt}
		cl.s.At(0, q, 0)
		r, err := cl.Run()
		if err != nil {
			t.Fatal(err)
		}
		balanced(t, r.Accounting)
		most := int64(100)
		if policy == "fail" {
			most = manager.FailEgressTLPs
		}
		if q.tlps > most || q.beats > scenario.HoldBeats {
			t.Errorf("%s: port A's egress held up to %d TLPs and %d beats; the card's holds %d and %d", policy, q.tlps, q.beats, most, scenario.HoldBeats)
		}
		if q.tlps < most*9/10 {
			t.Errorf("%s: port A's egress never filled (%d TLPs at most): the fault did not bite", policy, q.tlps)
		}
		if st := r.ONICs[0].Stalls; st == nil || st.EgressStalls[0] != 1 || pt.w.blocked < 5*sim.Microsecond {
			t.Errorf("%s: stalls %+v; the host's pipeline waited %v for port A", policy, st, pt.w.blocked)
		}
		t.Logf("%s: port A's egress held %d TLPs, %d beats at most; the host's pipeline waited %v for it", policy, q.tlps, q.beats, pt.w.blocked)
	}
}

// stallProbe notes, every nanosecond, when a port's pipelines first
// waited for it and when it first counted as stalled.
type stallProbe struct {
	pt                 *port
	blocked, stalled   sim.Time
	sawBlock, sawStall bool
}

func (q *stallProbe) Handle(s *sim.Sim, _ uint64) {
	if !q.sawBlock && q.pt.blockers > 0 {
		q.blocked, q.sawBlock = q.pt.blockedAt, true
	}
	if !q.sawStall && q.pt.w.stalled {
		q.stalled, q.sawStall = s.Now(), true
		return
	}
	s.After(sim.Nanosecond, q, 0)
}

// TestStallWatchTiming: the model's stall watch fires when the card's
// would, to the nanosecond (its rules are events at exact times, not
// checks every quarter of the timeout): under hold, a partner that takes
// nothing from its fault's start has the host's pipeline wait for port
// A's full hold buffer from some moment on, no TLP goes in while it does,
// and the slow rule stalls the port half a window of EgressStallCycles
// later — the window starts as the waiting does.
func TestStallWatchTiming(t *testing.T) {
	c := twoPorts("hold", scenario.FaultConfig{Port: "onicB.a", Kind: "stall", From: 20 * time.Microsecond, To: 100 * time.Microsecond})
	c.Duration = 120 * time.Microsecond
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	pt := cl.onics[0].ports[0]
	q := &stallProbe{pt: pt}
	cl.s.At(20*sim.Microsecond, q, 0)
	if _, err := cl.Run(); err != nil {
		t.Fatal(err)
	}
	half := cl.onics[0].cycles(cl.onics[0].d.EgressStallCycles) / 2
	if d := q.stalled - q.blocked; !q.sawBlock || !q.sawStall || d < half || d > half+2*sim.Nanosecond {
		t.Errorf("the pipeline waited from %v, the port stalled at %v: want %v later", q.blocked, q.stalled, half)
	}
}
