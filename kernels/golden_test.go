package kernels

import (
	"path/filepath"
	"testing"

	"onic/hdlgen/verilog"
	"onic/testbenches/golden"
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
