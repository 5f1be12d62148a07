package pcie4

import (
	"onic/hdlgen/internal/tlphdr"
	"onic/hdlgen/ir"
	"onic/tlp"
)

// TagBits is the width of the tags the card gives its requests on RQ
// (256 outstanding non-posted requests; PG213's client tags).
const TagBits = 8

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
func TagsModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_tags")
	const n = 1 << TagBits
	reqLo, reqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassMemory, tlp.Fmt3DW))
	self := m.Input("self_id", 16)

	// Requests.
	hdr := m.Input("req_hdr", hdrBits)
	sop := m.Input("req_sop", 1)
	eop := m.Input("req_eop", 1)
	valid := m.Input("req_valid", 1)
	rqReady := m.Input("rq_ready", 1)
	f := tlphdr.Decode(m, "req_hdr", hdr)
	posted := m.Named("req_posted", m.And(f.HasData, m.Eq(f.Type, m.Const(5, 0)))) // MWr
	busy := m.Reg("tag_busy", n, 0)
	cursor := m.Reg("tag_cursor", TagBits, 0)
	free := m.Named("tag_free", m.Not(m.Slice(m.Shr(busy, cursor), 0, 1)))
	held := m.Reg("req_held_tag", TagBits, 0) // the tag of the request in progress
	first := m.And(sop, m.Not(posted))
	canGo := m.Named("req_can_go", m.Or(m.Not(first), free))
	m.Output("req_ready", m.And(rqReady, canGo))
	m.Output("rq_valid", m.And(valid, canGo))
	moved := m.Named("req_moved", m.And(m.And(valid, canGo), rqReady))
	alloc := m.Named("tag_alloc", m.And(moved, first))
	tag := m.Mux(first, cursor, held)
	// The 10-bit tag's T9 and T8 go to zero, its low 8 bits take the local tag.
	out := tlphdr.SetTag(m, hdr, tlp.ClassMemory, m.Zext(tag, 10))
	asSelf := func(h ir.Value) ir.Value {
		return m.Concat(m.Slice(h, reqLo+reqW, hdrBits-reqLo-reqW), self, m.Slice(h, 0, reqLo))
	}
	m.Output("rq_hdr", asSelf(m.Mux(posted, hdr, out)))
	m.Output("rq_data", m.Input("req_data", dataBits))
	m.Output("rq_keep", m.Input("req_keep", keepBits))
	m.Output("rq_sop", sop)
	m.Output("rq_eop", eop)
	m.SetNext(held, tag)
	m.SetEnable(held, alloc)
	// Each tag's request as it came: its port, requester ID and tag.
	orig := m.Memory("tag_orig", n, 2+16+10)
	m.WritePort(orig, cursor, m.Concat(m.Input("req_port", 2), f.Requester, f.Tag), alloc, ir.Value{})

	// Completions: one register stage, in which the table's word for the
	// completion's tag is read.
	cHdr := m.Input("rc_hdr", 96)
	cValid := m.Input("rc_valid", 1)
	cDone := m.Input("rc_done", 1)
	cEOP := m.Input("rc_eop", 1)
	outValid := m.Reg("cpl_valid_r", 1, 0)
	outReady := m.Input("cpl_ready", 1)
	accept := m.Named("cpl_accept", m.And(cValid, m.Or(m.Not(outValid), outReady)))
	m.Output("rc_ready", m.Or(m.Not(outValid), outReady))
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
	held2 := reg("cpl_tag_held_r", m.Slice(m.Shr(busy, local), 0, 1))
	m.SetNext(outValid, m.Or(accept, m.And(outValid, m.Not(outReady))))
	back := tlphdr.SetTag(m, rHdr, tlp.ClassCompletion, origTag)
	cReqLo, cReqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassCompletion, tlp.Fmt3DW))
	cReqLo -= 32
	back = m.Concat(m.Slice(back, cReqLo+cReqW, 96-cReqLo-cReqW), origReq, m.Slice(back, 0, cReqLo))
	m.Output("cpl_hdr", m.Mux(held2, back, rHdr))
	m.Output("cpl_port", m.Mux(held2, origPort, m.Const(2, 0)))
	m.Output("cpl_data", reg("cpl_data_r", m.Input("rc_data", dataBits)))
	m.Output("cpl_keep", reg("cpl_keep_r", m.Input("rc_keep", keepBits)))
	m.Output("cpl_sop", reg("cpl_sop_r", m.Input("rc_sop", 1)))
	m.Output("cpl_eop", reg("cpl_eop_r", cEOP))
	m.Output("cpl_valid", outValid)
	// A completion that finishes its request frees its tag.
	release := m.Named("tag_release", m.And(accept, m.And(cEOP, cDone)))
	setMask := m.Mux(alloc, m.Shl(m.ConstWords(n, []uint64{1}), cursor), m.Const(n, 0))
	clrMask := m.Mux(release, m.Shl(m.ConstWords(n, []uint64{1}), local), m.Const(n, 0))
	m.SetNext(busy, m.And(m.Or(busy, setMask), m.Not(clrMask)))
	// The cursor moves on past a busy tag, and past the one just taken.
	m.SetNext(cursor, m.Mux(m.Or(m.Not(free), alloc), m.Add(cursor, m.Const(TagBits, 1)), cursor))
	return m
}
