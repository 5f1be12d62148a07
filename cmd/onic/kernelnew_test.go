package main

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
	tools.Require(t, "go")
	tools.Require(t, "iverilog")
	root, err := filepath.Abs(filepath.Join("..", ".."))
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
	kdir := filepath.Join(cp, "kernels")
	code, out, errs := onic(t, "", "kernel", "new", "abs-diff", "--inputs", "2", "--dir", kdir)
	if code != 0 || !strings.Contains(out, "abs_diff.go") {
		t.Fatalf("new: exit %d %s %q", code, errs, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"Abs_Diff"}, `kernel name "Abs_Diff": use lower-case letters`},
		{[]string{"sum-int32"}, `kernel name "sum-int32": a built-in kernel has it`},
		{[]string{"abs-diff", "--dir", kdir}, "abs_diff.go: already exists"},
		{[]string{"x", "--inputs", "3"}, "--inputs 3"},
	} {
		if code, _, errs := onic(t, "", append([]string{"kernel", "new"}, c.args...)...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("new %v: exit %d %q, want %q", c.args, code, errs, c.want)
		}
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
	if out := run("run", "./cmd/onic", "kernel", "list"); !strings.Contains(out, "abs-diff") {
		t.Fatalf("list after new:\n%s", out)
	}
	out = run("run", "./cmd/onic", "kernel", "test", "abs-diff", "--rtl", "icarus")
	if !strings.Contains(out, "abs-diff") || strings.Contains(out, "FAIL") {
		t.Fatalf("kernel test:\n%s", out)
	}
	run("test", "-count=1", "-run", "TestAbsDiff$", "./kernels")
}
