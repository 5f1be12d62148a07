package sim

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/testbenches/golden"
)

// random builds a random module from seed: inputs, registers and ops of
// random widths (up to 64 bits), every op and every register used.
func random(seed uint64, ops int) *ir.Module { return randomModule(seed, ops, true, 64) }

// randomModule is random, with or without memories (whose uninitialised
// contents an event simulator shows as x), with signals up to maxW bits.
func randomModule(seed uint64, ops int, mems bool, maxW int) *ir.Module {
	rng := rand.New(rand.NewPCG(seed, 1))
	noReset := rand.New(rand.NewPCG(seed, 77)) // its own stream: the modules of older seeds stay as they were
	m := ir.NewModule(fmt.Sprintf("random%d", seed))
	var vals []ir.Value
	for k := range 1 + rng.IntN(4) {
		vals = append(vals, m.Input(fmt.Sprintf("in%d", k), 1+rng.IntN(maxW)))
	}
	var regs []ir.Value
	for k := range rng.IntN(4) {
		w := 1 + rng.IntN(maxW)
		reset := rng.Uint64() & (1<<w - 1 | (^uint64(0) * uint64(w/64)))
		var r ir.Value
		switch {
		case rng.IntN(3) == 0:
			r = m.RegAsync(fmt.Sprintf("r%d", k), w, reset)
		case noReset.IntN(3) == 0:
			r = m.RegNoReset(fmt.Sprintf("r%d", k), w)
		default:
			r = m.Reg(fmt.Sprintf("r%d", k), w, reset)
		}
		regs = append(regs, r)
		vals = append(vals, r)
	}
	pick := func() ir.Value { return vals[rng.IntN(len(vals))] }
	// fit makes v exactly w bits: slice or extend.
	fit := func(v ir.Value, w int) ir.Value {
		switch {
		case v.Width() > w:
			return m.Slice(v, rng.IntN(v.Width()-w+1), w)
		case v.Width() < w && rng.IntN(2) == 0:
			return m.Sext(v, w)
		}
		return m.Zext(v, w)
	}
	for range ops {
		a := pick()
		w := a.Width()
		b := fit(pick(), w)
		var v ir.Value
		switch rng.IntN(20) {
		case 0:
			v = m.Add(a, b)
		case 1:
			v = m.Sub(a, b)
		case 2:
			v = m.And(a, b)
		case 3:
			v = m.Or(a, b)
		case 4:
			v = m.Xor(a, b)
		case 5:
			v = m.Not(a)
		case 6:
			v = m.Eq(a, b)
		case 7:
			v = m.Ne(a, b)
		case 8:
			v = m.LtU(a, b)
		case 9:
			v = m.LtS(a, b)
		case 10:
			v = m.Mux(fit(pick(), 1), a, b)
		case 11:
			lo := rng.IntN(w)
			v = m.Slice(a, lo, 1+rng.IntN(w-lo))
		case 12:
			c := fit(pick(), 1+rng.IntN(maxW))
			if a.Width()+c.Width() <= maxW {
				v = m.Concat(a, c)
			} else {
				v = m.RedOr(c)
			}
		case 13:
			v = m.RedAnd(a)
		case 14:
			v = m.RedXor(a)
		case 15:
			c := fit(pick(), max(1, min(maxW-w, 1+rng.IntN(32))))
			if w+c.Width() <= maxW {
				v = m.Mul(a, c)
			} else {
				v = m.Const(w, rng.Uint64()&(1<<w-1|(^uint64(0)*uint64(w/64))))
			}
		case 16:
			v = m.Shl(a, fit(pick(), 1+rng.IntN(7)))
		case 17:
			v = m.Shr(a, fit(pick(), 1+rng.IntN(7)))
		case 18:
			v = m.Sar(a, fit(pick(), 1+rng.IntN(7)))
		default:
			v = m.Sext(a, w+rng.IntN(maxW+1-w))
		}
		vals = append(vals, v)
	}
	// Memories: a read port among the values, a write port (with byte
	// enables when the word is whole bytes) driven from them.
	for k := range rng.IntN(3) * b2i(mems) {
		depth, w := 2<<rng.IntN(4), 1+rng.IntN(maxW)
		if rng.IntN(2) == 0 {
			w = 8 * (1 + rng.IntN(maxW/8))
		}
		mem := m.Memory(fmt.Sprintf("mem%d", k), depth, w)
		ab := ir.AddrBits(depth)
		var be ir.Value
		if w%8 == 0 && rng.IntN(2) == 0 {
			be = fit(pick(), w/8)
		}
		m.WritePort(mem, fit(pick(), ab), fit(pick(), w), fit(pick(), 1), be)
		rd := m.ReadPort(mem, fit(pick(), ab), fit(pick(), 1))
		vals = append(vals, rd, m.Xor(rd, fit(pick(), w)))
	}
	for _, r := range regs {
		m.SetNext(r, fit(pick(), r.Width()))
		if rng.IntN(2) == 0 {
			m.SetEnable(r, fit(pick(), 1))
		}
	}
	m.Output("out", vals[len(vals)-1])
	return m
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// differ runs module m in both simulators for cycles cycles of random
// inputs (reset in the first) and reports the first node that differs.
func differ(m *ir.Module, seed uint64, cycles int) error {
	s, err := New(m)
	if err != nil {
		return err
	}
	r, err := NewReference(m)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var inputs []ir.Port
	for _, p := range m.Ports() {
		if !p.Output {
			inputs = append(inputs, p)
		}
	}
	for c := range cycles {
		for _, p := range inputs {
			v := rng.Uint64()
			if err := s.Set(p.Name, v); err != nil {
				return err
			}
			r.SetInput(p.Node, v)
		}
		for i := 0; i < m.Len(); i++ {
			if m.Node(i).Op == ir.OpInstance {
				continue // no value of its own
			}
			if want, got := r.Value(i), words(s.ValueWords(i)); want.Cmp(got) != 0 {
				n := m.Node(i)
				return fmt.Errorf("cycle %d, node %d (%s, %d bits, %s): compiled %#x, reference %#x", c, i, n.Op, n.W, n.Pos, got, want)
			}
		}
		s.SetReset(c == 0)
		r.SetReset(c == 0)
		arst := c == 0 || rng.IntN(10) == 0
		s.SetAsyncReset(arst)
		r.SetAsyncReset(arst)
		for i := 0; i < m.Len(); i++ { // an asynchronous reset shows at once
			if m.Node(i).Op == ir.OpInstance {
				continue
			}
			if want, got := r.Value(i), words(s.ValueWords(i)); want.Cmp(got) != 0 {
				return fmt.Errorf("cycle %d, node %d after arst: compiled %#x, reference %#x", c, i, got, want)
			}
		}
		s.Step()
		r.Step()
	}
	return nil
}

// TestAgainstReference: the compiled simulator equals the reference
// evaluator on 300 random modules of 40 operations, 30 cycles each.
func TestAgainstReference(t *testing.T) {
	for seed := range uint64(300) {
		m := random(seed, 40)
		if err := m.Check(); err != nil {
			t.Fatalf("seed %d builds a bad module: %v", seed, err)
		}
		if err := differ(m, seed, 30); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestWideAgainstReference: the multi-word evaluator equals the reference
// on 200 random modules with signals up to 300 bits.
func TestWideAgainstReference(t *testing.T) {
	for seed := range uint64(200) {
		m := randomModule(seed, 40, true, 300)
		if err := differ(m, seed, 20); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// FuzzAgainstReference: the same over fuzzed seeds and sizes.
func FuzzAgainstReference(f *testing.F) {
	f.Add(uint64(1), uint8(10))
	f.Add(uint64(77), uint8(120))
	f.Fuzz(func(t *testing.T, seed uint64, ops uint8) {
		m := randomModule(seed, int(ops), true, []int{64, 300}[seed%2])
		if err := m.Check(); err != nil {
			t.Fatalf("seed %d builds a bad module: %v", seed, err)
		}
		if err := differ(m, seed, 20); err != nil {
			t.Fatalf("seed %d, %d ops: %v", seed, ops, err)
		}
	})
}

// counter is an 8-bit counter with an enable.
func counter() *ir.Module {
	m := ir.NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)
	return m
}

func TestCounter(t *testing.T) {
	s, err := New(counter())
	if err != nil {
		t.Fatal(err)
	}
	reset(s)
	s.Set("en", 1)
	for range 300 {
		s.Step()
	}
	s.Set("en", 0)
	s.Step()
	if v, _ := s.Get("count"); v != 300%256 {
		t.Fatalf("count %d after 300 enabled edges", v)
	}
	if err := s.Set("nope", 1); err == nil {
		t.Error("set an input that does not exist")
	}
}

// BenchmarkStep50 is one clock cycle of a 50-operation random module.
func BenchmarkStep50(b *testing.B) {
	s, err := New(random(7, 50))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mcycles/s")
}

// TestStepAllocs: a clock cycle allocates nothing, on the 64-bit path
// and on the multi-word one.
func TestStepAllocs(t *testing.T) {
	for _, maxW := range []int{64, 300} {
		s, err := New(randomModule(7, 50, true, maxW))
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(1000, s.Step); n != 0 {
			t.Fatalf("signals up to %d bits: %v allocations per cycle", maxW, n)
		}
	}
}

// TestVCD: the counter's dump declares its signals, and count rises by
// one per enabled edge at the clock's period (golden file:
// testdata/counter.vcd, go test -update rewrites it).
func TestVCD(t *testing.T) {
	s, err := New(counter())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.TraceVCD(&b, 10); err != nil {
		t.Fatal(err)
	}
	reset(s)
	s.Set("en", 1)
	for range 3 {
		s.Step()
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "counter.vcd"), b.String())
	for _, want := range []string{"$var wire 8 $ cnt $end\n$var wire 8 $ count $end", "#40\n1!\nb11 $\n", "#45\n0!\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	if err := s.TraceVCD(&b, 3); err == nil {
		t.Error("an odd period was accepted")
	}
}

// TestVCDWide: a 100-bit register dumps as one binary value with all its
// bits.
func TestVCDWide(t *testing.T) {
	m := ir.NewModule("wide")
	r := m.Reg("r", 100, 0)
	m.SetNext(r, m.Not(r))
	m.Output("q", r)
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := s.TraceVCD(&b, 10); err != nil {
		t.Fatal(err)
	}
	s.Step()
	s.Flush()
	if !strings.Contains(b.String(), "$var wire 100 # r $end") || !strings.Contains(b.String(), "b"+strings.Repeat("1", 100)+" #\n") {
		t.Fatalf("%s", b.String())
	}
}

// TestInlined: two inlined counters count on their own.
func TestInlined(t *testing.T) {
	m := ir.NewModule("pair")
	en := m.Input("en", 1)
	m.Output("up", m.Inline("up", counter(), map[string]ir.Value{"en": en})["count"])
	m.Output("down", m.Inline("down", counter(), map[string]ir.Value{"en": m.Not(en)})["count"])
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	reset(s)
	s.Set("en", 1)
	for range 7 {
		s.Step()
	}
	s.Set("en", 0)
	for range 3 {
		s.Step()
	}
	up, _ := s.Get("up")
	down, _ := s.Get("down")
	if up != 7 || down != 3 {
		t.Fatalf("up %d, down %d; want 7 and 3", up, down)
	}
}

// reset holds rst high for one edge, as a testbench does first.
func reset(s *Sim) {
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
}
