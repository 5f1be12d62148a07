package cluster

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/firmware"
	"onic/firmware/build"
	"onic/firmware/plan"
	"onic/hdlgen/verilog"
)

// tableMeasure stands in for Yosys: every kernel needs the same small
// share of its region. The replay tests are about when kernels load, not
// what they take.
func tableMeasure(string, []verilog.File) (firmware.Resources, string, error) {
	return firmware.Resources{LUT: 5000, FF: 9000}, "replay test table", nil
}

// replayKernels are kernel images of each kernel for each of onicA's two
// slots, signed by key.
func replayKernels(t *testing.T, key ed25519.PrivateKey, names ...string) []KernelFile {
	t.Helper()
	var out []KernelFile
	for _, k := range names {
		for slot := range 2 {
			s := onicASpec(t, "")
			s.Slots[slot].Kernel = k
			im, err := build.Build(s, tableMeasure)
			if err != nil {
				t.Fatal(err)
			}
			ki, err := im.KernelImage(slot)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, KernelFile{Name: fmt.Sprintf("%s-%d.onicfw", k, slot), Bytes: imageFile(t, ki, key)})
		}
	}
	return out
}

// replayTrace is a task sequence over three kernels for two slots, each
// task running 2 µs once its kernel is in.
func replayTrace() []plan.Task {
	var tasks []plan.Task
	for _, k := range strings.Fields("scale-int32 histogram fp32-to-bf16 scale-int32 histogram scale-int32 fp32-to-bf16 fp32-to-bf16 histogram scale-int32") {
		tasks = append(tasks, plan.Task{Kernel: k, Duration: 2 * time.Microsecond})
	}
	return tasks
}

// replayRun runs the two-party scenario with the base image deployed into
// onicA at 50 µs (out until 73 µs) and plan p replayed from 80 µs.
func replayRun(t *testing.T, p plan.ONICPlan, kernels []KernelFile, trust firmware.Trust) Report {
	t.Helper()
	ops, _, _, _ := deployKeys()
	base, err := build.Build(onicASpec(t, ""), tableMeasure)
	if err != nil {
		t.Fatal(err)
	}
	c := scenario.TwoParty()
	c.ONICs[0].Board, c.ONICs[0].HoldTLPs = fastBoard, 8192
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Deploy("onicA", 50*time.Microsecond, "base.onicfw", imageFile(t, base, ops), trust); err != nil {
		t.Fatal(err)
	}
	if err := cl.Replay(p, 80*time.Microsecond, kernels, trust); err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplay: an optimal plan replayed in the emulator loads the kernels
// it says, into the slots it says, when it says; the emulated reflash
// time is the plan's when the trace's load times are the board's, and
// the loads come out late, never refused, when the trace underestimates
// them. The same replay twice gives the same report.
func TestReplay(t *testing.T) {
	ops, _, mallory, trust := deployKeys()
	kernels := replayKernels(t, ops, "scale-int32", "histogram", "fp32-to-bf16")
	load := firmware.PartialCost(fastBoard, 0, 2586936, true).Total // every slot's region is the same size
	loads := map[string]time.Duration{"scale-int32": load, "histogram": load, "fp32-to-bf16": load}
	r, err := plan.Plan("optimal", 2, replayTrace(), loads)
	if err != nil {
		t.Fatal(err)
	}
	p := plan.ONICPlan{ONIC: "onicA", Result: r}
	rep := replayRun(t, p, kernels, trust)
	o := rep.ONICs[0]
	if len(o.Replays) != 1 {
		t.Fatalf("replays: %+v", o.Replays)
	}
	rr := o.Replays[0]
	if rr.Loads != r.Loads || rr.Loaded != r.Loads || rr.Refused != 0 || rr.ReflashNs != rr.PlanReflashNs ||
		rr.PlanReflashNs != float64(r.Reflash.Nanoseconds()) || rr.LateNs != 0 || rr.Tasks != 10 {
		t.Fatalf("replay: %+v (plan: %d loads, %v)", rr, r.Loads, r.Reflash)
	}
	// The deployments after the base image are the plan's loads, in order,
	// at the plan's times.
	var slotNs [2]float64
	final := [2]string{}
	i := 1
	for _, s := range r.Steps {
		if s.Hit {
			continue
		}
		d := o.Deploys[i]
		i++
		at := float64((80*time.Microsecond + s.Ready - s.Load).Nanoseconds())
		if d.Outcome != "loaded" || d.Kind != "partial" || d.Slot != s.Slot || !strings.HasPrefix(d.Image, s.Kernel+" ") || d.AtNs != at {
			t.Errorf("step %d (%s into slot %d at %v ns): deployed %+v", s.Task, s.Kernel, s.Slot, at, d)
		}
		slotNs[s.Slot] += d.ReflashNs
		final[s.Slot] = s.Kernel
	}
	if i != len(o.Deploys) {
		t.Errorf("%d deployments for %d loads", len(o.Deploys)-1, r.Loads)
	}
	if len(o.SlotReflashNs) != 2 || o.SlotReflashNs[0] != slotNs[0] || o.SlotReflashNs[1] != slotNs[1] {
		t.Errorf("slot reflash time %v, the plan's %v", o.SlotReflashNs, slotNs)
	}
	// What each slot holds at the end is what the plan left there.
	var got [2]string
	for _, k := range o.Kernels {
		got[k.Slot] = k.Name // later entries are the loaded ones
	}
	if got != final {
		t.Errorf("slots hold %v at the end, the plan leaves %v", got, final)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	want := fmt.Sprintf("replayed optimal plan (10 tasks) from 80us: %d of %d loads taken, 0 refused", r.Loads, r.Loads)
	if !strings.Contains(text.String(), want) {
		t.Errorf("text report lacks %q:\n%s", want, text.String())
	}
	again := replayRun(t, p, kernels, trust)
	if fmt.Sprint(again.ONICs[0].Deploys) != fmt.Sprint(o.Deploys) || comparable(t, again) != comparable(t, rep) {
		t.Error("the same replay twice differs")
	}

	// A trace that says loads take half what the board takes: the
	// replayed loads wait for each other and come out late.
	for k := range loads {
		loads[k] = load / 2
	}
	fast, err := plan.Plan("optimal", 2, replayTrace(), loads)
	if err != nil {
		t.Fatal(err)
	}
	rr = replayRun(t, plan.ONICPlan{ONIC: "onicA", Result: fast}, kernels, trust).ONICs[0].Replays[0]
	if rr.Loaded != fast.Loads || rr.Refused != 0 || rr.ReflashNs != float64(fast.Loads)*float64(load.Nanoseconds()) || rr.LateNs <= float64((load/2).Nanoseconds()) {
		t.Errorf("underestimated loads: %+v", rr)
	}

	// Kernels signed by a stranger: every load refused, no slot touched.
	bad := replayRun(t, p, replayKernels(t, mallory, "scale-int32", "histogram", "fp32-to-bf16"), trust).ONICs[0]
	if rr := bad.Replays[0]; rr.Refused != r.Loads || rr.Loaded != 0 || len(bad.SlotReflashNs) != 0 || len(bad.Kernels) != 0 {
		t.Errorf("untrusted replay: %+v, slots %v, kernels %+v", rr, bad.SlotReflashNs, bad.Kernels)
	}
}

// TestReplayRefusals: a replay that cannot be scheduled says why in one
// line and schedules nothing.
func TestReplayRefusals(t *testing.T) {
	ops, _, _, trust := deployKeys()
	kernels := replayKernels(t, ops, "scale-int32")
	whole, err := build.Build(onicASpec(t, "scale-int32"), tableMeasure)
	if err != nil {
		t.Fatal(err)
	}
	load := 10 * time.Microsecond
	r, err := plan.Plan("lru", 2, replayTrace(), map[string]time.Duration{"scale-int32": load, "histogram": load, "fp32-to-bf16": load})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		p       plan.ONICPlan
		at      time.Duration
		kernels []KernelFile
		want    string
	}{
		{"unknown O-NIC", plan.ONICPlan{ONIC: "onicZ", Result: r}, 0, kernels, `the plan is for "onicZ"`},
		{"missing kernel", plan.ONICPlan{ONIC: "onicA", Result: r}, 0, kernels, "steps[1] loads histogram into slot 1: no kernel image"},
		{"whole image", plan.ONICPlan{ONIC: "onicA", Result: r}, 0, []KernelFile{{"a.onicfw", imageFile(t, whole, ops)}}, "a.onicfw: a whole image"},
		{"twice", plan.ONICPlan{ONIC: "onicA", Result: r}, 0, append(kernels, kernels[0]), "are both scale-int32 for slot 0"},
		{"damaged", plan.ONICPlan{ONIC: "onicA", Result: r}, 0, []KernelFile{{"x.onicfw", kernels[0].Bytes[:40]}}, "x.onicfw: malformed"},
		{"too late", plan.ONICPlan{ONIC: "onicA", Result: r}, 190 * time.Microsecond, replayKernels(t, ops, "scale-int32", "histogram", "fp32-to-bf16"), "outside the run"},
	} {
		cl, err := Build(scenario.TwoParty())
		if err != nil {
			t.Fatal(err)
		}
		err = cl.Replay(tc.p, tc.at, tc.kernels, trust)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if len(cl.deploys) != 0 || len(cl.onics[0].replays) != 0 {
			t.Errorf("%s: a refused replay scheduled %d loads", tc.name, len(cl.deploys))
		}
	}
}
