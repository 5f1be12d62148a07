package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"onic/emu/cluster"
	"onic/firmware"
	"onic/internal/bittest"
	"onic/testbenches/tools"
)

// TestFirmwareCLI: keygen, build, sign, verify, inspect, pack, diff and
// costs from the command line, and the one-line refusals on bad files.
func TestFirmwareCLI(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "yosys")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	must := func(args ...string) string {
		t.Helper()
		code, out, errs := onic(t, "", args...)
		if code != 0 || errs != "" {
			t.Fatalf("onic %s: exit %d, %s", strings.Join(args, " "), code, errs)
		}
		return out
	}
	refuse := func(want string, args ...string) {
		t.Helper()
		code, _, errs := onic(t, "", args...)
		if code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("onic %s: exit %d, stderr %q; want one line with %q", strings.Join(args, " "), code, errs, want)
		}
	}
	must("fw", "keygen", "--out", at("dev"))
	must("fw", "keygen", "--out", at("ops"))
	refuse("file exists", "fw", "keygen", "--out", at("ops"))
	var kg struct {
		Key   string
		Pub   string
		KeyID string `json:"key_id"`
	}
	if err := json.Unmarshal([]byte(must("fw", "keygen", "--out", at("j"), "--json")), &kg); err != nil || kg.Key != at("j.key") || len(kg.KeyID) != 16 {
		t.Errorf("keygen --json: %v %+v", err, kg)
	}
	refuse("give a base name for the key files", "fw", "keygen", "--out", dir+"/")
	refuse("not a directory or a hidden name", "fw", "keygen", "--out", at(".hidden"))
	if st, err := os.Stat(at("ops.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("ops.key: %v %v", st.Mode(), err)
	}
	spec := "../firmware/testdata/onic-a.yaml"
	must("fw", "build", spec, "--key", at("dev.key"), "--out", at("a.onicfw"))
	must("fw", "build", spec, "--out", at("b.onicfw"))
	if a, b := read(t, at("a.onicfw")), read(t, at("b.onicfw")); len(a) <= len(b) {
		t.Error("a signed image is no larger than an unsigned one")
	}
	refuse("unsigned", "fw", "verify", at("b.onicfw"))
	must("fw", "sign", at("a.onicfw"), "--key", at("ops.key"))
	trust := "keys:\n  - {name: ops, key: ops.pub, role: operator}\n  - {name: dev, key: dev.pub, role: ml}\n"
	if err := os.WriteFile(at("trust.yaml"), []byte(trust), 0o644); err != nil {
		t.Fatal(err)
	}
	var vj struct {
		Kind       string
		Signatures int
		Signers    []string `json:"trusted_signers"`
	}
	if err := json.Unmarshal([]byte(must("fw", "verify", at("a.onicfw"), "--trust", at("trust.yaml"), "--json")), &vj); err != nil ||
		vj.Kind != "image" || vj.Signatures != 2 || len(vj.Signers) != 2 {
		t.Errorf("verify --json: %v %+v", err, vj)
	}
	out := must("fw", "verify", at("a.onicfw"), "--trust", at("trust.yaml"), "--pub", at("dev.pub"))
	if !strings.Contains(out, "2 signature(s) verify") || !strings.Contains(out, "signer dev (tenant ml): refused: a whole image needs an operator's signature\n") ||
		!strings.Contains(out, "signer ops (operator): may load it\n") {
		t.Errorf("verify: %s", out)
	}
	// Signed by a tenant alone, a whole image is one the loader refuses:
	// so does verify --trust.
	must("fw", "build", spec, "--key", at("dev.key"), "--out", at("tenant.onicfw"))
	refuse("no signer that "+at("trust.yaml")+" trusts may load it", "fw", "verify", at("tenant.onicfw"), "--trust", at("trust.yaml"))
	var doc struct {
		Manifest   firmware.Manifest
		Signatures []firmware.Signature
	}
	if err := json.Unmarshal([]byte(must("fw", "inspect", at("a.onicfw"), "--json")), &doc); err != nil || doc.Manifest.Name != "onic-a" || len(doc.Signatures) != 2 {
		t.Fatalf("inspect --json: %v %+v", err, doc.Manifest)
	}
	// Extracted, the image is the card's static region and each slot's
	// module; together they are the whole card, clean under Verilator
	// -Wall and Icarus.
	// Only once someone vouches for it: build.tcl is its author's code.
	refuse("say whose signature you accept: --trust FILE or --pub KEY", "fw", "extract", at("a.onicfw"), "--out", at("x"))
	refuse("no signer that "+at("trust.yaml")+" trusts may load it", "fw", "extract", at("tenant.onicfw"), "--trust", at("trust.yaml"), "--out", at("x"))
	refuse("did not sign", "fw", "extract", at("b.onicfw"), "--pub", at("dev.pub"), "--out", at("x"))
	if _, err := os.Stat(at("x")); !os.IsNotExist(err) {
		t.Errorf("a refused extract wrote %s: %v", at("x"), err)
	}
	var xj struct {
		Dir   string
		Name  string
		Files []string
	}
	if err := json.Unmarshal([]byte(must("fw", "extract", at("a.onicfw"), "--trust", at("trust.yaml"), "--out", at("x"), "--json")), &xj); err != nil ||
		xj.Dir != at("x") || xj.Name != "onic-a" || !slices.Contains(xj.Files, filepath.Join(at("x"), "static", "build.tcl")) {
		t.Errorf("fw extract --json: %v %+v", err, xj)
	}
	refuse("not empty", "fw", "extract", at("a.onicfw"), "--trust", at("trust.yaml"), "--out", at("x"))
	refuse("--out: name the directory", "fw", "extract", at("a.onicfw"))
	if code, _, errs := onic(t, "", "fw", "extract", at("b.onicfw"), "--no-verify", "--out", at("y")); code != 0 || !strings.Contains(errs, "signatures not verified") {
		t.Errorf("extract --no-verify: exit %d, %q", code, errs)
	}
	card := at("card")
	if err := os.Mkdir(card, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"static", "slot0", "slot1"} {
		vs, _ := filepath.Glob(filepath.Join(at("x"), part, "*.v"))
		if len(vs) == 0 {
			t.Fatalf("extract: no Verilog in %s", part)
		}
		for _, v := range vs {
			src := read(t, v)
			dst := filepath.Join(card, filepath.Base(v))
			if old, err := os.ReadFile(dst); err == nil {
				if string(old) != string(src) {
					t.Fatalf("%s: two different modules of one name", dst)
				}
				continue
			}
			if err := os.WriteFile(dst, src, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if code, out, errs := onic(t, "", "hdl", "check", "--lint-only", card); code != 0 || !strings.Contains(out, "verilator -Wall: clean\niverilog -g2005: clean\n") {
		t.Errorf("the extracted card: check --lint-only: exit %d %s %q", code, errs, out)
	}
	text := must("fw", "inspect", at("a.onicfw"))
	if !strings.Contains(text, "slot 0     scale-int32 1.0.0") || strings.Count(text, ": verifies") != 2 {
		t.Errorf("inspect:\n%s", text)
	}
	// The static region is the whole card, as onic hdl gen --pcie4 writes
	// it: the top for Vivado, the PCIE4 adapters, the link layers.
	for _, f := range []string{"static/onic_top.v", "static/onic_top.xdc", "static/build.tcl", "static/onic_pcie4_cq.v", "static/onic_optlink.v", "static/onic_pcie_manager_port_in.v"} {
		if !strings.Contains(text, "payload    "+f+" ") {
			t.Errorf("the image lacks %s:\n%s", f, text)
		}
	}
	// Attach a partial bitstream: sizes change, signatures must be redone.
	if err := os.WriteFile(at("slot0.bit"), bittest.Bit("xcvu9p-flga2104-2L-e", 1_000_000), 0o644); err != nil {
		t.Fatal(err)
	}
	// Only a bitstream, whole, for the image's part.
	for name, b := range map[string][]byte{
		"zeros.bit": make([]byte, 1000), "ku15p.bit": bittest.Bit("xcku15p-ffve1517-2-e", 1000), "cut.bit": bittest.Bit("xcvu9p-flga2104-2L-e", 1000)[:900],
	} {
		if err := os.WriteFile(at(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refuse("--bitstream "+at("zeros.bit")+": not a bitstream: no .bit header, and no sync word", "fw", "pack", at("a.onicfw"), "--bitstream", at("zeros.bit"), "--slot", "0")
	refuse(`ku15p.bit: it is for part "xcku15p-ffve1517-2-e", the image for xcvu9p-flga2104-2L-e`, "fw", "pack", at("a.onicfw"), "--bitstream", at("ku15p.bit"), "--slot", "0")
	refuse("cut.bit: .bit header: the configuration data is 1000 bytes, the file holds 787 after the header (cut short", "fw", "pack", at("a.onicfw"), "--bitstream", at("cut.bit"), "--slot", "0")
	must("fw", "pack", at("a.onicfw"), "--bitstream", at("slot0.bit"), "--slot", "0", "--key", at("ops.key"), "--out", at("c.onicfw"))
	refuse("no such slot", "fw", "pack", at("a.onicfw"), "--bitstream", at("slot0.bit"), "--slot", "7", "--out", at("d.onicfw"))
	// As diff(1): exit 1 when the images differ, with the differences
	// on stdout and nothing on stderr.
	code, diff, errs := onic(t, "", "fw", "diff", at("a.onicfw"), at("c.onicfw"))
	if code != 1 || errs != "" {
		t.Errorf("fw diff of different images: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"-slot 0     region lut 40000 ff 80000 bram 60 dsp 120, partial bitstream 2586936 bytes (estimated from the part)",
		"+slot 0     region lut 40000 ff 80000 bram 60 dsp 120, partial bitstream 1000000 bytes (attached bitstream)",
		"+payload    slot0.bit ",
		"-signature  key ",
	} {
		if !strings.Contains(diff, "\n"+want) && !strings.HasPrefix(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if d := must("fw", "diff", at("a.onicfw"), at("a.onicfw")); d != "the images are the same\n" {
		t.Errorf("self diff: %q", d)
	}
	var dj struct {
		Same  bool
		OnlyA []string `json:"only_a"`
		OnlyB []string `json:"only_b"`
	}
	code, diff, _ = onic(t, "", "fw", "diff", at("a.onicfw"), at("c.onicfw"), "--json")
	if err := json.Unmarshal([]byte(diff), &dj); err != nil || code != 1 || dj.Same || len(dj.OnlyA) == 0 || len(dj.OnlyB) == 0 ||
		!strings.HasPrefix(dj.OnlyB[len(dj.OnlyB)-1], "signature") && !slices.ContainsFunc(dj.OnlyB, func(l string) bool { return strings.HasPrefix(l, "payload    slot0.bit") }) {
		t.Errorf("fw diff --json: exit %d %v %+v\n%s", code, err, dj, diff)
	}
	var costs firmware.CostTable
	for _, bad := range []string{"1e-300", "0", "-5", "NaN", "1e30"} {
		refuse(": must be 0.1 to 1e+07 MB/s", "fw", "costs", at("c.onicfw"), "--config-mbps", bad)
	}
	if err := json.Unmarshal([]byte(must("fw", "costs", at("c.onicfw"), "--json", "--icap-mbps", "100")), &costs); err != nil {
		t.Fatal(err)
	}
	if k := costs.Kernels[0]; k.Kernel != "scale-int32" || k.Cost.Bytes != 1_000_000 || k.Cost.Total.Milliseconds() != 10 || costs.Full.Total.Milliseconds() != 1253 {
		t.Errorf("costs: %+v full %+v", costs.Kernels, costs.Full)
	}
	// Build -> sign -> verify -> load -> run: the image goes into onicA of
	// the two-party scenario at 50 µs (on a board fast enough to finish
	// within the run), an unsigned one is refused at 100 µs.
	scen := strings.Replace(string(read(t, "../emu/scenario/scenarios/two-party.yaml")), "    host: A\n",
		"    host: A\n    board: {config_mbps: 3822500, icap_mbps: 258693.6, link_down: 1us, rescan: 1us, optical_bring_up: 1us}\n    hold_tlps: 8192\n", 1)
	if err := os.WriteFile(at("scen.yaml"), []byte(scen), 0o644); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		ONICs []struct {
			Name    string
			Deploys []struct {
				Outcome, Kind, Signer, Image, Error string
				ReflashNs                           float64 `json:"reflash_ns"`
				Held                                uint64
			}
			ReflashNs float64 `json:"reflash_ns"`
			Kernels   []struct{ Name string }
		}
	}
	// A refused deployment fails the run (the report is still written)
	// unless refusals are allowed.
	code, out, errs = onic(t, "", "emu", "run", "--scenario-file", at("scen.yaml"), "--json", "--trust", at("trust.yaml"),
		"--deploy", "onicA="+at("a.onicfw")+"@50us", "--deploy", "onicA="+at("b.onicfw")+"@100us")
	if code != 1 || !strings.Contains(errs, "deploy b.onicfw into onicA at 100µs: refused: unsigned image") || strings.Count(errs, "\n") != 1 || !strings.Contains(out, `"outcome":"refused"`) {
		t.Errorf("emu run with a refused deploy: exit %d, %q\n%s", code, errs, out)
	}
	// So does a reflash the run ends before.
	if code, _, errs := onic(t, "", "emu", "run", "--scenario-file", at("scen.yaml"), "--trust", at("trust.yaml"), "--duration", "60us",
		"--deploy", "onicA="+at("a.onicfw")+"@50us"); code != 1 || !strings.Contains(errs, "the run ended (at 60µs) before its") {
		t.Errorf("emu run ending mid-reflash: exit %d, %q", code, errs)
	}
	runOut := must("emu", "run", "--scenario-file", at("scen.yaml"), "--json", "--trust", at("trust.yaml"), "--allow-refused",
		"--deploy", "onicA="+at("a.onicfw")+"@50us", "--deploy", "onicA="+at("b.onicfw")+"@100us")
	if err := json.Unmarshal([]byte(runOut), &rep); err != nil {
		t.Fatal(err)
	}
	o := rep.ONICs[0]
	if len(o.Deploys) != 2 || o.Deploys[0].Outcome != "loaded" || o.Deploys[0].Kind != "full" || o.Deploys[0].Signer != "ops" ||
		o.Deploys[0].Held == 0 || o.ReflashNs != 23000 || o.Deploys[1].Outcome != "refused" || !strings.Contains(o.Deploys[1].Error, "unsigned") ||
		len(o.Kernels) != 1 || o.Kernels[0].Name != "scale-int32" {
		t.Errorf("emu run with deploys: %+v", o)
	}
	runText := must("emu", "run", "--scenario-file", at("scen.yaml"), "--trust", at("trust.yaml"), "--deploy", "onicA="+at("a.onicfw")+"@50us")
	if !strings.Contains(runText, "a.onicfw at 50us: onic-a 1.0.0 signed by ops, full reflash of the whole O-NIC") {
		t.Errorf("text report lacks the deploy:\n%s", runText)
	}
	// Rollback: a release that raises the security version, then the
	// older one over it: refused, unless the operator allows it, and then
	// the report says so.
	newer := writeSpec(t, dir, strings.Replace(string(read(t, spec)), "version: 1.0.0\n", "version: 1.1.0\nsecurity_version: 2\n", 1))
	var built struct {
		File            string
		Name, Version   string
		SecurityVersion uint32 `json:"security_version"`
		Signatures      int
	}
	if err := json.Unmarshal([]byte(must("fw", "build", newer, "--key", at("ops.key"), "--out", at("n.onicfw"), "--json")), &built); err != nil ||
		built.File != at("n.onicfw") || built.Version != "1.1.0" || built.SecurityVersion != 2 || built.Signatures != 1 {
		t.Errorf("fw build --json: %v %+v", err, built)
	}
	code, _, errs = onic(t, "", "emu", "run", "--scenario-file", at("scen.yaml"), "--trust", at("trust.yaml"),
		"--deploy", "onicA="+at("n.onicfw")+"@20us", "--deploy", "onicA="+at("a.onicfw")+"@60us")
	if code != 1 || !strings.Contains(errs, "refused: security version rollback: static region: onic-a 1.0.0 has security version 0, the running onic-a 1.1.0 has 2") {
		t.Errorf("emu run rolling back: exit %d, %q", code, errs)
	}
	var down struct {
		ONICs []struct{ Deploys []cluster.DeployReport }
	}
	runOut = must("emu", "run", "--scenario-file", at("scen.yaml"), "--json", "--trust", at("trust.yaml"), "--allow-downgrade",
		"--deploy", "onicA="+at("n.onicfw")+"@20us", "--deploy", "onicA="+at("a.onicfw")+"@60us")
	if err := json.Unmarshal([]byte(runOut), &down); err != nil {
		t.Fatal(err)
	}
	if ds := down.ONICs[0].Deploys; len(ds) != 2 || ds[1].Outcome != "loaded" || len(ds[1].Downgrade) != 1 || !strings.HasPrefix(ds[1].Downgrade[0], "static region:") {
		t.Errorf("allowed downgrade: %+v", ds)
	}
	refuse("--allow-downgrade: needs --deploy or --replay with --trust", "emu", "run", "--allow-downgrade")
	// Costs -> plan -> replay: the board's kernel costs feed the planner,
	// whose plan the emulator replays with kernel images from fw build.
	must("fw", "build", spec, "--kernel-slot", "0", "--key", at("ops.key"), "--out", at("k0.onicfw"))
	if err := os.WriteFile(at("costs.json"), []byte(must("fw", "costs", at("a.onicfw"), "--json", "--icap-mbps", "258693.6")), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := "onics:\n  - name: onicA\n    slots: 1\n    tasks: [{kernel: scale-int32, duration: 5us}, {kernel: scale-int32, duration: 5us}]\n"
	if err := os.WriteFile(at("trace.yaml"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(at("plan.json"), []byte(must("fw", "plan", at("trace.yaml"), "--costs", at("costs.json"), "--json")), 0o644); err != nil {
		t.Fatal(err)
	}
	refuse("has plans by optimal and by lru; pick one with --replay-policy", "emu", "run", "--scenario-file", at("scen.yaml"), "--trust", at("trust.yaml"),
		"--deploy", "onicA="+at("a.onicfw")+"@50us", "--replay", at("plan.json")+"@80us", "--replay-kernels", at("k0.onicfw"))
	var replayed struct {
		ONICs []struct {
			Replays []cluster.ReplayReport
		}
	}
	runOut = must("emu", "run", "--scenario-file", at("scen.yaml"), "--json", "--trust", at("trust.yaml"), "--deploy", "onicA="+at("a.onicfw")+"@50us",
		"--replay", at("plan.json")+"@80us", "--replay-policy", "optimal", "--replay-kernels", at("k0.onicfw"))
	if err := json.Unmarshal([]byte(runOut), &replayed); err != nil {
		t.Fatal(err)
	}
	if rs := replayed.ONICs[0].Replays; len(rs) != 1 || rs[0].Loads != 1 || rs[0].Loaded != 1 || rs[0].PlanReflashNs != 10000 || rs[0].ReflashNs != 10000 || rs[0].LateNs != 0 {
		t.Errorf("replay: %+v", rs)
	}
	refuse("steps[0] loads scale-int32 into slot 0: no kernel image", "emu", "run", "--scenario-file", at("scen.yaml"), "--trust", at("trust.yaml"),
		"--replay", at("plan.json"), "--replay-policy", "lru")
	refuse("--replay: needs --trust", "emu", "run", "--replay", at("plan.json"))
	refuse("not 'onic fw plan --json' output", "emu", "run", "--trust", at("trust.yaml"), "--replay", at("trust.yaml"))
	refuse("needs --trust", "emu", "run", "--deploy", "onicA="+at("a.onicfw"))
	refuse("is not an O-NIC", "emu", "run", "--trust", at("trust.yaml"), "--deploy", "onicZ="+at("a.onicfw"))

	// Damaged files: one line each, naming the file and the problem.
	b := read(t, at("c.onicfw"))
	if err := os.WriteFile(at("trunc.onicfw"), b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	refuse("trunc.onicfw: malformed image", "fw", "inspect", at("trunc.onicfw"))
	b[len(b)-100] ^= 1 // in the last payload, the bitstream
	if err := os.WriteFile(at("bad.onicfw"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	refuse("bad.onicfw: corrupted payload: slot0.bit", "fw", "verify", at("bad.onicfw"))
	refuse("unknown device", "fw", "build", "--out", at("x.onicfw"), writeSpec(t, dir, strings.Replace(string(read(t, spec)), "xcvu9p", "xc7z020", 1)))
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeSpec(t *testing.T, dir, src string) string {
	p := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFirmwarePlanCLI: onic fw plan on the example trace: the optimum
// beats LRU on onicA, JSON carries every step, bad traces are one line.
func TestFirmwarePlanCLI(t *testing.T) {
	trace := "../firmware/testdata/trace.yaml"
	code, out, errs := onic(t, "", "fw", "plan", trace)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"onicA        optimal         9      2      7           58ms", "onicA        lru             9      2      9           98ms"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	code, out, _ = onic(t, "", "fw", "plan", trace, "--policy", "optimal", "--json")
	var plans []struct {
		ONIC    string
		Reflash int64 `json:"reflash_ns"`
		Steps   []struct {
			Stall int64 `json:"stall_ns"`
		}
	}
	if err := json.Unmarshal([]byte(out), &plans); code != 0 || err != nil || len(plans) != 2 || len(plans[0].Steps) != 9 || plans[1].Reflash != 29_200_000 {
		t.Fatalf("--json: exit %d, %v, %+v", code, err, plans)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(bad, []byte("onics:\n  - {name: x, slots: 1, tasks: [{kernel: nope}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = onic(t, "", "fw", "plan", bad)
	if code != 1 || !strings.Contains(errs, "onics[0] (x): tasks[0]: kernel \"nope\" has no load time") || strings.Count(errs, "\n") != 1 {
		t.Errorf("bad trace: exit %d %q", code, errs)
	}
}
