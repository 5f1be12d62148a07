package cli

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rtlCompile runs TestRTLCompiled, which builds compiled cards with go
// (minutes of CPU): make soak sets it.
var rtlCompile = flag.Bool("rtl-compile", false, "run TestRTLCompiled (make soak)")

// TestRTLCompiled: onic emu run --rtl, from an onic built as make builds
// it, compiles the scenario's cards once into the cache (saying so on
// standard error), runs again in the compiled onic, and gives the report
// the interpreted cards give (--rtl-interpret) but for the speed line; a
// second run finds the compiled onic built and says nothing.
func TestRTLCompiled(t *testing.T) {
	if !*rtlCompile {
		t.Skip("builds compiled cards with go (minutes): make soak runs it (-rtl-compile)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "onic")
	if out, err := exec.Command("go", "build", "-o", bin, "onic/cmd/onic").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "ONIC_CHECKOUT="+root)
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"emu", "run", "--rtl", "--duration", "20us"}, args...)...)
		cmd.Env, cmd.Dir = env, dir
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil {
			t.Fatalf("onic emu run --rtl %v: %v\n%s", args, err, errs.String())
		}
		return regexp.MustCompile(`(?m)^speed:.*$`).ReplaceAllString(out.String(), ""), errs.String()
	}
	compiled, errs := run()
	if !strings.Contains(errs, "compiling 2 card model(s)") {
		t.Fatalf("the first run did not compile the cards:\n%s", errs)
	}
	again, errs := run()
	if errs != "" || again != compiled {
		t.Fatalf("the second run: %q, and its report differs", errs)
	}
	interpreted, _ := run("--rtl-interpret")
	if interpreted != compiled {
		t.Fatalf("compiled and interpreted cards report differently:\n%s\n%s", compiled, interpreted)
	}
}
