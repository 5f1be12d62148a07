package linediff

import "testing"

func TestDiff(t *testing.T) {
	a, b := "one\ntwo\nthree\n", "one\n2\nthree\nfour"
	if got, want := Unified(a, b), " one\n-two\n+2\n three\n+four\n"; got != want {
		t.Errorf("Unified: %q, want %q", got, want)
	}
	if got, want := Changes(a, b), "-two\n+2\n+four"; got != want {
		t.Errorf("Changes: %q, want %q", got, want)
	}
	if got := Changes(a, a); got != "" {
		t.Errorf("Changes of equal texts: %q", got)
	}
}
