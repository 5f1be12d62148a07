package hostif_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoDriverDoc: docs/hostif.md's Go driver, as a newcomer follows it:
// its shell commands make a module outside the checkout, its main.go goes
// in, and `go mod tidy` and `go run` (offline, GOPROXY=off) build it and
// run it against `onic emu serve`, started here. The program finds the
// O-NIC and its BARs, reads the register map's version and counters and
// writes through the window; its output has the doc's lines. Run again
// against the O-NICs' generated cards (onic emu serve --rtl), it prints
// the same.
func TestGoDriverDoc(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "hostif.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec := string(doc)
	i := strings.Index(sec, "## Go client\n")
	if i < 0 {
		t.Fatal("docs/hostif.md has no Go client section")
	}
	sec = sec[i:]
	if j := strings.Index(sec[1:], "\n## "); j >= 0 {
		sec = sec[:j+1]
	}
	blocks := regexp.MustCompile("(?ms)^```(sh go-driver|go main.go|)\n(.*?)^```").FindAllStringSubmatch(sec, -1)
	var sh []string
	var mainGo, sample string
	for _, b := range blocks {
		switch b[1] {
		case "sh go-driver":
			sh = append(sh, b[2])
		case "go main.go":
			mainGo = b[2]
		case "":
			if sample == "" {
				sample = b[2]
			}
		}
	}
	if len(sh) != 2 || mainGo == "" || sample == "" {
		t.Fatalf("the Go client section has %d shell blocks, main.go %v, sample output %v", len(sh), mainGo != "", sample != "")
	}

	s := &session{t: t, dir: t.TempDir()}
	s.onic = filepath.Join(s.dir, "onic")
	run(t, goTool(), "build", "-o", s.onic, "onic/cmd/onic")
	s.serve()
	work := t.TempDir()
	bash := func(script, dir string) string {
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ONIC="+root, "GOPROXY=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docs/hostif.md's commands\n%s\nin %s: %v\n%s", script, dir, err, out)
		}
		return string(out)
	}
	bash(sh[0], work)
	mod := filepath.Join(work, "my-driver")
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(mainGo), 0o644); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(sh[1], "\n") {
		if strings.Contains(l, "emu serve") {
			continue // the test's own server
		}
		lines = append(lines, strings.ReplaceAll(l, "/tmp/onic.sock", s.socket))
	}
	out := bash(strings.Join(lines, "\n"), mod)
	t.Logf("my-driver:\n%s", out)
	// Each line of the doc's sample output, up to its first "0x" or
	// number, is a line of the program's.
	for _, l := range strings.Split(strings.TrimSpace(sample), "\n") {
		prefix := regexp.MustCompile(`^[^0-9"]*`).FindString(l)
		if !strings.Contains(out, prefix) {
			t.Errorf("the program printed no line starting %q (the doc's %q)", prefix, l)
		}
	}
	for _, want := range []string{"O-NIC at 01:00.0", "register map 2.0", "read back through the window: UR"} {
		if !strings.Contains(out, want) {
			t.Errorf("the program printed no %q", want)
		}
	}
	// The same program against the O-NICs' generated cards (onic emu
	// serve --rtl, interpreted: compiling them is make soak's) prints
	// the same.
	s.report()
	s.serve("--rtl", "--rtl-interpret")
	var rtlLines []string
	for _, l := range lines {
		rtlLines = append(rtlLines, strings.ReplaceAll(l, "go mod tidy -e", "true"))
	}
	if rtl := bash(strings.Join(rtlLines, "\n"), mod); rtl != strings.TrimPrefix(out, out[:strings.Index(out, "O-NIC at")]) {
		t.Errorf("against the cards the program printed\n%s\nagainst the model\n%s", rtl, out)
	}
	if rep := s.report(); rep["rtl"] == nil {
		t.Errorf("the --rtl server's report has no rtl section")
	}
}
