package kernels

import (
	"path/filepath"
	"testing"

	"onic/hdlgen/check"
	"onic/hdlgen/verilog"
	"onic/testbenches/golden"
	"onic/testbenches/tools"
)

// TestGoldenVerilog keeps the Verilog of three library kernels — an
// elementwise saturating sum, the beat-level CRC-32C append, and the
// histogram with AXI-Lite registers — as golden files. Run with -update
// to rewrite them.
func TestGoldenVerilog(t *testing.T) {
	for _, name := range []string{"sum-int16-sat", "crc32c-append", "histogram"} {
		k, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := k.Module()
		if err != nil {
			t.Fatal(err)
		}
		files, err := verilog.EmitDesign(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			golden.Check(t, filepath.Join("testdata", name, f.Name), string(f.Source))
		}
	}
}

// TestGoldenSynth: the golden kernels' Verilog goes through Yosys
// synth_xilinx. crc32c-append takes about 47 s there on its own, too long
// for make test, and is not run here.
func TestGoldenSynth(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "yosys")
	for _, name := range []string{"sum-int16-sat", "histogram"} {
		k, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := k.Module()
		if err != nil {
			t.Fatal(err)
		}
		r, err := check.Synth(filepath.Join("testdata", name), m.Name())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.LUT == 0 || r.FF == 0 {
			t.Errorf("%s: synthesised to %d LUTs and %d flip-flops", name, r.LUT, r.FF)
		}
	}
}
