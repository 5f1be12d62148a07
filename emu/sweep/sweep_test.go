package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSpec(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEveryItem: a field path with [*] sets the field in every item of
// the list, so a point can give both ends of a circuit one lane plan
// (setting one end alone is refused: the ports could never train).
func TestEveryItem(t *testing.T) {
	s, err := Load(writeSpec(t, "scenario: two-party\nvary:\n  - field: onics[*].lane_plan\n    values: [16x8.25Gbps, 4x25.78125Gbps]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"16x8.25Gbps", "4x25.78125Gbps"} {
		cfg, err := s.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range cfg.ONICs {
			if o.LanePlan != want {
				t.Errorf("point %d: %s's lane plan %q, want %q", i, o.Name, o.LanePlan, want)
			}
		}
	}
	for _, c := range []struct{ spec, err string }{
		{"scenario: two-party\nvary:\n  - field: onics[onicA].lane_plan\n    values: [4x25.78125Gbps]\n", "could never train"},
		{"scenario: two-party\nvary:\n  - field: mems[*].reconfig\n    values: [1ms]\n", "no such list"},
		{"scenario: two-party\nvary:\n  - field: duration[*]\n    values: [1ms]\n", "not a list with items"},
	} {
		if _, err := Load(writeSpec(t, c.spec)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want an error with %q", c.spec, err, c.err)
		}
	}
}
