package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestYosysRetriesABCCrash: a Yosys run that ABC crashes in is run once
// more; a run that fails otherwise, or crashes twice, is not retried.
func TestYosysRetriesABCCrash(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "runs")
	// A stand-in yosys: crashes ABC on the first run, succeeds after.
	fake := filepath.Join(dir, "yosys")
	script := `#!/bin/sh
echo run >> ` + count + `
n=$(wc -l < ` + count + `)
case "$MODE" in
crash-once) [ "$n" -eq 1 ] && { echo 'ERROR: ABC: execution of command "yosys-abc -s -f /tmp/x/abc.script 2>&1" failed: return code 134.'; exit 1; }; echo ok ;;
crash) echo 'ERROR: ABC: execution of command "yosys-abc -s -f /tmp/x/abc.script 2>&1" failed: return code 139.'; exit 1 ;;
other) echo 'ERROR: syntax error'; exit 1 ;;
esac
`
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode string
		runs int
		ok   bool
	}{{"crash-once", 2, true}, {"crash", 2, false}, {"other", 1, false}} {
		os.Remove(count)
		t.Setenv("MODE", c.mode)
		out, err := runYosys(fake, "script")
		b, _ := os.ReadFile(count)
		if runs := strings.Count(string(b), "run"); runs != c.runs || (err == nil) != c.ok {
			t.Errorf("%s: %d runs, error %v (%s)", c.mode, runs, err, out)
		}
	}
}
