package cluster

import (
	"runtime"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/testbenches/tools"
)

// liveAfter builds and runs c and returns the bytes of heap the cluster
// keeps once it has run (after a collection), and the report.
func liveAfter(t *testing.T, c scenario.Config) (uint64, Report) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cl)
	return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc), r
}

// TestMemoryBoundedByCluster: what a run keeps does not grow with
// simulated time (issue 45): a two-party run of 4 KiB writes (about
// 67,000 transfers a flow in 20 ms) keeps within 10% of the heap a run a
// tenth as long keeps (itself past every bound, at 6,700) — no per-transfer state outlives its transfer;
// latencies go into bounded histograms and the transfers traces and
// charts show into a sampled log — and its report still gives every
// transfer's count and latency percentiles.
func TestMemoryBoundedByCluster(t *testing.T) {
	tools.Long(t)
	run := func(d time.Duration) (uint64, Report) {
		c := scenario.TwoParty()
		c.Duration = d
		for i := range c.Flows {
			c.Flows[i].Size = 4 << 10
		}
		return liveAfter(t, c)
	}
	short, rs := run(2 * time.Millisecond)
	long, rl := run(20 * time.Millisecond)
	t.Logf("heap kept: %d KiB after 2 ms (%d transfers a flow), %d KiB after 20 ms (%d)", short>>10, rs.Flows[0].Transfers, long>>10, rl.Flows[0].Transfers)
	if rl.Flows[0].Transfers < 9*rs.Flows[0].Transfers || rs.Flows[0].Transfers < maxLogged {
		t.Fatalf("the long run finished %d transfers, the short %d: not the load the test needs", rl.Flows[0].Transfers, rs.Flows[0].Transfers)
	}
	if float64(long) > 1.1*float64(short) {
		t.Errorf("the 20 ms run keeps %d bytes, the 2 ms run %d: memory grows with simulated time", long, short)
	}
	for _, f := range rl.Flows {
		if f.P50Ns <= 0 || f.P99Ns < f.P50Ns || f.MaxNs < f.P999Ns {
			t.Errorf("flow %s: percentiles %+v", f.Name, f)
		}
	}
}
