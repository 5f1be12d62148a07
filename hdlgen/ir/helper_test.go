package ir_test

import (
	"runtime"
	"testing"

	"onic/hdlgen/ir"
)

// counterHelper builds a register for its caller; with ir.Helper the
// register is recorded where the caller asked for it.
func counterHelper(m *ir.Module, name string) ir.Value {
	ir.Helper()
	r := m.Reg(name, 8, 0)
	m.SetNext(r, m.Add(r, m.Const(8, 1)))
	return r
}

// plainHelper is the same without ir.Helper: its own line is recorded.
func plainHelper(m *ir.Module, name string) ir.Value {
	return m.Reg(name, 8, 0)
}

func line() int { _, _, l, _ := runtime.Caller(1); return l }

// TestHelper: positions skip functions marked with ir.Helper, and only
// those.
func TestHelper(t *testing.T) {
	m := ir.NewModule("m")
	at := line() + 1
	a := counterHelper(m, "a")
	b := plainHelper(m, "b")
	if p := m.Node(a.ID()).Pos; p.Line != at {
		t.Errorf("a helper's register is at %v, want the caller's line %d", p, at)
	}
	if p := m.Node(b.ID()).Pos; p.Line == at+1 {
		t.Errorf("a plain function's register is at its caller (%v): only helpers are skipped", p)
	}
}
