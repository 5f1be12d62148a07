package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/emu/scenario"
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

// countingDevice wraps a device kind's device, counting what the cluster
// hands it.
type countingDevice struct {
	device
	doorbells, fetches *int
}

func (d countingDevice) doorbell(f *flowState, xi int32) { *d.doorbells++; d.device.doorbell(f, xi) }
func (d countingDevice) fetched(f *flowState, xi int32)  { *d.fetches++; d.device.fetched(f, xi) }

// TestDeviceKinds: a host node whose kind takes commands gets its device
// from deviceKinds, and the cluster hands the device every doorbell and
// every fetch's end through the device interface alone: with the NVMe
// kind wrapped, two drives of nvme-gathering see one doorbell and one
// fetch per command, as many as the flows finish or leave in flight.
func TestDeviceKinds(t *testing.T) {
	var doorbells, fetches int
	real := deviceKinds["nvme"]
	deviceKinds["nvme"] = func(h *hostNode) device {
		return countingDevice{device: real(h), doorbells: &doorbells, fetches: &fetches}
	}
	defer func() { deviceKinds["nvme"] = real }()
	rep, err := Run(scenario.NVMeGathering(2, 100))
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, f := range rep.Flows {
		done += f.Transfers + f.Failed
	}
	if done == 0 || doorbells < done || fetches < done || fetches > doorbells {
		t.Fatalf("%d commands finished; the drives saw %d doorbells and %d fetches", done, doorbells, fetches)
	}
	t.Logf("%d commands finished; %d doorbells, %d fetches", done, doorbells, fetches)
}
