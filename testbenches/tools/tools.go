// Package tools finds the external programs onic's tests drive (Icarus
// Verilog, Verilator, Yosys, lspci, tshark, gcc and the msgpack-c headers)
// and applies the project's policy when one is missing: with CI=true the
// test fails, otherwise it is skipped with a message saying how to
// install it (`make deps`).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package tools

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// packages maps each command to the Debian package that provides it.
var packages = map[string]string{
	"iverilog":  "iverilog",
	"vvp":       "iverilog",
	"verilator": "verilator",
	"yosys":     "yosys",
	"lspci":     "pciutils",
	"tshark":    "tshark",
	"gcc":       "gcc",
	"vcd2fst":   "gtkwave",
	"fst2vcd":   "gtkwave",
	"chromium":  "chromium",
	"tclsh":     "tcl",
	"script":    "bsdutils",
	"ip":        "iproute2",
	"ping":      "iputils-ping",
	"iperf3":    "iperf3",
	"nc":        "netcat-openbsd",
	"sbatch":    "slurm-wlm",
	"slurmctld": "slurm-wlm",
	"slurmd":    "slurm-wlm",
	"munged":    "munge",
	"mungekey":  "munge",
}

// InCI reports whether the CI environment variable is set to a true value.
func InCI() bool {
	v, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && v
}

// Have reports whether command name is on PATH (for a test that uses a
// tool when it is there and does without it otherwise).
func Have(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// RequireRoot is for a test that needs root (network namespaces, TAP
// devices, system daemons): as another user it fails under CI=true (CI
// runs as root) and is skipped otherwise; why says what needs it.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if InCI() {
		t.Fatal(why + " needs root; CI runs as root")
	}
	t.Skip(why + " needs root")
}

// Require returns the path of command name. If it is not installed the
// test fails under CI=true and is skipped otherwise.
func Require(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	pkg := packages[name]
	if pkg == "" {
		pkg = name
	}
	msg := name + " not found on PATH (Debian package " + pkg + "; `make deps` installs it)"
	if InCI() {
		t.Fatal(msg + "; CI=true makes a missing tool a failure")
	}
	t.Skip(msg)
	return ""
}

// RequireFile is Require for a file a Debian package installs (a C
// header, a library): path must exist, else the test fails under CI=true
// and is skipped otherwise.
func RequireFile(t testing.TB, path, pkg string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	msg := path + " not found (Debian package " + pkg + "; `make deps` installs it)"
	if InCI() {
		t.Fatal(msg + "; CI=true makes a missing tool a failure")
	}
	t.Skip(msg)
}

// Long skips a test that takes more than a few seconds when the tests run
// with -short: `make check`, the quick loop while editing. `make test`
// (and CI) run without -short, so nothing is skipped there.
func Long(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("takes long: make test runs it, make check (-short) does not")
	}
}
