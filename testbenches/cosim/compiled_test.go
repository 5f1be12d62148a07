package cosim

import (
	"testing"

	"onic/designs/manager"
	"onic/hdlgen/sim"
	"onic/internal/vbench"
	"onic/testbenches/golden"
)

//go:generate go test -tags onic_regen -run TestManagerSource -update .

// regenManagers is the command that regenerates the managers'
// simulators, named in their headers.
const regenManagers = "go test -tags onic_regen -run TestManagerSource -update ./testbenches/cosim"

// TestManagerSource: manager_gen_test.go and large_gen_test.go are
// GoSource's output for the default O-NIC's manager and the large preset
// at 512 bits (go generate rewrites them). Linked into this package's
// tests, they make sim.New run those designs compiled; this test fails
// when the manager's RTL changes until they are regenerated.
func TestManagerSource(t *testing.T) {
	for _, c := range []struct {
		file, typ string
		bn        *Bench
	}{
		{"manager_gen_test.go", "managerSim", defaultBench(t, 512)},
		{"large_gen_test.go", "largeSim", bench(t, manager.Large(), 512)},
	} {
		src, err := sim.GoSource(c.bn.Design.Module, "cosim", c.typ, regenManagers)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, c.file, string(src))
		s, err := sim.New(c.bn.Design.Module)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Compiled() && !golden.Updating() {
			t.Errorf("%s: sim.New does not run it on its generated code", c.file)
		}
	}
}

// TestManagerCompiled: each generated manager (default and large preset)
// and the interpreter give the same outputs on a recorded co-simulation
// run, cycle for cycle.
func TestManagerCompiled(t *testing.T) {
	for name, bn := range map[string]*Bench{"default": defaultBench(t, 512), "large": bench(t, manager.Large(), 512)} {
		st := recordStream(t, bn)
		ref, err := sim.NewInterpreter(bn.Design.Module)
		if err != nil {
			t.Fatal(err)
		}
		fast, err := sim.New(bn.Design.Module)
		if err != nil {
			t.Fatal(err)
		}
		if !fast.Compiled() {
			t.Fatalf("%s: not compiled", name)
		}
		m := bn.Design.Module
		for c, vec := range st.Cycles {
			for _, s := range []*sim.Sim{ref, fast} {
				for k, p := range st.Inputs[1:] {
					s.Drive(p.Name, vec[k+1])
				}
				s.SetReset(vec[0][0] != 0)
			}
			for _, p := range m.Ports() {
				if !p.Output {
					continue
				}
				a, _ := ref.GetWords(p.Name)
				b, _ := fast.GetWords(p.Name)
				if !equalWords(a, b) {
					t.Fatalf("%s cycle %d: %s is %x compiled, %x interpreted", name, c, p.Name, b, a)
				}
			}
			ref.Step()
			fast.Step()
		}
	}
}

func equalWords(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReplayAllocs: replaying a recorded run into the compiled manager
// (a Frame driving the inputs, reads, edges) allocates nothing per cycle
// once the replay is set up.
func TestReplayAllocs(t *testing.T) {
	bn, st := managerStream(t)
	s, err := sim.New(bn.Design.Module)
	if err != nil {
		t.Fatal(err)
	}
	vbench.Replay(s, st)
	if n := testing.AllocsPerRun(3, func() { vbench.Replay(s, st) }); n != 0 {
		t.Fatalf("%v allocations per replay of %d cycles", n, len(st.Cycles))
	}
}
