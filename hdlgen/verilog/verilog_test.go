package verilog

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/golden"
	"onic/testbenches/tools"
)

// counter is an 8-bit counter with an enable.
func counter() *ir.Module {
	m := ir.NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)
	return m
}

// ops uses every operator, a wide value, names that are Verilog keywords
// or not identifiers, bits nothing reads, an unused input and dead logic.
func ops() *ir.Module {
	m := ir.NewModule("ops")
	a, b := m.Input("a", 8), m.Input("b", 8)
	sel := m.Input("module", 1) // a keyword
	m.Input("spare", 4)         // read by nothing
	sum := m.Add(a, b)
	diff := m.Sub(a, b)
	w := m.Wire("2fast", 8) // not an identifier
	m.Assign(w, m.Mux(sel, sum, diff))
	m.Output("mixed", m.Xor(m.And(w, m.Not(a)), m.Or(a, b)))
	m.Output("flags", m.Concat(m.Eq(a, b), m.Ne(a, b), m.LtU(a, b), m.LtS(a, b),
		m.RedOr(a), m.RedAnd(b), m.RedXor(sum), m.Slice(diff, 7, 1)))
	m.Output("low", m.Slice(b, 0, 4)) // b[7:4] feed only the ops above
	wide := m.Sext(m.Slice(a, 2, 5), 70)
	m.Output("wide", m.Add(wide, m.Zext(m.Const(65, 1), 70)))
	m.Output("konst", m.Slice(m.Concat(m.Const(4, 0xA), m.Const(4, 0x5)), 2, 4))
	m.Output("prod", m.Mul(a, m.Slice(b, 0, 5)))
	amt := m.Slice(b, 5, 3)
	m.Output("shifts", m.Concat(m.Shl(a, amt), m.Shr(a, amt), m.Sar(a, amt), m.ShlC(a, 3), m.ShrC(a, 2), m.SarC(a, 7)))
	m.Output("never", m.LtU(b, m.Const(8, 0))) // printed as 1'h0: lint calls x < 0 constant
	m.Add(a, a)                                // dead: no output needs it
	reg := m.Reg("reg", 8, 0x5A)
	m.SetNext(reg, m.Zext(m.Slice(sum, 1, 3), 8))
	m.Output("r", reg)
	held := m.RegAsync("held", 4, 0x9)
	m.SetNext(held, m.Slice(diff, 4, 4))
	m.SetEnable(held, sel)
	m.Output("held_q", held)
	return m
}

// pair inlines two counters, one counting when en is high, the other
// when it is low.
func pair() *ir.Module {
	m := ir.NewModule("pair")
	en := m.Input("en", 1)
	m.Output("up", m.Inline("up", counter(), map[string]ir.Value{"en": en})["count"])
	m.Output("down", m.Inline("down", counter(), map[string]ir.Value{"en": m.Not(en)})["count"])
	return m
}

var modules = []func() *ir.Module{counter, ops, ram, pair, long, fsm}

// fsm is a state machine with named states (ir.States): IDLE until go,
// then RUN for four cycles, then DONE until go falls.
func fsm() *ir.Module {
	m := ir.NewModule("fsm")
	start := m.Input("go", 1)
	st := m.Reg("state", 2, 0)
	s := m.States(st, "IDLE", "RUN", "DONE")
	n := m.Reg("runs", 2, 0)
	running := m.Named("running", m.Eq(st, s[1]))
	m.SetNext(n, m.Mux(running, m.Add(n, m.Const(2, 1)), m.Const(2, 0)))
	last := m.Eq(n, m.Const(2, 3))
	m.SetNext(st, m.Mux(m.Eq(st, s[0]), m.Mux(start, s[1], s[0]),
		m.Mux(running, m.Mux(last, s[2], s[1]), m.Mux(start, s[2], s[0]))))
	m.Output("busy", running)
	m.Output("done", m.Eq(st, s[2]))
	return m
}

// long has expressions too long for a line: a wide XOR of long-named
// inputs with a mux and a comparison inside, a concatenation of them,
// and a register fed by a long sum, which the layout wraps.
func long() *ir.Module {
	m := ir.NewModule("long")
	var in []ir.Value
	for i := range 12 {
		in = append(in, m.Input(fmt.Sprintf("an_input_with_a_rather_long_name_%02d", i), 16))
	}
	x := in[0]
	for _, v := range in[1:] {
		x = m.Xor(x, v)
	}
	m.Output("all_of_them_xored_together", m.Mux(m.LtU(in[0], in[1]), x, m.And(in[2], m.Or(in[3], in[4]))))
	m.Output("all_of_them_side_by_side", m.Concat(in...))
	sum := m.Reg("running_sum_of_the_first_eight", 16, 0)
	acc := in[0]
	for _, v := range in[1:8] {
		acc = m.Add(acc, v)
	}
	m.SetNext(sum, acc)
	m.Output("sum", sum)
	return m
}

// write emits every module into dir as <name>.v and returns the paths.
func write(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	for _, mk := range modules {
		m := mk()
		v, err := Emit(m)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Emit(mk())
		if !bytes.Equal(v, again) {
			t.Fatalf("%s: two emissions differ", m.Name())
		}
		p := filepath.Join(dir, m.Name()+".v")
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// memInit is the memory-zeroing block the emitter prints.
var memInit = regexp.MustCompile("(?m)^`ifndef SYNTHESIS\n    integer mem_init_i;\n    initial begin\n(        for \\(mem_init_i = 0; mem_init_i < \\d+; mem_init_i = mem_init_i \\+ 1\\)\n            \\w+\\[mem_init_i\\] = \\d+'h0;\n)+    end\n`endif\n")

// TestGolden compares each module's Verilog with testdata/<name>.v
// (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, mk := range modules {
		m := mk()
		v, err := Emit(m)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", m.Name()+".v"), string(v))
		// The one initial block allowed zeroes the memories, as block RAM
		// starts after configuration.
		text := memInit.ReplaceAllString(string(v), "")
		for _, bad := range []string{"initial", "$time", "integer", "`timescale"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: output contains %q", m.Name(), bad)
			}
		}
	}
}

// TestVerilatorLint: no warnings at all under -Wall, no waivers.
func TestVerilatorLint(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	for _, p := range write(t, t.TempDir()) {
		out, err := exec.Command(verilator, "--lint-only", "-Wall", p).CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Errorf("%s: %v\n%s", filepath.Base(p), err, out)
		}
	}
}

// TestYosys: every module synthesises for Xilinx 7-series.
func TestYosys(t *testing.T) {
	tools.Long(t)
	yosys := tools.Require(t, "yosys")
	for _, p := range write(t, t.TempDir()) {
		top := strings.TrimSuffix(filepath.Base(p), ".v")
		out, err := exec.Command(yosys, "-q", "-p", "read_verilog "+p+"; synth_xilinx -top "+top+"; stat").CombinedOutput()
		if err != nil || strings.Contains(string(out), "Warning") {
			t.Errorf("%s: %v\n%s", top, err, out)
		}
	}
}

// TestIcarusCounter simulates the counter with Icarus: reset, five
// enabled clocks, two disabled ones.
func TestIcarusCounter(t *testing.T) {
	dir := t.TempDir()
	out := icarus(t, dir, `
module tb;
  reg clk = 0, rst = 1, en = 0;
  wire [7:0] count;
  counter dut(.clk(clk), .rst(rst), .en(en), .count(count));
  always #5 clk = ~clk;
  initial begin
    @(negedge clk); @(negedge clk); rst = 0; en = 1;
    repeat (5) @(negedge clk);
    en = 0;
    repeat (2) @(negedge clk);
    $display("count=%0d", count);
    $finish;
  end
endmodule
`, write(t, dir)[0])
	if !strings.Contains(out, "count=5") {
		t.Fatalf("vvp:\n%s", out)
	}
}

// icarus compiles testbench tb with srcs in dir (Verilog-2005, -Wall)
// and returns what the simulation printed.
func icarus(t *testing.T, dir, tb string, srcs ...string) string {
	t.Helper()
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	tbPath := filepath.Join(dir, "tb.v")
	if err := os.WriteFile(tbPath, []byte(tb), 0o644); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(dir, "sim")
	if out, err := exec.Command(iverilog, append([]string{"-g2005", "-Wall", "-o", sim, tbPath}, srcs...)...).CombinedOutput(); err != nil {
		t.Fatalf("iverilog: %v\n%s", err, out)
	}
	out, err := exec.Command(vvp, "-n", sim).CombinedOutput()
	if err != nil {
		t.Fatalf("vvp: %v\n%s", err, out)
	}
	return string(out)
}

// TestIcarusStateNames: the printer's state-name wire shows each state
// of a machine declared with ir.States as its name, in Icarus from the
// first cycle (a continuous assignment, not an always block).
func TestIcarusStateNames(t *testing.T) {
	dir := t.TempDir()
	v, err := Emit(fsm())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "fsm.v")
	if err := os.WriteFile(src, v, 0o644); err != nil {
		t.Fatal(err)
	}
	out := icarus(t, dir, `
module tb;
  reg clk = 0, rst = 1, go = 0;
  wire busy, done;
  fsm dut(.clk(clk), .rst(rst), .go(go), .busy(busy), .done(done));
  always #5 clk = ~clk;
  initial begin
    #1 $display("at0=%s", dut.state_name);
    @(negedge clk); rst = 0; go = 1;
    @(negedge clk); $display("then=%s", dut.state_name);
    repeat (4) @(negedge clk);
    $display("last=%s", dut.state_name);
    $finish;
  end
endmodule
`, src)
	for _, want := range []string{"at0=IDLE", "then=RUN ", "last=DONE"} {
		if !strings.Contains(out, want) {
			t.Fatalf("vvp: no %q in\n%s", want, out)
		}
	}
	if !strings.Contains(string(v), "localparam [1:0] STATE_RUN = 2'h1;") || !strings.Contains(string(v), "`ifndef SYNTHESIS\n    // state by name") {
		t.Errorf("the states are not named:\n%s", v)
	}
}

// TestIcarusCompilesAll: every module compiles as Verilog-2005.
func TestIcarusCompilesAll(t *testing.T) {
	iverilog := tools.Require(t, "iverilog")
	dir := t.TempDir()
	args := append([]string{"-g2005", "-Wall", "-o", filepath.Join(dir, "all")}, write(t, dir)...)
	if out, err := exec.Command(iverilog, args...).CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("iverilog: %v\n%s", err, out)
	}
}

// TestEmitRefusesBadModules: Emit returns the module's build errors.
func TestEmitRefusesBadModules(t *testing.T) {
	m := ir.NewModule("bad")
	m.Output("y", m.Wire("w", 2))
	if _, err := Emit(m); err == nil || !strings.Contains(err.Error(), `wire "w" is never driven`) {
		t.Fatalf("got %v", err)
	}
}

// ram is a 16 x 32-bit memory with a byte-enabled write port and a
// registered read port, and a small whole-word memory beside it.
func ram() *ir.Module {
	m := ir.NewModule("ram")
	waddr, raddr := m.Input("waddr", 4), m.Input("raddr", 4)
	data, be := m.Input("wdata", 32), m.Input("wbe", 4)
	we, re := m.Input("we", 1), m.Input("re", 1)
	mem := m.Memory("words", 16, 32)
	m.WritePort(mem, waddr, data, we, be)
	m.Output("rdata", m.ReadPort(mem, raddr, re))
	flags := m.Memory("flags", 2, 8)
	m.WritePort(flags, m.Slice(waddr, 0, 1), m.Slice(data, 0, 8), we, m.Slice(be, 0, 1))
	m.Output("flag", m.ReadPort(flags, m.Slice(raddr, 0, 1), m.Const(1, 1)))
	return m
}

// TestLayout: the layout layer only moves whitespace — every module's
// text is the same as its one-statement-a-line print once whitespace is
// ignored — and leaves no wrappable statement longer than WrapWidth that
// has somewhere to break; a statement with nowhere to break stays whole.
func TestLayout(t *testing.T) {
	wrapped := 0
	for _, mk := range modules {
		// (Printing names as it goes: each print from its own analysis.)
		m := mk()
		e, err := newDesign().analyse(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := newDesign().analyse(mk())
		if err != nil {
			t.Fatal(err)
		}
		raw, laid := string(e.statements()), string(again.print())
		if strings.Join(strings.Fields(raw), "") != strings.Join(strings.Fields(laid), "") {
			t.Errorf("%s: the layout changed more than whitespace:\n%s", m.Name(), laid)
		}
		for i, l := range strings.Split(laid, "\n") {
			if len(l) > WrapWidth && !strings.Contains(l, "mem_init_i") {
				t.Errorf("%s:%d: %d columns: %s", m.Name(), i+1, len(l), l)
			}
		}
		wrapped += strings.Count(laid, "\n") - strings.Count(raw, "\n")
	}
	if wrapped < 5 {
		t.Errorf("only %d lines came from wrapping: the long module was not wrapped", wrapped)
	}
	for _, tc := range []struct{ prefix, expr, suffix string }{
		{"    assign y = ", strings.Repeat("a_long_operand_name | ", 8) + "z", ";"},
		{"    assign y = ", "{" + strings.Repeat("a_long_operand_name, ", 8) + "z}", "; // build.go:1"},
		{"        q <= ", "c ? (" + strings.Repeat("a_long_operand_name + ", 6) + "z) : (d & e)", ";"},
		{"    assign y = ", strings.Repeat("x", 120), ";"}, // nowhere to break
	} {
		lines := wrapExpr(tc.prefix, tc.expr, tc.suffix, continuation(tc.prefix))
		got := strings.Join(lines, "\n")
		if strings.Join(strings.Fields(got), "") != strings.Join(strings.Fields(tc.prefix+tc.expr+tc.suffix), "") {
			t.Errorf("wrapExpr(%q) changed more than whitespace:\n%s", tc.expr, got)
		}
		for _, l := range lines {
			if len(l) > WrapWidth && len(lines) > 1 {
				t.Errorf("wrapExpr(%q): a line of %d columns:\n%s", tc.expr, len(l), got)
			}
		}
		if !strings.HasPrefix(lines[0], tc.prefix) || !strings.HasSuffix(lines[len(lines)-1], tc.suffix) {
			t.Errorf("wrapExpr(%q) moved the statement's ends:\n%s", tc.expr, got)
		}
	}
}

// TestFlagTable: a table whose words are flags (ir.FlagBits) prints them
// in binary under a legend of the bits' names, most significant first.
func TestFlagTable(t *testing.T) {
	m := ir.NewModule("flags")
	idx := m.Input("kind", 2)
	v := m.Named("traits", m.ROM(idx, 3, []uint64{0b001, 0b110, 0b101, 0b001}))
	m.FlagBits(v, "posted", "data", "lock")
	m.Output("out", v)
	src, err := Emit(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"// traits_lookup's bits, 2 to 0: lock, data, posted\n", "2'h1: traits_lookup = 3'b110;", "default: traits_lookup = 3'b001;"} {
		if !strings.Contains(string(src), want) {
			t.Errorf("no %q in\n%s", want, src)
		}
	}
	bad := ir.NewModule("bad")
	x := bad.Input("x", 2)
	bad.FlagBits(x, "a", "b")
	y := bad.ROM(x, 2, []uint64{0, 1, 2, 3})
	bad.FlagBits(y, "a")
	bad.Output("y", y)
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "is not a table") || !strings.Contains(err.Error(), "1 names for 2 bits") {
		t.Errorf("bad flag bits: %v", err)
	}
}
