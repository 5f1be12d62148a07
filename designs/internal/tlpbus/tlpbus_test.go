package tlpbus

import (
	"math/rand/v2"
	"slices"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// loop is a module whose stream comes in on s_ (In, in the order given),
// goes through Pack and Unpack, and out on m_ (Out, in the standard
// order).
func loop(order ...string) *ir.Module {
	m := ir.NewModule("loop")
	in := In(m, "s_", 512, order...)
	in.Ready = m.Wire("s_ready_w", 1)
	out := Unpack(m, in.Pack(m), in)
	Out(m, "m_", out, FieldHdr, FieldData, FieldKeep, FieldSOP, FieldEOP, FieldValid)
	m.Assign(in.Ready, m.Input("m_ready", 1))
	m.Output("s_ready", in.Ready)
	return m
}

// TestInOut: In declares a stream's inputs in the order given, Out its
// outputs, and a stream packed and unpacked comes out field for field as
// it went in.
func TestInOut(t *testing.T) {
	order := []string{FieldEOP, FieldSOP, FieldKeep, FieldData, FieldHdr, FieldValid}
	m := loop(order...)
	var names []string
	for _, p := range m.Ports() {
		if !p.Output {
			names = append(names, p.Name)
		}
	}
	want := []string{"s_eop", "s_sop", "s_keep", "s_data", "s_hdr", "s_valid", "m_ready"}
	if !slices.Equal(names, want) {
		t.Fatalf("inputs %v, want %v", names, want)
	}
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		hdr := []uint64{r.Uint64(), r.Uint64()}
		data := make([]uint64, 8)
		for i := range data {
			data[i] = r.Uint64()
		}
		keep, sop, eop, valid := r.Uint64()&0xffff, r.Uint64()&1, r.Uint64()&1, r.Uint64()&1
		s.SetWords("s_hdr", hdr)
		s.SetWords("s_data", data)
		s.Set("s_keep", keep)
		s.Set("s_sop", sop)
		s.Set("s_eop", eop)
		s.Set("s_valid", valid)
		s.Settle()
		gh, _ := s.GetWords("m_hdr")
		gd, _ := s.GetWords("m_data")
		gk, _ := s.Get("m_keep")
		gs, _ := s.Get("m_sop")
		ge, _ := s.Get("m_eop")
		gv, _ := s.Get("m_valid")
		if !slices.Equal(gh, hdr) || !slices.Equal(gd, data) || gk != keep || gs != sop || ge != eop || gv != valid {
			t.Fatalf("in %x %x %x %d %d %d, out %x %x %x %d %d %d", hdr, data, keep, sop, eop, valid, gh, gd, gk, gs, ge, gv)
		}
	}
}

// TestUnknownField: a field name In or Out does not know is a mistake in
// the generator, and panics naming it.
func TestUnknownField(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || r != "tlpbus: no field bar" {
			t.Fatalf("recovered %v", r)
		}
	}()
	In(ir.NewModule("x"), "s_", 512, FieldHdr, "bar")
}
