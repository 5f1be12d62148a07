package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestLint: a clean module prints nothing; an unused input is a -Wall
// warning that Lint returns.
func TestLint(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	clean := write("clean.v", "`default_nettype none\nmodule clean(input wire [7:0] a, output wire [7:0] y);\n    assign y = a;\nendmodule\n")
	if msg := Lint(verilator, "clean", []string{clean}); msg != "" {
		t.Errorf("a clean module: %s", msg)
	}
	dirty := write("dirty.v", "`default_nettype none\nmodule dirty(input wire [7:0] a, input wire b, output wire [7:0] y);\n    assign y = a;\nendmodule\n")
	if msg := Lint(verilator, "dirty", []string{dirty}); !strings.Contains(msg, "UNUSED") {
		t.Errorf("an unused input: %q", msg)
	}
}
