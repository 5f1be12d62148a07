// Package vbench times Verilator on the same Verilog and the same stimulus
// as onic's own simulator, for the benchmarks that compare the two
// (docs/hdl.md, "Speed against Verilator"). It writes a C++ harness that
// replays recorded per-cycle inputs into the Verilated model, reading the
// outputs a testbench would read, and reports simulated cycles per second
// of the replay loop alone (reading the stimulus is not timed).
package vbench

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/hdlgen/verilog"
)

// Port is an input the stimulus drives, in the order of each cycle's
// values.
type Port struct {
	Name  string
	Width int
}

// Stimulus is what a run drives: for each cycle, each input's value as
// 64-bit words, least significant first, in Inputs' order. The first
// input is the module's reset, rst.
type Stimulus struct {
	Inputs []Port
	Cycles [][][]uint64
	// Reads are outputs of at most 64 bits the harness reads every cycle
	// (as a testbench reads valid and ready signals), so that Verilator
	// cannot skip the logic behind them.
	Reads []string

	flat  []uint64   // Cycles laid out one after another (Replay)
	at    []int      // where each input's words start in a cycle of flat
	sim   *sim.Sim   // the simulation frame and reads are for
	frame *sim.Frame // its inputs
	reads []sim.Port
}

// Build verilates m into dir (single-threaded, -O3, X assignment and
// initialisation fast, assertions off) around a replay harness for st, and
// returns the harness binary's path. verilator is the tool's path.
func Build(dir, verilator string, m *ir.Module, st *Stimulus) (string, error) {
	files, err := verilog.EmitDesign(m)
	if err != nil {
		return "", err
	}
	var srcs []string
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Source, 0o644); err != nil {
			return "", err
		}
		srcs = append(srcs, f.Name)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.cpp"), harness(st), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "inputs.bin"), inputs(st), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(verilator, append(Args(m.Name()), srcs...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("verilator: %v\n%s", err, tail(out))
	}
	if err := checkOptimised(out); err != nil {
		return "", err
	}
	return filepath.Join(dir, "obj_dir", "replay"), nil
}

// Args are the verilator arguments Build uses for top module top, before
// the source files: single-threaded, Verilator's own optimisations on
// (-O3), X assignment and initialisation fast, assertions off, and the
// C++ compiled at -O3 everywhere. verilated.mk compiles the model with
// OPT_FAST, OPT_SLOW and OPT_GLOBAL, which default to -Os and come after
// CFLAGS on g++'s command line, so "-CFLAGS -O3" has no effect; they are
// set through make (Verilator's manual, "Benchmarking & Optimization":
// OPT_FAST=-O3).
func Args(top string) []string {
	return []string{"--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert",
		"-Wno-fatal", "-MAKEFLAGS", "OPT_FAST=-O3 OPT_SLOW=-O3 OPT_GLOBAL=-O3",
		"--prefix", "Vdut", "--top-module", top, "-Mdir", "obj_dir", "-o", "replay", "main.cpp"}
}

// checkOptimised reads the build's output (make prints each compiler
// command) and fails unless every compilation of the model or the
// harness ran at -O3 with no later -O option undoing it.
func checkOptimised(out []byte) error {
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !slices.Contains(f, "-c") || !(strings.HasSuffix(f[0], "g++") || strings.HasSuffix(f[0], "clang++") || strings.HasSuffix(f[0], "ccache")) {
			continue
		}
		n++
		last := ""
		for _, a := range f {
			if strings.HasPrefix(a, "-O") {
				last = a
			}
		}
		if last != "-O3" {
			return fmt.Errorf("verilator: a compilation ran at %q, not -O3: %s", last, line)
		}
	}
	if n == 0 {
		return fmt.Errorf("verilator: the build printed no compiler command to check its optimisation level:\n%s", tail(out))
	}
	return nil
}

// Run runs the harness built by Build, replaying the stimulus reps times,
// and returns the cycles it simulated and the seconds the loop took.
func Run(bin string, reps int) (cycles uint64, seconds float64, err error) {
	cmd := exec.Command(bin, strconv.Itoa(reps))
	cmd.Dir = filepath.Dir(filepath.Dir(bin))
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %v", bin, err)
	}
	if _, err := fmt.Sscan(string(out), &cycles, &seconds); err != nil {
		return 0, 0, fmt.Errorf("%s printed %q: %v", bin, out, err)
	}
	return cycles, seconds, nil
}

// Sink runs the harness built by Build over the stimulus once and returns
// the sum of the outputs it reads (Stimulus.Reads) over the cycles: with
// ReplaySink's, a check that both simulators did the same work.
func Sink(bin string) (uint64, error) {
	cmd := exec.Command(bin, "1")
	cmd.Dir = filepath.Dir(filepath.Dir(bin))
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s: %v", bin, err)
	}
	var cycles, sink uint64
	var seconds float64
	if _, err := fmt.Sscan(string(out), &cycles, &seconds, &sink); err != nil {
		return 0, fmt.Errorf("%s printed %q: %v", bin, out, err)
	}
	return sink, nil
}

// ReplaySink replays st into s, which must be fresh (as a harness run
// starts), once as Replay does, and returns the sum of the outputs read
// (their low 64 bits) over the cycles, as the Verilator harness sums
// them (Sink).
func ReplaySink(s *sim.Sim, st *Stimulus) uint64 {
	st.layout(s)
	return st.run(s)
}

// words32 is how many 32-bit words Verilator gives a port of width w
// (scalars of up to 64 bits are read from two).
func words32(w int) int {
	if w <= 64 {
		return 2
	}
	return (w + 31) / 32
}

// inputs lays each cycle's values out as the harness reads them: per
// input, words32 little-endian 32-bit words.
func inputs(st *Stimulus) []byte {
	var b []byte
	for _, cyc := range st.Cycles {
		for k, p := range st.Inputs {
			v := cyc[k]
			for i := range words32(p.Width) {
				var x uint64
				if i/2 < len(v) {
					x = v[i/2]
				}
				b = binary.LittleEndian.AppendUint32(b, uint32(x>>(32*uint(i%2))))
			}
		}
	}
	return b
}

// harness is the C++ replay loop: each cycle, the inputs, the falling
// edge (eval), the reads, the rising edge (eval).
func harness(st *Stimulus) []byte {
	per := 0
	for _, p := range st.Inputs {
		per += words32(p.Width)
	}
	var set strings.Builder
	off := 0
	for _, p := range st.Inputs {
		switch {
		case p.Width <= 32:
			fmt.Fprintf(&set, "            top->%s = p[%d];\n", p.Name, off)
		case p.Width <= 64:
			fmt.Fprintf(&set, "            top->%s = (uint64_t)p[%d] | (uint64_t)p[%d] << 32;\n", p.Name, off, off+1)
		default:
			fmt.Fprintf(&set, "            for (int i = 0; i < %d; i++) top->%s[i] = p[%d + i];\n", words32(p.Width), p.Name, off)
		}
		off += words32(p.Width)
	}
	var reads strings.Builder
	for _, r := range st.Reads {
		fmt.Fprintf(&reads, "            sink += top->%s;\n", r)
	}
	return fmt.Appendf(nil, `// Replay harness generated by onic's internal/vbench.
#include "Vdut.h"
#include "verilated.h"
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    FILE* f = fopen("inputs.bin", "rb");
    if (!f) return 2;
    std::vector<uint32_t> buf;
    uint32_t w;
    while (fread(&w, 4, 1, f) == 1) buf.push_back(w);
    fclose(f);
    const size_t per = %d;
    const size_t n = buf.size() / per;
    VerilatedContext ctx;
    Vdut* top = new Vdut{&ctx};
    uint64_t sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; r++) {
        for (size_t c = 0; c < n; c++) {
            const uint32_t* p = &buf[c * per];
%s            top->clk = 0;
            top->eval();
%s            top->clk = 1;
            top->eval();
        }
    }
    auto t1 = std::chrono::steady_clock::now();
    printf("%%llu %%.9f %%llu\n", (unsigned long long)(n * reps), std::chrono::duration<double>(t1 - t0).count(), (unsigned long long)sink);
    delete top;
    return 0;
}
`, per, set.String(), reads.String())
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// Replay drives st into s as a testbench would, cycle by cycle: every
// input, the reads, one edge. It returns the cycles simulated. The
// stimulus is laid out flat first (once, kept in st), as the Verilator
// harness reads it, so neither side pays for the other's data layout.
func Replay(s *sim.Sim, st *Stimulus) int {
	st.layout(s)
	st.run(s)
	return len(st.Cycles)
}

// run drives the laid-out stimulus into s once and returns the sum of
// the outputs read (their low 64 bits) over the cycles.
func (st *Stimulus) run(s *sim.Sim) uint64 {
	frame, reads := st.frame, st.reads
	per := st.at[len(st.Inputs)]
	var sink uint64
	for c := range st.Cycles {
		vec := st.flat[c*per : (c+1)*per]
		frame.Drive(vec[st.at[1]:])
		s.SetReset(vec[0] != 0)
		for _, p := range reads {
			sink += s.Read(p)[0]
		}
		s.Step()
	}
	return sink
}

// layout lays the stimulus out flat (once) and finds s's ports (once
// per simulation).
func (st *Stimulus) layout(s *sim.Sim) {
	if st.flat == nil {
		st.at = make([]int, len(st.Inputs)+1)
		for k, p := range st.Inputs {
			st.at[k+1] = st.at[k] + (p.Width+63)/64
		}
		per := st.at[len(st.Inputs)]
		st.flat = make([]uint64, per*len(st.Cycles))
		for c, vec := range st.Cycles {
			for k := range st.Inputs {
				copy(st.flat[c*per+st.at[k]:c*per+st.at[k+1]], vec[k])
			}
		}
	}
	if st.sim != s { // (kept for the next replay into s: no allocation then)
		ins := make([]sim.Port, len(st.Inputs)-1) // (rst is SetReset's)
		for k, p := range st.Inputs[1:] {
			ins[k], _ = s.Port(p.Name)
		}
		st.reads = make([]sim.Port, len(st.Reads))
		for k, name := range st.Reads {
			st.reads[k], _ = s.Port(name)
		}
		st.sim, st.frame = s, s.Frame(ins)
	}
}

// Compare times the harness bin (Build's) and onic's simulator of m
// (sim.New: compiled where generated code is linked in) replaying st, for
// as many cycles each (about two million), and reports both speeds and
// onic's as a multiple of Verilator's ("ratio") (CompareWith).
func Compare(b *testing.B, bin string, m *ir.Module, st *Stimulus) {
	var s *sim.Sim
	CompareWith(b, bin, st, func(reps int) (uint64, float64, error) {
		if s == nil {
			var err error
			if s, err = sim.New(m); err != nil {
				return 0, 0, err
			}
		}
		start := time.Now()
		n := 0
		for range reps {
			n += Replay(s, st)
		}
		return uint64(n), time.Since(start).Seconds(), nil
	})
}

// Timer runs onic's side of a comparison: reps replays of the stimulus,
// returning the cycles simulated and the seconds the replays alone took
// (in this process, or in another whose start-up is not counted).
type Timer func(reps int) (cycles uint64, seconds float64, err error)

// CompareWith times the harness bin (Build's) and onic replaying st for
// as many cycles each (about two million), and reports both speeds and
// onic's as a multiple of Verilator's ("ratio"). The two take turns in
// rounds (about 400,000 cycles each), and each figure is the median over
// the rounds: on a shared machine the speed drifts by tens of per cent
// over seconds, and back-to-back rounds see the same drift.
func CompareWith(b *testing.B, bin string, st *Stimulus, onic Timer) {
	const rounds = 5
	reps := max(1, 2_000_000/rounds/len(st.Cycles))
	for b.Loop() {
		var vs, os, ratio []float64
		for range rounds {
			vc, vsec, err := Run(bin, reps)
			if err != nil {
				b.Fatal(err)
			}
			oc, osec, err := onic(reps)
			if err != nil {
				b.Fatal(err)
			}
			vs = append(vs, float64(vc)/vsec)
			os = append(os, float64(oc)/osec)
			ratio = append(ratio, os[len(os)-1]/vs[len(vs)-1])
		}
		b.ReportMetric(median(vs), "verilator-cycles/s")
		b.ReportMetric(median(os), "onic-cycles/s")
		b.ReportMetric(median(ratio), "ratio")
	}
}

// median is the middle value of xs (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
