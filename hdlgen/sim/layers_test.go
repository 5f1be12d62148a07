package sim

import (
	"bytes"
	"fmt"
	"testing"

	"onic/hdlgen/ir"
)

// delayLines is a module of delay lines: under one enable, eight lanes
// carry a computed byte through three stages, a 130-bit bus through four
// and one bit through two; a line of two more registers branches off the
// first lane's second stage. Taken as one, the second stage would wait
// for the branch's first register (which loads a word of it), which
// waits for its second, in that stage: a loop of commits, so that stage
// commits register by register. Under a second enable, three lines of
// three stages where one line's first stage is computed from a register
// computed from another's last.
func delayLines() *ir.Module {
	m := ir.NewModule("delays")
	a, bus := m.Input("a", 8), m.Input("bus", 130)
	en, en2 := m.Input("en", 1), m.Input("en2", 1)
	stage := func(name string, next, e ir.Value) ir.Value {
		r := m.Reg(name, next.Width(), 0)
		m.SetNext(r, next)
		m.SetEnable(r, e)
		return r
	}
	line := func(name string, first ir.Value, e ir.Value, n int) []ir.Value {
		out := []ir.Value{stage(name+"_1", first, e)}
		for k := 2; k <= n; k++ {
			out = append(out, stage(fmt.Sprintf("%s_%d", name, k), out[len(out)-1], e))
		}
		return out
	}
	var sum ir.Value = m.Const(8, 0)
	var lane0 []ir.Value
	for l := range 8 {
		ls := line(fmt.Sprintf("lane%d", l), m.Xor(a, m.Const(8, uint64(29*l))), en, 3)
		sum = m.Add(sum, ls[2])
		if l == 0 {
			lane0 = ls
		}
	}
	m.Output("sum", stage("total", sum, en))
	wide := line("bus", m.Not(bus), en, 4)
	m.Output("bus_q", wide[3])
	bit := line("bit", m.Slice(a, 0, 1), en, 2)
	m.Output("bit_q", bit[1])
	twin := line("twin", lane0[1], en, 2)
	m.Output("twin_q", twin[1])
	c0 := line("c0", a, en2, 3)
	p := stage("p", m.Add(c0[2], m.Const(8, 1)), en2)
	c1 := line("c1", m.Add(a, p), en2, 3)
	c2 := line("c2", m.Sub(a, m.Const(8, 3)), en2, 3)
	m.Output("c1_q", m.Xor(c1[2], c2[2]))
	return m
}

// TestDelayLines: New lays the delay lines of delayLines out stage by
// stage (under the first enable, 3+8+1+1 words, then 3+8, then the bus's
// last 3; under the second, 3 and 3), and GoSource copies each stage as
// one array, except the one on a loop of commits (as one, GoSource fails:
// a register never committed). TestGoSourceRandom runs the module
// against the interpreter.
func TestDelayLines(t *testing.T) {
	m := delayLines()
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int32
	for _, l := range s.layers {
		sizes = append(sizes, l.n)
	}
	if got, want := fmt.Sprint(sizes), "[13 11 3 3 3]"; got != want {
		t.Errorf("delay-line layers of %v words, want %v", got, want)
	}
	src, err := GoSource(m, "main", "delays", "")
	if err != nil {
		t.Fatal(err) // (a loop of commits: "never committed")
	}
	for k, l := range s.layers {
		cp := fmt.Sprintf("*(*[%d]uint64)(v[%d:%d]) = *(*[%d]uint64)(v[%d:%d])", l.n, l.dst, l.dst+l.n, l.n, l.src, l.src+l.n)
		if got, want := bytes.Contains(src, []byte(cp)), k > 0; got != want {
			t.Errorf("layer %d: %s in the generated source %v, want %v", k, cp, got, want)
		}
	}
}
