package axis

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/testbenches/verilator"
)

// packets drives random packets of 8-bit words ({last, word}) into s_*
// (of plen words, or 1 to 11 when plen is 0) under random valid and
// random m_tready for cycles cycles, and returns
// what was sent and what came out of m_* (each as raw tdata values).
func packets(t *testing.T, mod *ir.Module, cycles, plen int, pValid, pReady float64, seed uint64) (sent, got []uint64) {
	t.Helper()
	s, err := sim.New(mod)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	reset(s)
	get := func(name string) uint64 { v, _ := s.Get(name); return v }
	var word uint64
	valid := false
	left := 0
	for range cycles {
		if !valid && rng.Float64() < pValid {
			if left == 0 {
				left = plen
				if plen == 0 {
					left = 1 + rng.IntN(11)
				}
			}
			left--
			word, valid = uint64(rng.IntN(256))|b(left == 0)<<8, true
		}
		ready := rng.Float64() < pReady
		s.Set("s_tdata", word)
		s.Set("s_tvalid", b(valid))
		s.Set("m_tready", b(ready))
		if get("m_tvalid") == 1 && ready {
			got = append(got, get("m_tdata"))
		}
		if valid && get("s_tready") == 1 {
			sent = append(sent, word)
			valid = false
		}
		s.Step()
	}
	return sent, got
}

// TestUpsize: four 8-bit words per wide word, a packet's end closing its
// wide word early with keep saying how many words it holds.
func TestUpsize(t *testing.T) {
	for seed := range uint64(10) {
		mod := ir.NewModule("up")
		Output(mod, "m", Upsize(mod, "up", Input(mod, "s", 9), 4))
		sent, got := packets(t, mod, 3000, 0, 0.7, 0.6, seed)
		// What the wide words must be.
		var want []uint64
		var cur uint64
		n := 0
		for _, w := range sent {
			cur |= (w & 0xFF) << (8 * n)
			n++
			if n == 4 || w>>8 != 0 {
				keep := uint64(1)<<n - 1
				want = append(want, w>>8<<36|keep<<32|cur)
				cur, n = 0, 0
			}
		}
		if len(got) > len(want) || len(want)-len(got) > 2 {
			t.Fatalf("seed %d: %d wide words out, %d sent", seed, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("seed %d: wide word %d is %#x, want %#x", seed, i, got[i], want[i])
			}
		}
	}
}

// TestUpDown: upsizing then downsizing gives back every word and packet
// end, in order, under random backpressure; with everything ready a
// stream of packets of whole wide words moves a word per cycle.
func TestUpDown(t *testing.T) {
	build := func() *ir.Module {
		mod := ir.NewModule("updown")
		Output(mod, "m", Downsize(mod, "down", Upsize(mod, "up", Input(mod, "s", 9), 4), 4))
		return mod
	}
	for seed := range uint64(10) {
		sent, got := packets(t, build(), 3000, 0, 0.8, 0.7, seed)
		if len(got) > len(sent) || len(sent)-len(got) > 10 {
			t.Fatalf("seed %d: %d words out of %d", seed, len(got), len(sent))
		}
		for i := range got {
			if got[i] != sent[i] {
				t.Fatalf("seed %d: word %d is %#x, sent %#x", seed, i, got[i], sent[i])
			}
		}
	}
	// Packets of whole wide words: nothing waits. (Short packets after
	// long ones can stall the input for a cycle: each converter holds one
	// wide word.)
	sent, got := packets(t, build(), 1000, 8, 1, 1, 99)
	if len(sent) < 990 || len(got) < 985 {
		t.Errorf("always valid and ready: %d words in, %d out in 1000 cycles", len(sent), len(got))
	}
}

// TestWidthVerilog: both converters are clean under Verilator -Wall.
func TestWidthVerilog(t *testing.T) {
	up := ir.NewModule("axis_upsize")
	Output(up, "m", Upsize(up, "up", Input(up, "s", 65), 8))
	down := ir.NewModule("axis_downsize")
	Output(down, "m", Downsize(down, "down", Input(down, "s", 1+8+8*64), 8))
	verilator.Lint(t, up, down)
}
