package sim

import "onic/hdlgen/ir"

// hotLayoutWords is the size from which New lays a program out twice,
// the second time with the words its generated code reads and writes
// first (hot). The whole card's 19,500 words are 156 KB, three times
// the first-level data cache; the code touches 6,700 of them, which
// node order spread over 1,450 of its cache lines.
var hotLayoutWords = 4096

// hot marks the nodes whose words GoSource's code keeps in S: inputs,
// registers and read ports, wide constants, the live operations on wide
// values, and the live one-word values something outside their own part
// reads (gen.analyse's stored). Dead logic, one-word constants
// (printed as literals) and the values the code keeps in Go variables
// are not.
func (s *Sim) hot() []bool {
	m := s.m
	g := &gen{s: s, z: s.sink(), into: map[int32]int32{}, pin: s.pinned()}
	g.signal = g.z.groups+len(s.reads) > signalGroups
	if g.signal {
		g.partitionSignals()
	} else {
		g.partition()
	}
	g.analyse()
	hot := make([]bool, m.Len())
	for i := range m.Len() {
		switch n := m.Node(i); n.Op {
		case ir.OpInput, ir.OpReg, ir.OpMemRead:
			hot[i] = true
		case ir.OpConst:
			hot[i] = s.nw[i] > 1
		}
	}
	for _, in := range s.prog {
		// (an operation on wide values writes its words, even a one-word
		// result: a comparison, a reduction)
		_, fused := g.fusedWord[in.dst]
		hot[in.node] = in.op == opWide && !fused || g.stored[in.dst]
	}
	return hot
}
