package axis

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
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
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
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

// TestSkidVerilog: the generated Verilog is clean under Verilator -Wall.
func TestSkidVerilog(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	v, err := verilog.Emit(skidModule(2))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "skid_chain.v")
	if err := os.WriteFile(p, v, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(verilator, "--lint-only", "-Wall", p).CombinedOutput(); err != nil || len(out) != 0 {
		t.Fatalf("%v\n%s", err, out)
	}
}
