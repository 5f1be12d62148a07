// Package realign moves the DWs of a 512-bit AXI4-Stream packet to make
// room for, or remove, a descriptor at its front: the receive side of
// AMD's CQ and RC interfaces and of the optical link's deframer (Strip),
// the transmit side of CC, RQ and the framer (Prepend). Both keep one beat
// of state. Neither costs more cycles than the wider of its input and
// output: Strip takes a beat every cycle, Prepend sends one.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package realign

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
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
// sideband worked out from it, as named fields) replaces; the payload
// after it is realigned to start at byte 0, each output beat one input
// beat's last (16 - descDWs) DWs and the next one's first descDWs. A
// packet's last bytes, when they did not leave with its last beat, leave
// on their own in the cycle that takes the next packet's first beat, so
// packets cost their input beats, back to back. The result comes through a register slice that keeps each field
// apart (axis.SkidFields): meta's fields, then data, keep, sop and eop.
func Strip(m *ir.Module, in Beats, last ir.Value, meta []axis.Field, descDWs int) axis.Fields {
	ir.Helper()
	restDWs := KeepBits - descDWs
	held := m.RegNoReset("held_data", 32*restDWs)
	heldKeep := m.RegNoReset("held_keep", restDWs)
	heldMeta := make([]ir.Value, len(meta))
	for i, f := range meta {
		heldMeta[i] = m.RegNoReset("held_"+f.Name, f.Value.Width())
	}
	heldValid := m.Reg("held_valid", 1, 0)
	heldFirst := m.RegNoReset("held_first", 1) // the beat will be its packet's first
	heldLast := m.Reg("held_last", 1, 0)       // the packet's input has ended: flush without waiting

	// Combine the held DWs with the next beat's first ones, or flush them
	// alone after the packet's last beat.
	open := m.Named("held_open", m.Not(heldLast)) // the held packet's input goes on
	empty := m.Named("held_empty", m.Not(heldValid))
	combine := m.Named("combine", m.And(heldValid, m.And(open, in.Valid)))
	flush := m.Named("flush", m.And(heldValid, heldLast))
	outValid := m.Named("out_valid", m.Or(combine, flush))
	restKeep := m.Named("rest_keep", m.Slice(in.Keep, descDWs, restDWs))
	restEmpty := m.Named("rest_empty", m.Eq(restKeep, m.Const(restDWs, 0)))
	nextData := m.Named("next_data", m.Mux(flush, m.Const(32*descDWs, 0), m.Slice(in.Data, 0, 32*descDWs)))
	nextKeep := m.Named("next_keep", m.Mux(flush, m.Const(descDWs, 0), m.Slice(in.Keep, 0, descDWs)))
	outEOP := m.Named("out_eop", m.Or(flush, m.And(last, restEmpty)))
	fields := make([]axis.Field, 0, len(meta)+4)
	for i, f := range meta {
		fields = append(fields, axis.Field{Name: f.Name, Value: heldMeta[i]})
	}
	fields = append(fields, axis.Field{Name: "data", Value: m.Named("out_data", m.Concat(nextData, held))},
		axis.Field{Name: "keep", Value: m.Named("out_keep", m.Concat(nextKeep, heldKeep))},
		axis.Field{Name: "sop", Value: heldFirst}, axis.Field{Name: "eop", Value: outEOP})
	outReady := m.Wire("out_ready", 1)

	// An input beat is taken when nothing is held (a packet's first
	// beat), when the held DWs go out with it, or when the held packet's
	// last DWs are flushed (the next packet's first beat).
	ready := m.Named("accept", m.Or(empty, outReady))
	m.Assign(in.Ready, ready)
	take := m.Named("take", m.And(in.Valid, ready))
	sent := m.Named("sent", m.And(outValid, outReady))
	start := m.Named("start", m.And(take, m.Or(empty, heldLast)))
	m.SetNext(held, m.Slice(in.Data, 32*descDWs, 32*restDWs))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, restKeep)
	m.SetEnable(heldKeep, take)
	for i, f := range meta {
		m.SetNext(heldMeta[i], f.Value)
		m.SetEnable(heldMeta[i], start)
	}
	m.SetNext(heldFirst, start)
	m.SetEnable(heldFirst, m.Or(start, sent))
	// What is held after this edge: a packet continues while its input
	// has not ended, and its last DWs wait for a flush unless they went
	// out with the beat that ended it; a one-beat packet (even one with
	// no payload, a read's header) is flushed in the next cycle.
	nextValid := m.Named("held_valid_next", m.Mux(take, m.Or(m.Not(last), m.Not(restEmpty)), m.And(heldValid, m.Not(m.And(flush, sent)))))
	m.SetNext(heldValid, m.Mux(m.And(start, last), m.Const(1, 1), nextValid))
	m.SetNext(heldLast, m.Mux(take, last, m.And(heldLast, m.Not(sent))))
	return axis.SkidFields(m, "out_slice", outValid, outReady, fields)
}

// Prepend is the transmit side (CC, RQ, the optical framer): a descDWs-DW
// descriptor goes in front of each packet's payload (which arrives from
// byte 0 of its first beat), each output beat the previous input beat's
// last descDWs DWs and the next one's first (16 - descDWs); a packet
// whose last beat overflows takes one more cycle. user builds the
// beat's tuser from whether it is a packet's first beat, its last, and its
// keep. The result comes through a register slice that keeps each field
// apart (axis.SkidFields): data, keep, last and user.
func Prepend(m *ir.Module, in Beats, sop, eop, desc ir.Value, user func(first, last, keep ir.Value) ir.Value) axis.Fields {
	ir.Helper()
	descDWs := desc.Width() / 32
	restDWs := KeepBits - descDWs
	held := m.RegNoReset("held_data", desc.Width())
	heldKeep := m.RegNoReset("held_keep", descDWs)
	flush := m.Reg("flush", 1, 0)

	upper := m.Named("upper_keep", m.Slice(in.Keep, restDWs, descDWs))
	upperEmpty := m.Named("upper_empty", m.Eq(upper, m.Const(descDWs, 0)))
	low := m.Named("low_data", m.Mux(flush, m.Const(32*restDWs, 0), m.Slice(in.Data, 0, 32*restDWs)))
	lowKeep := m.Named("low_keep", m.Mux(flush, m.Const(restDWs, 0), m.Slice(in.Keep, 0, restDWs)))
	open := m.Named("open", m.Not(flush)) // no packet's last DWs wait to go alone
	first := m.Named("first", m.And(open, sop))
	outData := m.Named("out_data", m.Concat(low, m.Named("front_data", m.Mux(first, desc, held))))
	outKeep := m.Named("out_keep", m.Concat(lowKeep, m.Mux(first, m.Const(descDWs, 1<<descDWs-1), heldKeep)))
	outLast := m.Named("out_last", m.Or(flush, m.And(eop, upperEmpty)))
	outValid := m.Named("out_valid", m.Or(flush, in.Valid))
	outReady := m.Wire("out_ready", 1)

	ready := m.Named("accept", m.And(open, outReady))
	m.Assign(in.Ready, ready)
	take := m.Named("take", m.And(in.Valid, ready))
	m.SetNext(held, m.Slice(in.Data, 32*restDWs, desc.Width()))
	m.SetEnable(held, take)
	m.SetNext(heldKeep, upper)
	m.SetEnable(heldKeep, take)
	m.SetNext(flush, m.Mux(take, m.And(eop, m.Not(upperEmpty)), m.And(flush, m.Not(outReady))))
	return axis.SkidFields(m, "out_slice", outValid, outReady, []axis.Field{{Name: "data", Value: outData}, {Name: "keep", Value: outKeep},
		{Name: "last", Value: outLast}, {Name: "user", Value: m.Named("out_user", user(first, outLast, outKeep))}})
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

// Outputs drives an output prefix+name from each of f's fields named
// in names.
func Outputs(m *ir.Module, f axis.Fields, prefix string, names ...string) {
	ir.Helper()
	for _, n := range names {
		m.Output(prefix+n, f.Field(n))
	}
}

// SkidOut puts f through one more register slice toward a hard block's
// inputs, prefix+"t"+name for each of its fields (axis.SkidFields, named
// name_<field>); the slice's valid leaves as prefix+"tvalid", its ready
// comes from the input prefix+"tready".
func SkidOut(m *ir.Module, name string, f axis.Fields, prefix string) {
	ir.Helper()
	in := make([]axis.Field, len(f.Fields))
	for i, v := range f.Fields {
		in[i] = axis.Field{Name: f.Names[i], Value: v}
	}
	out := axis.SkidFields(m, name, f.Valid, f.Ready, in)
	for i, n := range out.Names {
		m.Output(prefix+"t"+n, out.Fields[i])
	}
	m.Output(prefix+"tvalid", out.Valid)
	m.Assign(out.Ready, m.Input(prefix+"tready", 1))
}
