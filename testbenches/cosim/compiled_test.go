package cosim

import (
	"testing"

	"onic/hdlgen/sim"
	"onic/testbenches/golden"
)

//go:generate go test -tags onic_regen -run TestManagerSource -update .

// TestManagerSource: manager_gen_test.go is GoSource's output for the
// default O-NIC's manager at 512 bits (go generate rewrites it). Linked
// into this package's tests, it makes sim.New run that design compiled;
// this test fails when the manager's RTL changes until it is regenerated.
func TestManagerSource(t *testing.T) {
	bn := defaultBench(t, 512)
	src, err := sim.GoSource(bn.Design.Module, "cosim", "managerSim")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "manager_gen_test.go", string(src))
	s, err := sim.New(bn.Design.Module)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Compiled() && !golden.Updating() {
		t.Error("sim.New does not run the default manager on its generated code")
	}
}

// TestManagerCompiled: the generated manager and the interpreter give the
// same trace of a co-simulation run, cycle for cycle.
func TestManagerCompiled(t *testing.T) {
	bn, st := managerStream(t)
	ref, err := sim.NewInterpreter(bn.Design.Module)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := sim.New(bn.Design.Module)
	if err != nil {
		t.Fatal(err)
	}
	if !fast.Compiled() {
		t.Fatal("not compiled")
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
				t.Fatalf("cycle %d: %s is %x compiled, %x interpreted", c, p.Name, b, a)
			}
		}
		ref.Step()
		fast.Step()
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
