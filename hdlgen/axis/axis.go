// Package axis builds AXI-Stream plumbing in hdlgen/ir modules: streams
// with valid/ready backpressure, and pieces that are correct by
// construction — a transfer happens on an edge exactly when valid and
// ready are both high, nothing is lost, repeated or reordered.
package axis

import (
	"strconv"

	"onic/hdlgen/ir"
)

// Stream is one AXI-Stream link inside a module: Data (tdata with any
// sideband packed in) and Valid from the producer, and Ready, a wire the
// consumer must drive (with m.Assign) and the producer reads.
type Stream struct {
	Data, Valid, Ready ir.Value
}

// New makes a stream of data and valid whose Ready (a new wire named
// name_ready) the consumer will drive.
func New(m *ir.Module, name string, data, valid ir.Value) Stream {
	return Stream{Data: data, Valid: valid, Ready: m.Wire(name+"_ready", 1)}
}

// Input declares a stream arriving through the module's ports
// name_tdata, name_tvalid (inputs) and name_tready (an output the module
// drives through the returned Stream's Ready).
func Input(m *ir.Module, name string, w int) Stream {
	s := Stream{Data: m.Input(name+"_tdata", w), Valid: m.Input(name+"_tvalid", 1), Ready: m.Wire(name+"_ready", 1)}
	m.Output(name+"_tready", s.Ready)
	return s
}

// Output sends s out of the module through name_tdata, name_tvalid and
// name_tready (an input that drives s.Ready).
func Output(m *ir.Module, name string, s Stream) {
	m.Output(name+"_tdata", s.Data)
	m.Output(name+"_tvalid", s.Valid)
	m.Assign(s.Ready, m.Input(name+"_tready", 1))
}

// Skid is a full-throughput register slice: it registers data, valid and
// ready, so neither the forward nor the backward path of in reaches the
// output combinationally, and it still moves one word per cycle. When the
// consumer stalls, the word in flight waits in a second (skid) register.
func Skid(m *ir.Module, name string, in Stream) Stream {
	f := SkidFields(m, name, in.Valid, in.Ready, []Field{{"data", in.Data}})
	return Stream{Data: f.Fields[0], Valid: f.Valid, Ready: f.Ready}
}

// Field is one named part of a stream's word.
type Field struct {
	Name  string
	Value ir.Value
}

// Fields is a stream whose word is named fields: Valid and the fields'
// values from the producer, Ready a wire the consumer drives.
type Fields struct {
	Valid, Ready ir.Value
	Fields       []ir.Value
	Names        []string // the fields' names, in order
}

// Field returns the value of the field called name (nil if none is).
func (f Fields) Field(name string) ir.Value {
	for i, n := range f.Names {
		if n == name {
			return f.Fields[i]
		}
	}
	return ir.Value{}
}

// SkidFields is Skid for a word of named fields (valid and ready as a
// Stream's): each field keeps registers of its own, name_<field> and
// name_skid_<field>, rather than one packed word, so the Verilog and a
// waveform show each field under its name. The fields come out in the
// order given.
func SkidFields(m *ir.Module, name string, valid, ready ir.Value, fields []Field) Fields {
	outValid := m.Reg(name+"_valid", 1, 0)
	outData := make([]ir.Value, len(fields))
	for i, f := range fields {
		outData[i] = m.RegNoReset(name+"_"+f.Name, f.Value.Width()) // data: its valid bit has the reset
	}
	skidValid := m.Reg(name+"_skid_valid", 1, 0)
	skidData := make([]ir.Value, len(fields))
	for i, f := range fields {
		skidData[i] = m.RegNoReset(name+"_skid_"+f.Name, f.Value.Width())
	}
	out := Fields{Valid: outValid, Ready: m.Wire(name+"_out_ready", 1), Fields: outData}
	for _, f := range fields {
		out.Names = append(out.Names, f.Name)
	}

	// The input is ready while the skid register is empty: a register,
	// so ready does not depend on the consumer within a cycle.
	skidEmpty := m.Named(name+"_skid_empty", m.Not(skidValid))
	m.Assign(ready, skidEmpty)
	// The output registers may load when they are empty or being taken.
	load := m.Named(name+"_load", m.Or(out.Ready, m.Not(outValid)))
	pending := m.Named(name+"_pending", m.Or(skidValid, valid)) // a word waits or arrives
	m.SetNext(outValid, m.Mux(load, pending, outValid))
	for i, f := range fields {
		m.SetNext(outData[i], m.Mux(skidValid, skidData[i], f.Value))
		m.SetEnable(outData[i], load)
	}
	// A word accepted while the output is stalled goes to the skid
	// registers; they empty whenever the output loads.
	m.SetNext(skidValid, m.Mux(load, m.Const(1, 0), pending))
	// (A single field's word keeps Skid's names; several share the
	// enable, named.)
	park := m.And(m.Not(load), m.And(valid, skidEmpty))
	if len(fields) > 1 {
		park = m.Named(name+"_park", park)
	}
	for i, f := range fields {
		m.SetNext(skidData[i], f.Value)
		m.SetEnable(skidData[i], park)
	}
	return out
}

// FIFO buffers up to depth words (a power of two, at least 2) in a block
// RAM, first-word-fall-through: the oldest word is on the output while
// valid. The RAM is read one edge ahead, at the head the next edge leaves;
// a word written into that very slot on the same edge (the FIFO was empty
// or about to be) comes from a bypass register instead, since a RAM read
// sees the slot's old contents.
func FIFO(m *ir.Module, name string, in Stream, depth int) Stream {
	w := in.Data.Width()
	ab := ir.AddrBits(depth)
	rptr := m.Reg(name+"_rptr", ab+1, 0) // one more bit than the address: full vs empty
	wptr := m.Reg(name+"_wptr", ab+1, 0)
	mem := m.Memory(name+"_mem", depth, w)
	bypass := m.Reg(name+"_bypass", 1, 0)
	bypassData := m.RegNoReset(name+"_bypass_data", w)

	empty := m.Named(name+"_empty", m.Eq(rptr, wptr))
	full := m.Named(name+"_full", m.And(m.Ne(m.Slice(rptr, ab, 1), m.Slice(wptr, ab, 1)), m.Eq(m.Slice(rptr, 0, ab), m.Slice(wptr, 0, ab))))
	notFull := m.Named(name+"_not_full", m.Not(full))
	out := Stream{Valid: m.Named(name+"_not_empty", m.Not(empty)), Ready: m.Wire(name+"_out_ready", 1)}
	m.Assign(in.Ready, notFull)

	push := m.Named(name+"_push", m.And(in.Valid, notFull))
	pop := m.Named(name+"_pop", m.And(out.Valid, out.Ready))
	// The read pointer's successor is a register of its own, so a pop
	// only chooses between two registers (no adder after the consumer's
	// ready), and the bypass test compares both with the write pointer
	// beforehand.
	rptr1 := m.Reg(name+"_rptr_inc", ab+1, 1)
	rnext := m.Named(name+"_rptr_next", m.Mux(pop, rptr1, rptr))
	m.SetNext(rptr, rnext)
	m.SetNext(rptr1, m.Mux(pop, m.Add(rptr1, m.Const(ab+1, 1)), rptr1))
	m.SetNext(wptr, m.Add(wptr, m.Zext(push, ab+1)))
	m.WritePort(mem, m.Slice(wptr, 0, ab), in.Data, push, ir.Value{})
	head := m.Named(name+"_head", m.ReadPort(mem, m.Slice(rnext, 0, ab), m.Const(1, 1)))
	m.SetNext(bypass, m.And(push, m.Mux(pop, m.Eq(wptr, rptr1), m.Eq(wptr, rptr))))
	m.SetNext(bypassData, in.Data)
	out.Data = m.Named(name+"_out_data", m.Mux(bypass, bypassData, head))
	return out
}

// Demux routes each word of in to outs[sel], where sel (as many bits as
// it takes to number n outputs) travels with the word and must be stable
// while in.Valid is high. It adds no register: a word moves when the
// chosen output is ready.
func Demux(m *ir.Module, name string, in Stream, sel ir.Value, n int) []Stream {
	outs := make([]Stream, n)
	ready := m.Const(1, 0)
	for k := range outs {
		hit := m.Named(name+"_to"+strconv.Itoa(k), m.Eq(sel, m.Const(sel.Width(), uint64(k))))
		outs[k] = Stream{Data: in.Data, Valid: m.And(in.Valid, hit), Ready: m.Wire(name+"_ready"+strconv.Itoa(k), 1)}
		ready = m.Or(ready, m.And(hit, outs[k].Ready))
	}
	m.Assign(in.Ready, ready)
	return outs
}

// roundRobin is, per input, whether it is the first with a word counting
// from the one after last; isLast[k] says last is k. Its values are named
// after the merge (name_rr<k>, name_in<k>_idle).
func roundRobin(m *ir.Module, name string, isLast []ir.Value, ins []Stream) []ir.Value {
	n := len(ins)
	idle := make([]ir.Value, n)
	for k := range ins {
		idle[k] = m.Named(name+"_in"+strconv.Itoa(k)+"_idle", m.Not(ins[k].Valid))
	}
	grant := make([]ir.Value, n)
	for k := range ins {
		g := m.Const(1, 0)
		for start := range n { // when last == start, the order is start+1, start+2, ...
			// k wins if it is valid and no input between start+1 and k is.
			win := ins[k].Valid
			for j := 1; j < n; j++ {
				idx := (start + j) % n
				if idx == k {
					break
				}
				win = m.And(win, idle[idx])
			}
			g = m.Or(g, m.And(isLast[start], win))
		}
		grant[k] = m.Named(name+"_rr"+strconv.Itoa(k), g)
	}
	return grant
}

// lastIs is, per input k, whether last (the input a merge served last)
// is k: name_last_is<k>.
func lastIs(m *ir.Module, name string, last ir.Value, n int) []ir.Value {
	is := make([]ir.Value, n)
	for k := range is {
		is[k] = m.Named(name+"_last_is"+strconv.Itoa(k), m.Eq(last, m.Const(last.Width(), uint64(k))))
	}
	return is
}

// choose is the merge's output word and valid for grants: the granted
// input's word (name_data) and whether any is granted (name_valid).
func choose(m *ir.Module, name string, ins []Stream, grant []ir.Value) (data, valid ir.Value) {
	data, valid = ins[0].Data, m.Const(1, 0)
	for k := range ins {
		valid = m.Or(valid, grant[k])
		if k > 0 {
			data = m.Mux(grant[k], ins[k].Data, data)
		}
	}
	return m.Named(name+"_data", data), m.Named(name+"_valid", valid)
}

// Mux merges ins into one stream, word by word, round robin: the input
// after the last one served that has a word goes next, so no input
// starves. The grant is combinational over a registered pointer. A word
// offered and not taken keeps the grant until it is (AXI4-Stream: a
// valid word stays, unchanged, until ready), even if an input the round
// robin prefers has a word by then.
func Mux(m *ir.Module, name string, ins []Stream) Stream {
	n := len(ins)
	pb := max(ir.AddrBits(max(n, 2)), 1)
	last := m.Reg(name+"_last", pb, uint64(n-1)) // the input served last, or offered and waiting
	held := m.Reg(name+"_held", 1, 0)            // input last offered a word that was not taken
	isLast := lastIs(m, name, last, n)
	rr := roundRobin(m, name, isLast, ins)
	grant := make([]ir.Value, n)
	for k := range ins {
		grant[k] = m.Named(name+"_grant"+strconv.Itoa(k), m.Mux(held, m.And(isLast[k], ins[k].Valid), rr[k]))
	}
	data, valid := choose(m, name, ins, grant)
	out := Stream{Data: data, Valid: valid, Ready: m.Wire(name+"_out_ready", 1)}
	next := last
	for k := range ins {
		m.Assign(ins[k].Ready, m.And(out.Ready, grant[k]))
		next = m.Mux(grant[k], m.Const(pb, uint64(k)), next)
	}
	m.SetNext(last, next)
	m.SetNext(held, m.And(valid, m.Not(out.Ready)))
	return out
}

// Packet streams. A packet stream's Data carries the end-of-packet flag
// (tlast) in its top bit above the payload: {last, word} for a narrow
// stream, and {last, keep, words} for a wide one, where keep has a bit per
// narrow word (the words in use, always from word 0 up) and word 0 is the
// least significant.

// Upsize packs n words of a narrow packet stream ({last, word}) into one
// wide word ({last, keep, n words}), first word lowest. A packet's last
// wide word carries fewer words when the packet ends early, so packets
// stay packets. The output is registered; the stream moves a narrow word
// per cycle while the consumer keeps up.
func Upsize(m *ir.Module, name string, in Stream, n int) Stream {
	w := in.Data.Width() - 1
	ib := max(ir.AddrBits(n), 1)
	word, last := m.Slice(in.Data, 0, w), m.Slice(in.Data, w, 1)
	idx := m.Reg(name+"_idx", ib, 0)
	acc := make([]ir.Value, n-1)
	for k := range acc {
		acc[k] = m.Reg(name+"_word"+strconv.Itoa(k), w, 0)
	}
	outValid := m.Reg(name+"_valid", 1, 0)
	outData := m.Reg(name+"_data", 1+n+n*w, 0)
	out := Stream{Data: outData, Valid: outValid, Ready: m.Wire(name+"_out_ready", 1)}

	// A word completes a wide word when it fills the last slot or ends the
	// packet; it then needs the output register free.
	completes := m.Or(m.Eq(idx, m.Const(ib, uint64(n-1))), last)
	free := m.Or(m.Not(outValid), out.Ready)
	m.Assign(in.Ready, m.Or(m.Not(completes), free))
	take := m.And(in.Valid, in.Ready)
	load := m.And(take, completes)
	for k := range acc {
		m.SetNext(acc[k], word)
		m.SetEnable(acc[k], m.And(take, m.Eq(idx, m.Const(ib, uint64(k)))))
	}
	m.SetNext(idx, m.Mux(completes, m.Const(ib, 0), m.Add(idx, m.Const(ib, 1))))
	m.SetEnable(idx, take)
	// Slot k of the wide word: an earlier word, this one, or nothing.
	var parts []ir.Value
	var keep []ir.Value
	for k := n - 1; k >= 0; k-- {
		here := m.Eq(idx, m.Const(ib, uint64(k)))
		slot := m.Mux(here, word, m.Const(w, 0))
		before := m.Const(1, 0) // the last slot has no earlier word
		if k < n-1 {
			before = m.LtU(m.Const(ib, uint64(k)), idx)
			slot = m.Mux(before, acc[k], slot)
		}
		parts = append(parts, slot)
		keep = append(keep, m.Or(here, before))
	}
	m.SetNext(outData, m.Concat(append([]ir.Value{last}, append(keep, parts...)...)...))
	m.SetEnable(outData, load)
	m.SetNext(outValid, m.Or(load, m.And(outValid, m.Not(out.Ready))))
	return out
}

// Downsize splits each wide word of a packet stream ({last, keep, n
// words}) into its kept narrow words ({last, word}), word 0 first; last
// is set on the final kept word of a wide word that ends a packet. A wide
// word with no word kept is dropped. The input is taken as its last word
// leaves, so a stream of full wide words moves a narrow word per cycle.
func Downsize(m *ir.Module, name string, in Stream, n int) Stream {
	w := (in.Data.Width() - 1 - n) / n
	ib := max(ir.AddrBits(n), 1)
	hold := m.Reg(name+"_hold", in.Data.Width(), 0)
	holdValid := m.Reg(name+"_hold_valid", 1, 0)
	idx := m.Reg(name+"_idx", ib, 0)
	keep := m.Slice(hold, n*w, n)
	last := m.Slice(hold, n*w+n, 1)
	// The final kept word: the highest keep bit.
	final := m.Const(ib, 0)
	for k := 1; k < n; k++ {
		final = m.Mux(m.Slice(keep, k, 1), m.Const(ib, uint64(k)), final)
	}
	var words []ir.Value
	for k := range n {
		words = append(words, m.Slice(hold, k*w, w))
	}
	word := words[0]
	for k := 1; k < n; k++ {
		word = m.Mux(m.Eq(idx, m.Const(ib, uint64(k))), words[k], word)
	}
	atFinal := m.Eq(idx, final)
	empty := m.Not(m.RedOr(keep))
	out := Stream{Data: m.Concat(m.And(last, atFinal), word), Valid: m.And(holdValid, m.Not(empty)),
		Ready: m.Wire(name+"_out_ready", 1)}
	// Done with the held word: its final word leaves, or it keeps nothing.
	done := m.Or(m.And(out.Valid, m.And(out.Ready, atFinal)), m.And(holdValid, empty))
	m.Assign(in.Ready, m.Or(m.Not(holdValid), done))
	take := m.And(in.Valid, in.Ready)
	m.SetNext(hold, in.Data)
	m.SetEnable(hold, take)
	m.SetNext(holdValid, m.Or(take, m.And(holdValid, m.Not(done))))
	step := m.And(out.Valid, out.Ready)
	m.SetNext(idx, m.Mux(m.Or(take, done), m.Const(ib, 0), m.Add(idx, m.Const(ib, 1))))
	m.SetEnable(idx, m.Or(step, take))
	return out
}

// PacketMux merges packet streams ({last, word}, see Upsize) into one,
// packet by packet: the input after the last one served that has a word
// starts a packet, and keeps the output until its word with last has
// gone, so packets never interleave. Like Mux, no input starves. The
// grant is taken when a packet's first word is offered, not when it is
// taken: a consumer may look at an offered word and take it cycles later
// (AXI4-Stream: a valid word stays, unchanged, until ready), and it is
// still the same word however the other inputs' valids change meanwhile.
func PacketMux(m *ir.Module, name string, ins []Stream) Stream {
	n := len(ins)
	pb := max(ir.AddrBits(max(n, 2)), 1)
	last := m.Reg(name+"_last", pb, uint64(n-1)) // the input served last (or serving)
	busy := m.Reg(name+"_busy", 1, 0)            // inside a packet of input last, or its first word offered
	isLast := lastIs(m, name, last, n)
	rr := roundRobin(m, name, isLast, ins)
	grant := make([]ir.Value, n)
	for k := range ins {
		grant[k] = m.Named(name+"_grant"+strconv.Itoa(k), m.Mux(busy, m.And(isLast[k], ins[k].Valid), rr[k]))
	}
	data, valid := choose(m, name, ins, grant)
	out := Stream{Data: data, Valid: valid, Ready: m.Wire(name+"_out_ready", 1)}
	next := last
	for k := range ins {
		m.Assign(ins[k].Ready, m.And(out.Ready, grant[k]))
		next = m.Mux(grant[k], m.Const(pb, uint64(k)), next)
	}
	moved := m.And(valid, out.Ready)
	end := m.Slice(data, data.Width()-1, 1)
	m.SetNext(last, next)
	m.SetNext(busy, m.Mux(moved, m.Not(end), m.Or(busy, valid)))
	return out
}

// SkidModule is Skid as a module of its own for w-bit words, to be used
// through Instance: stream ports s (in) and m (out). Its name carries the
// width (onic_axis_skid_<w>); it is a member of the family onic_axis_skid
// with parameter WIDTH, so the Verilog emitter prints one parameterised
// module for all widths.
func SkidModule(w int) *ir.Module {
	m := ir.NewModule("onic_axis_skid_" + strconv.Itoa(w))
	m.Describe("s_", "The stream in: a word of WIDTH bits while s_tvalid, taken while s_tready (a register: the slice's skid register is empty).")
	m.Describe("m_", "The same words out, a cycle later, from registers: m_tdata and m_tvalid; the word waits while m_tready is low, and a second one in the skid register.")
	Output(m, "m", Skid(m, "slice", Input(m, "s", w)))
	m.SetFamily(ir.Family{Name: "onic_axis_skid", Param: "WIDTH", Value: w, Build: SkidModule})
	return m
}

// Instance places sub, a module with an input stream s and an output
// stream m (SkidModule), in m as instance name: in feeds s, and the
// returned stream is what comes out of m (drive its Ready).
func Instance(m *ir.Module, name string, sub *ir.Module, in Stream) Stream {
	ready := m.Wire(name+"_m_ready", 1)
	out := m.Instance(name, sub, map[string]ir.Value{"s_tdata": in.Data, "s_tvalid": in.Valid, "m_tready": ready})
	m.Assign(in.Ready, out["s_tready"])
	return Stream{Data: out["m_tdata"], Valid: out["m_tvalid"], Ready: ready}
}
