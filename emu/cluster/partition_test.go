package cluster

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"onic/emu/scenario"
)

// sameButSpeed compares two reports' JSON with the wall-clock speed left
// out.
func sameButSpeed(t *testing.T, what string, a, b Report) {
	t.Helper()
	a.Speed, b.Speed = Speed{}, Speed{}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("%s: the reports differ:\n%s\n%s", what, ja, jb)
	}
}

// TestRunParallel: a cluster of independent parts — pairs of hosts, one
// with a MEMS phase that darkens and relights some circuits, one with a
// stalled peer — gives Run's report byte for byte (the wall-clock speed
// aside) on one goroutine and on four; a cluster of one part runs as
// Run does; and an error in the whole names the whole's field.
func TestRunParallel(t *testing.T) {
	c := scenario.Pairs(6)
	c.Duration = 60 * time.Microsecond
	c.MEMS.Reconfig, c.MEMS.BringUp = 5*time.Microsecond, 2*time.Microsecond
	some := []scenario.CircuitConfig{c.Circuits[0], c.Circuits[2], c.Circuits[4]}
	c.Phases = []scenario.PhaseConfig{{At: 20 * time.Microsecond, Circuits: some},
		{At: 30 * time.Microsecond, Circuits: slices.Clone(c.Circuits)}}
	c.Faults = []scenario.FaultConfig{{Port: "onicP0b.a", Kind: "stall", From: 10 * time.Microsecond, To: 40 * time.Microsecond}}
	if n := len(Parts(c)); n != 6 {
		t.Fatalf("%d parts, want 6", n)
	}
	want, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if want.Reconfigurations != 1 || want.Accounting.Reasons["link-down"] == 0 || want.ONICs[0].Stalls == nil {
		t.Fatalf("the scenario does not exercise phases and stalls: %+v %v", want.Accounting, want.Reconfigurations)
	}
	for _, threads := range []int{1, 4} {
		got, err := RunParallel(c, threads)
		if err != nil {
			t.Fatal(err)
		}
		sameButSpeed(t, "threads "+string(rune('0'+threads)), want, got)
		if got.Speed.TLPs != want.Speed.TLPs {
			t.Errorf("threads %d: %d TLPs, Run %d", threads, got.Speed.TLPs, want.Speed.TLPs)
		}
	}
	// One part: as Run.
	tp := scenario.TwoParty()
	if Parts(tp) != nil {
		t.Fatal("two-party split into parts")
	}
	a, _ := Run(tp)
	b, err := RunParallel(tp, 4)
	if err != nil {
		t.Fatal(err)
	}
	sameButSpeed(t, "two-party", a, b)
	// Errors name the whole's fields.
	c.Flows[7].Size = -1
	if _, err := RunParallel(c, 2); err == nil || err.Error()[:9] != "flows[7]." {
		t.Errorf("a bad flow: %v", err)
	}
}

// BenchmarkPairs384 is FLEET's 384-port switch filled with 192
// independent full-load pairs (384 O-NICs) for 100 µs of simulated time
// (about 2.3 million TLP crossings), building included: as one cluster on
// one event queue (whole), split into its parts on one goroutine
// (parts-1), and on two (parts-2). It reports nanoseconds of wall time
// per TLP crossing (ns/TLP).
func BenchmarkPairs384(b *testing.B) {
	c := scenario.Pairs(192)
	c.Duration = 100 * time.Microsecond
	for _, bc := range []struct {
		name string
		run  func() (Report, error)
	}{
		{"whole", func() (Report, error) { return Run(c) }},
		{"parts-1", func() (Report, error) { return RunParallel(c, 1) }},
		{"parts-2", func() (Report, error) { return RunParallel(c, 2) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var tlps uint64
			for b.Loop() {
				r, err := bc.run()
				if err != nil {
					b.Fatal(err)
				}
				tlps += r.Speed.TLPs
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(tlps), "ns/TLP")
		})
	}
}
