package cosim

import (
	"testing"

	"onic/designs/manager"
	"onic/hdlgen/sim"
	"onic/internal/vbench"
	"onic/testbenches/tools"
)

// BenchmarkManagerStream times onic's simulator on the default O-NIC's
// manager (512-bit data path) replaying a co-simulation run: 400 random
// TLPs from the host with backpressure, register accesses and drains,
// every input driven every cycle as the harness drives them. It reports
// simulated cycles per second.
func BenchmarkManagerStream(b *testing.B) {
	bn, st := managerStream(b)
	s, err := sim.New(bn.Design.Module)
	if err != nil {
		b.Fatal(err)
	}
	cycles := 0
	b.ReportAllocs()
	for b.Loop() {
		cycles += vbench.Replay(s, st)
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkManagerStreamVerilator runs the same replay as
// BenchmarkManagerStream in Verilator (-O3, one thread) and in onic's
// simulator, for as many cycles each, and reports both speeds and onic's
// as a multiple of Verilator's ("ratio").
func BenchmarkManagerStreamVerilator(b *testing.B) {
	verilator := tools.Require(b, "verilator")
	bn, st := managerStream(b)
	bin, err := vbench.Build(b.TempDir(), verilator, bn.Design.Module, st)
	if err != nil {
		b.Fatal(err)
	}
	vbench.Compare(b, bin, bn.Design.Module, st)
}

// BenchmarkLargeStream is BenchmarkManagerStreamVerilator for the large
// preset (64 windows, 512 LUT entries, 64 access ranges: onic hdl gen
// --preset large), on its generated simulator (large_gen_test.go).
func BenchmarkLargeStream(b *testing.B) {
	verilator := tools.Require(b, "verilator")
	bn := bench(b, manager.Large(), 512)
	st := recordStream(b, bn)
	bin, err := vbench.Build(b.TempDir(), verilator, bn.Design.Module, st)
	if err != nil {
		b.Fatal(err)
	}
	vbench.Compare(b, bin, bn.Design.Module, st)
}

// managerStream is the default bench and a recorded run of it.
func managerStream(b testing.TB) (*Bench, *vbench.Stimulus) {
	bn := defaultBench(b, 512)
	return bn, recordStream(b, bn)
}

// recordStream records a co-simulation run of bn: 400 random TLPs with
// backpressure, register accesses and drains.
func recordStream(b testing.TB, bn *Bench) *vbench.Stimulus {
	tr, err := bn.Run(bn.Generate(1, 400), 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	st := &vbench.Stimulus{Cycles: tr.vecs}
	for _, p := range inputLayout(bn.Design.Module) {
		st.Inputs = append(st.Inputs, vbench.Port{Name: p.name, Width: p.w})
	}
	for _, r := range routes {
		st.Reads = append(st.Reads, r.prefix+"_tlp_valid")
	}
	return st
}
