package linkbench

import (
	"math"
	"testing"

	"onic/emu/link"
	"onic/emu/sim"
	"onic/tlp"
)

// TestMatchesModel runs the grid of the issue — DMA writes and reads of
// 64 B to 64 KiB on Gen3 x16 and Gen4 x16 with MPS 128, 256 and 512 — and
// requires the simulated effective bandwidth within 3% of the model.
func TestMatchesModel(t *testing.T) {
	worst := 0.0
	for _, gen := range []tlp.Gen{tlp.Gen3, tlp.Gen4} {
		for _, mps := range []int{128, 256, 512} {
			for _, op := range []Op{Write, Read} {
				for _, size := range []int{64, 256, 1024, 4096, 16384, 65536} {
					c := Config{Gen: gen, Lanes: 16, MPS: mps, Op: op, Size: size}
					got, err := Run(c)
					if err != nil {
						t.Fatal(err)
					}
					want, err := Model(c)
					if err != nil {
						t.Fatal(err)
					}
					dev := math.Abs(got.EffectiveGbps-want.EffectiveGbps) / want.EffectiveGbps
					worst = max(worst, dev)
					if dev > 0.03 {
						t.Errorf("Gen%d x16 MPS %d %s %d B: simulated %.2f Gb/s, model %.2f Gb/s (%.1f%% apart)",
							gen, mps, op, size, got.EffectiveGbps, want.EffectiveGbps, 100*dev)
					}
				}
			}
		}
	}
	t.Logf("largest deviation from the model: %.2f%%", 100*worst)
}

// TestSmartIOFigure: SmartIO reports about 13.8 GB/s usable on Gen3 x16;
// DMA reads with MPS 256 reproduce it.
func TestSmartIOFigure(t *testing.T) {
	r, err := Run(Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Op: Read, Size: 65536})
	if err != nil {
		t.Fatal(err)
	}
	if gb := r.EffectiveGbps / 8; math.Abs(gb-13.8) > 0.1 {
		t.Errorf("Gen3 x16 MPS 256 reads: %.2f GB/s, want about 13.8", gb)
	}
}

// TestCreditsStall: a receive buffer too small to cover the credit return
// loop really stalls the sender.
func TestCreditsStall(t *testing.T) {
	base := Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Op: Write, Size: 4096}
	full, _ := Run(base)
	small := base
	small.Credits = link.Credits{PH: 4, PD: 64, NPH: 64, NPD: 64}
	got, err := Run(small)
	if err != nil {
		t.Fatal(err)
	}
	if got.EffectiveGbps > 0.8*full.EffectiveGbps {
		t.Errorf("4 header credits: %.1f Gb/s, not stalled against %.1f", got.EffectiveGbps, full.EffectiveGbps)
	}
}

// TestTagsLimitReads: with few tags and a long memory latency reads are
// bounded by tags x MRRS / round trip.
func TestTagsLimitReads(t *testing.T) {
	c := Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, MRRS: 512, Op: Read, Size: 65536, Tags: 4, Memory: 2 * sim.Microsecond}
	got, err := Run(c)
	if err != nil {
		t.Fatal(err)
	}
	// Each tag carries 512 B per round trip of a little over 2 us.
	bound := 4 * 512 * 8 / 2.0e-6 / 1e9
	if got.EffectiveGbps > bound || got.EffectiveGbps < 0.8*bound {
		t.Errorf("4 tags, 2 us memory: %.2f Gb/s, want just under %.2f", got.EffectiveGbps, bound)
	}
}

func TestDeterministic(t *testing.T) {
	c := Config{Gen: tlp.Gen4, Lanes: 8, MPS: 512, Op: RdWr, Size: 3000}
	a, _ := Run(c)
	b, _ := Run(c)
	if a != b {
		t.Errorf("two runs differ: %+v %+v", a, b)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{Gen: 6, Lanes: 16, MPS: 256, Size: 64},
		{Gen: 3, Lanes: 3, MPS: 256, Size: 64},
		{Gen: 3, Lanes: 16, MPS: 100, Size: 64},
		{Gen: 3, Lanes: 16, MPS: 256, Size: 0},
		{Gen: 3, Lanes: 16, MPS: 256, Size: 64, Op: "copy"},
		{Gen: 3, Lanes: 16, MPS: 256, Size: 64, RCB: 32},
		{Gen: 3, Lanes: 16, MPS: 256, Size: 64, MRRS: 8192},
		{Gen: 3, Lanes: 16, MPS: 256, Size: 64, Tags: 2000},
	} {
		if _, err := Run(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// BenchmarkLinkbench measures the simulator: simulated TLPs per wall second
// for Gen3 x16 writes of 4 KiB at MPS 256.
func BenchmarkLinkbench(b *testing.B) {
	c := Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Op: Write, Size: 4096, Window: 100 * sim.Microsecond}
	var tlps float64
	for b.Loop() {
		r, err := Run(c)
		if err != nil {
			b.Fatal(err)
		}
		tlps += r.TLPRate * 100e-6
	}
	b.ReportMetric(tlps/b.Elapsed().Seconds(), "TLPs/s")
}
