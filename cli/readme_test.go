package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"onic/testbenches/tools"
)

// TestReadme runs every ```sh block of README.md's "Using it" as written,
// in order, in a scratch directory that holds what the commands name from
// the checkout (bin/onic, built as make does, and the emu/ and firmware/
// files), and checks each journey printed what it says it does.
func TestReadme(t *testing.T) {
	tools.Long(t)
	t.Parallel() // subprocesses only: it runs beside the others
	for _, tool := range []string{"go", "bash", "lspci", "iverilog", "verilator", "yosys"} {
		tools.Require(t, tool)
	}
	root := checkoutOnic(t)
	doc, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	for _, d := range []string{"bin", "emu", "firmware"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(scratch, d)); err != nil {
			t.Fatal(err)
		}
	}
	using := string(doc)
	if i := strings.Index(using, "## Using it"); i >= 0 {
		using = using[i:]
	}
	blocks := regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindAllStringSubmatch(using, -1)
	if len(blocks) < 7 {
		t.Fatalf("README's Using it has %d sh blocks", len(blocks))
	}
	var all strings.Builder
	for _, b := range blocks {
		if strings.Contains(b[1], "ip netns exec") {
			for _, tool := range []string{"ip", "ping", "iperf3"} {
				tools.Require(t, tool)
			}
			if os.Geteuid() != 0 {
				if tools.InCI() {
					t.Fatal("README's emu net block needs root (network namespaces); CI runs as root")
				}
				t.Log("skipping README's emu net block: it needs root")
				continue
			}
		}
		cmd := exec.Command("bash", "-e", "-c", b[1])
		cmd.Dir = scratch
		// (The --rtl journey runs interpreted here: compiling the cards
		// costs minutes of CPU, and TestRTLCompiled in make soak covers
		// it.)
		cmd.Env = append(os.Environ(), "GOPROXY=off", "TMPDIR="+t.TempDir(), "ONIC_EMU_SERVE_RTL_INTERPRET=true", "ONIC_EMU_RUN_RTL_INTERPRET=true")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README block:\n%s\nfailed: %v\n%s", b[1], err, out)
		}
		all.Write(out)
	}
	for _, want := range []string{
		"phased ",                              // emu scenarios
		"accounting: ",                         // emu run
		"MWr",                                  // tlp decode --text of the capture
		"Gb/s",                                 // linkbench
		`"kind":"MWr"`,                         // tlp decode JSON
		"\n60000040010000ff",                   // the demo's first write, encoded back to hex
		"onic0",                                // pcie tree
		"Network controller: Device 0ace:0001", // lspci -F decoding the dump
		"verilator -Wall: clean",               // hdl check
		"fp32-to-bf16     7 ok",                // kernel test
		"wrote my-abs/go.mod",                  // kernel new
		"image onic-a 1.0.0",                   // fw inspect
		"validated in the emulator",            // plan --validate
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the README's commands printed no %q", want)
		}
	}
	for _, f := range []string{"phased.json", "phased.html", "run.pcapng", "serve-report.json", "hostif-hdl/onic_pcie_manager_regs.h", "rtl/onic_top.v", "rtl-manager/onic_pcie_manager.v", "onic-a.onicfw", "onic-a/static/build.tcl", "onic-a/slot0/files.f"} {
		if _, err := os.Stat(filepath.Join(scratch, f)); err != nil {
			t.Errorf("the README's commands made no %s: %v", f, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "serve-report.json")); err != nil || !strings.Contains(string(b), `"scenario":"host-interface"`) {
		t.Errorf("emu serve stopped with SIGINT wrote no report: %v %.200q", err, b)
	}
	if os.Geteuid() == 0 {
		// emu net: the pings crossed, iperf3 finished, the report came.
		for _, want := range []string{" 0% packet loss", "receiver"} {
			if !strings.Contains(all.String(), want) {
				t.Errorf("the README's emu net block printed no %q", want)
			}
		}
		for _, f := range []string{"net.log", "net-mems.log"} {
			if b, err := os.ReadFile(filepath.Join(scratch, f)); err != nil || !strings.Contains(string(b), "frames out") {
				t.Errorf("emu net stopped with SIGINT wrote no report in %s: %v %.300q", f, err, b)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(scratch, "net-mems.log")); !strings.Contains(string(b), "MEMS reconfiguration") {
			t.Errorf("the README's emu net with a MEMS phase reported no reconfiguration: %.600q", b)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", all.String())
	}
}

var (
	onicOnce  sync.Once
	onicRoot  string
	onicBuild error
)

// checkoutOnic builds onic where make puts it, bin/onic of this checkout
// (once per test binary), and returns the checkout's root: the tests that
// run the docs' commands as a reader would, with that binary.
func checkoutOnic(t *testing.T) string {
	t.Helper()
	onicOnce.Do(func() {
		if onicRoot, onicBuild = filepath.Abs(".."); onicBuild != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(onicRoot, "bin", "onic"), "./cmd/onic")
		build.Dir = onicRoot
		if out, err := build.CombinedOutput(); err != nil {
			onicBuild = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if onicBuild != nil {
		t.Fatal(onicBuild)
	}
	return onicRoot
}
