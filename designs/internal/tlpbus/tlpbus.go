// Package tlpbus is the TLP stream the O-NIC's modules pass each other
// inside the card, in the manager's format: a header valid on every beat,
// data from byte 0, a keep bit per DW, start and end of packet, and an
// optional sideband (the BAR on the host ingress, the slot on the kernel
// egress). A Stream names its parts as fields; a module instance's ports
// for one are its prefix and the field's name (prefix+"hdr", ...), and
// FromOutputs, Into, Wires and Drive are the only places those names are
// spelt, so modules are connected by field, not by string.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package tlpbus

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// Stream is a TLP stream in the manager's format inside the card: a header
// valid on every beat, data from byte 0, a keep bit per DW, start and end
// of packet, and sideband (the BAR on the host ingress, the slot on the
// kernel egress).
type Stream struct {
	Hdr, Side, Data, Keep, SOP, EOP ir.Value
	Valid, Ready                    ir.Value // ready: a wire the consumer drives
}

// Pack is s as an axis.Stream whose word has eop on top (what PacketMux
// reads), then hdr, side, data, keep and sop.
func (s Stream) Pack(m *ir.Module) axis.Stream {
	parts := []ir.Value{s.EOP, s.Hdr}
	if s.Side != (ir.Value{}) {
		parts = append(parts, s.Side)
	}
	parts = append(parts, s.Data, s.Keep, s.SOP)
	return axis.Stream{Data: m.Concat(parts...), Valid: s.Valid, Ready: s.Ready}
}

// Unpack is the inverse of pack for a stream like like.
func Unpack(m *ir.Module, st axis.Stream, like Stream) Stream {
	at := st.Data.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(st.Data, at, w) }
	var s Stream
	s.EOP, s.Hdr = take(1), take(like.Hdr.Width())
	if like.Side != (ir.Value{}) {
		s.Side = take(like.Side.Width())
	}
	s.Data, s.Keep, s.SOP = take(like.Data.Width()), take(like.Keep.Width()), take(1)
	s.Valid, s.Ready = st.Valid, st.Ready
	return s
}

// Merge joins TLP streams of the same shape a packet at a time.
func Merge(m *ir.Module, name string, a Stream, more ...Stream) Stream {
	ins := []axis.Stream{a.Pack(m)}
	for _, b := range more {
		ins = append(ins, b.Pack(m))
	}
	out := axis.PacketMux(m, name, ins)
	return Unpack(m, out, a)
}

// Fields are s's parts as named Fields, and more after them.
func (s Stream) Fields(more ...axis.Field) []axis.Field {
	f := []axis.Field{{Name: "hdr", Value: s.Hdr}}
	if s.Side != (ir.Value{}) {
		f = append(f, axis.Field{Name: "side", Value: s.Side})
	}
	f = append(f, axis.Field{Name: "data", Value: s.Data}, axis.Field{Name: "keep", Value: s.Keep},
		axis.Field{Name: "sop", Value: s.SOP}, axis.Field{Name: "eop", Value: s.EOP})
	return append(f, more...)
}

// SliceFields is s, with more fields after its own, through a register
// slice (axis.SkidFields) that keeps each field in registers of its own;
// it returns the slice's stream and the extra fields' registered values.
func SliceFields(m *ir.Module, name string, s Stream, more ...axis.Field) (Stream, []ir.Value) {
	f := axis.SkidFields(m, name, s.Valid, s.Ready, s.Fields(more...))
	out := Stream{Hdr: f.Fields[0], Valid: f.Valid, Ready: f.Ready}
	v := f.Fields[1:]
	if s.Side != (ir.Value{}) {
		out.Side, v = v[0], v[1:]
	}
	out.Data, out.Keep, out.SOP, out.EOP = v[0], v[1], v[2], v[3]
	return out, v[4:]
}

// Slice is s through a register Slice that keeps its fields apart.
func Slice(m *ir.Module, name string, s Stream) Stream {
	out, _ := SliceFields(m, name, s)
	return out
}

// FromOutputs is the stream a module instance sends on prefix+field.
func FromOutputs(m *ir.Module, out map[string]ir.Value, prefix, side string, readyName string) Stream {
	s := Stream{Hdr: out[prefix+"hdr"], Data: out[prefix+"data"], Keep: out[prefix+"keep"], SOP: out[prefix+"sop"], EOP: out[prefix+"eop"],
		Valid: out[prefix+"valid"], Ready: m.Wire(readyName, 1)}
	if side != "" {
		s.Side = out[side]
	}
	return s
}

// Wires is a TLP stream of Wires named prefix+field, to be driven later
// (drive) where its source is built.
func Wires(m *ir.Module, prefix string) Stream {
	return Stream{Hdr: m.Wire(prefix+"hdr", 128), Data: m.Wire(prefix+"data", 512), Keep: m.Wire(prefix+"keep", 16),
		SOP: m.Wire(prefix+"sop", 1), EOP: m.Wire(prefix+"eop", 1), Valid: m.Wire(prefix+"valid", 1)}
}

// Drive assigns src's fields to the wires of s (made by wires); ready
// stays with whoever drives src.ready.
func (s Stream) Drive(m *ir.Module, src Stream) {
	for _, f := range [][2]ir.Value{{s.Hdr, src.Hdr}, {s.Data, src.Data}, {s.Keep, src.Keep}, {s.SOP, src.SOP}, {s.EOP, src.EOP}, {s.Valid, src.Valid}} {
		m.Assign(f[0], f[1])
	}
}

// Into drives an instance's stream inputs prefix+field from s (ready is
// the instance's output, which the caller assigns to s.ready).
func Into(in map[string]ir.Value, prefix string, s Stream) {
	in[prefix+"hdr"], in[prefix+"data"], in[prefix+"keep"] = s.Hdr, s.Data, s.Keep
	in[prefix+"sop"], in[prefix+"eop"], in[prefix+"valid"] = s.SOP, s.EOP, s.Valid
}

// Field names, as a stream's ports spell them after their prefix.
const (
	FieldHdr   = "hdr"
	FieldData  = "data"
	FieldKeep  = "keep"
	FieldSOP   = "sop"
	FieldEOP   = "eop"
	FieldValid = "valid"
)

// In declares module m's inputs for a stream arriving on prefix+field,
// in the order the fields are named (FieldHdr ... FieldValid, each
// once): a 128-bit header, dataBits of data, a keep bit per DW, start
// and end of packet, valid. Ready is the caller's (the module's output,
// named as its protocol has it).
func In(m *ir.Module, prefix string, dataBits int, order ...string) Stream {
	var s Stream
	for _, f := range order {
		switch f {
		case FieldHdr:
			s.Hdr = m.Input(prefix+f, 128)
		case FieldData:
			s.Data = m.Input(prefix+f, dataBits)
		case FieldKeep:
			s.Keep = m.Input(prefix+f, dataBits/32)
		case FieldSOP:
			s.SOP = m.Input(prefix+f, 1)
		case FieldEOP:
			s.EOP = m.Input(prefix+f, 1)
		case FieldValid:
			s.Valid = m.Input(prefix+f, 1)
		default:
			panic("tlpbus: no field " + f) // a mistake in the generator
		}
	}
	return s
}

// Out declares module m's outputs prefix+field for s's fields, in the
// order named (of FieldHdr ... FieldValid). Ready is the caller's (the
// module's input).
func Out(m *ir.Module, prefix string, s Stream, order ...string) {
	for _, f := range order {
		v := map[string]ir.Value{FieldHdr: s.Hdr, FieldData: s.Data, FieldKeep: s.Keep, FieldSOP: s.SOP, FieldEOP: s.EOP, FieldValid: s.Valid}[f]
		if v == (ir.Value{}) {
			panic("tlpbus: no field " + f) // a mistake in the generator
		}
		m.Output(prefix+f, v)
	}
}
