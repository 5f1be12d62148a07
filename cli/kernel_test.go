package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/kernels"
	"onic/testbenches/tools"
)

// TestKernelCLI: list names every built-in; gen writes Verilog that
// onic's own module name matches; test passes a kernel through the
// simulator and Icarus and reports its timing as JSON; mistakes are
// one-line errors with exit 1.
func TestKernelCLI(t *testing.T) {
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
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
		{[]string{"kernel", "test", "sum-int32", "--clock-mhz", "NaN"}, "--clock-mhz NaN: want 1 to 1000"},
		{[]string{"fw", "build", "spec.yaml", "--kernel-slot", "-5"}, "--kernel-slot -5: a slot number is 0 or more"},
		{[]string{"fw", "costs"}, "fw costs: give IMAGE (see 'onic fw costs --help')"},
		{[]string{"fw", "diff", "a.onicfw"}, "fw diff: give A and B"},
		{[]string{"fw", "inspect", "a", "b"}, `fw inspect: takes IMAGE, and 1 more were given (["b"])`},
		{[]string{"kernel", "test", "sum-int32", "--rtl", "modelsim"}, `--rtl "modelsim"`},
		{[]string{"kernel", "gen", "nope"}, `no kernel "nope"`},
	} {
		code, _, errs := onic(t, "", c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q (want one line with %q)", c.args, code, errs, c.want)
		}
	}
}

// TestKernelTiming: kernel test estimates a kernel's clock with Yosys and
// reports it (the JSON carries the resources and the path); a kernel
// whose logic is too deep for 250 MHz (a chain of twelve compare-and-add
// steps per lane) passes its three-way proof but gets a warning naming
// its path, and exit 0; a clock out of range is refused.
func TestKernelTiming(t *testing.T) {
	tools.Require(t, "yosys")
	deep := &kernels.Kernel{Name: "deep-chain", Version: "0.1.0", In: kernels.Int32, Lanes: 2, Inputs: 1,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value {
			v := in[0]
			for i := range 12 {
				k := m.Const(32, uint64(1000*i+7))
				v = m.Mux(m.LtS(v, k), m.Add(v, k), m.Sub(v, k))
			}
			return v
		},
		Ref: func(in []uint64) uint64 {
			v := int32(in[0])
			for i := range 12 {
				k := int32(1000*i + 7)
				if v < k {
					v += k
				} else {
					v -= k
				}
			}
			return uint64(uint32(v))
		}}
	if _, err := kernels.Lookup(deep.Name); err != nil { // not yet (go test -count=N)
		if err := kernels.Register(deep); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := onic(t, "", "kernel", "test", "deep-chain", "sum-int8-sat", "--rtl", "")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	warn := regexp.MustCompile(`(?m)^deep-chain .* (\d+)\n  timing: WARNING: est (\d+) MHz is below the 250 MHz clock: [\d.]+ ns from \S+ to \S+ \((\d+) LUT levels`).FindStringSubmatch(out)
	if warn == nil || warn[1] != warn[2] {
		t.Errorf("no warning for deep-chain:\n%s", out)
	} else if n, _ := strconv.Atoi(warn[3]); n < 9 {
		t.Errorf("deep-chain's path has %d LUT levels, want at least 9:\n%s", n, out)
	}
	if regexp.MustCompile(`(?m)^sum-int8-sat .* (\d+)\n  timing`).MatchString(out) {
		t.Errorf("a warning for sum-int8-sat:\n%s", out)
	}
	code, out, _ = onic(t, "", "kernel", "test", "deep-chain", "--rtl", "", "--json")
	var vs []struct {
		Resources struct {
			LUT    int
			Timing struct {
				EstMHz float64 `json:"est_mhz"`
				From   string
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil || len(vs) != 1 || vs[0].Resources.LUT == 0 ||
		vs[0].Resources.Timing.EstMHz <= 0 || vs[0].Resources.Timing.EstMHz >= 250 || vs[0].Resources.Timing.From == "" {
		t.Errorf("--json: exit %d %s", code, out)
	}
	if code, _, errs := onic(t, "", "kernel", "test", "deep-chain", "--clock-mhz", "0"); code != 1 || !strings.Contains(errs, "--clock-mhz 0") {
		t.Errorf("--clock-mhz 0: exit %d %q", code, errs)
	}
}

// TestKernelTestVCD: --vcd writes each kernel's waveform, says so on one
// line per file, and the file is a VCD of the kernel's ports over the
// cycles of a run.
func TestKernelTestVCD(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "waves")
	code, _, errs := onic(t, "", "kernel", "test", "sum-int32", "max-int32", "--rtl", "", "--timing=false", "--vcd", dir)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, k := range []string{"sum_int32", "max_int32"} {
		path := filepath.Join(dir, k+".vcd")
		if !strings.Contains(errs, "wrote "+path+" (VCD: GTKWave)\n") {
			t.Errorf("stderr %q does not name %s", errs, path)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(b, []byte("$enddefinitions $end")) || !bytes.Contains(b, []byte(" m_tdata $end")) || bytes.Count(b, []byte("\n#")) < 10 {
			t.Errorf("%s: %v, not a waveform of the run", path, err)
		}
	}
}
