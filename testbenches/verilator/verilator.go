// Package verilator lints generated modules in tests: each module is
// emitted as Verilog into a file named after it and must pass
// `verilator --lint-only -Wall` without a single message. A missing
// Verilator skips the test, or fails it under CI=true (testbenches/tools).
package verilator

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/testbenches/tools"
)

// Lint emits each module and requires Verilator's lint to print nothing.
func Lint(t testing.TB, modules ...*ir.Module) {
	t.Helper()
	bin := tools.Require(t, "verilator")
	dir := t.TempDir()
	for _, m := range modules {
		src, err := verilog.Emit(m)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, m.Name()+".v")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "--lint-only", "-Wall", p).CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s: %v\n%s", m.Name(), err, out)
		}
	}
}
