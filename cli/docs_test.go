package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"onic/testbenches/tools"
)

// TestDocsCommands runs every sh block of docs/*.md as written (README.md
// and kernel-guide.md have tests of their own), in a
// scratch directory that holds the checkout's emu/ and firmware/ and the
// files the pages name as yours (my.yaml, my-cluster.yaml: the two-party
// scenario), with onic on PATH. A line that starts `onic emu serve` runs
// until it says it listens, then gets SIGINT and must exit 0.
func TestDocsCommands(t *testing.T) {
	t.Parallel() // subprocesses only: it runs beside the others
	for _, tool := range []string{"go", "bash", "iverilog", "verilator", "yosys"} {
		tools.Require(t, tool)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "onic"), "onic/cmd/onic").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	scratch := t.TempDir()
	for _, d := range []string{"emu", "firmware"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(scratch, d)); err != nil {
			t.Fatal(err)
		}
	}
	two, err := os.ReadFile(filepath.Join(root, "emu", "scenario", "scenarios", "two-party.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"my.yaml", "my-cluster.yaml"} {
		if err := os.WriteFile(filepath.Join(scratch, f), two, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOPROXY=off", "TMPDIR="+t.TempDir())
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, page := range pages {
		if filepath.Base(page) == "kernel-guide.md" {
			continue
		}
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```").FindAllStringSubmatch(string(doc), -1) {
			var script []string
			for _, line := range strings.Split(strings.ReplaceAll(b[1], "\\\n", " "), "\n") {
				if strings.HasPrefix(line, "onic emu serve ") {
					serveOnce(t, line, scratch, env)
					ran++
					continue
				}
				script = append(script, line)
			}
			if strings.TrimSpace(strings.Join(script, "")) == "" {
				continue
			}
			cmd := exec.Command("bash", "-e", "-c", strings.Join(script, "\n"))
			cmd.Dir, cmd.Env = scratch, env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s block:\n%s\nfailed: %v\n%s", filepath.Base(page), b[1], err, out)
			}
			ran++
		}
	}
	if ran < 8 {
		t.Errorf("only %d blocks or servers ran", ran)
	}
}

// serveOnce runs an `onic emu serve` line until it listens, stops it with
// SIGINT and requires a clean exit.
func serveOnce(t *testing.T, line, dir string, env []string) {
	t.Helper()
	if i := strings.Index(line, "#"); i >= 0 {
		line = line[:i]
	}
	cmd := exec.Command("bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	var errs syncBuffer
	cmd.Stderr, cmd.Stdout = &errs, &bytes.Buffer{}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errs.String(), " mode)") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Errorf("%s: did not listen in 20 s\n%s", line, errs.String())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s: %v\n%s", line, err, errs.String())
	}
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
