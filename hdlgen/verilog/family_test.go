package verilog

import (
	"fmt"
	"strings"
	"testing"

	"onic/hdlgen/ir"
)

// reg is a family member: a w-bit register, with a constant added when
// odd is set (a w-bit literal that is not zero, so members do not print
// alike and the family cannot be parameterised).
func regModule(odd bool) func(int) *ir.Module {
	var build func(int) *ir.Module
	build = func(w int) *ir.Module {
		m := ir.NewModule(fmt.Sprintf("hold_%d", w))
		d := m.Input("d", w)
		r := m.RegNoReset("q", w)
		if odd {
			m.SetNext(r, m.Add(d, m.Const(w, 3)))
		} else {
			m.SetNext(r, d)
		}
		m.Output("q_out", r)
		m.SetFamily(ir.Family{Name: "hold", Param: "WIDTH", Value: w, Build: build})
		return m
	}
	return build
}

func familyTop(build func(int) *ir.Module) *ir.Module {
	top := ir.NewModule("top")
	a, b := top.Input("a", 12), top.Input("b", 40)
	x := top.Instance("x", build(12), map[string]ir.Value{"d": a})
	y := top.Instance("y", build(40), map[string]ir.Value{"d": b})
	top.Output("xa", x["q_out"])
	top.Output("yb", y["q_out"])
	return top
}

// TestFamily: members of a family that print alike but for their width
// become one module with a parameter, instanced with #(.WIDTH(n)); a
// family whose members differ otherwise prints member by member.
func TestFamily(t *testing.T) {
	files, err := EmitDesign(familyTop(regModule(false)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "top.v hold.v" {
		t.Fatalf("files %v", names)
	}
	top, hold := string(files[0].Source), string(files[1].Source)
	for _, want := range []string{"hold #(.WIDTH(12)) x (", "hold #(.WIDTH(40)) y ("} {
		if !strings.Contains(top, want) {
			t.Errorf("top has no %q:\n%s", want, top)
		}
	}
	for _, want := range []string{"module hold #(\n    parameter WIDTH = 12\n) (", "input  wire [WIDTH-1:0] d,", "reg  [WIDTH-1:0] q = {WIDTH{1'b0}};"} {
		if !strings.Contains(hold, want) {
			t.Errorf("hold has no %q:\n%s", want, hold)
		}
	}
	files, err = EmitDesign(familyTop(regModule(true)))
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, f := range files {
		names = append(names, f.Name)
	}
	if strings.Join(names, " ") != "top.v hold_12.v hold_40.v" {
		t.Fatalf("a family with width-dependent constants: files %v", names)
	}
}
