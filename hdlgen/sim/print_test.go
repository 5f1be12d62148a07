package sim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
)

// printModule is a random module built to exercise the emitter's prepare
// passes: tables (printed as case statements), named values and
// constants (wires and localparams), expressions built twice (merged),
// slices of slices, neighbouring slices and repeated parts in a
// concatenation, and single-use operations (inlined).
func printModule(seed uint64) *ir.Module {
	rng := rand.New(rand.NewPCG(seed, 3))
	m := ir.NewModule(fmt.Sprintf("print%d", seed))
	a, b, c := m.Input("a", 8), m.Input("b", 6), m.Input("c", 3)
	r := m.Reg("r", 8, 0x3C)
	vals := []ir.Value{a, b, c, r}
	pick := func() ir.Value { return vals[rng.IntN(len(vals))] }
	for k := range 24 {
		x := pick()
		var v ir.Value
		switch rng.IntN(8) {
		case 0: // a table over up to 5 bits of x
			iw := 1 + rng.IntN(min(5, x.Width()))
			words := make([]uint64, 1+rng.IntN(1<<iw))
			for i := range words {
				words[i] = uint64(rng.IntN(4)) * 0x11 // few distinct words
			}
			v = m.ROM(m.Slice(x, 0, iw), 8, words)
		case 1: // the same expression twice
			y := pick()
			y = m.Zext(m.Slice(y, 0, min(y.Width(), x.Width())), x.Width())
			v = m.Xor(m.Add(x, y), m.Add(x, y))
			v = m.Or(v, m.And(x, y))
		case 2: // a slice of a slice
			if x.Width() >= 4 {
				v = m.Slice(m.Slice(x, 1, x.Width()-1), 1, 2)
			} else {
				v = m.Not(x)
			}
		case 3: // neighbouring slices and repeated parts
			if x.Width() < 2 {
				x = m.Concat(x, x)
			}
			bit := m.Slice(x, 0, 1)
			v = m.Concat(m.Slice(x, x.Width()-1, 1), m.Slice(x, 0, x.Width()-1), bit, bit, bit)
		case 4: // a named value
			v = m.Named(fmt.Sprintf("n%d", k), m.Sub(x, m.Const(x.Width(), 1)))
		case 5: // a named constant used whole and sliced
			k8 := m.Named(fmt.Sprintf("K%d", k), m.Const(8, rng.Uint64()&0xFF))
			v = m.Mux(m.Eq(m.Zext(m.Slice(x, 0, min(8, x.Width())), 8), k8), m.Slice(k8, 2, 4), m.Const(4, 5))
		case 6:
			v = m.Mux(m.Slice(pick(), 0, 1), m.Add(x, x), m.Not(x))
			if rng.IntN(2) == 0 { // constants that decide: folded away
				allOnes := m.Not(m.Const(x.Width(), 0))
				v = m.Or(m.And(m.Mux(m.Const(1, uint64(k&1)), v, m.Not(m.Not(x))), allOnes), m.Const(x.Width(), 0))
			}
		default:
			v = m.Eq(x, m.Zext(m.Slice(pick(), 0, 1), x.Width()))
		}
		vals = append(vals, v)
	}
	m.SetNext(r, m.Zext(m.Slice(vals[len(vals)-1], 0, 1), 8))
	for k, v := range vals[4:] {
		if rng.IntN(2) == 0 || k == len(vals)-5 {
			m.Output(fmt.Sprintf("o%d", k), v)
		}
	}
	return m
}

// TestIcarusPrinting: modules that exercise the prepare passes print as
// Verilog that Icarus runs cycle for cycle as the simulator runs the IR,
// with tables printed as case statements and named values declared.
func TestIcarusPrinting(t *testing.T) {
	tools.Long(t)
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	verilator := tools.Require(t, "verilator")
	dir := t.TempDir()
	var cases, named int
	for seed := range uint64(30) {
		m := printModule(seed)
		src, err := verilog.Emit(m)
		if err != nil {
			t.Fatal(err)
		}
		cases += strings.Count(string(src), "case (")
		named += strings.Count(string(src), "localparam")
		tb, want, err := stimulus(m, string(src), seed, 25)
		if err != nil {
			t.Fatal(err)
		}
		dut := filepath.Join(dir, m.Name()+".v")
		os.WriteFile(dut, src, 0o644)
		if err := runIcarus(iverilog, vvp, dir, tb, m, want, dut); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, src)
		}
		if out, err := exec.Command(verilator, "--lint-only", "-Wall", dut).CombinedOutput(); err != nil {
			t.Fatalf("seed %d: verilator: %v\n%s\n%s", seed, err, out, src)
		}
	}
	if cases < 10 || named < 5 {
		t.Fatalf("only %d tables and %d localparams printed", cases, named)
	}
}
