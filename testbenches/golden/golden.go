// Package golden compares test output with golden files in the style of
// the Go standard library's go/printer tests: `go test -update` rewrites
// the files, and a mismatch is shown as a readable line diff.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"onic/internal/linediff"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Updating reports whether the test run was asked to rewrite golden files.
func Updating() bool { return *update }

// Check compares got with the golden file at path. With -update it writes
// got to the file instead.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date (run go test with -update); - golden, + got:\n%s", path, Diff(string(want), got))
	}
}

// Diff returns a line-by-line diff of a and b, each line prefixed with "-"
// (only in a), "+" (only in b) or " " (both).
func Diff(a, b string) string { return linediff.Unified(a, b) }
