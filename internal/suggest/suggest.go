// Package suggest finds the name a user most likely meant when the one
// they gave is not known: a misspelt command, flag, scenario, kernel or
// YAML field.
package suggest

// Nearest is the name in names closest to s by edit distance, if it is
// at most a third of s's length plus one away (lanz: lanes, two edits);
// "" when none is. Ties go
// to the alphabetically first, so the answer does not depend on the
// order of names.
func Nearest(s string, names []string) string {
	best, bestD := "", len(s)/3+2
	for _, c := range names {
		if d := Distance(s, c); d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cur := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return row[len(b)]
}
