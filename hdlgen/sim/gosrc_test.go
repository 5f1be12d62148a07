package sim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/golden"
)

//go:generate go test -tags onic_regen -run TestStep50Source -update .

// TestStep50Source: step50_gen_test.go is GoSource's output for the
// benchmark module (go test -run TestStep50Source -update rewrites it).
func TestStep50Source(t *testing.T) {
	src, err := GoSource(random(7, 50), "sim", "step50")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "step50_gen_test.go", string(src))
}

// inputsFor draws cycles cycles of random values for m's inputs.
func inputsFor(m *ir.Module, seed uint64, cycles int) [][]uint64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	var ins []ir.Port
	for _, p := range m.Ports() {
		if !p.Output {
			ins = append(ins, p)
		}
	}
	out := make([][]uint64, cycles)
	for c := range out {
		for _, p := range ins {
			out[c] = append(out[c], rng.Uint64()&mask(m.Node(p.Node).W))
		}
	}
	return out
}

// interpret runs m on in with the interpreter and prints its outputs.
func interpret(t *testing.T, m *ir.Module, in [][]uint64) string {
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for c, vals := range in {
		k := 0
		for _, p := range m.Ports() {
			if !p.Output {
				s.Drive(p.Name, []uint64{vals[k]})
				k++
			}
		}
		s.SetReset(c%37 == 0)
		s.Settle()
		for _, p := range m.Ports() {
			if p.Output {
				v, _ := s.Get(p.Name)
				fmt.Fprintf(&b, "%d %s %x\n", c, p.Name, v)
			}
		}
		s.Step()
	}
	return b.String()
}

// TestGoSourceRandom generates code for random modules (with memories,
// both resets' registers, and in half of them signals up to 200 bits),
// builds it with the go command and requires every output of every cycle
// to equal the interpreter's.
func TestGoSourceRandom(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build generated code: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var main strings.Builder
	main.WriteString("package main\n\nimport \"fmt\"\n\nfunc main() {\n")
	var want strings.Builder
	const n, cycles = 30, 300
	for k := range n {
		maxW := 64
		if k%2 == 1 {
			maxW = 200
		}
		m := randomModule(uint64(100+k), 40, true, maxW)
		src, err := GoSource(m, "main", fmt.Sprintf("mod%d", k))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("mod%d.go", k)), src, 0o644)
		in := inputsForWide(m, uint64(k), cycles)
		fmt.Fprintf(&main, "{\nx := Newmod%d()\nx.Eval()\nin := [][][]uint64{", k)
		for _, vals := range in {
			main.WriteString("{")
			for _, v := range vals {
				main.WriteString("{")
				for _, word := range v {
					fmt.Fprintf(&main, "%#x,", word)
				}
				main.WriteString("},")
			}
			main.WriteString("},")
		}
		main.WriteString("}\nfor c, vals := range in {\n_ = vals\n")
		j := 0
		for _, p := range m.Ports() {
			if !p.Output {
				fmt.Fprintf(&main, "copy(x.S[mod%dIndex[%q]:], vals[%d])\n", k, p.Name, j)
				j++
			}
		}
		main.WriteString("x.Rst = c%37 == 0\nx.Eval()\n")
		for _, p := range m.Ports() {
			if p.Output {
				nw := (m.Node(p.Node).W + 63) / 64
				fmt.Fprintf(&main, "fmt.Printf(\"%%d %s %%x\\n\", c, x.S[mod%dIndex[%q]:mod%dIndex[%q]+%d])\n", p.Name, k, p.Name, k, p.Name, nw)
			}
		}
		main.WriteString("x.Step()\n}\n}\n")
		want.WriteString(interpretWide(t, m, in))
	}
	main.WriteString("}\n")
	os.WriteFile(filepath.Join(dir, "main.go"), []byte(main.String()), 0o644)
	gomod := "module gen\n\ngo 1.26\n\nrequire onic v0.0.0\n\nreplace onic => " + root + "\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644)
	if sum, err := os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
		os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
	}
	cmd := exec.Command(goBin, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got := string(out); got != want.String() {
		t.Fatalf("generated code and interpreter differ:\n%s", golden.Diff(want.String(), got))
	}
}

// inputsForWide draws cycles cycles of random values for m's inputs, as
// words.
func inputsForWide(m *ir.Module, seed uint64, cycles int) [][][]uint64 {
	rng := rand.New(rand.NewPCG(seed, 9))
	out := make([][][]uint64, cycles)
	for c := range out {
		for _, p := range m.Ports() {
			if !p.Output {
				w := m.Node(p.Node).W
				v := make([]uint64, (w+63)/64)
				for k := range v {
					v[k] = rng.Uint64()
				}
				topMask(v, w)
				out[c] = append(out[c], v)
			}
		}
	}
	return out
}

// interpretWide runs m on in with the interpreter and prints its outputs
// as the generated main does (%x of the words).
func interpretWide(t *testing.T, m *ir.Module, in [][][]uint64) string {
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for c, vals := range in {
		k := 0
		for _, p := range m.Ports() {
			if !p.Output {
				s.Drive(p.Name, vals[k])
				k++
			}
		}
		s.SetReset(c%37 == 0)
		for _, p := range m.Ports() {
			if p.Output {
				v, _ := s.GetWords(p.Name)
				fmt.Fprintf(&b, "%d %s %x\n", c, p.Name, v)
			}
		}
		s.Step()
	}
	return b.String()
}
