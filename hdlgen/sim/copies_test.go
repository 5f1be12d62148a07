package sim

import "testing"

// TestMergeCopies: runs of three or more word copies with consecutive
// destinations and sources become one array copy; shorter runs, runs
// broken by another line or a gap, and runs whose words overlap (where
// word-by-word order matters) stay as they are.
func TestMergeCopies(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"run of four", "v[10] = v[20]\nv[11] = v[21]\nv[12] = v[22]\nv[13] = v[23]\n",
			"*(*[4]uint64)(v[10:14]) = *(*[4]uint64)(v[20:24])\n"},
		{"two words stay", "v[10] = v[20]\nv[11] = v[21]\n", "v[10] = v[20]\nv[11] = v[21]\n"},
		{"broken by a line", "v[1] = v[9]\nv[2] = v[10]\nx := 1\nv[3] = v[11]\nv[4] = v[12]\nv[5] = v[13]\nv[6] = v[14]",
			"v[1] = v[9]\nv[2] = v[10]\nx := 1\n*(*[4]uint64)(v[3:7]) = *(*[4]uint64)(v[11:15])"},
		{"source gap", "v[1] = v[9]\nv[2] = v[10]\nv[3] = v[12]\n", "v[1] = v[9]\nv[2] = v[10]\nv[3] = v[12]\n"},
		{"overlapping", "v[5] = v[4]\nv[6] = v[5]\nv[7] = v[6]\n", "v[5] = v[4]\nv[6] = v[5]\nv[7] = v[6]\n"},
		{"overlapping downward", "v[4] = v[5]\nv[5] = v[6]\nv[6] = v[7]\n", "v[4] = v[5]\nv[5] = v[6]\nv[6] = v[7]\n"},
		{"adjacent, not overlapping", "v[3] = v[0]\nv[4] = v[1]\nv[5] = v[2]\n",
			"*(*[3]uint64)(v[3:6]) = *(*[3]uint64)(v[0:3])\n"},
		{"masked copy is not a copy", "v[1] = v[9]\nv[2] = v[10]\nv[3] = v[11] & 0x1\n",
			"v[1] = v[9]\nv[2] = v[10]\nv[3] = v[11] & 0x1\n"},
		{"two runs", "v[1] = v[9]\nv[2] = v[10]\nv[3] = v[11]\nv[40] = v[50]\nv[41] = v[51]\nv[42] = v[52]\n",
			"*(*[3]uint64)(v[1:4]) = *(*[3]uint64)(v[9:12])\n*(*[3]uint64)(v[40:43]) = *(*[3]uint64)(v[50:53])\n"},
	} {
		if got := string(mergeCopies([]byte(c.in))); got != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
