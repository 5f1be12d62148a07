package sim_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// TestROM reads every index of random tables (sparse, dense, with runs of
// equal words, shorter than the index range) and compares with the table.
func TestROM(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 40 {
		n := 1 + rng.IntN(300)
		w := 1 + rng.IntN(64)
		words := make([]uint64, n)
		for i := range words {
			switch rng.IntN(3) {
			case 0: // runs of equal words fold into constants
				if i > 0 {
					words[i] = words[i-1]
				}
			case 1:
				words[i] = rng.Uint64() >> (64 - w)
			}
		}
		idxW := ir.AddrBits(n) + rng.IntN(3)
		if idxW == 0 {
			idxW = 1
		}
		m := ir.NewModule("rom")
		idx := m.Input("idx", idxW)
		m.Output("q", m.ROM(idx, w, words))
		s, err := sim.New(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1<<idxW; i++ {
			s.Set("idx", uint64(i))
			got, _ := s.Get("q")
			var want uint64
			if i < n {
				want = words[i]
			}
			if got != want {
				t.Fatalf("trial %d (%d words of %d bits): rom[%d] = %#x, want %#x", trial, n, w, i, got, want)
			}
		}
	}
}

// TestPickAndAny checks the one-hot select and the OR tree for every
// single select and for none.
func TestPickAndAny(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64} {
		m := ir.NewModule("pick")
		sel := m.Input("sel", n)
		var sels, vals []ir.Value
		for i := range n {
			sels = append(sels, m.Slice(sel, i, 1))
			vals = append(vals, m.Const(100, uint64(i+1)*0x9E3779B97F4A7C15))
		}
		m.Output("q", m.Pick(sels, vals))
		m.Output("any", m.Any(sels...))
		s, err := sim.New(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := -1; i < n; i++ {
			var v uint64
			var want uint64
			if i >= 0 {
				v, want = 1<<i, uint64(i+1)*0x9E3779B97F4A7C15
			}
			s.SetWords("sel", []uint64{v, 0})
			q, _ := s.GetWords("q")
			if q[0] != want || q[1] != 0 {
				t.Errorf("%d choices, select %d: %#x, want %#x", n, i, q, want)
			}
			if a, _ := s.Get("any"); a != v>>max(i, 0)&1 {
				t.Errorf("%d choices, select %d: any = %d", n, i, a)
			}
		}
	}
}

// TestTableErrors: misuse is reported at the caller's line.
func TestTableErrors(t *testing.T) {
	m := ir.NewModule("bad")
	idx := m.Input("idx", 2)
	m.Output("a", m.ROM(idx, 4, []uint64{1, 2, 3, 4, 5}))
	m.Output("b", m.ROM(idx, 2, []uint64{7}))
	m.Output("c", m.Pick([]ir.Value{m.Slice(idx, 0, 1)}, nil))
	m.Output("d", m.Any(idx))
	err := m.Check()
	if err == nil {
		t.Fatal("no errors")
	}
	for _, want := range []string{"table_test.go:", "5 words cannot be indexed by 2 bits", "does not fit in 2 bits", "pick: 1 selects for 0 values", "any: value 0 is 2 bits"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%v", want, err)
		}
	}
}
