package cluster

import (
	"testing"
	"time"

	"onic/emu/sim"
	"onic/pcie/manager"
)

// TestPipelineTake: a TLP goes through its adapter in a cycle per 512-bit
// beat its descriptor and payload fill (CQ and RC apart on the host side),
// then occupies its ingress for max(1, ceil(payload bits / width)) cycles,
// waits for the TLPs before it from the same adapter and ingress only,
// and the report counts the waits and each ingress's busy time, the
// longer of adapter's and pipeline's for each TLP.
func TestPipelineTake(t *testing.T) {
	var p pipeline
	p.set(6, 250, 512) // 4 ns cycles
	if p.latency != 24*sim.Nanosecond {
		t.Fatalf("latency %v, want 24 ns", p.latency)
	}
	if p.report(time.Microsecond) != nil {
		t.Fatal("a pipeline nothing waited for reports")
	}
	ns := sim.Nanosecond
	for i, c := range []struct {
		in      manager.Ingress
		cpl     bool
		payload int
		now     sim.Time
		start   sim.Time
	}{
		{manager.FromHost, false, 256, 0, 0},            // CQ takes 5 beats (to 20 ns) with the descriptor, the ingress 4 (to 16 ns)
		{manager.FromHost, false, 0, 1 * ns, 20 * ns},   // a read request waits 19 ns for CQ
		{manager.FromPortA, false, 64, 2 * ns, 2 * ns},  // another ingress does not wait
		{manager.FromHost, false, 65, 30 * ns, 30 * ns}, // 65 bytes: 2 beats in CQ and the ingress, to 38 ns
		{manager.FromHost, false, 4, 37 * ns, 38 * ns},  // waits 1 ns
		{manager.FromHost, true, 256, 38 * ns, 42 * ns}, // a completion comes through RC, not CQ, and waits 4 ns for the ingress
	} {
		if got := p.take(c.in, c.cpl, c.payload, c.now); got != c.start {
			t.Errorf("take %d: starts at %v, want %v", i, got, c.start)
		}
	}
	r := p.report(100 * time.Nanosecond)
	if r == nil || r.Waited != 3 || r.MaxWaitNs != 19 || r.MeanWaitNs != 8 || r.Busy != [3]float64{0.56, 0.08, 0} ||
		r.DataWidth != 512 || r.ClockMHz != 250 {
		t.Errorf("report %+v", r)
	}

	p = pipeline{}
	p.set(6, 250, 256)
	p.take(manager.FromHost, false, 256, 0) // 8 beats of 32 bytes
	if got := p.take(manager.FromHost, false, 256, 0); got != 32*ns {
		t.Errorf("at 256 bits the second 256-byte write starts at %v, want 32 ns", got)
	}
}
