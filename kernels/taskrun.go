package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// Task is one task for a kernel's task shell: its packets, each with a
// payload per input.
type Task struct {
	Tag     uint16
	Packets [][][]byte // [packet][input]
}

// taskCplAddr is where the task harness has records go.
const taskCplAddr = 0x0000_0012_3456_7000

// TaskRun is what running tasks through a kernel's task shell produced.
type TaskRun struct {
	Out     []byte       // every byte the kernel sent, in order
	Records []TaskRecord // the completion records, in order
	// Regs are the shell's registers read back over AXI-Lite after each
	// task, by offset.
	Regs []map[uint32]uint32
	// Late is, per task, whether the interrupt was raised strictly after
	// the record (as it must be).
	Late []bool
	// Refused counts doorbells the harness rang while a task ran, which
	// the shell must refuse (STATUS error bit) without disturbing it.
	Refused int
	// Log has a line per cycle: every output port, with stream, record
	// and interrupt payloads shown only while valid.
	Log  []string
	vecs []string
	in   []ir.Port
}

// liteOp is one AXI-Lite access of the task harness.
type liteOp struct {
	write      bool
	addr, data uint32
}

// RunTask runs tasks through the kernel's task shell (TaskModule) in the
// cycle simulator under traffic t: it registers the kernel (enable and
// interrupts on, record address), and for each task offers its
// packets before ringing the doorbell (the shell must not take them
// early), sets ARG0 to the task's input-0 bytes, rings once more while
// the task runs (refused), collects what leaves, the record and the
// interrupt, and reads every register back.
func (k *Kernel) RunTask(tasks []Task, t Traffic) (TaskRun, error) {
	h, err := k.newTaskHarness(t)
	if err != nil {
		return TaskRun{}, err
	}
	if err := h.register(); err != nil {
		return h.run, err
	}
	for ti, task := range tasks {
		if err := h.task(ti, task); err != nil {
			return h.run, err
		}
	}
	return h.run, nil
}

// taskHarness drives a kernel's task shell in the cycle simulator: the
// stages of RunTask are its methods.
type taskHarness struct {
	k      *Kernel
	m      *ir.Module
	s      *sim.Sim
	t      Traffic
	rng    *rand.Rand
	run    TaskRun
	values [][]uint64 // each input port's value this cycle, for the replay
	nb, ob int        // input and output beat bytes
	kaxil  bool       // the kernel has its own AXI-Lite registers
	cycle  int
	none   []bool // no input offered
}

// taskXfer is what one cycle of the harness transferred.
type taskXfer struct {
	taken    []bool // per input
	outData  []uint64
	outKeep  []uint64
	outLast  bool
	outValid bool
	liteDone bool
	rdata    uint32
	cpl      []uint64
	irq      bool
	ready    bool
	arTaken  bool
}

// taskRegs are the shell's registers the harness reads back after each
// task.
var taskRegs = []uint32{TaskKernelID, TaskInfo, TaskCtrl, TaskStatus, TaskCplLo, TaskCplHi, 0x18, 0x1C, 0x20,
	TaskArg0, TaskArg1, TaskArg2, TaskArg3, TaskDoorbell, TaskCycles, TaskBytesIn, TaskBytesOut, TaskPackets,
	TaskStallsIn, TaskStallsOut, TaskCount}

// newTaskHarness builds the task module, its simulator, and resets it.
func (k *Kernel) newTaskHarness(t Traffic) (*taskHarness, error) {
	m, err := k.TaskModule()
	if err != nil {
		return nil, err
	}
	s, err := sim.New(m)
	if err != nil {
		return nil, err
	}
	h := &taskHarness{k: k, m: m, s: s, t: t, rng: rand.New(rand.NewPCG(t.Seed, 0x7461736b)),
		nb: k.InBits() / 8, ob: k.OutBits() / 8, kaxil: hasPort(m, "s_kaxil_araddr"), none: make([]bool, k.Inputs)}
	for _, p := range m.Ports() {
		if !p.Output {
			h.run.in = append(h.run.in, p)
		}
	}
	h.values = make([][]uint64, len(h.run.in))
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	return h, nil
}

// set drives input port name with v this cycle.
func (h *taskHarness) set(name string, v []uint64) {
	for i, p := range h.run.in {
		if p.Name == name {
			h.values[i] = v
			if err := h.s.SetWords(name, v); err != nil {
				panic(err) // a harness bug: every name here is a port
			}
			return
		}
	}
}

// bit is 1 with probability p.
func (h *taskHarness) bit(p float64) uint64 {
	if h.rng.Float64() < p {
		return 1
	}
	return 0
}

// step applies one cycle: the streams as given, the AXI-Lite op (if
// any), the handshake readies at random; it logs, records and steps, and
// reports what the cycle transferred.
func (h *taskHarness) step(offer []bool, beat [][]uint64, keep [][]uint64, last []bool, op *liteOp, liteStarted bool) taskXfer {
	k, s, set := h.k, h.s, h.set
	for i := range k.Inputs {
		p := fmt.Sprintf("s%d_", i)
		if offer[i] {
			driveBeat(set, p, beat[i], keep[i], last[i])
		} else {
			driveIdle(set, p, h.rng, h.nb)
		}
	}
	x := taskXfer{ready: h.bit(h.t.Ready) == 1}
	r := uint64(0)
	if x.ready {
		r = 1
	}
	set("m_tready", []uint64{r})
	set("m_cpl_ready", []uint64{h.bit(h.t.Ready)})
	set("m_irq_ready", []uint64{h.bit(h.t.Ready)})
	idleLite(set)
	if h.kaxil {
		for _, p := range []string{"s_kaxil_awaddr", "s_kaxil_awvalid", "s_kaxil_wdata", "s_kaxil_wstrb", "s_kaxil_wvalid", "s_kaxil_araddr", "s_kaxil_arvalid"} {
			set(p, []uint64{0})
		}
		set("s_kaxil_bready", []uint64{1})
		set("s_kaxil_rready", []uint64{1})
	}
	if op != nil && !liteStarted {
		if op.write {
			set("s_axil_awaddr", []uint64{uint64(op.addr)})
			set("s_axil_awvalid", []uint64{1})
			set("s_axil_wdata", []uint64{uint64(op.data)})
			set("s_axil_wstrb", []uint64{0xF})
			set("s_axil_wvalid", []uint64{1})
		} else {
			set("s_axil_araddr", []uint64{uint64(op.addr)})
			set("s_axil_arvalid", []uint64{1})
		}
	}
	h.run.record(h.m, h.values)
	h.run.Log = append(h.run.Log, logOutputs(h.m, s))
	for i := range k.Inputs {
		rd, _ := s.Get(fmt.Sprintf("s%d_tready", i))
		x.taken = append(x.taken, offer[i] && rd == 1)
	}
	if v, _ := s.Get("m_tvalid"); v == 1 && x.ready {
		x.outValid = true
		// (Copies: the simulator's words change with the next step.)
		d, _ := s.GetWords("m_tdata")
		kp, _ := s.GetWords("m_tkeep")
		x.outData, x.outKeep = slices.Clone(d), slices.Clone(kp)
		l, _ := s.Get("m_tlast")
		x.outLast = l == 1
	}
	if v, _ := s.Get("m_cpl_valid"); v == 1 && h.values[portIndex(h.run.in, "m_cpl_ready")][0] == 1 {
		d, _ := s.GetWords("m_cpl_data")
		x.cpl = slices.Clone(d)
		if a, _ := s.Get("m_cpl_addr"); a != taskCplAddr {
			x.cpl = nil // reported below as a missing record
		}
	}
	if v, _ := s.Get("m_irq_valid"); v == 1 && h.values[portIndex(h.run.in, "m_irq_ready")][0] == 1 {
		x.irq = true
	}
	if op != nil && !op.write && !liteStarted {
		ar, _ := s.Get("s_axil_arready")
		x.arTaken = ar == 1
	}
	if op != nil {
		if op.write {
			aw, _ := s.Get("s_axil_awready")
			x.liteDone = aw == 1
		} else if rv, _ := s.Get("s_axil_rvalid"); rv == 1 && liteStarted {
			rd, _ := s.Get("s_axil_rdata")
			x.liteDone, x.rdata = true, uint32(rd)
		}
	}
	s.Step()
	h.cycle++
	return x
}

// lite runs AXI-Lite ops one after another with the streams idle,
// returning the read data.
func (h *taskHarness) lite(ops []liteOp) ([]uint32, error) {
	var got []uint32
	for _, op := range ops {
		started := false
		for n := 0; ; n++ {
			if n > 64 {
				return nil, fmt.Errorf("kernel %s: task shell: AXI-Lite access to %#x not answered", h.k.Name, op.addr)
			}
			x := h.step(h.none, nil, nil, nil, &op, started)
			if !op.write && !started {
				// (step sampled arready before the edge.)
				started = x.arTaken
				continue
			}
			if x.liteDone {
				if !op.write {
					got = append(got, x.rdata)
				}
				break
			}
		}
	}
	return got, nil
}

// register enables the shell and its interrupts and gives it the record
// address.
func (h *taskHarness) register() error {
	_, err := h.lite([]liteOp{{true, TaskCtrl, 3}, {true, TaskCplLo, taskCplAddr & 0xFFFFFFFF}, {true, TaskCplHi, taskCplAddr >> 32}})
	return err
}

// taskSource is one input's beats for a task, packet after packet, and
// the beat on offer.
type taskSource struct {
	data     [][]byte
	keep     [][]bool
	last     []bool
	next     int
	offered  bool
	pay, msk []uint64
}

// sources splits task's packets into each input's beats, and returns
// them with ARG0 (input 0's bytes).
func (h *taskHarness) sources(ti int, task Task) ([]*taskSource, int, error) {
	k := h.k
	srcs := make([]*taskSource, k.Inputs)
	arg0 := 0
	for i := range srcs {
		srcs[i] = &taskSource{}
		for _, p := range task.Packets {
			if len(p) != k.Inputs {
				return nil, 0, fmt.Errorf("kernel %s: task %d: a packet has %d inputs, want %d", k.Name, ti, len(p), k.Inputs)
			}
			d, kp := beats(p[i], h.nb)
			srcs[i].data = append(srcs[i].data, d...)
			srcs[i].keep = append(srcs[i].keep, kp...)
			for j := range d {
				srcs[i].last = append(srcs[i].last, j == len(d)-1)
			}
			if i == 0 {
				arg0 += len(p[0])
			}
		}
	}
	return srcs, arg0, nil
}

// offer puts each input's next beat on offer, at random (t.Offer).
func (h *taskHarness) offer(srcs []*taskSource) ([]bool, [][]uint64, [][]uint64, []bool) {
	o := make([]bool, h.k.Inputs)
	var bs, ks [][]uint64
	var ls []bool
	for i, sr := range srcs {
		if !sr.offered && sr.next < len(sr.data) && h.rng.Float64() < h.t.Offer {
			sr.offered = true
			sr.pay = words(sr.data[sr.next], sr.keep[sr.next], h.rng)
			sr.msk = maskWords(sr.keep[sr.next])
		}
		o[i] = sr.offered
		bs, ks = append(bs, sr.pay), append(ks, sr.msk)
		ls = append(ls, sr.offered && sr.last[sr.next])
	}
	return o, bs, ks, ls
}

// advance moves the sources past what x took and keeps what left.
func (h *taskHarness) advance(srcs []*taskSource, x taskXfer) {
	for i, sr := range srcs {
		if x.taken[i] {
			sr.offered = false
			sr.next++
		}
	}
	if x.outValid {
		for b := range h.ob {
			if x.outKeep[b/64]>>(b%64)&1 == 1 {
				h.run.Out = append(h.run.Out, byte(x.outData[b/8]>>(8*(b%8))))
			}
		}
	}
}

// task runs one task: data offered before the doorbell (none may be
// taken), ARG0 and the doorbell, a second doorbell while it runs, until
// the record and the interrupt are out; then the record is parsed and
// every register read back.
func (h *taskHarness) task(ti int, task Task) error {
	k := h.k
	srcs, arg0, err := h.sources(ti, task)
	if err != nil {
		return err
	}
	for range 3 {
		o, bs, ks, ls := h.offer(srcs)
		x := h.step(o, bs, ks, ls, nil, false)
		for i := range x.taken {
			if x.taken[i] {
				return fmt.Errorf("kernel %s: task shell took a beat on input %d before the doorbell", k.Name, i)
			}
		}
	}
	if _, err := h.lite([]liteOp{{true, TaskArg0, uint32(arg0)}, {true, TaskDoorbell, uint32(task.Tag)}}); err != nil {
		return err
	}
	var rec []uint64
	cplAt, irqAt, rang := -1, -1, false
	for n := 0; ; n++ {
		if n > 2000+400*len(srcs[0].data) {
			return fmt.Errorf("kernel %s: task %d (tag %d): no completion after %d cycles (%d of %d beats in)", k.Name, ti, task.Tag, n, srcs[0].next, len(srcs[0].data))
		}
		var op *liteOp
		if !rang && srcs[0].next > 0 {
			// A second doorbell while the task runs.
			op = &liteOp{true, TaskDoorbell, 0xBEEF}
		}
		o, bs, ks, ls := h.offer(srcs)
		x := h.step(o, bs, ks, ls, op, false)
		h.advance(srcs, x)
		if op != nil && x.liteDone {
			rang = true
			h.run.Refused++
		}
		if x.cpl != nil {
			rec, cplAt = x.cpl, h.cycle
		}
		if x.irq {
			irqAt = h.cycle
		}
		if cplAt >= 0 && irqAt >= 0 {
			break
		}
	}
	b := make([]byte, 0, TaskRecordBytes)
	for _, w := range rec {
		b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24), byte(w>>32), byte(w>>40), byte(w>>48), byte(w>>56))
	}
	r, err := ParseTaskRecord(b)
	if err != nil {
		return fmt.Errorf("kernel %s: task %d: %v", k.Name, ti, err)
	}
	h.run.Records = append(h.run.Records, r)
	h.run.Late = append(h.run.Late, irqAt > cplAt)
	return h.readRegs()
}

// readRegs reads every shell register back over AXI-Lite.
func (h *taskHarness) readRegs() error {
	var ops []liteOp
	for _, a := range taskRegs {
		ops = append(ops, liteOp{addr: a})
	}
	got, err := h.lite(ops)
	if err != nil {
		return err
	}
	rm := map[uint32]uint32{}
	for i, a := range taskRegs {
		rm[a] = got[i]
	}
	h.run.Regs = append(h.run.Regs, rm)
	return nil
}

// portIndex is the index of the input port name in ports.
func portIndex(ports []ir.Port, name string) int {
	for i, p := range ports {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// record keeps this cycle's inputs, bit-exact, for the replay.
func (r *TaskRun) record(m *ir.Module, values [][]uint64) {
	r.vecs = append(r.vecs, vector(m, r.in, values))
}

// validOf names the valid bit that qualifies an output port's value in
// the logs ("" for one that is always shown).
func validOf(name string) string {
	switch {
	case name == "m_tdata" || name == "m_tkeep" || name == "m_tlast":
		return "m_tvalid"
	case strings.HasSuffix(name, "axil_rdata"):
		return strings.TrimSuffix(name, "rdata") + "rvalid"
	case name == "m_cpl_addr" || name == "m_cpl_data":
		return "m_cpl_valid"
	case name == "m_irq_addr" || name == "m_irq_data":
		return "m_irq_valid"
	}
	return ""
}

// logOutputs is a cycle's log line: every output port in hex, "-" for a
// payload whose valid bit is low.
func logOutputs(m *ir.Module, s *sim.Sim) string {
	var parts []string
	for _, p := range m.Ports() {
		if !p.Output {
			continue
		}
		if v := validOf(p.Name); v != "" {
			if x, _ := s.Get(v); x == 0 {
				parts = append(parts, "-")
				continue
			}
		}
		w, _ := s.GetWords(p.Name)
		parts = append(parts, hexWords(w, m.Node(p.Node).W))
	}
	return strings.Join(parts, " ")
}

// ReplayTask replays run's inputs into the task shell's Verilog with tool
// in dir and returns both logs (see Replay).
func (k *Kernel) ReplayTask(run TaskRun, tool Tool, dir string) (Replay, error) {
	r := Replay{Sim: run.Log}
	m, err := k.TaskModule()
	if err != nil {
		return r, err
	}
	r.RTL, err = replayIn(tool, dir, m, run.vecs, taskBench(m, run.in, len(run.vecs)))
	return r, err
}

// taskBench is the replay testbench of a task shell: every output logged
// as logOutputs does.
func taskBench(m *ir.Module, in []ir.Port, n int) string {
	return replayBench(m.Name(), m, in, n, func(w func(string, ...any)) {
		sep := ""
		for _, p := range m.Ports() {
			if !p.Output {
				continue
			}
			if v := validOf(p.Name); v != "" {
				w("            if (%s) $fwrite(fd, \"%s%%h\", %s); else $fwrite(fd, \"%s-\");", v, sep, p.Name, sep)
			} else {
				w("            $fwrite(fd, \"%s%%h\", %s);", sep, p.Name)
			}
			sep = " "
		}
	})
}
