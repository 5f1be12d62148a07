package cluster

import (
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
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
// fewer than SlowTLPs sent while its queue was over the hold buffer's
// room (a credit a microsecond), the port counts as stalled
// and the down policy takes what comes for it (held while the hold
// buffer has room, then dropped as hold-buffer-full; or failed as
// port-down), and after credit_timeout_cycles its link goes down (what
// was queued on it lost, link-down) and retrains — while the other
// port's flow goes on at its pace; once the partner behaves again the
// port takes traffic again. The card does the same (docs/hdl.md, "What
// each fault from a link partner does").
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
			// The other port's flow went on at its pace: at least as many
			// transfers as with a healthy partner (it may take the host
			// link's share the stalled flow leaves).
			viaA, viaB := r.Flows[0], r.Flows[1]
			if viaB.Transfers < healthy.Flows[1].Transfers || viaB.MaxNs > 2*healthy.Flows[1].MaxNs {
				t.Errorf("the flow out of port B: %+v; with a healthy partner %+v", viaB, healthy.Flows[1])
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
		{scenario.FaultConfig{Port: "onicA.a", Kind: "lies", To: time.Microsecond}, `faults[0].kind: "lies" must be stall or slow`},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "stall", From: time.Microsecond, To: time.Microsecond}, "faults[0]: from 1µs and to 1µs must have 0 <= from < to"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "stall", To: time.Microsecond, Hold: time.Nanosecond}, "faults[0].hold: 1ns: a stall holds every credit"},
		{scenario.FaultConfig{Port: "onicA.a", Kind: "slow", To: time.Microsecond}, "faults[0].hold: 0s must be more than 0"},
	} {
		c := twoPorts("hold", tc.f)
		if _, err := Build(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.f, err, tc.want)
		}
	}
}
