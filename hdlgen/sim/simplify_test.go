package sim

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
)

// rewiring is a module of the bit-level rewiring simplify takes out,
// wide and narrow, across word boundaries, with the cases it must leave
// alone (a slice across two parts, past a zero-extension's operand).
func rewiring() (m *ir.Module, repack, regRepack, a, r0 ir.Value) {
	m = ir.NewModule("rewiring")
	a = m.Input("a", 130)
	b := m.Input("b", 40)
	m.Output("s1", m.Slice(m.Slice(a, 10, 100), 20, 30))
	c := m.Concat(b, a)
	m.Output("s2", m.Slice(c, 5, 50))
	m.Output("s3", m.Slice(c, 130, 40))
	m.Output("s4", m.Slice(c, 120, 20))
	z := m.Zext(b, 100)
	m.Output("s5", m.Slice(z, 3, 30))
	m.Output("s6", m.Slice(z, 30, 20))
	repack = m.Concat(m.Slice(a, 64, 66), m.Slice(a, 0, 64))
	m.Output("repack", repack)
	m.Output("partial", m.Concat(m.Slice(a, 100, 30), b, m.Slice(a, 50, 10), m.Slice(a, 40, 10), m.Slice(a, 7, 3)))
	m.Output("and1", m.And(m.Slice(b, 3, 1), m.Const(1, 1)))
	m.Output("andw", m.And(a, m.Not(m.Const(130, 0))))
	m.Output("orz", m.Or(m.Const(40, 0), b))
	m.Output("xorz", m.Xor(b, m.Const(40, 0)))
	m.Output("andk", m.And(b, m.Const(40, 0xff00ff)))
	r0 = m.Reg("r0", 18, 0)
	m.SetNext(r0, m.Slice(a, 3, 18))
	r1 := m.Reg("r1", 18, 0)
	regRepack = m.Concat(m.Slice(r0, 17, 1), m.Slice(r0, 16, 1), m.Slice(r0, 8, 8), m.Slice(r0, 0, 8))
	m.SetNext(r1, regRepack)
	m.Output("out_r1", r1)
	return
}

// TestSimplify: the rewired module simulates as the reference (which
// runs it as built) says, every output every cycle, and the rules fired:
// a concatenation of adjacent slices making up a whole value shares that
// value's words (no operation at all), also between pipeline registers.
func TestSimplify(t *testing.T) {
	m, repack, regRepack, a, r0 := rewiring()
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	if s.off[repack.ID()] != s.off[a.ID()] || s.off[regRepack.ID()] != s.off[r0.ID()] {
		t.Errorf("a whole value put back together from its slices is computed, not shared")
	}
	matchesReference(t, m, s, 200, rand.New(rand.NewPCG(1, 2)))
}

// matchesReference drives m's inputs at random for cycles cycles, in s
// and in the big-integer reference, and fails on the first output they
// disagree on.
func matchesReference(t *testing.T, m *ir.Module, s *Sim, cycles int, rng *rand.Rand) {
	t.Helper()
	r, err := NewReference(m)
	if err != nil {
		t.Fatal(err)
	}
	for c := range cycles {
		for _, p := range m.Ports() {
			if !p.Output {
				w := make([]uint64, (m.Node(p.Node).W+63)/64)
				for k := range w {
					w[k] = rng.Uint64()
				}
				topMask(w, m.Node(p.Node).W)
				s.Drive(p.Name, w)
				r.SetInputWords(p.Node, w)
			}
		}
		for _, p := range m.Ports() {
			if p.Output {
				got, _ := s.GetWords(p.Name)
				if want := r.Value(p.Node); words(got).Cmp(want) != 0 {
					t.Fatalf("cycle %d: %s is %x, the reference says %x", c, p.Name, words(got), want)
				}
			}
		}
		s.Step()
		r.Step()
	}
}

// TestFrame: driving several inputs from one vector of words gives each
// the value DrivePort would (masked to its width, wide values word by
// word), skips an output's words, and stops at a vector too short; a
// frame of inputs lying in order in S (a, b, c) drives them as one copy
// (Frame.run), with the same results.
func TestFrame(t *testing.T) {
	m := ir.NewModule("drive")
	a, b, c := m.Input("a", 5), m.Input("b", 130), m.Input("c", 64)
	m.Output("oa", a)
	m.Output("ob", b)
	m.Output("oc", c)
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	frame := func(names ...string) *Frame {
		var ps []Port
		for _, name := range names {
			p, err := s.Port(name)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		return s.Frame(ps)
	}
	all := ^uint64(0)
	for _, fr := range []struct {
		name string
		f    *Frame
		out  bool // the vector has oa's word after a's
	}{{"with an output", frame("a", "oa", "b", "c"), true}, {"one run", frame("a", "b", "c"), false}} {
		if got := fr.f.run != nil; got == fr.out {
			t.Errorf("%s: driven as one run %v", fr.name, got)
		}
		for _, tc := range []struct {
			name    string
			v       []uint64
			a, c    uint64
			b       []uint64
			partial bool
		}{
			{"whole", []uint64{0x3f, 7, all, all, all, 0x1234}, 0x1f, 0x1234, []uint64{all, all, 3}, false},
			{"zero", []uint64{0, 0, 0, 0, 0, 0}, 0, 0, []uint64{0, 0, 0}, false},
			{"short", []uint64{2, 0, 5, 6}, 2, 0, []uint64{0, 0, 0}, true},
		} {
			t.Run(fr.name+"/"+tc.name, func(t *testing.T) {
				v := tc.v
				if !fr.out { // (no word for oa)
					v = append(v[:1:1], v[2:]...)
				}
				s.Drive("c", []uint64{0})
				fr.f.Drive(v)
				got := map[string][]uint64{}
				for _, n := range []string{"a", "b", "c"} {
					got[n], _ = s.GetWords("o" + n)
				}
				if got["a"][0] != tc.a || got["c"][0] != tc.c || (!tc.partial && fmt.Sprint(got["b"]) != fmt.Sprint(tc.b)) {
					t.Errorf("a %x b %x c %x, want a %x b %x c %x", got["a"], got["b"], got["c"], tc.a, tc.b, tc.c)
				}
			})
		}
	}
}

// TestShareRepeats: an operation repeated with the same operands (in
// either order for an add, the field sliced out of the same header twice,
// and what reads the repeats) shares the first's words, and one whose
// operands differ only in order where order matters (a subtraction), or
// whose widths differ, does not; the module still simulates as the
// reference says.
func TestShareRepeats(t *testing.T) {
	m := ir.NewModule("repeats")
	a, b := m.Input("a", 40), m.Input("b", 40)
	x := m.Slice(a, 2, 10)
	sum1, sum2 := m.Add(b, a), m.Add(a, b)
	eq1, eq2 := m.Eq(x, m.Const(10, 4)), m.Eq(m.Slice(a, 2, 10), m.Const(10, 4))
	and1, and2 := m.And(eq1, m.Slice(b, 0, 1)), m.And(eq2, m.Slice(b, 0, 1)) // equal once eq1 and eq2 are
	d1, d2 := m.Sub(a, b), m.Sub(b, a)
	s1, s2 := m.Slice(a, 2, 10), m.Slice(a, 2, 11)
	for i, v := range []ir.Value{sum1, sum2, eq1, eq2, and1, and2, d1, d2, s1, s2} {
		m.Output(fmt.Sprintf("o%d", i), v)
	}
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	same := func(p, q ir.Value) bool { return s.off[p.ID()] == s.off[q.ID()] }
	if !same(sum1, sum2) || !same(eq1, eq2) || !same(and1, and2) {
		t.Errorf("repeats computed again: add %v, eq %v, and %v", same(sum1, sum2), same(eq1, eq2), same(and1, and2))
	}
	if same(d1, d2) || same(s1, s2) {
		t.Errorf("different operations merged: sub %v, slices of two widths %v", same(d1, d2), same(s1, s2))
	}
	matchesReference(t, m, s, 100, rand.New(rand.NewPCG(3, 4)))
}

// packedStages is a pipeline of the kind splitRegisters takes apart: a
// lane's fields packed into a stage register (reset values split across
// the parts, an enable), copied whole into a later stage (asynchronously
// reset) and into a third with no reset, read through slices inside one
// field and across two (present and sign together), and a swap of two
// fields within one register (reading itself). The ones it must leave
// alone: a register an output port reads, and one read whole by logic.
func packedStages() (m *ir.Module, split, kept []ir.Value) {
	m = ir.NewModule("packed")
	a, en := m.Input("a", 40), m.Input("en", 1)
	s1 := m.Reg("s1", 20, 0xabcde)
	m.SetNext(s1, m.Concat(m.Slice(a, 39, 1), m.Add(m.Slice(a, 1, 8), m.Const(8, 3)), m.Slice(a, 9, 11)))
	m.SetEnable(s1, en)
	s2 := m.RegAsync("s2", 20, 0x12345)
	m.SetNext(s2, s1)
	s3 := m.RegNoReset("s3", 20)
	m.SetNext(s3, s2)
	m.SetEnable(s3, en)
	m.Output("top2", m.Slice(s3, 18, 2))  // across the first two fields
	m.Output("mid", m.Slice(s3, 12, 4))   // inside the second
	m.Output("low", m.Slice(s2, 0, 11))   // the third, whole
	m.Output("s1bit", m.Slice(s1, 19, 1)) // the first
	m.Output("span", m.Slice(s1, 5, 10))  // across the second and third
	sw := m.Reg("sw", 16, 0x1234)
	m.SetNext(sw, m.Concat(m.Slice(sw, 0, 8), m.Xor(m.Slice(sw, 8, 8), m.Slice(a, 0, 8))))
	m.Output("swl", m.Slice(sw, 0, 8))
	m.Output("swh", m.Slice(sw, 8, 8))
	p := m.Reg("p", 16, 7)
	m.SetNext(p, m.Concat(m.Slice(a, 0, 8), m.Slice(a, 20, 8)))
	m.Output("pout", p)
	w := m.Reg("w", 16, 9)
	m.SetNext(w, m.Concat(m.Slice(a, 8, 8), m.Slice(a, 30, 8)))
	m.Output("wsum", m.Add(w, m.Slice(a, 0, 16)))
	return m, []ir.Value{s1, s2, s3, sw}, []ir.Value{p, w}
}

// TestSplitRegisters: packedStages' stage registers and swap are split
// (their nodes are no longer registers in the simulated module), the
// register a port reads and the one read whole are not, and the module
// simulates as the reference says under random inputs and both resets,
// every output every cycle (TestGoSourceRandom runs it compiled).
func TestSplitRegisters(t *testing.T) {
	m, split, kept := packedStages()
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range split {
		if op := s.m.Node(s.node(v.ID())).Op; op == ir.OpReg {
			t.Errorf("register %s was not split", m.Node(v.ID()).Name)
		}
	}
	for _, v := range kept {
		if op := s.m.Node(s.node(v.ID())).Op; op != ir.OpReg {
			t.Errorf("register %s was split (now %v)", m.Node(v.ID()).Name, op)
		}
	}
	r, err := NewReference(m)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for c := range 400 {
		for _, p := range m.Ports() {
			if !p.Output {
				w := []uint64{rng.Uint64()}
				topMask(w, m.Node(p.Node).W)
				s.Drive(p.Name, w)
				r.SetInputWords(p.Node, w)
			}
		}
		rst, arst := rng.IntN(13) == 0, rng.IntN(17) == 0
		s.SetReset(rst)
		r.SetReset(rst)
		s.SetAsyncReset(arst)
		r.SetAsyncReset(arst)
		for _, p := range m.Ports() {
			if p.Output {
				got, _ := s.GetWords(p.Name)
				if want := r.Value(p.Node); words(got).Cmp(want) != 0 {
					t.Fatalf("cycle %d: %s is %x, the reference says %x", c, p.Name, words(got), want)
				}
			}
		}
		for i := 0; i < m.Len(); i++ { // (the split registers' own values too)
			if n := m.Node(i); n.Op == ir.OpReg {
				if got, want := words(s.ValueWords(i)), r.Value(i); got.Cmp(want) != 0 {
					t.Fatalf("cycle %d: register %s is %x, the reference says %x", c, n.Name, got, want)
				}
			}
		}
		s.Step()
		r.Step()
	}
}

// roms is a module of ROMs (ir.Module.ROM): 512 words of 60 bits behind
// a register (the large preset's translation table), 6 words behind a
// 3-bit index (the rest read 0), 20 words behind an 8-bit index (indexes
// past them read 0 through the ROM's own range check), and 40 words
// behind a 14-bit index, wider than a lookup takes (left a tree).
func roms() (m *ir.Module, lookups int) {
	m = ir.NewModule("roms")
	a := m.Input("a", 16)
	rng := rand.New(rand.NewPCG(7, 8))
	words := func(n, w int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = rng.Uint64() >> (64 - w)
		}
		return out
	}
	idx := m.Reg("idx", 9, 3)
	m.SetNext(idx, m.Slice(a, 0, 9))
	m.Output("big", m.ROM(idx, 60, words(512, 60)))
	m.Output("short", m.ROM(m.Slice(a, 9, 3), 7, words(6, 7)))
	m.Output("ranged", m.ROM(m.Slice(a, 4, 8), 12, words(20, 12)))
	m.Output("wide", m.ROM(m.Slice(a, 2, 14), 5, words(40, 5)))
	return m, 3
}

// TestROMLookup: the ROMs a lookup takes are compiled as one opTable each
// (their trees left as dead logic), and every output and every node's
// value, the trees' included, is the reference's, cycle after cycle.
func TestROMLookup(t *testing.T) {
	m, want := roms()
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range s.prog {
		if in.op == opTable {
			n++
		}
	}
	if n != want || len(s.roms) != want {
		t.Errorf("%d lookups (%d tables), want %d", n, len(s.roms), want)
	}
	r, err := NewReference(m)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for c := range 300 {
		w := []uint64{rng.Uint64() & 0xffff}
		s.Drive("a", w)
		r.SetInputWords(m.Ports()[0].Node, w)
		rst := c%41 == 0
		s.SetReset(rst)
		r.SetReset(rst)
		for i := 0; i < m.Len(); i++ {
			if got, want := words(s.ValueWords(i)), r.Value(i); got.Cmp(want) != 0 {
				t.Fatalf("cycle %d: node %d (%v) is %x, the reference says %x", c, i, m.Node(i).Op, got, want)
			}
		}
		s.Step()
		r.Step()
	}
}

// wordSlices is a module of slices of whole words, which share their
// operand's words (New): the words of a 256-bit register, a slice of such
// a slice, slices of a concatenation and of an input, a register loaded
// from one, and a slice read by arithmetic.
func wordSlices() (m *ir.Module, shared []ir.Value) {
	m = ir.NewModule("wordslices")
	a, b := m.Input("a", 256), m.Input("b", 70)
	r := m.Reg("r", 256, 0)
	m.SetNext(r, m.Xor(a, m.Concat(m.Slice(r, 0, 128), m.Slice(r, 128, 128))))
	mid := m.Slice(r, 64, 128)
	hi := m.Slice(mid, 64, 64)
	cat := m.Concat(b, m.Slice(a, 0, 58))
	lo := m.Slice(cat, 0, 64)
	top := m.Slice(cat, 64, 64)
	q := m.Reg("q", 128, 0)
	m.SetNext(q, m.Slice(a, 128, 128))
	m.Output("mid", mid)
	m.Output("hi", m.Add(hi, m.Slice(a, 192, 64)))
	m.Output("lo", lo)
	m.Output("top", top)
	m.Output("qhi", m.Slice(q, 64, 64))
	m.Output("rtop", m.Slice(r, 192, 64))
	return m, []ir.Value{mid, hi, lo} // (simplify takes top apart: a slice across a concatenation's parts)
}

// TestWordSlices: a slice of whole words shares its operand's words (no
// instruction of its own) and the module simulates as the reference says.
func TestWordSlices(t *testing.T) {
	m, shared := wordSlices()
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range shared {
		n := m.Node(v.ID())
		i, a := s.node(v.ID()), s.node(n.Args[0])
		if i < 0 || a < 0 || s.off[i] != s.off[a]+int32(n.Lo/64) {
			t.Errorf("slice %d [%d+:%d] does not share its operand's words", v.ID(), n.Lo, n.W)
		}
	}
	matchesReference(t, m, s, 200, rand.New(rand.NewPCG(7, 8)))
}

// TestRanges: range checks !(a < lo) & (a < hi) become one comparison
// (a - lo < hi - lo) when lo <= hi, and give what the reference gives for
// every 8-bit value and at the edges of 64-bit windows; checks with lo
// above hi, or two different values, stay as they are.
func TestRanges(t *testing.T) {
	m := ir.NewModule("ranges")
	a, b := m.Input("a", 8), m.Input("b", 64)
	within := func(x ir.Value, lo, hi uint64, swap bool) ir.Value {
		ge := m.Not(m.LtU(x, m.Const(x.Width(), lo)))
		lt := m.LtU(x, m.Const(x.Width(), hi))
		if swap {
			return m.And(lt, ge)
		}
		return m.And(ge, lt)
	}
	type check struct {
		v      ir.Value
		merged bool
	}
	checks := []check{
		{within(a, 10, 20, false), true},
		{within(a, 0, 255, true), true},
		{within(a, 7, 7, false), true},
		{within(a, 30, 12, false), false},
		{within(b, 0x2700000000, 0x2710000000, false), true},
		{within(b, 1<<63, ^uint64(0), true), true},
		{m.And(m.Not(m.LtU(a, m.Const(8, 3))), m.LtU(m.Slice(b, 0, 8), m.Const(8, 9))), false},
	}
	for k, c := range checks {
		m.Output(fmt.Sprintf("in%d", k), c.v)
	}
	s, err := NewInterpreter(m)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range checks {
		if merged := s.m.Node(s.node(c.v.ID())).Op == ir.OpLtU; merged != c.merged {
			t.Errorf("check %d: one comparison %v, want %v", k, merged, c.merged)
		}
	}
	r, err := NewReference(m)
	if err != nil {
		t.Fatal(err)
	}
	edges := []uint64{0, 1, 0x26ffffffff, 0x2700000000, 0x2700000001, 0x270fffffff, 0x2710000000, 1<<63 - 1, 1 << 63, ^uint64(0) - 1, ^uint64(0)}
	for x := range 256 {
		for _, y := range edges {
			s.Drive("a", []uint64{uint64(x)})
			s.Drive("b", []uint64{y})
			r.SetInputWords(a.ID(), []uint64{uint64(x)})
			r.SetInputWords(b.ID(), []uint64{y})
			for k, c := range checks {
				got, _ := s.Get(fmt.Sprintf("in%d", k))
				if want := r.Value(c.v.ID()); want.Uint64() != got {
					t.Fatalf("a=%d b=%#x: check %d is %d, the reference says %v", x, y, k, got, want)
				}
			}
		}
	}
}
