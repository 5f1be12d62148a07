package axis

import (
	"math/rand/v2"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/testbenches/verilator"
)

// skidModule passes stream s through n skid buffers to stream m.
func skidModule(n int) *ir.Module {
	mod := ir.NewModule("skid_chain")
	s := Input(mod, "s", 16)
	for k := range n {
		s = Skid(mod, "slice"+string(rune('a'+k)), s)
	}
	Output(mod, "m", s)
	return mod
}

// fifoModule passes stream s through a FIFO of depth words to m.
func fifoModule(depth int) *ir.Module {
	mod := ir.NewModule("fifo")
	Output(mod, "m", FIFO(mod, "q", Input(mod, "s", 16), depth))
	return mod
}

// TestFIFOOrder: under random valid and ready, FIFOs of several depths
// deliver every word once, in order, never holding more than their depth.
func TestFIFOOrder(t *testing.T) {
	for _, depth := range []int{2, 4, 16} {
		for seed := range uint64(10) {
			for _, p := range [][2]float64{{0.6, 0.5}, {0.9, 0.2}, {0.2, 0.9}} {
				got := run(t, fifoModule(depth), 1500, p[0], p[1], seed)
				if len(got) < 200 {
					t.Fatalf("depth %d seed %d %v: only %d words", depth, seed, p, len(got))
				}
				for i, v := range got {
					if v != uint64(i)&0xFFFF {
						t.Fatalf("depth %d seed %d %v: word %d is %d", depth, seed, p, i, v)
					}
				}
			}
		}
	}
}

// TestFIFOFullAndThroughput: a FIFO never stalled moves a word per cycle;
// one never drained takes exactly depth words and then says it is full.
func TestFIFOFullAndThroughput(t *testing.T) {
	if got := run(t, fifoModule(4), 1000, 1, 1, 1); len(got) < 1000-2 {
		t.Fatalf("%d words in 1000 cycles", len(got))
	}
	s, err := sim.New(fifoModule(8))
	if err != nil {
		t.Fatal(err)
	}
	reset(s)
	s.Set("s_tvalid", 1)
	s.Set("m_tready", 0)
	taken := 0
	for range 20 {
		if r, _ := s.Get("s_tready"); r == 1 {
			taken++
		}
		s.Step()
	}
	if taken != 8 {
		t.Fatalf("a FIFO of 8 took %d words", taken)
	}
}

// run drives the module's s stream with sequence numbers (valid at random,
// held until taken, as AXI requires) and takes m at random; it returns
// the words m delivered and the cycles run.
func run(t *testing.T, mod *ir.Module, cycles int, pValid, pReady float64, seed uint64) []uint64 {
	t.Helper()
	s, err := sim.New(mod)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	reset(s)
	var got []uint64
	seq, valid := uint64(0), false
	get := func(name string) uint64 { v, _ := s.Get(name); return v }
	for range cycles {
		if !valid {
			valid = rng.Float64() < pValid
		}
		ready := rng.Float64() < pReady
		s.Set("s_tdata", seq)
		s.Set("s_tvalid", b(valid))
		s.Set("m_tready", b(ready))
		if get("m_tvalid") == 1 && ready {
			got = append(got, get("m_tdata"))
		}
		if valid && get("s_tready") == 1 {
			seq, valid = seq+1, false
		}
		s.Step()
	}
	return got
}

func b(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// TestSkidOrder: under random valid and ready, two skid buffers deliver
// every word once, in order.
func TestSkidOrder(t *testing.T) {
	for seed := range uint64(20) {
		got := run(t, skidModule(2), 2000, 0.6, 0.5, seed)
		if len(got) < 500 {
			t.Fatalf("seed %d: only %d words in 2000 cycles", seed, len(got))
		}
		for i, v := range got {
			if v != uint64(i)&0xFFFF {
				t.Fatalf("seed %d: word %d is %d", seed, i, v)
			}
		}
	}
}

// TestSkidThroughput: with the source always valid and the sink always
// ready, a word moves every cycle after the pipeline fills.
func TestSkidThroughput(t *testing.T) {
	got := run(t, skidModule(3), 1000, 1, 1, 1)
	if len(got) < 1000-3 {
		t.Fatalf("%d words in 1000 cycles", len(got))
	}
}

// TestVerilog: the generated Verilog is clean under Verilator -Wall.
func TestVerilog(t *testing.T) {
	verilator.Lint(t, skidModule(2), fifoModule(16), muxModule(), demuxModule())
}

// TestMux: three sources of numbered words, valid at random and held,
// into a round-robin mux with a sink ready at random: every word of each
// source arrives once and in its source's order; with everyone always
// valid and ready, the sources take exact turns.
func TestMux(t *testing.T) {
	mod := muxModule()
	for _, p := range [][2]float64{{0.5, 0.5}, {1, 1}, {0.9, 0.3}} {
		s, err := sim.New(mod)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 5))
		reset(s)
		var seq [3]uint64
		var valid [3]bool
		var got []uint64
		for range 3000 {
			for k := range 3 {
				if !valid[k] {
					valid[k] = rng.Float64() < p[0]
				}
				s.Set("s"+string(rune('0'+k))+"_tdata", uint64(k)<<12|seq[k])
				s.Set("s"+string(rune('0'+k))+"_tvalid", b(valid[k]))
			}
			ready := rng.Float64() < p[1]
			s.Set("m_tready", b(ready))
			if v, _ := s.Get("m_tvalid"); v == 1 && ready {
				d, _ := s.Get("m_tdata")
				got = append(got, d)
			}
			for k := range 3 {
				if r, _ := s.Get("s" + string(rune('0'+k)) + "_tready"); r == 1 && valid[k] {
					seq[k], valid[k] = seq[k]+1, false
				}
			}
			s.Step()
		}
		var next [3]uint64
		for i, d := range got {
			k := d >> 12
			if k > 2 || d&0xFFF != next[k] {
				t.Fatalf("%v: word %d is %#x, source %d expected %d", p, i, d, k, next[k])
			}
			next[k]++
			if p == [2]float64{1, 1} && i >= 3 && d>>12 != got[i-3]>>12 {
				t.Fatalf("always ready: word %d from source %d breaks the rotation", i, k)
			}
		}
		if next != seq {
			t.Fatalf("%v: delivered %v, accepted %v", p, next, seq)
		}
	}
}

// TestDemux: words with a random destination held with them reach their
// output in order; nothing is lost.
func TestDemux(t *testing.T) {
	mod := demuxModule()
	s, err := sim.New(mod)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 6))
	seq, valid, dest := uint64(0), false, uint64(0)
	var got [3][]uint64
	sent := [3]int{}
	for range 3000 {
		if !valid {
			valid, dest = rng.IntN(2) == 0, uint64(rng.IntN(3))
		}
		s.Set("s_tdata", seq)
		s.Set("s_tvalid", b(valid))
		s.Set("s_tdest", dest)
		for k := range 3 {
			ready := rng.IntN(2) == 0
			s.Set("m"+string(rune('0'+k))+"_tready", b(ready))
			if v, _ := s.Get("m" + string(rune('0'+k)) + "_tvalid"); v == 1 && ready {
				d, _ := s.Get("m" + string(rune('0'+k)) + "_tdata")
				got[k] = append(got[k], d)
			}
		}
		if r, _ := s.Get("s_tready"); r == 1 && valid {
			sent[dest]++
			seq, valid = seq+1, false
		}
		s.Step()
	}
	for k := range 3 {
		if len(got[k]) != sent[k] || len(got[k]) < 200 {
			t.Fatalf("output %d: %d words, %d sent", k, len(got[k]), sent[k])
		}
		for i := 1; i < len(got[k]); i++ {
			if got[k][i] <= got[k][i-1] {
				t.Fatalf("output %d out of order at %d", k, i)
			}
		}
	}
}

// muxModule merges s0, s1, s2 into m.
func muxModule() *ir.Module {
	mod := ir.NewModule("mux3")
	var ins []Stream
	for k := range 3 {
		ins = append(ins, Input(mod, "s"+string(rune('0'+k)), 16))
	}
	Output(mod, "m", Mux(mod, "mux", ins))
	return mod
}

// demuxModule routes s to m0, m1, m2 by s_tdest.
func demuxModule() *ir.Module {
	mod := ir.NewModule("demux3")
	in := Input(mod, "s", 16)
	sel := mod.Input("s_tdest", 2)
	for k, o := range Demux(mod, "demux", in, sel, 3) {
		Output(mod, "m"+string(rune('0'+k)), o)
	}
	return mod
}

// reset holds rst high for one edge, as a testbench does first.
func reset(s *sim.Sim) {
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
}
