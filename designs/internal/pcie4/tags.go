package pcie4

import (
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/tlp"
)

// TagBits is the width of the tags the card gives its requests on RQ
// (256 outstanding non-posted requests; PG213's client tags).
const TagBits = 8

// ParkDepth is how many non-posted requests wait in the tag table's park
// FIFO for a tag or the block's credit while posted writes pass them (two
// more wait in the register slice at its head): as many as the
// ports' peers can have outstanding beyond the card's own tags (a peer
// O-NIC's port tag table gives each port 256 tags, so with two ports at
// most 512 reads are in flight toward the host, 256 of them holding
// tags here).
const ParkDepth = 256

// TagsModule is the requester tag table (onic_pcie4_tags), as
// pcie/manager's tag table describes it. Every request the card passes to
// its host for a peer leaves as the card's own: the block is an
// endpoint, whose requests carry its function's ID (PG213's requester
// request descriptor: Requester ID Enable is for a root port, or an
// upstream switch port relaying; an endpoint's bus number is the block's
// own), so the host's root complex, routing completions by requester ID
// (PCIe §2.2.9), sends the completion to the card. So each request on
// req_* leaves on rq_* with self_id as its requester; a non-posted one
// also with a free local tag (the block runs with client tags,
// axisten_if_enable_client_tag: the card must never have two non-posted
// requests with one tag outstanding, and peers' tags may collide), and
// the table remembers the request's own requester ID, tag and the port
// it came from (req_port: 1 A, 2 B). A completion on rc_* (the RC
// adapter's stream) leaves on cpl_* with that requester ID and tag put
// back and the port on cpl_port (0 for a tag nothing holds: unexpected),
// and the local tag is free again once the block says the request is
// complete (rc_done on the completion's last beat). A request waits
// while no tag is free; a scan finds the next free one, one tag a cycle.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func TagsModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_tags")
	m.Describe("self_id", "The O-NIC's routing ID: every request leaves as the card's own.")
	m.Describe("req_", "Requests for the host from the ports (req_port: 1 A, 2 B), in the manager's stream format.")
	m.Describe("nph_av", "PG213's non-posted header and data credits (pcie_tfc_*), which gate a non-posted request.")
	m.Describe("np_overflows", "Non-posted requests dropped because the park where they wait for a tag and credits was full.")
	m.Describe("rq_", "To the RQ adapter: the requests with self_id as requester and, if non-posted, a free local tag; rq_port where each came from.")
	m.Describe("rc_", "From the RC adapter: the host's completions; rc_done on the last beat of the one that ends its request.")
	m.Describe("cpl_", "The completions with the request's own requester ID and tag put back, and cpl_port the port it came from (0: unexpected).")
	const n = 1 << TagBits
	reqLo, reqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassMemory, tlp.Fmt3DW))
	self := m.Input("self_id", 16)

	// Requests. A non-posted one (one beat: a read, an AtomicOp, an I/O or
	// configuration request) waits for a free tag and the block's
	// non-posted credits in a park (axis.Park) while the posted writes
	// behind it pass it: PCIe's ordering rules let posted requests pass
	// non-posted ones and require that they can (§2.4.1, Table 2-39), and
	// PG213 warns that the block holds a non-posted request on RQ for want
	// of credit, blocking everything behind it ("Avoiding Head-of-Line
	// Blocking for Posted Requests"): the card sends one only while
	// pcie_tfc_nph_av (and pcie_tfc_npd_av for one with data) says the
	// block has credit for it, less what it sent in the two cycles those
	// outputs lag by.
	hdr := m.Input("req_hdr", hdrBits)
	sop := m.Input("req_sop", 1)
	f := tlphdr.Decode(m, "req_hdr", hdr)
	mwr := m.And(f.HasData, tlphdr.IsType(m, f.Type, tlp.MWr))
	msg := tlphdr.IsMessage(m, f.Type)
	np := m.Named("req_needs_tag", m.And(sop, m.Not(m.Or(mwr, msg))))
	busy := m.Reg("tag_busy", n, 0)
	cursor := m.Reg("tag_cursor", TagBits, 0)
	// Whether the cursor's tag is free, registered (below): a choice among
	// the 256 tags would otherwise be in front of the park's release.
	free := m.Reg("tag_free", 1, 1)
	// The data credits of 16 bytes a request needs (an AtomicOp's 1 to 8
	// DWs take one or two), worked out as it comes and parked with it, so
	// that no header decoding is between the park's head and its release.
	needIn := m.Named("req_npd", m.Mux(f.HasData,
		m.Mux(m.LtU(m.Slice(f.Length, 0, 4), m.Const(4, 5)), m.Const(2, 1), m.Const(2, 2)), m.Const(2, 0)))
	// The stream's word is {last, ...}, as axis.PacketMux takes it.
	in := axis.Stream{Data: m.Concat(m.Input("req_eop", 1), m.Input("req_port", 2), needIn, hdr, m.Input("req_data", dataBits),
		m.Input("req_keep", keepBits), sop), Valid: m.Input("req_valid", 1), Ready: m.Wire("req_in_ready", 1)}
	m.Output("req_ready", in.Ready)
	// A non-posted request that finds the park full is dropped and
	// counted (np_overflows), never left waiting at the input: there it
	// would hold up the posted writes behind it. An O-NIC peer cannot get
	// there (its port's 256 tags and this card's 256 plus the park's 256
	// bound what two ports have outstanding), but the optical link has one
	// credit type, so a peer that ignores tags can send reads without
	// end; the requester sees a completion timeout (PCIe §2.8).
	// The credits a parked request needs, and what the last two cycles'
	// requests took that the block's outputs may not show yet.
	nph, npd := m.Input("nph_av", 4), m.Input("npd_av", 4)
	sentH := [2]ir.Value{m.Reg("np_sent_1", 1, 0), m.Reg("np_sent_2", 1, 0)}
	sentD := [2]ir.Value{m.Reg("npd_sent_1", 2, 0), m.Reg("npd_sent_2", 2, 0)}
	// Whether the block has the credit for a request needing 0, 1 or 2
	// data credits, from registers and the block's outputs alone; the
	// park's head (a register slice's, so the FIFO's pointers are not
	// behind the release) only chooses among them (the release is on the
	// path to the merge's grant).
	takenH := m.Named("nph_taken", m.Add(m.Zext(sentH[0], 4), m.Zext(sentH[1], 4)))
	takenD := m.Named("npd_taken", m.Add(m.Zext(sentD[0], 4), m.Zext(sentD[1], 4)))
	hOK := m.Named("nph_ok", m.LtU(takenH, nph))
	dOK := [3]ir.Value{m.Const(1, 1), m.Named("npd_ok_1", m.LtU(takenD, npd)), m.Named("npd_ok_2", m.LtU(m.Add(takenD, m.Const(4, 1)), npd))}
	var needD ir.Value
	mayGo := func(head ir.Value) ir.Value {
		needD = m.Named("park_head_npd", m.Slice(head, dataBits+keepBits+1+hdrBits, 2))
		credit := m.Named("np_credit", m.And(hOK, m.Mux(m.Slice(needD, 1, 1), dOK[2], m.Mux(m.Slice(needD, 0, 1), dOK[1], dOK[0]))))
		return m.And(free, credit)
	}
	out, parked, overflow := axis.ParkOrDrop(m, "req", in, np, ParkDepth, true, mayGo)
	overflows := m.Reg("np_overflow_count", 32, 0)
	m.SetNext(overflows, m.SatAddU(overflows, m.Const(32, 1)))
	m.SetEnable(overflows, overflow)
	m.Output("np_overflows", overflows)
	at := out.Data.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(out.Data, at, w) }
	oEOP, oPort, _, oHdr, oData, oKeep, oSOP := take(1), take(2), take(2), take(hdrBits), take(dataBits), take(keepBits), take(1)
	m.Assign(out.Ready, m.Input("rq_ready", 1))
	m.Output("rq_valid", out.Valid)
	moved := m.Named("req_moved", m.And(out.Valid, out.Ready))
	alloc := m.Named("tag_alloc", m.And(moved, parked))
	m.SetNext(sentH[0], alloc)
	m.SetNext(sentH[1], sentH[0])
	m.SetNext(sentD[0], m.Mux(alloc, needD, m.Const(2, 0)))
	m.SetNext(sentD[1], sentD[0])
	of := tlphdr.Decode(m, "rq_out", oHdr)
	// The 10-bit tag's T9 and T8 go to zero, its low 8 bits take the local tag.
	tagged := tlphdr.SetTag(m, oHdr, tlp.ClassMemory, m.Zext(cursor, 10))
	asSelf := func(h ir.Value) ir.Value {
		return m.Concat(m.Slice(h, reqLo+reqW, hdrBits-reqLo-reqW), self, m.Slice(h, 0, reqLo))
	}
	m.Output("rq_hdr", asSelf(m.Named("rq_hdr_tagged", m.Mux(parked, m.Named("rq_hdr_local_tag", tagged), oHdr))))
	m.Output("rq_data", oData)
	m.Output("rq_keep", oKeep)
	m.Output("rq_sop", oSOP)
	m.Output("rq_eop", oEOP)
	m.Output("rq_port", oPort)
	// Each tag's request as it came: its port, requester ID and tag.
	orig := m.Memory("tag_orig", n, 2+16+10)
	m.WritePort(orig, cursor, m.Named("tag_orig_in", m.Concat(oPort, of.Requester, of.Tag)), alloc, ir.Value{})

	// Completions: one register stage, in which the table's word for the
	// completion's tag is read.
	cHdr := m.Input("rc_hdr", 96)
	cValid := m.Input("rc_valid", 1)
	cDone := m.Input("rc_done", 1)
	cEOP := m.Input("rc_eop", 1)
	outValid := m.Reg("cpl_valid_r", 1, 0)
	outReady := m.Input("cpl_ready", 1)
	accept := m.Named("cpl_accept", m.And(cValid, m.Or(m.Not(outValid), outReady)))
	m.Output("rc_ready", m.Named("cpl_open", m.Or(m.Not(outValid), outReady)))
	local := m.Slice(tlphdr.Decode(m, "rc", m.Concat(cHdr, m.Const(32, 0))).Tag, 0, TagBits) // (the 3 DW header is the top of the 128-bit bus)
	origWord := m.ReadPort(orig, local, accept)
	origTag, origReq, origPort := m.Slice(origWord, 0, 10), m.Slice(origWord, 10, 16), m.Slice(origWord, 26, 2)
	reg := func(name string, v ir.Value) ir.Value {
		r := m.RegNoReset(name, v.Width())
		m.SetNext(r, v)
		m.SetEnable(r, accept)
		return r
	}
	rHdr := reg("cpl_hdr_r", cHdr)
	// Whether the completion's tag was taken (busy) when it came: a tag
	// nothing holds is an Unexpected Completion (port 0).
	held2 := reg("cpl_tag_held_r", m.Slice(m.Named("tag_busy_from_cpl", m.Shr(busy, local)), 0, 1))
	m.SetNext(outValid, m.Or(accept, m.And(outValid, m.Not(outReady))))
	back := m.Named("cpl_hdr_orig_tag", tlphdr.SetTag(m, rHdr, tlp.ClassCompletion, origTag))
	cReqLo, cReqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassCompletion, tlp.Fmt3DW))
	cReqLo -= 32
	back = m.Named("cpl_hdr_back", m.Concat(m.Slice(back, cReqLo+cReqW, 96-cReqLo-cReqW), origReq, m.Slice(back, 0, cReqLo)))
	m.Output("cpl_hdr", m.Mux(held2, back, rHdr))
	m.Output("cpl_port", m.Mux(held2, origPort, m.Const(2, 0)))
	m.Output("cpl_data", reg("cpl_data_r", m.Input("rc_data", dataBits)))
	m.Output("cpl_keep", reg("cpl_keep_r", m.Input("rc_keep", keepBits)))
	m.Output("cpl_sop", reg("cpl_sop_r", m.Input("rc_sop", 1)))
	m.Output("cpl_eop", reg("cpl_eop_r", cEOP))
	m.Output("cpl_valid", outValid)
	// A completion that finishes its request frees its tag.
	release := m.Named("tag_release", m.And(accept, m.And(cEOP, cDone)))
	setMask := m.Named("tag_set", m.Mux(alloc, m.Shl(m.ConstWords(n, []uint64{1}), cursor), m.Const(n, 0)))
	clrMask := m.Named("tag_clear", m.Mux(release, m.Shl(m.ConstWords(n, []uint64{1}), local), m.Const(n, 0)))
	m.SetNext(busy, m.Named("tag_busy_next", m.And(m.Or(busy, setMask), m.Not(clrMask))))
	// The cursor moves on past a busy tag, and past the one just taken.
	move := m.Named("tag_cursor_moves", m.Or(m.Not(free), alloc))
	nextTag := m.Named("tag_cursor_next", m.Add(cursor, m.Const(TagBits, 1)))
	m.SetNext(cursor, m.Mux(move, nextTag, cursor))
	// The next cycle's tag_free: a cursor that stays is on a free tag it
	// did not take; one that moves is on a tag free unless busy and not
	// released in this cycle (only the tag at the cursor is taken).
	nextBusy := m.Slice(m.Named("tag_busy_from_next", m.Shr(busy, nextTag)), 0, 1)
	m.SetNext(free, m.Any(m.Not(move), m.Not(nextBusy), m.And(release, m.Eq(local, nextTag))))
	return m
}
