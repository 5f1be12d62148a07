// Package msix generates the card's MSI-X interrupt controller
// (onic_msix): the kernel slots' task-end interrupts, sent as MSI-X
// messages through AMD's PCIe block's MSI-X interface in its "MSI-X
// External" mode (PG213, "MSI-X Interrupt External Interface"), in
// which the table and the Pending Bit Array are the card's own — the
// register block keeps the table in its BAR, this keeps the Pending
// Bits.
//
// What the controller does follows the PCI Express Base Specification's
// rules for a function's MSI-X (§6.1.4.5, §7.7.2): a vector that fires
// sets its Pending Bit; a pending vector is sent only while the
// function's MSI-X Enable bit is set, its Function Mask bit clear, bus
// mastering on (its Command register, from PG213's cfg_function_status)
// and its own Vector Control Mask Bit clear; sending one clears its bit.
// Pending vectors go lowest first, one at a time: the controller reads
// the vector's Message Address and Data from the table, checks once more
// that it may send, pulses cfg_interrupt_msix_int with them, and waits
// for the block's cfg_interrupt_msi_sent or _fail (PG213: the user logic
// must); a failed message is pending again.
//
// An interrupt announces a write (a task's completion record), so it
// must not reach the host before it. The block does not order its MSI-X
// messages after what the card sent on RQ; PG213's answer ("Transmit
// Transaction Ordering") is the RQ sequence number: the card tags each
// of the slots' writes to the host with SlotSeq (s_axis_rq_tuser's
// seq_num0) and the block returns it on pcie_rq_seq_num0 once the write
// is past the point an interrupt could overtake it. The controller counts
// the slots' writes as they enter the card's host path (host_posted) and
// the returns; a slot's interrupt, raised after its record entered that
// path, waits until the returns have caught up with the count it found.
package msix

import (
	"fmt"

	"onic/hdlgen/ir"
	"onic/pcie"
)

// SlotSeq is the RQ sequence number (seq_num0) the card gives the kernel
// slots' writes to the host; the others carry 0.
const SlotSeq = 1

// Vectors is how many MSI-X vectors the card's function has (its
// table's entries, pcie.ONICMSIXVectors).
const Vectors = pcie.ONICMSIXVectors

// countBits is the width of the fence counters: far more than the
// slots' writes that can be between the host path's merge and the block.
const countBits = 8

// Controller states, as the FSM names them.
const (
	stIdle     = iota // waiting for a pending vector it may send
	stReadLo          // the table's Message Address, low DW, coming
	stReadHi          // the high DW coming
	stReadData        // the Message Data coming
	stSignal          // cfg_interrupt_msix_int
	stWait            // for cfg_interrupt_msi_sent or _fail
)

// Module builds onic_msix for a card with slots kernel slots, slot k
// raising vector k (at most pcie.ONICMSIXLinkVector slots), and events
// other sources, event i firing vector pcie.ONICMSIXLinkVector+i on a
// one-cycle pulse of event[i] (the optical ports' link changes: nothing
// to wait for, no write they announce). It needs at least one source.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func Module(slots, events int) (*ir.Module, error) {
	if slots < 0 || slots > pcie.ONICMSIXLinkVector || events < 0 || pcie.ONICMSIXLinkVector+events > Vectors || slots+events == 0 {
		return nil, fmt.Errorf("msix: %d slots and %d events: want up to %d slots, up to %d events, and one source", slots, events,
			pcie.ONICMSIXLinkVector, Vectors-pcie.ONICMSIXLinkVector)
	}
	m := ir.NewModule("onic_msix")
	m.Describe("irq_", "The kernel slots' interrupts, a bit a slot (slot k raises vector k): valid until ready.")
	m.Describe("event", "Other interrupts, a pulse a bit: event i fires vector 16+i (the optical ports' link changes).")
	m.Describe("host_posted", "A kernel slot's write entered the card's path to the host this cycle.")
	m.Describe("pcie_rq_seq_num", "PG213: a sequence number the block returns once the RQ request that carried it can no longer be overtaken.")
	m.Describe("cfg_interrupt_msix_", "PG213's MSI-X external interface: the function's MSI-X Enable and Function Mask in, a message's address, data and signal out.")
	m.Describe("cfg_interrupt_msi_", "PG213: the block's answer to an MSI-X signal (sent or fail) and the function it is for.")
	m.Describe("cfg_function_status", "PG213: physical function 0's Command register bits; bit 2 is Bus Master Enable.")
	m.Describe("table_", "The MSI-X table in the register block: a DW read a cycle after its address, each vector's Mask Bit.")
	m.Describe("pending", "The Pending Bits, for the register block's PBA.")
	m.Describe("sent", "Saturating counts of MSI-X messages sent and of those the block failed.")
	c := func(w int, v uint64) ir.Value { return m.Const(w, v) }

	// The fence: the slots' writes into the host path, and those the
	// block has returned the sequence number of.
	in := m.Reg("posted_in", countBits, 0)
	m.SetNext(in, m.Add(in, c(countBits, 1)))
	m.SetEnable(in, m.Input("host_posted", 1))
	seq, seqValid := m.Input("pcie_rq_seq_num0", 6), m.Input("pcie_rq_seq_num_vld0", 1)
	out := m.Reg("posted_out", countBits, 0)
	m.SetNext(out, m.Add(out, c(countBits, 1)))
	m.SetEnable(out, m.Named("slot_write_returned", m.And(seqValid, m.Eq(seq, c(6, SlotSeq)))))

	// Each slot's interrupt waits for the writes before it, then fires
	// its vector; an event fires its own at once.
	var readies, fires []ir.Value
	var raise ir.Value
	if slots > 0 {
		raise = m.Input("irq_valid", slots)
	}
	for k := range slots {
		p := fmt.Sprintf("slot%d_", k)
		waiting := m.Reg(p+"waiting", 1, 0)
		fence := m.RegNoReset(p+"fence", countBits)
		free := m.Named(p+"irq_free", m.Not(waiting))
		take := m.Named(p+"irq_take", m.And(m.Slice(raise, k, 1), free))
		m.SetNext(fence, in)
		m.SetEnable(fence, take)
		// Caught up: out has reached fence (the difference's sign, the
		// counts being within half their range of each other).
		caught := m.Named(p+"writes_sent", m.Not(m.Slice(m.Named(p+"returned_past_fence", m.Sub(out, fence)), countBits-1, 1)))
		fire := m.Named(p+"fire", m.And(waiting, caught))
		m.SetNext(waiting, m.Or(take, m.And(waiting, m.Not(fire))))
		readies, fires = append([]ir.Value{free}, readies...), append([]ir.Value{fire}, fires...)
	}
	if slots > 0 {
		m.Output("irq_ready", m.Concat(readies...))
	}
	// The vectors fired this cycle: the events' from ONICMSIXLinkVector,
	// the slots' from 0.
	var parts []ir.Value
	if events > 0 {
		parts = append(parts, m.Input("event", events))
	}
	if gap := pcie.ONICMSIXLinkVector - slots; events > 0 && gap > 0 {
		parts = append(parts, m.Const(gap, 0))
	}
	parts = append(parts, fires...)
	fired := m.Named("vectors_fired", m.Zext(m.Concat(parts...), Vectors))

	// May the function send at all?
	enable, fmask := m.Input("cfg_interrupt_msix_enable", 4), m.Input("cfg_interrupt_msix_mask", 4)
	bme := m.Slice(m.Input("cfg_function_status", 16), 2, 1)
	mayNow := m.Named("function_may_send", m.And(m.And(m.Slice(enable, 0, 1), m.Not(m.Slice(fmask, 0, 1))), bme))
	masked := m.Input("table_masked", Vectors)
	pending := m.Reg("pending_bits", Vectors, 0)
	ready := m.Named("vectors_ready", m.And(pending, m.Not(masked)))
	// The lowest: its bit alone (ready and its two's complement), then
	// its number bit by bit.
	lowest := m.Named("vector_lowest", m.And(ready, m.Add(m.Not(ready), m.ConstWords(Vectors, []uint64{1}))))
	vb := ir.AddrBits(Vectors)
	var idx []ir.Value
	for b := vb - 1; b >= 0; b-- {
		var mask [1]uint64
		for i := range Vectors {
			if i>>b&1 == 1 {
				mask[0] |= 1 << i
			}
		}
		idx = append(idx, m.RedOr(m.And(lowest, m.ConstWords(Vectors, mask[:]))))
	}
	lowestIdx := m.Named("vector_lowest_index", m.Concat(idx...))

	st := m.Reg("msix_state", 3, stIdle)
	states := m.States(st, "IDLE", "READ_LO", "READ_HI", "READ_DATA", "SIGNAL", "WAIT")
	at := func(s uint64, name string) ir.Value { return m.Named(name, m.Eq(st, states[s])) }
	idle, readLo, readHi := at(stIdle, "msix_idle"), at(stReadLo, "msix_reading_lo"), at(stReadHi, "msix_reading_hi")
	readData, signal, wait := at(stReadData, "msix_reading_data"), at(stSignal, "msix_signalling"), at(stWait, "msix_waiting")
	start := m.Named("msix_start", m.And(idle, m.And(mayNow, m.RedOr(ready))))
	vec := m.RegNoReset("msix_vector", vb)
	m.SetNext(vec, lowestIdx)
	m.SetEnable(vec, start)

	// The table, a DW a cycle: the address's low and high DWs and the
	// data (the entry's DWs 0, 1 and 2).
	dwOf := func(v ir.Value, dw uint64) ir.Value { return m.Concat(v, c(2, dw)) }
	m.Output("table_rd_addr", m.Named("table_dw", m.Pick([]ir.Value{idle, readLo, readHi},
		[]ir.Value{dwOf(lowestIdx, 0), dwOf(vec, 1), dwOf(vec, 2)})))
	m.Output("table_rd_en", m.Any(start, readLo, readHi))
	word := m.Input("table_rd_data", 32)
	keep := func(name string, when ir.Value) ir.Value {
		r := m.RegNoReset(name, 32)
		m.SetNext(r, word)
		m.SetEnable(r, when)
		return r
	}
	addrLo, addrHi, data := keep("msg_addr_lo", readLo), keep("msg_addr_hi", readHi), keep("msg_data", readData)
	// (The address's two low bits are reserved for DW alignment: zero.)
	m.Output("cfg_interrupt_msix_address", m.Concat(addrHi, m.Slice(addrLo, 2, 30), c(2, 0)))
	m.Output("cfg_interrupt_msix_data", data)
	m.Output("cfg_interrupt_msi_function_number", c(8, 0))

	// The signal, if the vector may still go (software may have masked
	// it, or the function, while the table was read).
	vecBit := m.Named("msix_vector_bit", m.Shl(m.ConstWords(Vectors, []uint64{1}), vec))
	stillReady := m.Named("msix_vector_still_ready", m.RedOr(m.And(ready, vecBit)))
	fire := m.Named("msix_signal", m.And(signal, m.And(mayNow, stillReady)))
	m.Output("cfg_interrupt_msix_int", fire)
	sentIn, failIn := m.Input("cfg_interrupt_msi_sent", 1), m.Input("cfg_interrupt_msi_fail", 1)
	sent, failed := m.Named("msix_sent_now", m.And(wait, sentIn)), m.Named("msix_failed_now", m.And(wait, failIn))
	// Sending clears the bit as the signal goes (an interrupt that fires
	// after it is another message); a failed message is pending again.
	cleared := m.Named("pending_cleared", m.Mux(fire, vecBit, m.ConstWords(Vectors, []uint64{0})))
	again := m.Named("pending_again", m.Mux(failed, vecBit, m.ConstWords(Vectors, []uint64{0})))
	m.SetNext(pending, m.Named("pending_bits_next", m.Or(m.And(pending, m.Not(cleared)), m.Or(fired, again))))
	m.Output("pending", pending)
	count := func(name string, when ir.Value) {
		r := m.Reg(name+"_count", 32, 0)
		m.SetNext(r, m.SatAddU(r, c(32, 1)))
		m.SetEnable(r, when)
		m.Output(name, r)
	}
	count("sent", sent)
	count("failed", failed)

	// Where the controller goes next: the table's reads one after the
	// other, then the signal and its answer.
	next := st
	for _, r := range []struct {
		when ir.Value
		to   uint64
	}{
		{start, stReadLo},
		{readLo, stReadHi},
		{readHi, stReadData},
		{readData, stSignal},
	} {
		next = m.Mux(r.when, states[r.to], next)
	}
	next = m.Named("msix_state_read_next", next)
	for _, r := range []struct {
		when ir.Value
		to   uint64
	}{
		{m.And(signal, m.Not(fire)), stIdle},
		{fire, stWait},
		{m.Or(sent, failed), stIdle},
	} {
		next = m.Mux(r.when, states[r.to], next)
	}
	m.SetNext(st, m.Named("msix_state_next", next))
	return m, m.Check()
}
