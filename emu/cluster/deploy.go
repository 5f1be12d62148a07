package cluster

import (
	"errors"
	"fmt"
	"time"

	"onic/desc"
	"onic/emu/sim"
	"onic/firmware"
	"onic/pcie/acl"
	"onic/pcie/manager"
)

// Firmware deployment in simulated time. An O-NIC is a firmware.Backend:
// the loader checks an image at the time Deploy gives and, if it takes
// it, the O-NIC reflashes for the cost model's time. A full reflash takes
// the whole O-NIC out: every TLP that reaches it meanwhile (from its host
// or either optical port) is held, up to hold_tlps, and run through the
// new image's manager when it is back, or failed, per reflash_policy. A
// partial reflash takes only its slot out: TLPs for that slot are held or
// failed the same way while the rest of the O-NIC carries on. A refused
// image changes nothing; the report lists it with the loader's reason.

// deployment is one scheduled load.
type deployment struct {
	o     *onicNode
	at    sim.Time
	name  string
	image []byte
	trust firmware.Trust
	step  replayStep // when it replays a plan's load (replay.go)
}

// reflash is a reconfiguration under way.
type reflash struct {
	im    *firmware.Image
	cost  firmware.Cost
	start sim.Time
	until sim.Time
	// full: the new manager and spec; partial: the slot's new kernel.
	mgr  *manager.Manager
	spec firmware.Spec
	d    *desc.ONIC              // spec resolved
	ks   [maxKernelSlots]*kernel // the kernels it loads, built and checked when it starts
	held []heldMsg
	rep  int // index in the O-NIC's Deploys
}

// heldMsg is a TLP waiting out a reflash; addr is a slot's offset.
type heldMsg struct {
	m    *msg
	addr uint64
}

// DeployReport is one deployment and what became of it.
type DeployReport struct {
	AtNs    float64 `json:"at_ns"`
	File    string  `json:"file"`
	Outcome string  `json:"outcome"` // loaded or refused
	Error   string  `json:"error,omitempty"`
	Kind    string  `json:"kind,omitempty"` // full or partial
	Slot    int     `json:"slot"`
	Image   string  `json:"image,omitempty"` // name and version
	Signer  string  `json:"signer,omitempty"`
	Bytes   int64   `json:"bytes,omitempty"`
	// Downgrade lists the regions the load put back to a lower security
	// version, as the operator allowed (AllowDowngrade).
	Downgrade []string `json:"downgrade,omitempty"`
	// ReflashNs is the time the O-NIC (full) or the slot (partial) was
	// out; Held and Failed are the TLPs that met it.
	ReflashNs float64 `json:"reflash_ns,omitempty"`
	Held      uint64  `json:"held,omitempty"`
	Failed    uint64  `json:"failed,omitempty"`
}

// Deploy schedules the loader to load an image file (name labels it) into
// O-NIC onic at simulated time at, checked against trust. Call it after
// Build and before Run. Whether the image is taken is decided then, as on
// hardware; the report says what happened.
func (c *Cluster) Deploy(onic string, at time.Duration, name string, image []byte, trust firmware.Trust) error {
	for _, o := range c.onics {
		if o.cfg.Name == onic {
			if at < 0 || at > c.cfg.Duration {
				return fmt.Errorf("deploy %s at %v: outside the run (0 to %v)", name, at, c.cfg.Duration)
			}
			c.deploys = append(c.deploys, deployment{o: o, at: ps(at), name: name, image: image, trust: trust})
			return nil
		}
	}
	return fmt.Errorf("deploy %s: %q is not an O-NIC", name, onic)
}

// AllowDowngrade gives the operator's leave for the run's loads (--deploy,
// replays and the host interface's load) to put a region back to a
// lower security version; each one that does says so in its report.
func (c *Cluster) AllowDowngrade(ok bool) { c.allowDowngrade = ok }

// deploy runs the loader for deployment i.
func (c *Cluster) deploy(i int) {
	d := &c.deploys[i]
	o := d.o
	if d.step.replay > 0 {
		if until, ok := o.busy(); ok { // the plan reconfigures one slot at a time
			c.s.At(until, o, onicDeploy|uint64(i)<<2)
			return
		}
	}
	o.deploys = append(o.deploys, DeployReport{AtNs: ns(c.scn()), File: d.name, Slot: -1})
	rep := &o.deploys[len(o.deploys)-1]
	l := firmware.Loader{Trust: d.trust, Backend: o, AllowDowngrade: c.allowDowngrade}
	dep, err := l.Load(d.image)
	if err != nil {
		rep.Outcome, rep.Error = "refused", err.Error()
		if d.step.replay > 0 {
			o.replayed(d.step, rep)
		}
		return
	}
	rep.Outcome, rep.Kind, rep.Slot = "loaded", dep.Cost.Kind, dep.Cost.Slot
	rep.Image, rep.Signer, rep.Bytes = dep.Name+" "+dep.Version, dep.Signer, dep.Cost.Bytes
	rep.Downgrade = dep.Downgrade
	rep.ReflashNs = ns(ps(dep.Cost.Total))
	if d.step.replay > 0 {
		o.replayed(d.step, rep)
	}
}

// Part is the O-NIC's FPGA (firmware.Backend).
func (o *onicNode) Part() string { return o.cfg.Part }

// Board is its reconfiguration figures (firmware.Backend).
func (o *onicNode) Board() firmware.Board { return o.cfg.Board }

// Running is the image it runs (firmware.Backend): nil until one is
// deployed; the scenario's own manager configuration is not an image.
func (o *onicNode) Running() *firmware.Image { return o.running }

// Kernel is the kernel slot n runs (firmware.Backend): a partial load's
// since the last full one, else the running image's.
func (o *onicNode) Kernel(n int) (firmware.SlotManifest, bool) {
	if n < 0 || n >= maxKernelSlots || o.running == nil {
		return firmware.SlotManifest{}, false
	}
	if k := o.slotKernel[n]; k != nil {
		return *k, true
	}
	s, ok := o.running.Manifest.SlotEntry(n)
	return s, ok && s.Kernel != ""
}

var errBusy = errors.New("the O-NIC is reflashing")

// Full starts a full reflash (firmware.Backend). It builds the new
// manager first, so an image whose tables the emulator cannot take is
// refused with nothing changed.
func (o *onicNode) Full(im *firmware.Image, cost firmware.Cost) error {
	if o.full != nil || o.anySlotReflashing() {
		return errBusy
	}
	spec, err := im.Spec()
	if err != nil {
		return err
	}
	mgr, err := manager.New(spec.Manager, o.fn, o.self)
	if err != nil {
		return fmt.Errorf("manager: %v", err)
	}
	d, err := desc.FromSpec(spec)
	if err != nil {
		return err
	}
	ks, err := o.buildKernels(spec.Manager, im.Manifest.ClockMHz, d.Kernels)
	if err != nil {
		return err
	}
	o.full = &reflash{im: im, cost: cost, mgr: mgr, spec: spec, d: d, ks: ks, start: o.c.s.Now(), until: o.c.s.Now() + ps(cost.Total), rep: len(o.deploys) - 1}
	o.c.s.At(o.full.until, o, onicReflashed)
	return nil
}

// Partial starts a slot's partial reflash (firmware.Backend).
func (o *onicNode) Partial(k *firmware.Image, cost firmware.Cost) error {
	n := cost.Slot
	if o.full != nil || n < 0 || n >= maxKernelSlots || o.slotFlash[n] != nil {
		return errBusy
	}
	spec, err := o.running.Spec()
	if err != nil {
		return err
	}
	sl, _ := spec.Slot(n)
	kc := desc.SlotConfig(sl)
	kc.Name = k.Manifest.Slots[0].Kernel
	kc.Empty = false
	rm := &o.running.Manifest
	if kc.Egress == "" {
		// The operator's spec routes a slot's output; a slot left to
		// tenants without an egress has nowhere to send it.
		return fmt.Errorf("kernel image %s %s into slot %d: the running image %s %s gives slot %d no egress (set slots[%d].egress to port-a, port-b or host in its spec)",
			k.Manifest.Name, k.Manifest.Version, n, rm.Name, rm.Version, n, n)
	}
	rk, err := desc.Kernels([]desc.KernelConfig{kc}, o.cfg.Manager.Translation.Slots())
	var ks [maxKernelSlots]*kernel
	if err == nil {
		ks, err = o.buildKernels(o.cfg.Manager, o.d.ClockMHz, rk)
	}
	if err != nil {
		return fmt.Errorf("kernel image %s %s into slot %d of the running image %s %s: %v", k.Manifest.Name, k.Manifest.Version, n, rm.Name, rm.Version, err)
	}
	o.slotFlash[n] = &reflash{im: k, cost: cost, ks: ks, start: o.c.s.Now(), until: o.c.s.Now() + ps(cost.Total), rep: len(o.deploys) - 1}
	o.c.s.At(o.slotFlash[n].until, o, onicReflashed|uint64(n+1)<<2)
	return nil
}

// buildKernels builds kernels as they would load under manager
// configuration mc at clock clockMHz, without touching the O-NIC: a
// configuration the emulator cannot run is refused before a reflash
// starts.
func (o *onicNode) buildKernels(mc manager.Config, clockMHz float64, ks []desc.Kernel) ([maxKernelSlots]*kernel, error) {
	scratch := *o
	d := *o.d
	d.ClockMHz = clockMHz
	scratch.cfg.Manager, scratch.d = mc, &d
	scratch.kernels = [maxKernelSlots]*kernel{}
	for _, k := range ks {
		if k.Name == "" {
			continue // an empty slot: nothing loads
		}
		if err := scratch.loadKernel(k); err != nil {
			return scratch.kernels, err
		}
	}
	for _, k := range scratch.kernels {
		if k != nil {
			k.o = o
		}
	}
	return scratch.kernels, nil
}

func (o *onicNode) anySlotReflashing() bool {
	for _, r := range o.slotFlash {
		if r != nil {
			return true
		}
	}
	return false
}

// reflashing is the time the O-NIC (n < 0) or slot n has spent
// reflashing by now, a reflash still under way included.
func (o *onicNode) reflashing(n int) sim.Time {
	if n < 0 {
		t := o.reflashTime
		if o.full != nil {
			t += o.c.s.Now() - o.full.start
		}
		return t
	}
	t := o.slotTime[n]
	if r := o.slotFlash[n]; r != nil {
		t += o.c.s.Now() - r.start
	}
	return t
}

// hold keeps m (for slot offset addr) until reflash r ends, or fails it.
func (o *onicNode) hold(r *reflash, m *msg, addr uint64) {
	rep := &o.deploys[r.rep]
	if o.d.ReflashHold && len(r.held) < o.d.HoldTLPs {
		r.held = append(r.held, heldMsg{m, addr})
		rep.Held++
		return
	}
	rep.Failed++
	if m.rec >= 0 {
		o.c.settleWhy(m.rec, Dropped, "reflashing")
	}
	o.c.release(m)
}

// O-NIC events: the deployment, slot or message is above the kind.
const (
	onicDeploy    = iota // the loader runs for deployment i (the cluster's)
	onicReflashed        // a reflash ends: 0 for a full one, or 1 + the slot
	onicDropped          // the manager's decision to drop message i is out
	onicDecide           // the pipeline takes message i, its decision deferred
)

// Handle runs an O-NIC's event: a firmware load, a reflash's end, a drop
// the manager decided, or a decision deferred to the pipeline's taking a
// TLP.
func (o *onicNode) Handle(_ *sim.Sim, arg uint64) {
	switch arg & 3 {
	case onicDeploy:
		o.c.deploy(int(arg >> 2))
	case onicReflashed:
		o.reflashed(int(arg>>2) - 1)
	case onicDropped:
		m := o.c.msgs[arg>>2]
		o.c.fail(m, m.dropWhy)
	default:
		o.decideDeferred(o.c.msgs[arg>>2])
	}
}

// reflashed ends a reflash: the full one (n < 0) or slot n's.
func (o *onicNode) reflashed(n int) {
	c := o.c
	if n < 0 {
		r := o.full
		o.full = nil
		if o.pastCounts == nil {
			o.pastCounts = map[manager.Reason]uint64{}
		}
		for _, reason := range manager.Reasons() {
			o.pastCounts[reason] += o.mgr.Count(reason)
		}
		for _, rule := range acl.Denials() {
			o.pastDenials[rule] += o.mgr.Denials(rule)
		}
		r.mgr.PortDown = o.mgr.PortDown
		o.mgr = r.mgr
		o.cfg.Manager = r.spec.Manager
		// The down policy is the image's, as its card's RTL has it.
		// (The reflash policy and the ports' lane plan stay the O-NIC's:
		// the board's, not the image's.)
		r.d.ReflashHold, r.d.Lanes, o.d = o.d.ReflashHold, o.d.Lanes, r.d
		mf := &r.im.Manifest
		o.d.PipelineCycles, o.d.ClockMHz, o.d.DataWidth = mf.ManagerDepth, mf.ClockMHz, mf.DataWidth
		o.pl.set(o.d.PipelineCycles, o.d.ClockMHz, o.d.DataWidth)
		o.resetRegs()
		o.resetMSIX() // the table and the PBA are the card's logic's (MSI-X External), reloaded with it
		for j, k := range o.kernels {
			if k != nil {
				o.pastKernels = append(o.pastKernels, k.report())
				o.kernels[j] = nil
			}
		}
		o.kernels = r.ks
		o.running, o.slotKernel = r.im, [maxKernelSlots]*firmware.SlotManifest{}
		o.reflashTime += ps(r.cost.Total)
		o.pl.replaying = true
		for _, h := range r.held {
			o.decide(h.m)
		}
		o.pl.replaying = false
		return
	}
	r := o.slotFlash[n]
	o.slotFlash[n] = nil
	if k := o.kernels[n]; k != nil {
		o.pastKernels = append(o.pastKernels, k.report())
		o.kernels[n] = nil
	}
	o.kernels[n] = r.ks[n]
	o.slotTime[n] += ps(r.cost.Total)
	o.slotKernel[n] = &r.im.Manifest.Slots[0]
	for _, h := range r.held {
		o.kernels[n].process(h.m, h.addr, c.s.Now())
	}
}

// Load has the loader load image (name labels it) into O-NIC onic of the
// software's host (empty: its first) now, checked against trust, as the
// host's software asks its O-NIC's loader to. It returns what the loader
// did and when the reflash ends (now, for a refused image); a refused
// image is also an error naming the rule. Loads are in the report.
func (s *Software) Load(onic, name string, image []byte, trust firmware.Trust) (DeployReport, time.Duration, error) {
	var o *onicNode
	for _, x := range s.h.onics {
		if x.cfg.Name == onic || onic == "" && o == nil {
			o = x
		}
	}
	switch {
	case s.gone:
		return DeployReport{}, 0, errDetached
	case o == nil:
		return DeployReport{}, 0, fmt.Errorf("load %s: host %s has no O-NIC %q", name, s.h.cfg.Name, onic)
	}
	c := s.c
	c.deploys = append(c.deploys, deployment{o: o, at: c.s.Now(), name: name, image: image, trust: trust})
	c.deploy(len(c.deploys) - 1)
	rep := o.deploys[len(o.deploys)-1]
	if rep.Outcome != "loaded" {
		return rep, s.c.Now(), fmt.Errorf("load %s: refused: %s", name, rep.Error)
	}
	return rep, s.c.Now() + time.Duration(rep.ReflashNs), nil
}
