package sim

import (
	"slices"

	"onic/hdlgen/ir"
)

// Delay lines laid out as layers. A pipeline carries values it does not
// change through several stages: quantize-mxint8 passes each of its 32
// lanes' sign, exponent and significand from stage 1 to stage 3 beside
// the tree finding the block's exponent. Each such register loads
// another register's words whole, under the same enable and reset: a
// chain of copies. Laid out one node after another, a stage of such
// copies is a word move per field and lane, 285 of them a cycle in
// quantize-mxint8, each a load and a store of seven bytes of code. New
// lays the chains of registers sharing a condition out by depth instead:
// every chain's first register in one run of words, every second
// register in the next run, in the same order, and so on. A stage of the
// delay line is then one array copy (copyLayer), which GoSource prints as
// one assignment: the compiler moves it 16 bytes at a time, or above a
// kilobyte calls memmove, in a few bytes of code either way.

// copyLayer is one depth of the delay lines of a condition: registers
// (indices into Sim.regs, in word order) whose words v[dst:dst+n] each
// load the words of the register before them in their chain, which lie
// in the same order at v[src:src+n].
type copyLayer struct {
	dst, src, n int32
	regs        []int
}

// chainKey is what registers on one delay line share: the enable (its
// representative node, -1 for none) and how reset reaches them. It is
// regKey in terms of nodes.
type chainKey struct {
	en             int32
	async, noReset bool
}

// layout returns the order in which New gives the nodes that hold their
// own words (rep[i] == i) their words: the inputs in port order, then
// node order, except that the registers of each condition's delay lines
// of two or more registers are placed together where the first of them
// is, by depth (layers: each depth's nodes in word order, from the second
// depth on; the first depth is the chains' heads). Chains are ordered
// longest first, so that the chains reaching each depth are a prefix of
// those reaching the one before, and the layer is one run of words
// copied from the start of the run before it.
func layout(m *ir.Module, rep, from []int32, words func(int) int32) (order []int, layers [][]int) {
	keyOf := func(i int) chainKey {
		n := m.Node(i)
		k := chainKey{en: -1, async: n.Async, noReset: n.NoReset}
		if len(n.Args) > 1 && n.Args[1] >= 0 {
			k.en = rep[n.Args[1]]
		}
		return k
	}
	// pred[i]: the register whose words register i loads whole, under
	// the same condition (-1: none); succ[j] the lowest such i.
	pred, succ := make([]int, m.Len()), make([]int, m.Len())
	for i := range pred {
		pred[i], succ[i] = -1, -1
	}
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		if n.Op != ir.OpReg || rep[i] != int32(i) {
			continue
		}
		a := n.Args[0]
		j := int(rep[a])
		if j == i || from[a] != 0 || m.Node(j).Op != ir.OpReg || words(j) != words(i) || keyOf(j) != keyOf(i) {
			continue
		}
		pred[i] = j
		if succ[j] < 0 {
			succ[j] = i
		}
	}
	// Chains from their heads (a register no chain enters); a register
	// loading one that another loads too starts a chain of its own. A
	// ring of copies has no head and is left out.
	chains := map[chainKey][][]int{}
	family := map[int]chainKey{} // a node on a chain of two or more -> its condition
	for i := 0; i < m.Len(); i++ {
		if m.Node(i).Op != ir.OpReg || rep[i] != int32(i) || (pred[i] >= 0 && succ[pred[i]] == i) || succ[i] < 0 {
			continue
		}
		c := []int{i}
		for j := succ[i]; j >= 0; j = succ[j] {
			c = append(c, j)
		}
		k := keyOf(i)
		chains[k] = append(chains[k], c)
		for _, j := range c {
			family[j] = k
		}
	}
	// The inputs come first, in port order: a testbench driving them all
	// from one vector (Frame) then fills one run of words.
	input := map[int]bool{}
	for _, p := range m.Ports() {
		if !p.Output && rep[p.Node] == int32(p.Node) && !input[p.Node] {
			input[p.Node] = true
			order = append(order, p.Node)
		}
	}
	placed := map[chainKey]bool{}
	for i := 0; i < m.Len(); i++ {
		if rep[i] != int32(i) || input[i] {
			continue
		}
		k, ok := family[i]
		if !ok {
			order = append(order, i)
			continue
		}
		if placed[k] {
			continue
		}
		placed[k] = true
		cs := chains[k]
		slices.SortStableFunc(cs, func(a, b []int) int { return len(b) - len(a) })
		for d := 0; d < len(cs[0]); d++ {
			var layer []int
			for _, c := range cs {
				if d < len(c) {
					layer = append(layer, c[d])
				}
			}
			order = append(order, layer...)
			if d > 0 {
				layers = append(layers, layer)
			}
		}
	}
	return order, layers
}

// copyLayers turns layout's layers (nodes) into copyLayers over the
// registers, once the words and registers are known. A layer that is
// not one run copied from one run (which layout rules out) is left out:
// its registers are copied one by one.
func (s *Sim) copyLayers(layers [][]int, regOf map[int]int) []copyLayer {
	var out []copyLayer
	for _, layer := range layers {
		l := copyLayer{dst: s.off[layer[0]], src: s.regs[regOf[layer[0]]].next}
		ok := true
		for _, i := range layer {
			r := s.regs[regOf[i]]
			ok = ok && r.slot == l.dst+l.n && r.next == l.src+l.n
			l.n += r.nw
			l.regs = append(l.regs, regOf[i])
		}
		if ok && (l.dst >= l.src+l.n || l.src >= l.dst+l.n) {
			out = append(out, l)
		}
	}
	return out
}

// blockLayers returns the copy layers wholly in a commit block: for each
// register of block the layer it commits with (an index into members, -1:
// none), and each layer's registers (places in block, in word order).
func (g *gen) blockLayers(block []int) (layerOf []int, members [][]int) {
	place := map[int]int{}
	for i, k := range block {
		place[k] = i
	}
	layerOf = make([]int, len(block))
	for i := range layerOf {
		layerOf[i] = -1
	}
	for _, l := range g.s.layers {
		var ms []int
		for _, k := range l.regs {
			i, ok := place[k]
			if !ok {
				ms = nil
				break
			}
			ms = append(ms, i)
		}
		for _, i := range ms {
			layerOf[i] = len(members)
		}
		if ms != nil {
			members = append(members, ms)
		}
	}
	return layerOf, members
}

// unlayer undoes the layers that cannot commit as one (their registers
// then commit one by one): those with a register on a loop of reads
// (temp), or whose registers load one another, or on a loop once each
// layer is taken as one register (reads[i]: the registers whose words
// register i loads). A register commits after those loading its words,
// so a layer waits for every register loading any of its words: a line
// branching off a stage, whose second register lies in that stage, makes
// it wait for itself.
func unlayer(layerOf []int, members [][]int, reads [][]int, temp []bool) {
	drop := func(l int) {
		for _, p := range members[l] {
			layerOf[p] = -1
		}
	}
layers:
	for l, ms := range members {
		for _, p := range ms {
			if temp[p] || slices.ContainsFunc(reads[p], func(q int) bool { return layerOf[q] == l }) {
				drop(l)
				continue layers
			}
		}
	}
	for {
		// Each layer's first register stands for it.
		head := make([]int, len(reads))
		for i := range head {
			head[i] = i
			if l := layerOf[i]; l >= 0 {
				head[i] = members[l][0]
			}
		}
		condensed := make([][]int, len(reads))
		for i, rs := range reads {
			if temp[i] {
				continue
			}
			for _, q := range rs {
				if !temp[q] && head[q] != head[i] {
					condensed[head[i]] = append(condensed[head[i]], head[q])
				}
			}
		}
		changed := false
		for i, on := range loops(condensed) {
			if l := layerOf[i]; on && l >= 0 {
				drop(l)
				changed = true
			}
		}
		if !changed {
			return
		}
	}
}

// layerUnit is what commits with register i of a block: its layer's
// registers (blockLayers), or i alone.
func layerUnit(i int, layerOf []int, members [][]int) []int {
	if l := layerOf[i]; l >= 0 {
		return members[l]
	}
	return []int{i}
}
