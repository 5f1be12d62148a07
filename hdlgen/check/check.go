// Package check runs the vendor-neutral tools over generated Verilog:
// Verilator's lint (-Wall, no waivers), Icarus Verilog (-g2005) and Yosys
// synthesis for Xilinx 7-series, whose cell counts and longest
// combinational path it reports per module.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package check

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Resources is what Yosys's synth_xilinx made of one module with
// everything it instances, flattened first (as Vivado's default
// -flatten_hierarchy rebuilt does), so logic is optimised across module
// boundaries and a top's figures are the whole design's.
type Resources struct {
	Module string `json:"module"`
	LUT    int    `json:"lut"`    // LUT1-LUT6
	FF     int    `json:"ff"`     // FDRE, FDSE, FDCE, FDPE
	LUTRAM int    `json:"lutram"` // RAM32M, RAM64M and the like
	BRAM   int    `json:"bram"`   // RAMB18E1, RAMB36E1 (E2 with Options.UltraRAM)
	URAM   int    `json:"uram"`   // URAM288: with Options.UltraRAM only
	DSP    int    `json:"dsp"`    // DSP48E1
	Carry  int    `json:"carry"`  // CARRY4
	// Depth is the logic depth in LUT levels: the longest path between
	// flip-flops, memories and ports after a generic 6-input LUT mapping
	// (abc -lut 6, then ltp -noff). It is measured on that mapping
	// because ltp cannot tell vendor flip-flop cells from logic.
	Depth int `json:"depth"`
	// Timing is the clock estimate on the synth_xilinx netlist
	// (timing.go's delay model): the critical path, its LUT levels and
	// carry cells, and the clock it allows.
	Timing Timing `json:"timing"`
}

// Report is the result of checking a directory.
type Report struct {
	Files     []string    `json:"files"`
	Verilator string      `json:"verilator"` // "clean" or the warnings
	Icarus    string      `json:"icarus"`    // "clean" or the messages
	Modules   []Resources `json:"modules"`
	Clean     bool        `json:"clean"` // no lint or compile messages at all
}

// tool finds a program or says how to get it.
func tool(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed (make deps installs it)", name)
	}
	return p, nil
}

// Lint runs verilator (the binary's path) --lint-only -Wall on the
// design files with top as the top module, and returns what it printed
// (trimmed), or why it failed; "" means clean. onic's bar is that a
// generated design prints nothing.
func Lint(verilator, top string, files []string) string {
	args := append([]string{"--lint-only", "-Wall", "--top-module", top}, files...)
	out, err := exec.Command(verilator, args...).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if err != nil && msg == "" {
		msg = err.Error()
	}
	return msg
}

// roots are the modules of files (one per file, named after it) that no
// other file instantiates: Verilator lints each with the hierarchy under
// it, so every module is linted once, under the design it belongs to,
// where linting each file as its own top parsed the whole directory once
// per file (29 times for the card).
func roots(files []string) ([]string, error) {
	srcs := make([][]byte, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		srcs[i] = b
	}
	var tops []string
	for i, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".v")
		inst := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s+(?:#\s*\(|[A-Za-z_][A-Za-z0-9_$]*\s*\()`)
		used := false
		for j, src := range srcs {
			if j != i && inst.Match(src) {
				used = true
				break
			}
		}
		if !used {
			tops = append(tops, name)
		}
	}
	return tops, nil
}

// Dir checks every .v file in dir (one module per file, named after it).
func Dir(dir string) (Report, error) { return DirProgress(dir, nil) }

// Options change how a check synthesises.
type Options struct {
	// UltraRAM maps for UltraScale+ (synth_xilinx -family xcup -uram):
	// large memories become URAM288 cells where Yosys finds them a fit,
	// as Vivado would on the O-NIC's part. The default maps to 7-series
	// cells, which have no UltraRAM (the figures docs/ quote).
	UltraRAM bool
	// UltraScale maps for UltraScale (synth_xilinx -family xcu), which
	// has UltraScale block RAM and DSP cells and no UltraRAM.
	UltraScale bool
	// BlackBoxes are Verilog files whose modules are black boxes to the
	// synthesis (read with read_verilog -lib): a board top's vendor IP,
	// whose stand-ins give the ports and keep what drives them.
	BlackBoxes []string
}

// Progress hears a check advance: a step ("lint", "compile", "synthesis")
// has begun, or a module's synthesis has finished (done of total).
type Progress func(step, module string, done, total int)

// DirProgress is Dir, telling progress (when not nil) what it is doing:
// a large design's synthesis takes minutes.
func DirProgress(dir string, progress Progress) (Report, error) {
	return DirOptions(dir, Options{}, progress)
}

// DirOptions is DirProgress with options.
func DirOptions(dir string, o Options, progress Progress) (Report, error) {
	progress = orQuiet(progress)
	r, err := LintDir(dir, progress)
	if err != nil {
		return r, err
	}
	return r, synthAll(&r, o, progress)
}

// orQuiet is progress, or one that hears nothing when progress is nil.
func orQuiet(progress Progress) Progress {
	if progress == nil {
		return func(string, string, int, int) {}
	}
	return progress
}

// MaxVerilogFile bounds each .v file the checks read.
const MaxVerilogFile = 64 << 20

// vFiles lists the .v files in dir, sorted: each must be a regular file
// (not a FIFO, device or directory, which a tool would block on or fail
// over) of at most MaxVerilogFile bytes.
func vFiles(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.v"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("%s: no .v files", dir)
	}
	sort.Strings(files)
	for _, f := range files {
		st, err := os.Stat(f)
		switch {
		case err != nil:
			return nil, err
		case !st.Mode().IsRegular():
			return nil, fmt.Errorf("%s: not a regular file (%s)", f, st.Mode().Type())
		case st.Size() > MaxVerilogFile:
			return nil, fmt.Errorf("%s: %d bytes, more than the %d MiB a Verilog file may have", f, st.Size(), MaxVerilogFile>>20)
		}
	}
	return files, nil
}

// LintDir is the first half of DirProgress: Verilator -Wall and Icarus
// over every .v file in dir, without the synthesis (the report has no
// Modules). It takes seconds where synthesis takes minutes.
func LintDir(dir string, progress Progress) (Report, error) {
	progress = orQuiet(progress)
	files, err := vFiles(dir)
	if err != nil {
		return Report{}, err
	}
	r := Report{Files: files, Clean: true}
	verilator, err := tool("verilator")
	if err != nil {
		return r, err
	}
	progress("lint", "", 0, len(files))
	var lint []string
	tops, err := roots(files)
	if err != nil {
		return r, err
	}
	for _, top := range tops {
		if msg := Lint(verilator, top, files); msg != "" {
			lint = append(lint, msg)
		}
	}
	r.Verilator = verdict(lint)
	iverilog, err := tool("iverilog")
	if err != nil {
		return r, err
	}
	tmp, err := os.MkdirTemp("", "onic-check")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(tmp)
	progress("compile", "", 0, len(files))
	args := append([]string{"-g2005", "-Wall", "-o", filepath.Join(tmp, "a.out")}, files...)
	var icarus []string
	if out, err := exec.Command(iverilog, args...).CombinedOutput(); err != nil || len(out) != 0 {
		icarus = append(icarus, strings.TrimSpace(string(out)))
	}
	r.Icarus = verdict(icarus)
	r.Clean = len(lint) == 0 && len(icarus) == 0
	return r, nil
}

// LintTop is LintDir's two checks for one top over the given files
// (every module it instances among them): Verilator -Wall and Icarus,
// each "clean" or what it printed. For a design whose files are not one
// directory's, as a board top with the card's and its stand-ins'.
func LintTop(files []string, top string) (verilator, icarus string, err error) {
	vbin, err := tool("verilator")
	if err != nil {
		return "", "", err
	}
	var lint []string
	if msg := Lint(vbin, top, files); msg != "" {
		lint = append(lint, msg)
	}
	ibin, err := tool("iverilog")
	if err != nil {
		return "", "", err
	}
	var comp []string
	args := append([]string{"-g2005", "-Wall", "-s", top, "-o", os.DevNull}, files...)
	if out, err := exec.Command(ibin, args...).CombinedOutput(); err != nil || len(out) != 0 {
		comp = append(comp, strings.TrimSpace(string(out)))
	}
	return verdict(lint), verdict(comp), nil
}

// synthAll runs Yosys on every file's module of r into r.Modules, as
// many at once as there are CPUs: a design's submodules are small beside
// its top, so they mostly run while the top is being synthesised.
func synthAll(r *Report, o Options, progress Progress) error {
	files := r.Files
	yosys, err := tool("yosys")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "onic-check")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	r.Modules = make([]Resources, len(files))
	errs := make([]error, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	progress("synthesis", "", 0, len(files))
	for range min(runtime.NumCPU(), len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				top := strings.TrimSuffix(filepath.Base(files[i]), ".v")
				r.Modules[i], errs[i] = synth(yosys, tmp, files, top, o)
				mu.Lock()
				done++
				progress("synthesis", top, done, len(files))
				mu.Unlock()
			}
		}()
	}
	// Largest files first, so the long runs start at once.
	order := make([]int, len(files))
	size := make([]int64, len(files))
	for i, f := range files {
		order[i] = i
		if st, err := os.Stat(f); err == nil {
			size[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[order[a]] > size[order[b]] })
	for _, i := range order {
		work <- i
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// Synth runs Yosys's synthesis alone (no lint, no compile) of module top
// over every .v file in dir: the resources a design takes, for a caller
// that checked the Verilog already.
func Synth(dir, top string) (Resources, error) { return synthDir(dir, top, synth) }

// SynthFresh is Synth without the kept results: Yosys runs whatever it
// found before (onic fw build --no-cache).
func SynthFresh(dir, top string) (Resources, error) { return synthDir(dir, top, synthYosys) }

// SynthFiles is Synth over the given files, with o (its black boxes,
// its family).
func SynthFiles(files []string, top string, o Options) (Resources, error) {
	return synthIn(files, top, o, synth)
}

// synthDir runs run on top over dir's .v files in a scratch directory.
func synthDir(dir, top string, run func(yosys, tmp string, files []string, top string, o Options) (Resources, error)) (Resources, error) {
	files, err := vFiles(dir)
	if err != nil {
		return Resources{}, err
	}
	return synthIn(files, top, Options{}, run)
}

// synthIn runs run on top over files, with o, in a scratch directory.
func synthIn(files []string, top string, o Options, run func(yosys, tmp string, files []string, top string, o Options) (Resources, error)) (Resources, error) {
	yosys, err := tool("yosys")
	if err != nil {
		return Resources{}, err
	}
	tmp, err := os.MkdirTemp("", "onic-synth")
	if err != nil {
		return Resources{}, err
	}
	defer os.RemoveAll(tmp)
	return run(yosys, tmp, files, top, o)
}

func verdict(msgs []string) string {
	if len(msgs) == 0 {
		return "clean"
	}
	return strings.Join(msgs, "\n")
}

var ltpRE = regexp.MustCompile(`Longest topological path in \S+ \(length=(\d+)\)`)

// source is this package's own code, part of every cached result's key:
// the figures are read from Yosys's output here (the delay model of
// timing.go included), so a change to the code is a change of result.
//
//go:embed check.go timing.go
var source embed.FS

// sourceSum is the SHA-256 of this package's source, once per process.
var sourceSum = sync.OnceValue(func() []byte {
	h := sha256.New()
	_ = fs.WalkDir(source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := source.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return err
	})
	return h.Sum(nil)
})

// CacheEnv names the environment variable that turns the synthesis
// cache off when set to "off".
const CacheEnv = "ONIC_SYNTH_CACHE"

// yosysVersion is `yosys -V`'s output, once per process.
var yosysVersion = sync.OnceValues(func() ([]byte, error) {
	y, err := tool("yosys")
	if err != nil {
		return nil, err
	}
	return exec.Command(y, "-V").Output()
})

// cachePath is where synth keeps the result for top over files with o:
// onic/synth-results in the user's cache directory, under the SHA-256
// of Yosys's version, this package's code, o, top and every file's name
// and bytes (everything the result depends on; Yosys is deterministic).
// "" when there is no cache: turned off, no cache directory, a file that
// cannot be read.
func cachePath(files []string, top string, o Options) string {
	if os.Getenv(CacheEnv) == "off" {
		return ""
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	v, err := yosysVersion()
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write(v)
	h.Write(sourceSum())
	fmt.Fprintf(h, "top %s uram %v xcu %v\n", top, o.UltraRAM, o.UltraScale)
	for _, f := range append(slices.Clone(o.BlackBoxes), files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
		h.Write(b)
	}
	return filepath.Join(dir, "onic", "synth-results", top+"-"+hex.EncodeToString(h.Sum(nil))[:40]+".json")
}

// synth runs synth_xilinx on top and reads its cell counts and depth,
// or returns what it found for the same input before (cachePath): a
// design's synthesis takes from seconds to minutes and the same one is
// checked again and again.
func synth(yosys, tmp string, files []string, top string, o Options) (Resources, error) {
	key := cachePath(files, top, o)
	if key != "" {
		if b, err := os.ReadFile(key); err == nil {
			var r Resources
			if json.Unmarshal(b, &r) == nil && r.Module == top {
				return r, nil
			}
		}
	}
	r, err := synthYosys(yosys, tmp, files, top, o)
	if err == nil && key != "" && os.MkdirAll(filepath.Dir(key), 0o755) == nil {
		b, _ := json.Marshal(r)
		// Written whole and renamed, so a reader never sees half of it; a
		// cache that cannot be written is only slower.
		if f, err := os.CreateTemp(filepath.Dir(key), ".tmp-*"); err == nil {
			_, werr := f.Write(b)
			if f.Close() == nil && werr == nil {
				_ = os.Rename(f.Name(), key)
			}
			os.Remove(f.Name())
		}
	}
	return r, err
}

// synthYosys is synth without the cache.
func synthYosys(yosys, tmp string, files []string, top string, o Options) (Resources, error) {
	stat := filepath.Join(tmp, top+".json")
	// -noiopad: the module is a core inside a design, not the FPGA top.
	netlist := filepath.Join(tmp, top+".netlist.json")
	family := ""
	switch {
	case o.UltraRAM:
		family = "-family xcup -uram "
	case o.UltraScale:
		family = "-family xcu "
	}
	lib := ""
	if len(o.BlackBoxes) > 0 {
		lib = "read_verilog -lib " + strings.Join(o.BlackBoxes, " ") + "; "
	}
	script := fmt.Sprintf("%sread_verilog %s; synth_xilinx %s-noiopad -flatten -top %s; tee -q -o %s stat -json; write_json %s",
		lib, strings.Join(files, " "), family, top, stat, netlist)
	out, err := runYosys(yosys, script)
	if err != nil {
		return Resources{}, fmt.Errorf("yosys on %s: %v\n%s", top, err, tail(string(out)))
	}
	var st struct {
		Design struct {
			Cells map[string]int `json:"num_cells_by_type"`
		} `json:"design"`
	}
	b, err := os.ReadFile(stat)
	if err != nil {
		return Resources{}, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return Resources{}, fmt.Errorf("yosys stat for %s: %v", top, err)
	}
	res := Resources{Module: top}
	nb, err := os.ReadFile(netlist)
	if err != nil {
		return Resources{}, err
	}
	if res.Timing, err = estimate(nb, top); err != nil {
		return Resources{}, fmt.Errorf("yosys netlist for %s: %v", top, err)
	}
	for cell, n := range st.Design.Cells {
		switch {
		case strings.HasPrefix(cell, "LUT"):
			res.LUT += n
		case strings.HasPrefix(cell, "FD"):
			res.FF += n
		case strings.HasPrefix(cell, "RAMB"):
			res.BRAM += n
		case strings.HasPrefix(cell, "URAM"):
			res.URAM += n
		case strings.HasPrefix(cell, "RAM"):
			res.LUTRAM += n
		case strings.HasPrefix(cell, "DSP"):
			res.DSP += n
		case cell == "CARRY4":
			res.Carry += n
		}
	}
	// Logic depth on a generic LUT6 mapping, flip-flops kept as Yosys's own
	// cells (which ltp -noff leaves out) and memories as single cells.
	depth := fmt.Sprintf("%sread_verilog %s; hierarchy -top %s; proc; flatten; opt; wreduce; memory -nomap; opt; techmap; opt; abc -lut 6; opt_clean; ltp -noff",
		lib, strings.Join(files, " "), top)
	out, err = runYosys(yosys, depth)
	if err != nil {
		return Resources{}, fmt.Errorf("yosys (depth) on %s: %v\n%s", top, err, tail(string(out)))
	}
	m := ltpRE.FindStringSubmatch(string(out))
	if m == nil {
		return Resources{}, fmt.Errorf("yosys (depth) on %s: no longest path in its output", top)
	}
	res.Depth, _ = strconv.Atoi(m[1])
	return res, nil
}

// abcCrash is how Yosys reports ABC dying of an assertion or a fault
// (return code 134, SIGABRT, or 139, SIGSEGV).
var abcCrash = regexp.MustCompile(`ABC: execution of command .* failed: return code 13[49]`)

// runYosys runs a Yosys script, once more if ABC crashed: ABC's
// assertions are known to fail now and then on input that maps cleanly
// on another run (YosysHQ/yosys#174, berkeley-abc/abc#68; seen once in
// onic's CI on a 16-word FIFO that passes every other time). A second
// crash is reported as it is.
func runYosys(yosys, script string) ([]byte, error) {
	out, err := exec.Command(yosys, "-p", script).CombinedOutput()
	if err != nil && abcCrash.Match(out) {
		out, err = exec.Command(yosys, "-p", script).CombinedOutput()
	}
	return out, err
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-10):], "\n")
}
