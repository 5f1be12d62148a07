package check

import (
	"os"
	"path/filepath"
	"testing"

	"onic/testbenches/tools"
)

// TestUltraRAM: a 32 K x 72 memory (2.25 Mb) is block RAM in the default
// 7-series mapping, which has no UltraRAM, and UltraRAM with
// Options.UltraRAM (UltraScale+), as the O-NIC's part would hold it.
func TestUltraRAM(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "yosys")
	dir := t.TempDir()
	src := "`default_nettype none\n" +
		"module big(input wire clk, input wire we, input wire [14:0] wa, input wire [14:0] ra, input wire [71:0] wd, output reg [71:0] rd);\n" +
		"    reg [71:0] mem [0:32767];\n" +
		"    always @(posedge clk) begin\n" +
		"        if (we) mem[wa] <= wd;\n" +
		"        rd <= mem[ra];\n" +
		"    end\n" +
		"endmodule\n"
	if err := os.WriteFile(filepath.Join(dir, "big.v"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := Synth(dir, "big")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{filepath.Join(dir, "big.v")}
	yosys, _ := tool("yosys")
	uram, err := synth(yosys, t.TempDir(), files, "big", Options{UltraRAM: true})
	if err != nil {
		t.Fatal(err)
	}
	if def.URAM != 0 || def.BRAM == 0 {
		t.Errorf("7-series: %d URAM, %d block RAM; want none and some", def.URAM, def.BRAM)
	}
	if uram.URAM == 0 || uram.BRAM != 0 {
		t.Errorf("UltraScale+ with UltraRAM: %d URAM, %d block RAM; want some and none", uram.URAM, uram.BRAM)
	}
	t.Logf("7-series: %d RAMB; UltraScale+: %d URAM288", def.BRAM, uram.URAM)
}
