package ir

import (
	"strings"
	"testing"
)

// passThrough is out = in + 1: its output follows its input.
func passThrough() *Module {
	m := NewModule("pass")
	in := m.Input("in", 8)
	m.Output("out", m.Add(in, m.Const(8, 1)))
	return m
}

// registered is out = in delayed a cycle: its output follows no input.
func registered() *Module {
	m := NewModule("delay")
	in := m.Input("in", 8)
	r := m.Reg("q", 8, 0)
	m.SetNext(r, in)
	m.Output("out", r)
	return m
}

func TestInstanceErrors(t *testing.T) {
	m := NewModule("top")
	a := m.Input("a", 8)
	var want []string
	m.Instance("u1", counter(), map[string]Value{})
	want = append(want, prev()+`: instance u1: input "en" of counter is not connected`)
	m.Instance("u2", counter(), map[string]Value{"en": a})
	want = append(want, prev()+`: instance u2: input "en" of counter is 1 bits, the value 8`)
	m.Instance("u3", counter(), map[string]Value{"en": m.Slice(a, 0, 1), "clock": a})
	want = append(want, prev()+`: instance u3: counter has no input "clock"`)
	bad := NewModule("bad")
	bad.Wire("w", 1)
	m.Instance("u4", bad, nil)
	want = append(want, prev()+`: instance u4: module bad has errors: `)
	m.Instance("u5", m, nil)
	want = append(want, prev()+`: instance u5: a module cannot instance itself or nil`)
	m.Instance("a", counter(), map[string]Value{"en": m.Slice(a, 0, 1)})
	want = append(want, prev()+`: "a" is already a name in module top`)
	err := m.Check()
	if err == nil {
		t.Fatal("no errors")
	}
	requireErrors(t, err, want)
}

// TestInstanceLoops: feeding an instance's output back to its input is a
// loop when the module passes the input through, and not when a register
// stands between them.
func TestInstanceLoops(t *testing.T) {
	for _, c := range []struct {
		sub  func() *Module
		loop bool
	}{{passThrough, true}, {registered, false}} {
		m := NewModule("top")
		w := m.Wire("fb", 8)
		out := m.Instance("u", c.sub(), map[string]Value{"in": w})["out"]
		m.Assign(w, out)
		m.Output("y", out)
		err := m.Check()
		if (err != nil) != c.loop {
			t.Fatalf("%s: loop %v, error %v", c.sub().Name(), c.loop, err)
		}
		if c.loop && !strings.Contains(err.Error(), `output "out" of instance "u"`) {
			t.Errorf("loop error does not name the instance output: %v", err)
		}
	}
}

// TestInstanceNested: a loop through two levels of instances is found,
// because an instance's output carries what its module's outputs follow.
func TestInstanceNested(t *testing.T) {
	mid := NewModule("mid")
	in := mid.Input("x", 8)
	mid.Output("y", mid.Instance("p", passThrough(), map[string]Value{"in": in})["out"])
	m := NewModule("top")
	w := m.Wire("fb", 8)
	out := m.Instance("u", mid, map[string]Value{"x": w})["y"]
	m.Assign(w, out)
	m.Output("o", out)
	if err := m.Check(); err == nil || !strings.Contains(err.Error(), "combinational loop") {
		t.Fatalf("want a loop, got %v", err)
	}
	if mid.contains(m) || !m.contains(mid) {
		t.Fatal("contains is wrong")
	}
	m2 := NewModule("top2")
	m2.Instance("a", mid, map[string]Value{"x": m2.Input("i", 8)})
	m2.Instance("b", mid, map[string]Value{"x": m2.Input("j", 8)})
	if subs := m2.Instances(); len(subs) != 1 || subs[0] != mid {
		t.Fatalf("Instances = %v", subs)
	}
}

// TestFlatten: the flattened module has no instances, the instance's
// inputs and outputs as wires named after it, and the same ports.
func TestFlatten(t *testing.T) {
	m := NewModule("top")
	a := m.Input("a", 8)
	o := m.Instance("u", registered(), map[string]Value{"in": a})["out"]
	m.Output("y", m.Xor(o, a))
	f, at := Flatten(m)
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	names := map[string]Op{}
	for i := 0; i < f.Len(); i++ {
		n := f.Node(i)
		if n.Op == OpInstance || n.Op == OpInstOut {
			t.Fatalf("node %d is still %s", i, n.Op)
		}
		if n.Name != "" {
			names[n.Name] = n.Op
		}
	}
	for name, op := range map[string]Op{"a": OpInput, "u_in": OpWire, "u_q": OpReg, "u_out": OpWire} {
		if names[name] != op {
			t.Errorf("%s is %v, want %v (all: %v)", name, names[name], op, names)
		}
	}
	if at[a.ID()] != f.Ports()[0].Node || f.Node(f.Ports()[1].Node).Op != OpXor {
		t.Fatalf("ports %+v", f.Ports())
	}
	if g, at := Flatten(counter()); g.Name() != "counter" || at != nil {
		t.Fatal("a module without instances is flattened")
	}
}
