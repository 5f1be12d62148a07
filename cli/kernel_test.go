package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestKernelCLI: list names every built-in; gen writes Verilog that
// onic's own module name matches; test passes a kernel through the
// simulator and Icarus and reports its timing as JSON; mistakes are
// one-line errors with exit 1.
func TestKernelCLI(t *testing.T) {
	tools.Require(t, "iverilog")
	code, out, errs := onic(t, "", "kernel", "list")
	if code != 0 || !strings.Contains(out, "sum-int32") || !strings.Contains(out, "fp32->bf16") {
		t.Fatalf("list: exit %d %s %q", code, errs, out)
	}
	dir := t.TempDir()
	code, out, errs = onic(t, "", "kernel", "gen", "sum-int8-sat", "--out", dir)
	if code != 0 || !strings.Contains(out, "onic_kernel_sum_int8_sat.v") {
		t.Fatalf("gen: exit %d %s %q", code, errs, out)
	}
	if src, err := os.ReadFile(filepath.Join(dir, "onic_kernel_sum_int8_sat.v")); err != nil || !strings.Contains(string(src), "module onic_kernel_sum_int8_sat (") {
		t.Fatalf("gen wrote %v", err)
	}
	if src, err := os.ReadFile(filepath.Join(dir, "onic_task_sum_int8_sat.v")); err != nil || !strings.Contains(string(src), "onic_kernel_sum_int8_sat kernel (") {
		t.Fatalf("gen wrote no task shell around the kernel: %v", err)
	}
	bare := t.TempDir()
	if code, out, errs = onic(t, "", "kernel", "gen", "sum-int8-sat", "--bare", "--out", bare); code != 0 || strings.Contains(out, "onic_task_") {
		t.Fatalf("gen --bare: exit %d %s %q", code, errs, out)
	}
	code, out, errs = onic(t, "", "kernel", "test", "sum-int8-sat", "--rtl", "icarus", "--json")
	var vs []struct {
		Kernel        string
		Simulator     string
		RTL           map[string]string
		BytesPerCycle float64 `json:"bytes_per_cycle"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil || len(vs) != 1 || vs[0].Simulator != "ok" || vs[0].RTL["icarus"] != "ok" || vs[0].BytesPerCycle != 64 {
		t.Fatalf("test: exit %d %s %q", code, errs, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"kernel", "test"}, "name a kernel"},
		{[]string{"kernel", "test", "--all", "sum-int32"}, "not both"},
		{[]string{"kernel", "test", "nope"}, `no kernel "nope"`},
		{[]string{"kernel", "test", "sum-int32", "--rtl", "modelsim"}, `--rtl "modelsim"`},
		{[]string{"kernel", "gen", "nope"}, `no kernel "nope"`},
	} {
		code, _, errs := onic(t, "", c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q (want one line with %q)", c.args, code, errs, c.want)
		}
	}
}
