package tlp

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sergi/go-diff/diffmatchpatch"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestVectorsFile keeps testdata/vectors.txt, the hand-checked vectors as
// "name<TAB>hex" lines, in step with the table in tlp_test.go. Other
// packages' tests (the CLI's) read it. Run with -update to rewrite it.
func TestVectorsFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Hand-checked TLP vectors, one per line: name<TAB>hex. Generated from\n")
	b.WriteString("# tlp/tlp_test.go by `go test ./tlp -run TestVectorsFile -update`.\n")
	for _, v := range vectors {
		b.WriteString(v.name + "\t" + strings.ReplaceAll(v.hex, " ", "") + "\n")
	}
	checkGolden(t, filepath.Join("testdata", "vectors.txt"), b.String())
}

// checkGolden compares got with the golden file at path, showing a
// readable diff on mismatch; with -update it rewrites the file.
func checkGolden(t *testing.T, path, got string) {
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
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date (run with -update); - golden, + got:\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff returns a line-by-line diff of a and b, lines prefixed with
// "-" (only in a), "+" (only in b) or " " (both).
func lineDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out strings.Builder
	for _, d := range diffs {
		mark := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			mark = "-"
		case diffmatchpatch.DiffInsert:
			mark = "+"
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				out.WriteString(mark + l)
			}
		}
	}
	return out.String()
}
