package cluster

import (
	"fmt"
	"time"

	"onic/emu/sim"
	"onic/firmware"
	"onic/firmware/plan"
)

// Replaying a residency plan (onic fw plan) in the emulator. Each load of
// the plan becomes a deployment of a kernel image into its slot at the
// moment the plan starts that reconfiguration (the step's ready time less
// its load time, counted from the replay's start); hits load nothing. The
// loader checks every image as it would any other, and the emulator's
// board figures, not the trace's load times, decide how long each
// reflash takes. The plan reconfigures one slot at a time; a replayed
// load that finds the O-NIC still reflashing waits for it, and the
// report gives how late the last load came out against the plan.

// KernelFile is a kernel image file (onic fw build --kernel-slot) that a
// replay may load: Name labels it in reports.
type KernelFile struct {
	Name  string
	Bytes []byte
}

// ReplayReport is a replayed plan and how it went.
type ReplayReport struct {
	AtNs   float64 `json:"at_ns"` // the plan's time 0
	Policy string  `json:"policy"`
	Tasks  int     `json:"tasks"`
	// Loads is the plan's loads; Loaded and Refused what the loader did
	// with them (a load the run ended before is neither).
	Loads   int `json:"loads"`
	Loaded  int `json:"loaded"`
	Refused int `json:"refused"`
	// PlanReflashNs is the plan's total reflash time, ReflashNs the
	// emulated one of the loads taken.
	PlanReflashNs float64 `json:"plan_reflash_ns"`
	ReflashNs     float64 `json:"reflash_ns"`
	// LateNs is how much later than planned the last load was ready.
	LateNs float64 `json:"late_ns"`
}

// replayStep ties a deployment to the replay it belongs to.
type replayStep struct {
	replay int      // 1 + the index in the O-NIC's replays (0: not a replay)
	ready  sim.Time // when the plan has the kernel loaded
}

// Replay schedules the loads of one O-NIC's plan into the O-NIC it
// names, the plan's time 0 at simulated time at; kernels must hold a
// kernel image of every kernel for every slot the plan loads it into.
// Call it after Build (and after deploying the image whose static region
// the kernels were built for) and before Run.
func (c *Cluster) Replay(p plan.ONICPlan, at time.Duration, kernels []KernelFile, trust firmware.Trust) error {
	var o *onicNode
	for _, n := range c.onics {
		if n.cfg.Name == p.ONIC {
			o = n
		}
	}
	if o == nil {
		return fmt.Errorf("replay: the plan is for %q, not an O-NIC of this cluster", p.ONIC)
	}
	type key struct {
		kernel string
		slot   int
	}
	files := map[key]KernelFile{}
	for _, f := range kernels {
		im, err := firmware.Parse(f.Bytes)
		if err != nil {
			return fmt.Errorf("replay: %s: %v", f.Name, err)
		}
		if im.Manifest.Kind != firmware.KindKernel {
			return fmt.Errorf("replay: %s: a whole image, not a kernel image (onic fw build --kernel-slot)", f.Name)
		}
		k := key{im.Manifest.Slots[0].Kernel, im.Manifest.Slots[0].Slot}
		if g, ok := files[k]; ok {
			return fmt.Errorf("replay: %s and %s are both %s for slot %d", g.Name, f.Name, k.kernel, k.slot)
		}
		files[k] = f
	}
	rep := ReplayReport{AtNs: ns(ps(at)), Policy: p.Policy, Tasks: len(p.Steps), Loads: p.Loads, PlanReflashNs: ns(ps(p.Reflash))}
	var sched []deployment
	for i, s := range p.Steps {
		if s.Hit {
			continue
		}
		f, ok := files[key{s.Kernel, s.Slot}]
		if !ok {
			return fmt.Errorf("replay: steps[%d] loads %s into slot %d: no kernel image of it for that slot among the given ones", i, s.Kernel, s.Slot)
		}
		start := at + s.Ready - s.Load
		if s.Load < 0 || start < at || start > c.cfg.Duration {
			return fmt.Errorf("replay: steps[%d] (%s into slot %d) starts at %v: outside the run (0 to %v)", i, s.Kernel, s.Slot, start, c.cfg.Duration)
		}
		sched = append(sched, deployment{o: o, at: ps(start), name: f.Name, image: f.Bytes, trust: trust,
			step: replayStep{replay: len(o.replays) + 1, ready: ps(at + s.Ready)}})
	}
	o.replays = append(o.replays, rep)
	c.deploys = append(c.deploys, sched...)
	return nil
}

// busy reports whether the O-NIC is reflashing anything, and until when.
func (o *onicNode) busy() (sim.Time, bool) {
	var until sim.Time
	if o.full != nil {
		until = o.full.until
	}
	for _, r := range o.slotFlash {
		if r != nil {
			until = max(until, r.until)
		}
	}
	return until, until > 0
}

// replayed accounts a replayed deployment's outcome.
func (o *onicNode) replayed(s replayStep, rep *DeployReport) {
	r := &o.replays[s.replay-1]
	if rep.Outcome != "loaded" {
		r.Refused++
		return
	}
	r.Loaded++
	r.ReflashNs += rep.ReflashNs
	r.LateNs = ns(o.c.s.Now()+ps(time.Duration(rep.ReflashNs))) - ns(s.ready)
}
