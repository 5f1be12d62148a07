package sim

import "onic/hdlgen/ir"

// Sinking next-state logic into the edge. Logic that only computes
// registers' next values is printed by GoSource inside the edge, under
// those registers' enable, instead of in Eval: a pipeline stage's logic
// then runs once per cycle the stage advances and not at all while it
// stalls or is reset, and its intermediate values stay in Go variables.
// Verilator does the same with the logic of an always block.

// regKey is what registers that share one condition at the edge have in
// common: the enable's word (-1: none) and how reset reaches them.
type regKey struct {
	en             int32
	async, noReset bool
}

func (r reg) key() regKey { return regKey{r.en, r.async, r.noReset} }

// sinking says where GoSource prints each instruction and commits each
// register.
type sinking struct {
	// group[k] is the register group whose edge block computes
	// instruction k of prog, -1 when Eval does.
	group []int
	// unit of each register: a group's unit, or its own.
	unit []int
	// units: the registers each commit unit holds, and what it reads.
	units    [][]int
	unitRead [][]int
	gid      []int // the group whose logic unit u's block computes, -1 for a single register
	// regGroup is each register's group; groups counts them.
	regGroup []int
	groups   int
}

// operandWords returns the words instruction in reads.
func (s *Sim) operandWords(in inst) []int32 {
	var out []int32
	switch in.op {
	case opWide:
		for _, a := range s.m.Node(int(in.node)).Args {
			for j := range s.nw[a] {
				out = append(out, s.off[a]+j)
			}
		}
	case opSliceW:
		out = append(out, in.a)
		if in.c != 0 {
			out = append(out, in.a+1)
		}
	case ir.OpConcat:
		for j := int32(0); j < in.c; j++ {
			out = append(out, s.parts[in.b+2*j])
		}
	default:
		for _, o := range []int32{in.a, in.b, in.c} {
			if o >= 0 {
				out = append(out, o)
			}
		}
	}
	return out
}

// dstWords returns the words instruction in writes.
func (s *Sim) dstWords(in inst) []int32 {
	if in.op == opWide {
		n := int32(in.node)
		out := make([]int32, s.nw[n])
		for j := range out {
			out[j] = s.off[n] + int32(j)
		}
		return out
	}
	return []int32{in.dst}
}

// pinned returns the words read other than by instructions and
// registers' next values: enables, memory ports and ports.
func (s *Sim) pinned() map[int32]bool {
	pinned := map[int32]bool{}
	for _, r := range s.regs {
		if r.en >= 0 {
			pinned[r.en] = true
		}
	}
	for _, p := range s.reads {
		pinned[p.addr], pinned[p.en] = true, true
	}
	for _, p := range s.writes {
		for j := range p.nw {
			pinned[p.data+j] = true
		}
		pinned[p.addr], pinned[p.en] = true, true
		if p.be >= 0 {
			for j := range (p.bytes + 63) / 64 {
				pinned[p.be+j] = true
			}
		}
	}
	for _, p := range s.m.Ports() {
		for j := range s.nw[p.Node] {
			pinned[s.off[p.Node]+j] = true
		}
	}
	return pinned
}

// sink works out which instructions only feed the next values of
// registers of one group (same enable and reset), so that they can be
// computed in that group's block of the edge, and in what order the
// edge's units (sunk groups, and single registers) commit.
//
// An instruction sinks into group g when everything reading its words is
// an instruction sunk into g or the next value of a register of g (not a
// port, an enable, a memory port or another group). A group keeps its
// logic only if its unit can commit in place: no loop of reads runs
// through it and other units (a group's block reads, before committing,
// what its logic and its registers' next values and enable read). Groups
// on such a loop fall back to Eval, one register a unit, and the
// remaining loops are staged as before.
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func (s *Sim) sink() *sinking {
	ids := map[regKey]int{}
	var keys []regKey
	regGroup := make([]int, len(s.regs))
	for k, r := range s.regs {
		id, ok := ids[r.key()]
		if !ok {
			id = len(keys)
			ids[r.key()] = id
			keys = append(keys, r.key())
		}
		regGroup[k] = id
	}
	owner := map[int32]int{} // a register's word -> the register
	for k, r := range s.regs {
		for j := range r.nw {
			owner[r.slot+j] = k
		}
	}
	// Who reads each word: instructions (>= 0) and registers' next
	// values (-1-register); pinned words are read elsewhere too.
	readers := map[int32][]int{}
	pinned := s.pinned()
	for k, in := range s.prog {
		for _, o := range s.operandWords(in) {
			readers[o] = append(readers[o], k)
		}
	}
	for k, r := range s.regs {
		for j := range r.nw {
			readers[r.next+j] = append(readers[r.next+j], -1-k)
		}
	}
	group := make([]int, len(s.prog))
	for k := len(s.prog) - 1; k >= 0; k-- {
		g := -2
		for _, o := range s.dstWords(s.prog[k]) {
			if pinned[o] {
				g = -1
				break
			}
			for _, c := range readers[o] {
				cg := -1
				if c >= 0 {
					cg = group[c]
				} else {
					cg = regGroup[-1-c]
				}
				if g == -2 {
					g = cg
				} else if g != cg {
					g = -1
				}
			}
			if g == -1 {
				break
			}
		}
		group[k] = max(g, -1)
	}
	sunkGroup := make([]bool, len(keys))
	for _, g := range group {
		if g >= 0 {
			sunkGroup[g] = true
		}
	}
	z := &sinking{group: group, unit: make([]int, len(s.regs)), regGroup: regGroup, groups: len(keys)}
	for {
		// Units: each group with sunk logic, each other register alone.
		z.units, z.gid = nil, nil
		unitOfGroup := make([]int, len(keys))
		for g := range keys {
			unitOfGroup[g] = -1
			if sunkGroup[g] {
				unitOfGroup[g] = len(z.units)
				z.units = append(z.units, nil)
				z.gid = append(z.gid, g)
			}
		}
		for k := range s.regs {
			u := unitOfGroup[regGroup[k]]
			if u < 0 {
				u = len(z.units)
				z.units = append(z.units, nil)
				z.gid = append(z.gid, -1)
			}
			z.unit[k] = u
			z.units[u] = append(z.units[u], k)
		}
		z.unitRead = make([][]int, len(z.units))
		seen := make([]map[int]bool, len(z.units))
		read := func(u int, o int32) {
			r, ok := owner[o]
			if !ok || z.unit[r] == u {
				return
			}
			if seen[u] == nil {
				seen[u] = map[int]bool{}
			}
			if q := z.unit[r]; !seen[u][q] {
				seen[u][q] = true
				z.unitRead[u] = append(z.unitRead[u], q)
			}
		}
		for k, r := range s.regs {
			for j := range r.nw {
				read(z.unit[k], r.next+j)
			}
			if r.en >= 0 {
				read(z.unit[k], r.en)
			}
		}
		for k, in := range s.prog {
			if g := group[k]; g >= 0 && sunkGroup[g] {
				for _, o := range s.operandWords(in) {
					read(unitOfGroup[g], o)
				}
			}
		}
		changed := false
		for u, on := range loops(z.unitRead) {
			if on && z.gid[u] >= 0 {
				sunkGroup[z.gid[u]] = false
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	for k := range group {
		if group[k] >= 0 && !sunkGroup[group[k]] {
			group[k] = -1
		}
	}
	return z
}

// Activity. The edge notes in a mask which groups of state changed
// (might have: a register group whose reset or enable was on, a read port
// that read), and EvalState evaluates only the logic reading those. Its
// instructions are split by the set of groups they depend on (their
// activity mask), each set evaluated under one test of the mask: a
// 512-bit data path whose registers held costs nothing. Register groups
// take bits 0, 1, ..., read ports the bits after; past 64 the bits are
// shared (bit id%64), which only evaluates more.

// activityBit is the mask bit of group (or read port) id.
func activityBit(id int) uint64 { return 1 << uint(id%64) }

// readPortBit is the mask bit of read port p.
func (z *sinking) readPortBit(p int) uint64 { return activityBit(z.groups + p) }

// activity returns each EvalState instruction's mask (prog[:split]): the
// bits of the state it reads, directly or through other instructions.
// Logic that reads no state (mask 0) never changes after New.
func (s *Sim) activity(z *sinking) []uint64 {
	state := map[int32]uint64{}
	for k, r := range s.regs {
		for j := range r.nw {
			state[r.slot+j] = activityBit(z.regGroup[k])
		}
	}
	for p, rp := range s.reads {
		for j := range rp.nw {
			state[rp.slot+j] = z.readPortBit(p)
		}
	}
	mask := make([]uint64, s.split)
	for k := range s.split {
		var m uint64
		for _, o := range s.operandWords(s.prog[k]) {
			m |= state[o]
		}
		mask[k] = m
		for _, o := range s.dstWords(s.prog[k]) {
			state[o] = m
		}
	}
	return mask
}
