package ir_test

import (
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// TestSatAddU: every sum of a 4-bit a and a 2-bit b is a+b where it fits
// in 4 bits and 15 where it does not.
func TestSatAddU(t *testing.T) {
	m := ir.NewModule("sat")
	m.Output("y", m.SatAddU(m.Input("a", 4), m.Input("b", 2)))
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	for a := range uint64(16) {
		for b := range uint64(4) {
			if err := s.Set("a", a); err != nil {
				t.Fatal(err)
			}
			if err := s.Set("b", b); err != nil {
				t.Fatal(err)
			}
			s.Settle()
			y, err := s.Get("y")
			if err != nil {
				t.Fatal(err)
			}
			if want := min(a+b, 15); y != want {
				t.Errorf("%d + %d = %d, want %d", a, b, y, want)
			}
		}
	}
}
