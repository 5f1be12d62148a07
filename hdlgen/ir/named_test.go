package ir

import (
	"strings"
	"testing"
)

func TestNamed(t *testing.T) {
	m := NewModule("n")
	a := m.Input("a", 8)
	sum := m.Named("sum", m.Add(a, a))
	if sum.Width() != 8 || m.Node(sum.id).Name != "sum" {
		t.Fatalf("Named did not name the sum: %+v", m.Node(sum.id))
	}
	if got := m.Named("other", a); got != a || m.Node(a.id).Name != "a" {
		t.Fatal("Named renamed an input")
	}
	m.Named("sum", m.Sub(a, a)) // a second value called sum
	m.Output("y", sum)
	err := m.Check()
	if err == nil || !strings.Contains(err.Error(), `"sum" is already a name`) || !strings.Contains(err.Error(), "named_test.go:") {
		t.Fatalf("a duplicate name: %v", err)
	}
}

func TestRegNoReset(t *testing.T) {
	m := NewModule("r")
	r := m.RegNoReset("d", 16)
	m.SetNext(r, m.Input("in", 16))
	m.Output("q", r)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	if n := m.Node(r.id); !n.NoReset || n.Async || n.Reset[0] != 0 {
		t.Fatalf("%+v", n)
	}
}
