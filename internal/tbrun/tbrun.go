// Package tbrun runs a replay testbench under an HDL simulator: a
// directory holding tb.v (module tb, which writes its results to out.log,
// one line per record) and the design's sources, built and run with
// Icarus Verilog or Verilator. The kernels' three-way tests and the
// manager's co-simulation both use it, so the simulators are driven one
// way.
package tbrun

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Icarus compiles tb.v and srcs (paths relative to dir) with iverilog
// (-g2005), runs the result with vvp, and returns out.log's lines.
func Icarus(dir string, srcs []string, iverilog, vvp string) ([]string, error) {
	return IcarusGen(dir, srcs, iverilog, vvp, "2005")
}

// IcarusGen is Icarus for language generation gen ("2005", "2012"):
// under 2009 and later Icarus gives a variable its declared initial
// value before time 0, with no event (IEEE 1800 6.8), where under 2005
// the initialisation is an event at time 0 that wakes always @(*)
// blocks — designs must have their values from time 0 either way, and
// users run both (cocotb passes -g2012).
func IcarusGen(dir string, srcs []string, iverilog, vvp, gen string) ([]string, error) {
	if err := run(dir, iverilog, append([]string{"-g" + gen, "-o", "tb.vvp", "tb.v"}, srcs...)...); err != nil {
		return nil, err
	}
	if err := run(dir, vvp, "-n", "tb.vvp"); err != nil {
		return nil, err
	}
	return Log(filepath.Join(dir, "out.log"))
}

// Verilator builds tb.v and srcs with verilator --binary --timing (and
// the extra flags, optimisation say), runs the binary, and returns
// out.log's lines. The C++ is compiled at -O0 (verilated.mk's OPT_FAST
// and OPT_GLOBAL, which would be -Os): a testbench runs a few thousand
// cycles, so the compile is its cost, not the run (about a tenth less
// CPU for the kernels' and the co-simulation's tests with no ccache;
// speed is measured apart, internal/vbench, at -O3). With ccache on PATH
// the C++ compiles go through it
// (Verilator's OBJCACHE): Verilator's own runtime, the same for every
// build, and any model built before compile once per machine, which
// takes a kernel's build from about 5 s to under 1 s.
func Verilator(dir string, srcs []string, verilator string, extra ...string) ([]string, error) {
	args := append([]string{"--binary", "--timing", "-j", "2", "-MAKEFLAGS", "OPT_FAST=-O0 OPT_GLOBAL=-O0"}, objCache()...)
	args = append(args, extra...)
	args = append(args, "--top-module", "tb", "-Mdir", "obj_dir", "-o", "tb", "tb.v")
	if err := run(dir, verilator, append(args, srcs...)...); err != nil {
		return nil, err
	}
	if err := run(dir, filepath.Join(dir, "obj_dir", "tb")); err != nil {
		return nil, err
	}
	return Log(filepath.Join(dir, "out.log"))
}

// objCache is the flags that build through ccache when it is on PATH
// (none when it is not: the build is the same, only slower).
func objCache() []string {
	if _, err := exec.LookPath("ccache"); err != nil {
		return nil
	}
	return []string{"-MAKEFLAGS", "OBJCACHE=ccache"}
}

// run runs a command in dir; a failure carries the end of its output.
func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, tail(out))
	}
	return nil
}

// tail is the last 4000 bytes of a tool's output: where its error is.
func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Log returns the non-blank lines of a simulator's log, trimmed.
func Log(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}
