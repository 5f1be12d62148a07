// Package realign moves the DWs of a 512-bit AXI4-Stream packet to make
// room for, or remove, a descriptor at its front: the receive side of
// AMD's CQ and RC interfaces and of the optical link's deframer (Strip),
// the transmit side of CC, RQ and the framer (Prepend). Both keep one beat
// of state and cost at most one extra cycle per packet.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package realign

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"strings"
)

// KeepBits is the number of DWs in a beat.
const KeepBits = 16

// Beats is an AXI4-Stream of 512-bit beats with a keep bit per DW.
type Beats struct {
	Data, Keep, Valid ir.Value
	Ready             ir.Value // a wire the builder drives
}

// Strip is the receive side (CQ, RC, the optical deframer): each packet's first
// beat starts with a descDWs-DW descriptor, which meta (the header and
// sideband worked out from it) replaces; the payload after it is
// realigned to start at byte 0, each output beat one input beat's last
// (16 - descDWs) DWs and the next one's first descDWs. A packet costs its
// beats plus one cycle: its last bytes leave on their own. The result,
// through a skid buffer, packs meta, data, keep, sop and eop, most
// significant first.
func Strip(m *ir.Module, in Beats, last, meta ir.Value, descDWs int) axis.Stream {
	ir.Helper()
	restDWs := KeepBits - descDWs
	held := m.RegNoReset("held_data", 32*restDWs)
	heldKeep := m.RegNoReset("held_keep", restDWs)
	heldMeta := m.RegNoReset("held_meta", meta.Width())
	heldValid := m.Reg("held_valid", 1, 0)
	heldFirst := m.RegNoReset("held_first", 1) // the beat will be its packet's first
	heldLast := m.Reg("held_last", 1, 0)       // the packet's input has ended: flush without waiting

	// Combine the held DWs with the next beat's first ones, or flush them
	// alone after the packet's last beat.
	combine := m.Named("combine", m.And(heldValid, m.And(m.Not(heldLast), in.Valid)))
	flush := m.Named("flush", m.And(heldValid, heldLast))
	outValid := m.Named("out_valid", m.Or(combine, flush))
	restKeep := m.Slice(in.Keep, descDWs, restDWs)
	restEmpty := m.Named("rest_empty", m.Eq(restKeep, m.Const(restDWs, 0)))
	outData := m.Concat(m.Mux(flush, m.Const(32*descDWs, 0), m.Slice(in.Data, 0, 32*descDWs)), held)
	outKeep := m.Concat(m.Mux(flush, m.Const(descDWs, 0), m.Slice(in.Keep, 0, descDWs)), heldKeep)
	outEOP := m.Named("out_eop", m.Or(flush, m.And(last, restEmpty)))
	outS := axis.New(m, "out", m.Concat(heldMeta, outData, outKeep, heldFirst, outEOP), outValid)

	// An input beat is taken when nothing is held (a packet's first
	// beat), or when the held DWs go out with it.
	ready := m.Or(m.Not(heldValid), m.And(m.Not(heldLast), outS.Ready))
	m.Assign(in.Ready, ready)
	take := m.Named("take", m.And(in.Valid, ready))
	sent := m.Named("sent", m.And(outValid, outS.Ready))
	start := m.Named("start", m.And(take, m.Not(heldValid)))
	m.SetNext(held, m.Slice(in.Data, 32*descDWs, 32*restDWs))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, restKeep)
	m.SetEnable(heldKeep, take)
	m.SetNext(heldMeta, meta)
	m.SetEnable(heldMeta, start)
	m.SetNext(heldFirst, start)
	m.SetEnable(heldFirst, m.Or(start, sent))
	// What is held after this edge: a packet continues while its input
	// has not ended, and its last DWs wait for a flush unless they went
	// out with the beat that ended it; a one-beat packet (even one with
	// no payload, a read's header) is flushed on its own.
	nextValid := m.Mux(take, m.Or(m.Not(last), m.Not(restEmpty)), m.And(heldValid, m.Not(m.And(flush, sent))))
	m.SetNext(heldValid, m.Mux(m.And(start, last), m.Const(1, 1), nextValid))
	m.SetNext(heldLast, m.Mux(take, last, m.And(heldLast, m.Not(sent))))
	return axis.Skid(m, "out_slice", outS)
}

// Prepend is the transmit side (CC, RQ, the optical framer): a descDWs-DW
// descriptor goes in front of each packet's payload (which arrives from
// byte 0 of its first beat), each output beat the previous input beat's
// last descDWs DWs and the next one's first (16 - descDWs); a packet
// whose last beat overflows takes one more cycle. user builds the
// beat's tuser from whether it is a packet's first beat, its last, and its
// keep. The result, through a skid buffer, packs data, keep, last and
// tuser, most significant first.
func Prepend(m *ir.Module, in Beats, sop, eop, desc ir.Value, user func(first, last, keep ir.Value) ir.Value) axis.Stream {
	ir.Helper()
	descDWs := desc.Width() / 32
	restDWs := KeepBits - descDWs
	held := m.RegNoReset("held_data", desc.Width())
	heldKeep := m.RegNoReset("held_keep", descDWs)
	flush := m.Reg("flush", 1, 0)

	upper := m.Slice(in.Keep, restDWs, descDWs)
	upperEmpty := m.Eq(upper, m.Const(descDWs, 0))
	low := m.Mux(flush, m.Const(32*restDWs, 0), m.Slice(in.Data, 0, 32*restDWs))
	lowKeep := m.Mux(flush, m.Const(restDWs, 0), m.Slice(in.Keep, 0, restDWs))
	first := m.Named("first", m.And(m.Not(flush), sop))
	outData := m.Concat(low, m.Mux(first, desc, held))
	outKeep := m.Named("out_keep", m.Concat(lowKeep, m.Mux(first, m.Const(descDWs, 1<<descDWs-1), heldKeep)))
	outLast := m.Named("out_last", m.Or(flush, m.And(eop, upperEmpty)))
	outValid := m.Named("out_valid", m.Or(flush, in.Valid))
	outS := axis.New(m, "out", m.Concat(outData, outKeep, outLast, user(first, outLast, outKeep)), outValid)

	ready := m.And(m.Not(flush), outS.Ready)
	m.Assign(in.Ready, ready)
	take := m.Named("take", m.And(in.Valid, ready))
	m.SetNext(held, m.Slice(in.Data, 32*restDWs, desc.Width()))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, upper)
	m.SetEnable(heldKeep, take)
	m.SetNext(flush, m.Mux(take, m.And(eop, m.Not(upperEmpty)), m.And(flush, m.Not(outS.Ready))))
	return axis.Skid(m, "out_slice", outS)
}

// LastDW is the index of the highest set bit of keep (a contiguous run
// from bit 0 on the buses here): is_eop0_ptr.
func LastDW(m *ir.Module, keep ir.Value) ir.Value {
	ir.Helper()
	var ptr ir.Value = m.Const(4, 0)
	for d := 1; d < keep.Width(); d++ {
		ptr = m.Mux(m.Slice(keep, d, 1), m.Const(4, uint64(d)), ptr)
	}
	return m.Named("eop_ptr", ptr)
}

// Unpack drives outputs named prefix+name from s's packed data, most
// significant first, and s's valid and ready as prefix+valid/ready.
func Unpack(m *ir.Module, s axis.Stream, prefix string, fields []Field) {
	ir.Helper()
	v := s.Data
	at := v.Width()
	for _, f := range fields {
		at -= f.Width
		m.Output(prefix+f.Name, m.Slice(v, at, f.Width))
	}
}

// SkidOut puts s through a register slice toward outputs prefix+name:
// the fields of its packed data (most significant first) each keep
// registers of their own (axis.SkidFields, named name_<field>), and the
// slice's valid leaves as prefix+"tvalid", its ready coming from the
// input prefix+"tready".
func SkidOut(m *ir.Module, name string, s axis.Stream, prefix string, fields []Field) {
	ir.Helper()
	at := s.Data.Width()
	in := make([]axis.Field, len(fields))
	for i, f := range fields {
		at -= f.Width
		in[i] = axis.Field{Name: strings.TrimPrefix(f.Name, "t"), Value: m.Slice(s.Data, at, f.Width)}
	}
	out := axis.SkidFields(m, name, s.Valid, s.Ready, in)
	for i, f := range fields {
		m.Output(prefix+f.Name, out.Fields[i])
	}
	m.Output(prefix+"tvalid", out.Valid)
	m.Assign(out.Ready, m.Input(prefix+"tready", 1))
}

// Field is one output of a packed stream.
type Field struct {
	Name  string
	Width int
}
