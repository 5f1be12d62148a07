package sim

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// partSize is how many instructions an EvalState part holds at most. A
// part costs a flag test, and a comparison for each word it makes that
// another part reads: smaller parts skip more of what did not change
// and test more. 16 ran the whole card fastest of 8, 16 and 32 (about
// a quarter of its EvalState instructions run on a cycle of full-rate
// traffic both ways).
const partSize = 16

// partitionSignals splits EvalState's instructions not sunk into the edge, and
// reading some state, into parts of at most about partSize instructions, in
// depth-first order from the last instruction back to what it reads: a
// part holds a piece of one cone of logic, and comes after every part it
// reads (each is a run of one topological order). A value read by one
// instruction only stays in its reader's part (fused operations and
// linear maps need their reader beside them, and the value then needs no
// word in S): the cut falls only after a value that is read more than
// once or outside EvalState, and early before a cone reading nothing the
// part reads (group). A part runs only when a word it reads from
// outside changed (triggers): a register's or read port's at an edge, or
// another part's when that part ran.
//
// EvalInputs is cut the same way, into parts after EvalState's, whose
// flags start at the next word (inputFlags); the inputs' words are
// compared with the values the last EvalInputs saw (In).
func (g *gen) partitionSignals() {
	s := g.s
	mask := s.activity(g.z)
	g.partOf = make([]int, len(s.prog))
	var state, inputs []int
	for k := range s.prog {
		g.partOf[k] = -1
		switch {
		case g.z.group[k] >= 0:
		case k >= s.split:
			inputs = append(inputs, k)
		case mask[k] != 0:
			state = append(state, k)
		}
	}
	g.cut(state)
	g.stateParts = len(g.parts)
	g.cut(inputs)
	base := (g.stateParts + 63) / 64 * 64
	g.flag = make([]int, len(g.parts))
	for p := range g.parts {
		g.flag[p] = p
		if p >= g.stateParts {
			g.flag[p] = base + p - g.stateParts
		}
	}
}

// inputFlags is the first flag word of EvalInputs' parts.
func (g *gen) inputFlags() int { return (g.stateParts + 63) / 64 }

// cut appends the parts of live (instructions in program order, none
// reading what another range computes) to parts.
func (g *gen) cut(live []int) {
	s := g.s
	made := map[int32]int{} // a word -> the live instruction making it
	in := map[int]bool{}
	for _, k := range live {
		in[k] = true
		for _, o := range s.dstWords(s.prog[k]) {
			made[o] = k
		}
	}
	// owner[k]: the one instruction reading live instruction k, when
	// nothing else reads its words.
	readers := map[int][]int{}
	for k := range s.prog {
		for _, o := range s.operandWords(s.prog[k]) {
			if p, ok := made[o]; ok && !slices.Contains(readers[p], k) {
				readers[p] = append(readers[p], k)
			}
		}
	}
	elsewhere := s.pinned()
	for _, r := range s.regs {
		for j := range r.nw {
			elsewhere[r.next+j] = true
		}
	}
	for _, p := range g.s.m.Ports() {
		for j := range s.nw[p.Node] {
			elsewhere[s.off[p.Node]+j] = true
		}
	}
	owner := map[int]int{}
	for _, k := range live {
		r := readers[k]
		if len(r) != 1 || !in[r[0]] {
			continue
		}
		if !slices.ContainsFunc(s.dstWords(s.prog[k]), func(o int32) bool { return elsewhere[o] }) {
			owner[k] = r[0]
		}
	}
	done := map[int]bool{}
	var order []int
	var visit, emit func(k int)
	// visit emits what the cone of k reads from outside it, then the
	// cone, so a cone is one run of order.
	visit = func(k int) {
		var outside func(c int)
		outside = func(c int) {
			for _, o := range s.operandWords(s.prog[c]) {
				p, ok := made[o]
				switch {
				case !ok || done[p]:
				case owner[p] == c && p != c:
					outside(p)
				default:
					visit(p)
				}
			}
		}
		outside(k)
		emit(k)
	}
	emit = func(k int) {
		if done[k] {
			return
		}
		for _, o := range s.operandWords(s.prog[k]) {
			if p, ok := made[o]; ok && owner[p] == k {
				emit(p)
			}
		}
		done[k] = true
		order = append(order, k)
	}
	for i := len(live) - 1; i >= 0; i-- {
		if _, owned := owner[live[i]]; !owned && !done[live[i]] {
			visit(live[i])
		}
	}
	// cones: order cut after each instruction no other owns; a cone's
	// reads: the words it reads that it does not make.
	var cones [][]int
	var cone []int
	for _, k := range order {
		cone = append(cone, k)
		if _, owned := owner[k]; !owned {
			cones = append(cones, cone)
			cone = nil
		}
	}
	g.group(cones)
}

// group appends the parts of cones (runs of a depth-first order, each
// ending at an instruction no other owns): consecutive cones, up to
// partSize instructions, cut early (after minPart) before a cone that
// reads nothing the part reads or makes, so that logic reading other
// words, which change at other times, gets a flag of its own.
func (g *gen) group(cones [][]int) {
	s := g.s
	reads := func(c []int) map[int32]bool {
		out, mine := map[int32]bool{}, map[int32]bool{}
		for _, k := range c {
			for _, o := range s.dstWords(s.prog[k]) {
				mine[o] = true
			}
		}
		for _, k := range c {
			for _, o := range s.operandWords(s.prog[k]) {
				if !mine[o] {
					out[o] = true
				}
			}
		}
		return out
	}
	var part []int
	partReads := map[int32]bool{}
	for ci, c := range cones {
		cr := reads(c)
		if len(part) >= minPart && !shares(partReads, cr, part, s) {
			g.addPart(part)
			part, partReads = nil, map[int32]bool{}
		}
		part = append(part, c...)
		for o := range cr {
			partReads[o] = true
		}
		if len(part) >= partSize || ci == len(cones)-1 {
			g.addPart(part)
			part, partReads = nil, map[int32]bool{}
		}
	}
}

// minPart: a part of this many instructions is cut before a cone that
// reads nothing it reads (nor what it makes).
const minPart = 4

// shares reports whether cone reads cr overlap part's reads or words.
func shares(partReads, cr map[int32]bool, part []int, s *Sim) bool {
	for o := range cr {
		if partReads[o] {
			return true
		}
	}
	for _, k := range part {
		for _, o := range s.dstWords(s.prog[k]) {
			if cr[o] {
				return true
			}
		}
	}
	return false
}

// addPart appends part (instructions in depth-first order) to parts.
func (g *gen) addPart(part []int) {
	slices.Sort(part) // (program order: levelised)
	for _, k := range part {
		g.partOf[k] = len(g.parts)
	}
	g.parts = append(g.parts, part)
}

// flagWords is how many words of flags the parts need (at least one).
func (g *gen) flagWords() int {
	if len(g.flag) == 0 {
		return 1
	}
	return g.flag[len(g.flag)-1]/64 + 1
}

// triggers fills watch: for each word a part reads from outside itself
// that can change (a register's, a read port's, or one another part
// makes), the flags of the parts reading it. Words nothing changes
// after New (constants, logic reading no state) trigger nothing.
func (g *gen) triggers() error {
	s := g.s
	changing := map[int32]bool{}
	for _, r := range s.regs {
		for j := range r.nw {
			changing[r.slot+j] = true
		}
	}
	for _, p := range s.reads {
		for j := range p.nw {
			changing[p.slot+j] = true
		}
	}
	for _, p := range s.m.Ports() {
		if !p.Output {
			for j := range s.nw[p.Node] {
				changing[s.off[p.Node]+j] = true
			}
		}
	}
	inS := maps.Clone(changing) // (state, inputs and wide values live in S)
	for _, list := range g.parts {
		for _, k := range list {
			for _, o := range s.dstWords(s.prog[k]) {
				changing[o] = true
				inS[o] = s.prog[k].op == opWide || g.stored[o]
			}
		}
	}
	g.watch = map[int32]map[int]uint64{}
	if !g.signal {
		return nil
	}
	for p, list := range g.parts {
		inside := map[int32]bool{}
		for _, k := range list {
			for _, o := range s.dstWords(s.prog[k]) {
				inside[o] = true
			}
		}
		for _, k := range list {
			for _, o := range g.effectiveReads(k) {
				if inside[o] || !changing[o] {
					continue
				}
				if !inS[o] {
					return fmt.Errorf("sim: GoSource: part %d reads word %d, which is not kept in S", p, o)
				}
				if g.watch[o] == nil {
					g.watch[o] = map[int]uint64{}
				}
				g.watch[o][g.flag[p]/64] |= 1 << uint(g.flag[p]%64)
			}
		}
	}
	return nil
}

// readPortRaise is the Go statement marking what read port k's new
// value q changes: its group's activity bit, or (signal) the flags of the
// parts reading a word of it that differs from the word held. A port
// reads on every cycle its enable is high, and the card's FIFOs read the
// word at their head on every cycle, the same word while the FIFO waits:
// raised without the test, on 20 µs of two-party traffic 48% of the lines
// the card's EvalState ran were in parts that changed no word, most of
// them behind its FIFOs' ports. With it, EvalState runs 20% fewer lines.
func (g *gen) readPortRaise(k int, q string) string {
	if !g.signal {
		return fmt.Sprintf("d |= %#x", g.z.readPortBit(k))
	}
	p := g.s.reads[k]
	ws := g.watched(p.slot, p.nw)
	if len(ws) == 0 {
		return ""
	}
	var diff []string
	for _, o := range ws {
		if p.nw == 1 {
			diff = append(diff, fmt.Sprintf("%s ^ v[%d]", q, o))
		} else {
			diff = append(diff, fmt.Sprintf("%s[%d] ^ v[%d]", q, o-p.slot, o))
		}
	}
	return fmt.Sprintf("if %s { %s }", anyDiffers(diff), g.raise(ws))
}

// raise is the Go statements setting the flags of the parts reading
// any of words ("" when none does), into the local flag array f.
func (g *gen) raise(words []int32) string {
	flags := map[int]uint64{}
	for _, o := range words {
		for i, m := range g.watch[o] {
			flags[i] |= m
		}
	}
	var out []string
	for _, i := range slices.Sorted(maps.Keys(flags)) {
		out = append(out, fmt.Sprintf("f[%d] |= %#x", i, flags[i]))
	}
	return strings.Join(out, "; ")
}

// watched returns the words of register or read port slot..slot+nw that
// some part reads.
func (g *gen) watched(slot, nw int32) []int32 {
	var out []int32
	for j := range nw {
		if g.watch[slot+j] != nil {
			out = append(out, slot+j)
		}
	}
	return out
}

// commitWatched prints register r taking its new value (word j from
// src(r, j)) when some part reads words ws of it: only if the value
// differs, raising the flags of their readers. (Compared as it commits,
// the old value is loaded once, where a copy taken before the block
// stayed live across it.)
func (g *gen) commitWatched(r reg, ws []int32, src func(reg, int32) string) {
	var tests, sets []string
	for j := range r.nw {
		tests = append(tests, fmt.Sprintf("v[%d] ^ %s", r.slot+j, src(r, j)))
		sets = append(sets, fmt.Sprintf("v[%d] = %s", r.slot+j, src(r, j)))
	}
	g.line("if %s {", anyDiffers(tests))
	g.line("%s", g.raise(ws))
	g.line("%s", strings.Join(sets, "\n"))
	g.line("}")
}

// anyDiffers is the Go condition that some of xors (each two words
// xor-ed) is not zero: or-ed together under one test, where a test of
// each word (a != b || ...) made a branch of each.
func anyDiffers(xors []string) string {
	if len(xors) == 1 {
		return strings.Replace(xors[0], " ^ ", " != ", 1)
	}
	return "(" + strings.Join(xors, ") | (") + ") != 0"
}

// remember prints a copy of each word's value as it is now (was<word>),
// for changed to compare with.
func (g *gen) remember(words []int32) {
	for _, o := range words {
		g.line("was%d := v[%d]", o, o)
	}
}

// changed prints, for each word remembered, the flags of its readers
// raised if it now differs; words sharing readers share a test.
func (g *gen) changed(words []int32) {
	by := map[string][]int32{}
	for _, o := range words {
		r := g.raise([]int32{o})
		by[r] = append(by[r], o)
	}
	keys := slices.SortedFunc(maps.Keys(by), func(a, b string) int { return cmp.Compare(by[a][0], by[b][0]) })
	for _, r := range keys {
		var tests []string
		for _, o := range by[r] {
			tests = append(tests, fmt.Sprintf("v[%d] ^ was%d", o, o))
		}
		g.line("if %s { %s }", anyDiffers(tests), r)
	}
}

// inputWords returns the inputs' words some part of EvalInputs reads, in
// order: EvalInputs compares each with the value it last saw (In).
func (g *gen) inputWords() []int32 {
	var out []int32
	for _, p := range g.s.m.Ports() {
		if p.Output {
			continue
		}
		for j := range g.s.nw[p.Node] {
			if o := g.s.off[p.Node] + j; g.watch[o] != nil && !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	slices.Sort(out)
	return out
}
