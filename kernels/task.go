package kernels

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"strings"

	"onic/hdlgen/axil"
	"onic/hdlgen/ir"
)

// The task shell's registers, by byte offset in its AXI-Lite space (12-bit
// addresses, 32-bit registers; docs/kernels.md has the full map). The host
// registers a kernel by reading its identity and enabling it, launches a
// task with a doorbell write after setting the arguments, and learns that
// it finished from a completion record written to its memory and an MSI-X
// interrupt (the card raises its function's vector for the slot, from
// the MSI-X table software set up: docs/kernels.md); the counters profile
// the task.
const (
	TaskKernelID = 0x00 // RO: CRC-32C of "name@version"
	TaskInfo     = 0x04 // RO: inputs [3:0], input beat bytes [15:8], output beat bytes [23:16], latency in cycles [31:24]
	TaskCtrl     = 0x08 // RW: bit 0 enable (the kernel is registered), bit 1 interrupt enable
	TaskStatus   = 0x0C // RO: bit 0 busy, bit 1 done, bit 2 error (a doorbell refused); [31:16] the task's tag
	TaskCplLo    = 0x10 // RW: completion record address, low word (32-byte aligned)
	TaskCplHi    = 0x14 // RW: completion record address, high word
	// 0x18 to 0x20 are reserved (read 0): the shell's own MSI-X address
	// and data until register map version 1.5; the interrupt's address and
	// data are now the function's MSI-X table entry for the slot.
	TaskArg0      = 0x24 // RW: the task's length in bytes on input 0
	TaskArg1      = 0x28 // RW: argument for kernels that take run-time arguments
	TaskArg2      = 0x2C // RW: argument
	TaskArg3      = 0x30 // RW: argument
	TaskDoorbell  = 0x34 // WO: launch a task with tag [15:0] (reads 0)
	TaskCycles    = 0x40 // RO: cycles the task has been running
	TaskBytesIn   = 0x44 // RO: bytes taken in, every input together
	TaskBytesOut  = 0x48 // RO: bytes sent out
	TaskPackets   = 0x4C // RO: packets taken in on input 0
	TaskStallsIn  = 0x50 // RO: cycles an input offered a beat the kernel could not take
	TaskStallsOut = 0x54 // RO: cycles the output offered a beat nobody took
	TaskCount     = 0x58 // RO: tasks completed since reset
	// TaskKernelRegs is where a kernel's own registers (the histogram's
	// bins) start in the shell's space when it has any: the shell passes
	// s_kaxil_* straight through to them, at their own addresses.
)

// TaskPage is the offset in the O-NIC's register BAR (BAR0, 64 KiB) of
// the task shell of kernel slot slot: a 4 KiB page per slot from 0x1000,
// every other page, after the PCIe manager's registers at 0x0000.
func TaskPage(slot int) uint64 { return 0x1000 + 0x2000*uint64(slot) }

// KernelPage is the offset in BAR0 of the registers of the kernel in slot
// slot itself (its s_kaxil_* interface), the page after its task shell's.
func KernelPage(slot int) uint64 { return TaskPage(slot) + 0x1000 }

// TaskRecordBytes is the size of a completion record.
const TaskRecordBytes = 32

// TaskDone is the completion record's first word's bit 31: the host
// zeroes a record before the doorbell and polls for it.
const TaskDone = 1 << 31

// TaskRecord is the completion record a task shell writes to host memory
// when a task ends: eight little-endian 32-bit words.
type TaskRecord struct {
	Tag       uint16 // word 0 [15:0]; bit 31 is TaskDone
	BytesIn   uint32 // word 1
	BytesOut  uint32 // word 2
	Packets   uint32 // word 3
	Cycles    uint32 // word 4
	StallsIn  uint32 // word 5
	StallsOut uint32 // word 6
	Count     uint32 // word 7: tasks completed since reset, this one included
}

// AppendBinary appends the record's 32 bytes to b.
func (r TaskRecord) AppendBinary(b []byte) ([]byte, error) {
	for _, w := range []uint32{TaskDone | uint32(r.Tag), r.BytesIn, r.BytesOut, r.Packets, r.Cycles, r.StallsIn, r.StallsOut, r.Count} {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b, nil
}

// ParseTaskRecord reads a completion record; it fails on a short record
// or one whose done bit is clear.
func ParseTaskRecord(b []byte) (TaskRecord, error) {
	if len(b) < TaskRecordBytes {
		return TaskRecord{}, fmt.Errorf("task record: %d bytes, want %d", len(b), TaskRecordBytes)
	}
	w := func(i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
	if w(0)&TaskDone == 0 || w(0)&0x7FFF0000 != 0 {
		return TaskRecord{}, fmt.Errorf("task record: word 0 is %#08x: done bit clear or reserved bits set", w(0))
	}
	return TaskRecord{Tag: uint16(w(0)), BytesIn: w(1), BytesOut: w(2), Packets: w(3), Cycles: w(4), StallsIn: w(5), StallsOut: w(6), Count: w(7)}, nil
}

// ID is the kernel's identity in the task shell's TaskKernelID register:
// CRC-32C of "name@version".
func (k *Kernel) ID() uint32 {
	return crc32.Checksum([]byte(k.Name+"@"+k.Version), crc32.MakeTable(crc32.Castagnoli))
}

// info is the TaskInfo register's value.
func (k *Kernel) info(p Profile) uint32 {
	return uint32(k.Inputs) | uint32(k.InBits()/8)<<8 | uint32(k.OutBits()/8)<<16 | uint32(min(p.Latency, 255))<<24
}

// Task states.
const (
	taskIdle = iota // waiting for a doorbell
	taskRun         // taking the task's input
	taskCpl         // writing the completion record
	taskIRQ         // raising the interrupt
)

// TaskModule wraps the kernel in the task shell, module
// onic_task_<name>: the kernel's streams pass through freely until
// software sets CTRL's enable bit, and from then on only while a task runs
// and until it has taken ARG0 bytes on input 0 (to the end of that
// packet); task_closed says the shell is enabled and takes no input (the
// O-NIC's kernel slot drops what arrives then, as the emulator does); the shell counts and times them, and when every packet the
// task took has left writes the completion record on m_cpl_* (address and
// 32 bytes of data, valid/ready) and then, if enabled, raises its
// interrupt on m_irq_valid/m_irq_ready — for the O-NIC to turn into a
// posted write to the host and an MSI-X message through the PCIe block,
// in that order.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func (k *Kernel) TaskModule() (*ir.Module, error) {
	km, err := k.Module()
	if err != nil {
		return nil, err
	}
	prof, err := k.Profile()
	if err != nil {
		return nil, err
	}
	m := ir.NewModule("onic_task_" + ident(k.Name))
	wi := k.InBits()
	lite := axil.New(m, 12)
	at := func(off uint32) ir.Value { return lite.Written(off) }
	c32 := func(v uint64) ir.Value { return m.Const(32, v) }

	state := m.Reg("task_state", 2, taskIdle)
	in := func(s uint64) ir.Value { return m.Eq(state, m.Const(2, s)) }
	running := in(taskRun)

	// Registers the host writes.
	rw := func(name string, off uint32, w int) ir.Value {
		r := m.Reg(name, w, 0)
		m.SetNext(r, m.Slice(lite.WData, 0, w))
		m.SetEnable(r, at(off))
		return r
	}
	ctrl := rw("task_ctrl", TaskCtrl, 2)
	enable, irqEn := m.Slice(ctrl, 0, 1), m.Slice(ctrl, 1, 1)
	cplLo, cplHi := rw("task_cpl_lo", TaskCplLo, 32), rw("task_cpl_hi", TaskCplHi, 32)
	var args []ir.Value
	for i := range 4 {
		args = append(args, rw(fmt.Sprintf("task_arg%d", i), uint32(TaskArg0+4*i), 32))
	}

	// The doorbell: taken when idle and enabled, else an error.
	ring := at(TaskDoorbell)
	launch := m.And(ring, m.And(in(taskIdle), enable))
	tag := m.Reg("task_tag", 16, 0)
	m.SetNext(tag, m.Slice(lite.WData, 0, 16))
	m.SetEnable(tag, launch)
	errBit := m.Reg("task_error", 1, 0)
	m.SetNext(errBit, m.Mux(launch, m.Const(1, 0), m.Or(errBit, ring)))

	// The streams, open while the task still wants input.
	inMid := m.Reg("task_in_mid", 1, 0) // input 0 is inside a packet
	in0 := m.Reg("task_in0_bytes", 32, 0)
	full := m.And(m.Not(m.LtU(in0, args[0])), m.Not(inMid))
	// Until software enables the shell the kernel streams freely, as the
	// emulator's kernels do; once enabled, only inside a task.
	taskOpen := m.And(running, m.Not(full))
	open := m.Or(m.Not(enable), taskOpen)
	m.Output("task_closed", m.And(enable, m.Not(taskOpen)))
	subIn := map[string]ir.Value{"m_tready": m.Input("m_tready", 1)}
	var keeps, hss, stallIn []ir.Value
	var last0, hs0, keep0 ir.Value
	for i := range k.Inputs {
		p := fmt.Sprintf("s%d_", i)
		d, kp, l, v := m.Input(p+"tdata", wi), m.Input(p+"tkeep", wi/8), m.Input(p+"tlast", 1), m.Input(p+"tvalid", 1)
		subIn[p+"tdata"], subIn[p+"tkeep"], subIn[p+"tlast"] = d, kp, l
		subIn[p+"tvalid"] = m.And(v, open)
		keeps = append(keeps, kp)
		if i == 0 {
			last0, keep0 = l, kp
		}
	}
	for _, p := range km.Ports() {
		if !p.Output && strings.HasPrefix(p.Name, "s_axil_") {
			subIn[p.Name] = m.Input("s_kaxil_"+strings.TrimPrefix(p.Name, "s_axil_"), km.Node(p.Node).W)
		}
	}
	out := m.Instance("kernel", km, subIn)
	for i := range k.Inputs {
		p := fmt.Sprintf("s%d_", i)
		ready := m.And(out[p+"tready"], open)
		m.Output(p+"tready", ready)
		hs := m.And(subIn[p+"tvalid"], ready)
		hss = append(hss, hs)
		stallIn = append(stallIn, m.And(subIn[p+"tvalid"], m.Not(ready)))
		if i == 0 {
			hs0 = hs
		}
	}
	for _, n := range []string{"m_tdata", "m_tkeep", "m_tlast", "m_tvalid"} {
		m.Output(n, out[n])
	}
	for _, p := range km.Ports() {
		if p.Output && strings.HasPrefix(p.Name, "s_axil_") {
			m.Output("s_kaxil_"+strings.TrimPrefix(p.Name, "s_axil_"), out[p.Name])
		}
	}
	hsOut := m.And(out["m_tvalid"], subIn["m_tready"])

	// Counters, cleared by a launch.
	count := func(name string, inc ir.Value, when ir.Value) ir.Value {
		r := m.Reg(name, 32, 0)
		if inc.Width() < 32 {
			inc = m.Zext(inc, 32)
		}
		m.SetNext(r, m.Mux(launch, c32(0), m.Mux(when, m.Add(r, inc), r)))
		return r
	}
	// The bytes a cycle takes in are registered before they are added
	// up: the popcounts of both inputs' keeps and their sum would
	// otherwise sit in front of the counter's carry chain (a cycle's
	// lag, long gone by the time the record is written).
	w := bits.Len(uint(len(keeps) * keeps[0].Width()))
	sum := m.Const(w, 0)
	for i, kp := range keeps {
		sum = m.Add(sum, m.Mux(hss[i], m.Zext(m.PopCount(kp), w), m.Const(w, 0)))
	}
	inNow := m.Reg("task_bytes_in_now", w, 0)
	m.SetNext(inNow, m.Mux(running, sum, m.Const(w, 0)))
	bytesIn := inNow
	m.SetNext(in0, m.Mux(launch, c32(0), m.Mux(hs0, m.Add(in0, m.Zext(m.PopCount(keep0), 32)), in0)))
	m.SetNext(inMid, m.Mux(launch, m.Const(1, 0), m.Mux(hs0, m.Not(last0), inMid)))
	one := m.Const(1, 1)
	cBytesIn := count("task_bytes_in", bytesIn, m.Const(1, 1))
	cBytesOut := count("task_bytes_out", m.PopCount(out["m_tkeep"]), m.And(running, hsOut))
	cPackets := count("task_packets", one, m.And(hs0, last0))
	outPackets := count("task_out_packets", one, m.And(m.And(running, hsOut), out["m_tlast"]))
	cCycles := count("task_cycles", one, running)
	cStallsIn := count("task_stalls_in", one, m.And(running, m.Any(stallIn...)))
	cStallsOut := count("task_stalls_out", one, m.And(running, m.And(out["m_tvalid"], m.Not(subIn["m_tready"]))))
	tasks := m.Reg("task_count", 32, 0)

	// The task ends when it has taken its input and every packet it took
	// has left; then the record, then the interrupt.
	finished := m.And(running, m.And(full, m.Eq(outPackets, cPackets)))
	cplReady, irqReady := m.Input("m_cpl_ready", 1), m.Input("m_irq_ready", 1)
	cplDone := m.And(in(taskCpl), cplReady)
	irqDone := m.And(in(taskIRQ), irqReady)
	m.SetNext(state, m.Pick(
		[]ir.Value{launch, finished, cplDone, irqDone},
		[]ir.Value{m.Const(2, taskRun), m.Const(2, taskCpl), m.Mux(irqEn, m.Const(2, taskIRQ), m.Const(2, taskIdle)), m.Const(2, taskIdle)}))
	m.SetEnable(state, m.Any(launch, finished, cplDone, irqDone))
	m.SetNext(tasks, m.Add(tasks, c32(1)))
	m.SetEnable(tasks, cplDone)
	done := m.Reg("task_done", 1, 0)
	end := m.Or(m.And(cplDone, m.Not(irqEn)), irqDone)
	m.SetNext(done, m.Mux(launch, m.Const(1, 0), m.Or(done, end)))

	m.Output("m_cpl_valid", in(taskCpl))
	m.Output("m_cpl_addr", m.Concat(cplHi, cplLo))
	m.Output("m_cpl_data", m.Concat(m.Add(tasks, c32(1)), cStallsOut, cStallsIn, cCycles, cPackets, cBytesOut, cBytesIn,
		m.Concat(m.Const(1, 1), m.Const(15, 0), tag)))
	m.Output("m_irq_valid", in(taskIRQ))

	// Reads.
	busy := m.Not(in(taskIdle))
	regs := []struct {
		off uint32
		v   ir.Value
	}{
		{TaskKernelID, c32(uint64(k.ID()))}, {TaskInfo, c32(uint64(k.info(prof)))}, {TaskCtrl, m.Zext(ctrl, 32)},
		{TaskStatus, m.Concat(tag, m.Const(13, 0), errBit, done, busy)},
		{TaskCplLo, cplLo}, {TaskCplHi, cplHi},
		{TaskArg0, args[0]}, {TaskArg1, args[1]}, {TaskArg2, args[2]}, {TaskArg3, args[3]},
		{TaskCycles, cCycles}, {TaskBytesIn, cBytesIn}, {TaskBytesOut, cBytesOut}, {TaskPackets, cPackets},
		{TaskStallsIn, cStallsIn}, {TaskStallsOut, cStallsOut}, {TaskCount, tasks},
	}
	var sels, vals []ir.Value
	for _, r := range regs {
		sels, vals = append(sels, lite.At(lite.RAddr, r.off)), append(vals, r.v)
	}
	lite.Reply(lite.Hold("task_rdata", m.Pick(sels, vals)))
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("kernel %s: task shell: %w", k.Name, err)
	}
	return m, nil
}
