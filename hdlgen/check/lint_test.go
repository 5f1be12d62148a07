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

// TestLintDirRoots: LintDir lints each module under the design it belongs
// to — the modules no other file instantiates, each with the hierarchy
// under it — so a warning in a submodule is still found, and a module no
// one instantiates is linted on its own.
func TestLintDirRoots(t *testing.T) {
	tools.Require(t, "verilator")
	tools.Require(t, "iverilog")
	dir := t.TempDir()
	for name, src := range map[string]string{
		"top.v":   "`default_nettype none\nmodule top(input wire [7:0] a, output wire [7:0] y);\n    sub u_sub (\n        .a(a),\n        .b(1'b0),\n        .y(y)\n    );\nendmodule\n`default_nettype wire\n",
		"sub.v":   "`default_nettype none\nmodule sub(input wire [7:0] a, input wire b, output wire [7:0] y);\n    assign y = a;\nendmodule\n`default_nettype wire\n",
		"alone.v": "`default_nettype none\nmodule alone(input wire [3:0] c, output wire [3:0] z);\n    assign z = c;\nendmodule\n`default_nettype wire\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := vFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	tops, err := roots(files)
	if err != nil || strings.Join(tops, ",") != "alone,top" {
		t.Fatalf("roots %v %v, want alone and top", tops, err)
	}
	r, err := LintDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Clean || !strings.Contains(r.Verilator, "UNUSED") || !strings.Contains(r.Verilator, "sub.v") {
		t.Errorf("sub's unused input b, under top: %q", r.Verilator)
	}
}
