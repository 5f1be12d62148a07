package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/emu/sim"
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
	forbidden := []string{"onic/designs/manager", "onic/designs/bundle", "onic/hdlgen/check", "onic/firmware/build",
		"onic/internal/tbrun", "onic/kernels/replay", "onic/testbenches/"}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasSuffix(f, "/") && strings.HasPrefix(d, f) {
				t.Errorf("emu/... depends on %s", d)
			}
		}
	}
}

// TestNoDispatcher holds the rule that the emulator's parts own their
// events (docs/architecture.md): the cluster is no sim.Handler, and no
// event in the package's sources is scheduled on the cluster itself.
func TestNoDispatcher(t *testing.T) {
	if _, ok := any(&Cluster{}).(sim.Handler); ok {
		t.Error("Cluster is a sim.Handler: a dispatcher of everyone's events")
	}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("the package's sources: %v %v", files, err)
	}
	onCluster := regexp.MustCompile(`\.(At|After)\([^()]*(\([^()]*\))?[^()]*,\s*(c|cl)\s*,`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if onCluster.MatchString(line) {
				t.Errorf("%s:%d schedules an event on the cluster: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
