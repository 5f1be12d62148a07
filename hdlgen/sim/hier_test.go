package sim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
)

// randomHier builds a random two-level hierarchy: a top module with a
// register, two instances of a middle module (itself two instances of a
// random leaf, the second fed by the first) and one of another leaf, fed
// by each other and by top's inputs and register. With hier false the same
// modules are used through Inline instead of Instance, so the two builds
// must behave the same cycle by cycle.
func randomHier(seed uint64, hier bool, mems bool) *ir.Module {
	rng := rand.New(rand.NewPCG(seed, 3))
	leafA := randomModule(seed*3+1, 20, mems, 64)
	leafB := randomModule(seed*3+2, 20, mems, 64)
	use := func(m *ir.Module, name string, sub *ir.Module, in map[string]ir.Value) ir.Value {
		if hier {
			return m.Instance(name, sub, in)["out"]
		}
		return m.Inline(name, sub, in)["out"]
	}
	fit := func(m *ir.Module, v ir.Value, w int) ir.Value {
		switch {
		case v.Width() > w:
			return m.Slice(v, rng.IntN(v.Width()-w+1), w)
		case v.Width() < w:
			return m.Zext(v, w)
		}
		return v
	}
	connect := func(m *ir.Module, sub *ir.Module, vals []ir.Value) map[string]ir.Value {
		in := map[string]ir.Value{}
		for _, p := range sub.Ports() {
			if !p.Output {
				in[p.Name] = fit(m, vals[rng.IntN(len(vals))], sub.Node(p.Node).W)
			}
		}
		return in
	}
	mid := ir.NewModule(fmt.Sprintf("mid%d", seed))
	mv := []ir.Value{mid.Input("x", 1+rng.IntN(64)), mid.Input("y", 1+rng.IntN(64))}
	a1 := use(mid, "a1", leafA, connect(mid, leafA, mv))
	a2 := use(mid, "a2", leafA, connect(mid, leafA, append(mv, a1)))
	mid.Output("out", mid.Xor(a2, fit(mid, a1, a2.Width())))

	top := ir.NewModule(fmt.Sprintf("top%d", seed))
	tv := []ir.Value{top.Input("i0", 1+rng.IntN(64)), top.Input("i1", 1+rng.IntN(64))}
	rw := 1 + rng.IntN(64)
	r := top.Reg("acc", rw, rng.Uint64()>>(64-rw))
	m1 := use(top, "m1", mid, connect(top, mid, tv))
	b := use(top, "b", leafB, connect(top, leafB, append(tv, m1, r)))
	m2 := use(top, "m2", mid, connect(top, mid, append(tv, r, b)))
	top.SetNext(r, fit(top, top.Xor(fit(top, m2, b.Width()), b), r.Width()))
	top.Output("out", top.Concat(fit(top, m1, 8), fit(top, m2, 8), fit(top, b, 8)))
	top.Output("acc_q", r)
	return top
}

// TestHierarchyAgainstInline: a hierarchy of instances simulates exactly
// like the same modules inlined (two independent ways of building one
// design), and the compiled simulator equals the reference evaluator on it.
func TestHierarchyAgainstInline(t *testing.T) {
	for seed := range uint64(40) {
		h, flat := randomHier(seed, true, true), randomHier(seed, false, true)
		for _, m := range []*ir.Module{h, flat} {
			if err := m.Check(); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		sh, err := New(h)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := New(flat)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 4))
		for c := range 40 {
			for _, p := range h.Ports() {
				if !p.Output {
					v := rng.Uint64()
					sh.Set(p.Name, v)
					sf.Set(p.Name, v)
				}
			}
			sh.SetReset(c == 0)
			sf.SetReset(c == 0)
			for _, p := range outputs(h) {
				a, _ := sh.Get(p.Name)
				b, _ := sf.Get(p.Name)
				if a != b {
					t.Fatalf("seed %d cycle %d: %s is %#x with instances, %#x inlined", seed, c, p.Name, a, b)
				}
			}
			sh.Step()
			sf.Step()
		}
		for i := 0; i < h.Len(); i++ { // every node reads, an instance as zero
			if v := sh.ValueWords(i); h.Node(i).Op == ir.OpInstance && (len(v) != 1 || v[0] != 0) {
				t.Fatalf("seed %d: instance node %d reads %x", seed, i, v)
			}
		}
		if err := differ(h, seed, 30); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestHierarchyIcarus: the hierarchy printed by EmitDesign (one file per
// module, instances by name), run in Icarus, gives the simulator's outputs
// cycle by cycle, and Verilator's lint has nothing to say about it.
func TestHierarchyIcarus(t *testing.T) {
	iverilog := tools.Require(t, "iverilog")
	vvp := tools.Require(t, "vvp")
	verilator := tools.Require(t, "verilator")
	for seed := range uint64(12) {
		m := randomHier(seed, true, false)
		files, err := verilog.EmitDesign(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 4 || files[0].Module != m.Name() {
			t.Fatalf("seed %d: %d files, first %s (want 4: top, mid, two leaves)", seed, len(files), files[0].Module)
		}
		dir := t.TempDir()
		var paths []string
		for _, f := range files {
			p := filepath.Join(dir, f.Name)
			os.WriteFile(p, f.Source, 0o644)
			paths = append(paths, p)
		}
		tb, want, err := stimulus(m, string(files[0].Source), seed, 25)
		if err != nil {
			t.Fatal(err)
		}
		lintOnly := append([]string{"-g2005", "-Wall", "-o", os.DevNull}, paths...)
		if out, err := exec.Command(iverilog, lintOnly...).CombinedOutput(); err != nil || len(out) != 0 {
			t.Fatalf("seed %d: iverilog -Wall: %v\n%s", seed, err, out)
		}
		if err := runIcarus(iverilog, vvp, dir, tb, m, want, paths...); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		lint := append([]string{"--lint-only", "-Wall", "--top-module", m.Name()}, paths...)
		if out, err := exec.Command(verilator, lint...).CombinedOutput(); err != nil || len(out) != 0 {
			t.Fatalf("seed %d: verilator: %v\n%s", seed, err, out)
		}
	}
}
