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
	split := Demux(m, name+"_split", in, park, 2)
	q := FIFO(m, name+"_park", split[1], depth)
	rel := m.Named(name+"_release", release(q.Data))
	gated := Stream{Data: m.Concat(q.Data, m.Const(1, 1)), Valid: m.And(q.Valid, rel), Ready: m.Wire(name+"_released_ready", 1)}
	m.Assign(q.Ready, m.And(gated.Ready, rel))
	pass := Stream{Data: m.Concat(split[0].Data, m.Const(1, 0)), Valid: split[0].Valid, Ready: split[0].Ready}
	merged := PacketMux(m, name+"_merge", []Stream{pass, gated})
	w := in.Data.Width()
	out = Stream{Data: m.Slice(merged.Data, 1, w), Valid: merged.Valid, Ready: m.Wire(name+"_out_ready", 1)}
	m.Assign(merged.Ready, out.Ready)
	parked = m.Named(name+"_parked", m.Slice(merged.Data, 0, 1))
	// The FIFO's words, counted in and out.
	cb := ir.AddrBits(depth) + 1
	count := m.Reg(name+"_park_count", cb, 0)
	push := m.And(split[1].Valid, split[1].Ready)
	pop := m.And(q.Valid, q.Ready)
	m.SetNext(count, m.Sub(m.Add(count, m.Zext(push, cb)), m.Zext(pop, cb)))
	room = m.Named(name+"_park_room", m.LtU(count, m.Const(cb, uint64(depth-margin))))
	return out, parked, room
}
