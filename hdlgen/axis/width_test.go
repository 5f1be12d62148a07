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

// TestPacketMux: three sources of packets under random valid and a random
// sink: packets come out whole (never interleaved), each source's words
// in order, nothing lost, and a word offered and not taken is offered
// again, unchanged, until it is; a word-by-word grant (Mux) is caught
// interleaving.
func TestPacketMux(t *testing.T) {
	for _, packetAware := range []bool{true, false} {
		mod := ir.NewModule("pmux")
		var ins []Stream
		for k := range 3 {
			ins = append(ins, Input(mod, "s"+string(rune('0'+k)), 13))
		}
		if packetAware {
			Output(mod, "m", PacketMux(mod, "mux", ins))
		} else {
			Output(mod, "m", Mux(mod, "mux", ins))
		}
		s, err := sim.New(mod)
		if err != nil {
			t.Fatal(err)
		}
		reset(s)
		rng := rand.New(rand.NewPCG(8, 8))
		get := func(name string) uint64 { v, _ := s.Get(name); return v }
		// word: last(1) source(2) seq(10)
		seq := [3]uint64{}
		left := [3]int{}
		valid := [3]bool{}
		word := [3]uint64{}
		var got []uint64
		waiting, waited := false, uint64(0) // a word offered and not taken last cycle
		for range 5000 {
			for k := range 3 {
				if !valid[k] && rng.IntN(10) < 6 {
					if left[k] == 0 {
						left[k] = 1 + rng.IntN(6)
					}
					left[k]--
					word[k], valid[k] = b(left[k] == 0)<<12|uint64(k)<<10|seq[k]%1024, true
					seq[k]++
				}
				s.Set("s"+string(rune('0'+k))+"_tdata", word[k])
				s.Set("s"+string(rune('0'+k))+"_tvalid", b(valid[k]))
			}
			ready := rng.IntN(10) < 7
			s.Set("m_tready", b(ready))
			// AXI4-Stream: an offered word stays, unchanged, until taken,
			// whatever the other inputs do meanwhile.
			if waiting && (get("m_tvalid") != 1 || get("m_tdata") != waited) {
				t.Fatalf("packet-aware %v: word %#x offered and not taken, then valid %d word %#x", packetAware, waited, get("m_tvalid"), get("m_tdata"))
			}
			waiting, waited = get("m_tvalid") == 1 && !ready, get("m_tdata")
			if get("m_tvalid") == 1 && ready {
				got = append(got, get("m_tdata"))
			}
			for k := range 3 {
				if valid[k] && get("s"+string(rune('0'+k))+"_tready") == 1 {
					valid[k] = false
				}
			}
			s.Step()
		}
		interleaved := false
		next := [3]uint64{}
		cur := -1
		for i, w := range got {
			src := int(w >> 10 & 3)
			if w&1023 != next[src]%1024 {
				t.Fatalf("packet-aware %v: word %d from source %d is #%d, want #%d", packetAware, i, src, w&1023, next[src])
			}
			next[src]++
			if cur >= 0 && src != cur {
				interleaved = true
			}
			cur = src
			if w>>12 != 0 {
				cur = -1
			}
		}
		if len(got) < 2000 { // the sink takes at most 70%; a packet waits for its own source
			t.Fatalf("packet-aware %v: only %d words in 5000 cycles", packetAware, len(got))
		}
		if interleaved == packetAware {
			t.Errorf("packet-aware %v: packets interleaved = %v", packetAware, interleaved)
		}
	}
	mod := ir.NewModule("axis_packet_mux")
	Output(mod, "m", PacketMux(mod, "mux", []Stream{Input(mod, "a", 65), Input(mod, "b", 65)}))
	verilator.Lint(t, mod)
}
