package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestHDLDemoAndCheck: the demo's Verilog passes 'onic hdl check', whose
// report puts the 512 x 64 FIFO in one block RAM; Verilog with a lint
// warning makes check exit 1; a directory without Verilog is an error.
func TestHDLDemoAndCheck(t *testing.T) {
	tools.Long(t)
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
	for _, name := range []string{"verilator", "iverilog", "yosys"} {
		tools.Require(t, name)
	}
	dir := t.TempDir()
	code, out, errs := onic(t, "", "hdl", "demo", "--out", dir)
	if code != 0 || strings.Count(out, ".v\n") != 2 {
		t.Fatalf("demo: exit %d %s %q", code, errs, out)
	}
	code, out, errs = onic(t, "", "hdl", "check", dir, "--json")
	var r struct {
		Clean   bool
		Modules []struct {
			Module        string
			LUT, FF, BRAM int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Clean || len(r.Modules) != 2 {
		t.Fatalf("check: exit %d %s %q", code, errs, out)
	}
	if m := r.Modules[0]; m.Module != "axis_fifo" || m.BRAM != 1 || m.FF == 0 || m.LUT == 0 {
		t.Errorf("fifo resources %+v", m)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "bad.v"), []byte("`default_nettype none\nmodule bad(input wire a, output wire y);\n  wire spare = a;\n  assign y = a;\nendmodule\n"), 0o644)
	code, out, errs = onic(t, "", "hdl", "check", bad)
	if code != 1 || !strings.Contains(out, "UNUSED") || !strings.Contains(errs, "lint or compile messages") {
		t.Errorf("lint warning: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = onic(t, "", "hdl", "check", t.TempDir())
	if code != 1 || !strings.Contains(errs, "no .v files") {
		t.Errorf("empty directory: exit %d %q", code, errs)
	}
}

// TestHDLGen: 'onic hdl gen' writes the manager and its vendor files,
// the same bytes on a second run, for the default scenario, an O-NIC of
// a scenario file and the large preset; the default's Verilog passes
// 'onic hdl check' (Verilator, Icarus, Yosys) with a resource report; bad
// flags are one-line errors.
func TestHDLGen(t *testing.T) {
	tools.Long(t)
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
	for _, name := range []string{"verilator", "iverilog", "yosys"} {
		tools.Require(t, name)
	}
	dir := t.TempDir()
	code, out, errs := onic(t, "", "hdl", "gen", "--manager-only", "--out", dir)
	if code != 0 || strings.Count(out, dir) != 11 || !strings.Contains(out, "latency 6 cycles (24 ns), II 1; 1 windows") || strings.Contains(out, "onic_top") {
		t.Fatalf("gen --manager-only: exit %d %s %q", code, errs, out)
	}
	again := t.TempDir()
	onic(t, "", "hdl", "gen", "--manager-only", "--out", again)
	for _, f := range []string{"onic_pcie_manager.v", "onic_pcie_manager_windows.v", "onic_pcie_manager_access.v", "onic_axis_skid.v", "files.f", "onic_pcie_manager.xdc", "build.tcl", "onic_pcie_manager_regs.h", "onic_pcie_manager_regs.go", "registers.md", "README.md"} {
		a, err1 := os.ReadFile(filepath.Join(dir, f))
		b, err2 := os.ReadFile(filepath.Join(again, f))
		if err1 != nil || err2 != nil || string(a) != string(b) {
			t.Errorf("%s: not the same on a second run (%v %v)", f, err1, err2)
		}
	}
	code, out, errs = onic(t, "", "hdl", "check", dir, "--json")
	var r struct {
		Clean   bool
		Modules []struct {
			Module         string
			LUT, FF, Depth int
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.Clean || len(r.Modules) != 4 {
		t.Fatalf("check: exit %d %s %q", code, errs, out)
	}
	// Each module is synthesised with what it instances, so the top's
	// figures are the whole design's and cover each submodule's.
	top := map[string]int{}
	for _, m := range r.Modules {
		top[m.Module] = m.LUT
		if m.Module == "onic_pcie_manager" && (m.LUT == 0 || m.Depth == 0) {
			t.Fatalf("check: the top has no LUTs or depth: %+v", m)
		}
		if strings.HasPrefix(m.Module, "onic_axis_skid") && m.FF == 0 {
			t.Errorf("%s has no flip-flops", m.Module)
		}
	}
	if top["onic_pcie_manager"] <= top["onic_pcie_manager_access"]+top["onic_pcie_manager_windows"] {
		t.Errorf("the top's LUTs (%d) do not cover the access check's and the windows' (%v)", top["onic_pcie_manager"], top)
	}
	t.Logf("default manager: %+v", r.Modules)

	scen := filepath.Join(t.TempDir(), "s.yaml")
	src, err := os.ReadFile("../emu/scenario/scenarios/two-party.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// onicB gets a 256-bit manager in the scenario: gen follows it (the
	// emulator times that O-NIC at 256 bits), and --width overrides it.
	src = bytes.Replace(src, []byte("  - name: onicB\n"), []byte("  - name: onicB\n    data_width: 256\n"), 1)
	if !bytes.Contains(src, []byte("data_width: 256")) {
		t.Fatal("two-party.yaml has no onicB entry to edit")
	}
	os.WriteFile(scen, src, 0o644)
	code, out, errs = onic(t, "", "hdl", "gen", "--manager-only", "--scenario-file", scen, "--onic", "onicB", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "256-bit data path") {
		t.Errorf("scenario file with data_width 256: exit %d %s %q", code, errs, out)
	}
	// The whole card needs the PCIE4 block's 512 bits: a one-line error
	// that says what to give instead.
	code, _, errs = onic(t, "", "hdl", "gen", "--scenario-file", scen, "--onic", "onicB", "--out", t.TempDir())
	if code != 1 || !strings.Contains(errs, "256 bits wide") || !strings.Contains(errs, "--manager-only") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("the card at data_width 256: exit %d %q", code, errs)
	}
	code, out, errs = onic(t, "", "hdl", "gen", "--scenario-file", scen, "--onic", "onicB", "--width", "512", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "512-bit data path") {
		t.Errorf("--width 512 over data_width 256: exit %d %s %q", code, errs, out)
	}
	code, out, errs = onic(t, "", "hdl", "gen", "--preset", "large", "--out", t.TempDir())
	if code != 0 || !strings.Contains(out, "64 windows, 512 LUT entries") {
		t.Errorf("large: exit %d %s %q", code, errs, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--width", "128"}, "--width 128: must be 256 or 512"},
		{[]string{"--onic", "onicZ"}, `--onic "onicZ"`},
		{[]string{"--preset", "tiny"}, `--preset "tiny"`},
		{[]string{"--preset", "large", "--onic", "onicA"}, "either a preset"},
		{[]string{"--scenario-file", "/nonexistent.yaml"}, "nonexistent.yaml"},
		{[]string{"--clock", "-5"}, "--clock -5"},
		{[]string{"--manager-only", "--pcie4"}, "give one"},
		{[]string{"--part", "xcvu9p-flga2104-2L-e\nexec id"}, "not an FPGA part name"}, // written into build.tcl
		{[]string{"--name", "../../x"}, `name "../../x": a module name is a letter`},
		{[]string{"--scenario", "nope"}, `"nope"`},
		{[]string{"--scenario", "host-interface", "--scenario-file", "x.yaml"}, "--scenario-file and --scenario: give one or the other"},
	} {
		code, _, errs := onic(t, "", append([]string{"hdl", "gen", "--out", t.TempDir()}, c.args...)...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q (want one line with %q)", c.args, code, errs, c.want)
		}
	}
}

// TestHDLGenCard: by default gen writes the whole card, onic_top (the
// manager behind the adapters to AMD's PCIE4 block, the register block,
// the description capability, an optical link layer on each port), with
// that top's constraints and a build script that creates and configures
// the IP, for the default scenario, the host-interface scenario and the
// large preset, each clean under Verilator -Wall and Icarus; --pcie4, the flag that used to ask for it, still gives the
// same files; a manager narrower than the adapters' 512-bit interface is
// refused.
func TestHDLGenCard(t *testing.T) {
	tools.Long(t)
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
	for _, name := range []string{"verilator", "iverilog"} {
		tools.Require(t, name)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"default", nil},
		{"host-interface", []string{"--scenario-file", "../emu/scenario/scenarios/host-interface.yaml"}},
		{"large", []string{"--preset", "large"}},
		{"offload", []string{"--scenario-file", "../emu/scenario/testdata/offload.yaml"}},
		{"allreduce", []string{"--scenario-file", "../emu/scenario/testdata/allreduce.yaml", "--onic", "onicC"}},
	} {
		dir := t.TempDir()
		code, out, errs := onic(t, "", append([]string{"hdl", "gen", "--out", dir}, c.args...)...)
		for _, want := range []string{"onic_top.v", "onic_pcie_manager_port_in.v", "onic_pcie4_cq.v", "onic_pcie4_cc.v", "onic_pcie4_rq.v", "onic_pcie4_rc.v", "onic_pcie4_cfg_ext.v", "onic_optlink.v", "onic_top.xdc", "onic_top: the whole card"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Fatalf("%s: gen: exit %d %s: no %s in %q", c.name, code, errs, want, out)
			}
		}
		tcl, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
		if err != nil || !strings.Contains(string(tcl), "create_ip -name pcie4_uscale_plus") {
			t.Fatalf("%s: build.tcl creates no PCIE4 IP: %v", c.name, err)
		}
		// The description capability is answered on cfg_ext_*: the IP
		// must hand its user extended space over.
		if !strings.Contains(string(tcl), "CONFIG.ext_pcie_cfg_space_enabled {true}") {
			t.Fatalf("%s: build.tcl does not enable the IP's user extended configuration space", c.name)
		}
		files, err := os.ReadFile(filepath.Join(dir, "files.f"))
		if err != nil || !strings.HasPrefix(string(files), "onic_top.v\n") {
			t.Fatalf("%s: files.f does not start with the top: %v %q", c.name, err, files)
		}
		// Clean under Verilator -Wall (no waivers) and Icarus, every
		// module of the card (Yosys takes minutes: docs/hdl.md has its
		// figures for the default).
		code, out, errs = onic(t, "", "hdl", "check", "--lint-only", dir)
		if code != 0 || !strings.Contains(out, "verilator -Wall: clean\niverilog -g2005: clean\n") ||
			!strings.Contains(out, "GTY wrapper gty/onic_gty_rx: verilator -Wall: clean; iverilog -g2005: clean") {
			t.Fatalf("%s: check --lint-only: exit %d %s %q", c.name, code, errs, out)
		}
		// Every kernel slot is a reconfigurable partition; the offload
		// scenario's fp32-to-bf16 is in slot 1 and the allreduce's
		// two-input sum-int32 in slot 0 of onicC, the other slots empty.
		for k := range 4 {
			cell := fmt.Sprintf("card/slot%d_kernel", k)
			if !strings.Contains(string(tcl), "set_property HD.RECONFIGURABLE true [get_cells ${cell_prefix}"+cell+"]") {
				t.Fatalf("%s: build.tcl makes no reconfigurable partition of %s", c.name, cell)
			}
			stub := fmt.Sprintf("dfx/onic_slot%d_kernel_stub.v", k)
			if _, err := os.Stat(filepath.Join(dir, stub)); err != nil || !strings.Contains(string(tcl), stub) {
				t.Fatalf("%s: no black box %s for the static design (%v)", c.name, stub, err)
			}
		}
		for _, k := range []struct{ scenario, line string }{
			{"offload", "# card/slot1_kernel: fp32-to-bf16\n"}, {"allreduce", "# card/slot0_kernel: sum-int32\n"},
		} {
			if has := strings.Contains(string(tcl), k.line); has != (c.name == k.scenario) {
				t.Fatalf("%s: build.tcl has %q: %v", c.name, k.line, has)
			}
		}
		if c.name != "default" {
			continue
		}
		old := t.TempDir()
		if code, _, errs := onic(t, "", "hdl", "gen", "--pcie4", "--out", old); code != 0 || !strings.Contains(errs, "--pcie4 is deprecated") {
			t.Fatalf("--pcie4: exit %d, no deprecation notice in %q", code, errs)
		}
		for _, f := range strings.Fields(string(files)) {
			a, _ := os.ReadFile(filepath.Join(dir, f))
			b, err := os.ReadFile(filepath.Join(old, f))
			if err != nil || string(a) != string(b) {
				t.Errorf("--pcie4 writes %s differently from the default (%v)", f, err)
			}
		}
	}
	// A kernel no card slot can take yet, or a slot the O-NIC has not:
	// one line naming it.
	yaml, err := os.ReadFile("../emu/scenario/testdata/offload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{"name: fp32-to-bf16", "name: crc32c-append", "kernels[0]: kernel crc32c-append sends 1.001 bytes per byte in"},
		{"slot: 1, name", "slot: 9, name", "kernels[0].slot: 9 is not a kernel slot"},
	} {
		f := filepath.Join(t.TempDir(), "s.yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(string(yaml), c.from, c.to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := onic(t, "", "hdl", "gen", "--scenario-file", f, "--out", t.TempDir())
		if code == 0 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s in slot: exit %d %q, want one line with %q", c.to, code, errs, c.want)
		}
	}
	code, _, errs := onic(t, "", "hdl", "gen", "--width", "256", "--out", t.TempDir())
	if code == 0 || !strings.Contains(errs, "256 bits") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("the card with 256 bits: exit %d %q", code, errs)
	}
}

// TestProgressOnATerminal: on a terminal (a pty from script(1)), hdl check
// says what it is doing and each module as its synthesis ends, and a fw
// build whose kernel is not cached says it is synthesising; piped, both
// stay quiet.
func TestProgressOnATerminal(t *testing.T) {
	tools.Long(t)
	t.Parallel() // subprocesses only: it runs beside the others
	script := tools.Require(t, "script")
	tools.Require(t, "yosys")
	tools.Require(t, "verilator")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "onic")
	if out, err := exec.Command("go", "build", "-o", bin, "onic/cmd/onic").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	demo := filepath.Join(dir, "demo")
	if out, err := exec.Command(bin, "hdl", "demo", "--out", demo).CombinedOutput(); err != nil {
		t.Fatalf("hdl demo: %v\n%s", err, out)
	}
	onTTY := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(script, "-qec", strings.Join(append([]string{bin}, args...), " "), "/dev/null").CombinedOutput()
		if err != nil {
			t.Fatalf("%v on a terminal: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := onTTY("hdl", "check", demo)
	for _, want := range []string{"onic hdl check: lint of 2 files", "onic hdl check: synthesis of 2 files", "onic hdl check: synthesised axis_skid, ", " of 2 ("} {
		if !strings.Contains(out, want) {
			t.Errorf("hdl check on a terminal printed no %q:\n%s", want, out)
		}
	}
	if out, err := exec.Command(bin, "hdl", "check", "--lint-only", demo).CombinedOutput(); err != nil || strings.Contains(string(out), "onic hdl check:") {
		t.Errorf("hdl check piped: %v, progress lines:\n%s", err, out)
	}
	out = onTTY("kernel", "test", "sum-int32", "--rtl", "icarus", "--timing=false")
	if !strings.Contains(out, "onic kernel test: sum-int32, 1 of 1: against its reference in the simulator, then under icarus (") {
		t.Errorf("kernel test on a terminal said nothing before its row:\n%s", out)
	}
	if out, err := exec.Command(bin, "kernel", "test", "sum-int32", "--rtl", "icarus", "--timing=false").CombinedOutput(); err != nil || strings.Contains(string(out), "onic kernel test:") {
		t.Errorf("kernel test piped: %v, progress lines:\n%s", err, out)
	}
	spec := filepath.Join(root, "firmware", "testdata", "onic-a.yaml")
	out = onTTY("fw", "build", spec, "--no-cache", "--out", filepath.Join(dir, "a.onicfw"))
	if !strings.Contains(out, "onic fw build: synthesising onic_slot0_kernel with Yosys, not in the cache") {
		t.Errorf("a cold fw build on a terminal said nothing:\n%s", out)
	}
}

// TestHDLGenJSON: --json gives the files written and the design's
// figures, and nothing else on standard output.
func TestHDLGenJSON(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := onic(t, "", "hdl", "gen", "--manager-only", "--out", dir, "--json")
	var r struct {
		Files         []string
		Module        string
		DataWidth     int `json:"data_width"`
		LatencyCycles int `json:"latency_cycles"`
	}
	if code != 0 || errs != "" || json.Unmarshal([]byte(out), &r) != nil || r.Module != "onic_pcie_manager" || r.DataWidth != 512 ||
		r.LatencyCycles < 1 || !slices.Contains(r.Files, filepath.Join(dir, "onic_pcie_manager.v")) {
		t.Errorf("hdl gen --json: exit %d, %q, %+v", code, errs, r)
	}
}

// TestHDLGenStale: gen into a directory holding .v files it does not
// write says so on one line (hdl check would take them too); --clean
// removes them, one line each.
func TestHDLGenStale(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := onic(t, "", "hdl", "gen", "--manager-only", "--out", dir); code != 0 || errs != "" {
		t.Fatalf("gen: exit %d, %q", code, errs)
	}
	stale := filepath.Join(dir, "old_design.v")
	if err := os.WriteFile(stale, []byte("module old_design; endmodule\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := onic(t, "", "hdl", "gen", "--manager-only", "--out", dir)
	if code != 0 || !strings.Contains(errs, "1 .v files this run did not write ("+stale+")") || strings.Count(errs, "\n") != 1 {
		t.Errorf("gen over a stale file: exit %d, %q", code, errs)
	}
	code, _, errs = onic(t, "", "hdl", "gen", "--manager-only", "--out", dir, "--clean")
	if _, err := os.Stat(stale); code != 0 || errs != "removed "+stale+"\n" || !os.IsNotExist(err) {
		t.Errorf("gen --clean: exit %d, %q, %v", code, errs, err)
	}
}

// TestHDLGenLinkTimeouts: the optical links' timeouts are durations with
// their unit, whole cycles of the 250 MHz user clock in the link's 16-bit
// timers; what is given reaches the generated link layer, anything else
// is refused with a one-line error.
func TestHDLGenLinkTimeouts(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := onic(t, "", "hdl", "gen", "--out", dir, "--link-credit-timeout", "10us", "--link-lost-timeout", "2.048us",
		"--egress-stall-timeout", "4us"); code != 0 {
		t.Fatalf("gen: exit %d %s", code, errs)
	}
	v, err := os.ReadFile(filepath.Join(dir, "onic_optlink.v"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"credit_wait == 16'h9c4"} { // 2500 cycles
		if !strings.Contains(string(v), want) {
			t.Errorf("onic_optlink.v has no %q", want)
		}
	}
	top, err := os.ReadFile(filepath.Join(dir, "onic_card.v"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "port_a_egress_waited == 10'h3e7"; !strings.Contains(string(top), want) { // 1000 cycles
		t.Errorf("onic_card.v has no %q", want)
	}
	for _, c := range []struct{ args, want string }{
		{"--link-credit-timeout 10", `--link-credit-timeout "10": give a duration with its unit`},
		{"--link-credit-timeout 300us", "from 4ns to 262.14µs"},
		{"--link-replay-timeout 10.001us", "whole number of 4ns cycles"},
		{"--link-lost-timeout -1us", "--link-lost-timeout -1us: must be"},
		{"--link-replay-timeout 8ns", "replay_cycles 2 must exceed ack_cycles"},
		{"--manager-only --link-lost-timeout 1us", "has no optical ports"},
		{"--egress-stall-timeout 1ms", "--egress-stall-timeout 1ms: must be"},
	} {
		args := append([]string{"hdl", "gen", "--out", t.TempDir()}, strings.Fields(c.args)...)
		if code, _, errs := onic(t, "", args...); code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d %q, want %q on one line", c.args, code, errs, c.want)
		}
	}
}

// TestHDLGenLanePlan: the optical ports' lane plan comes from the
// O-NIC's lane_plan, or --lane-plan over it, and configures build.tcl's
// transceiver IP (lanes and line rate) and the README; a plan outside
// the GTY's range or without its unit is refused in one line.
func TestHDLGenLanePlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args     []string
		channels string
		rate     string
	}{
		{nil, "X0Y0 X0Y1 X0Y2 X0Y3 X0Y4 X0Y5 X0Y6 X0Y7 X0Y8 X0Y9 X0Y10 X0Y11 X0Y12 X0Y13 X0Y14 X0Y15", "{8.25}"},
		{[]string{"--lane-plan", "4x28Gbps"}, "X0Y0 X0Y1 X0Y2 X0Y3", "{28}"},
	} {
		dir := t.TempDir()
		if code, _, errs := onic(t, "", append([]string{"hdl", "gen", "--out", dir}, c.args...)...); code != 0 {
			t.Fatalf("%v: exit %d %s", c.args, code, errs)
		}
		tcl, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"set gt_channels(port_a) {" + c.channels + "}", "CONFIG.TX_LINE_RATE " + c.rate, "CONFIG.RX_LINE_RATE " + c.rate} {
			if !strings.Contains(string(tcl), want) {
				t.Errorf("%v: build.tcl has no %q", c.args, want)
			}
		}
	}
	for _, c := range []struct{ plan, want string }{
		{"4x25.78125", "needs its unit"},
		{"4x40Gbps", "must be 0.5 to 32.75Gbps"},
		{"3x10Gbps", "lanes 3 must be"},
	} {
		code, _, errs := onic(t, "", "hdl", "gen", "--out", t.TempDir(), "--lane-plan", c.plan)
		if code != 1 || !strings.Contains(errs, "--lane-plan: ") || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("--lane-plan %s: exit %d %q, want %q on one line", c.plan, code, errs, c.want)
		}
	}
}

// TestHDLCheckPart: --part synthesises for the part's family (UltraScale+
// cells for an UltraScale+ part), refuses a part whose family onic does
// not know or --uram for a family without UltraRAM, and without it a
// directory whose build.tcl names an UltraScale+ part gets a line saying
// how to estimate for it.
func TestHDLCheckPart(t *testing.T) {
	tools.Long(t)
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
	tools.Require(t, "yosys")
	dir := t.TempDir()
	for f, src := range map[string]string{
		"acc.v":     "`default_nettype none\nmodule acc(input wire clk, input wire [7:0] d, output reg [7:0] q);\n  initial q = 8'h0;\n  always @(posedge clk) q <= q + d;\nendmodule\n`default_nettype wire\n",
		"build.tcl": "set part xcvu9p-flga2104-2L-e\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := onic(t, "", "hdl", "check", dir)
	if code != 0 || !strings.Contains(out, "(build.tcl builds for xcvu9p-flga2104-2L-e, an UltraScale+ part: --part xcvu9p-flga2104-2L-e estimates for it)") {
		t.Errorf("check: exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = onic(t, "", "hdl", "check", dir, "--part", "xcvu9p-flga2104-2L-e")
	if code != 0 || !strings.Contains(out, "(UltraScale+ cells, UltraRAM included)") || strings.Contains(out, "build.tcl builds") {
		t.Errorf("check --part: exit %d %s\n%s", code, errs, out)
	}
	for _, c := range []struct{ args, want string }{
		{"--part lfe5u-85f", "--part lfe5u-85f: not a part whose family onic knows"},
		{"--part xc7a35t-cpg236-1 --uram", "--uram: xc7a35t-cpg236-1 is a 7-series part, which has no UltraRAM"},
		{"--part x;y", "--part \"x;y\": not an FPGA part name"},
	} {
		code, _, errs := onic(t, "", append([]string{"hdl", "check", dir}, strings.Fields(c.args)...)...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d %q, want %q", c.args, code, errs, c.want)
		}
	}
}

// TestHDLGenBoard: --board writes the board top under board/ with the
// board's part and, without a lane plan, a QSFP28 cage's 4x25.78125Gbps,
// says so in a line, onic hdl check lints it, and it leaves the card's
// own files as they were;
// an explicit plan the cages take is used; a plan they do not take, an
// unknown board, a part that is not the board's and --manager-only are
// refused in one line each.
func TestHDLGenBoard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errs := onic(t, "", "hdl", "gen", "--board", "vcu118", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	if !strings.Contains(out, "onic_board_vcu118: onic_top on the AMD VCU118 evaluation kit (xcvu9p-flga2104-2L-e), ports on QSFP1 and QSFP2 at 4x25.78125Gbps") {
		t.Errorf("no board line in:\n%s", out)
	}
	for _, f := range []string{"board/onic_board_vcu118.v", "board/onic_board_vcu118.xdc", "board/onic_gty_tx.v", "board/onic_gty_rx.v", "board/standin/onic_pcie4.v"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// onic hdl check lints the board top too.
	if code, out, errs := onic(t, "", "hdl", "check", "--lint-only", dir); code != 0 ||
		!strings.Contains(out, "board top onic_board_vcu118 (with board/standin/ for AMD's IP): verilator -Wall: clean; iverilog -g2005: clean") {
		t.Errorf("hdl check: exit %d %s\n%s", code, errs, out)
	}
	plain := t.TempDir()
	if code, _, errs := onic(t, "", "hdl", "gen", "--out", plain, "--part", "xcvu9p-flga2104-2L-e", "--lane-plan", "4x25.78125Gbps"); code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	for _, f := range []string{"onic_top.v", "onic_card.v", "files.f"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(plain, f))
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("%s differs with --board", f)
		}
	}
	if code, out, errs := onic(t, "", "hdl", "gen", "--board", "u55c", "--out", t.TempDir(), "--json"); code != 0 ||
		!strings.Contains(out, `"board": "u55c",`) || !strings.Contains(out, `"board_top": "onic_board_u55c",`) ||
		!strings.Contains(out, `"lane_plan": "4x25.78125Gbps"`) {
		t.Errorf("--json: exit %d %s %s", code, errs, out)
	}
	d28 := t.TempDir()
	if code, _, errs := onic(t, "", "hdl", "gen", "--board", "u250", "--lane-plan", "2x28Gbps", "--out", d28); code != 0 {
		t.Fatalf("2x28Gbps: exit %d %s", code, errs)
	}
	if tcl, _ := os.ReadFile(filepath.Join(d28, "build.tcl")); !strings.Contains(string(tcl), "set gt_channels(port_a) {X1Y44 X1Y45}") {
		t.Error("2x28Gbps: port A not on QSFP0's first two channels")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--board", "u250", "--lane-plan", "16x8.25Gbps"}, "needs 16 lanes a port; QSFP0 has 4"},
		{[]string{"--board", "u250", "--lane-plan", "4x30Gbps"}, "takes up to 28 Gb/s"},
		{[]string{"--board", "kc705"}, `board "kc705": not a preset (one of u55c, u250, vcu118)`},
		{[]string{"--board", "u250", "--part", "xcvu9p-flga2104-2L-e"}, "the AMD Alveo U250 has xcu250-figd2104-2L-e"},
		{[]string{"--board", "u250", "--manager-only"}, "--manager-only writes the manager alone"},
	} {
		code, _, errs := onic(t, "", append([]string{"hdl", "gen", "--out", t.TempDir()}, c.args...)...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d %q, want %q on one line", c.args, code, errs, c.want)
		}
	}
}
