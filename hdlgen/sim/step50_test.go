//go:build !onic_regen

package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/golden"
)

// The tests of step50_gen_test.go, GoSource's output for the benchmark
// module; left out of builds with the regeneration tag (RegenTag), which
// leaves that file out.

// TestStep50Compiled: the checked-in generated simulator of the
// benchmark module agrees with the interpreter on every output of 5000
// cycles.
func TestStep50Compiled(t *testing.T) {
	m := random(7, 50)
	in := inputsFor(m, 1, 5000)
	x := Newstep50()
	var b strings.Builder
	for c, vals := range in {
		k := 0
		for _, p := range m.Ports() {
			if !p.Output {
				x.S[step50Index[p.Name]] = vals[k]
				k++
			}
		}
		x.Rst = c%37 == 0
		x.Eval()
		for _, p := range m.Ports() {
			if p.Output {
				fmt.Fprintf(&b, "%d %s %x\n", c, p.Name, x.S[step50Index[p.Name]])
			}
		}
		x.Step()
	}
	if got, want := b.String(), interpret(t, m, in); got != want {
		t.Fatalf("generated code and interpreter differ:\n%s", golden.Diff(want, got))
	}
}

// BenchmarkStep50Compiled is BenchmarkStep50's module run by the code
// GoSource generated for it.
func BenchmarkStep50Compiled(b *testing.B) {
	x := Newstep50()
	b.ReportAllocs()
	for b.Loop() {
		x.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mcycles/s")
}

// TestStep50CompiledAllocs: a generated Step allocates nothing.
func TestStep50CompiledAllocs(t *testing.T) {
	x := Newstep50()
	if n := testing.AllocsPerRun(1000, x.Step); n != 0 {
		t.Fatalf("%v allocations per cycle", n)
	}
}

// TestCompiledValues: a Sim running on generated code (a Model registered
// for its program) reads every node's value as the interpreter does,
// including those the generated code keeps in Go variables only, and runs
// on the model (Compiled).
func TestCompiledValues(t *testing.T) {
	m := random(7, 50)
	fast, ref := compiledPair(t, m, func() Model { return Newstep50() })
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

// TestCompiledActivity: a Sim on generated code for regLoops (registers
// committed in place and in loops, logic sunk into the edge, EvalState's
// parts skipped while what they read holds) gives every output of every
// cycle the interpreter gives, under random inputs, synchronous resets and
// asynchronous resets driven between edges. Only outputs are read: reading
// every node's value would have the interpreter refill them.
func TestCompiledActivity(t *testing.T) {
	m := regLoops()
	fast, ref := compiledPair(t, m, func() Model { return Newregloops() })
	rng := rand.New(rand.NewPCG(5, 5))
	in := inputsForWide(m, 11, 2000)
	for c, vals := range in {
		for _, s := range []*Sim{fast, ref} {
			k := 0
			for _, p := range m.Ports() {
				if !p.Output {
					s.Drive(p.Name, vals[k])
					k++
				}
			}
		}
		rst, arst := rng.IntN(50) == 0, rng.IntN(60) == 0
		for _, s := range []*Sim{fast, ref} {
			s.SetReset(rst)
			s.SetAsyncReset(arst)
		}
		for _, p := range m.Ports() {
			if p.Output {
				a, _ := fast.GetWords(p.Name)
				b, _ := ref.GetWords(p.Name)
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("cycle %d: %s is %x compiled, %x interpreted", c, p.Name, a, b)
				}
			}
		}
		fast.Step()
		ref.Step()
	}
}

// compiledPair returns m on the generated model newModel makes (registered
// for the test alone) and on the interpreter; it fails the test if the
// model's program is not m's (go generate ./hdlgen/sim rewrites it).
func compiledPair(t *testing.T, m *ir.Module, newModel func() Model) (fast, ref *Sim) {
	t.Helper()
	models = map[string]func() Model{}
	t.Cleanup(func() { models = map[string]func() Model{} })
	Register(newModel)
	fast, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	ref, err = NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	if !fast.Compiled() || ref.Compiled() {
		t.Fatalf("compiled: %v and %v (a generated file out of date: go generate ./hdlgen/sim)", fast.Compiled(), ref.Compiled())
	}
	return fast, ref
}
