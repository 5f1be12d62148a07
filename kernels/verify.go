package kernels

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// edges are the element values every kernel is tried on: zero, one,
// minus one, the signed limits, and for floats the specials (infinities,
// NaNs, subnormals, ties for rounding, the largest finite values).
func edges(e Elem) []uint64 {
	lo, hi := minMax(e.Bits)
	mask := uint64(1)<<e.Bits - 1
	vs := []uint64{0, 1, mask, lo, hi, lo + 1, hi - 1, mask >> 1, 2}
	switch e.Name {
	case "fp32":
		vs = append(vs, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7FFFFFFF, // inf, NaNs
			0x00000001, 0x00400000, 0x807FFFFF, 0x00008000, 0x00018000, // subnormals, ties at the bottom
			0x3F808000, 0x3F818000, 0x3F80FFFF, 0x3F807FFF, // ties to even (down, up), above and below half
			0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF, 0x80000000) // round into infinity or not; -0
	case "bf16":
		vs = append(vs, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x0001, 0x8001, 0x7F7F)
	}
	return vs
}

// packet is n random elements of e, a quarter of them edge values.
func packet(rng *rand.Rand, e Elem, n int) []byte {
	ed := edges(e)
	var b []byte
	for range n {
		v := rng.Uint64() & (1<<e.Bits - 1)
		if rng.IntN(4) == 0 {
			v = ed[rng.IntN(len(ed))]
		}
		b = putLE(b, v, e.Bytes())
	}
	return b
}

// sample is an input packet per input of n elements: the kernel's own
// Sample if it has one, else random and edge-value elements.
func (k *Kernel) sample(rng *rand.Rand, n int) [][]byte {
	if k.Sample != nil {
		return k.Sample(rng, n)
	}
	var in [][]byte
	for range k.Inputs {
		in = append(in, packet(rng, k.In, n))
	}
	return in
}

// Verdict is what Verify found for one kernel.
type Verdict struct {
	Kernel   string            `json:"kernel"`
	Cases    int               `json:"cases"`     // packets tried against the reference
	Sim      string            `json:"simulator"` // "ok" or the first difference from the reference
	RTL      map[string]string `json:"rtl"`       // per tool: "ok" or the first cycle that differs
	Latency  int               `json:"latency_cycles"`
	Interval float64           `json:"interval_cycles"` // cycles per input beat, back to back
	// BytesPerCycle is the input bytes taken per cycle back to back.
	BytesPerCycle float64 `json:"bytes_per_cycle"`
}

// String is the verdict on one line: each check and what it found, the
// RTL tools in name order.
func (v Verdict) String() string {
	parts := []string{"simulator vs reference: " + v.Sim}
	for _, name := range slices.Sorted(maps.Keys(v.RTL)) {
		parts = append(parts, name+" vs simulator: "+v.RTL[name])
	}
	return strings.Join(parts, "; ")
}

// OK reports whether every check passed.
func (v Verdict) OK() bool {
	if v.Sim != "ok" {
		return false
	}
	for _, r := range v.RTL {
		if r != "ok" {
			return false
		}
	}
	return true
}

// Verify holds the kernel to its reference: the simulator on packets of
// random and edge-value elements (empty, one element, partial last beats,
// many beats) under random backpressure, then each RTL tool in tools
// (kernels/replay's Icarus and Verilator) replaying one such run cycle by
// cycle (work files in temporary directories). It also measures latency and
// throughput back to back.
func (k *Kernel) Verify(seed uint64, tools []Tool) Verdict {
	v := Verdict{Kernel: k.Name, Sim: "ok", RTL: map[string]string{}}
	rng := rand.New(rand.NewPCG(seed, 0x76))
	mk := func(n int) [][]byte { return k.sample(rng, n) }
	for ci, n := range []int{0, 1, k.Lanes - 1, k.Lanes + 1, 3*k.Lanes + 5, 20 * k.Lanes, 64 * k.Lanes} {
		in := mk(n)
		want, err := k.Reference(in)
		if err != nil {
			v.Sim = err.Error()
			return v
		}
		tr := Traffic{Offer: 0.3 + 0.7*rng.Float64(), Ready: 0.3 + 0.7*rng.Float64(), Seed: seed + uint64(ci)}
		if ci == 6 {
			tr = Full
		}
		got, st, err := k.Run(in, tr)
		v.Cases++
		switch {
		case err != nil:
			v.Sim = err.Error()
			return v
		case !bytes.Equal(got, want):
			v.Sim = k.mismatch(seed, ci, in, got, want, st) + k.traceFailure(in, tr, "sim.vcd")
			return v
		}
		if d := k.regsDiff(in, st.Regs); d != "" {
			v.Sim = fmt.Sprintf("%d elements: %s", n, d)
			return v
		}
		if ci == 6 {
			v.Latency = st.Latency()
			// Over a long packet: cycles per input beat, and input bytes
			// per cycle, from the first beat out to the last.
			span := float64(st.LastOut - st.FirstOut + 1)
			v.Interval = span / float64(st.InBeats)
			v.BytesPerCycle = float64(len(in[0])) / span
		}
	}
	for _, tool := range tools {
		name := tool.Name()
		dir, err := os.MkdirTemp("", "onic-kernel-")
		if err != nil {
			v.RTL[name] = err.Error()
			continue
		}
		in, tr := mk(5*k.Lanes+3), Traffic{Offer: 0.7, Ready: 0.6, Seed: seed}
		r, err := k.RunRTL(in, tr, tool, dir)
		switch {
		case err != nil:
			v.RTL[name] = err.Error()
			os.RemoveAll(dir)
		case r.Diff() != "":
			// Keep the work files (Verilog, vectors, testbench, logs)
			// next to the simulator's waveform of the same run.
			v.RTL[name] = fmt.Sprintf("seed %d, %d elements: %s; work files in %s", seed, 5*k.Lanes+3, r.Diff(), dir) + k.traceIn(dir, in, tr, "sim.vcd")
		default:
			v.RTL[name] = "ok"
			os.RemoveAll(dir)
		}
	}
	return v
}

// mismatch says where the simulator's output got first differs from the
// reference's want, for case ci of Verify with seed: the output byte, its
// beat and lane and the cycle that beat left, the element got and the one
// wanted, and the input it was made from: for an elementwise kernel its
// input elements, for a beat-level one the input beat of the same number.
func (k *Kernel) mismatch(seed uint64, ci int, in [][]byte, got, want []byte, st Stats) string {
	off := firstDiff(got, want)
	ob, eb := k.OutBits()/8, k.out().Bytes()
	beat, lane := off/ob, off%ob/eb
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, case %d (input packets of %d bytes): output byte %d, beat %d, lane %d", seed, ci, len(in[0]), off, beat, lane)
	if beat < len(st.OutCycles) {
		fmt.Fprintf(&b, ", cycle %d", st.OutCycles[beat])
	}
	e := off / eb
	if (e+1)*eb > len(got) || (e+1)*eb > len(want) {
		fmt.Fprintf(&b, ": got %d bytes, want %d", len(got), len(want))
		return b.String()
	}
	fmt.Fprintf(&b, ": got %#0*x, want %#0*x", 2*eb, le(got[e*eb:(e+1)*eb]), 2*eb, le(want[e*eb:(e+1)*eb]))
	if k.Lane != nil {
		ib := k.In.Bytes()
		var ins []string
		for _, p := range in {
			if (e+1)*ib <= len(p) {
				ins = append(ins, fmt.Sprintf("%#0*x", 2*ib, le(p[e*ib:(e+1)*ib])))
			}
		}
		fmt.Fprintf(&b, " (input element %d: %s)", e, strings.Join(ins, ", "))
		return b.String()
	}
	// A beat-level kernel: the input beat of the same number, which is
	// the one it came from when the body sends a beat per beat it takes,
	// as little-endian 32-bit words.
	ib := k.InBits() / 8
	for i, p := range in {
		lo := beat * ib
		if lo >= len(p) {
			continue
		}
		chunk := p[lo:min(lo+ib, len(p))]
		var words []string
		for w := 0; w < len(chunk); w += 4 {
			words = append(words, fmt.Sprintf("%0*x", 2*min(4, len(chunk)-w), le(chunk[w:min(w+4, len(chunk))])))
		}
		fmt.Fprintf(&b, " (input %d, beat %d, 32-bit words: %s)", i, beat, strings.Join(words, " "))
	}
	return b.String()
}

// traceFailure writes a waveform of the simulator's run of in under t
// into a new temporary directory and says where ("" if it could not).
func (k *Kernel) traceFailure(in [][]byte, t Traffic, file string) string {
	dir, err := os.MkdirTemp("", "onic-kernel-"+ident(k.Name)+"-")
	if err != nil {
		return ""
	}
	return k.traceIn(dir, in, t, file)
}

// WriteWaveform writes a waveform (VCD, for GTKWave) of the cycle
// simulator running the kernel as dir/<name>.vcd and returns its path:
// one packet of five beats and a few elements more (random and edge
// values from seed) under backpressure, every port and named value of
// the kernel's module on every cycle (onic kernel test --vcd).
func (k *Kernel) WriteWaveform(dir string, seed uint64) (string, error) {
	if err := k.validate(); err != nil {
		return "", err
	}
	in := k.sample(rand.New(rand.NewPCG(seed, 0x77)), 5*k.Lanes+3)
	if msg := k.traceIn(dir, in, Traffic{Offer: 0.7, Ready: 0.6, Seed: seed}, ident(k.Name)+".vcd"); msg != "" {
		return strings.TrimPrefix(msg, "; waveform: "), nil
	}
	return "", fmt.Errorf("kernel %s: the waveform could not be written in %s", k.Name, dir)
}

// traceIn writes the waveform (VCD, for GTKWave) of the simulator's run
// of in under t as dir/file and says where.
func (k *Kernel) traceIn(dir string, in [][]byte, t Traffic, file string) string {
	m, err := k.Module()
	if err != nil {
		return ""
	}
	path := filepath.Join(dir, file)
	f, err := os.Create(path)
	if err != nil {
		return ""
	}
	_, _, err = k.run(m, in, t, nil, nil, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ""
	}
	return "; waveform: " + path
}

// firstDiff is the index of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// regsDiff compares registers read back after a run with the kernel's
// RefRegs ("" when equal, or the kernel has none).
func (k *Kernel) regsDiff(in [][]byte, got map[uint32]uint32) string {
	if k.RefRegs == nil {
		return ""
	}
	want, err := k.RefRegs(in)
	if err != nil {
		return err.Error()
	}
	for _, a := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[a]; !ok || g != want[a] {
			return fmt.Sprintf("register %#x reads %#x, the reference says %#x", a, g, want[a])
		}
	}
	return ""
}
