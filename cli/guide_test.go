package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

// TestKernelGuide runs docs/kernel-guide.md as a newcomer would: every
// ```sh block in order, each command as written, from an empty directory
// outside the checkout, with onic built where `make run` puts it
// (bin/onic) and ONIC naming the checkout (the guide's `export ONIC=`
// line, which names the reader's checkout, is the one line not run). A
// ```go FILE block replaces the functions at the end of FILE from
// "// Lane builds" on, or the whole file when it is one (it starts with
// its package clause or the package's comment), as the guide says; a
// ```yaml FILE block is saved as FILE. Offline: GOPROXY=off.
func TestKernelGuide(t *testing.T) {
	tools.Long(t)
	t.Parallel() // subprocesses only: it runs beside the others
	for _, tool := range []string{"go", "bash", "iverilog", "verilator", "yosys"} {
		tools.Require(t, tool)
	}
	root := checkoutOnic(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "kernel-guide.md"))
	if err != nil {
		t.Fatal(err)
	}
	cwd := t.TempDir()
	state := filepath.Join(t.TempDir(), "cwd")
	var outputs []string
	blocks := regexp.MustCompile("(?ms)^```(sh|go|yaml)( \\S+)?\n(.*?)^```").FindAllStringSubmatch(string(doc), -1)
	ran := 0
	for _, b := range blocks {
		kind, file, body := b[1], strings.TrimSpace(b[2]), b[3]
		switch {
		case kind == "sh":
			var lines []string
			for _, l := range strings.Split(body, "\n") {
				if !strings.HasPrefix(l, "export ONIC=") {
					lines = append(lines, l)
				}
			}
			script := "set -e\n" + strings.Join(lines, "\n") + "\npwd > " + state + "\n"
			cmd := exec.Command("bash", "-c", script)
			cmd.Dir = cwd
			cmd.Env = append(os.Environ(), "ONIC="+root, "GOPROXY=off", "GOFLAGS=-mod=readonly")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("guide block in %s:\n%s\nfailed: %v\n%s", cwd, body, err, out)
			}
			outputs = append(outputs, string(out))
			next, err := os.ReadFile(state)
			if err != nil {
				t.Fatal(err)
			}
			cwd = strings.TrimSpace(string(next))
			ran++
		case file == "":
			continue // an example, not a file to write
		case kind == "yaml":
			if err := os.WriteFile(filepath.Join(cwd, file), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		case kind == "go":
			path := filepath.Join(cwd, file)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("the guide edits %s: %v", file, err)
			}
			if strings.HasPrefix(body, "// Package ") || strings.HasPrefix(body, "package ") {
				// The whole file, as the guide says.
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			i := strings.Index(string(src), "// Lane builds")
			if i < 0 {
				t.Fatalf("%s has no \"// Lane builds\" to replace from", file)
			}
			if err := os.WriteFile(path, append(src[:i:i], body...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := strings.Join(outputs, "\n")
	for _, want := range []string{
		"wrote my-abs/go.mod",
		"ok  \tmy-abs/myabs",
		"kernel my-abs in onicA slot 1 (timed by its cycle simulation)",
		"onic_kernel_my_abs",
		"slot 1     my-abs 0.1.0",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the guide's commands printed no %q:\n%s", want, all)
		}
	}
	if ran < 5 {
		t.Errorf("only %d shell blocks ran", ran)
	}
	// The image names a kernel only the user's onic knows; onic itself
	// still reads, inspects and verifies it (an image is data).
	abs := filepath.Join(filepath.Dir(cwd), "my-abs") // the guide ends in beat-sum, beside it
	inspect := exec.Command(filepath.Join(root, "bin", "onic"), "fw", "inspect", "my-fw.onicfw")
	inspect.Dir = abs
	if out, err := inspect.CombinedOutput(); err != nil || !strings.Contains(string(out), "slot 1     my-abs 0.1.0") {
		t.Errorf("onic's own fw inspect of the user's image: %v\n%s", err, out)
	}
	// The edit took: the negation, not the absolute value, is what runs.
	if src, err := os.ReadFile(filepath.Join(abs, "myabs", "myabs.go")); err != nil || !strings.Contains(string(src), "Go's int32 negation") {
		t.Errorf("the guide's edit of myabs.go did not happen: %v", err)
	}
	// The reduction: a beat-level kernel, its staged sums named after
	// what they hold, latency 2 (one stage).
	if src, err := os.ReadFile(filepath.Join(cwd, "rtl", "onic_kernel_beat_sum.v")); err != nil || !strings.Contains(string(src), "stage1_quarter3") {
		t.Errorf("the beat-sum kernel's Verilog has no register stage1_quarter3: %v", err)
	}
	if !regexp.MustCompile(`(?m)^beat-sum\s+\d+ ok\s+ok\s+ok\s+2\s`).MatchString(all) {
		t.Errorf("kernel test beat-sum did not pass three ways with latency 2:\n%s", all)
	}
}
