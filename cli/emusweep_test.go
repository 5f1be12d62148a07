package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/emu/scenario"
)

// sweepSpec is a small sweep: the two-party run's length and one flow's
// transfer size, four points.
const sweepSpec = `scenario: two-party
vary:
  - field: duration
    values: [30us, 60us]
  - field: flows[A->B].size
    values: [4096, 65536]
`

// TestEmuSweep: a sweep's points come out in order with the values each
// had, byte-identical on one core and on four; the chart is written;
// and the Slurm route — each point run alone as a job-array task would
// (--point N --out DIR), then the collect step — gives the local run's
// JSON byte for byte. A field the scenario does not have, or a value its
// loader refuses, is an error naming the spec's line.
func TestEmuSweep(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(sweepSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, one, errs := onic(t, "", "emu", "sweep", spec, "--json", "--jobs", "1", "--chart", filepath.Join(dir, "c.svg"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, four, _ := onic(t, "", "emu", "sweep", spec, "--json", "--jobs", "4")
	if one != four {
		t.Fatal("the sweep's JSON differs between --jobs 1 and --jobs 4")
	}
	var res sweepJSON
	if err := json.Unmarshal([]byte(one), &res); err != nil || len(res.Points) != 4 {
		t.Fatalf("%v: %s", err, one)
	}
	want := [][2]string{{"30us", "4096"}, {"30us", "65536"}, {"60us", "4096"}, {"60us", "65536"}}
	for i, p := range res.Points {
		if p.Point != i || p.Values["duration"] != want[i][0] || p.Values["flows[A->B].size"] != want[i][1] || p.Error != "" || len(p.Flows) != 2 || p.Flows[0].Gbps < 50 {
			t.Fatalf("point %d: %+v", i, p)
		}
	}
	// Larger transfers take longer: the sweep varied what it says.
	if res.Points[1].Flows[0].P50Ns <= res.Points[0].Flows[0].P50Ns {
		t.Errorf("64 KiB transfers' p50 %v ns is not above 4 KiB ones' %v ns", res.Points[1].Flows[0].P50Ns, res.Points[0].Flows[0].P50Ns)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "c.svg")); err != nil || !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("A-&gt;B")) {
		t.Errorf("the chart: %v %.100q", err, b)
	}
	_, text, _ := onic(t, "", "emu", "sweep", spec, "--jobs", "2")
	if !strings.Contains(text, "A->B Gb/s") || strings.Count(text, "\n") != 5 {
		t.Errorf("the table:\n%s", text)
	}

	// The Slurm route, each task run here.
	out := filepath.Join(dir, "slurm")
	if code, _, errs := onic(t, "", "emu", "sweep", spec, "--slurm", out); code != 0 {
		t.Fatalf("--slurm: %s", errs)
	}
	b, err := os.ReadFile(filepath.Join(out, "sweep.sbatch"))
	if err != nil || !bytes.Contains(b, []byte("#SBATCH --array=0-3")) || !bytes.Contains(b, []byte(`--point "$SLURM_ARRAY_TASK_ID"`)) {
		t.Fatalf("sweep.sbatch: %v\n%s", err, b)
	}
	for i := range 4 {
		if code, _, errs := onic(t, "", "emu", "sweep", spec, "--point", fmt.Sprint(i), "--out", out); code != 0 {
			t.Fatalf("--point %d: %s", i, errs)
		}
	}
	if code, _, errs := onic(t, "", "emu", "sweep", spec, "--collect", out); code != 0 {
		t.Fatalf("--collect: %s", errs)
	}
	if got, err := os.ReadFile(filepath.Join(out, "results.json")); err != nil || string(got) != one {
		t.Errorf("the collected results differ from the local run's (%v)", err)
	}

	for _, tc := range []struct{ spec, want string }{
		{"scenario: two-party\nvary:\n  - field: mems.reconfig\n    values: [1ms, -1ms]\n", "spec.yaml:4: mems.reconfig = -1ms"},
		{"scenario: two-party\nvary:\n  - field: flows[C->D].size\n    values: [4096]\n", `no item named "C->D"`},
		{"scenario: two-party\nvary:\n  - field: onics[0].colour\n    values: [red]\n", "colour"},
		{"scenario: two-party\nvary:\n  - fields: duration\n", "spec.yaml:3: fields: unknown field"},
		{"scenario: nine-party\nvary:\n  - field: duration\n    values: [1us]\n", "nine-party"},
	} {
		if err := os.WriteFile(spec, []byte(tc.spec), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := onic(t, "", "emu", "sweep", spec)
		if code == 0 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%q: exit %d, %q; want one line with %q", tc.spec, code, errs, tc.want)
		}
	}
}

// TestEmuRunThreads: a cluster of independent pairs gives the same
// report (but for the speed line) on one thread and on two.
func TestEmuRunThreads(t *testing.T) {
	c := scenario.Pairs(4)
	b, err := scenario.YAML(c)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "pairs.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, n := range []string{"1", "2"} {
		code, out, errs := onic(t, "", "emu", "run", "--scenario-file", file, "--threads", n)
		if code != 0 {
			t.Fatalf("--threads %s: %s", n, errs)
		}
		outs = append(outs, regexp.MustCompile(`(?m)^speed:.*$`).ReplaceAllString(out, ""))
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], "P3b->P3a") {
		t.Fatalf("--threads 1 and 2 differ:\n%s\n%s", outs[0], outs[1])
	}
}

// TestEmuRunFidelity: --fidelity auto carries most of a 5 ms two-party
// run and says so, its throughput within 2% of the packet level's; a
// fidelity that is not one is refused by name.
func TestEmuRunFidelity(t *testing.T) {
	gbps := map[string]float64{}
	for _, fid := range []string{"packet", "auto"} {
		code, out, errs := onic(t, "", "emu", "run", "--duration", "5ms", "--fidelity", fid, "--json")
		if code != 0 {
			t.Fatalf("--fidelity %s: %s", fid, errs)
		}
		var r struct {
			Fidelity string  `json:"fidelity"`
			Share    float64 `json:"transfer_share"`
			Flows    []struct {
				Gbps float64 `json:"gbps"`
			} `json:"flows"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if fid == "auto" && (r.Fidelity != "auto" || r.Share < 0.5) || fid == "packet" && (r.Fidelity != "" || r.Share != 0) {
			t.Fatalf("--fidelity %s: report says fidelity %q, %.2f carried", fid, r.Fidelity, r.Share)
		}
		gbps[fid] = r.Flows[0].Gbps
	}
	if d := gbps["auto"]/gbps["packet"] - 1; d > 0.02 || d < -0.02 {
		t.Fatalf("auto %.3f Gb/s against packet %.3f", gbps["auto"], gbps["packet"])
	}
	code, _, errs := onic(t, "", "emu", "run", "--fidelity", "fast")
	if code == 0 || !strings.Contains(errs, `fidelity: "fast" is not one of`) {
		t.Fatalf("--fidelity fast: exit %d, %q", code, errs)
	}
}
