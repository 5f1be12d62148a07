package sim

import (
	"fmt"
	"strings"

	"onic/hdlgen/ir"
)

// A wide concatenation of many computed parts (a kernel's 32 lanes
// packed into its output beat) read every part at once: the parts were
// computed, then waited in Go variables, spilled to the stack, until the
// concatenation's words were printed. GoSource prints each word of such
// a concatenation as soon as the last part it holds is computed
// (planConcats), so at most a word's parts wait.

// earlyWord is word j of the wide concatenation that node i computes.
type earlyWord struct {
	i int
	j int32
}

// planConcats plans, for instructions printed in order (indices into
// prog), which words of wide concatenations to print right after which
// instruction: a word whose parts are computed in order, after the last
// of them.
func (g *gen) planConcats(order []int) {
	s, m := g.s, g.s.m
	g.early, g.earlyDone = map[int32][]earlyWord{}, map[int32]bool{}
	pos := map[int32]int{} // a word -> where in order it is computed
	for p, k := range order {
		for _, o := range s.dstWords(s.prog[k]) {
			pos[o] = p
		}
	}
	for p, k := range order {
		in := s.prog[k]
		if in.op != opWide {
			continue
		}
		n := m.Node(int(in.node))
		if _, ok := g.fused[in.dst]; ok || n.Op != ir.OpConcat {
			continue
		}
		last := make([]int, s.nw[in.node]) // per word: its last part's position (-1: none here)
		for j := range last {
			last[j] = -1
		}
		at := n.W
		for _, a := range n.Args {
			pw := m.Node(a).W
			at -= pw
			q, ok := pos[s.off[a]]
			if !ok {
				continue
			}
			for b := at / 64; b <= (at+pw-1)/64 && b < len(last); b++ {
				last[b] = max(last[b], q)
			}
		}
		for j, q := range last {
			if q >= 0 && q < p {
				d := s.prog[order[q]].dst
				g.early[d] = append(g.early[d], earlyWord{int(in.node), int32(j)})
			}
		}
	}
}

// flushEarly prints the concatenation words planned to follow the
// instruction computing off.
func (g *gen) flushEarly(off int32) {
	for _, e := range g.early[off] {
		g.line("%s", g.concatWord(e.i, e.j))
		g.earlyDone[g.s.off[e.i]+e.j] = true
	}
}

// sliceWord is the expression of word k of the wide slice node i (its
// bits above the slice's width clear), read from its operand's words.
func (g *gen) sliceWord(i int, k int32) string {
	s, m := g.s, g.s.m
	n := m.Node(i)
	a, na := s.off[n.Args[0]], s.nw[n.Args[0]]
	pos := n.Lo + 64*int(k)
	qw, r := int32(pos/64), pos%64
	var e string
	switch {
	case qw >= na:
		return "0"
	case r == 0:
		e = fmt.Sprintf("v[%d]", a+qw)
	case qw+1 < na:
		e = fmt.Sprintf("(v[%d]>>%d | v[%d]<<%d)", a+qw, r, a+qw+1, 64-r)
	default:
		e = fmt.Sprintf("(v[%d] >> %d)", a+qw, r)
	}
	if w := n.W - 64*int(k); w < 64 {
		e = fmt.Sprintf("(%s & %#x)", e, uint64(1)<<uint(w)-1)
	}
	return e
}

// concatWord is the statement computing word j of the wide
// concatenation node i: the or of the parts' words shifted into it (the
// parts keep their bits above their widths zero), the last word masked
// to the width.
func (g *gen) concatWord(i int, j int32) string {
	s, m := g.s, g.s.m
	n := m.Node(i)
	d, nd := s.off[i], s.nw[i]
	var terms []string
	// run: the last term, when it is a one-word part placed whole in
	// this word, and how many copies of that part in a row it places (a
	// repeated part is one multiplication: see goExpr's concatenation).
	var run struct {
		src       string
		p, lo, pw int
		k         int
	}
	pos := n.W
	for _, p := range n.Args {
		pw := m.Node(p).W
		pos -= pw
		po := s.off[p]
		for k := 0; k*64 < pw; k++ {
			at := pos + 64*k
			qw, r := int32(at/64), at%64
			bitsHere := min(64, pw-64*k)
			if qw != j && !(r != 0 && r+bitsHere > 64 && qw+1 == j) {
				continue
			}
			src := fmt.Sprintf("v[%d]", po+int32(k))
			if sl, ok := g.fused[po]; ok && m.Node(sl).Op == ir.OpSlice {
				src = g.sliceWord(sl, int32(k))
			}
			if s.nw[p] == 1 {
				if c, ok := g.konst[po]; ok && c == 0 {
					continue // a zero part adds nothing
				}
				src = g.ref(po)
			}
			whole := s.nw[p] == 1 && qw == j && r+pw <= 64
			if whole && run.k > 0 && run.p == p && run.lo == r+pw {
				run.k++
				run.lo = r
				terms[len(terms)-1] = repeated(run.src, run.pw, run.k, run.lo)
				continue
			}
			run.k = 0
			if whole {
				run.src, run.p, run.lo, run.pw, run.k = src, p, r, pw, 1
			}
			switch {
			case qw != j:
				terms = append(terms, fmt.Sprintf("%s>>%d", src, 64-r))
			case r == 0:
				terms = append(terms, src)
			default:
				terms = append(terms, fmt.Sprintf("%s<<%d", src, r))
			}
		}
	}
	if len(terms) == 0 {
		terms = []string{"0"}
	}
	st := fmt.Sprintf("v[%d] = %s", d+j, strings.Join(terms, " | "))
	if r := n.W % 64; r != 0 && j == nd-1 {
		st += fmt.Sprintf("\nv[%d] &= %#x", d+j, uint64(1)<<uint(r)-1)
	}
	return st
}

// repeated is the term placing k copies of the clean w-bit value src in a
// row from bit lo up: src times 1 + 2^w + 2^2w + ..., shifted.
func repeated(src string, w, k, lo int) string {
	var times uint64
	for c := range k {
		times |= 1 << uint(c*w)
	}
	t := fmt.Sprintf("%s*%#x", src, times)
	if lo != 0 {
		t += fmt.Sprintf("<<%d", lo)
	}
	return t
}
