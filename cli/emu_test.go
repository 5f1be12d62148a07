package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLinkbenchCLI(t *testing.T) {
	code, out, errs := onic(t, "", "emu", "linkbench", "--gen", "3", "--lanes", "16", "--mps", "256", "--op", "read", "--size", "64KiB")
	if code != 0 || !strings.Contains(out, "effective payload") || !strings.Contains(out, "(13.8") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = onic(t, "", "emu", "linkbench", "--op", "write", "--size", "4096B", "--json")
	var rep map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("--json: exit %d %s %q", code, errs, out)
	}
	eff, model := rep["effective_gbps"].(float64), rep["model_gbps"].(float64)
	if eff < 100 || eff > 126 || eff/model < 0.97 || eff/model > 1.03 {
		t.Errorf("effective %v, model %v", eff, model)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gen", "7"}, "gen 7"},
		{[]string{"--lanes", "12"}, "lanes 12"},
		{[]string{"--op", "copy"}, `op "copy"`},
		{[]string{"--mps", "300"}, "mps 300"},
		{[]string{"--size", "0B"}, `--size "0B": want a whole number of bytes from 1 bytes to 1 GiB`},
		{[]string{"--size", "65536"}, `--size "65536": a size needs a unit`},
		{[]string{"--memory-ns", "-1"}, "--memory-ns -1"},
		{[]string{"--memory-ns", "NaN"}, "--memory-ns NaN: must be 0 to 1e9"},
		{[]string{"--memory-ns", "1e300"}, "--memory-ns 1e+300: must be 0 to 1e9"},
		{[]string{"--rcb", "32"}, "rcb 32"},
		{[]string{"--mrrs", "0"}, "--mrrs 0: must be positive (leave it out for 512)"},
		{[]string{"--tags", "0"}, "--tags 0: must be positive"},
		{[]string{"--lanes", "-4"}, "--lanes -4: must be positive"},
	} {
		code, _, errs := onic(t, "", append([]string{"emu", "linkbench"}, tc.args...)...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
}

func TestEmuRunCLI(t *testing.T) {
	code, out, errs := onic(t, "", "emu", "run", "--duration", "30us")
	if code != 0 || !strings.Contains(out, "scenario two-party") || !strings.Contains(out, "accounting:") || !strings.Contains(out, "A->B") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = onic(t, "", "emu", "run", "--scenario", "two-party-read", "--duration", "30us", "--json")
	var rep struct {
		Flows      []struct{ Op string }
		Accounting struct{ Injected, Delivered uint64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Flows) != 2 || rep.Flows[0].Op != "read" || rep.Accounting.Delivered == 0 {
		t.Fatalf("--json: exit %d %s %q", code, errs, out)
	}
	code, out, _ = onic(t, "", "emu", "scenarios")
	if code != 0 || !strings.HasPrefix(out, "two-party ") {
		t.Fatalf("scenarios: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"emu", "run", "--scenario", "nope"}, `no scenario "nope"`},
		{[]string{"emu", "run", "--duration", "-5us"}, "--duration -5µs"},
		{[]string{"emu", "run", "extra"}, "takes no arguments"},
		{[]string{"emu", "run", "--scenario-file", "nope.yaml"}, "nope.yaml"},
		{[]string{"emu", "run", "--tap", "onicA.host"}, "--tap: needs --pcap"},
		{[]string{"emu", "run", "--pcap", "/nonexistent/dir/x.pcap"}, "--pcap: open /nonexistent"},
		{[]string{"emu", "run", "--scenario-file", "x.yaml", "--scenario", "phased"}, "give one or the other"},
	} {
		code, _, errs := onic(t, "", tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q", tc.args, code, errs)
		}
	}
}

// TestEmuRunConfig: a scenario in a YAML file runs like the built-in one;
// a misspelt field is refused with one line naming the file and field.
func TestEmuRunConfig(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "emu", "scenario", "scenarios", "two-party.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.yaml")
	mine := strings.Replace(strings.Replace(string(src), "name: two-party", "name: mine", 1), "duration: 200us", "duration: 30us", 1)
	if err := os.WriteFile(good, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := onic(t, "", "emu", "run", "--scenario-file", good)
	if code != 0 || !strings.Contains(out, "scenario mine: 30us simulated") || !strings.Contains(out, "B->A") {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(mine, "flows:", "flowz:", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = onic(t, "", "emu", "run", "--scenario-file", bad)
	if code != 1 || !strings.Contains(errs, "bad.yaml") || !strings.Contains(errs, "flowz") || strings.Count(errs, "\n") != 1 {
		t.Errorf("misspelt field: exit %d, %q", code, errs)
	}
}

// TestEmuRunPcap: --pcap writes the chosen taps' TLPs, readable by onic
// tlp decode, which names each record's tap from the pcapng capture; the
// report names the taps.
func TestEmuRunPcap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.pcap")
	code, out, errs := onic(t, "", "emu", "run", "--duration", "3us", "--pcap", path, "--tap", "onicB.port-a", "--json")
	var rep struct{ Taps []string }
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Taps) != 6 || rep.Taps[4] != "onicB.port-a" {
		t.Fatalf("exit %d %s %q", code, errs, out)
	}
	code, out, errs = onic(t, "", "tlp", "decode", "--pcap", path, "--text")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 10 || !strings.Contains(lines[0], "tap 4") || !strings.Contains(lines[0], "onicB.port-a") || strings.Contains(out, "tap 0") {
		t.Fatalf("decode: exit %d %s\n%s", code, errs, out)
	}
	code, _, errs = onic(t, "", "emu", "run", "--duration", "3us", "--pcap", path, "--tap", "A.lnk")
	if code != 1 || !strings.Contains(errs, `tap "A.lnk"`) {
		t.Errorf("unknown tap: exit %d %q", code, errs)
	}
}

// TestEmuRunTrace: --trace writes trace-event JSON and says so on one
// line; output to a buffer (not a terminal) has no progress line.
func TestEmuRunTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	code, _, errs := onic(t, "", "emu", "run", "--duration", "5us", "--trace", path)
	if code != 0 || errs != "wrote "+path+" (trace-event JSON: ui.perfetto.dev)\n" {
		t.Fatalf("exit %d, stderr %q (want only the line naming the file written)", code, errs)
	}
	raw, err := os.ReadFile(path)
	var tr struct{ TraceEvents []map[string]any }
	if err != nil || json.Unmarshal(raw, &tr) != nil || len(tr.TraceEvents) < 10 {
		t.Fatalf("trace: %v %d events", err, len(tr.TraceEvents))
	}
	code, _, errs = onic(t, "", "emu", "run", "--duration", "5us", "--trace", "/nonexistent/t.json")
	if code != 1 || !strings.Contains(errs, "--trace") {
		t.Errorf("unwritable trace: exit %d %q", code, errs)
	}
}

func TestProgressPrinter(t *testing.T) {
	var b strings.Builder
	p := progressPrinter(&b)
	p(time.Millisecond, 10*time.Millisecond)
	p(2*time.Millisecond, 10*time.Millisecond) // within 200 ms of the last: quiet
	if strings.Count(b.String(), "simulated") != 1 || !strings.Contains(b.String(), "simulated 1ms of 10ms (10%)") {
		t.Fatalf("%q", b.String())
	}
	p(10*time.Millisecond, 10*time.Millisecond)
	if !strings.HasSuffix(b.String(), "\r\033[K") {
		t.Errorf("the line is not cleared at the end: %q", b.String())
	}
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}

// TestTraceToStdout: --trace - writes the trace to standard output (valid
// JSON, nothing else in it) and the report to standard error.
func TestTraceToStdout(t *testing.T) {
	code, out, errs := onic(t, "", "emu", "run", "--trace", "-")
	var tr struct{ TraceEvents []map[string]any }
	if code != 0 || json.Unmarshal([]byte(out), &tr) != nil || len(tr.TraceEvents) == 0 || !strings.Contains(errs, "scenario two-party") {
		t.Errorf("exit %d; stdout %.200q; stderr %.200q", code, out, errs)
	}
}

// TestLinkbenchSweep: --sweep measures every size from 64 B to 64 KiB,
// the bandwidth rising with size up to the MPS and level after it, each
// within a percent of the overhead model; --plot draws it as SVG.
func TestLinkbenchSweep(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "sweep.svg")
	code, out, errs := onic(t, "", "emu", "linkbench", "--sweep", "--op", "write", "--json", "--plot", svg)
	var pts []struct {
		Size      int
		Gbps      float64 `json:"effective_gbps"`
		ModelGbps float64 `json:"model_gbps"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &pts) != nil || len(pts) != 11 || pts[0].Size != 64 || pts[10].Size != 65536 {
		t.Fatalf("exit %d %s\n%s", code, errs, out)
	}
	for i, p := range pts {
		if math.Abs(p.Gbps/p.ModelGbps-1) > 0.01 {
			t.Errorf("%d B: %.2f Gb/s, model %.2f", p.Size, p.Gbps, p.ModelGbps)
		}
		if i > 0 && p.Gbps < pts[i-1].Gbps-0.01 {
			t.Errorf("%d B: %.2f Gb/s, less than %d B's %.2f", p.Size, p.Gbps, pts[i-1].Size, pts[i-1].Gbps)
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil || !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "overhead model") || !strings.Contains(string(b), "link rate") {
		t.Errorf("--plot: %v %.200q", err, b)
	}
}

// TestScenariosYAML: `emu scenarios --yaml NAME` writes a built-in
// scenario as a file that `emu run --scenario-file` runs to the same
// report as `--scenario NAME`; an unknown name is refused.
func TestScenariosYAML(t *testing.T) {
	for _, name := range []string{"phased", "pipeline", "allreduce"} {
		code, y, errs := onic(t, "", "emu", "scenarios", "--yaml", name)
		if code != 0 || !strings.HasPrefix(y, "# The built-in scenario "+name) {
			t.Fatalf("--yaml %s: exit %d %s", name, code, errs)
		}
		file := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(file, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		report := func(args ...string) string {
			code, out, errs := onic(t, "", append([]string{"emu", "run"}, args...)...)
			if code != 0 {
				t.Fatalf("emu run %v: exit %d %s", args, code, errs)
			}
			var keep []string
			for _, l := range strings.Split(out, "\n") {
				if !strings.HasPrefix(l, "speed:") {
					keep = append(keep, l)
				}
			}
			return strings.Join(keep, "\n")
		}
		if a, b := report("--scenario", name), report("--scenario-file", file); a != b {
			t.Errorf("%s: the written file runs to another report:\n%s\n---\n%s", name, a, b)
		}
	}
	if code, _, errs := onic(t, "", "emu", "scenarios", "--yaml", "nope"); code != 1 || !strings.Contains(errs, `no scenario "nope"`) {
		t.Errorf("--yaml nope: exit %d %q", code, errs)
	}
}

// TestScenarioFileLines: a mistake in a scenario file, whether reading it
// or building its cluster finds it, is led by the file and the line of
// the field it names.
func TestScenarioFileLines(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ src, want string }{
		{"name: x\nduration: 10us\nhosts:\n  - name: A\nonics:\n  - name: o\n    host: A\n    clock_mhz: -1\n", "x.yaml:8: onics[0].clock_mhz: -1 must be 1 to 1000 MHz"},
		{"name: x\nduration: 10us\nhosts:\n  - name: A\n    mpss: 3\n", "x.yaml:5: hosts[0]: has invalid keys: mpss"},
		{"name: x\nduration: 10us\nhosts:\n  - name: A\n\n    mps: 0\n", "x.yaml:6: hosts[0].mps: 0 is not a value here"},
	} {
		file := filepath.Join(dir, "x.yaml")
		if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"emu", "run", "--scenario-file", file}, {"emu", "serve", "--scenario-file", file, "--socket", filepath.Join(dir, "s")}} {
			if code, _, errs := onic(t, "", cmd...); code != 1 || !strings.Contains(errs, c.want) {
				t.Errorf("%v: exit %d %q, want %q", cmd[:2], code, errs, c.want)
			}
		}
	}
}
