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
// 60,000 transfers a flow in 20 ms) keeps less than 4 bytes a transfer
// more than a run a tenth as long (itself past every bound, at 6,000;
// about 5% more in all) — no per-transfer state outlives its transfer;
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
	// What a run keeps, measured as the heap's growth, moves by some 40
	// KiB from one measurement to the next (a CI run once saw the 2 ms
	// run keep 672 KiB, where it keeps 710 here): grown by less than 4
	// bytes a transfer, against the 40 each kept before per-transfer
	// state was freed (the histograms' new buckets are about 1).
	grown := float64(long) - float64(short)
	if per := grown / float64(rl.Flows[0].Transfers-rs.Flows[0].Transfers); per > 4 {
		t.Errorf("the 20 ms run keeps %d bytes, the 2 ms run %d: %.1f bytes more a transfer, memory grows with simulated time", long, short, per)
	}
	for _, f := range rl.Flows {
		if f.P50Ns <= 0 || f.P99Ns < f.P50Ns || f.MaxNs < f.P999Ns {
			t.Errorf("flow %s: percentiles %+v", f.Name, f)
		}
	}
}

// TestSteadyStateAllocs: once its pools have grown, the emulator runs
// the two-party exchange — links, managers, flows, records, statistics,
// the egress watchdogs — without allocating: 1 ms of simulated time
// (about 300,000 TLP crossings) after a warm-up of 4 ms allocates less
// than one object per 10,000 crossings (the histograms' rare new
// buckets).
func TestSteadyStateAllocs(t *testing.T) {
	c := scenario.TwoParty()
	c.Duration = 10 * time.Millisecond
	for i := range c.Flows {
		c.Flows[i].Size = 4 << 10 // many transfers: the transfer log and histograms fill
	}
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	cl.Advance(4 * time.Millisecond)
	tlps := cl.tlps
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cl.Advance(5 * time.Millisecond)
	runtime.ReadMemStats(&after)
	n, crossings := after.Mallocs-before.Mallocs, cl.tlps-tlps
	t.Logf("%d allocations over %d TLP crossings", n, crossings)
	if crossings < 100_000 || n*10_000 > crossings {
		t.Errorf("%d allocations over %d TLP crossings in steady state", n, crossings)
	}
}
