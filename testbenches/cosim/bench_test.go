package cosim

import (
	"testing"

	"onic/hdlgen/manager"
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
		cycles += replay(s, st)
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
	compare(b, bin, bn, st)
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
	compare(b, bin, bn, st)
}

// compare times the Verilator harness bin and onic's simulator of bn on
// st, each for about a second.
func compare(b *testing.B, bin string, bn *Bench, st *vbench.Stimulus) {
	reps := max(1, 2_000_000/len(st.Cycles))
	for b.Loop() {
		vc, vs, err := vbench.Run(bin, reps)
		if err != nil {
			b.Fatal(err)
		}
		s, err := sim.New(bn.Design.Module)
		if err != nil {
			b.Fatal(err)
		}
		start := b.Elapsed()
		oc := 0
		for range reps {
			oc += replay(s, st)
		}
		os := (b.Elapsed() - start).Seconds()
		b.ReportMetric(float64(vc)/vs, "verilator-cycles/s")
		b.ReportMetric(float64(oc)/os, "onic-cycles/s")
		b.ReportMetric(float64(oc)/os/(float64(vc)/vs), "ratio")
	}
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

// replay drives st's inputs, cycle by cycle, into s, reading the outputs
// st names; it returns the cycles run.
func replay(s *sim.Sim, st *vbench.Stimulus) int {
	ins := make([]sim.Port, len(st.Inputs))
	for k, p := range st.Inputs[1:] {
		ins[k+1], _ = s.Port(p.Name)
	}
	reads := make([]sim.Port, len(st.Reads))
	for k, name := range st.Reads {
		reads[k], _ = s.Port(name)
	}
	for _, vec := range st.Cycles {
		for k := 1; k < len(ins); k++ {
			s.DrivePort(ins[k], vec[k])
		}
		s.SetReset(vec[0][0] != 0)
		for _, p := range reads {
			s.Read(p)
		}
		s.Step()
	}
	return len(st.Cycles)
}
