package board

import (
	"strings"
	"testing"

	"onic/pcie/lanes"
)

// TestPresets: every preset names its sources, has two cages of four
// channels with their reference clocks, and takes its default plan;
// Lookup ignores case and lists the presets when it finds none; Check
// refuses plans the cages or the wrapper cannot take, naming why.
func TestPresets(t *testing.T) {
	for _, b := range Presets {
		if len(b.Sources) < 2 || b.Part == "" || b.PCIe.RefclkP == "" || b.PCIe.Perst == "" {
			t.Errorf("%s: incomplete preset", b.Name)
		}
		for _, c := range b.Cages {
			if len(c.Channels) != 4 || c.RefclkP == "" || c.RefclkMHz == 0 {
				t.Errorf("%s %s: incomplete cage", b.Name, c.Name)
			}
		}
		if err := b.Check(DefaultPlan); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		if got, err := Lookup(strings.ToUpper(b.Name)); err != nil || got.Name != b.Name {
			t.Errorf("Lookup(%q): %v", strings.ToUpper(b.Name), err)
		}
	}
	if _, err := Lookup("kc705"); err == nil || !strings.Contains(err.Error(), "u55c, u250, vcu118") {
		t.Errorf("Lookup(kc705): %v", err)
	}
	b, _ := Lookup("u250")
	for _, c := range []struct {
		plan lanes.Plan
		want string
	}{
		{lanes.Default, "needs 16 lanes a port"},
		{lanes.Plan{Lanes: 4, KbpsPerLane: 30_000_000}, "takes up to 28 Gb/s"},
		{lanes.Plan{Lanes: 3, KbpsPerLane: 10_000_000}, "lanes 3"},
	} {
		if err := b.Check(c.plan); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.plan, err, c.want)
		}
	}
}
