package sim

import (
	"fmt"
	"math/big"
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

// TestIcarusAgainstSim: the Verilog the emitter prints, run in Icarus,
// gives the same outputs cycle by cycle as the compiled simulator runs the
// IR — random modules (no memories: their uninitialised words are x in an
// event simulator), random inputs, resets in the first cycle and arst at
// random. This holds the emitter's meaning to the simulator's.
func TestIcarusAgainstSim(t *testing.T) {
	tools.Long(t)
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	dir := t.TempDir()
	for seed := range uint64(60) {
		m := randomModule(seed, 40, false, []int{64, 200}[seed%2]) // half of them with wide signals
		src, err := verilog.Emit(m)
		if err != nil {
			t.Fatal(err)
		}
		tb, want, err := stimulus(m, string(src), seed, 25)
		if err != nil {
			t.Fatal(err)
		}
		dut := filepath.Join(dir, m.Name()+".v")
		os.WriteFile(dut, src, 0o644)
		if err := runIcarus(iverilog, vvp, dir, tb, m, want, dut); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, src)
		}
	}
}

// runIcarus compiles the testbench tb with the design's files in Icarus,
// runs it and compares what it prints with the simulator's outputs want.
// Before the first (reset) edge, registers are x in Verilog (the simulator
// starts them at their reset value), so the comparison starts at the
// second cycle.
func runIcarus(iverilog, vvp, dir, tb string, m *ir.Module, want []*big.Int, files ...string) error {
	tbf, exe := filepath.Join(dir, "tb.v"), filepath.Join(dir, "sim")
	if err := os.WriteFile(tbf, []byte(tb), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command(iverilog, append([]string{"-g2005", "-o", exe, tbf}, files...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("iverilog: %v\n%s", err, out)
	}
	out, err := exec.Command(vvp, "-n", exe).Output()
	if err != nil {
		return fmt.Errorf("vvp: %v", err)
	}
	got := strings.Fields(string(out))
	if len(got) != len(want) {
		return fmt.Errorf("Icarus printed %d values, the simulator %d", len(got), len(want))
	}
	for i := len(outputs(m)); i < len(want); i++ {
		v, ok := new(big.Int).SetString(got[i], 16)
		if !ok || v.Cmp(want[i]) != 0 {
			return fmt.Errorf("value %d (cycle %d): Icarus %s, simulator %#x", i, i/len(outputs(m)), got[i], want[i])
		}
	}
	return nil
}

func outputs(m *ir.Module) []ir.Port {
	var out []ir.Port
	for _, p := range m.Ports() {
		if p.Output {
			out = append(out, p)
		}
	}
	return out
}

// stimulus runs m in the compiled simulator on random inputs and returns
// a testbench applying the same inputs to the emitted module, and the
// outputs the simulator saw (per cycle, in port order).
func stimulus(m *ir.Module, src string, seed uint64, cycles int) (string, []*big.Int, error) {
	s, err := New(m)
	if err != nil {
		return "", nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 9))
	has := func(port string) bool {
		return strings.Contains(src, "input  wire "+port+",") || strings.Contains(src, "input  wire "+port+"\n")
	}
	var b strings.Builder
	b.WriteString("`timescale 1ns/1ps\nmodule tb;\n    reg clk = 0, rst = 0, arst = 0;\n")
	var conns []string
	for _, n := range []string{"clk", "rst", "arst"} {
		if has(n) {
			conns = append(conns, fmt.Sprintf(".%s(%s)", n, n))
		}
	}
	for _, p := range m.Ports() {
		w := m.Node(p.Node).W
		kind := "reg "
		if p.Output {
			kind = "wire"
		}
		fmt.Fprintf(&b, "    %s [%d:0] p_%s;\n", kind, w-1, p.Name)
		conns = append(conns, fmt.Sprintf(".%s(p_%s)", p.Name, p.Name))
	}
	fmt.Fprintf(&b, "    %s dut(%s);\n    initial begin\n", m.Name(), strings.Join(conns, ", "))
	var want []*big.Int
	for c := range cycles {
		for _, p := range m.Ports() {
			if !p.Output {
				w := m.Node(p.Node).W
				v := make([]uint64, (w+63)/64)
				for k := range v {
					v[k] = rng.Uint64()
				}
				topMask(v, w)
				s.SetWords(p.Name, v)
				fmt.Fprintf(&b, "        p_%s = %d'h%x;\n", p.Name, w, words(v))
			}
		}
		arst := c == 0 || rng.IntN(8) == 0
		s.SetReset(c == 0)
		s.SetAsyncReset(arst)
		fmt.Fprintf(&b, "        rst = %d; arst = %d;\n        #1;\n", b2u(c == 0), b2u(arst))
		for _, p := range outputs(m) {
			v, _ := s.GetWords(p.Name)
			want = append(want, words(v))
			fmt.Fprintf(&b, "        $display(\"%%h\", p_%s);\n", p.Name)
		}
		b.WriteString("        clk = 1; #1; clk = 0; #1;\n")
		s.Step()
	}
	b.WriteString("        $finish;\n    end\nendmodule\n")
	return b.String(), want, nil
}
