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

	"onic/firmware"
	"onic/internal/bittest"
	"onic/testbenches/tools"
)

// TestDocsCommands runs every sh block of docs/*.md as written (README.md
// and kernel-guide.md have tests of their own), each page's blocks in
// order in a scratch directory of their own (docsScratch), with onic on
// PATH. A line that starts `onic emu serve` runs until it says it
// listens, then gets SIGINT and must exit 0, unless it ends with & (the
// block then stops it itself).
func TestDocsCommands(t *testing.T) {
	tools.Long(t)
	t.Parallel() // subprocesses only: it runs beside the others
	for _, tool := range []string{"go", "bash", "iverilog", "verilator", "yosys", "gcc", "tshark"} {
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
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOPROXY=off", "TMPDIR="+t.TempDir(), "ONIC_EMU_SERVE_RTL_INTERPRET=true", "ONIC_EMU_RUN_RTL_INTERPRET=true")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Each page in parallel with the others (its blocks in order, in a
	// scratch directory of its own): the three long ones — kernels.md,
	// hostif.md, firmware.md, 30 to 40 s each — then overlap.
	// Blocks at the margin and indented ones (in a list item).
	blockRE := regexp.MustCompile("(?ms)^( *)```sh\n(.*?)^ *```")
	docs, blocks := map[string][]byte{}, 0
	for _, page := range pages {
		if filepath.Base(page) == "kernel-guide.md" {
			continue
		}
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		docs[page] = doc
		blocks += len(blockRE.FindAllIndex(doc, -1))
	}
	if blocks < 8 {
		t.Errorf("only %d sh blocks in docs/*.md", blocks)
	}
	for _, page := range pages {
		doc, ok := docs[page]
		if !ok {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			t.Parallel()
			scratch := docsScratch(t, root)
			for _, b := range blockRE.FindAllStringSubmatch(string(doc), -1) {
				body := regexp.MustCompile("(?m)^"+b[1]).ReplaceAllString(b[2], "")
				var script []string
				for _, line := range strings.Split(strings.ReplaceAll(body, "\\\n", " "), "\n") {
					// A server in the foreground is started, seen to listen
					// and stopped; one put in the background (&) is the
					// block's own to stop.
					if strings.HasPrefix(line, "onic emu serve ") && !strings.HasSuffix(strings.TrimSpace(strings.SplitN(line, "#", 2)[0]), "&") {
						serveOnce(t, line, scratch, env)
						continue
					}
					script = append(script, line)
				}
				if strings.TrimSpace(strings.Join(script, "")) == "" {
					continue
				}
				cmd := exec.Command("bash", "-e", "-c", strings.Join(script, "\n"))
				cmd.Dir, cmd.Env = scratch, env
				start := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("%s block:\n%s\nfailed: %v\n%s", filepath.Base(page), body, err, out)
				}
				t.Logf("%s: a block of %d lines, %.1f s", filepath.Base(page), len(script), time.Since(start).Seconds())
			}
		})
	}
}

// docsScratch is an empty directory for one page's blocks, holding the
// checkout's emu/, firmware/ and tlp/ and the files the pages name as
// the reader's own: my.yaml and my-cluster.yaml (the two-party scenario)
// and slot0.bit (a stand-in partial bitstream for the default part).
func docsScratch(t *testing.T, root string) string {
	t.Helper()
	scratch := t.TempDir()
	for _, d := range []string{"emu", "firmware", "tlp"} {
		if err := os.Symlink(filepath.Join(root, d), filepath.Join(scratch, d)); err != nil {
			t.Fatal(err)
		}
	}
	two, err := os.ReadFile(filepath.Join(root, "emu", "scenario", "scenarios", "two-party.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{"my.yaml": two, "my-cluster.yaml": two, "slot0.bit": bittest.Bit(firmware.DefaultPart, 1<<20)} {
		if err := os.WriteFile(filepath.Join(scratch, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return scratch
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
