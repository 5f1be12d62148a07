package tlp

import (
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/golden"
)

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
	golden.Check(t, filepath.Join("testdata", "vectors.txt"), b.String())
}
