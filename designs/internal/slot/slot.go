// Package slot builds an O-NIC's kernel slot: the static logic between
// the PCIe manager's TLP streams and the kernel in the slot, and the
// slot's reconfigurable module, the kernel in its task shell behind an
// interface that is the same for every kernel (so Vivado's Dynamic
// Function eXchange can swap one kernel for another).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package slot

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"onic/designs/internal/tlpbus"
	"strings"
	"sync"

	"onic/desc"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axil"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/kernels"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// Egress is where a slot's kernel sends its output.
type Egress int

// The egresses, as the scenario's kernel egress names them.
const (
	Host  Egress = iota // host: into the O-NIC's host's memory
	PortA               // port-a
	PortB               // port-b
)

// EgressOf is the slot's egress for a resolved kernel's (desc.Kernel's
// Egress: the host or a port).
func EgressOf(e ntb.Egress) Egress {
	switch e.Kind {
	case ntb.EgressPortA:
		return PortA
	case ntb.EgressPortB:
		return PortB
	}
	return Host
}

// Config is one kernel slot of a card.
type Config struct {
	// Slot is the slot's number (its page in the register BAR is
	// kernels.TaskPage(Slot)).
	Slot int
	// Kernel is the kernel in it; nil for an empty slot, which drops
	// every TLP sent to it (the emulator's empty-slot) and reads 0.
	Kernel *kernels.Kernel
	// Egress and Translated: the kernel's output leaves as posted writes
	// to Translated plus the offset of the write it came from, into the
	// host's memory or out of a port (emu/scenario's kernel egress and
	// translated).
	Egress     Egress
	Translated uint64
	// ProxyBase and Locals are the manager's requester-ID table
	// (ntb.Tables.RID): output leaving a port for a write that came from
	// the host carries the proxy ID of the host requester Locals[i],
	// ProxyBase+i, as the emulator's kernels do.
	ProxyBase uint16
	Locals    []uint16
	// Sources are a two-input kernel's inputs in order, as ingresses
	// (Ingress: the host, port A or port B); PairBytes is how many bytes
	// of writes each input may hold waiting for their partners (the
	// scenario's pair_buffer_kib).
	Sources   [2]Ingress
	PairBytes int
	// Inputs is the number of inputs of the kernels the slot's static
	// logic takes, 1 or 2 (0: the kernel's, or 1 for an empty slot). A
	// reconfigurable module for the slot must hold a kernel of that many
	// inputs, so an empty slot can be built for two-input kernels.
	Inputs int
}

// inputs is c.Inputs, defaulted.
func (c Config) inputs() int {
	switch {
	case c.Inputs != 0:
		return c.Inputs
	case c.Kernel != nil:
		return c.Kernel.Inputs
	}
	return 1
}

// Ingress is where a TLP came into the O-NIC, as the slot's
// s_tlp_ingress says: the manager's numbering.
type Ingress = pmgr.Ingress

// The ingresses.
const (
	FromHost  = pmgr.FromHost  // the host
	FromPortA = pmgr.FromPortA // optical port A
	FromPortB = pmgr.FromPortB // optical port B
)

// PairTLPs is how many writes each input of a two-input kernel may hold
// waiting; MaxPairBytes the most bytes a pair buffer may be given.
const (
	PairTLPs     = 64
	MaxPairBytes = 16 << 20
	// DefaultPairBytes is the pair buffer a two-input kernel has when
	// its entry does not say.
	DefaultPairBytes = desc.DefaultPairBytes
)

// Name is the slot's static module's name; RMName its reconfigurable
// module's.
func (c Config) Name() string   { return fmt.Sprintf("onic_slot%d", c.Slot) }
func (c Config) RMName() string { return fmt.Sprintf("onic_slot%d_kernel", c.Slot) }

// Supports says whether a card slot can hold k, and if not why: the slot
// takes kernels of one or two inputs whose output is at most as long as
// their input
// (each output write is no bigger than the write it came from, so within
// the MPS) in 512-bit beats or a power-of-two fraction of them.
func Supports(k *kernels.Kernel) error {
	if k.Inputs != 1 && k.Inputs != 2 {
		return fmt.Errorf("kernel %s has %d inputs; a card slot takes one or two", k.Name, k.Inputs)
	}
	if k.InBits() != 512 {
		return fmt.Errorf("kernel %s takes %d-bit beats; a card slot feeds 512", k.Name, k.InBits())
	}
	ob := k.OutBits()
	if ob > 512 || 512%ob != 0 || bits.OnesCount(uint(ob)) != 1 || ob < 8 {
		return fmt.Errorf("kernel %s sends %d-bit beats; a card slot packs 512-bit beats or a power-of-two fraction of them", k.Name, ob)
	}
	if k.OutGaps {
		return fmt.Errorf("kernel %s leaves gaps in its output for the DMA to pack; a card slot sends each output as one write and does not pack", k.Name)
	}
	p, err := k.Profile()
	if err != nil {
		return err
	}
	if p.OutPerIn > 1 {
		return fmt.Errorf("kernel %s sends %.4g bytes per byte in; a card slot's writes are no longer than the writes they come from", k.Name, p.OutPerIn)
	}
	return nil
}

// Sizes of the slot's buffers.
const (
	// BufferBeats is the kernel output the slot holds while it counts a
	// write's length (its header goes first): two 4 KiB writes.
	BufferBeats = 128
	// Jobs is how many writes may be inside the kernel and the buffer at
	// once: each has its header waiting.
	Jobs = 16
)

// RM is the slot's reconfigurable module, onic_slot<N>_kernel: the
// kernel in its task shell (kernels.Kernel.TaskModule), its output
// packed into 512-bit beats, behind ports every kernel shares — 512-bit
// input streams s_* and s1_* (the second input, for two-input kernels)
// and output stream m_* (tkeep a bit per byte),
// the shell's completion record m_cpl_* and interrupt m_irq_valid/ready,
// task_closed, and one AXI-Lite slave s_axil_* of 13 address bits: the
// shell's page below 0x1000, the kernel's own registers above (0 if it
// has none). An empty slot's module takes nothing (task_closed high)
// and reads 0.
func RM(c Config) (*ir.Module, error) {
	m := ir.NewModule(c.RMName())
	m.Describe("s_t", "Input 0: the write's payload, 512 bits a beat, a tkeep bit per byte, tlast on its last beat.")
	m.Describe("s1_t", "Input 1, for two-input kernels: the partner write's payload.")
	m.Describe("m_t", "The kernel's output, in the same form.")
	m.Describe("m_cpl_", "The task shell's completion record for the host's memory.")
	m.Describe("m_irq_", "The task shell's interrupt, raised after its record: valid until ready.")
	m.Describe("task_closed", "The shell is enabled and takes no input: writes for the slot are dropped.")
	m.Describe("s_axil_", "The shell's registers (below 0x1000) and the kernel's own (above): 13 address bits.")
	in := map[string]ir.Value{}
	sTData, sTKeep, sTLast, sTValid := m.Input("s_tdata", 512), m.Input("s_tkeep", 64), m.Input("s_tlast", 1), m.Input("s_tvalid", 1)
	s1TData, s1TKeep, s1TLast, s1TValid := m.Input("s1_tdata", 512), m.Input("s1_tkeep", 64), m.Input("s1_tlast", 1), m.Input("s1_tvalid", 1)
	mTReady := m.Input("m_tready", 1)
	cplReady, irqReady := m.Input("m_cpl_ready", 1), m.Input("m_irq_ready", 1)
	lite := axil.Inputs(m, "s_axil_", 13)
	if c.Kernel == nil {
		// The outputs in the order a kernel's module has them, so the
		// slot's black box is the same whichever fills it.
		m.Output("s_tready", m.Const(1, 0))
		m.Output("s1_tready", m.Const(1, 0))
		m.Output("task_closed", m.Const(1, 1))
		m.Output("m_cpl_valid", m.Const(1, 0))
		m.Output("m_cpl_addr", m.Const(64, 0))
		m.Output("m_cpl_data", m.Const(256, 0))
		m.Output("m_irq_valid", m.Const(1, 0))
		lite.Zero(m, "axil_zero").Outputs(m, "s_axil_")
		m.Output("m_tdata", m.Const(512, 0))
		m.Output("m_tkeep", m.Const(64, 0))
		m.Output("m_tlast", m.Const(1, 0))
		m.Output("m_tvalid", m.Const(1, 0))
		return m, m.Check()
	}
	if err := Supports(c.Kernel); err != nil {
		return nil, err
	}
	if c.Kernel.Inputs != c.inputs() {
		return nil, fmt.Errorf("kernel %s has %d inputs; the slot is built for kernels of %d", c.Kernel.Name, c.Kernel.Inputs, c.inputs())
	}
	shell, err := c.Kernel.TaskModule()
	if err != nil {
		return nil, err
	}
	in["s0_tdata"], in["s0_tkeep"], in["s0_tlast"], in["s0_tvalid"] = sTData, sTKeep, sTLast, sTValid
	if c.Kernel.Inputs == 2 {
		in["s1_tdata"], in["s1_tkeep"], in["s1_tlast"], in["s1_tvalid"] = s1TData, s1TKeep, s1TLast, s1TValid
	}
	in["m_cpl_ready"], in["m_irq_ready"] = cplReady, irqReady
	ob := c.Kernel.OutBits()
	n := 512 / ob
	packReady := m.Wire("pack_ready", 1)
	in["m_tready"] = packReady
	// The AXI-Lite slave: the shell's page and the kernel's, by address
	// bit 12. The register block offers one access at a time and holds
	// its address until the answer, so the address routes the answer.
	kernelPage := m.Named("kernel_page_w", m.Slice(lite.AWAddr, 12, 1))
	kernelPageR := m.Named("kernel_page_r", m.Slice(lite.ARAddr, 12, 1))
	low := func(a ir.Value) ir.Value { return m.Slice(a, 0, 12) }
	lite.Select(m, m.Not(kernelPage), m.Not(kernelPageR), low).Into(in, "s_axil_")
	kernLite := lite.Select(m, kernelPage, kernelPageR, low)
	hasRegs := false
	for _, p := range shell.Ports() {
		if !p.Output && p.Name == "s_kaxil_awaddr" {
			hasRegs = true
		}
	}
	if hasRegs {
		kernLite.Into(in, "s_kaxil_")
	}
	out := m.Instance("shell", shell, in)
	m.Output("s_tready", out["s0_tready"])
	if c.Kernel.Inputs == 2 {
		m.Output("s1_tready", out["s1_tready"])
	} else {
		m.Output("s1_tready", m.Const(1, 0))
	}
	m.Output("task_closed", out["task_closed"])
	for _, p := range []string{"m_cpl_valid", "m_cpl_addr", "m_cpl_data", "m_irq_valid"} {
		m.Output(p, out[p])
	}
	kernAns := axil.AnswerOf(out, "s_kaxil_")
	if !hasRegs {
		kernAns = kernLite.Zero(m, "kernel_axil_zero")
	}
	axil.Choose(m, []ir.Value{kernelPage, m.Not(kernelPage)}, []ir.Value{kernelPageR, m.Not(kernelPageR)},
		[]axil.Answer{kernAns, axil.AnswerOf(out, "s_axil_")}).Outputs(m, "s_axil_")

	// The output in 512-bit beats: narrower beats packed n to one.
	word := m.Concat(out["m_tlast"], out["m_tkeep"], out["m_tdata"])
	if n == 1 {
		m.Assign(packReady, mTReady)
		m.Output("m_tdata", out["m_tdata"])
		m.Output("m_tkeep", out["m_tkeep"])
		m.Output("m_tlast", out["m_tlast"])
		m.Output("m_tvalid", out["m_tvalid"])
		return m, m.Check()
	}
	narrow := axis.Stream{Data: word, Valid: out["m_tvalid"], Ready: packReady}
	// Upsize packs {last, word} with the word here {keep, data}.
	wide := axis.Upsize(m, "pack", narrow, n)
	m.Assign(wide.Ready, mTReady)
	w := ob + ob/8
	var data, keep []ir.Value
	for k := n - 1; k >= 0; k-- {
		part := m.Slice(wide.Data, k*w, w)
		present := m.Slice(wide.Data, n*w+k, 1)
		data = append(data, m.Slice(part, 0, ob))
		keep = append(keep, m.And(m.Slice(part, ob, ob/8), m.Concat(repeat(m, present, ob/8)...)))
	}
	m.Output("m_tdata", m.Concat(data...))
	m.Output("m_tkeep", m.Concat(keep...))
	m.Output("m_tlast", m.Slice(wide.Data, wide.Data.Width()-1, 1))
	m.Output("m_tvalid", wide.Valid)
	return m, m.Check()
}

// Build is the slot's static module, named name: TLPs steered into the
// slot, each ingress's on its own stream (s_host_tlp_*, s_port_a_tlp_*,
// s_port_b_tlp_*), go through the kernel, and what it
// sends leaves as posted writes on m_tlp_*, followed by the task shell's
// completion records and MSI-X messages. The kernel is the slot's
// reconfigurable module (RM), which sits beside the static module
// (Join), reached through the static module's kernel_* ports: kernel_p
// is an output for each of the RM's inputs p, an input for each of its
// outputs, but for its AXI-Lite slave, which the register block reaches
// directly. Nothing in the static module depends on the kernel, so
// slots of one shape (egress, translated base, inputs, proxy IDs, pair
// buffers) share one static module whichever kernels fill them.
//
// A TLP is decided on its first beat, as the emulator's kernel slots
// decide: one that is not a posted write is dropped (drop_not_write); a
// write that finds the shell enabled and taking no input (task_closed;
// an empty slot always) is dropped (drop_closed) — unless a register
// write is still on its way to the shells (local_busy: a doorbell the
// host sent just before its data), when it waits for it; a write whose
// output leaves a port with no proxy ID for its host requester is
// dropped (drop_no_proxy). Each count is a 32-bit output.
//
// A write taken has its output's header made at once (the address
// Translated plus the write's, the requester the card's own for the host
// or the proxy ID out of a port); the kernel's output is buffered until
// its last beat tells its length, then sent as one write, whole DWs with
// byte enables for the last. The record waits until no output is
// buffered: it follows the data it reports. The shell's interrupt is
// raised on irq_valid once the record has left the slot (its output
// register slice is empty), for the card's MSI-X controller to take
// (irq_ready) and send the slot's vector when the record has passed the
// PCIe block.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func Build(c Config, name string) *ir.Module {
	rm := interfaceOf(c.inputs())
	m := ir.NewModule(name)
	m.Describe("self_id", "The O-NIC's routing ID: the requester of the kernel's writes to the host.")
	m.Describe("local_busy", "A register write may still be on its way to the task shells: a write for the slot waits for it.")
	m.Describe("s_host_tlp_", "Writes for the slot from the host, as the manager steers them: a 128-bit header, the payload from byte 0, a keep bit per DW, sop and eop.")
	m.Describe("s_port_a_tlp_", "The same from optical port A (kernel_in ranges).")
	m.Describe("s_port_b_tlp_", "The same from optical port B.")
	m.Describe("drop_", "Saturating counts of writes the slot dropped, by reason (drop_not_write, drop_closed, drop_no_proxy, and a two-input kernel's drop_not_input and drop_pair_full).")
	m.Describe("out_malformed", "Kernel output the slot could not send as a write.")
	m.Describe("m_tlp_", "The kernel's output as posted writes to its egress, then the task shell's completion records.")
	m.Describe("irq_", "The task shell's interrupt, once its record has left: valid until the card's MSI-X controller is ready.")
	self := m.Input("self_id", 16)
	localBusy := m.Input("local_busy", 1)
	m.Describe("kernel_", "The reconfigurable module beside the slot: its inputs out, its outputs in, by its port names.")
	rmIn := map[string]ir.Value{}
	closed := m.Wire("task_closed", 1)
	rmReady, rmReady1 := m.Wire("kernel_takes", 1), m.Wire("kernel_takes1", 1)
	jobs := axis.Stream{Valid: m.Wire("job_push", 1), Ready: m.Wire("job_room", 1)}
	two := c.inputs() == 2
	g := &intakes{m: m, c: c, self: self, closed: closed, localBusy: localBusy, counts: map[string][]ir.Value{}}

	// Each ingress's TLPs: the host's (through the manager), port A's and
	// port B's (through their port pipelines).
	var raw [3]axis.Stream
	for in, name := range ingressNames {
		pre := "s_" + name + "_tlp_"
		t := tlpbus.In(m, pre, 512, tlpbus.FieldEOP, tlpbus.FieldSOP, tlpbus.FieldKeep, tlpbus.FieldData, tlpbus.FieldHdr, tlpbus.FieldValid)
		raw[in] = axis.Stream{Data: m.Concat(t.EOP, m.Const(2, uint64(in)), t.SOP, t.Keep, t.Data, t.Hdr), Valid: t.Valid, Ready: m.Wire(pre+"ready_w", 1)}
		m.Output(pre+"ready", raw[in].Ready)
	}
	bufReady := m.Wire("buffer_ready", 1)
	cplReady, irqReady := m.Wire("cpl_ready", 1), m.Wire("shell_irq_ready", 1)
	rmIn["m_tready"] = bufReady
	rmIn["m_cpl_ready"], rmIn["m_irq_ready"] = cplReady, irqReady
	if !two {
		// One input: the three, a packet at a time, through one
		// register slice, each write with its output's header (but for
		// its length and byte enables) as it goes in.
		st := g.stream("in", axis.PacketMux(m, "in_mux", raw[:]))
		d := g.decide(st, false, true, ir.Value{})
		st.accept(m, d, rmReady, jobs.Ready)
		m.Assign(jobs.Valid, m.And(m.And(st.Valid, st.SOP), m.And(d.pass, rmReady)))
		jobs.Data = d.outHdr
		rmIn["s_tdata"], rmIn["s_tkeep"], rmIn["s_tlast"], rmIn["s_tvalid"] = st.Data, byteKeep(m, st.Keep), st.EOP, st.toKernel
		rmIn["s1_tdata"], rmIn["s1_tkeep"], rmIn["s1_tlast"], rmIn["s1_tvalid"] = m.Const(512, 0), m.Const(64, 0), m.Const(1, 0), m.Const(1, 0)
	} else {
		// Two inputs: each source's TLPs into its input's pair buffer,
		// a beat a cycle each; the other ingress's are dropped.
		var sides [2]*stream
		var fits [2]ir.Value
		var decs [2]decision
		for in := range raw {
			st := g.stream(ingressNames[in], raw[in])
			side := -1
			for k, src := range c.Sources {
				if int(src) == in {
					side = k
				}
			}
			if side < 0 {
				d := g.decide(st, true, false, ir.Value{})
				st.accept(m, d, m.Const(1, 1), m.Const(1, 1)) // (nothing passes)
				continue
			}
			fits[side] = m.Wire(fmt.Sprintf("pair%d_fits_w", side), 1)
			decs[side] = g.decide(st, true, true, fits[side])
			sides[side] = st
		}
		ps := pairStage{jobs: &jobs, rmIn: rmIn, ready0: rmReady, ready1: rmReady1}
		for k := range sides {
			ps.in[k] = sides[k]
			ps.dec[k] = decs[k]
			ps.fits[k] = fits[k]
		}
		pairs(m, c, ps)
	}
	for _, name := range []string{"drop_not_write", "drop_closed", "drop_no_proxy", "drop_not_input", "drop_pair_full"} {
		if whens, ok := g.counts[name]; ok {
			// The drops a cycle decides are registered before they are
			// counted: the decision is not in front of the carry chain.
			w := bits.Len(uint(len(whens)))
			inc := m.Const(w, 0)
			for _, when := range whens {
				inc = m.Add(inc, m.Zext(when, w))
			}
			now := m.Reg(name+"_now", w, 0)
			m.SetNext(now, inc)
			r := m.Reg(name+"_count", 32, 0)
			m.SetNext(r, m.SatAddU(r, m.Named(name+"_add", m.Zext(now, 32)))) // saturates: never reads small after overflowing
			m.Output(name, r)
		}
	}
	jobQ := axis.FIFO(m, "jobs", jobs, Jobs)

	// The kernel, beside the slot: its inputs out of kernel_*, its
	// outputs in.
	k := map[string]ir.Value{}
	for _, p := range rm.Ports() {
		switch {
		case strings.HasPrefix(p.Name, "s_axil_"):
		case p.Output:
			k[p.Name] = m.Input("kernel_"+p.Name, rm.Node(p.Node).W)
		default:
			m.Output("kernel_"+p.Name, rmIn[p.Name])
		}
	}
	m.Assign(closed, k["task_closed"])
	m.Assign(rmReady, k["s_tready"])
	m.Assign(rmReady1, k["s1_tready"])

	// The output buffer, and each write's length in bytes as its last
	// beat goes in.
	outKeep, outLast, outValid := k["m_tkeep"], k["m_tlast"], k["m_tvalid"]
	lens := axis.Stream{Ready: m.Wire("len_room", 1)}
	buf := axis.Stream{Data: m.Concat(outLast, outKeep, k["m_tdata"]), Valid: m.Named("out_buffer_offer", m.And(outValid, lens.Ready)), Ready: m.Wire("buffer_room", 1)}
	m.Assign(bufReady, m.And(buf.Ready, lens.Ready))
	in := m.And(outValid, bufReady)
	acc := m.Reg("out_bytes", 13, 0)
	total := m.Named("out_bytes_total", m.Add(acc, m.Zext(onesIn(m, "out_keep", outKeep, 0), 13)))
	m.SetNext(acc, m.Mux(outLast, m.Const(13, 0), total))
	m.SetEnable(acc, in)
	lens.Data, lens.Valid = total, m.And(in, outLast)
	// A beat with a gap in its keep, or a partial one before the last,
	// is not a continuous stream: counted, as its write's length comes
	// from the kept bytes.
	gap := m.Ne(m.And(outKeep, m.Add(outKeep, m.Const(64, 1))), m.Const(64, 0))
	partial := m.And(m.Not(outLast), m.Not(m.RedAnd(outKeep)))
	count2 := m.Reg("out_malformed_count", 32, 0)
	m.SetNext(count2, m.SatAddU(count2, m.Const(32, 1)))
	m.SetEnable(count2, m.And(in, m.Or(gap, partial)))
	m.Output("out_malformed", count2)
	bufQ := axis.FIFO(m, "buffer", buf, BufferBeats)
	lenQ := axis.FIFO(m, "lens", lens, Jobs)

	// The writes: a buffered one first, else the record, else the
	// interrupt (no write: below); the choice holds from offer to end
	// (AXI4-Stream).
	busy := m.Reg("out_busy", 1, 0)
	held := m.Reg("out_held", 2, 0)
	cplValid, irqValid := k["m_cpl_valid"], k["m_irq_valid"]
	free := m.Mux(lenQ.Valid, m.Const(2, 1), m.Mux(cplValid, m.Const(2, 2), m.Mux(irqValid, m.Const(2, 3), m.Const(2, 0))))
	sel := m.Named("out_sel", m.Mux(busy, held, free))
	isData := m.Named("out_is_data", m.Eq(sel, m.Const(2, 1)))
	isCpl := m.Named("out_is_record", m.Eq(sel, m.Const(2, 2)))
	isIRQ := m.Named("out_is_interrupt", m.Eq(sel, m.Const(2, 3)))
	first := m.Reg("out_first", 1, 1)
	bytes := lenQ.Data
	dws := m.Named("out_dws", m.Slice(m.ShrC(m.Named("out_bytes_to_dw", m.Add(bytes, m.Const(13, 3))), 2), 0, 11))
	lastBytes := m.Slice(bytes, 0, 2) // bytes in the last DW, 0 meaning 4
	beMask := m.Pick([]ir.Value{m.Eq(lastBytes, m.Const(2, 1)), m.Eq(lastBytes, m.Const(2, 2)), m.Eq(lastBytes, m.Const(2, 3))},
		[]ir.Value{m.Const(4, 0x1), m.Const(4, 0x3), m.Const(4, 0x7)})
	beMask = m.Named("out_last_dw_be", m.Mux(m.Eq(lastBytes, m.Const(2, 0)), m.Const(4, 0xF), beMask))
	oneDW := m.Named("out_one_dw", m.Eq(dws, m.Const(11, 1)))
	noBytes := m.Named("out_no_bytes", m.Eq(bytes, m.Const(13, 0)))
	firstBE := m.Named("out_first_be", m.Mux(noBytes, m.Const(4, 0), m.Mux(oneDW, beMask, m.Const(4, 0xF))))
	lastBE := m.Named("out_last_be", m.Mux(m.Or(oneDW, noBytes), m.Const(4, 0), beMask))
	lenField := m.Mux(noBytes, m.Const(10, 1), m.Slice(dws, 0, 10)) // 1024 DWs wrap to 0, as the field does
	dataHdr := setLength(m, jobQ.Data, lenField, firstBE, lastBE)
	recordHdr := tlphdr.Rewrite(m, "record_rewrite", template(m, kernels.TaskRecordBytes), k["m_cpl_addr"], self)

	wordKeep := m.Slice(bufQ.Data, 512, 64)
	dwKeep := make([]ir.Value, 16)
	for i := range dwKeep {
		dwKeep[15-i] = m.RedOr(m.Slice(wordKeep, 4*i, 4))
	}
	// The writes leave through a register slice: the card's merges and
	// its path to RQ start from registers, not from this choice.
	outReady := m.Wire("out_slice_in_ready", 1)
	oValid := m.Named("out_valid", m.Or(m.And(isData, bufQ.Valid), m.And(isCpl, cplValid)))
	oEop := m.Named("out_eop", m.Mux(isData, m.Slice(bufQ.Data, 576, 1), m.Const(1, 1)))
	either := func(name string, d, c ir.Value) ir.Value { return m.Named(name, m.Mux(isData, d, c)) }
	outS := axis.SkidFields(m, "out_slice", oValid, outReady, []axis.Field{
		{Name: "hdr", Value: either("out_hdr", dataHdr, recordHdr)},
		{Name: "data", Value: either("out_data", m.Slice(bufQ.Data, 0, 512), m.Zext(k["m_cpl_data"], 512))},
		{Name: "keep", Value: either("out_keep", m.Named("out_dw_keep", m.Concat(dwKeep...)), m.Const(16, 0xFF))},
		{Name: "sop", Value: m.Named("out_sop", m.Mux(isData, first, m.Const(1, 1)))}, {Name: "eop", Value: oEop}})
	m.Assign(outS.Ready, m.Input("m_tlp_ready", 1))
	of := outS.Fields
	tlpbus.Out(m, "m_tlp_", tlpbus.Stream{Hdr: of[0], Data: of[1], Keep: of[2], SOP: of[3], EOP: of[4], Valid: outS.Valid},
		tlpbus.FieldHdr, tlpbus.FieldData, tlpbus.FieldKeep, tlpbus.FieldSOP, tlpbus.FieldEOP, tlpbus.FieldValid)
	moved := m.And(oValid, outReady)
	end := m.And(moved, oEop)
	m.SetNext(busy, m.Mux(moved, m.Not(oEop), m.Or(busy, oValid)))
	m.SetNext(held, sel)
	m.SetNext(first, m.Mux(moved, oEop, first))
	m.Assign(bufQ.Ready, m.And(isData, outReady))
	m.Assign(lenQ.Ready, m.And(isData, end))
	m.Assign(jobQ.Ready, m.And(isData, end))
	m.Assign(cplReady, m.And(isCpl, outReady))
	// The interrupt goes once the record has left the register slice:
	// from there on the card keeps the order (its MSI-X controller counts
	// the slots' writes into the host's merge and waits for the block to
	// have sent them).
	raise := m.Named("irq_raise", m.And(m.And(isIRQ, irqValid), m.Not(outS.Valid)))
	m.Output("irq_valid", raise)
	m.Assign(irqReady, m.And(raise, m.Input("irq_ready", 1)))
	return m
}

// ingressNames name the slot's input streams by ingress (Ingress).
var ingressNames = [3]string{"host", "port_a", "port_b"}

// intakes builds the slot's input streams and their decisions.
type intakes struct {
	m                       *ir.Module
	c                       Config
	self, closed, localBusy ir.Value
	counts                  map[string][]ir.Value // each drop counter's increments, one per stream
}

// stream is one input stream after its register slice.
type stream struct {
	name string
	// The stream (Side the ingress it came from: 0 host, 1 port A, 2
	// port B; Ready a wire, the slice's consumer).
	tlpbus.Stream
	// bytes and beats are the write's payload length in bytes (13 bits)
	// and in 64-byte beats, worked out before the slice from the header
	// coming in, so the pair buffers' room checks start from registers.
	bytes, beats ir.Value
	// Set by accept: the beat offered to the kernel or pair buffer, and
	// a beat taken (passed or dropped).
	toKernel, taken, drop ir.Value
}

// stream puts in (a word of {eop, ingress, sop, keep, data, hdr})
// through a register slice: what the slot decides starts from
// registers, not from the card's merge in front of it.
func (g *intakes) stream(name string, in axis.Stream) *stream {
	m := g.m
	f := tlphdr.Decode(m, name+"_pre", m.Slice(in.Data, 0, 128))
	bytes := m.Concat(tlphdr.DWs(m, f.Length), m.Const(2, 0))        // 13 bits
	beats := m.Slice(m.ShrC(m.Add(bytes, m.Const(13, 63)), 6), 0, 7) // at most 64
	sk := axis.SkidFields(m, name+"_slice", in.Valid, in.Ready, []axis.Field{
		{Name: "hdr", Value: m.Slice(in.Data, 0, 128)}, {Name: "data", Value: m.Slice(in.Data, 128, 512)},
		{Name: "keep", Value: m.Slice(in.Data, 640, 16)}, {Name: "sop", Value: m.Slice(in.Data, 656, 1)},
		{Name: "ingress", Value: m.Slice(in.Data, 657, 2)}, {Name: "eop", Value: m.Slice(in.Data, 659, 1)},
		{Name: "bytes", Value: bytes}, {Name: "beats", Value: beats}})
	st := &stream{name: name, Stream: tlpbus.Stream{Ready: sk.Ready, Valid: sk.Valid}}
	v := sk.Fields
	st.Hdr, st.Data, st.Keep, st.SOP, st.Side, st.EOP, st.bytes, st.beats = v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	return st
}

// decision is what the slot decides on a TLP's first beat.
type decision struct {
	pass, drop ir.Value // 1: goes in; 1: dropped (neither: it waits)
	outHdr     ir.Value // the output's header, but for its length and byte enables
}

// decide makes the first-beat decision on st's TLP, in the emulator's
// order (kernel.process): not a posted write; the shell closed (waiting
// while a register write is on its way); for a two-input kernel (two)
// not one of its inputs (isInput false) or no room in its pair buffer
// (fits 0); no proxy ID for a port egress.
func (g *intakes) decide(st *stream, two, isInput bool, fits ir.Value) decision {
	m, c, n := g.m, g.c, st.name
	f := tlphdr.Decode(m, n+"_hdr", st.Hdr)
	typeLo, typeW := tlphdr.Pos(tlphdr.Layout("type", tlp.ClassMemory, tlp.Fmt3DW))
	isWrite := m.Named(n+"_is_write", m.And(f.HasData, m.Eq(m.Slice(st.Hdr, typeLo, typeW), m.Const(typeW, 0))))
	fromHost := m.Eq(st.Side, m.Const(2, uint64(FromHost)))
	req := g.self
	proxyOK := m.Const(1, 1)
	if c.Egress != Host {
		var hits, ids []ir.Value
		for i, id := range c.Locals {
			hits = append(hits, m.Eq(f.Requester, m.Const(16, uint64(id))))
			ids = append(ids, m.Const(16, uint64(c.ProxyBase)+uint64(i)))
		}
		proxy := m.Const(16, 0)
		if len(hits) > 0 {
			proxy = m.Pick(hits, ids)
		}
		proxyOK = m.Or(m.Not(fromHost), m.Any(append(hits, m.Const(1, 0))...))
		req = m.Mux(fromHost, proxy, f.Requester)
	}
	open := m.Not(g.closed)
	write := m.And(isWrite, open)
	note := func(name string, v ir.Value) ir.Value {
		g.counts[name] = append(g.counts[name], m.And(m.And(st.Valid, st.SOP), m.And(st.Ready, v)))
		return v
	}
	drops := []ir.Value{
		note("drop_not_write", m.Not(isWrite)),
		note("drop_closed", m.And(isWrite, m.And(g.closed, m.Not(g.localBusy)))),
	}
	pass := write
	if two {
		if !isInput {
			drops = append(drops, note("drop_not_input", write))
			return decision{pass: m.Const(1, 0), drop: m.Named(n+"_drop", m.Any(drops...)), outHdr: m.Const(128, 0)}
		}
		drops = append(drops, note("drop_pair_full", m.And(m.And(pass, proxyOK), m.Not(fits))))
		pass = m.And(pass, fits)
	}
	drops = append(drops, note("drop_no_proxy", m.And(pass, m.Not(proxyOK))))
	pass = m.Named(n+"_pass", m.And(pass, proxyOK))
	outAddr := m.Named(n+"_out_address", m.Add(f.Address, m.Const(64, c.Translated)))
	return decision{pass: pass, drop: m.Named(n+"_drop", m.Any(drops...)), outHdr: tlphdr.Rewrite(m, n+"_out_rewrite", st.Hdr, outAddr, req)}
}

// accept drives st's ready: a dropped TLP is taken whole at once, one
// that passes as its destination takes it (ready, with room for its
// first beat), one that waits not at all. It sets st.toKernel, taken
// and drop.
func (st *stream) accept(m *ir.Module, d decision, ready, room ir.Value) {
	dropping := m.Reg(st.name+"_dropping", 1, 0)
	st.drop = m.Mux(st.SOP, d.drop, dropping)
	goes := m.Mux(st.SOP, m.And(d.pass, room), m.Not(dropping))
	st.toKernel = m.Named(st.name+"_to_kernel", m.And(st.Valid, goes))
	r := m.Named(st.name+"_ready", m.Or(m.And(st.Valid, st.drop), m.And(ready, goes)))
	m.Assign(st.Ready, r)
	st.taken = m.And(st.Valid, r)
	m.SetNext(dropping, m.Mux(st.taken, m.And(st.drop, m.Not(st.EOP)), dropping))
}

// setLength puts the Length field and the byte enables into a memory
// request header.
func setLength(m *ir.Module, hdr, length, firstBE, lastBE ir.Value) ir.Value {
	lenLo, _ := tlphdr.Pos(tlphdr.Layout("length", tlp.ClassMemory, tlp.Fmt3DW))
	fbLo, _ := tlphdr.Pos(tlphdr.Layout("first_be", tlp.ClassMemory, tlp.Fmt3DW))
	lbLo, _ := tlphdr.Pos(tlphdr.Layout("last_be", tlp.ClassMemory, tlp.Fmt3DW))
	type field struct {
		lo int
		v  ir.Value
	}
	fs := []field{{lenLo, length}, {fbLo, firstBE}, {lbLo, lastBE}}
	// Assemble from the top down, fields in position order.
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			if fs[j].lo > fs[i].lo {
				fs[i], fs[j] = fs[j], fs[i]
			}
		}
	}
	var parts []ir.Value
	top := 128
	for _, f := range fs {
		hi := f.lo + f.v.Width()
		if hi < top {
			parts = append(parts, m.Slice(hdr, hi, top-hi))
		}
		parts = append(parts, f.v)
		top = f.lo
	}
	if top > 0 {
		parts = append(parts, m.Slice(hdr, 0, top))
	}
	return m.Concat(parts...)
}

// template is the header of a posted write of n bytes (whole DWs) from
// the O-NIC, before its address and requester are put in: TC 0, no
// attributes, tag 0.
func template(m *ir.Module, n int) ir.Value {
	x := tlp.TLP{Fmt: tlp.Fmt3DWData, Type: 0, Length: uint16(n / 4), FirstBE: 0xF, Data: make([]byte, n)}
	if n > 4 {
		x.LastBE = 0xF
	}
	b, err := x.AppendHeader(nil)
	if err != nil {
		panic(err) // a fixed header the package makes
	}
	var h [16]byte
	copy(h[:], b)
	return m.ConstWords(128, []uint64{binary.BigEndian.Uint64(h[8:]), binary.BigEndian.Uint64(h[:8])})
}

// repeat is n copies of the one-bit v (as a concatenation they print as
// Verilog's replication, where a sign extension would print a wire per
// bit).
func repeat(m *ir.Module, v ir.Value, n int) []ir.Value {
	vs := make([]ir.Value, n)
	for i := range vs {
		vs[i] = v
	}
	return vs
}

// byteKeep widens a keep bit per DW to a bit per byte.
func byteKeep(m *ir.Module, dw ir.Value) ir.Value {
	var parts []ir.Value
	for i := dw.Width() - 1; i >= 0; i-- {
		parts = append(parts, repeat(m, m.Slice(dw, i, 1), 4)...)
	}
	return m.Concat(parts...)
}

// pairStage is what the pair buffers of a two-input kernel's slot work
// with.
type pairStage struct {
	in             [2]*stream   // each input's TLPs
	dec            [2]decision  // and the decision on them
	fits           [2]ir.Value  // wires to drive: the first beat offered on each input has room
	jobs           *axis.Stream // the output headers (Valid and Data to drive)
	rmIn           map[string]ir.Value
	ready0, ready1 ir.Value // the kernel's s_tready and s1_tready
}

// pairs builds a two-input kernel's pair buffers: each input's writes
// wait in their own buffer (data, and a header each) until the other
// input has one too; then the two go through the kernel side by side,
// beat by beat, the output's header input 0's with the requester of
// the later of the two (the emulator's kernel.process). A pair whose
// lengths differ is drained unused and counted twice in
// drop_pair_length. A write fits its input while that input holds fewer
// than PairTLPs writes and room for its beats, and — unless the other
// input has a write waiting for it — at most PairBytes bytes with it.
// Each input takes a beat a cycle.
func pairs(m *ir.Module, c Config, p pairStage) {
	ir.Helper()
	limit := c.PairBytes
	if limit == 0 {
		limit = DefaultPairBytes
	}
	limit = min(max(limit, 64), MaxPairBytes)
	depth := 1 << ir.AddrBits(max(limit/64, 128)) // beats
	db := ir.AddrBits(depth) + 1

	type input struct {
		hdrQ, dataQ  axis.Stream
		hdrRoom      ir.Value // the header buffer is not full
		free         ir.Value // beats
		waiting      ir.Value // writes
		room         ir.Value // bytes
		bytes, beats ir.Value // of the write offered
		accept       ir.Value // its first beat goes in
		dataReady    ir.Value // the data buffer has room for a beat
	}
	var in [2]input
	start := m.Wire("pair_start", 1)
	popBeat := [2]ir.Value{m.Wire("pair0_pop", 1), m.Wire("pair1_pop", 1)}
	startBytes := [2]ir.Value{}
	for k := range in {
		st, x := p.in[k], &in[k]
		n := fmt.Sprintf("pair%d", k)
		x.bytes, x.beats = st.bytes, m.Zext(st.beats, db)
		x.dataReady = m.Wire(n+"_in_ready", 1)
		st.accept(m, p.dec[k], x.dataReady, m.Const(1, 1))
		x.accept = m.Named(n+"_accept", m.And(m.And(st.taken, st.SOP), m.Not(st.drop)))
	}
	// Arrival order, for the requester of a pair's output: each write is
	// stamped with the cycle it arrived in (a free-running count, so the
	// stamp does not wait for the decision), and input 1's counts as the
	// later when both arrive in the same cycle.
	seq := m.Reg("pair_cycle", 32, 0)
	m.SetNext(seq, m.Add(seq, m.Const(32, 1)))
	seqOf := [2]ir.Value{seq, seq}
	for k := range in {
		st, x := p.in[k], &in[k]
		n := fmt.Sprintf("pair%d", k)
		x.hdrRoom = m.Wire(n+"_hdr_room", 1)
		x.hdrQ = axis.FIFO(m, n+"_hdrs", axis.Stream{Data: m.Concat(seqOf[k], p.dec[k].outHdr), Valid: x.accept, Ready: x.hdrRoom}, PairTLPs)
		x.dataQ = axis.FIFO(m, n+"_data", axis.Stream{Data: m.Concat(st.EOP, st.Keep, st.Data), Valid: st.toKernel, Ready: x.dataReady}, depth)
		// Both of a counter's next values are worked out beside the
		// decision, which only chooses between them: the decision's path
		// ends in a multiplexer, not in a carry chain.
		x.free = m.Reg(n+"_free_beats", db, uint64(depth))
		freeNext := m.Add(x.free, m.Zext(popBeat[k], db))
		m.SetNext(x.free, m.Mux(x.accept, m.Sub(freeNext, x.beats), freeNext))
		x.waiting = m.Reg(n+"_waiting", ir.AddrBits(PairTLPs)+1, 0)
		wb := x.waiting.Width()
		waitNext := m.Sub(x.waiting, m.Zext(start, wb))
		m.SetNext(x.waiting, m.Mux(x.accept, m.Add(waitNext, m.Const(wb, 1)), waitNext))
		x.room = m.Reg(n+"_room_bytes", 25, uint64(limit)) // pair_buffer_kib less what waits
		hf := tlphdr.Decode(m, n+"_head", m.Slice(x.hdrQ.Data, 0, 128))
		startBytes[k] = m.Concat(tlphdr.DWs(m, hf.Length), m.Const(2, 0))
		roomNext := m.Add(x.room, m.Mux(start, m.Zext(startBytes[k], 25), m.Const(25, 0)))
		m.SetNext(x.room, m.Mux(x.accept, m.Sub(roomNext, m.Zext(x.bytes, 25)), roomNext))
	}
	for k := range in {
		x, other := &in[k], &in[1-k]
		room := m.And(m.Not(m.LtU(x.free, x.beats)), x.hdrRoom)
		otherWaits := m.Ne(other.waiting, m.Const(other.waiting.Width(), 0))
		underLimit := m.Not(m.LtU(x.room, m.Zext(x.bytes, 25)))
		m.Assign(p.fits[k], m.Named(fmt.Sprintf("pair%d_fits", k), m.And(room, m.Or(otherWaits, underLimit))))
	}

	// The pairing: both inputs' oldest writes, when both have one.
	const (
		idle = iota
		streaming
		drain
	)
	state := m.Reg("pair_state", 2, idle)
	is := func(v uint64) ir.Value { return m.Eq(state, m.Const(2, v)) }
	both := m.And(in[0].hdrQ.Valid, in[1].hdrQ.Valid)
	same := m.Named("pair_same_length", m.Eq(startBytes[0], startBytes[1]))
	m.Assign(start, m.And(m.And(is(idle), both), m.Or(m.Not(same), p.jobs.Ready)))
	m.Assign(in[0].hdrQ.Ready, start)
	m.Assign(in[1].hdrQ.Ready, start)
	reqLo, _ := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassMemory, tlp.Fmt3DW))
	h0, h1 := m.Slice(in[0].hdrQ.Data, 0, 128), m.Slice(in[1].hdrQ.Data, 0, 128)
	later1 := m.Not(m.LtU(m.Slice(in[1].hdrQ.Data, 128, 32), m.Slice(in[0].hdrQ.Data, 128, 32)))
	req := m.Mux(later1, m.Slice(h1, reqLo, 16), m.Slice(h0, reqLo, 16))
	m.Assign(p.jobs.Valid, m.And(m.And(is(idle), both), same))
	p.jobs.Data = m.Concat(m.Slice(h0, reqLo+16, 128-reqLo-16), req, m.Slice(h0, 0, reqLo))
	lengths := m.Reg("drop_pair_length_count", 32, 0)
	m.SetNext(lengths, m.Add(lengths, m.Const(32, 2)))
	m.SetEnable(lengths, m.And(start, m.Not(same)))
	m.Output("drop_pair_length", lengths)

	// Each input's beats: to the kernel side by side, or drained.
	done := [2]ir.Value{m.Reg("pair0_done", 1, 0), m.Reg("pair1_done", 1, 0)}
	busy := m.Not(is(idle))
	var ends [2]ir.Value
	for k := range in {
		// A register slice after the block RAM: its read out is slow, and
		// the kernel's own logic follows.
		fifo := in[k].dataQ
		q := axis.Skid(m, fmt.Sprintf("pair%d_out", k), fifo)
		m.Assign(popBeat[k], m.And(fifo.Valid, fifo.Ready))
		last := m.Slice(q.Data, 512+16, 1)
		offer := m.And(m.And(busy, q.Valid), m.Not(done[k]))
		ready := m.Mux(is(streaming), []ir.Value{p.ready0, p.ready1}[k], m.Const(1, 1))
		pop := m.And(offer, ready)
		m.Assign(q.Ready, m.And(m.And(busy, m.Not(done[k])), ready))
		ends[k] = m.Or(done[k], m.And(pop, last))
		prefix := []string{"s_", "s1_"}[k]
		p.rmIn[prefix+"tdata"], p.rmIn[prefix+"tkeep"], p.rmIn[prefix+"tlast"] = m.Slice(q.Data, 0, 512), byteKeep(m, m.Slice(q.Data, 512, 16)), last
		p.rmIn[prefix+"tvalid"] = m.And(offer, is(streaming))
	}
	finish := m.And(busy, m.And(ends[0], ends[1]))
	for k := range done {
		m.SetNext(done[k], m.And(ends[k], m.Not(finish)))
	}
	m.SetNext(state, m.Mux(start, m.Mux(same, m.Const(2, streaming), m.Const(2, drain)), m.Mux(finish, m.Const(2, idle), state)))
}

// onesIn is how many bits of v are set, as a balanced adder tree whose
// sums over 4 bits or more are named from the bits they count
// (<name>_ones_<lo>_<hi>, lo the bit of v at which v starts in the whole).
func onesIn(m *ir.Module, name string, v ir.Value, lo int) ir.Value {
	ir.Helper()
	n := v.Width()
	if n <= 1 {
		return v
	}
	a, b := onesIn(m, name, m.Slice(v, 0, n/2), lo), onesIn(m, name, m.Slice(v, n/2, n-n/2), lo+n/2)
	w := bits.Len(uint(n))
	sum := m.Add(m.Zext(a, w), m.Zext(b, w))
	if n >= 4 {
		sum = m.Named(fmt.Sprintf("%s_ones_%d_%d", name, lo, lo+n-1), sum)
	}
	return sum
}

// interfaces are the reconfigurable modules' port lists, by inputs: an
// empty slot's module, whose ports every kernel's module has.
var interfaces sync.Map

// interfaceOf is the ports every reconfigurable module of a slot with
// inputs inputs has (the empty slot's module).
func interfaceOf(inputs int) *ir.Module {
	if m, ok := interfaces.Load(inputs); ok {
		return m.(*ir.Module)
	}
	m, err := RM(Config{Inputs: inputs})
	if err != nil {
		panic(err) // an empty slot always builds
	}
	got, _ := interfaces.LoadOrStore(inputs, m)
	return got.(*ir.Module)
}

// Join places a slot in m: its static module (Build) as the instance
// name and its reconfigurable module rm beside it as name_kernel, joined
// by the static module's kernel_* ports. in holds the static module's
// inputs (but for kernel_*) and the RM's AXI-Lite slave's (s_axil_*); the
// result holds the static module's outputs (but for kernel_*) and the
// RM's AXI-Lite answers (s_axil_*).
func Join(m *ir.Module, name string, static, rm *ir.Module, in map[string]ir.Value) map[string]ir.Value {
	ir.Helper()
	fromRM := map[string]ir.Value{}
	sin := map[string]ir.Value{}
	for _, p := range static.Ports() {
		if p.Output {
			continue
		}
		if k, ok := strings.CutPrefix(p.Name, "kernel_"); ok {
			fromRM[k] = m.Wire(name+"_kernel_"+k, static.Node(p.Node).W)
			sin[p.Name] = fromRM[k]
		} else {
			sin[p.Name] = in[p.Name]
		}
	}
	sout := m.Instance(name, static, sin)
	rin := map[string]ir.Value{}
	for _, p := range rm.Ports() {
		if p.Output {
			continue
		}
		if strings.HasPrefix(p.Name, "s_axil_") {
			rin[p.Name] = in[p.Name]
		} else {
			rin[p.Name] = sout["kernel_"+p.Name]
		}
	}
	rout := m.Instance(name+"_kernel", rm, rin)
	out := map[string]ir.Value{}
	for _, p := range rm.Ports() {
		if !p.Output {
			continue
		}
		if strings.HasPrefix(p.Name, "s_axil_") {
			out[p.Name] = rout[p.Name]
		} else {
			m.Assign(fromRM[p.Name], rout[p.Name])
		}
	}
	for _, p := range static.Ports() {
		if p.Output && !strings.HasPrefix(p.Name, "kernel_") {
			out[p.Name] = sout[p.Name]
		}
	}
	return out
}

// Assemble is a slot as one module, named c.Name(): its static module
// (as onic_slot) and rm joined, with the static module's ports and the
// RM's AXI-Lite slave. For tests of a slot on its own; the card joins
// them itself (Join).
func Assemble(c Config, rm *ir.Module) *ir.Module {
	static := Build(c, "onic_slot")
	m := ir.NewModule(c.Name())
	in := map[string]ir.Value{}
	for _, mod := range []*ir.Module{static, rm} {
		for _, p := range mod.Ports() {
			if !p.Output && !strings.HasPrefix(p.Name, "kernel_") && (mod == static || strings.HasPrefix(p.Name, "s_axil_")) {
				in[p.Name] = m.Input(p.Name, mod.Node(p.Node).W)
			}
		}
	}
	out := Join(m, "slot", static, rm, in)
	for _, mod := range []*ir.Module{static, rm} {
		for _, p := range mod.Ports() {
			if p.Output && !strings.HasPrefix(p.Name, "kernel_") && (mod == static || strings.HasPrefix(p.Name, "s_axil_")) {
				m.Output(p.Name, out[p.Name])
			}
		}
	}
	return m
}
