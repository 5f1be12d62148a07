// Package verilator lints generated modules in tests: each module and
// the modules it instances are emitted as Verilog, one file per module
// named after it, and must pass
// `verilator --lint-only -Wall` without a single message. A missing
// Verilator skips the test, or fails it under CI=true (testbenches/tools).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package verilator

import (
	"os"
	"path/filepath"
	"testing"

	"onic/hdlgen/check"
	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
)

// Lint emits each module with the modules it instances (one file per
// module) and requires Verilator's lint of each design to print nothing.
func Lint(t testing.TB, modules ...*ir.Module) {
	t.Helper()
	bin := tools.Require(t, "verilator")
	for _, m := range modules {
		files, err := verilog.EmitDesign(m)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		var paths []string
		for _, f := range files {
			p := filepath.Join(dir, f.Name)
			if err := os.WriteFile(p, f.Source, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		if msg := check.Lint(bin, files[0].Module, paths); msg != "" {
			t.Errorf("%s:\n%s", m.Name(), msg)
		}
	}
}
