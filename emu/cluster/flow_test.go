package cluster

import (
	"testing"

	"onic/emu/sim"
)

// TestLatencyHist: a software flow's latencies are exact while few, then
// within 1/64 of the exact percentiles, in bounded memory.
func TestLatencyHist(t *testing.T) {
	var h latencyHist
	var all []sim.Time
	x := uint64(1)
	for i := range 100_000 {
		x = x*6364136223846793005 + 1442695040888963407
		v := sim.Time(x>>40) + 1000
		h.add(v)
		all = append(all, v)
		if i == 100 && h.percentiles() != percentiles(all) {
			t.Fatalf("with %d latencies: %v, want exactly %v", i+1, h.percentiles(), percentiles(all))
		}
	}
	got, want := h.percentiles(), percentiles(all)
	for i := range got {
		if d := float64(got[i]-want[i]) / float64(want[i]); d > 1.0/64 || d < -1.0/64 {
			t.Errorf("percentile %d: %v, want %v within 1/64", i, got[i], want[i])
		}
	}
	if got[3] != want[3] {
		t.Errorf("max %v, want exactly %v", got[3], want[3])
	}
	if len(h.counts) > 64*128 || h.exact != nil {
		t.Errorf("%d buckets and %d exact values held", len(h.counts), len(h.exact))
	}
}
