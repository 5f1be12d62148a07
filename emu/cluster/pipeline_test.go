package cluster

import (
	"testing"
	"time"

	"onic/emu/sim"
	"onic/pcie/manager"
)

// TestPipelineTake: a TLP occupies its ingress for max(1, ceil(payload
// bits / width)) cycles, waits for the TLPs before it from the same
// ingress only, and the report counts the waits.
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
		payload int
		now     sim.Time
		start   sim.Time
	}{
		{manager.FromHost, 256, 0, 0},            // 4 beats: the host ingress is busy to 16 ns
		{manager.FromHost, 0, 1 * ns, 16 * ns},   // a read request waits 15 ns, 1 beat
		{manager.FromPortA, 64, 2 * ns, 2 * ns},  // another ingress does not wait
		{manager.FromHost, 65, 30 * ns, 30 * ns}, // 65 bytes: 2 beats, to 38 ns
		{manager.FromHost, 4, 37 * ns, 38 * ns},  // waits 1 ns
	} {
		if got := p.take(c.in, c.payload, c.now); got != c.start {
			t.Errorf("take %d: starts at %v, want %v", i, got, c.start)
		}
	}
	r := p.report(100 * time.Nanosecond)
	if r == nil || r.Waited != 2 || r.MaxWaitNs != 15 || r.MeanWaitNs != 8 || r.Busy != [3]float64{0.32, 0.04, 0} ||
		r.DataWidth != 512 || r.ClockMHz != 250 {
		t.Errorf("report %+v", r)
	}

	p = pipeline{}
	p.set(6, 250, 256)
	p.take(manager.FromHost, 256, 0) // 8 beats of 32 bytes
	if got := p.take(manager.FromHost, 256, 0); got != 32*ns {
		t.Errorf("at 256 bits the second 256-byte write starts at %v, want 32 ns", got)
	}
}
