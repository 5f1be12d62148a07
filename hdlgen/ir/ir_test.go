package ir

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// prev is the position of the line before its caller's: the builder call
// whose error the caller expects.
func prev() string {
	_, f, l, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", f[strings.LastIndex(f, "/")+1:], l-1)
}

// counter is an 8-bit counter with an enable: the smallest module with a
// register, an adder, a constant and ports.
func counter() *Module {
	m := NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)
	return m
}

func TestCounterChecks(t *testing.T) {
	m := counter()
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if len(m.Ports()) != 2 || m.Ports()[1].Name != "count" || !m.Ports()[1].Output {
		t.Fatalf("ports %+v", m.Ports())
	}
	if n := m.Node(m.Ports()[1].Node); n.Op != OpReg || n.W != 8 || n.Name != "cnt" || n.Pos.String() != "hdlgen/ir/ir_test.go:22" {
		t.Fatalf("count is driven by %+v", n)
	}
}

// TestErrors: each mistake is reported at the line of the builder call
// that made it, and building goes on so all of them are reported.
func TestErrors(t *testing.T) {
	m := NewModule("bad")
	a, b := m.Input("a", 8), m.Input("b", 4)
	var want []string
	m.Add(a, b)
	want = append(want, prev()+": add: operands are 8 and 4 bits")
	m.Slice(a, 6, 4)
	want = append(want, prev()+": slice: bits [9:6] are outside a 8-bit value")
	m.Const(4, 16)
	want = append(want, prev()+": constant 0x10 does not fit in 4 bits")
	m.ConstWords(70, []uint64{0, 64})
	want = append(want, prev()+": constant does not fit in 70 bits")
	m.ConstWords(60, []uint64{0, 1})
	want = append(want, prev()+": constant: 2 words do not make a value of 60 bits")
	m.Mux(a, a, a)
	want = append(want, prev()+": mux: the select is 8 bits")
	m.Zext(a, 4)
	want = append(want, prev()+": zext: cannot extend 8 bits to 4")
	m.Input("a", 2)
	want = append(want, prev()+`: "a" is already a name in module bad`)
	w := m.Wire("w", 8)
	m.Assign(w, a)
	m.Assign(w, a)
	want = append(want, prev()+`: assign: wire "w" is already driven`)
	r := m.Reg("r", 8, 300)
	want = append(want, prev()+`: register "r": reset value 0x12c does not fit in 8 bits`)
	m.SetNext(r, b)
	want = append(want, prev()+`: register "r": next value is 4 bits, want 8`)
	m.Wire("floating", 3)
	want = append(want, prev()+`: wire "floating" is never driven`)
	other := NewModule("other").Input("x", 8)
	m.Add(a, other)
	want = append(want, prev()+": add: operand from another module")
	err := m.Check()
	if err == nil {
		t.Fatal("no errors")
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want)+1 { // and r has no next value
		t.Errorf("%d errors, want %d:\n%s", len(got), len(want)+1, err)
	}
	requireErrors(t, err, want)
}

// TestStatesErrors: States wants a named register, names that fit its
// width and upper-case identifiers; good states come back as named
// constants, recorded with the register.
func TestStatesErrors(t *testing.T) {
	m := NewModule("fsm")
	a := m.Input("a", 2)
	st := m.Reg("st", 2, 0)
	m.SetNext(st, a)
	var want []string
	m.States(a, "A", "B")
	want = append(want, prev()+": states: input is not a named register")
	m.States(st, "A", "B", "C", "D", "E")
	want = append(want, prev()+": states of st: 5 names for 2 bits")
	m.States(st, "A", "b")
	want = append(want, prev()+`: states of st: "b" is not an upper-case identifier`)
	err := m.Check()
	if err == nil {
		t.Fatal("no errors")
	}
	requireErrors(t, err, want)

	g := NewModule("good")
	r := g.Reg("phase", 2, 0)
	s := g.States(r, "IDLE", "RUN", "DONE")
	g.SetNext(r, g.Mux(g.Eq(r, s[0]), s[1], s[2]))
	if len(s) != 3 || g.Node(s[2].id).Name != "PHASE_DONE" || g.Node(s[2].id).Const[0] != 2 ||
		len(g.FSMs()) != 1 || g.FSMs()[0].Reg != r.id || g.FSMs()[0].States[1] != "RUN" {
		t.Fatalf("states %v, FSMs %+v", s, g.FSMs())
	}
}

// requireErrors fails t for each of want that begins no line of err.
func requireErrors(t *testing.T, err error, want []string) {
	t.Helper()
	got := strings.Split(err.Error(), "\n")
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, w)
		}
		if !found {
			t.Errorf("missing %q in:\n%s", w, err)
		}
	}
}

// TestLoop: a combinational loop is reported with its path; a loop
// through a register is fine.
func TestLoop(t *testing.T) {
	m := NewModule("loop")
	a := m.Input("a", 4)
	w := m.Wire("w", 4)
	x := m.Xor(a, w)
	m.Assign(w, m.Not(x))
	m.Output("y", w)
	err := m.Check()
	if err == nil || !strings.Contains(err.Error(), "combinational loop") || !strings.Contains(err.Error(), `wire "w"`) {
		t.Fatalf("got %v", err)
	}
	m = NewModule("ok")
	r := m.Reg("r", 4, 0)
	m.SetNext(r, m.Not(r))
	m.Output("y", r)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestWidths: every operator's result width follows its rule, and the
// identity slice and extension return their operand.
func TestWidths(t *testing.T) {
	m := NewModule("w")
	a, b, s := m.Input("a", 8), m.Input("b", 8), m.Input("s", 1)
	for _, tc := range []struct {
		v    Value
		want int
	}{
		{m.Add(a, b), 8}, {m.Sub(a, b), 8}, {m.And(a, b), 8}, {m.Or(a, b), 8}, {m.Xor(a, b), 8}, {m.Not(a), 8},
		{m.Eq(a, b), 1}, {m.Ne(a, b), 1}, {m.LtU(a, b), 1}, {m.LtS(a, b), 1},
		{m.RedOr(a), 1}, {m.RedAnd(a), 1}, {m.RedXor(a), 1},
		{m.Mux(s, a, b), 8}, {m.Slice(a, 2, 3), 3}, {m.Concat(a, s, b), 17},
		{m.Zext(a, 12), 12}, {m.Sext(a, 70), 70}, {m.Const(100, 5), 100},
		{m.Mul(a, s), 9}, {m.Shl(a, s), 8}, {m.Shr(a, b), 8}, {m.Sar(a, s), 8},
		{m.ShlC(a, 3), 8}, {m.ShrC(a, 9), 8}, {m.SarC(a, 20), 8},
	} {
		if tc.v.Width() != tc.want {
			t.Errorf("%s: width %d, want %d", m.Node(tc.v.ID()).Op, tc.v.Width(), tc.want)
		}
	}
	if m.Slice(a, 0, 8) != a || m.Zext(a, 8) != a || m.ShlC(a, 0) != a {
		t.Error("identity slice or extension made a node")
	}
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryErrors: memories need a power-of-two depth, exact address
// widths, matching data and byte-enable widths.
func TestMemoryErrors(t *testing.T) {
	m := NewModule("mem")
	a4, a3, d32, d8, one := m.Input("a4", 4), m.Input("a3", 3), m.Input("d32", 32), m.Input("d8", 8), m.Input("one", 1)
	m.Memory("odd", 12, 8)
	mem := m.Memory("ok", 16, 32)
	m.ReadPort(mem, a3, one)
	m.WritePort(mem, a4, d8, one, Value{})
	m.WritePort(mem, a4, d32, one, a3)
	m.ReadPort(d32, a4, one)
	err := m.Check()
	for _, want := range []string{
		`memory "odd": depth 12 must be a power of two`,
		`read port: memory "ok" of 16 words takes a 4-bit address, not 3`,
		`write port: data is 8 bits (memory "ok": 32)`,
		`write port: byte enables are 3 bits; memory "ok" of 32-bit words needs 4`,
		`read port: input "d32" is not a memory`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	m = NewModule("fine")
	mem = m.Memory("ram", 16, 32)
	m.WritePort(mem, m.Input("wa", 4), m.Input("wd", 32), m.Input("we", 1), m.Input("be", 4))
	m.Output("q", m.ReadPort(mem, m.Input("ra", 4), m.Const(1, 1)))
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestInline: a counter inlined twice runs as two counters with prefixed
// names; wiring mistakes are reported at the caller's line.
func TestInline(t *testing.T) {
	top := NewModule("top")
	en := top.Input("en", 1)
	a := top.Inline("c0", counter(), map[string]Value{"en": en})
	b := top.Inline("c1", counter(), map[string]Value{"en": top.Not(en)})
	top.Output("a", a["count"])
	top.Output("b", b["count"])
	if err := top.Check(); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for i := 0; i < top.Len(); i++ {
		names[top.Node(i).Name] = true
	}
	if !names["c0_cnt"] || !names["c1_cnt"] || names["cnt"] {
		t.Errorf("names %v", names)
	}
	bad := NewModule("bad")
	x := bad.Input("x", 4)
	var want []string
	bad.Inline("c", counter(), map[string]Value{})
	want = append(want, prev()+`: inline c: input "en" of counter is not connected`)
	bad.Inline("d", counter(), map[string]Value{"en": x})
	want = append(want, prev()+`: inline d: input "en" of counter is 1 bits, the value 4`)
	bad.Inline("e", counter(), map[string]Value{"en": bad.Slice(x, 0, 1), "enable": x})
	want = append(want, prev()+`: inline e: counter has no input "enable"`)
	bad.Inline("c", counter(), map[string]Value{"en": bad.Slice(x, 1, 1)})
	want = append(want, prev()+`: "c_cnt" is already a name in module bad`)
	err := bad.Check()
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in %v", w, err)
		}
	}
}
