package card

import (
	"fmt"
	"math/bits"
	"onic/designs/internal/tlpbus"
	"onic/tlp"
	"slices"
	"strings"

	"onic/designs/internal/msix"
	"onic/designs/internal/optlink"
	"onic/designs/internal/pcie4"
	"onic/designs/internal/tlphdr"
	"onic/designs/manager"
	"onic/hdlgen/axil"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	pmgr "onic/pcie/manager"
	"onic/pcie/pg213"
)

// Parts are the generated blocks a card is made of.
type Parts struct {
	// Manager is the manager's host pipeline (manager.Build).
	Manager *ir.Module
	// PortIn is its pipeline for TLPs from the optical ports
	// (manager.BuildPortIn).
	PortIn *ir.Module
	// Link is the optical link layer (optlink.Module), one per port.
	Link *ir.Module
	// Regs is the register block (manager.BuildRegBlock): the register
	// BAR's reads and writes, the manager's AXI-Lite registers, the MSI-X
	// table and the kernel slots' pages.
	Regs *ir.Module
	// ExtConfig is what the card answers in the PCIE4 block's user
	// extended configuration space (pg213.UserExtended of the O-NIC's
	// function: its description capability).
	ExtConfig [pg213.ExtRegs]uint32
	// ExtSpace, when set, is another block's user extended space (the
	// PCIE4C's) and ExtWords what the card answers there, in place of
	// ExtConfig.
	ExtSpace pg213.ExtSpace
	ExtWords []uint32
	// Slots are the kernel slots (SlotsOf), every one the manager's
	// tables number, in order. Nil leaves the slots out of the card: the
	// TLPs for them leave on m_kernel_tlp_* (m_kernel_slot says which) and
	// the register block's master toward their pages is m_slot_axil_*,
	// ports of the top (for tests of the pipelines alone).
	Slots []Slot
	// HoldTLPs is, for an O-NIC whose down policy is hold (a Manager
	// built with manager.Config.Hold), how many TLPs each port's hold
	// buffer keeps while the port is not up; 0 for the fail policy.
	HoldTLPs int
	// EgressStallCycles is how long a TLP may wait at a port's egress
	// while the port is up but takes nothing (a slow or stuck partner)
	// before the card treats the port as down for admission
	// (egressStall); 0 is DefaultEgressStallCycles.
	EgressStallCycles int
	// DropTaps adds, for a simulation that must know which TLP a port's
	// hold buffer or down gate drops (the emulator's RTL backend,
	// designs/cardsim), outputs <port>_hold_tap and <port>_down_tap with
	// the first 64 bits of the dropped TLP's payload (dropWhole), and,
	// from a Manager built with its DropTap, host_drop_tap with the word
	// and the reason of each host TLP the manager failed. A card for a
	// board leaves them out.
	DropTaps bool
	// RegisterBAR is the BAR of the O-NIC's registers (the manager's
	// configuration's register_bar): a host write to it fences the host
	// stream (Build).
	RegisterBAR int
}

// dropWhole passes in on but drops whole the TLPs for which dropAtSop is
// 1 on their first beat, counting them in the output <name>s (32 bits).
// With tap, it also tells a simulation which TLP it drops (Parts.DropTaps):
// <name>_tap is 1 in the cycle a TLP with a payload is dropped, whose
// first 64 bits of payload <name>_tap_word shows.
func dropWhole(m *ir.Module, name string, in tlpbus.Stream, dropAtSop ir.Value, tap bool) tlpbus.Stream {
	ir.Helper()
	dropping := m.Reg(name+"_dropping", 1, 0)
	drop := m.Named(name+"_drop", m.Mux(in.SOP, dropAtSop, dropping))
	out := in
	out.Valid = m.And(in.Valid, m.Not(drop))
	out.Ready = m.Wire(name+"_kept_ready", 1)
	m.Assign(in.Ready, m.Or(drop, out.Ready))
	taken := m.And(in.Valid, m.Or(drop, out.Ready))
	m.SetNext(dropping, m.Mux(taken, m.And(drop, m.Not(in.EOP)), dropping))
	drops := m.Reg(name+"_drop_count", 32, 0)
	m.SetNext(drops, m.SatAddU(drops, m.Const(32, 1)))
	m.SetEnable(drops, m.And(m.And(in.Valid, in.SOP), drop))
	m.Output(name+"_drops", drops)
	if tap {
		f := tlphdr.Decode(m, "", in.Hdr)
		m.Output(name+"_tap", m.And(m.And(in.Valid, in.SOP), m.And(drop, f.HasData)))
		m.Output(name+"_tap_word", m.Slice(in.Data, 0, 64))
	}
	return out
}

// holdBuffer keeps the port's TLPs in a FIFO of HoldBeats beats in front
// of its link (after a register slice): the emulator's hold policy.
// While the link is up TLPs pass through it (and wait, whole, until all
// of the next fits). A TLP that starts while the link
// is not up is kept if the buffer has room for it (fewer than holdTLPs
// TLPs waiting and beats enough for all of it) and sent once the link is
// up, in order; without room it is dropped whole and counted in
// <port>_hold_drops, as the emulator drops it as hold-buffer-full.
//
// admit says whether the port takes TLPs (up and not stalled) and up
// whether the link does: a stalled port's buffer goes on sending while
// TLPs that find it full are dropped. halfFree is 1 while at least half
// the buffer is free: half its beats and half its hold_tlps (with only
// the beats, a buffer full of small TLPs would count as drained at once,
// and a stalled port would take traffic again only to stall again).
func holdBuffer(m *ir.Module, port string, in tlpbus.Stream, admit, up ir.Value, holdTLPs int, tap bool) (out tlpbus.Stream, halfFree ir.Value) {
	return egressBuffer(m, egressBuf{drop: port + "_hold", name: port + "_hold", beats: HoldBeats, tlps: holdTLPs, hold: true, tap: tap}, in, admit, up)
}

// FailBeats is the fail policy's egress buffer in front of a port's link,
// in beats: one TLP of the largest payload (4 KiB) fits.
const FailBeats = 128

// FailTLPs is how many TLPs the fail policy's egress buffer takes: two,
// one leaving while the next goes in (pmgr's, the emulator's too).
const FailTLPs = pmgr.FailEgressTLPs

// failBuffer is the fail policy's egress buffer: a FIFO of FailBeats
// beats and at most FailTLPs TLPs in front of the port's link, which a
// TLP goes into only whole, so that one half in cannot hold the merge —
// and with it the card's host path — while the link has no credits for
// it (a partner that returns none did that: the TLP started while the
// port was up, so the down gate let the rest of it through, and the
// rest waited for the link). What starts while the port does not admit
// is dropped whole and counted in <port>_down_drops. What
// the buffer holds goes on to the link, which drops it if it is down.
func failBuffer(m *ir.Module, port string, in tlpbus.Stream, admit ir.Value, tap bool) tlpbus.Stream {
	out, _ := egressBuffer(m, egressBuf{drop: port + "_down", name: port + "_fail", beats: FailBeats, tlps: FailTLPs, tap: tap}, in, admit, m.Const(1, 1))
	return out
}

// egressBuf describes a port's egress buffer: the names of its drop
// (counted in <drop>_drops) and of the rest, its beats and TLPs, whether
// it keeps what fits while the port does not admit (hold) or drops all
// of it (fail), and whether it has drop taps.
type egressBuf struct {
	drop, name  string
	beats, tlps int
	hold, tap   bool
}

// egressBuffer builds egress buffer b in front of a port's link (after a
// register slice): holdBuffer's and failBuffer's. admit says whether the
// port takes TLPs; nothing leaves while up is 0, except the rest of a TLP
// that started.
func egressBuffer(m *ir.Module, b egressBuf, in tlpbus.Stream, admit, up ir.Value) (out tlpbus.Stream, halfFree ir.Value) {
	ab := ir.AddrBits(b.beats)
	cb := max(ir.AddrBits(b.tlps+1), ab+1)
	// The beats a TLP takes (its payload's, a keep bit's DW each; one
	// without) are worked out as it enters a register slice, and travel
	// with it, so the admission starts from registers: its ready would
	// otherwise run back through the merge into the manager's output
	// slice.
	f := tlphdr.Decode(m, b.name+"_hdr", in.Hdr)
	dws := m.Concat(m.Eq(f.Length, m.Const(10, 0)), f.Length)
	perBeat := bits.Len(uint(in.Keep.Width() - 1))         // log2 of the DWs in a beat
	beatsOf := m.ShrC(m.Sub(dws, m.Const(11, 1)), perBeat) // (at most 1023: a smaller buffer's need fits its width)
	if ab+1 > 11 {
		beatsOf = m.Zext(beatsOf, ab+1)
	} else {
		beatsOf = m.Slice(beatsOf, 0, ab+1)
	}
	payloadBeats := m.Add(beatsOf, m.Const(ab+1, 1))
	in, extra := tlpbus.SliceFields(m, b.name+"_slice", in, axis.Field{Name: "need", Value: m.Mux(f.HasData, payloadBeats, m.Const(ab+1, 1))})
	need := extra[0]

	free := m.Reg(b.name+"_free", ab+1, uint64(b.beats))
	queued := m.Reg(b.name+"_tlps", cb, 0)
	room := m.Named(b.name+"_room", m.And(m.LtU(queued, m.Const(cb, uint64(b.tlps))), m.Not(m.LtU(free, need))))
	dropIt := m.Not(admit)
	if b.hold {
		dropIt = m.And(dropIt, m.Not(room))
	}
	keep := dropWhole(m, b.drop, in, dropIt, b.tap)
	// A TLP starts into the buffer only when all of it fits, also while
	// the port admits: one half in would wait for room that only the link
	// can make, and a port that stalls meanwhile could neither drop the
	// rest nor take it — the whole host path behind it would wait until
	// the link's credit timeout (a partner returning no credits did that).
	// So what does not fit waits whole at the merge, where the egress
	// stall sees it and, once the port counts as stalled, drops it.
	fits := m.Named(b.name+"_fits", m.Or(m.Not(keep.SOP), room))
	gated := keep
	gated.Valid = m.And(keep.Valid, fits)
	gated.Ready = m.Wire(b.name+"_in_ready", 1)
	m.Assign(keep.Ready, m.And(gated.Ready, fits))

	// Nothing leaves while the link is not up (its own input slice would
	// take a TLP or two more than hold_tlps), except the rest of a TLP
	// that started.
	q := axis.FIFO(m, b.name, gated.Pack(m), b.beats)
	held := tlpbus.Unpack(m, q, in)
	midTLP := m.Reg(b.name+"_mid", 1, 0)
	open := m.Named(b.name+"_open", m.Or(up, midTLP))
	out = held
	out.Valid = m.And(held.Valid, open)
	out.Ready = m.Wire(b.name+"_to_link_ready", 1)
	m.Assign(held.Ready, m.And(out.Ready, open))
	push := m.And(gated.Valid, gated.Ready)
	pop := m.And(out.Valid, out.Ready)
	m.SetNext(midTLP, m.Mux(pop, m.Not(held.EOP), midTLP))
	m.SetNext(free, m.Add(m.Sub(free, m.Zext(push, ab+1)), m.Zext(pop, ab+1)))
	m.SetNext(queued, m.Sub(m.Add(queued, m.Zext(m.And(push, in.SOP), cb)), m.Zext(m.And(pop, out.EOP), cb)))
	beatsHalf := m.Not(m.LtU(free, m.Const(ab+1, uint64(b.beats/2))))
	tlpsHalf := m.Not(m.LtU(m.Const(cb, uint64(b.tlps/2)), queued))
	return out, m.Named(b.name+"_half_free", m.And(beatsHalf, tlpsHalf))
}

// DefaultEgressStallCycles is how long, in user clock cycles, a TLP may
// wait at an up port's egress that takes nothing before the port counts
// as stalled (pcie/manager's, the emulator's too).
const DefaultEgressStallCycles = pmgr.DefaultEgressStallCycles

// egressStall watches a port's egress (the merge of everything bound for
// the port, before its hold buffer or down gate). The port is stalled —
// a partner that returns no credits, does not acknowledge, or is slow,
// with the link still up — once a beat there has waited cycles cycles
// in a row, or once the merge has waited cycles/2 cycles of a window of
// cycles cycles (which starts as the merge starts to wait) while fewer
// than pmgr.SlowTLPs(cycles) TLPs got past it in the window (a partner
// returning credits a trickle at a time makes some
// progress, and would otherwise hold the card's one pipeline behind the
// port's full buffer, at the trickle's pace). The card then treats the
// port as down for admission until it drains (released: in the hold
// policy, half the hold buffer free; in fail, the link ready for 256
// cycles in a row). A released port's watch starts afresh: while it is
// stalled, its counters stay at zero, so that what it counted before the
// stall cannot stall it again as it is released (the slow rule's window,
// once run to its end, kept it stalled up to a window after its link was
// ready again). So what waits for a stuck port stops waiting: held
// while the buffer has room and dropped when it has not (hold), or
// failed by the manager as port-down with the rest dropped at the down
// gate (fail); and the host's other traffic — register accesses, the
// other port, completions — flows again after at most a window and a
// half. Each time the port stalls counts in <port>_egress_stalls.
func egressStall(m *ir.Module, port string, in tlpbus.Stream, released ir.Value, cycles int) ir.Value {
	ir.Helper()
	w := bits.Len(uint(cycles))
	waiting := m.Named(port+"_egress_waiting", m.And(in.Valid, m.Not(in.Ready)))
	waited := m.Reg(port+"_egress_waited", w, 0)
	stalled := m.Reg(port+"_egress_stalled", 1, 0)
	stuck := m.Named(port+"_egress_stuck", m.And(waiting, m.Eq(waited, m.Const(w, uint64(cycles-1)))))
	m.SetNext(waited, m.Mux(m.And(m.And(waiting, m.Not(stuck)), m.Not(stalled)), m.Add(waited, m.Const(w, 1)), m.Const(w, 0)))

	// The slow watch's window: its cycles, the cycles the merge waited in
	// it, and the TLPs that got past (saturating). A window starts with
	// the first cycle the merge waits and, while it goes on waiting, the
	// next starts as one ends; an idle egress has none. (A free-running
	// window made when a trickle was found depend on where the waiting
	// began in it, up to a window later: the emulator's port, which
	// cannot know the card's phase, found it at other times.)
	window := m.Reg(port+"_slow_window", w, 0)
	windowEnd := m.Named(port+"_slow_window_end", m.Eq(window, m.Const(w, uint64(cycles-1))))
	active := m.Named(port+"_slow_active", m.Or(waiting, m.Ne(window, m.Const(w, 0))))
	restart := m.Named(port+"_slow_restart", m.Or(windowEnd, stalled))
	m.SetNext(window, m.Mux(restart, m.Const(w, 0), m.Mux(active, m.Add(window, m.Const(w, 1)), window)))
	blocked := m.Reg(port+"_slow_blocked", w, 0)
	m.SetNext(blocked, m.Mux(restart, m.Const(w, 0), m.Add(blocked, m.Zext(waiting, w))))
	least := pmgr.SlowTLPs(cycles)
	mw := bits.Len(uint(least))
	moved := m.Reg(port+"_slow_moved", mw, 0)
	started := m.Named(port+"_egress_started", m.And(m.And(in.Valid, in.Ready), in.SOP))
	m.SetNext(moved, m.Mux(restart, m.Const(mw, 0), m.SatAddU(moved, m.And(started, active))))
	slow := m.Named(port+"_egress_slow", m.And(
		m.Not(m.LtU(blocked, m.Const(w, uint64(cycles/2)))), m.LtU(moved, m.Const(mw, uint64(least)))))

	hit := m.Named(port+"_egress_stall", m.Or(stuck, slow))
	m.SetNext(stalled, m.Mux(stalled, m.Not(released), hit))
	stalls := m.Reg(port+"_egress_stall_count", 32, 0)
	m.SetNext(stalls, m.SatAddU(stalls, m.Const(32, 1)))
	m.SetEnable(stalls, m.And(hit, m.Not(stalled)))
	m.Output(port+"_egress_stalls", stalls)
	return stalled
}

// Build builds the card name from p: AMD's PCIE4 block's four interfaces
// (CQ and RC in, CC and RQ out, by the IP's port names) around the
// manager's two pipelines, with an optical link layer on each port:
//
//   - host ingress: CQ requests and RC completions, merged a packet at a
//     time, into the manager;
//   - optical ingress: each link's received TLPs into the port pipeline;
//   - toward the host: the port pipeline's requests to RQ as the card's
//     own (its requester ID; a non-posted one with a local tag from the
//     tag table, which notes the request's requester ID, tag and port),
//     its completions merged with the manager's UR/CA completions to CC;
//     RC completions get their requester ID and tag back from the table,
//     and the manager the port to send them to on the BAR sideband;
//   - toward the ports: the manager's and the port pipeline's TLPs for
//     each port merged into its link; the links' states drive the
//     manager's port_down;
//   - kernel slots: the two pipelines' m_kernel streams merged, out of
//     the top;
//   - the register BAR: their m_local streams merged into the register
//     block, which drives the manager's AXI-Lite registers, keeps the
//     MSI-X table, passes the slots' pages on (m_slot_axil_*, out of the
//     top) and sends its read completions to CC with the others.
//
// The card's own requester ID comes from the block's cfg_bus_number.
//
// Per port the top has the link's lane interface (<port>_tx_*,
// <port>_rx_*, <port>_phy_up), state and counters; the port pipeline's
// counts leave as port_in_count_* and port_in_deny_*.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func Build(name string, p Parts) *ir.Module {
	m := ir.NewModule(name)
	// The interfaces, as PG213 names the block's (onic_top connects them
	// to the IP instance by name) and as the optical ports' wrappers take
	// them.
	m.Describe("cfg_bus_number", "PG213's configuration status: the bus number the block captured; the O-NIC is device 0, function 0 on it.")
	m.Describe("m_axis_cq_", "PG213 completer requests (CQ): the host's requests to the O-NIC's BARs, 512 bits, straddling off.")
	m.Describe("m_axis_rc_", "PG213 requester completions (RC): the host's completions for requests the card sent upstream.")
	m.Describe("pcie_tfc_", "PG213 transmit flow control: the block's non-posted header and data credits, which gate requests on RQ.")
	m.Describe("cfg_function_status", "PG213's function status: Bus Master Enable (bit 2) of physical function 0.")
	m.Describe("port_in_", "Saturating counters of the port pipeline's decisions and denials, as in the register BAR's counter region.")
	m.Describe("host_np_overflows", "Non-posted requests for the host (a peer's reads, on RQ) dropped because the park where they wait for a tag and credits was full.")
	m.Describe("cfg_max_payload", "PG213's configuration status: the Max_Payload_Size the host set (0 128 bytes, 1 256, ...).")
	m.Describe("slot", "Each kernel slot's drop counters.")
	m.Describe("s_axis_rq_", "PG213 requester requests (RQ): the card's requests to the host (peers' DMA, kernels' output, MSI-X).")
	m.Describe("s_axis_cc_", "PG213 completer completions (CC): the card's completions for the host's requests.")
	m.Describe("pcie_cq_np_req", "PG213: the card takes another non-posted request on CQ.")
	m.Describe("cfg_ext_", "PG213's user extended configuration space: the O-NIC's description capability.")
	m.Describe("port_a_", "Optical port A: the transceiver wrapper's lane words (tx_*, rx_*, phy_up; join one card's tx_* to another's rx_*), the link's state and its counters, and the hold buffer's drops and the egress stalls.")
	m.Describe("port_b_", "Optical port B, the same.")
	// The O-NIC is the block's physical function 0: its ID is the bus
	// number the block captured from configuration writes, device 0,
	// function 0 (PG213 cfg_bus_number, in the configuration control
	// interface).
	self := m.Named("self_id", m.Concat(m.Input("cfg_bus_number", 8), m.Const(8, 0)))
	cq, cc, rq, rc := pcie4.CQModule(), pcie4.CCModule(), pcie4.RQModule(), pcie4.RCModule()
	inputsOf := func(sub *ir.Module, prefix string, in map[string]ir.Value) {
		for _, pt := range sub.Ports() {
			if !pt.Output && strings.HasPrefix(pt.Name, prefix) {
				in[pt.Name] = m.Input(pt.Name, sub.Node(pt.Node).W)
			}
		}
	}
	outputsOf := func(sub *ir.Module, prefix string, out map[string]ir.Value) {
		for _, pt := range sub.Ports() {
			if pt.Output && strings.HasPrefix(pt.Name, prefix) {
				m.Output(pt.Name, out[pt.Name])
			}
		}
	}

	// Host ingress: CQ and RC into the manager.
	cqIn := map[string]ir.Value{}
	inputsOf(cq, "m_axis_cq_", cqIn)
	cqReady := m.Wire("cq_tlp_ready", 1)
	cqIn["tlp_ready"] = cqReady
	cqOut := m.Instance("cq", cq, cqIn)
	outputsOf(cq, "m_axis_cq_", cqOut)
	rcIn := map[string]ir.Value{}
	inputsOf(rc, "m_axis_rc_", rcIn)
	rcReady := m.Wire("rc_tlp_ready", 1)
	rcIn["tlp_ready"] = rcReady
	rcOut := m.Instance("rc", rc, rcIn)
	outputsOf(rc, "m_axis_rc_", rcOut)
	fromCQ := tlpbus.FromOutputs(m, cqOut, "tlp_", "tlp_bar", "cq_merge_ready")
	m.Assign(cqReady, fromCQ.Ready)
	// Requests for the host get local tags on their way to RQ (below);
	// completions from RC get their own requester IDs and tags back here.
	tags := pcie4.TagsModule()
	tagsIn := map[string]ir.Value{"self_id": self, "rc_hdr": rcOut["tlp_hdr"], "rc_data": rcOut["tlp_data"], "rc_keep": rcOut["tlp_keep"],
		"rc_sop": rcOut["tlp_sop"], "rc_eop": rcOut["tlp_eop"], "rc_done": rcOut["tlp_done"], "rc_valid": rcOut["tlp_valid"]}
	cplReady := m.Wire("rc_merge_ready", 1)
	tagsIn["cpl_ready"] = cplReady
	reqToTags := tlpbus.Wires(m, "req_tags_")
	tlpbus.Into(tagsIn, "req_", reqToTags)
	reqPortToTags := m.Wire("req_tags_port", 2)
	tagsIn["req_port"] = reqPortToTags
	rqTagsReady := m.Wire("rq_tags_ready", 1)
	tagsIn["rq_ready"] = rqTagsReady
	// The block's transmit credit for non-posted requests (PG213's
	// pcie_tfc_nph_av and pcie_tfc_npd_av): a read waits in the tag table
	// for it, rather than on RQ in front of the posted writes.
	tagsIn["nph_av"] = m.Input("pcie_tfc_nph_av", 4)
	tagsIn["npd_av"] = m.Input("pcie_tfc_npd_av", 4)
	tagsOut := m.Instance("tags", tags, tagsIn)
	m.Assign(rcReady, tagsOut["rc_ready"])
	fromRC := tlpbus.Stream{Hdr: m.Concat(tagsOut["cpl_hdr"], m.Const(32, 0)), // a completion's 3 DW header on the 128-bit bus
		Data: tagsOut["cpl_data"], Keep: tagsOut["cpl_keep"], SOP: tagsOut["cpl_sop"], EOP: tagsOut["cpl_eop"],
		Valid: tagsOut["cpl_valid"], Ready: cplReady}
	// A completion's BAR sideband is the port its request came from
	// (1 A, 2 B; 0 unexpected), which the manager sends it out of.
	fromRC.Side = m.Zext(tagsOut["cpl_port"], 3)
	standIns := p.Manager.HasInput("s_host_tlp_func") // a manager with stand-ins
	if standIns {
		// The function the block matched, for the stand-ins of lent
		// devices: above the BAR.
		fromCQ.Side = m.Concat(cqOut["tlp_func"], fromCQ.Side)
		fromRC.Side = m.Zext(tagsOut["cpl_port"], 5)
	}
	host := tlpbus.Merge(m, "host_in", fromCQ, fromRC)

	// The links' states, and the ports' egress streams from both
	// pipelines, are known only once everything is placed: wires.
	states := map[string]ir.Value{}
	for _, pt := range Ports {
		states[pt.Prefix] = m.Wire(pt.Prefix+"_link_state", 2)
	}
	linkUp := m.Named("LINK_STATE_UP", m.Const(2, optlink.StateUp))
	upNow := map[string]ir.Value{}
	for _, pt := range Ports {
		upNow[pt.Prefix] = m.Named(pt.Prefix+"_link_up", m.Eq(states[pt.Prefix], linkUp))
	}
	up := func(port string) ir.Value { return upNow[port] }

	// The port pipelines, one per optical port so that both ports take
	// a beat a cycle (the module takes two ports; each instance has one
	// of them tied off), fed by the links.
	linkRx := map[string]tlpbus.Stream{}
	for _, pt := range Ports {
		linkRx[pt.Prefix] = tlpbus.Wires(m, pt.Prefix+"_rx_tlp_")
	}
	// The run-time access rules are the manager's AXI-Lite registers;
	// the port pipelines check against the same ones (wired below).
	ruleWires := map[string]ir.Value{}
	for _, pt := range p.PortIn.Ports() {
		if !pt.Output && strings.HasPrefix(pt.Name, "acl_slot") {
			ruleWires[pt.Name] = m.Wire("port_in_"+pt.Name, p.PortIn.Node(pt.Node).W)
		}
	}
	piReady := map[string]map[string]ir.Value{}
	piOut := map[string]map[string]ir.Value{}
	// The host's Bus Master Enable for the O-NIC: PG213's
	// cfg_function_status has 4 bits a physical function, PF0's bit 2.
	fnStatus := m.Input("cfg_function_status", 16)
	busMaster := m.Named("bus_master", m.Slice(fnStatus, 2, 1))
	for _, pt := range Ports {
		in := map[string]ir.Value{"self_id": self, "bus_master": busMaster}
		for _, other := range Ports {
			if other.Prefix == pt.Prefix {
				tlpbus.Into(in, "s_"+other.Prefix+"_tlp_", linkRx[other.Prefix])
				continue
			}
			tlpbus.Into(in, "s_"+other.Prefix+"_tlp_", tlpbus.Stream{Hdr: m.Const(128, 0), Data: m.Const(512, 0), Keep: m.Const(16, 0),
				SOP: m.Const(1, 0), EOP: m.Const(1, 0), Valid: m.Const(1, 0)})
		}
		for name, w := range ruleWires {
			in[name] = w
		}
		piReady[pt.Prefix] = map[string]ir.Value{}
		for _, o := range []string{"m_host", "m_kernel", "m_local", "m_port_a", "m_port_b"} {
			piReady[pt.Prefix][o] = m.Wire(pt.Prefix+"_in_"+o+"_ready", 1)
			in[o+"_tlp_ready"] = piReady[pt.Prefix][o]
		}
		piOut[pt.Prefix] = m.Instance(pt.Prefix+"_in", p.PortIn, in)
	}
	// Each port's requester tag table (PortTagsModule): between the
	// egress and the link, and between the link and the port pipeline.
	portTags := PortTagsModule()
	ptIn := map[string]map[string]ir.Value{}
	ptOut := map[string]map[string]ir.Value{}
	toLink := map[string]tlpbus.Stream{}
	for _, pt := range Ports {
		ptIn[pt.Prefix] = map[string]ir.Value{"up": up(pt.Prefix)}
		toLink[pt.Prefix] = tlpbus.Wires(m, pt.Prefix+"_to_tags_")
		tlpbus.Into(ptIn[pt.Prefix], "s_tlp_", toLink[pt.Prefix])
		fromLink := tlpbus.Wires(m, pt.Prefix+"_from_link_")
		tlpbus.Into(ptIn[pt.Prefix], "s_rx_", fromLink)
		linkRx[pt.Prefix+"_link"] = fromLink
		ptIn[pt.Prefix]["m_tlp_ready"] = m.Wire(pt.Prefix+"_link_s_ready", 1)
		ptIn[pt.Prefix]["m_rx_ready"] = piOut[pt.Prefix]["s_"+pt.Prefix+"_tlp_ready"]
		ptOut[pt.Prefix] = m.Instance(pt.Prefix+"_tags", portTags, ptIn[pt.Prefix])
		linkRx[pt.Prefix].Drive(m, tlpbus.Stream{Hdr: ptOut[pt.Prefix]["m_rx_hdr"], Data: ptOut[pt.Prefix]["m_rx_data"],
			Keep: ptOut[pt.Prefix]["m_rx_keep"], SOP: ptOut[pt.Prefix]["m_rx_sop"], EOP: ptOut[pt.Prefix]["m_rx_eop"],
			Valid: ptOut[pt.Prefix]["m_rx_valid"]})
	}
	// Their counters, added up: the port pipeline's counts, and the
	// completions the tag tables found no request for.
	for _, pt := range p.PortIn.Ports() {
		if pt.Output && (strings.HasPrefix(pt.Name, "count_") || strings.HasPrefix(pt.Name, "deny_")) {
			sum := m.SatAddU(piOut["port_a"][pt.Name], piOut["port_b"][pt.Name])
			if pt.Name == "count_unexpected_completion_total" {
				sum = m.SatAddU(sum, m.SatAddU(ptOut["port_a"]["unexpected"], ptOut["port_b"]["unexpected"]))
			}
			// Registered: two saturating adds (four for the unexpected
			// completions) ahead of the counter region's read were the
			// card's critical path.
			name := "port_in_" + strings.TrimSuffix(pt.Name, "_total") + "_sum"
			r := m.Reg(name, sum.Width(), 0)
			m.SetNext(r, m.Named(name+"_next", sum))
			m.Output("port_in_"+pt.Name, r)
		}
	}
	// Ports' non-posted requests toward the host dropped with the tag
	// table's park full (after the port pipelines' block, which the
	// emulator's O-NIC serves first in the same order).
	m.Output("host_np_overflows", tagsOut["np_overflows"])

	// The manager, behind a fence: once a host write to the register BAR
	// has gone in, the host's next TLP waits until the write has left the
	// manager's pipeline and the register block has carried it out. A
	// read after a write to the LUT, the access rules or a task shell
	// then sees what the write did, as the emulator's O-NIC applies it:
	// no read passes the posted write before it (PCIe §2.4.1), which the
	// block's CQ delivers in order. The fence rises with the write's last
	// beat; registers are the slow path, so holding the host's stream
	// behind them costs nothing that matters.
	fence := m.Reg("register_fence", 1, 0)
	gated := host
	gated.Valid = m.Named("host_in_valid_fenced", m.And(host.Valid, m.Not(fence)))
	mgrIn := map[string]ir.Value{"self_id": self}
	tlpbus.Into(mgrIn, "s_host_tlp_", gated)
	bar := m.Slice(host.Side, 0, 3)
	mgrIn["s_host_tlp_bar"] = host.Side
	if standIns {
		mgrIn["s_host_tlp_bar"], mgrIn["s_host_tlp_func"] = bar, m.Slice(host.Side, 3, 2)
	}
	fh := tlphdr.Decode(m, "fence_hdr", host.Hdr)
	regWrite := m.Named("host_register_write", m.And(m.And(tlphdr.IsType(m, fh.Type, tlp.MWr), m.Eq(m.Slice(fh.Fmt, 1, 2), m.Const(2, uint64(tlp.Fmt3DWData)>>1))),
		m.Eq(bar, m.Const(3, uint64(p.RegisterBAR)))))
	// (hdr is the TLP's on each of its beats: the register-BAR write's
	// last beat raises the fence.)
	fenceUp := m.Named("register_fence_up", m.And(m.And(gated.Valid, host.Ready), m.And(host.EOP, regWrite)))
	// A port takes TLPs while its link is up and its egress is not
	// stalled (egressStall, below).
	stalled := map[string]ir.Value{}
	admit := func(port string) ir.Value { return m.And(up(port), m.Not(stalled[port])) }
	for _, pt := range Ports {
		stalled[pt.Prefix] = m.Wire(pt.Prefix+"_stalled", 1)
	}
	mgrIn["port_down"] = m.Named("port_down", m.Concat(m.Not(admit("port_b")), m.Not(admit("port_a"))))
	mgrReady := map[string]ir.Value{}
	for _, o := range []string{"m_port_a", "m_port_b", "m_kernel", "m_local", "m_cpl"} {
		mgrReady[o] = m.Wire("manager_"+o+"_ready", 1)
		mgrIn[o+"_tlp_ready"] = mgrReady[o]
	}
	// The manager's AXI-Lite registers are the register block's (below).
	axilToMgr := map[string]ir.Value{}
	for _, pt := range p.Manager.Ports() {
		if !pt.Output && strings.HasPrefix(pt.Name, "s_axil_") {
			axilToMgr[pt.Name] = m.Wire("regs_"+strings.TrimPrefix(pt.Name, "s_"), p.Manager.Node(pt.Node).W)
			mgrIn[pt.Name] = axilToMgr[pt.Name]
		}
	}
	mgrOut := m.Instance("manager", p.Manager, mgrIn)
	for name, w := range ruleWires {
		m.Assign(w, mgrOut[name])
	}
	if tap, ok := mgrOut["drop_tap"]; ok && p.DropTaps {
		// The manager's drop tap (manager.Config.DropTap): the host TLPs
		// it failed, beside the ports' (dropWhole).
		m.Output("host_drop_tap", tap)
		m.Output("host_drop_tap_word", mgrOut["drop_tap_word"])
		m.Output("host_drop_tap_reason", mgrOut["drop_tap_reason"])
	}
	m.Assign(host.Ready, m.And(mgrOut["s_host_tlp_ready"], m.Not(fence)))
	mgrStream := func(o, side string) tlpbus.Stream {
		s := tlpbus.FromOutputs(m, mgrOut, o+"_tlp_", side, o+"_from_manager_ready")
		m.Assign(mgrReady[o], s.Ready)
		return s
	}
	// piStream is output o of the port pipeline of port (port_a, port_b).
	piStream := func(port, o, side string) tlpbus.Stream {
		s := tlpbus.FromOutputs(m, piOut[port], o+"_tlp_", side, o+"_from_"+port+"_in_ready")
		m.Assign(piReady[port][o], s.Ready)
		return s
	}

	// The register BAR: both pipelines' local streams into the register
	// block, which drives the manager's AXI-Lite slave and the slots'
	// pages and answers reads.
	mgrLocal, aLocal, bLocal := mgrStream("m_local", ""), piStream("port_a", "m_local", ""), piStream("port_b", "m_local", "")
	local := tlpbus.Merge(m, "m_local_merge", mgrLocal, aLocal, bLocal)
	// Its completions stay within the MPS the block reports (PG213's
	// configuration status: cfg_max_payload, as Device Control says).
	regsIn := map[string]ir.Value{"self_id": self, "max_payload": m.Input("cfg_max_payload", 2)}
	tlpbus.Into(regsIn, "s_tlp_", local)
	regsCplReady := m.Wire("regs_cpl_ready", 1)
	regsIn["m_cpl_tlp_ready"] = regsCplReady
	// The counter the register block reads (known once every part is
	// placed: below).
	ctrData := m.Wire("ctr_rdata", 32)
	regsIn["ctr_rdata"] = ctrData
	// The MSI-X controller (below) reads the table the block keeps and
	// gives it the Pending Bits.
	msixRd := map[string]ir.Value{}
	for _, pt := range p.Regs.Ports() {
		if !pt.Output && strings.HasPrefix(pt.Name, "msix_") {
			msixRd[pt.Name] = m.Wire(pt.Name, p.Regs.Node(pt.Node).W)
			regsIn[pt.Name] = msixRd[pt.Name]
		}
	}
	slotAns := map[string]ir.Value{}
	for _, pt := range p.Regs.Ports() {
		switch {
		case pt.Output || !strings.HasPrefix(pt.Name, "m_") || strings.HasPrefix(pt.Name, "m_cpl_"):
		case strings.HasPrefix(pt.Name, "m_axil_"):
			regsIn[pt.Name] = mgrOut["s_axil_"+strings.TrimPrefix(pt.Name, "m_axil_")]
		case p.Slots != nil:
			slotAns[pt.Name] = m.Wire("regs_"+pt.Name, p.Regs.Node(pt.Node).W) // the slots answer (below)
			regsIn[pt.Name] = slotAns[pt.Name]
		default:
			regsIn[pt.Name] = m.Input(pt.Name, p.Regs.Node(pt.Node).W)
		}
	}
	regsOut := m.Instance("regs", p.Regs, regsIn)
	m.Assign(local.Ready, regsOut["s_tlp_ready"])
	for _, pt := range p.Manager.Ports() {
		if w, ok := axilToMgr[pt.Name]; ok {
			m.Assign(w, regsOut["m_axil_"+strings.TrimPrefix(pt.Name, "s_axil_")])
		}
	}
	busy := m.Named("local_busy", m.Any(regsOut["busy"], local.Valid, mgrLocal.Valid, aLocal.Valid, bLocal.Valid))
	// The fence falls once the manager holds no host TLP and nothing is
	// on its way to or in the register block.
	m.SetNext(fence, m.Or(fenceUp, m.And(fence, m.Or(mgrOut["host_busy"], busy))))
	regsCpl := tlpbus.Stream{Hdr: regsOut["m_cpl_tlp_hdr"], Data: regsOut["m_cpl_tlp_data"], Keep: regsOut["m_cpl_tlp_keep"],
		SOP: regsOut["m_cpl_tlp_sop"], EOP: regsOut["m_cpl_tlp_eop"], Valid: regsOut["m_cpl_tlp_valid"], Ready: regsCplReady}

	// Kernel slots: both pipelines' streams, into the slots, or out of
	// the top.
	var slotOut [3][]tlpbus.Stream
	var irqs []axis.Stream
	if p.Slots != nil {
		// Each ingress's TLPs for the slots: the manager's (the host's)
		// and each port pipeline's.
		ins := []tlpbus.Stream{mgrStream("m_kernel", "m_kernel_slot"), piStream("port_a", "m_kernel", "m_kernel_slot"), piStream("port_b", "m_kernel", "m_kernel_slot")}
		var ans axil.Answer
		slotOut, ans, irqs = buildSlots(m, p.Slots, self, ins, axil.BusOf(regsOut, "m_slot_axil_"), busy)
		got := map[string]ir.Value{}
		ans.Into(got, "m_slot_axil_")
		for name, w := range slotAns {
			m.Assign(w, got[name])
		}
	} else {
		a, b := piStream("port_a", "m_kernel", "m_kernel_slot"), piStream("port_b", "m_kernel", "m_kernel_slot")
		s := tlpbus.Merge(m, "m_kernel_merge", mgrStream("m_kernel", "m_kernel_slot"), a, b)
		m.Output("m_kernel_tlp_hdr", s.Hdr)
		m.Output("m_kernel_slot", s.Side)
		m.Output("m_kernel_tlp_data", s.Data)
		m.Output("m_kernel_tlp_keep", s.Keep)
		m.Output("m_kernel_tlp_sop", s.SOP)
		m.Output("m_kernel_tlp_eop", s.EOP)
		m.Output("m_kernel_tlp_valid", s.Valid)
		m.Assign(s.Ready, m.Input("m_kernel_tlp_ready", 1))
		for _, pt := range p.Regs.Ports() {
			if pt.Output && strings.HasPrefix(pt.Name, "m_slot_axil_") {
				m.Output(pt.Name, regsOut[pt.Name])
			}
		}
	}

	// Toward the host: the port pipeline's requests to RQ, its completions
	// and the manager's to CC.
	// (Through a register slice after their merge: the tag table's
	// logic follows.)
	// Each stream's sideband is the port it comes from (1 A, 2 B; 0 a
	// kernel slot), for the tag table.
	fromPort := func(port string, k uint64) tlpbus.Stream {
		s := piStream(port, "m_host", "")
		s.Side = m.Const(2, k)
		return s
	}
	toHost := tlpbus.Slice(m, "to_host_slice", tlpbus.Merge(m, "to_host_merge", fromPort("port_a", 1), fromPort("port_b", 2)))
	isCpl := m.Named("to_host_is_cpl", tlphdr.Decode(m, "to_host_hdr", toHost.Hdr).Completion)
	split := axis.Demux(m, "to_host", axis.Stream{Data: m.Const(1, 0), Valid: toHost.Valid, Ready: toHost.Ready}, isCpl, 2)
	reqs := toHost
	reqs.Valid, reqs.Ready = split[0].Valid, split[0].Ready
	hostPosted := m.Const(1, 0)
	if len(slotOut[0]) > 0 {
		// The kernels' writes to the host join the port pipeline's
		// requests (they need no tag: posted), through a register slice
		// after the merge: the tag table's allocation follows, and a
		// slot's valid through the merge's arbitration into it was the
		// card's longest path.
		fromSlots := slices.Clone(slotOut[0])
		var entered []ir.Value
		for i := range fromSlots {
			fromSlots[i].Side = m.Const(2, 0)
			entered = append(entered, m.And(m.And(fromSlots[i].Valid, fromSlots[i].Ready), fromSlots[i].SOP))
		}
		// (The merge takes one input's beat a cycle.)
		hostPosted = m.Named("slot_write_to_host", m.Any(entered...))
		reqs = tlpbus.Slice(m, "rq_slice", tlpbus.Merge(m, "rq_merge", reqs, fromSlots...))
	}
	reqToTags.Drive(m, reqs)
	m.Assign(reqPortToTags, reqs.Side)
	m.Assign(reqs.Ready, tagsOut["req_ready"])
	// The kernel slots' writes (tag table port 0) carry msix.SlotSeq for
	// the block to return on pcie_rq_seq_num0: the MSI-X controller's
	// fence.
	// (Through a register slice between the tag table and the RQ adapter:
	// the park's head and the tag it takes would otherwise run on into
	// the adapter's descriptor and tuser, 234 MHz by the estimate on the
	// U250 board top.)
	toRQ := tlpbus.Slice(m, "rq_tags_slice", tlpbus.Stream{Hdr: tagsOut["rq_hdr"], Side: tagsOut["rq_port"], Data: tagsOut["rq_data"],
		Keep: tagsOut["rq_keep"], SOP: tagsOut["rq_sop"], EOP: tagsOut["rq_eop"], Valid: tagsOut["rq_valid"], Ready: rqTagsReady})
	fromSlot := m.Named("rq_from_slot", m.Eq(toRQ.Side, m.Const(2, 0)))
	rqIn := map[string]ir.Value{"s_axis_rq_tready": m.Input("s_axis_rq_tready", 1),
		"tlp_seq": m.Mux(fromSlot, m.Const(6, msix.SlotSeq), m.Const(6, 0))}
	tlpbus.Into(rqIn, "tlp_", toRQ)
	rqOut := m.Instance("rq", rq, rqIn)
	m.Assign(toRQ.Ready, rqOut["tlp_ready"])
	outputsOf(rq, "s_axis_rq_", rqOut)
	cplFromPorts := tlpbus.Stream{Hdr: m.Slice(toHost.Hdr, 32, 96), Data: toHost.Data, Keep: toHost.Keep, SOP: toHost.SOP, EOP: toHost.EOP,
		Valid: split[1].Valid, Ready: split[1].Ready}
	mcpl := tlpbus.FromOutputs(m, mgrOut, "m_cpl_tlp_", "", "m_cpl_from_manager_ready")
	m.Assign(mgrReady["m_cpl"], mcpl.Ready)
	mcpl.Data, mcpl.Keep, mcpl.SOP, mcpl.EOP = m.Const(512, 0), m.Const(16, 0), m.Const(1, 1), m.Const(1, 1) // header only
	toCC := tlpbus.Merge(m, "cc_merge", mcpl, cplFromPorts, regsCpl)
	ccIn := map[string]ir.Value{"s_axis_cc_tready": m.Input("s_axis_cc_tready", 1)}
	tlpbus.Into(ccIn, "tlp_", toCC)
	ccOut := m.Instance("cc", cc, ccIn)
	m.Assign(toCC.Ready, ccOut["tlp_ready"])
	outputsOf(cc, "s_axis_cc_", ccOut)
	// Non-posted requests from the host only while both ports' tag tables
	// have room to park them (PG213's selective flow control for
	// non-posted requests: the block holds them and goes on delivering
	// posted requests), so a read waiting for a port's tag never stops the
	// host's writes, or the completions behind it, in the manager.
	npRoom := m.Named("np_room", m.And(ptOut["port_a"]["np_room"], ptOut["port_b"]["np_room"]))
	m.Output("pcie_cq_np_req", m.Named("np_credit", m.Mux(npRoom, m.Const(2, 0b01), m.Const(2, 0))))

	buildMSIX(m, irqs, []ir.Value{up("port_a"), up("port_b")}, hostPosted, fnStatus, regsOut, msixRd)

	// The user extended configuration space: the O-NIC's description.
	ext := pcie4.CfgExtModule(p.ExtConfig)
	if p.ExtSpace.Regs > 0 {
		ext = pcie4.CfgExtModuleIn(p.ExtSpace, p.ExtWords)
	}
	extIn := map[string]ir.Value{}
	inputsOf(ext, "cfg_ext_", extIn)
	outputsOf(ext, "cfg_ext_", m.Instance("cfg_ext", ext, extIn))

	// Toward the ports: both pipelines into each link.
	for k, pt := range Ports {
		egress := tlpbus.Merge(m, pt.Prefix+"_egress", mgrStream("m_"+pt.Prefix, ""),
			append([]tlpbus.Stream{piStream("port_a", "m_"+pt.Prefix, ""), piStream("port_b", "m_"+pt.Prefix, "")}, slotOut[1+k]...)...)
		stallCycles := p.EgressStallCycles
		if stallCycles == 0 {
			stallCycles = DefaultEgressStallCycles
		}
		merged := egress
		var released ir.Value
		// The link's own ready (its input slice has room), which does not
		// wait for a TLP to be offered as the tag table's may.
		linkReady := m.Wire(pt.Prefix+"_link_ready", 1)
		if p.HoldTLPs > 0 {
			egress, released = holdBuffer(m, pt.Prefix, egress, admit(pt.Prefix), up(pt.Prefix), p.HoldTLPs, p.DropTaps)
		} else {
			egress = failBuffer(m, pt.Prefix, egress, admit(pt.Prefix), p.DropTaps)
			// Released once the link has been ready 256 cycles in a row:
			// its own ready, not the tag table's, which, with nothing
			// offered, reads the idle bus's header (a zero header is a
			// read) and may stay low, so that a stalled port was never
			// released.
			run := m.Reg(pt.Prefix+"_ready_run", 8, 0)
			m.SetNext(run, m.Mux(linkReady, m.Add(run, m.Const(8, 1)), m.Const(8, 0)))
			released = m.Named(pt.Prefix+"_ready_long", m.And(linkReady, m.Eq(run, m.Const(8, 255))))
		}
		m.Assign(stalled[pt.Prefix], egressStall(m, pt.Prefix, merged, m.Or(released, m.Not(up(pt.Prefix))), stallCycles))
		// Through the port's tag table into the link.
		toLink[pt.Prefix].Drive(m, egress)
		m.Assign(egress.Ready, ptOut[pt.Prefix]["s_tlp_ready"])
		tagged := tlpbus.Stream{Hdr: ptOut[pt.Prefix]["m_tlp_hdr"], Data: ptOut[pt.Prefix]["m_tlp_data"], Keep: ptOut[pt.Prefix]["m_tlp_keep"],
			SOP: ptOut[pt.Prefix]["m_tlp_sop"], EOP: ptOut[pt.Prefix]["m_tlp_eop"], Valid: ptOut[pt.Prefix]["m_tlp_valid"]}
		in := map[string]ir.Value{}
		tlpbus.Into(in, "s_tlp_", tagged)
		rx := linkRx[pt.Prefix+"_link"]
		for _, lp := range p.Link.Ports() {
			if !lp.Output && !strings.HasPrefix(lp.Name, "s_tlp_") && lp.Name != "m_tlp_ready" {
				in[lp.Name] = m.Input(pt.Prefix+"_"+lp.Name, p.Link.Node(lp.Node).W)
			}
		}
		in["m_tlp_ready"] = ptOut[pt.Prefix]["s_rx_ready"]
		out := m.Instance(pt.Prefix+"_link", p.Link, in)
		m.Assign(ptIn[pt.Prefix]["m_tlp_ready"], out["s_tlp_ready"])
		m.Assign(linkReady, out["s_tlp_ready"])
		m.Assign(states[pt.Prefix], out["state"])
		rx.Drive(m, tlpbus.Stream{Hdr: out["m_tlp_hdr"], Data: out["m_tlp_data"], Keep: out["m_tlp_keep"], SOP: out["m_tlp_sop"],
			EOP: out["m_tlp_eop"], Valid: out["m_tlp_valid"]}) // the port pipeline's ready goes to the link directly
		for _, lp := range p.Link.Ports() {
			if lp.Output && !strings.HasPrefix(lp.Name, "m_tlp_") && lp.Name != "s_tlp_ready" {
				m.Output(pt.Prefix+"_"+lp.Name, out[lp.Name])
			}
		}
	}
	// Every counter, readable in the register BAR by its place among
	// the outputs (Counters).
	names := Counters(m)
	if len(names) > manager.CounterSlots {
		panic(fmt.Sprintf("card: %d counters, room for %d", len(names), manager.CounterSlots))
	}
	// In two registered stages (the register block takes the value two
	// cycles after the index): a counter of each group of 16 by the
	// index's low bits, then the group by its high bits. One choice
	// among a hundred counters in a cycle was the card's critical path.
	idx := regsOut["ctr_index"]
	lo := m.Named("ctr_index_lo", m.Slice(idx, 0, 4))
	hiQ := m.Reg("ctr_index_hi", idx.Width()-4, 0)
	m.SetNext(hiQ, m.Slice(idx, 4, idx.Width()-4))
	var groupSels, groups []ir.Value
	for g := 0; g*16 < len(names); g++ {
		var sels, vals []ir.Value
		for i := g * 16; i < min(len(names), g*16+16); i++ {
			v, _ := m.OutputValue(names[i])
			sels = append(sels, m.Eq(lo, m.Const(4, uint64(i%16))))
			vals = append(vals, v)
		}
		r := m.RegNoReset(fmt.Sprintf("ctr_group%d", g), 32)
		m.SetNext(r, m.Pick(sels, vals))
		groups = append(groups, r)
		groupSels = append(groupSels, m.Eq(hiQ, m.Const(hiQ.Width(), uint64(g))))
	}
	m.Assign(ctrData, m.Named("ctr_value", m.Pick(groupSels, groups)))
	return m
}

// buildMSIX places the card's MSI-X controller (designs/internal/msix)
// between the kernel slots' interrupts, the ports' links (ups: each
// port's link up; a change either way fires the port's vector,
// pcie.ONICMSIXLinkVector on), the register block's table (regsOut's
// msix_*, read through the wires in rd, named as its inputs) and the PCIe
// block's MSI-X interface (cfg_interrupt_msix_*, cfg_interrupt_msi_*) and
// RQ sequence numbers (pcie_rq_seq_num0, _vld0): hostPosted says a slot's
// write entered the path to RQ.
func buildMSIX(m *ir.Module, irqs []axis.Stream, ups []ir.Value, hostPosted, fnStatus ir.Value, regsOut, rd map[string]ir.Value) {
	m.Describe("cfg_interrupt_msix_", "PG213's MSI-X external interface: PF0's MSI-X Enable and Function Mask in; the card's interrupts out (address, data, int).")
	m.Describe("cfg_interrupt_msi_", "PG213: the block's sent or fail for an MSI-X signal, and the function it is for.")
	m.Describe("pcie_rq_seq_num", "PG213: RQ sequence numbers the block returns once the request cannot be overtaken (the interrupts wait for the slots' writes).")
	m.Describe("msix_", "Saturating counts of MSI-X messages sent and failed.")
	ins := map[string]ir.Value{}
	for _, in := range []struct {
		name string
		w    int
	}{{"cfg_interrupt_msix_enable", 4}, {"cfg_interrupt_msix_mask", 4}, {"cfg_interrupt_msi_sent", 1},
		{"cfg_interrupt_msi_fail", 1}, {"pcie_rq_seq_num0", 6}, {"pcie_rq_seq_num_vld0", 1}} {
		ins[in.name] = m.Input(in.name, in.w) // (in this order: the top's ports are in the order made)
	}
	mod, err := msix.Module(len(irqs), len(ups))
	if err != nil {
		m.Errorf(hostPosted, "%v", err)
		return
	}
	var valids, changes []ir.Value
	for i := len(irqs) - 1; i >= 0; i-- {
		valids = append(valids, irqs[i].Valid)
	}
	for i := len(ups) - 1; i >= 0; i-- {
		was := m.Reg(Ports[i].Prefix+"_link_was_up", 1, 0)
		m.SetNext(was, ups[i])
		changes = append(changes, m.Named(Ports[i].Prefix+"_link_changed", m.Xor(ups[i], was)))
	}
	if len(valids) > 0 {
		ins["irq_valid"] = m.Concat(valids...)
	}
	ins["event"], ins["host_posted"], ins["cfg_function_status"] = m.Concat(changes...), hostPosted, fnStatus
	ins["table_masked"], ins["table_rd_data"] = regsOut["msix_masked"], regsOut["msix_rd_data"]
	out := m.Instance("msix", mod, ins)
	for i, q := range irqs {
		m.Assign(q.Ready, m.Slice(out["irq_ready"], i, 1))
	}
	m.Assign(rd["msix_rd_addr"], out["table_rd_addr"])
	m.Assign(rd["msix_rd_en"], out["table_rd_en"])
	m.Assign(rd["msix_pending"], out["pending"])
	for _, name := range []string{"cfg_interrupt_msix_int", "cfg_interrupt_msix_address", "cfg_interrupt_msix_data", "cfg_interrupt_msi_function_number"} {
		m.Output(name, out[name])
	}
	m.Output("msix_sent", out["sent"])
	m.Output("msix_failed", out["failed"])
}
