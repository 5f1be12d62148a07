package axis

import "onic/hdlgen/ir"

// Park passes in's packets on ({last, word}, as PacketMux takes them),
// except those whose first word park marks: each of those — it must be a
// one-word packet — waits in a FIFO of depth words and leaves when
// release is high, while the packets behind it pass it. It is how a
// request that must wait for a resource (a read for a free tag) lets the
// traffic that may pass it go on (PCIe's ordering rules let posted
// requests and completions pass non-posted requests, and require that
// they can: PCIe Base §2.4.1). A packet marked while the FIFO is full
// waits at the input, and everything behind it with it.
//
// Both paths meet in a PacketMux: neither starves. parked is high when
// the word on out is a parked one (so a caller can act on it as it
// leaves: give it its tag), and room while more than margin of the
// FIFO's words are free (for flow control upstream, which may have
// margin words on their way). release is given the FIFO's first word
// (in in's layout), so that whether it may leave can depend on what it is.
func Park(m *ir.Module, name string, in Stream, park ir.Value, depth, margin int, release func(head ir.Value) ir.Value) (out Stream, parked, room ir.Value) {
	ir.Helper()
	out, parked, room, _ = parkImpl(m, name, in, park, depth, margin, release, false, false)
	return out, parked, room
}

// ParkOrDrop is Park, except that a marked packet that finds the FIFO
// full is taken and dropped instead of waiting at the input (where it
// would hold up what may pass it); dropped is 1 in a cycle one is. For a
// resource its senders cannot be made to wait for by flow control.
//
// With sliceHead, the FIFO's first word waits in a register slice (Skid,
// name_park_head) before release sees it, so that a release that decides
// on the word's contents starts from registers and the FIFO's pointers
// are not behind it and the merge: at a cycle's latency and two words of
// registers.
func ParkOrDrop(m *ir.Module, name string, in Stream, park ir.Value, depth int, sliceHead bool, release func(head ir.Value) ir.Value) (out Stream, parked, dropped ir.Value) {
	ir.Helper()
	out, parked, _, dropped = parkImpl(m, name, in, park, depth, 0, release, true, sliceHead)
	return out, parked, dropped
}

// parkImpl is Park, and with drop ParkOrDrop.
func parkImpl(m *ir.Module, name string, in Stream, park ir.Value, depth, margin int, release func(head ir.Value) ir.Value, drop, sliceHead bool) (out Stream, parked, room, dropped ir.Value) {
	ir.Helper()
	split := Demux(m, name+"_split", in, park, 2)
	toPark := split[1]
	dropped = m.Const(1, 0)
	if drop {
		// The FIFO's own ready (not full) decides, on the park's side of
		// the split alone: the passing side's logic is Park's.
		qIn := Stream{Data: toPark.Data, Valid: m.Wire(name+"_park_in_valid", 1), Ready: m.Wire(name+"_park_in_ready", 1)}
		dropped = m.Named(name+"_park_drop", m.And(toPark.Valid, m.Not(qIn.Ready)))
		m.Assign(qIn.Valid, m.And(toPark.Valid, qIn.Ready))
		m.Assign(toPark.Ready, m.Const(1, 1))
		toPark = qIn
	}
	q := FIFO(m, name+"_park", toPark, depth)
	if sliceHead {
		q = Skid(m, name+"_park_head", q)
	}
	rel := m.Named(name+"_release", release(q.Data))
	gated := Stream{Data: m.Concat(q.Data, m.Const(1, 1)), Valid: m.And(q.Valid, rel), Ready: m.Wire(name+"_released_ready", 1)}
	m.Assign(q.Ready, m.And(gated.Ready, rel))
	pass := Stream{Data: m.Concat(split[0].Data, m.Const(1, 0)), Valid: split[0].Valid, Ready: split[0].Ready}
	merged := PacketMux(m, name+"_merge", []Stream{pass, gated})
	w := in.Data.Width()
	out = Stream{Data: m.Slice(merged.Data, 1, w), Valid: merged.Valid, Ready: m.Wire(name+"_out_ready", 1)}
	m.Assign(merged.Ready, out.Ready)
	parked = m.Named(name+"_parked", m.Slice(merged.Data, 0, 1))
	// The FIFO's words (and the slice's), counted in and out.
	cb := ir.AddrBits(depth) + 1
	count := m.Reg(name+"_park_count", cb, 0)
	push := m.And(toPark.Valid, toPark.Ready)
	pop := m.And(q.Valid, q.Ready)
	m.SetNext(count, m.Sub(m.Add(count, m.Zext(push, cb)), m.Zext(pop, cb)))
	room = m.Named(name+"_park_room", m.LtU(count, m.Const(cb, uint64(depth-margin))))
	return out, parked, room, dropped
}
