package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlan: onic plan as a user runs it — a Megatron job written, then
// planned, validated in the emulator and compared across switches, as
// text and JSON; an ASTRA-sim workload imported and planned; a job
// planned onto a built-in scenario's hosts; and mistakes as one-line
// errors.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	jobPath := filepath.Join(dir, "job.yaml")
	if code, _, errs := onic(t, "", "plan", "megatron", "--dp", "4", "--layers", "4", "--hidden", "512", "--seq", "256", "--micro-batches", "2", "--out", jobPath); code != 0 || !strings.Contains(errs, "wrote "+jobPath) {
		t.Fatalf("plan megatron: %d %s", code, errs)
	}
	code, out, errs := onic(t, "", "plan", jobPath, "--validate")
	if code != 0 || !strings.Contains(out, "exact search") || !strings.Contains(out, "reconfigurations an iteration: 0") || !strings.Contains(out, "all delivered") {
		t.Fatalf("plan --validate: %d\n%s%s", code, out, errs)
	}
	code, out, errs = onic(t, "", "plan", jobPath, "--json", "--validate")
	var res struct {
		Plan struct {
			Placement map[string]string
			Phases    []struct{ Circuits [][2]string }
		}
		Validation struct {
			WorstError float64 `json:"worst_error"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Plan.Placement) != 4 || len(res.Plan.Phases) != 1 || len(res.Plan.Phases[0].Circuits) != 4 || res.Validation.WorstError > 0.1 {
		t.Fatalf("plan --json: %d %v\n%s%s", code, err, out, errs)
	}
	chart := filepath.Join(dir, "compare.svg")
	if code, out, errs := onic(t, "", "plan", jobPath, "--compare", "--chart", chart); code != 0 || !strings.Contains(out, "FLEET MEMS") || !strings.Contains(out, "microsecond switching") {
		t.Fatalf("plan --compare: %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(chart); err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "reconfigure, no relays") {
		t.Errorf("the comparison chart: %v %.200q", err, b)
	}
	scen := filepath.Join(dir, "plan.yaml")
	if code, _, errs := onic(t, "", "plan", jobPath, "--scenario-out", scen); code != 0 {
		t.Fatalf("plan --scenario-out: %s", errs)
	}
	if code, out, errs := onic(t, "", "emu", "run", "--scenario-file", scen); code != 0 || !strings.Contains(out, "accounting:") {
		t.Fatalf("emu run of the plan's scenario: %d\n%s%s", code, out, errs)
	}
	astra := filepath.Join(dir, "resnet.yaml")
	if code, _, errs := onic(t, "", "plan", "astra", filepath.Join("..", "job", "testdata", "resnet50-head.txt"), "--workers", "4", "--out", astra); code != 0 {
		t.Fatalf("plan astra: %s", errs)
	}
	if code, out, errs := onic(t, "", "plan", astra); code != 0 || !strings.Contains(out, "backward-fc1000") {
		t.Fatalf("plan of the imported workload: %d\n%s%s", code, out, errs)
	}
	if code, out, errs := onic(t, "", "plan", astra, "--cluster", "ip-over-pcie"); code == 0 || !strings.Contains(errs, "4 tasks and cluster ip-over-pcie room for 3 on its 3 hosts") {
		t.Fatalf("4 tasks on 3 hosts: %d\n%s%s", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\ntasks: [{name: a}]\nstages: [{name: s, sends: [{from: a, to: b, bytes: 1MiB}]}]\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", bad}, `stages[0].sends[0].to: "b" is not a task`},
		{[]string{"plan", jobPath, "--exact-hosts", "9"}, "--exact-hosts 9"},
		{[]string{"plan", jobPath, "--objective", "fastest"}, `--objective "fastest": time or deadlines`},
		{[]string{"plan", jobPath, "--cluster", "nope"}, "--cluster"},
		{[]string{"plan", "megatron", "--pp", "3", "--layers", "8"}, "do not divide into 3 pipeline stages"},
	} {
		code, _, errs := onic(t, "", tc.args...)
		if code == 0 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: %d %q, want one line with %q", tc.args, code, errs, tc.want)
		}
	}
}
