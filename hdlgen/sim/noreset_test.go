package sim

import (
	"testing"

	"onic/hdlgen/ir"
)

// TestNoReset: a register without reset starts at 0 and keeps its value
// while rst is high, in the interpreter (64-bit and wide paths) and the
// reference evaluator alike, while a register with reset clears.
func TestNoReset(t *testing.T) {
	for _, w := range []int{16, 100} {
		m := ir.NewModule("nr")
		in := m.Input("in", w)
		d := m.RegNoReset("d", w)
		c := m.Reg("c", w, 0)
		m.SetNext(d, in)
		m.SetNext(c, in)
		m.Output("d_q", d)
		m.Output("c_q", c)
		s, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := NewReference(m)
		if err != nil {
			t.Fatal(err)
		}
		get := func(name string) uint64 {
			v, err := s.GetWords(name)
			if err != nil {
				t.Fatal(err)
			}
			return v[0]
		}
		if get("d_q") != 0 {
			t.Fatalf("%d bits: starts at %#x", w, get("d_q"))
		}
		s.SetWords("in", []uint64{0x1234, 0})
		ref.SetInput(int(m.Ports()[0].Node), 0x1234)
		s.Step()
		ref.Step()
		s.SetReset(true)
		ref.SetReset(true)
		s.Step()
		ref.Step()
		if get("d_q") != 0x1234 || get("c_q") != 0 {
			t.Fatalf("%d bits: after rst d=%#x c=%#x (want 0x1234, 0)", w, get("d_q"), get("c_q"))
		}
		for _, p := range m.Ports() {
			if p.Output {
				want, _ := s.GetWords(p.Name)
				if got := ref.Value(p.Node); got.Uint64() != want[0] {
					t.Fatalf("%d bits: reference %s = %v, simulator %#x", w, p.Name, got, want[0])
				}
			}
		}
	}
}
