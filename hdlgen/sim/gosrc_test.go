package sim

import (
	"bytes"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/golden"
	"onic/testbenches/tools"
)

//go:generate go test -tags onic_regen -run TestStep50Source|TestRegLoopsSource -update .

// regenSim is the command that regenerates this package's generated
// simulators, named in their headers.
const regenSim = "go test -tags onic_regen -run 'TestStep50Source|TestRegLoopsSource' -update ./hdlgen/sim"

// TestStep50Source: step50_gen_test.go is GoSource's output for the
// benchmark module (go test -run TestStep50Source -update rewrites it).
func TestStep50Source(t *testing.T) {
	src, err := GoSource(random(7, 50), "sim", "step50", regenSim)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "step50_gen_test.go", string(src))
}

// TestRegLoopsSource: regloops_gen_test.go is GoSource's output for
// regLoops (go generate rewrites it; TestCompiledActivity runs it).
func TestRegLoopsSource(t *testing.T) {
	src, err := GoSource(regLoops(), "sim", "regloops", regenSim)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "regloops_gen_test.go", string(src))
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

// gosrcModules is how many random modules TestGoSourceRandom builds
// (make soak asks for more).
var gosrcModules = flag.Int("gosrc-modules", 30, "random modules TestGoSourceRandom generates code for")

// TestGoSourceRandom generates code for random modules (with memories,
// both resets' registers, and in half of them signals up to 200 bits),
// builds it with the go command and requires every output of every cycle
// to equal the interpreter's.
func TestGoSourceRandom(t *testing.T) { goSourceRandom(t, 1) }

// TestGoSourceSignals is TestGoSourceRandom with every module's EvalState
// in the parts of a design too big for the activity mask (signalGroups
// 0: partitionSignals, triggers), and inputs that hold for three cycles
// in four, so that parts whose words did not change are skipped as well
// as run. Raising no flag for a register's change, or for a part's
// word, fails it.
func TestGoSourceSignals(t *testing.T) {
	defer func(n, w int) { signalGroups, hotLayoutWords = n, w }(signalGroups, hotLayoutWords)
	signalGroups, hotLayoutWords = 0, 0
	goSourceRandom(t, 4)
}

// TestHotLayout: laid out for generated code (hotLayoutWords 0), the
// words the generated code of TestGoSourceRandom's random modules names
// are the first ones, after the inputs (which come first whatever is
// read: Frame), and at least one module has words it leaves out (dead
// logic, values in Go variables). (TestGoSourceSignals runs that code
// against the interpreter.)
func TestHotLayout(t *testing.T) {
	defer func(w int) { hotLayoutWords = w }(hotLayoutWords)
	hotLayoutWords = 0
	word := regexp.MustCompile(`v\[(\d+)(?::(\d+))?\]`)
	cold := 0
	for k := range 30 {
		m := randomModule(uint64(100+k), 40, true, 64+136*(k%2))
		src, err := GoSource(m, "main", "mod", "")
		if err != nil {
			t.Fatal(err)
		}
		named := map[int]bool{}
		for _, sm := range word.FindAllStringSubmatch(string(src), -1) {
			from, _ := strconv.Atoi(sm[1])
			to := from + 1
			if sm[2] != "" {
				to, _ = strconv.Atoi(sm[2])
			}
			for i := from; i < to; i++ {
				named[i] = true
			}
		}
		s, err := compile(m, true)
		if err != nil {
			t.Fatal(err)
		}
		hot, inputs := 0, 0
		for i, h := range s.hot() {
			if h {
				hot += int(s.nw[i])
			}
			if s.m.Node(i).Op == ir.OpInput {
				inputs += int(s.nw[i])
			}
		}
		unnamed := 0
		for i := range s.v {
			switch {
			case named[i] && i >= hot:
				t.Errorf("module %d: word %d is named by the generated code, after the %d hot words", k, i, hot)
			case !named[i] && i < hot && i >= inputs:
				unnamed++
			}
		}
		if unnamed > 0 {
			t.Errorf("module %d: %d of the %d hot words are not named by the generated code", k, unnamed, hot)
		}
		cold += len(s.v) - hot
		plain, err := NewInterpreter(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(plain.v) != len(s.v) {
			t.Fatalf("module %d: %d words laid out for generated code, %d for the interpreter", k, len(s.v), len(plain.v))
		}
	}
	if cold == 0 {
		t.Errorf("no module has a word its generated code leaves out")
	}
}

// goSourceRandom runs TestGoSourceRandom's modules, with inputs that
// change every hold cycles.
func goSourceRandom(t *testing.T, hold int) {
	tools.Long(t)
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
	n, cycles := *gosrcModules, 300
	blockCopies := 0 // (mergeCopies' array copies: the wide random modules have some)
	for k := range n + 12 {
		maxW := 64
		if k%2 == 1 {
			maxW = 200
		}
		var m *ir.Module
		switch {
		case k < n:
			m = randomModule(uint64(100+k), 40, true, maxW)
		case k == n:
			m = regLoops()
		case k == n+1:
			m = parityMaps()
		case k == n+2:
			m, _, _ = packedStages()
		case k == n+3:
			m, _ = wordSlices()
		case k == n+4:
			m, _ = skidStages()
		case k == n+5:
			m = replicas()
		case k == n+6:
			m = picks()
		case k == n+7:
			m = delayLines()
		case k == n+8:
			m, _ = roms()
		case k == n+9:
			m, _ = slicedConcats()
		default:
			// Hierarchies: the generated Index must name the flattened
			// copy's words, not the top module's node numbers.
			m = randomHier(uint64(k), true, true)
		}
		src, err := GoSource(m, "main", fmt.Sprintf("mod%d", k), "")
		if err != nil {
			t.Fatal(err)
		}
		blockCopies += bytes.Count(src, []byte("*(*["))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("mod%d.go", k)), src, 0o644)
		in := inputsForWide(m, uint64(k), cycles)
		for c := range in {
			in[c] = in[c-c%hold]
		}
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
	if blockCopies == 0 {
		t.Errorf("no generated module copies words as an array: mergeCopies is not exercised")
	}
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

// regLoops is a module of registers that read each other: pipelines
// sharing an enable (narrow and 130 bits wide), a swap, a wide swap with
// asynchronous reset, a ring of three enabled by another register, and
// a register whose enable reads the register it enables. Its outputs are
// every register. Committing registers in place is right for the
// pipelines only in reverse order, and for the loops not at all.
// parityMaps is a module of linear maps over GF(2), the shape of a CRC's
// next value, that GoSource prints through byte tables (linearMaps): 28
// parities of a registered 200-bit value under random masks, concatenated
// with a constant and another bit (32 bits); 40 parities of the inputs' 100 bits
// (a 64-bit table); and 16 parities of a 50-bit value, one of which a
// port reads too, so its table leaves it out. Every mask is drawn with
// seed 9; the last word of a mask has no bits above the value's width.
func parityMaps() *ir.Module {
	m := ir.NewModule("paritymaps")
	d := m.Input("d", 200)
	e := m.Input("e", 100)
	s := m.Input("s", 50)
	r := m.Reg("r", 200, 0)
	m.SetNext(r, m.Xor(r, d))
	rng := rand.New(rand.NewPCG(9, 9))
	mask := func(w int) ir.Value {
		ws := make([]uint64, (w+63)/64)
		for j := range ws {
			ws[j] = rng.Uint64()
		}
		if w%64 != 0 {
			ws[len(ws)-1] &= uint64(1)<<uint(w%64) - 1
		}
		return m.ConstWords(w, ws)
	}
	var masks []ir.Value // (the last call's)
	parities := func(x ir.Value, w, n int) []ir.Value {
		var out []ir.Value
		masks = nil
		for range n {
			masks = append(masks, mask(w))
			out = append(out, m.RedXor(m.And(x, masks[len(masks)-1])))
		}
		return out
	}
	a := append([]ir.Value{m.Const(3, 5)}, parities(r, 200, 28)...)
	m.Output("crc", m.Concat(append(a, m.Slice(r, 7, 1))...))
	// The same map of another register: it shares crc's tables.
	r2 := m.Reg("r2", 200, 0)
	m.SetNext(r2, m.Xor(r2, m.Not(d)))
	a2 := []ir.Value{m.Const(3, 5)}
	for _, mk := range masks {
		a2 = append(a2, m.RedXor(m.And(r2, mk)))
	}
	m.Output("crc2", m.Concat(append(a2, m.Slice(r2, 7, 1))...))
	m.Output("wide", m.Concat(parities(e, 100, 40)...))
	c := parities(m.Xor(s, m.Slice(e, 0, 50)), 50, 16)
	m.Output("narrow", m.Concat(c...))
	m.Output("bit", c[5])
	return m
}

// slicedConcats is a module of wide slices placed in concatenations and
// read by nothing else, which GoSource prints as the concatenations'
// words (fuse): a 300-bit register rotated by one bit and by 70, a
// slice of 130 bits placed at bit 5 of 200 (across words), one placed
// whole-word, and a slice a port reads too (so printed on its own). It
// returns the slices fused.
func slicedConcats() (*ir.Module, []ir.Value) {
	m := ir.NewModule("slicedconcats")
	d := m.Input("d", 300)
	r := m.Reg("r", 300, 0)
	m.SetNext(r, m.Xor(r, d))
	rot1 := m.Slice(r, 1, 299)
	rot70 := m.Slice(r, 70, 230)
	mid := m.Slice(d, 17, 130)
	whole := m.Slice(r, 64, 128)
	shared := m.Slice(d, 3, 100)
	m.Output("rot1", m.Concat(m.Slice(r, 0, 1), rot1))
	m.Output("rot70", m.Concat(m.Slice(r, 0, 70), rot70))
	m.Output("mid", m.Concat(m.Slice(r, 0, 65), mid, m.Slice(d, 0, 5)))
	m.Output("whole", m.Concat(m.Slice(d, 0, 3), whole))
	m.Output("shared", m.Concat(shared, m.Slice(r, 0, 9)))
	m.Output("sharedalone", shared)
	return m, []ir.Value{rot1, rot70, mid}
}

// TestFusedSlices: slicedConcats' slices read only by a concatenation
// are never written to words of their own (the generated code names none
// of their words); the one a port reads is. TestGoSourceRandom runs the
// module against the interpreter.
func TestFusedSlices(t *testing.T) {
	m, fused := slicedConcats()
	src, err := GoSource(m, "main", "sc", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := compile(m, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range fused {
		for j := range s.nw[v.ID()] {
			if w := fmt.Sprintf("v[%d]", s.off[v.ID()]+j); bytes.Contains(src, []byte(w+" ")) || bytes.Contains(src, []byte(w+")")) {
				t.Errorf("the slice of %d bits is written to its own words (%s)", v.Width(), w)
			}
		}
	}
	if p, _ := s.Port("sharedalone"); !bytes.Contains(src, []byte(fmt.Sprintf("v[%d] =", p.off))) {
		t.Errorf("the slice a port reads is not computed into its words")
	}
}

// TestLinearMaps: GoSource prints parityMaps' four concatenations of
// parities through tables, a 64-bit one for the 40 parities, the two
// alike through one table (sameTable), and still computes the parity a
// port reads; ParityTable's entries are the parities of each byte under
// the masks.
func TestLinearMaps(t *testing.T) {
	src, err := GoSource(parityMaps(), "main", "pm", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{" [25][256]uint32", " [13][256]uint64", " [7][256]uint32"} {
		if n := bytes.Count(src, []byte(want)); n != 1 {
			t.Errorf("GoSource printed %d %q, want 1", n, want)
		}
	}
	if n := bytes.Count(src, []byte("bits.OnesCount64")); n != 2 { // (the import's use, and the port's parity)
		t.Errorf("GoSource printed %d parities, want 1", n-1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	masks := [][]uint64{{rng.Uint64(), rng.Uint64()}, nil, {rng.Uint64(), 0}, {0, rng.Uint64()}}
	rows := []int{0, 3, 9, 15}
	tab := make([][256]uint32, len(rows))
	ParityTable(tab, rows, masks)
	for r, p := range rows {
		for b := range 256 {
			var want uint32
			for i, mk := range masks {
				if mk != nil && bits.OnesCount64(mk[p/8]>>(8*uint(p%8))&uint64(b))%2 == 1 {
					want |= 1 << uint(i)
				}
			}
			if tab[r][b] != want {
				t.Fatalf("row %d (byte %d), byte value %#x: %#x, want %#x", r, p, b, tab[r][b], want)
			}
		}
	}
}

func regLoops() *ir.Module {
	m := ir.NewModule("regloops")
	en, d, wd := m.Input("en", 1), m.Input("d", 8), m.Input("wd", 130)
	var p []ir.Value
	for k := range 4 {
		r := m.Reg(fmt.Sprintf("p%d", k), 8, uint64(k))
		m.SetEnable(r, en)
		p = append(p, r)
	}
	m.SetNext(p[0], d)
	for k := 1; k < 4; k++ {
		m.SetNext(p[k], p[k-1])
	}
	w0, w1 := m.RegNoReset("w0", 130), m.RegNoReset("w1", 130)
	m.SetNext(w0, wd)
	m.SetNext(w1, w0)
	m.SetEnable(w0, en)
	m.SetEnable(w1, en)
	a, b := m.Reg("a", 8, 1), m.Reg("b", 8, 2)
	m.SetNext(a, b)
	m.SetNext(b, m.Xor(a, d))
	ws0, ws1 := m.RegAsync("ws0", 130, 5), m.RegAsync("ws1", 130, 6)
	m.SetNext(ws0, ws1)
	m.SetNext(ws1, m.Xor(ws0, wd))
	g := m.Reg("g", 1, 0)
	m.SetNext(g, m.Slice(d, 0, 1))
	var c []ir.Value
	for k := range 3 {
		r := m.Reg(fmt.Sprintf("c%d", k), 8, uint64(10+k))
		m.SetEnable(r, g)
		c = append(c, r)
	}
	for k := range 3 {
		m.SetNext(c[k], c[(k+2)%3])
	}
	h, e := m.Reg("h", 8, 0), m.Reg("e", 1, 1)
	m.SetNext(h, m.Add(h, d))
	m.SetEnable(h, e)
	m.SetNext(e, m.Slice(h, 0, 1))
	// A mux whose select compares a register of its own group, the
	// register committing in the same block before the mux is printed
	// unless the comparison's reads count where the mux reads them.
	q0, q1 := m.Reg("q0", 8, 0), m.Reg("q1", 8, 0)
	m.SetNext(q0, d)
	m.SetNext(q1, m.Mux(m.LtU(q0, d), m.Add(q0, m.Const(8, 3)), m.Xor(d, m.Const(8, 0x5a))))
	m.SetEnable(q0, en)
	m.SetEnable(q1, en)
	for k, r := range append(append(append(p, w0, w1, a, b, ws0, ws1, g, q0, q1), c...), h, e) {
		m.Output(fmt.Sprintf("o%d", k), r)
	}
	// Logic of the state alone, evaluated only when what it reads changed
	// (one group, two groups, a group and the asynchronously reset one).
	m.Output("f0", m.Add(p[3], p[1]))
	m.Output("f1", m.Xor(m.Slice(w1, 0, 8), m.Add(c[2], a)))
	m.Output("f2", m.Xor(m.Slice(ws1, 60, 70), m.Zext(m.Concat(p[0], h), 70)))
	return m
}

// skidStages is a module of 256-bit stage registers loaded from
// multiplexers, the shapes directMuxes must tell apart: out, a skid
// buffer's output register, loaded from its skid register or the input
// (printed straight into out); a stage that a later stage of the same
// enable reads (straight in, after that stage has taken out2's old
// value); a register that holds itself through its multiplexer (its own
// words are an operand: not straight in); and a multiplexer two
// registers load (not straight in).
func skidStages() (m *ir.Module, direct []ir.Value) {
	m = ir.NewModule("skid")
	a, b := m.Input("a", 256), m.Input("b", 256)
	sel, en := m.Input("sel", 1), m.Input("en", 1)
	skid := m.Reg("skid", 256, 0)
	m.SetNext(skid, a)
	m.SetEnable(skid, m.Not(sel))
	out := m.Reg("out", 256, 0)
	m.SetNext(out, m.Mux(sel, skid, b))
	m.SetEnable(out, en)
	out2 := m.Reg("out2", 256, 0)
	m.SetNext(out2, m.Mux(sel, b, a))
	m.SetEnable(out2, en)
	later := m.Reg("later", 256, 0)
	m.SetNext(later, out2)
	m.SetEnable(later, en)
	z := m.Reg("z", 256, 0)
	m.SetNext(z, m.Xor(later, m.Concat(m.Slice(out2, 0, 128), m.Slice(a, 0, 128))))
	m.SetEnable(z, en)
	hold := m.Reg("hold", 256, 0)
	m.SetNext(hold, m.Mux(sel, a, hold))
	both := m.Mux(en, a, b)
	r1, r2 := m.Reg("r1", 256, 0), m.Reg("r2", 256, 1)
	m.SetNext(r1, both)
	m.SetNext(r2, both)
	m.Output("q", out)
	m.Output("q2", m.Xor(z, hold))
	m.Output("q3", m.Add(r1, r2))
	return m, []ir.Value{out, out2}
}

// TestDirectMuxes: the multiplexers skidStages' out and out2 load are
// printed straight into their words (an array copy from an operand to the
// register's words) and the others are not; TestGoSourceRandom runs the
// module against the interpreter.
func TestDirectMuxes(t *testing.T) {
	m, direct := skidStages()
	src, err := GoSource(m, "main", "skid", "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		if n.Op != ir.OpReg || n.W != 256 {
			continue
		}
		j := s.node(i)
		into := fmt.Sprintf("*(*[4]uint64)(v[%d:%d]) = *(*[4]uint64)(v[", s.off[j], s.off[j]+4)
		mux := s.m.Node(s.m.Node(j).Args[0])
		want := slices.ContainsFunc(direct, func(v ir.Value) bool { return v.ID() == i })
		got := mux.Op == ir.OpMux && bytes.Count(src, []byte(into)) == 2
		if got != want {
			t.Errorf("register %s: multiplexer printed straight into it %v, want %v", n.Name, got, want)
		}
	}
}

// replicas is a module of concatenations that repeat a part: a bit made a
// 16-bit mask, a 3-bit field thrice beside other parts and constants, a
// 5-bit field twelve times (60 bits), a part repeated but not in a row,
// a 143-bit concatenation (runs cut at word edges, a copy across two
// words), and a 64-bit concatenation whose operand is a register.
func replicas() *ir.Module {
	m := ir.NewModule("replicas")
	a, b, c := m.Input("a", 1), m.Input("b", 3), m.Input("c", 5)
	rep := func(v ir.Value, k int) []ir.Value {
		var out []ir.Value
		for range k {
			out = append(out, v)
		}
		return out
	}
	m.Output("mask", m.Concat(rep(a, 16)...))
	m.Output("mixed", m.Concat(append(append(rep(b, 3), c, a, a, m.Const(2, 1)), rep(a, 2)...)...))
	m.Output("wide", m.Concat(rep(c, 12)...))
	m.Output("apart", m.Concat(a, b, a, b))
	m.Output("across", m.Concat(append(append(rep(a, 40), b), rep(c, 20)...)...)) // (143 bits: parts across words)
	r := m.Reg("r", 4, 0)
	m.SetNext(r, m.Add(r, m.Concat(a, b)))
	m.Output("regs", m.Concat(rep(r, 16)...))
	return m
}

// TestReplicas: GoSource prints each run of a repeated part as one
// multiplication, in one-word and in wide concatenations (TestGoSourceRandom runs the module against the
// interpreter).
func TestReplicas(t *testing.T) {
	src, err := GoSource(replicas(), "main", "replicas", "")
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.ReplaceAll(src, []byte(" "), nil)
	for _, times := range []string{"v[0]*0xffff", "v[0]*0x3|v[0]*0x3<<4|", "v[1]*0x49<<11", "v[2]*0x84210842108421", "*0x1111111111111111", "=v[1]|v[0]<<3|v[1]<<4|v[0]<<7",
		"=v[0]*0x1ffffff<<39|v[1]<<36|v[2]*0x42108421<<1|v[2]>>4", "=v[0]*0x7fff"} {
		if !bytes.Contains(src, []byte(times)) {
			t.Errorf("no %q in the generated source", times)
		}
	}
}

// picks is a module of choices between a value and zero: a Pick of eight
// windows' constants (one above 32 bits) and values under one-hot
// selects, a zero on the chosen arm and on the other, and a register as
// the select.
func picks() *ir.Module {
	m := ir.NewModule("picks")
	idx, x, y, en := m.Input("idx", 3), m.Input("x", 40), m.Input("y", 40), m.Input("en", 1)
	var sels, vals []ir.Value
	for k := range 8 {
		sels = append(sels, m.And(en, m.Eq(idx, m.Const(3, uint64(k)))))
		if k%2 == 0 {
			vals = append(vals, m.Const(40, 0x80_0000_0000|uint64(0x1234567)<<k))
		} else {
			vals = append(vals, m.Xor(x, m.Const(40, uint64(k))))
		}
	}
	m.Output("pick", m.Pick(sels, vals))
	m.Output("yes0", m.Mux(m.Slice(y, 3, 1), m.Const(40, 0), x))
	m.Output("no0", m.Mux(m.Slice(y, 5, 1), y, m.Const(40, 0)))
	r := m.Reg("r", 1, 0)
	m.SetNext(r, m.Slice(x, 0, 1))
	m.Output("regsel", m.Mux(r, m.Add(x, y), m.Const(40, 0)))
	return m
}

// TestPicks: a choice between a value and zero is printed as the value
// masked with the select (negated, or less one when zero is the chosen
// arm); TestGoSourceRandom runs the module against the interpreter.
func TestPicks(t *testing.T) {
	src, err := GoSource(picks(), "main", "picks", "")
	if err != nil {
		t.Fatal(err)
	}
	src = bytes.ReplaceAll(src, []byte(" "), nil)
	if n := bytes.Count(src, []byte("&-")); n < 9 {
		t.Errorf("%d values masked with a negated select, want 9 (8 picked, 1 chosen over zero)", n)
	}
	if !bytes.Contains(src, []byte("-1)\n")) {
		t.Errorf("no value masked with its select less one (zero on the chosen arm)")
	}
}

// TestReadPortTests: with signal, a read port enabled on every cycle
// (a FIFO's head, read while the FIFO waits) raises its readers' flags
// only when the word it read differs from the one it holds, a wide
// value's change test ors its words' xors under one test, a flag
// word's parts sit inside one test of the word, and the edge tests rst
// once (edgeInReset, edgeRunning), not in each block. Raising on
// every read ran the card's parts behind its FIFOs on every cycle with
// no change (TestGoSourceSignals holds the code to the interpreter).
func TestReadPortTests(t *testing.T) {
	defer func(n int) { signalGroups = n }(signalGroups)
	signalGroups = 0
	m := ir.NewModule("fifo_head")
	addr, en := m.Input("addr", 4), m.Input("en", 1)
	data, we := m.Input("data", 130), m.Input("we", 1)
	mem := m.Memory("mem", 16, 130)
	m.WritePort(mem, addr, data, we, ir.Value{})
	head := m.ReadPort(mem, addr, m.Const(1, 1))
	r := m.Reg("r", 130, 0)
	m.SetNext(r, m.Xor(head, data))
	m.SetEnable(r, en)
	m.Output("out", m.Add(m.Slice(head, 0, 64), m.Slice(r, 64, 64)))
	m.Output("parity", m.RedXor(head))
	src, err := GoSource(m, "main", "fh", "")
	if err != nil {
		t.Fatal(err)
	}
	tested := regexp.MustCompile(`(?s)q0 = \*\(\*\[3\]uint64\)\(x\.M0\[a : a\+3\]\)\s*if \(q0\[0\]\^v\[\d+\]\)\|\(q0\[1\]\^v\[\d+\]\)\|\(q0\[2\]\^v\[\d+\]\) != 0 \{\s*f\[`)
	if !tested.Match(src) {
		t.Errorf("the read port raises its readers' flags without testing the word it read:\n%s", src)
	}
	if bytes.Contains(src, []byte(" || ")) {
		t.Errorf("a change test branches on each word (||)")
	}
	if !regexp.MustCompile(`(?s)func \(x \*fh\) EvalState\(\) \{.*?if f\[0\] != 0 \{\s*if f\[0\]&0x1 != 0 \{`).Match(src) {
		t.Errorf("EvalState's parts are not inside a test of their flag word")
	}
	running := regexp.MustCompile(`(?s)func \(x \*fh\) edgeRunning\(\) bool \{.*?\n\}\n`).Find(src)
	if !regexp.MustCompile(`func \(x \*fh\) Edge\(\) bool \{\s*if x\.Rst \{\s*return x\.edgeInReset\(\)`).Match(src) ||
		running == nil || bytes.Contains(running, []byte("x.Rst")) {
		t.Errorf("the edge tests rst in each block, not once")
	}
}
