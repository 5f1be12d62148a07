// Package linediff compares two texts line by line (with go-diff's
// line mode) and prints the result the way onic's golden-file tests and
// `onic fw diff` show it: each line marked "-" (only in the first), "+"
// (only in the second) or " " (in both).
package linediff

import (
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Unified is every line of a and b in diff order, each marked "-", "+"
// or " ", each ending in a newline.
func Unified(a, b string) string { return diff(a, b, true) }

// Changes is only the lines that differ, marked "-" or "+", as they are
// (empty when a and b are the same).
func Changes(a, b string) string { return diff(a, b, false) }

func diff(a, b string, unified bool) string {
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
		default:
			if !unified {
				continue
			}
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			out.WriteString(mark + l)
			if unified && !strings.HasSuffix(l, "\n") {
				out.WriteString("\n")
			}
		}
	}
	return out.String()
}
