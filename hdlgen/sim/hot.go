package sim

import "onic/hdlgen/ir"

// hotLayoutWords is the size from which New lays a program out twice,
// the second time with the words its generated code reads and writes
// first (hot). The whole card's 19,500 words are 156 KB, three times
// the first-level data cache; the code touches 6,700 of them, which
// node order spread over 1,450 of its cache lines.
var hotLayoutWords = 4096

// hot marks the nodes whose words GoSource's code keeps in S: inputs,
// registers and read ports, the live operations on wide values, the
// live one-word values something outside their own part reads
// (gen.analyse's stored), and the wide constants they read; not the
// operations printed inside their readers (fused), nor what only they
// read. Dead logic, one-word constants
// (printed as literals) and the values the code keeps in Go variables
// are not.
func (s *Sim) hot() []bool {
	m := s.m
	g := s.prepare("")
	hot := make([]bool, m.Len())
	wideConst := map[int32]int{} // a wide constant's word -> its node
	for i := range m.Len() {
		switch n := m.Node(i); n.Op {
		case ir.OpInput, ir.OpReg, ir.OpMemRead:
			hot[i] = true
		case ir.OpConst:
			for j := range s.nw[i] {
				if s.nw[i] > 1 {
					wideConst[s.off[i]+j] = i
				}
			}
		}
	}
	for _, in := range s.prog {
		// (an operation on wide values writes its words, even a one-word
		// result: a comparison, a reduction; one printed inside its
		// reader writes none, and reads its constants as literals)
		if _, fused := g.fusedWord[in.dst]; fused {
			continue
		}
		hot[in.node] = in.op == opWide || g.stored[in.dst]
		for _, o := range s.operandWords(in) {
			if c, ok := wideConst[o]; ok {
				hot[c] = true
			}
		}
	}
	return hot
}
