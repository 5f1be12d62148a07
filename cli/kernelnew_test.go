package cli

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestKernelNew: in a copy of this checkout, `onic kernel new` writes a
// kernel (two inputs) that a freshly built onic lists and passes with
// `onic kernel test` (simulator and Icarus), and whose scaffolded Go test
// passes — all as written, unmodified. Bad names, a built-in's name and
// existing files are refused.
func TestKernelNew(t *testing.T) {
	tools.Long(t)
	t.Parallel() // its own temporary directories, the command run in-process with its own buffers
	tools.Require(t, "go")
	tools.Require(t, "iverilog")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cp := t.TempDir()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (rel == ".git" || rel == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(cp, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(cp, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command("go", args...)
		cmd.Dir = cp
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	// Without --dir, in a checkout: into its kernels package.
	if out := run("run", "./cmd/onic", "kernel", "new", "abs-diff", "--inputs", "2"); !strings.Contains(out, filepath.Join(cp, "kernels", "abs_diff.go")) {
		t.Fatalf("new: %q", out)
	}
	// The onic with the new kernel in it, built once for what follows.
	bin := filepath.Join(t.TempDir(), "onic")
	run("build", "-o", bin, "./cmd/onic")
	withKernel := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = cp
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	if b, err := withKernel("kernel", "new", "abs-diff"); err == nil || !strings.Contains(b, `kernel name "abs-diff": a built-in kernel has it`) {
		t.Errorf("new over an existing kernel: %v %s", err, b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"Abs_Diff"}, `kernel name "Abs_Diff": use up to 48 lower-case letters`},
		{[]string{strings.Repeat("a", 250)}, `use up to 48 lower-case letters`},
		{[]string{"x", "--dir", filepath.Join(t.TempDir(), "m"), "--module", "github.com/../../evil"}, `invalid path element ".."`},
		{[]string{"sum-int32"}, `kernel name "sum-int32": a built-in kernel has it`},
		{[]string{"x", "--inputs", "3"}, "--inputs 3"},
	} {
		if code, _, errs := onic(t, "", append([]string{"kernel", "new"}, c.args...)...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("new %v: exit %d %q, want %q", c.args, code, errs, c.want)
		}
	}
	if out, err := withKernel("kernel", "list"); err != nil || !strings.Contains(out, "abs-diff") {
		t.Fatalf("list after new: %v\n%s", err, out)
	}
	out, err := withKernel("kernel", "test", "abs-diff", "--rtl", "icarus")
	if err != nil || !strings.Contains(out, "abs-diff") || strings.Contains(out, "FAIL") {
		t.Fatalf("kernel test: %v\n%s", err, out)
	}
	run("test", "-count=1", "-run", "TestAbsDiff$", "./kernels")
}

// TestKernelNewModule does what a user outside onic's tree does: `onic
// kernel new --dir` into an empty directory outside the checkout, then,
// there and unmodified, `go test ./...` and `go run . kernel test NAME`
// (the three-way proof passes), `kernel list` and `kernel gen` with the
// kernel added to the built-in ones; then a deliberate mistake in the
// kernel's hardware (a sum where the reference takes a difference) is
// caught by both. Offline (GOPROXY=off): the module builds from what
// onic's checkout already has.
func TestKernelNewModule(t *testing.T) {
	tools.Long(t)
	t.Parallel() // subprocesses only: it runs beside the others
	tools.Require(t, "go")
	tools.Require(t, "iverilog")
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "abs-diff")
	if code, _, errs := onic(t, "", "kernel", "new", "abs-diff", "--inputs", "2", "--dir", dir, "--onic", root, "--module", "example.com/absdiff"); code != 0 {
		t.Fatalf("new: exit %d %s", code, errs)
	}
	if code, _, errs := onic(t, "", "kernel", "new", "other", "--dir", dir, "--onic", root); code != 1 || !strings.Contains(errs, "not empty") {
		t.Errorf("new into a used directory: exit %d %q", code, errs)
	}
	if code, _, errs := onic(t, "", "kernel", "new", "other", "--dir", t.TempDir(), "--onic", t.TempDir()); code != 1 || !strings.Contains(errs, "--onic: no onic go.mod") {
		t.Errorf("new with --onic not a checkout: exit %d %q", code, errs)
	}
	tmp := t.TempDir()
	gocmd := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// TMPDIR: the failure reports' waveforms go with the test.
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "TMPDIR="+tmp)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	must := func(args ...string) string {
		out, err := gocmd(args...)
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	must("test", "-count=1", "./...")
	if out := must("run", ".", "kernel", "test", "abs-diff"); !strings.Contains(out, "abs-diff") || strings.Contains(out, "FAIL") {
		t.Fatalf("kernel test:\n%s", out)
	}
	must("build", "-o", "onic-abs", ".")
	bin := filepath.Join(dir, "onic-abs")
	if out, err := exec.Command(bin, "kernel", "list").CombinedOutput(); err != nil || !strings.Contains(string(out), "abs-diff") || !strings.Contains(string(out), "sum-int32") {
		t.Errorf("kernel list: %v\n%s", err, out)
	}
	rtl := filepath.Join(t.TempDir(), "rtl")
	if out, err := exec.Command(bin, "kernel", "gen", "abs-diff", "--out", rtl).CombinedOutput(); err != nil {
		t.Errorf("kernel gen: %v\n%s", err, out)
	} else if _, err := os.Stat(filepath.Join(rtl, "onic_kernel_abs_diff.v")); err != nil {
		t.Errorf("kernel gen: %v", err)
	}

	// The mistake: the hardware adds where the reference subtracts.
	src := filepath.Join(dir, "absdiff", "absdiff.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), "d := m.Sub(m.Sext(in[0], 33), m.Sext(in[1], 33))", "d := m.Add(m.Sext(in[0], 33), m.Sext(in[1], 33))", 1)
	if bad == string(b) {
		t.Fatalf("%s: the line to change is not there", src)
	}
	if err := os.WriteFile(src, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := gocmd("run", ".", "kernel", "test", "abs-diff"); err == nil || !strings.Contains(out, "FAIL") {
		t.Errorf("kernel test of a wrong kernel: %v\n%s", err, out)
	}
	if out, err := gocmd("test", "-count=1", "./..."); err == nil || !strings.Contains(out, "simulator vs reference") {
		t.Errorf("go test of a wrong kernel: %v\n%s", err, out)
	}
}
