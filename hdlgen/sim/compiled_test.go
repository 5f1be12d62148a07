package sim

import (
	"testing"
)

// TestCompiledValues: a Sim running on generated code (a Model registered
// for its program) reads every node's value as the interpreter does,
// including those the generated code keeps in Go variables only, and runs
// on the model (Compiled).
func TestCompiledValues(t *testing.T) {
	m := random(7, 50)
	models = map[string]func() Model{}
	defer func() { models = map[string]func() Model{} }()
	Register(func() Model { return Newstep50() })
	fast, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	if !fast.Compiled() || ref.Compiled() {
		t.Fatalf("compiled: %v and %v", fast.Compiled(), ref.Compiled())
	}
	in := inputsFor(m, 3, 300)
	for c, vals := range in {
		for _, s := range []*Sim{fast, ref} {
			k := 0
			for _, p := range m.Ports() {
				if !p.Output {
					s.Drive(p.Name, []uint64{vals[k]})
					k++
				}
			}
			s.SetReset(c%37 == 0)
		}
		for i := 0; i < m.Len(); i++ {
			if a, b := fast.Value(i), ref.Value(i); a != b {
				t.Fatalf("cycle %d node %d: compiled %#x, interpreted %#x", c, i, a, b)
			}
		}
		fast.Step()
		ref.Step()
	}
}
