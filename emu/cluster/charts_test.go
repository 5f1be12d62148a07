package cluster

import (
	"slices"
	"testing"
	"time"

	"onic/emu/scenario"
)

// TestChartsNeverAboveLinkRate: a flow's throughput over time counts each
// TLP's payload as it lands, so no interval shows more than the links
// can carry — a Gen3 x16 link's 126 Gb/s of symbols, plus the one TLP
// that may straddle an interval's edge — and the intervals add up to
// the flow's delivered bytes. (Counted by finished transfer, the
// two-party exchange showed 131 Gb/s, and an interval with no transfer
// ending showed nothing.)
func TestChartsNeverAboveLinkRate(t *testing.T) {
	c := scenario.TwoParty()
	c.Duration = 200 * time.Microsecond
	cl, r := buildRun(t, c)
	for _, buckets := range []int{0, 20} {
		ch := cl.Charts(buckets)
		const lineGbps = 16 * 8 * 128.0 / 130
		bound := lineGbps + 4096*8/ch.BucketNs // Gb/s: bits per ns
		for i, f := range ch.Flows {
			peak, gbit := 0.0, 0.0
			for _, g := range f.Gbps {
				peak = max(peak, g)
				gbit += g * ch.BucketNs
			}
			if peak > bound || peak < lineGbps/2 {
				t.Errorf("%d intervals: %s peaks at %.2f Gb/s, want at most %.2f (and a busy flow near it)", len(f.Gbps), f.Name, peak, bound)
			}
			if got, want := gbit/8, float64(cl.flows[i].bytes); got < want*(1-1e-9) || got > want*(1+1e-9) {
				t.Errorf("%s: the intervals hold %.0f bytes, the flow delivered %.0f", f.Name, got, want)
			}
		}
	}
	if len(r.Flows) == 0 {
		t.Fatal("no flows")
	}
}

// TestChartsNamePortsPerPhase: a port the MEMS switch moved from one
// peer to another is named with both, in order, not after the last.
func TestChartsNamePortsPerPhase(t *testing.T) {
	cl, err := Build(scenario.Phased())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Run(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range cl.Charts(0).Links {
		names = append(names, l.Name)
	}
	if !slices.Contains(names, "onicA.a -> onicB.a, then onicC.a") {
		t.Errorf("links %q: want onicA.a named with both its peers", names)
	}
}
