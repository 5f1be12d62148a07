package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestHDLDemoAndCheck: the demo's Verilog passes 'onic hdl check', whose
// report puts the 512 x 64 FIFO in one block RAM; Verilog with a lint
// warning makes check exit 1; a directory without Verilog is an error.
func TestHDLDemoAndCheck(t *testing.T) {
	for _, name := range []string{"verilator", "iverilog", "yosys"} {
		tools.Require(t, name)
	}
	dir := t.TempDir()
	code, out, errs := onic(t, "", "hdl", "demo", "--out", dir)
	if code != 0 || strings.Count(out, ".v\n") != 2 {
		t.Fatalf("demo: exit %d %s %q", code, errs, out)
	}
	code, out, errs = onic(t, "", "hdl", "check", dir, "--json")
	var r struct {
		Clean   bool
		Modules []struct {
			Module        string
			LUT, FF, BRAM int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Clean || len(r.Modules) != 2 {
		t.Fatalf("check: exit %d %s %q", code, errs, out)
	}
	if m := r.Modules[0]; m.Module != "axis_fifo" || m.BRAM != 1 || m.FF == 0 || m.LUT == 0 {
		t.Errorf("fifo resources %+v", m)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "bad.v"), []byte("`default_nettype none\nmodule bad(input wire a, output wire y);\n  wire spare = a;\n  assign y = a;\nendmodule\n"), 0o644)
	code, out, errs = onic(t, "", "hdl", "check", bad)
	if code != 1 || !strings.Contains(out, "UNUSED") || !strings.Contains(errs, "lint or compile messages") {
		t.Errorf("lint warning: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = onic(t, "", "hdl", "check", t.TempDir())
	if code != 1 || !strings.Contains(errs, "no .v files") {
		t.Errorf("empty directory: exit %d %q", code, errs)
	}
}
