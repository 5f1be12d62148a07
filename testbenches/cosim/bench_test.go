package cosim

import (
	"testing"

	"onic/hdlgen/sim"
)

// BenchmarkManagerStream times onic's simulator on the default O-NIC's
// manager (512-bit data path) replaying a co-simulation run: 400 random
// TLPs from the host with backpressure, register accesses and drains,
// every input driven every cycle as the harness drives them. It reports
// simulated cycles per second.
func BenchmarkManagerStream(b *testing.B) {
	bn := defaultBench(b, 512)
	tr, err := bn.Run(bn.Generate(1, 400), 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	replayBench(b, bn, tr)
}

// replayBench drives tr's inputs, cycle by cycle, into a new simulation
// of bn's design, reading the outputs the harness reads.
func replayBench(b *testing.B, bn *Bench, tr *Trace) {
	m := bn.Design.Module
	s, err := sim.New(m)
	if err != nil {
		b.Fatal(err)
	}
	layout := inputLayout(m)
	var valids []string
	for _, r := range routes {
		valids = append(valids, r.prefix+"_tlp_valid")
	}
	cycles := 0
	b.ReportAllocs()
	for b.Loop() {
		for _, vec := range tr.vecs {
			for k, p := range layout[1:] {
				s.Drive(p.name, vec[k+1])
			}
			s.SetReset(vec[0][0] != 0)
			s.Settle()
			for _, name := range valids {
				s.Get(name)
			}
			s.Step()
		}
		cycles += len(tr.vecs)
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(len(tr.vecs)), "cycles/run")
}
