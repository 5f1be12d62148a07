package suggest

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"phased", "pipeline", "two-party", "two-party-read", "scenario", "scenario-file"}
	for _, c := range []struct{ in, want string }{
		{"phasd", "phased"},
		{"scenaro", "scenario"},
		{"two-pary", "two-party"},
		{"xyz", ""},  // nothing near
		{"pipe", ""}, // 4 edits from pipeline: too far for 4 letters
		{"phased", "phased"},
		{"lanz", ""}, // not in names
	} {
		if got := Nearest(c.in, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"lanz", "lanes"}, // two edits in four letters
		{"mpss", "mps"},
	} {
		if got := Nearest(c.in, []string{"lanes", "mps", "name"}); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
