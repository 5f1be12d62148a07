package cluster

import (
	"fmt"
	"math"

	"onic/desc"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/kernels"
	"onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// maxKernelSlots bounds the kernel slots an O-NIC can have.
const maxKernelSlots = desc.MaxKernelSlots

// task is the task a kernel's shell is running.
type task struct {
	active   bool
	flow     *flowState
	xi       int32
	cfg      scenario.TaskFlowConfig
	start    sim.Time // the doorbell reached the shell
	want, in int      // bytes: the task's length (ARG0), taken so far
	stall    sim.Time // the kernel's manager stall when it began
	soft     bool     // launched by host software through the shell's registers
}

// taskFlow makes the kernel in tc's slot task-driven for a task flow.
func (o *onicNode) taskFlow(tc scenario.TaskFlowConfig, p string) error {
	if tc.Slot < 0 || tc.Slot >= maxKernelSlots || o.kernels[tc.Slot] == nil {
		return fmt.Errorf("%s.slot: %d holds no kernel on %s", p, tc.Slot, o.cfg.Name)
	}
	if tc.Record&^0xFFFFF == msiBase {
		return fmt.Errorf("%s.record: %#x is in the interrupt range", p, tc.Record)
	}
	k := o.kernels[tc.Slot]
	if k.inputs != 1 {
		return fmt.Errorf("%s.slot: kernel %q has two inputs; a task flow feeds one", p, k.cfg.Name)
	}
	k.tasked = true
	return nil
}

// taskReg handles a register write m to the task shell of the kernel at
// offset off of its page, at ready: ARG0 sets the next task's length (the
// emulator carries no payloads: it is the transfer size, as the flow's
// driver writes it) and the doorbell launches the task, unless one is
// running (refused, as the shell's error bit says).
func (k *kernel) taskReg(off uint64, m *msg, ready sim.Time) {
	c := k.o.c
	if m.rec < 0 {
		return
	}
	r := &c.recs[m.rec]
	f := c.flows[r.flow]
	switch off {
	case kernels.TaskArg0:
		k.arg0 = f.cfg.Size
	case kernels.TaskDoorbell:
		if k.task.active {
			k.refused++
			return
		}
		k.task = task{active: true, flow: f, xi: r.transfer, cfg: f.cfg.Task, start: ready, want: k.arg0, stall: k.stall}
		if k.task.cfg.Record == 0 {
			k.task.cfg.Record = 0x7000_0000
		}
		if k.arg0 == 0 {
			k.finish(ready)
		}
	}
}

// registerWrite handles a write m to offset off of the O-NIC's register
// BAR: the task shells' pages go to their kernels.
func (o *onicNode) registerWrite(off uint64, m *msg, ready sim.Time) {
	if m.t.Data != nil {
		// Software's writes carry their values (a task flow's carry
		// none): the shells' registers take them.
		eachDW(off, &m.t, func(a uint64, v, mask uint32) {
			if k, reg := o.shellAt(a); k != nil {
				k.shellWrite(reg, v, mask, ready)
			}
		})
		return
	}
	for slot, k := range o.kernels {
		if page := kernels.TaskPage(slot); k != nil && k.tasked && off >= page && off-page < 0x1000 {
			k.taskReg(off-page, m, ready)
			return
		}
	}
}

// finish ends the running task at t, when its last output has left: the
// shell writes the completion record and then the MSI-X message to the
// host, as the flow's transfer's last requests.
func (k *kernel) finish(t sim.Time) {
	if k.task.soft {
		k.softFinish(t)
		return
	}
	o, ts := k.o, &k.task
	f := ts.flow
	f.send(ts.xi, reqs{kind: tlp.MWr, addr: ts.cfg.Record, size: kernels.TaskRecordBytes, max: o.host.cfg.MPS, st: stTaskRecord, l: o.link, side: 1, id: o.self, ready: t})
	if !ts.cfg.Poll {
		f.send(ts.xi, reqs{kind: tlp.MWr, addr: msiBase, size: 4, max: o.host.cfg.MPS, st: stMSI, l: o.link, side: 1, id: o.self, ready: t})
	}
	k.tasks++
	k.taskTime += t - ts.start
	k.taskStall += k.stall - ts.stall
	ts.active = false
}

// half is a two-input kernel's write waiting for its partner.
type half struct {
	m     *msg
	addr  uint64
	ready sim.Time
}

// kernel is a loaded kernel.
type kernel struct {
	o       *onicNode
	cfg     desc.Kernel
	port    int // egress port, or -1 for the host
	prof    kernels.Profile
	library bool     // timed by its cycle simulation
	cycle   float64  // picoseconds per cycle of the O-NIC's clock
	delay   sim.Time // pipeline latency
	buffer  sim.Time // how long a backlog its input buffer absorbs
	free    sim.Time // when it can take the next TLP

	inputs int
	side   [3]int8   // input by manager.Ingress (-1: not an input)
	queue  [2][]half // writes waiting for a partner, oldest at head[i]
	head   [2]int
	queued [2]int // bytes in queue
	limit  int    // bytes a queue may hold

	tlps, bytesIn, bytesOut uint64
	first, last             sim.Time // first TLP in, last TLP out
	latency                 sim.Time // summed over TLPs: ready at its input to out
	stall                   sim.Time // the manager stalled by a full input buffer
	pairWait                sim.Time // summed over pairs: the first write's wait for the second
	peak                    int      // most bytes waiting in a pair queue
	dropped                 [numKernelDrops]uint64
	noProxy                 uint64 // writes out of a port with no proxy ID (the card's drop_no_proxy)

	// Task-driven (a task flow feeds it): data moves only within tasks.
	tasked              bool
	task                task
	sh                  shell // the task shell's registers, as software drives them
	arg0                int
	tasks, refused      uint64
	taskTime, taskStall sim.Time
}

// Why a kernel drops a write.
const (
	dropNotInput   = iota // a two-input kernel's write from an ingress that is not one of its sources
	dropPairFull          // the pair buffer could not take it
	dropPairLength        // its partner had another length
	dropNotWrite          // not a posted write
	dropNoTask            // data for a task-driven kernel with no task running
	numKernelDrops
)

var kernelDropNames = [numKernelDrops]string{"kernel-not-an-input", "kernel-pair-buffer-full", "kernel-pair-length", "kernel-not-a-write", "kernel-no-task"}

// loadKernel loads the resolved kernel kc into its slot: its timing is
// its library kernel's cycle simulation, or an opaque kernel's figures.
func (o *onicNode) loadKernel(kc desc.Kernel) error {
	k := &kernel{o: o, cfg: kc, cycle: 1e6 / o.d.ClockMHz, first: -1, inputs: kc.Inputs, port: -1, limit: kc.PairBytes}
	if kc.Library != nil {
		var err error
		if k.prof, err = kc.Library.Profile(); err != nil {
			return fmt.Errorf("kernel %q: %v", kc.Name, err)
		}
		k.library = true
	} else {
		// An opaque kernel: a 64-byte beat every 512/Gbps ns.
		k.prof = kernels.Profile{Latency: kc.Cycles, BeatBytes: 64, OutPerIn: 1,
			CyclesPerBeat: 512 / kc.Gbps * 1e3 / k.cycle}
	}
	k.delay = sim.Time(float64(k.prof.Latency) * k.cycle)
	k.buffer = sim.Time(float64(kc.BufferBeats) * k.prof.CyclesPerBeat * k.cycle)
	switch kc.Egress.Kind {
	case ntb.EgressPortA:
		k.port = 0
	case ntb.EgressPortB:
		k.port = 1
	}
	k.side = [3]int8{-1, -1, -1}
	if k.inputs == 2 {
		for in := range k.side {
			k.side[in] = int8(kc.Input(manager.Ingress(in)))
		}
	}
	o.kernels[kc.Slot] = k
	return nil
}

// process runs m, sent to the kernel at window address addr, through the
// kernel: a one-input kernel takes it at once, a two-input kernel when its
// partner from the other input is there too. Only posted writes stream
// through kernels.
func (k *kernel) process(m *msg, addr uint64, ready sim.Time) {
	o := k.o
	if m.t.Kind() != tlp.MWr {
		k.drop(m, dropNotWrite)
		return
	}
	if k.inputs == 1 {
		if (k.tasked || k.sh.ctrl&1 != 0) && !k.task.active {
			// (The shell would hold it back; the emulator counts it.)
			k.drop(m, dropNoTask)
			return
		}
		k.run(m, addr, ready)
		return
	}
	side := k.side[m.from]
	if side < 0 {
		k.drop(m, dropNotInput)
		return
	}
	other := 1 - side
	if k.head[other] == len(k.queue[other]) {
		// The first of its pair: it waits for its partner.
		n := int(m.t.Length) * 4
		if k.queued[side]+n > k.limit {
			k.drop(m, dropPairFull)
			return
		}
		k.queue[side] = append(k.queue[side], half{m: m, addr: addr, ready: ready})
		k.queued[side] += n
		k.peak = max(k.peak, k.queued[side])
		return
	}
	h := k.queue[other][k.head[other]]
	k.queue[other][k.head[other]] = half{}
	if k.head[other]++; k.head[other] == len(k.queue[other]) {
		k.queue[other], k.head[other] = k.queue[other][:0], 0
	}
	k.queued[other] -= int(h.m.t.Length) * 4
	if h.m.t.Length != m.t.Length {
		k.drop(h.m, dropPairLength)
		k.drop(m, dropPairLength)
		return
	}
	k.pairWait += ready - h.ready
	if side == 1 {
		addr = h.addr // the output goes where input 0's write was going
	}
	// The two requests end together, when the combined write does.
	switch {
	case m.rec >= 0 && h.m.rec >= 0:
		o.c.recs[h.m.rec].refs++
		o.c.recs[m.rec].join = h.m.rec + 1
	case h.m.rec >= 0:
		o.c.settle(h.m.rec, Delivered)
	}
	o.c.release(h.m)
	k.run(m, addr, ready)
}

// drop fails m, counting why.
func (k *kernel) drop(m *msg, why int) {
	k.dropped[why]++
	if m.rec >= 0 {
		k.o.c.recs[m.rec].reason = manager.Unsupported
		k.o.c.settleWhy(m.rec, Dropped, kernelDropNames[why])
	}
	k.o.c.release(m)
}

// run streams m's payload (and its partner's, alongside, for a two-input
// kernel) through the kernel and sends the result on: it waits for the
// kernel, takes its beats' cycles, and leaves after the pipeline latency,
// as long as the kernel's output makes it. A wait longer than the input
// buffer absorbs stalls the manager.
func (k *kernel) run(m *msg, addr uint64, ready sim.Time) {
	o := k.o
	req := o.self
	if k.port >= 0 {
		// Out of a port, it carries its requester's proxy ID, as any
		// write from this host does; a write from the other port keeps
		// its own, as a relayed one does.
		req = m.t.RequesterID
		if m.from == manager.FromHost {
			p, ok := o.mgr.Tables().ProxyID(m.t.RequesterID)
			if !ok {
				k.noProxy++
				o.c.fail(m, manager.NoProxyID)
				return
			}
			req = p
		}
	}
	n := int(m.t.Length) * 4
	start := max(ready, k.free)
	if wait := start - ready; wait > k.buffer {
		// The buffer fills: the manager takes nothing more until the
		// kernel has room again.
		until := start - k.buffer
		if until > o.stalled {
			k.stall += until - max(o.stalled, ready)
			o.stalled = until
		}
	}
	beats := (n + k.prof.BeatBytes - 1) / k.prof.BeatBytes
	k.free = start + sim.Time(float64(beats)*k.prof.CyclesPerBeat*k.cycle)
	out := k.free + k.delay
	if k.first < 0 {
		k.first = start + o.c.offset // (the scenario's clock: see fidelity.go)
	}
	k.last = out + o.c.offset
	k.tlps++
	k.bytesIn += uint64(n * k.inputs)
	outBytes := max(4, int(math.Ceil(float64(n)*k.prof.OutPerIn)))
	k.bytesOut += uint64(outBytes)
	k.latency += out - ready
	// The output leaves as writes of the transformed length in whole DWs,
	// none bigger than the write that came in (so within the MPS it
	// obeyed): a kernel that grows its data sends more writes.
	m.t.Address = k.cfg.Translated + addr
	m.t.RequesterID = req
	m.t.FirstBE = 0xF
	m.t.Data = nil // the emulator times kernels; it does not compute their output bytes
	for off := n; off < outBytes; off += n {
		cp := o.c.newMsg()
		o.c.attach(cp, m.rec)
		cp.t = m.t
		cp.t.Address += uint64(off)
		cp.t.Length = uint16((min(n, outBytes-off) + 3) / 4)
		cp.t.LastBE = lastBE(cp.t.Length)
		if m.rec >= 0 {
			o.c.recs[m.rec].copies++
		}
		k.send(cp, out)
	}
	m.t.Length = uint16((min(n, outBytes) + 3) / 4)
	m.t.LastBE = lastBE(m.t.Length)
	k.send(m, out)
	if k.task.active && (k.tasked || k.task.soft) {
		if k.task.soft {
			k.sh.bytesIn += uint32(n * k.inputs)
			k.sh.bytesOut += uint32(outBytes)
			k.sh.packets++
		}
		if k.task.in += n; k.task.in >= k.task.want {
			k.finish(out)
		}
	}
}

// send sends the kernel's output m on at ready.
func (k *kernel) send(m *msg, ready sim.Time) {
	if k.port < 0 {
		k.o.toHost(m, ready)
		return
	}
	k.o.toPort(k.o.ports[k.port], m, ready)
}

// lastBE is the last DW byte enables of a whole-DW write of n DWs.
func lastBE(n uint16) uint8 {
	if n == 1 {
		return 0
	}
	return 0xF
}

// KernelReport is what a kernel in a slot did.
type KernelReport struct {
	Name      string `json:"name"`
	Slot      int    `json:"slot"`
	Simulated bool   `json:"simulated"` // timed by its cycle simulation (else opaque)
	Inputs    int    `json:"inputs"`
	// TLPs are the writes it streamed through (pairs of them for a
	// two-input kernel); BytesIn counts both inputs.
	TLPs          uint64  `json:"tlps"`
	BytesIn       uint64  `json:"bytes_in"`
	BytesOut      uint64  `json:"bytes_out"`
	GbpsIn        float64 `json:"gbps_in"`         // payload in over its active time, first TLP in to last out
	GbpsOut       float64 `json:"gbps_out"`        // payload out over the same time
	LatencyCycles int     `json:"latency_cycles"`  // its pipeline
	MeanLatencyNs float64 `json:"mean_latency_ns"` // per TLP: at its input (the later of a pair) to out, waiting included
	StallNs       float64 `json:"manager_stall_ns"`
	// MeanPairWaitNs is how long the first write of a pair waited for the
	// second; PairPeakBytes the most one input held waiting.
	MeanPairWaitNs float64 `json:"mean_pair_wait_ns"`
	PairPeakBytes  int     `json:"pair_peak_bytes"`
	// Dropped counts the writes it refused, by reason.
	Dropped map[string]uint64 `json:"dropped,omitempty"`
	// Tasks a task flow ran on it (its task shell), doorbells refused
	// while one ran, the mean time from doorbell to completion record,
	// and the mean time per task the manager stalled for it.
	Tasks           uint64  `json:"tasks,omitempty"`
	TasksRefused    uint64  `json:"tasks_refused,omitempty"`
	MeanTaskNs      float64 `json:"mean_task_ns,omitempty"`
	MeanTaskStallNs float64 `json:"mean_task_stall_ns,omitempty"`
}

// report is the kernel's report.
func (k *kernel) report() KernelReport {
	r := KernelReport{Name: k.cfg.Name, Slot: k.cfg.Slot, Simulated: k.library, Inputs: k.inputs, TLPs: k.tlps, BytesIn: k.bytesIn, BytesOut: k.bytesOut,
		LatencyCycles: k.prof.Latency, StallNs: float64(k.stall) / float64(sim.Nanosecond), PairPeakBytes: k.peak}
	if k.tlps > 0 {
		r.MeanLatencyNs = float64(k.latency) / float64(k.tlps) / float64(sim.Nanosecond)
		if k.inputs == 2 {
			r.MeanPairWaitNs = float64(k.pairWait) / float64(k.tlps) / float64(sim.Nanosecond)
		}
		if span := k.last - k.first; span > 0 {
			sec := float64(span) / float64(sim.Second)
			r.GbpsIn = float64(k.bytesIn) * 8 / sec / 1e9
			r.GbpsOut = float64(k.bytesOut) * 8 / sec / 1e9
		}
	}
	if k.tasks > 0 {
		r.Tasks, r.TasksRefused = k.tasks, k.refused
		r.MeanTaskNs = float64(k.taskTime) / float64(k.tasks) / float64(sim.Nanosecond)
		r.MeanTaskStallNs = float64(k.taskStall) / float64(k.tasks) / float64(sim.Nanosecond)
	}
	for i, n := range k.dropped {
		if n > 0 {
			if r.Dropped == nil {
				r.Dropped = map[string]uint64{}
			}
			r.Dropped[kernelDropNames[i]] = n
		}
	}
	return r
}
