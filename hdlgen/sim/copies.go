package sim

import (
	"bytes"
	"fmt"
	"strconv"
)

// minBlockCopy is the fewest consecutive words mergeCopies moves as one
// array. The Go compiler moves a fixed-size array with 16-byte loads and
// stores from two base registers; for two words that is no shorter than
// two word moves with their 32-bit displacements.
const minBlockCopy = 3

// mergeCopies rewrites each run of consecutive lines of the source GoSource
// prints that copy words one by one, v[d] = v[s], v[d+1] = v[s+1], ...,
// into one array assignment,
//
//	*(*[n]uint64)(v[d:d+n]) = *(*[n]uint64)(v[s:s+n])
//
// which the compiler moves 16 bytes at a time with short displacements: a
// 512-bit bus register loaded from another moves in 4 loads and 4 stores
// instead of 8 and 8, in about half the bytes of code. A stage of a wide
// data path is such a copy, and straight-line generated code is bounded by
// how many bytes of instructions the processor fetches, not only by how
// many it runs. Runs whose source and destination words overlap are left
// as they are: word by word, a later copy would read an earlier one's
// result.
func mergeCopies(src []byte) []byte {
	lines := bytes.Split(src, []byte("\n"))
	out := make([]byte, 0, len(src))
	for k := 0; k < len(lines); {
		d, s, ok := wordCopy(lines[k])
		n := 1
		for ok && k+n < len(lines) {
			d2, s2, ok2 := wordCopy(lines[k+n])
			if !ok2 || d2 != d+n || s2 != s+n {
				break
			}
			n++
		}
		if !ok || n < minBlockCopy || d < s+n && s < d+n {
			out = append(out, lines[k]...)
			if k++; k < len(lines) {
				out = append(out, '\n')
			}
			continue
		}
		out = fmt.Appendf(out, "*(*[%d]uint64)(v[%d:%d]) = *(*[%d]uint64)(v[%d:%d])", n, d, d+n, n, s, s+n)
		if k += n; k < len(lines) {
			out = append(out, '\n')
		}
	}
	return out
}

// wordCopy parses a line "v[d] = v[s]".
func wordCopy(line []byte) (d, s int, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte("v["))
	if !ok {
		return 0, 0, false
	}
	ds, rest, ok := bytes.Cut(rest, []byte("] = v["))
	if !ok {
		return 0, 0, false
	}
	ss, ok := bytes.CutSuffix(rest, []byte("]"))
	if !ok {
		return 0, 0, false
	}
	d, err1 := strconv.Atoi(string(ds))
	s, err2 := strconv.Atoi(string(ss))
	return d, s, err1 == nil && err2 == nil && d >= 0 && s >= 0
}
