package card

import (
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/manager"
	"onic/tlp"
)

// ParkDepth is how many non-posted requests a port's tag table holds
// waiting for a free tag while posted requests and completions pass them,
// and ParkMargin how many of those places must stay free for its np_room
// to be high: the requests that may still arrive once np_room stops the
// host's non-posted requests (the PCIe block's banked credits,
// pcie_cq_np_req saturating at 32, and what the manager's pipeline and
// the merges before the port hold).
const (
	ParkDepth  = 64
	ParkMargin = 48
)

// PortTagsModule is an optical port's requester tag table
// (onic_port_tags), as pcie/manager's Issue and its completions from a
// port describe it. It sits between the card's egress toward the port's
// link and the link, and between the link's received TLPs and the port
// pipeline:
//
//   - toward the link (s_tlp_* in, m_tlp_* out): a non-posted request
//     (a memory read, an AtomicOp, an I/O or configuration request; each
//     is one beat) leaves with a free tag of the port's 256 in its header
//     (T9 and T8 clear), and the table keeps the tag it came with and its
//     requester ID (the proxy ID); posted requests and completions pass
//     untouched. A request waits for a free tag in a park of ParkDepth
//     while the posted requests and completions behind it pass it;
//     np_room says the park has more than ParkMargin places free (the
//     card stops taking non-posted requests from its host while either
//     port's is low). A scan finds the next free tag, one a cycle.
//   - from the link (s_rx_* in, m_rx_* out, through one register stage
//     in which the table is read): a completion must answer a request
//     that left by this port — its tag held, its requester ID the one the
//     request left with, and a successful one must carry data — or it is
//     an Unexpected Completion (PCIe §2.3.2), dropped whole and counted in
//     unexpected (32 bits); one that matches gets its request's own tag
//     back, and frees the tag when it finishes the request by its own
//     fields (an error status, or data reaching its Byte Count). Requests
//     pass untouched.
//   - while the link is not up (up low) every tag is free: the link took
//     the outstanding requests' completions with it.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its two directions share the tag table, and pieces
// would only hand its wires back and forth.
func PortTagsModule() *ir.Module {
	m := ir.NewModule("onic_port_tags")
	m.Describe("up", "The port's link is up; while it is not, every tag is free.")
	m.Describe("s_tlp_", "The card's egress toward the port's link; a non-posted request takes a free tag of the port's.")
	m.Describe("np_room", "The park for requests waiting for a tag has more than ParkMargin places free.")
	m.Describe("m_tlp_", "To the link: requests with the port's tag, posted requests and completions untouched.")
	m.Describe("s_rx_", "From the link: received TLPs.")
	m.Describe("m_rx_", "To the port pipeline: completions that answer a request of this port, their own tag back; requests untouched.")
	m.Describe("unexpected", "Completions that answered nothing of this port's (PCIe §2.3.2), dropped.")
	const n = manager.Tags
	const tb = manager.TagBits
	up := m.Input("up", 1)
	busy := m.Reg("tag_busy", n, 0)
	cursor := m.Reg("tag_cursor", tb, 0)

	// Toward the link: a non-posted request (one beat) waits for a free
	// tag in a park (axis.Park) while posted requests and completions
	// behind it pass it (PCIe §2.4.1: they must be able to; a completion
	// held behind a read that waits for a tag only the far card's
	// completions free would deadlock the two cards).
	hdr := m.Input("s_tlp_hdr", 128)
	f := tlphdr.Decode(m, "egress_hdr", hdr)
	typ := f.Type
	mwr := m.And(f.HasData, tlphdr.IsType(m, typ, tlp.MWr))
	msg := tlphdr.IsMessage(m, typ)
	np := m.Named("egress_needs_tag", m.And(m.Not(f.Completion), m.Not(m.Or(mwr, msg))))
	// Whether the cursor's tag is free, registered (below): a choice among
	// the 256 tags would otherwise be in front of the park, the link's
	// ready and the egress's stall watch.
	free := m.Reg("tag_free", 1, 1)
	in := axis.Stream{Data: m.Concat(m.Input("s_tlp_eop", 1), hdr, m.Input("s_tlp_data", 512), m.Input("s_tlp_keep", 16), m.Input("s_tlp_sop", 1)),
		Valid: m.Input("s_tlp_valid", 1), Ready: m.Wire("egress_in_ready", 1)}
	m.Output("s_tlp_ready", in.Ready)
	out, parked, room := axis.Park(m, "egress", in, np, ParkDepth, ParkMargin, func(ir.Value) ir.Value { return free })
	m.Output("np_room", room)
	at := out.Data.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(out.Data, at, w) }
	oEOP, oHdr, oData, oKeep, oSOP := take(1), take(128), take(512), take(16), take(1)
	of := tlphdr.Decode(m, "egress_out_hdr", oHdr)
	m.Assign(out.Ready, m.Input("m_tlp_ready", 1))
	m.Output("m_tlp_valid", out.Valid)
	alloc := m.Named("tag_alloc", m.And(m.And(out.Valid, out.Ready), parked))
	tagged := tlphdr.SetTag(m, oHdr, tlp.ClassMemory, m.Zext(cursor, 10))
	m.Output("m_tlp_hdr", m.Mux(parked, tagged, oHdr))
	m.Output("m_tlp_data", oData)
	m.Output("m_tlp_keep", oKeep)
	m.Output("m_tlp_sop", oSOP)
	m.Output("m_tlp_eop", oEOP)
	// Each tag's request as it left: its requester ID and own tag.
	orig := m.Memory("tag_orig", n, 16+10)
	m.WritePort(orig, cursor, m.Named("tag_orig_in", m.Concat(of.Requester, of.Tag)), alloc, ir.Value{})

	// From the link: one register stage.
	rHdrIn := m.Input("s_rx_hdr", 128)
	rValid := m.Input("s_rx_valid", 1)
	stValid := m.Reg("rx_valid_r", 1, 0)
	rxOutReady := m.Input("m_rx_ready", 1)
	// The stage moves on when its beat leaves or is dropped (below).
	stFree := m.Wire("rx_stage_free", 1)
	accept := m.Named("rx_accept", m.And(rValid, stFree))
	m.Output("s_rx_ready", stFree)
	cf := tlphdr.Decode(m, "rx_in_hdr", rHdrIn)
	inTag := m.Slice(cf.Tag, 0, tb)
	heldNow := m.Named("rx_tag_held", m.And(m.Slice(m.Named("tag_busy_from_rx", m.Shr(busy, inTag)), 0, 1), m.Eq(m.Slice(cf.Tag, tb, 10-tb), m.Const(10-tb, 0))))
	entry := m.ReadPort(orig, inTag, accept)
	reg := func(name string, v ir.Value) ir.Value {
		r := m.RegNoReset(name, v.Width())
		m.SetNext(r, v)
		m.SetEnable(r, accept)
		return r
	}
	sHdr := reg("rx_hdr_r", rHdrIn)
	sData := reg("rx_data_r", m.Input("s_rx_data", 512))
	sKeep := reg("rx_keep_r", m.Input("s_rx_keep", 16))
	sSOP := reg("rx_sop_r", m.Input("s_rx_sop", 1))
	sEOP := reg("rx_eop_r", m.Input("s_rx_eop", 1))
	sHeld := reg("rx_held_r", heldNow)
	sf := tlphdr.Decode(m, "rx_hdr", sHdr)
	entryReq, entryTag := m.Slice(entry, 10, 16), m.Slice(entry, 0, 10)
	field := func(name string) ir.Value {
		lo, w := tlphdr.Pos(tlphdr.Layout(name, tlp.ClassCompletion, tlp.Fmt3DW))
		return m.Slice(sHdr, lo, w)
	}
	sc := m.Named("rx_status_sc", m.Eq(field("status"), m.Const(3, uint64(tlp.StatusSC))))
	match := m.Named("rx_cpl_matches", m.And(m.And(sHeld, m.Eq(sf.Requester, entryReq)), m.Or(m.Not(sc), sf.HasData)))
	unexpected := m.Named("rx_unexpected", m.And(sf.Completion, m.Named("rx_cpl_unmatched", m.Not(match))))
	dropping := m.Reg("rx_dropping", 1, 0)
	drop := m.Named("rx_drop", m.Mux(sSOP, unexpected, dropping))
	leave := m.And(stValid, m.Named("rx_kept", m.Not(drop)))
	m.Output("m_rx_valid", leave)
	gone := m.Named("rx_gone", m.Or(drop, rxOutReady)) // dropped, or taken on
	taken := m.Named("rx_taken", m.And(stValid, gone))
	m.Assign(stFree, m.Or(m.Not(stValid), gone))
	m.SetNext(stValid, m.Or(accept, m.And(stValid, m.Not(taken))))
	m.SetNext(dropping, m.Mux(taken, m.And(drop, m.Not(sEOP)), dropping))
	// A matching completion leaves with its request's own tag.
	back := tlphdr.SetTag(m, sHdr, tlp.ClassCompletion, entryTag)
	m.Output("m_rx_hdr", m.Mux(m.And(sf.Completion, match), back, sHdr))
	m.Output("m_rx_data", sData)
	m.Output("m_rx_keep", sKeep)
	m.Output("m_rx_sop", sSOP)
	m.Output("m_rx_eop", sEOP)
	count := m.Reg("unexpected_count", 32, 0)
	m.SetNext(count, m.SatAddU(count, m.Const(32, 1)))
	m.SetEnable(count, m.And(m.And(taken, sSOP), unexpected))
	m.Output("unexpected", count)

	// Whether a matching completion finishes its request: an error
	// status, or its data reaching the Byte Count (0 meaning 4096), the
	// payload starting at the Lower Address's byte in its first DW.
	bc := field("byte_count")
	bytes := m.Named("rx_cpl_bytes", m.Sub(m.Concat(tlphdr.DWs(m, sf.Length), m.Const(2, 0)), m.Zext(m.Slice(field("lower_address"), 0, 2), 13)))
	owed := m.Concat(m.Eq(bc, m.Const(12, 0)), bc)
	last := m.Named("rx_cpl_last", m.Or(m.Not(sc), m.Not(m.LtU(bytes, owed))))
	release := m.Named("tag_release", m.And(m.And(taken, m.And(sEOP, m.Not(drop))), m.And(sf.Completion, last)))
	one := m.ConstWords(n, []uint64{1})
	setMask := m.Mux(alloc, m.Shl(one, cursor), m.Const(n, 0))
	clrMask := m.Mux(release, m.Shl(one, m.Slice(sf.Tag, 0, tb)), m.Const(n, 0))
	m.SetNext(busy, m.Mux(up, m.Named("tag_busy_next", m.And(m.Or(busy, setMask), m.Not(clrMask))), m.Const(n, 0)))
	move := m.Named("tag_cursor_moves", m.Or(m.Not(free), alloc))
	nextTag := m.Named("tag_cursor_next", m.Add(cursor, m.Const(tb, 1)))
	m.SetNext(cursor, m.Mux(move, nextTag, cursor))
	// The next cycle's tag_free: a cursor that stays is on a free tag it
	// did not take; one that moves is on a tag free unless busy and not
	// released in this cycle (only the tag at the cursor is taken), or
	// the link went down (every tag freed).
	nextBusy := m.Slice(m.Named("tag_busy_from_next", m.Shr(busy, nextTag)), 0, 1)
	nextReleased := m.And(release, m.Eq(m.Slice(sf.Tag, 0, tb), nextTag))
	m.SetNext(free, m.Any(m.Not(up), m.Not(move), m.Not(nextBusy), nextReleased))
	return m
}
