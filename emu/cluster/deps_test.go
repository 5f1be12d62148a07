package cluster

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoBuilderDeps holds the layering rule of docs/architecture.md: no
// package of the emulator depends on the manager's RTL generator, the
// bundle writer, the firmware builder or anything that runs an external
// tool.
func TestNoBuilderDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "onic/emu/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps gave only %d packages", len(deps))
	}
	forbidden := []string{"onic/hdlgen/manager", "onic/hdlgen/bundle", "onic/hdlgen/check", "onic/firmware/build",
		"onic/internal/tbrun", "onic/kernels/replay", "onic/testbenches/"}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasSuffix(f, "/") && strings.HasPrefix(d, f) {
				t.Errorf("emu/... depends on %s", d)
			}
		}
	}
}
