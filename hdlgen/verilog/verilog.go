// Package verilog prints an hdlgen/ir module as Verilog-2005 that vendor
// tools take without edits: `default_nettype none, ANSI ports one per
// line, every constant sized, non-blocking assignments only in clocked
// blocks, no initial blocks and nothing that varies between runs. Like
// CIRCT's export, it works in passes — check the module, drop logic no
// output needs, settle names, mark unused bits — and the printer at the
// end only prints.
package verilog

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"onic/hdlgen/ir"
)

// Emit returns module m as Verilog, or m's build errors. Only m itself is
// printed: the modules it instances are referred to by name (EmitDesign
// prints them too).
func Emit(m *ir.Module) ([]byte, error) {
	e, err := newDesign().analyse(m)
	if err != nil {
		return nil, err
	}
	return e.print(), nil
}

// File is one module of a design as Verilog.
type File struct {
	Module string // the module's Verilog name
	Name   string // the file's name: the module's name and ".v"
	Source []byte
}

// EmitDesign returns m and every module it instances, at any depth, one
// file per module: m first, then the others in the order they are first
// met (depth first). A module instanced many times is printed once. Two
// different modules with the same name are an error unless they print
// the same, as a module built twice by the same code does.
func EmitDesign(m *ir.Module) ([]File, error) {
	return EmitDesignWithout(m, nil)
}

// EmitDesignWithout is EmitDesign leaving out the modules leave says to
// (nil: none) and whatever is under them, unless something else instances
// it too: a design's static part without its reconfigurable modules, each
// of which is emitted on its own.
func EmitDesignWithout(m *ir.Module, leave func(*ir.Module) bool) ([]File, error) {
	d := newDesign()
	var files []File
	from := map[string]*ir.Module{}
	var walk func(m *ir.Module) error
	walk = func(m *ir.Module) error {
		e, err := d.analyse(m)
		if err != nil {
			return err
		}
		name := legal(m.Name())
		var src []byte
		if p := d.param(m); p != nil {
			name, src = p.name, p.src
		} else {
			src = e.print()
		}
		if prev, ok := from[name]; ok {
			for _, f := range files {
				if f.Module == name && !bytes.Equal(f.Source, src) {
					return fmt.Errorf("verilog: two different modules are named %s (built as %q and %q)", name, prev.Name(), m.Name())
				}
			}
			return nil
		}
		from[name] = m
		files = append(files, File{Module: name, Name: name + ".v", Source: src})
		for _, sub := range e.subs {
			if leave != nil && leave(sub) {
				continue
			}
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m); err != nil {
		return nil, err
	}
	return files, nil
}

// design holds the analysis of each module met while emitting, so an
// instance can name its module's ports and know its clock and resets,
// and the families printed once with a parameter.
type design struct {
	em       map[*ir.Module]*emitter
	families map[string]*parametric // by family name; nil: printed member by member
}

func newDesign() *design {
	return &design{em: map[*ir.Module]*emitter{}, families: map[string]*parametric{}}
}

// parametric is a family of modules printed once, with a parameter.
type parametric struct {
	name, param string
	src         []byte // the module, its default the first member's value
}

// param returns how m's family prints, or nil when m prints as itself:
// it has no family, or its members do not print alike. A family is
// printed with a parameter only when its member printed at its own value
// and a member built for another value print the same once the value is
// written as the parameter (in ranges [P-1:0] and [P-1], and in zero
// literals, which become {P{1'b0}}); else every member is printed as a
// module of its own.
func (d *design) param(m *ir.Module) *parametric {
	f := m.Family()
	if f == nil || f.Value < 2 {
		return nil
	}
	if p, ok := d.families[f.Name]; ok {
		return p
	}
	d.families[f.Name] = nil
	other := f.Value + 37
	alt := f.Build(other)
	a, errA := newDesign().analyse(m)
	b, errB := newDesign().analyse(alt)
	if errA != nil || errB != nil || alt.Family() == nil || alt.Family().Name != f.Name {
		return nil
	}
	sa := parameterise(string(a.print()), m.Name(), f, f.Value)
	sb := parameterise(string(b.print()), alt.Name(), f, other)
	if sa != sb || strings.Contains(sa, "_"+strconv.Itoa(f.Value)) {
		return nil
	}
	header := fmt.Sprintf("module %s #(\n    parameter %s = %d\n) (\n", legal(f.Name), f.Param, f.Value)
	sa = strings.Replace(sa, "module "+legal(f.Name)+" (\n", header, 1)
	p := &parametric{name: legal(f.Name), param: f.Param, src: []byte(sa)}
	d.families[f.Name] = p
	return p
}

// parameterise writes value v in src (member name of family f) as the
// family's parameter.
func parameterise(src, name string, f *ir.Family, v int) string {
	src = strings.ReplaceAll(src, legal(name), legal(f.Name))
	n := strconv.Itoa(v - 1)
	src = regexp.MustCompile(`\[`+n+`(:0)?\]`).ReplaceAllString(src, "["+f.Param+"-1$1]")
	src = regexp.MustCompile(`\b`+strconv.Itoa(v)+`'h0\b`).ReplaceAllString(src, "{"+f.Param+"{1'b0}}")
	return src
}

// analyse runs every pass but printing on m (once per module).
func (d *design) analyse(m *ir.Module) (*emitter, error) {
	if e, ok := d.em[m]; ok {
		return e, nil
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	e := &emitter{m: m, d: d, nm: namer{used: map[string]bool{}}}
	d.em[m] = e
	e.cse()
	if err := e.live(); err != nil {
		return nil, err
	}
	e.inlining()
	e.names()
	e.unusedBits()
	return e, nil
}

// emitter holds the passes' results for one module.
type emitter struct {
	m         *ir.Module
	nodes     []ir.Node // m's nodes after common-subexpression elimination
	outs      []int     // each port's node after it (index as m.Ports())
	d         *design
	nm        namer
	alive     []bool     // node is needed by an output
	inline    []bool     // node is printed inside its one user's expression, not as a wire
	readWhole []bool     // something reads the node other than through a part-select
	name      []string   // node's Verilog name ("" for constants and inlined nodes)
	used      [][]uint64 // node's bits that something reads
	clk       bool       // the module has live registers or memory ports
	rst       bool       // the module has live registers with a synchronous reset
	arst      bool       // the module has live registers with an asynchronous reset
	ports     []string   // port names, in ir port order
	unused    []string   // pieces nothing reads, gathered into one sink
	// unusedName is the sink's name, settled with the others so that
	// printing twice prints the same.
	unusedName string
	subs       []*ir.Module // modules of live instances, each once, in node order
}

// node is node i after common-subexpression elimination.
func (e *emitter) node(i int) *ir.Node { return &e.nodes[i] }

// cse merges operations that compute the same thing (same operation,
// width, operands and parameters) into the first of them, so no
// expression is computed or printed twice. A named operation is never
// merged away: an unnamed twin of it takes its name instead.
func (e *emitter) cse() {
	m := e.m
	e.nodes = make([]ir.Node, m.Len())
	rep := make([]int, m.Len())
	seen := map[string]int{}
	folded := map[int][2]int{}   // slice node -> its folded Lo and operand
	alias := map[int]int{}       // named node -> the named node that computes the same
	named := map[int]int{}       // unnamed node -> the named node that computes the same
	consts := map[int][]uint64{} // unnamed node of constant operands -> its value
	var key strings.Builder
	for i := range m.Len() {
		n := m.Node(i)
		rep[i] = i
		if !pure(n.Op) {
			continue
		}
		lo, args := n.Lo, n.Args
		if n.Table != nil {
			args = []int{n.Table.Index} // printed as a table: the tree inside is not needed
		}
		if n.Op == ir.OpSlice {
			// A slice of a slice is one slice of the first's operand; a
			// slice within one part of a concatenation, or within a zero
			// extension's operand, is a slice of that operand; and one of
			// an extension's zeros is zeros.
			var zeros bool
			lo, args, zeros = sliceOf(m, rep, lo, n.W, args)
			switch whole := lo == 0 && n.W == m.Node(rep[args[0]]).W; {
			case n.Name != "":
			case zeros:
				consts[i] = make([]uint64, (n.W+63)/64)
				n = &ir.Node{Op: ir.OpConst, W: n.W, Const: consts[i], Pos: n.Pos}
				lo, args = 0, nil
			case whole:
				rep[i] = rep[args[0]] // the slice is all of its operand
				continue
			}
		}
		if n.Name == "" && n.Table == nil {
			if j := fold(m, n, rep, consts); j >= 0 {
				rep[i] = j // a constant condition or operand decides it
				continue
			}
			if c, ok := evalConst(m, n, rep, consts); ok {
				consts[i] = c // constant operands: printed as the value
				n = &ir.Node{Op: ir.OpConst, W: n.W, Const: c, Pos: n.Pos}
				lo, args = 0, nil
			}
		} else if n.Name != "" && n.Op == ir.OpMux && n.Table == nil {
			if j := fold(m, n, rep, consts); j >= 0 {
				alias[i] = j // a named choice a constant select decides: the chosen value, by its name
				continue
			}
		}
		// Operands of an operation come before it, so theirs are known.
		key.Reset()
		fmt.Fprintf(&key, "%d/%d/%d/", n.Op, n.W, lo)
		for _, a := range args {
			fmt.Fprintf(&key, "%d,", rep[a])
		}
		fmt.Fprintf(&key, "/%x", n.Const)
		if n.Table != nil {
			fmt.Fprintf(&key, "/table%x", n.Table.Words)
		}
		k := key.String()
		if n.Op == ir.OpConst && n.Name != "" {
			continue // a named constant stays itself: its name says what it is
		}
		if j, ok := seen[k]; ok && n.Name == "" {
			rep[i] = j
			continue
		}
		if j, ok := seen[k]; ok && m.Node(j).Name != "" {
			alias[i] = j // two names for one value: the second is the first
			continue
		}
		if n.Op == ir.OpSlice && (lo != n.Lo || args[0] != n.Args[0]) {
			folded[i] = [2]int{lo, rep[args[0]]}
		}
		if j, ok := seen[k]; ok && n.Name != "" {
			named[j] = i // an unnamed twin computed earlier takes this name
		}
		seen[k] = i
	}
	for x := range rep {
		if i, ok := named[rep[x]]; ok {
			rep[x] = i
		}
	}
	for i := range m.Len() {
		n := *m.Node(i)
		if n.Table != nil {
			n.Args = []int{n.Table.Index}
		}
		args := make([]int, len(n.Args))
		for k, a := range n.Args {
			if a >= 0 {
				a = rep[a]
			}
			args[k] = a
		}
		n.Args = args
		if f, ok := folded[i]; ok {
			n.Lo, n.Args = f[0], []int{f[1]}
		}
		if c, ok := consts[i]; ok {
			n = ir.Node{Op: ir.OpConst, W: n.W, Const: c, Pos: n.Pos}
		}
		if j, ok := alias[i]; ok {
			n = ir.Node{Op: ir.OpWire, W: n.W, Args: []int{j}, Name: n.Name, Pos: n.Pos}
		}
		e.nodes[i] = n
	}
	for _, p := range m.Ports() {
		e.outs = append(e.outs, rep[p.Node])
	}
}

// sliceOf follows a slice of w bits from lo of operand args[0] (read
// through rep) down through unnamed slices, concatenations and zero
// extensions to the operand it takes its bits from, and returns that
// operand and the slice's low bit in it — or zeros, when the bits are an
// extension's zeros.
func sliceOf(m *ir.Module, rep []int, lo, w int, args []int) (int, []int, bool) {
	for {
		inner := m.Node(rep[args[0]])
		if inner.Name != "" {
			return lo, args, false
		}
		switch inner.Op {
		case ir.OpSlice:
			lo, args = lo+inner.Lo, inner.Args
			continue
		case ir.OpZext:
			switch w0 := m.Node(rep[inner.Args[0]]).W; {
			case lo+w <= w0:
				args = inner.Args
				continue
			case lo >= w0:
				return lo, args, true
			}
		case ir.OpConcat:
			top, part := inner.W, -1
			for _, a := range inner.Args {
				pw := m.Node(rep[a]).W
				top -= pw
				if lo >= top && lo+w <= top+pw {
					part = a
					break
				}
			}
			if part >= 0 {
				lo, args = lo-top, []int{part}
				continue
			}
		}
		return lo, args, false
	}
}

// fold returns the node that operation n always equals because
// of a constant operand (a multiplexer with a constant select or equal
// choices, x & 0, x & ~0, x | 0, x | ~0, x ^ 0, ~~x), or -1. Operands are
// read through rep.
func fold(m *ir.Module, n *ir.Node, rep []int, consts map[int][]uint64) int {
	arg := func(k int) (int, *ir.Node) {
		a := rep[n.Args[k]]
		if c, ok := consts[a]; ok {
			return a, &ir.Node{Op: ir.OpConst, W: m.Node(a).W, Const: c}
		}
		return a, m.Node(a)
	}
	switch n.Op {
	case ir.OpMux:
		_, sn := arg(0)
		a, _ := arg(1)
		b, _ := arg(2)
		switch {
		case a == b:
			return a
		case sn.Op == ir.OpConst:
			if zero(sn) {
				return b
			}
			return a
		}
	case ir.OpAnd, ir.OpOr, ir.OpXor:
		for k := range 2 {
			c, cn := arg(k)
			o, _ := arg(1 - k)
			if cn.Op != ir.OpConst {
				continue
			}
			switch {
			case zero(cn) && n.Op == ir.OpAnd:
				return c
			case zero(cn):
				return o
			case ones(cn) && n.Op == ir.OpAnd:
				return o
			case ones(cn) && n.Op == ir.OpOr:
				return c
			}
		}
	case ir.OpNot:
		if _, an := arg(0); an.Op == ir.OpNot {
			return rep[an.Args[0]]
		}
	}
	return -1
}

// evalConst computes unnamed operation n when its operands are constants
// (the module's, or ones computed before: consts), for the operations a
// reader would otherwise meet as ~32'h0 or a slice of a literal: bitwise
// and bit-moving operations and comparisons for equality.
func evalConst(m *ir.Module, n *ir.Node, rep []int, consts map[int][]uint64) ([]uint64, bool) {
	var in [][]uint64
	var ws []int
	for _, a := range n.Args {
		a = rep[a]
		c, ok := consts[a]
		if an := m.Node(a); !ok && an.Op == ir.OpConst {
			c, ok = an.Const, true
		}
		if !ok {
			return nil, false
		}
		in, ws = append(in, c), append(ws, m.Node(a).W)
	}
	if len(in) == 0 {
		return nil, false
	}
	out := make([]uint64, (n.W+63)/64)
	bit := func(c []uint64, b int) uint64 { return c[b/64] >> (b % 64) & 1 }
	set := func(b int, v uint64) { out[b/64] |= v << (b % 64) }
	switch n.Op {
	case ir.OpNot, ir.OpAnd, ir.OpOr, ir.OpXor:
		for b := range n.W {
			v := bit(in[0], b)
			switch n.Op {
			case ir.OpNot:
				v ^= 1
			case ir.OpAnd:
				v &= bit(in[1], b)
			case ir.OpOr:
				v |= bit(in[1], b)
			case ir.OpXor:
				v ^= bit(in[1], b)
			}
			set(b, v)
		}
	case ir.OpSlice:
		for b := range n.W {
			set(b, bit(in[0], n.Lo+b))
		}
	case ir.OpZext, ir.OpSext:
		top := uint64(0)
		if n.Op == ir.OpSext {
			top = bit(in[0], ws[0]-1)
		}
		for b := range n.W {
			v := top
			if b < ws[0] {
				v = bit(in[0], b)
			}
			set(b, v)
		}
	case ir.OpConcat:
		b := n.W
		for k, c := range in {
			b -= ws[k]
			for j := range ws[k] {
				set(b+j, bit(c, j))
			}
		}
	case ir.OpEq, ir.OpNe:
		eq := uint64(1)
		for b := range ws[0] {
			if bit(in[0], b) != bit(in[1], b) {
				eq = 0
			}
		}
		if n.Op == ir.OpNe {
			eq ^= 1
		}
		set(0, eq)
	default:
		return nil, false
	}
	return out, true
}

func zero(n *ir.Node) bool {
	for _, w := range n.Const {
		if w != 0 {
			return false
		}
	}
	return true
}

func ones(n *ir.Node) bool {
	for b := range n.W {
		if n.Const[b/64]>>(b%64)&1 == 0 {
			return false
		}
	}
	return true
}

// pure reports whether an operation's value is a function of its operands
// alone (no state, no declaration, no instance).
func pure(op ir.Op) bool {
	switch op {
	case ir.OpInput, ir.OpWire, ir.OpReg, ir.OpMem, ir.OpMemRead, ir.OpMemWrite, ir.OpInstance, ir.OpInstOut:
		return false
	}
	return true
}

// live marks the nodes outputs depend on (through registers too). A live
// instance has all its outputs connected, and brings the clock and resets
// its module needs.
func (e *emitter) live() error {
	e.alive = make([]bool, e.m.Len())
	var stack []int
	for k, p := range e.m.Ports() {
		if p.Output {
			stack = append(stack, e.outs[k])
		}
	}
	writes := map[int][]int{} // memory -> its write ports
	outs := map[int][]int{}   // instance -> its outputs
	for i := 0; i < e.m.Len(); i++ {
		switch n := e.node(i); n.Op {
		case ir.OpMemWrite:
			writes[n.Args[0]] = append(writes[n.Args[0]], i)
		case ir.OpInstOut:
			outs[n.Args[0]] = append(outs[n.Args[0]], i)
		}
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.alive[i] {
			continue
		}
		e.alive[i] = true
		n := e.node(i)
		switch n.Op {
		case ir.OpReg:
			e.clk = true
			switch {
			case n.NoReset:
			case n.Async:
				e.arst = true
			default:
				e.rst = true
			}
		case ir.OpMemRead, ir.OpMemWrite:
			e.clk = true
		case ir.OpMem:
			stack = append(stack, writes[i]...)
		case ir.OpInstance:
			se, err := e.d.analyse(n.Sub)
			if err != nil {
				return fmt.Errorf("%s: instance %s: %w", n.Pos, n.Name, err)
			}
			e.clk, e.rst, e.arst = e.clk || se.clk, e.rst || se.rst, e.arst || se.arst
			stack = append(stack, outs[i]...)
		}
		for _, a := range n.Args {
			if a >= 0 {
				stack = append(stack, a)
			}
		}
	}
	for i := 0; i < e.m.Len(); i++ {
		if n := e.node(i); e.alive[i] && n.Op == ir.OpInstance && !slices.Contains(e.subs, n.Sub) {
			e.subs = append(e.subs, n.Sub)
		}
	}
	return nil
}

// maxInline is the most operators one inlined expression may hold; a
// bigger one gets a wire of its own, so no line becomes unreadable.
const maxInline = 6

// inlining decides which temporaries are printed inside the one
// expression that uses them instead of as wires: unnamed operations used
// exactly once, whose user can take an expression there (a part-select,
// a sign extension's top bit or a byte-enabled write needs a name), and
// whose inlined tree stays small.
func (e *emitter) inlining() {
	m := e.m
	e.inline = make([]bool, m.Len())
	uses := make([]int, m.Len())
	needsName := make([]bool, m.Len())
	e.readWhole = make([]bool, m.Len())
	for i := 0; i < m.Len(); i++ {
		if !e.alive[i] {
			continue
		}
		n := e.node(i)
		if n.Op == ir.OpInstOut {
			// Its operands are the instance and the inputs the output
			// follows inside it: dependences, not uses, so how the
			// instance's inputs print does not depend on what is inside it
			// (a reconfigurable partition's static side must not).
			continue
		}
		for k, a := range n.Args {
			if a < 0 {
				continue
			}
			uses[a]++
			if n.Op != ir.OpSlice {
				e.readWhole[a] = true
			}
			switch {
			case n.Op == ir.OpSlice, n.Op == ir.OpSext:
				needsName[a] = true // printed as a[hi:lo] or a[top]
			case n.Op == ir.OpMemWrite && k >= 2:
				needsName[a] = true // byte lanes of the data and enables
			}
		}
	}
	for k, p := range m.Ports() {
		if p.Output {
			uses[e.outs[k]]++
			e.readWhole[e.outs[k]] = true
		}
	}
	size := make([]int, m.Len())
	for i := 0; i < m.Len(); i++ { // operands come before their users
		n := e.node(i)
		if e.alive[i] && n.Op == ir.OpSlice && n.Name == "" && !needsName[i] {
			// A part-select of a named signal reads as one: print it at
			// every use rather than declare a wire for it.
			e.inline[i] = true
			continue
		}
		if !e.alive[i] || uses[i] != 1 || needsName[i] || n.Name != "" || !inlinable(n.Op) || n.Table != nil || e.alwaysFalse(i) {
			continue
		}
		size[i] = 1
		for _, a := range n.Args {
			if a >= 0 && e.inline[a] {
				size[i] += size[a]
			}
		}
		e.inline[i] = size[i] <= maxInline
	}
}

// inlinable reports whether an operation can be printed inside another
// expression (not a declaration, state or an instance's output).
func inlinable(op ir.Op) bool {
	switch op {
	case ir.OpConst, ir.OpInput, ir.OpWire, ir.OpReg, ir.OpMem, ir.OpMemRead, ir.OpMemWrite, ir.OpInstance, ir.OpInstOut:
		return false
	}
	return true
}

// names gives ports their own names (clk and rst first), then named
// wires and registers, then temporaries after their operation.
func (e *emitter) names() {
	e.name = make([]string, e.m.Len())
	e.nm.used["clk"], e.nm.used["rst"], e.nm.used["arst"] = true, true, true // the clock and resets, declared or not
	for _, p := range e.m.Ports() {
		name := e.nm.name(p.Name)
		e.ports = append(e.ports, name)
		if !p.Output {
			e.name[p.Node] = name
		}
	}
	for i := 0; i < e.m.Len(); i++ {
		n := e.node(i)
		if e.alive[i] && e.name[i] == "" && n.Name != "" && (n.Op != ir.OpConst || e.readWhole[i]) {
			e.name[i] = e.nm.name(n.Name)
		}
	}
	for i := 0; i < e.m.Len(); i++ {
		n := e.node(i)
		if e.alive[i] && e.name[i] == "" && n.Op == ir.OpInstOut {
			inst := e.node(n.Args[0])
			e.name[i] = e.nm.name(inst.Name + "_" + inst.Sub.Ports()[n.Port].Name)
		}
	}
	// A temporary that still needs a wire is named after the value it
	// feeds and its operation, with a leading _ to say the name is made
	// up (_lane3_out_add: an addition inside lane3_out): users come after
	// their operands, so they are named first.
	users := make([]int, e.m.Len())
	for i := range users {
		users[i] = -1
	}
	for i := 0; i < e.m.Len(); i++ {
		if !e.alive[i] {
			continue
		}
		for _, a := range e.node(i).Args {
			if a >= 0 && users[a] < 0 {
				users[a] = i
			}
		}
	}
	outName := map[int]string{}
	for k, p := range e.m.Ports() {
		if p.Output {
			if _, ok := outName[e.outs[k]]; !ok {
				outName[e.outs[k]] = e.ports[k]
			}
		}
	}
	root := make([]string, e.m.Len()) // the named value each node feeds
	for i := e.m.Len() - 1; i >= 0; i-- {
		if !e.alive[i] {
			continue
		}
		switch u := users[i]; {
		case outName[i] != "":
			root[i] = outName[i]
		case u < 0:
		case e.name[u] != "" && e.name[u][0] != '_':
			root[i] = e.name[u]
		default:
			root[i] = root[u] // a made-up or inlined user: what it feeds
		}
		n := e.node(i)
		if e.name[i] != "" || e.inline[i] || n.Op == ir.OpConst || n.Op == ir.OpMemWrite {
			continue
		}
		if root[i] == "" {
			e.name[i] = e.nm.name(fmt.Sprintf("%s_%d", n.Op, i))
			continue
		}
		e.name[i] = e.nm.name("_" + root[i] + "_" + n.Op.String())
	}
}

// unusedBits finds the bits of inputs and named signals that nothing
// reads; they go to a sink named *unused*, which Verilator's lint knows
// to be deliberate, so the output is clean under -Wall with no waivers.
func (e *emitter) unusedBits() {
	e.used = make([][]uint64, e.m.Len())
	mark := func(i, lo, w int) {
		if e.used[i] == nil {
			e.used[i] = make([]uint64, (e.node(i).W+63)/64)
		}
		for b := lo; b < lo+w; b++ {
			e.used[i][b/64] |= 1 << (b % 64)
		}
	}
	for i := 0; i < e.m.Len(); i++ {
		n := e.node(i)
		if !e.alive[i] {
			continue
		}
		if e.alwaysFalse(i) {
			continue // printed as a constant: reads nothing
		}
		for _, a := range n.Args {
			switch {
			case a < 0 || e.node(a).Op == ir.OpMem || e.node(a).Op == ir.OpInstance:
			case n.Op == ir.OpSlice:
				mark(a, n.Lo, n.W)
			default:
				mark(a, 0, e.node(a).W)
			}
		}
	}
	for k, p := range e.m.Ports() {
		if p.Output {
			mark(e.outs[k], 0, e.node(e.outs[k]).W)
		}
	}
	// Every named signal (inputs even when nothing reads them at all):
	// gather the runs of bits nothing reads.
	for i := 0; i < e.m.Len(); i++ {
		if op := e.node(i).Op; e.name[i] == "" || op == ir.OpMem || op == ir.OpInstance || op == ir.OpConst {
			continue
		}
		w := e.node(i).W
		for lo := 0; lo < w; lo++ {
			if e.bitUsed(i, lo) {
				continue
			}
			hi := lo
			for hi+1 < w && !e.bitUsed(i, hi+1) {
				hi++
			}
			e.unused = append(e.unused, e.bitsRef(i, lo, hi))
			lo = hi
		}
	}
	if len(e.unused) > 0 {
		e.unusedName = e.nm.name("unused")
	}
}

func (e *emitter) bitUsed(i, b int) bool {
	return e.used[i] != nil && e.used[i][b/64]&(1<<(b%64)) != 0
}

// bitsRef is a reference to bits hi..lo of named node i.
func (e *emitter) bitsRef(i, lo, hi int) string {
	if lo == 0 && hi == e.node(i).W-1 {
		return e.name[i]
	}
	if lo == hi {
		return fmt.Sprintf("%s[%d]", e.name[i], lo)
	}
	return fmt.Sprintf("%s[%d:%d]", e.name[i], hi, lo)
}

// literal is a sized hexadecimal constant of width w.
func literal(w int, v []uint64) string {
	top := len(v) - 1
	for top > 0 && v[top] == 0 {
		top--
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d'h%x", w, v[top])
	for i := top - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "%016x", v[i])
	}
	return b.String()
}

// sliceConst is bits [lo, lo+w) of constant v.
func sliceConst(v []uint64, lo, w int) []uint64 {
	out := make([]uint64, (w+63)/64)
	for b := 0; b < w; b++ {
		if v[(lo+b)/64]>>((lo+b)%64)&1 != 0 {
			out[b/64] |= 1 << (b % 64)
		}
	}
	return out
}

// ref is how node i appears as an operand: its name, its literal, or its
// expression when it is inlined (in parentheses unless it is a
// concatenation, which needs none).
func (e *emitter) ref(i int) string {
	n := e.node(i)
	switch {
	case n.Op == ir.OpConst && e.name[i] == "":
		return literal(n.W, n.Const)
	case e.inline[i]:
		x := e.expr(i)
		if n.Op == ir.OpSlice || x[0] == '{' && matching(x) {
			return x
		}
		return "(" + x + ")"
	}
	return e.name[i]
}

// top is node i where it stands alone (an assignment's right-hand side,
// an if's condition, an index or a port connection): like ref, but an
// inlined expression goes without parentheses.
func (e *emitter) top(i int) string {
	if e.inline[i] {
		return e.expr(i)
	}
	return e.ref(i)
}

// comment is text as // comment lines indented by indent, its words
// filled to width columns.
func comment(text, indent string, width int) string {
	var b strings.Builder
	line := indent + "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > width && len(line) > len(indent)+2 {
			b.WriteString(line + "\n")
			line = indent + "//"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// matching reports whether x's first brace closes at its end.
func matching(x string) bool {
	depth := 0
	for k := 0; k < len(x); k++ {
		switch x[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return k == len(x)-1
			}
		}
	}
	return false
}

// expr is node i's defining expression.
func (e *emitter) expr(i int) string {
	n := e.node(i)
	a := func(k int) string { return e.ref(n.Args[k]) }
	// chain is operand k without parentheses when it is an inlined node
	// of the same associative operator: a ^ b ^ c for (a ^ b) ^ c (the
	// operators group left to right), and for the bitwise ones also
	// a & b & c for a & (b & c).
	chain := func(k int) string {
		if c := n.Args[k]; e.inline[c] && e.node(c).Op == n.Op && (k == 0 || n.Op != ir.OpAdd) {
			return e.expr(c)
		}
		return a(k)
	}
	switch n.Op {
	case ir.OpAdd:
		return chain(0) + " + " + a(1)
	case ir.OpSub:
		return a(0) + " - " + a(1)
	case ir.OpAnd:
		return chain(0) + " & " + chain(1)
	case ir.OpOr:
		return chain(0) + " | " + chain(1)
	case ir.OpXor:
		return chain(0) + " ^ " + chain(1)
	case ir.OpNot:
		return "~" + a(0)
	case ir.OpEq:
		return a(0) + " == " + a(1)
	case ir.OpNe:
		return a(0) + " != " + a(1)
	case ir.OpLtU:
		if e.alwaysFalse(i) {
			return "1'h0" // x < 0: lint rightly calls the comparison constant
		}
		return a(0) + " < " + a(1)
	case ir.OpLtS:
		return "$signed(" + a(0) + ") < $signed(" + a(1) + ")"
	case ir.OpMux:
		return a(0) + " ? " + a(1) + " : " + a(2)
	case ir.OpRedOr:
		return "|" + a(0)
	case ir.OpRedAnd:
		return "&" + a(0)
	case ir.OpRedXor:
		return "^" + a(0)
	case ir.OpSlice:
		src := e.node(n.Args[0])
		if src.Op == ir.OpConst {
			return literal(n.W, sliceConst(src.Const, n.Lo, n.W))
		}
		if n.W == 1 {
			return fmt.Sprintf("%s[%d]", a(0), n.Lo)
		}
		return fmt.Sprintf("%s[%d:%d]", a(0), n.Lo+n.W-1, n.Lo)
	case ir.OpConcat:
		return "{" + strings.Join(e.concatParts(n.Args), ", ") + "}"
	case ir.OpZext:
		return fmt.Sprintf("{%d'h0, %s}", n.W-e.node(n.Args[0]).W, a(0))
	case ir.OpSext:
		w := e.node(n.Args[0]).W
		top := a(0)
		if w > 1 {
			top = fmt.Sprintf("%s[%d]", a(0), w-1)
		}
		return fmt.Sprintf("{{%d{%s}}, %s}", n.W-w, top, a(0))
	case ir.OpMul:
		// Operands extended to the product's width, so no tool warns
		// about (or mis-sizes) the multiplication.
		return e.extended(n.Args[0], n.W) + " * " + e.extended(n.Args[1], n.W)
	case ir.OpShl:
		return a(0) + " << " + a(1)
	case ir.OpShr:
		return a(0) + " >> " + a(1)
	case ir.OpSar:
		return "$unsigned($signed(" + a(0) + ") >>> " + a(1) + ")"
	case ir.OpWire:
		return a(0)
	}
	panic(fmt.Sprintf("verilog: no expression for %s", n.Op)) // inputs, constants and registers are not expressions
}

// concatParts prints a concatenation's parts, joining neighbours that
// are contiguous part-selects of one signal (x[7:4], x[3:0] is x[7:0])
// and writing runs of one part as a replication ({8{x}}).
func (e *emitter) concatParts(args []int) []string {
	type run struct {
		src, hi, lo int // a part-select of src (src -1: another operand, in arg)
		arg         int
	}
	var runs []run
	for _, a := range args {
		n := e.node(a)
		r := run{src: -1, arg: a}
		if n.Op == ir.OpSlice && e.inline[a] && e.node(n.Args[0]).Op != ir.OpConst {
			r = run{src: n.Args[0], hi: n.Lo + n.W - 1, lo: n.Lo, arg: a}
		}
		if k := len(runs) - 1; k >= 0 && r.src >= 0 && runs[k].src == r.src && runs[k].lo == r.hi+1 {
			runs[k].lo = r.lo
			continue
		}
		runs = append(runs, r)
	}
	var parts []string
	for k := 0; k < len(runs); {
		r := runs[k]
		var s string
		switch {
		case r.src < 0:
			s = e.ref(r.arg)
		case r.lo == 0 && r.hi == e.node(r.src).W-1:
			s = e.name[r.src]
		case r.lo == r.hi:
			s = fmt.Sprintf("%s[%d]", e.name[r.src], r.lo)
		default:
			s = fmt.Sprintf("%s[%d:%d]", e.name[r.src], r.hi, r.lo)
		}
		same := 1
		for k+same < len(runs) && runs[k+same] == r || k+same < len(runs) && r.src < 0 && runs[k+same].src < 0 && runs[k+same].arg == r.arg {
			same++
		}
		if same > 1 {
			s = fmt.Sprintf("{%d{%s}}", same, s)
		}
		parts = append(parts, s)
		k += same
	}
	return parts
}

// field is bits [lo, lo+w) of node i as an operand: a folded literal for a
// constant, the bare name for all of a 1-bit signal, else a part-select.
func (e *emitter) field(i, lo, w int) string {
	n := e.node(i)
	switch {
	case n.Op == ir.OpConst:
		return literal(w, sliceConst(n.Const, lo, w))
	case lo == 0 && w == n.W:
		return e.name[i]
	case w == 1:
		return fmt.Sprintf("%s[%d]", e.name[i], lo)
	}
	return fmt.Sprintf("%s[%d:%d]", e.name[i], lo+w-1, lo)
}

// alwaysFalse reports whether node i is an unsigned comparison with zero
// on the right, x < 0, which is never true.
func (e *emitter) alwaysFalse(i int) bool {
	n := e.node(i)
	if n.Op != ir.OpLtU {
		return false
	}
	b := e.node(n.Args[1])
	if b.Op != ir.OpConst {
		return false
	}
	for _, w := range b.Const {
		if w != 0 {
			return false
		}
	}
	return true
}

// extended is node i zero-extended to w bits.
func (e *emitter) extended(i, w int) string {
	if d := w - e.node(i).W; d > 0 {
		return fmt.Sprintf("{%d'h0, %s}", d, e.ref(i))
	}
	return e.ref(i)
}

// decl is a declaration's type and range: "wire [7:0]" or "reg".
func decl(kind string, w int) string {
	if w == 1 {
		return kind
	}
	return fmt.Sprintf("%s [%d:0]", kind, w-1)
}

// print writes the module, its long statements wrapped (layout).
func (e *emitter) print() []byte { return layout(e.statements()) }

// statements writes the module a statement a line.
//
// Long: one short case per kind it handles, in one switch; split, the
// cases would only move apart.
func (e *emitter) statements() []byte {
	var b bytes.Buffer
	m := e.m
	fmt.Fprintf(&b, "// Code generated by onic hdlgen from module %s. DO NOT EDIT.\n\n", m.Name())
	b.WriteString("`default_nettype none\n\n")
	fmt.Fprintf(&b, "module %s (\n", legal(m.Name()))
	var ports []string
	if e.clk {
		ports = append(ports, "    input  wire clk")
	}
	if e.rst {
		ports = append(ports, "    input  wire rst")
	}
	if e.arst {
		ports = append(ports, "    input  wire arst")
	}
	// An interface's description (ir.Module.Describe) goes before its
	// first port, as comment lines.
	notes := make([]string, len(ports), len(ports)+len(m.Ports()))
	told := make([]bool, len(m.PortDocs()))
	for k, p := range m.Ports() {
		dir := "input "
		if p.Output {
			dir = "output"
		}
		ports = append(ports, fmt.Sprintf("    %s %s %s", dir, decl("wire", e.node(p.Node).W), e.ports[k]))
		note := ""
		for i, d := range m.PortDocs() {
			if strings.HasPrefix(p.Name, d.Prefix) {
				if !told[i] {
					told[i], note = true, comment(d.Text, "    ", WrapWidth)
				}
				break
			}
		}
		notes = append(notes, note)
	}
	for k, p := range ports {
		b.WriteString(notes[k])
		b.WriteString(p)
		if k < len(ports)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(");\n")
	// Declarations (registers, then wires, in node order), then the
	// wires' continuous assignments: with every name declared first, the
	// order of the assignments cannot matter.
	var params, regs, tables, wires, clocked, insts, instOuts, mems []int
	for i := 0; i < m.Len(); i++ {
		n := e.node(i)
		switch {
		case !e.alive[i] || n.Op == ir.OpInput:
		case n.Op == ir.OpInstance:
			insts = append(insts, i)
		case n.Op == ir.OpInstOut:
			instOuts = append(instOuts, i)
		case n.Op == ir.OpMemWrite:
			clocked = append(clocked, i)
		case n.Op == ir.OpMem:
			fmt.Fprintf(&b, "    %s %s [0:%d]; // %s\n", decl("reg ", n.W), e.name[i], n.Depth-1, n.Pos)
			mems = append(mems, i)
		case n.Op == ir.OpReg || n.Op == ir.OpMemRead:
			regs = append(regs, i)
		case n.Op == ir.OpConst:
			if e.name[i] != "" {
				params = append(params, i)
			}
		case n.Table != nil:
			tables = append(tables, i)
		case e.name[i] != "":
			wires = append(wires, i)
		}
	}
	for _, i := range params {
		n := e.node(i)
		fmt.Fprintf(&b, "    %s %s = %s; // %s\n", decl("localparam", n.W), e.name[i], literal(n.W, n.Const), n.Pos)
	}
	for _, i := range regs {
		n := e.node(i)
		if n.Op == ir.OpReg {
			// The value after configuration (an FPGA flip-flop's INIT):
			// the reset value, or 0 for a register without reset. The
			// simulator starts registers there too, so an event
			// simulator agrees with it from the first cycle.
			fmt.Fprintf(&b, "    %s %s = %s; // %s\n", decl("reg ", n.W), e.name[i], literal(n.W, n.Reset), n.Pos)
			continue
		}
		// A read port's output register starts at 0 too, as a block
		// RAM's output latch after configuration.
		fmt.Fprintf(&b, "    %s %s = %s; // %s\n", decl("reg ", n.W), e.name[i], literal(n.W, []uint64{0}), n.Pos)
	}
	for _, i := range tables {
		n := e.node(i)
		fmt.Fprintf(&b, "    %s %s; // %s: a table\n", decl("wire", n.W), e.name[i], n.Pos)
	}
	for _, i := range wires {
		n := e.node(i)
		fmt.Fprintf(&b, "    %s %s; // %s\n", decl("wire", n.W), e.name[i], n.Pos)
	}
	for _, i := range instOuts {
		n := e.node(i)
		fmt.Fprintf(&b, "    %s %s; // %s\n", decl("wire", n.W), e.name[i], n.Pos)
	}
	unused := e.unusedName
	if len(e.unused) > 0 {
		// A 1-bit AND of the pieces nothing reads, itself read by
		// nothing: the name tells lint it is meant.
		fmt.Fprintf(&b, "    wire %s;\n", unused)
	}
	b.WriteString("\n")
	if len(mems) > 0 {
		// Memories start all zero, as block RAM does after configuration
		// (INIT 0) and as the simulator starts them. Synthesis tools get
		// block RAM's zeroes without the loop (and Yosys would unroll it,
		// a cell per word), so only simulators see it.
		idx := e.nm.name("mem_init_i")
		fmt.Fprintf(&b, "`ifndef SYNTHESIS\n    integer %s;\n    initial begin\n", idx)
		for _, i := range mems {
			n := e.node(i)
			fmt.Fprintf(&b, "        for (%s = 0; %s < %d; %s = %s + 1)\n            %s[%s] = %s;\n", idx, idx, n.Depth, idx, idx, e.name[i], idx, literal(n.W, []uint64{0}))
		}
		b.WriteString("    end\n`endif\n")
	}
	for _, i := range wires {
		fmt.Fprintf(&b, "    assign %s = %s;\n", e.name[i], e.expr(i))
	}
	if unused != "" {
		fmt.Fprintf(&b, "    assign %s = &{1'b0, %s};\n", unused, strings.Join(e.unused, ", "))
	}
	e.stateNames(&b)
	for _, i := range tables {
		e.table(&b, i)
	}
	for _, i := range insts {
		e.instance(&b, i, instOuts)
	}
	for _, i := range regs {
		n := e.node(i)
		if n.Op == ir.OpMemRead {
			// A registered read in its own block: it sees the word as it
			// was before this edge's writes (read-first). A read port
			// that always reads has no enable to test.
			if e.isOne(n.Args[2]) {
				fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n        %s <= %s[%s];\n    end\n",
					e.name[i], e.name[n.Args[0]], e.top(n.Args[1]))
				continue
			}
			fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n        if (%s) begin\n            %s <= %s[%s];\n        end\n    end\n",
				e.top(n.Args[2]), e.name[i], e.name[n.Args[0]], e.top(n.Args[1]))
			continue
		}
		if n.NoReset {
			// A data-path register: no reset, loaded when enabled.
			if len(n.Args) > 1 && n.Args[1] >= 0 {
				fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n        if (%s) begin\n            %s <= %s;\n        end\n    end\n",
					e.top(n.Args[1]), e.name[i], e.top(n.Args[0]))
			} else {
				fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n        %s <= %s;\n    end\n", e.name[i], e.top(n.Args[0]))
			}
			continue
		}
		if n.Async {
			fmt.Fprintf(&b, "\n    always @(posedge clk or posedge arst) begin\n")
			fmt.Fprintf(&b, "        if (arst) begin\n            %s <= %s;\n        end", e.name[i], literal(n.W, n.Reset))
		} else {
			fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n")
			fmt.Fprintf(&b, "        if (rst) begin\n            %s <= %s;\n        end", e.name[i], literal(n.W, n.Reset))
		}
		if len(n.Args) > 1 && n.Args[1] >= 0 {
			fmt.Fprintf(&b, " else if (%s) begin\n", e.top(n.Args[1]))
		} else {
			b.WriteString(" else begin\n")
		}
		fmt.Fprintf(&b, "            %s <= %s;\n        end\n    end\n", e.name[i], e.top(n.Args[0]))
	}
	for _, i := range clocked {
		n := e.node(i)
		mem, addr := e.name[n.Args[0]], e.top(n.Args[1])
		fmt.Fprintf(&b, "\n    always @(posedge clk) begin\n        if (%s) begin\n", e.top(n.Args[3]))
		if be := n.Args[4]; be < 0 {
			fmt.Fprintf(&b, "            %s[%s] <= %s;\n", mem, addr, e.top(n.Args[2]))
		} else {
			for k := 0; k < e.node(n.Args[0]).W/8; k++ {
				fmt.Fprintf(&b, "            if (%s) %s[%s][%d:%d] <= %s;\n", e.field(be, k, 1), mem, addr, 8*k+7, 8*k, e.field(n.Args[2], 8*k, 8))
			}
		}
		b.WriteString("        end\n    end\n")
	}
	b.WriteString("\n")
	for k, p := range m.Ports() {
		if p.Output {
			fmt.Fprintf(&b, "    assign %s = %s;\n", e.ports[k], e.top(e.outs[k]))
		}
	}
	b.WriteString("endmodule\n\n`default_nettype wire\n")
	return b.Bytes()
}

// stateNames prints, for simulators only, each live state machine's
// state as text (ir.States): a wire <reg>_name, as wide as the longest
// name, that waveform viewers show as ASCII; a sink whose name says it
// is unused keeps Verilator's lint quiet about nothing reading it.
func (e *emitter) stateNames(b *bytes.Buffer) {
	for _, f := range e.m.FSMs() {
		if !e.alive[f.Reg] {
			continue
		}
		reg := e.name[f.Reg]
		chars := 1
		for _, s := range f.States {
			chars = max(chars, len(s))
		}
		text := func(s string) string { return strconv.Quote(s + strings.Repeat(" ", chars-len(s))) }
		name, sink := e.nm.name(reg+"_name"), e.nm.name("unused_"+reg+"_name")
		fmt.Fprintf(b, "`ifndef SYNTHESIS\n    // %s by name, for waveform viewers\n    wire [%d:0] %s;\n    wire %s;\n", reg, 8*chars-1, name, sink)
		// A state a line: assign x_name = (x == A) ? "A"
		//                                : (x == B) ? "B" ... : "?";
		lead := fmt.Sprintf("    assign %s = ", name)
		for k, s := range f.States {
			st := literal(e.node(f.Reg).W, []uint64{uint64(k)})
			if c := f.Consts[k]; e.alive[c] && e.name[c] != "" {
				st = e.name[c]
			}
			fmt.Fprintf(b, "%s(%s == %s) ? %s\n", lead, reg, st, text(s))
			lead = strings.Repeat(" ", len(lead)-2) + ": "
		}
		fmt.Fprintf(b, "%s%s;\n", lead, text("?"))
		fmt.Fprintf(b, "    assign %s = &{1'b0, %s};\n`endif\n", sink, name)
	}
}

// table prints table node i as a function holding a case statement —
// every word that differs from the default, then the default: the most
// common word, or 0 when the table is shorter than its index can reach
// (indexes past the end read 0) — and a continuous assignment of the
// function of the index. A continuous assignment has its value from time
// 0 in every simulator; an always @(*) block is not run until its index
// changes (IEEE 1364-2005 9.7.5), so a table whose index starts at its
// register's initial value and stays there would read X in Icarus while
// Verilator and the hardware read the word.
func (e *emitter) table(b *bytes.Buffer, i int) {
	n := e.node(i)
	idx := n.Args[0]
	iw := e.node(idx).W
	words := n.Table.Words
	count := map[uint64]uint64{}
	for _, w := range words {
		count[w]++
	}
	def := words[0]
	for w, c := range count {
		if c > count[def] || c == count[def] && w < def {
			def = w
		}
	}
	if iw >= 64 || uint64(len(words)) < 1<<iw {
		def = 0 // indexes past the end read 0: only the default can say so
	}
	// The function and its argument are named after the table, unique in
	// the module (an argument that hid a module name would be VARHIDDEN).
	fn, arg := e.nm.name(e.name[i]+"_lookup"), e.nm.name(e.name[i]+"_index")
	word := func(w uint64) string { return literal(n.W, []uint64{w}) }
	b.WriteString("\n")
	if bits := n.Table.Bits; len(bits) > 0 {
		// Flags: in binary, under their names, most significant first.
		word = func(w uint64) string { return fmt.Sprintf("%d'b%0*b", n.W, n.W, w) }
		names := slices.Clone(bits)
		slices.Reverse(names)
		fmt.Fprintf(b, "    // %s's bits, %d to 0: %s\n", fn, n.W-1, strings.Join(names, ", "))
	}
	fmt.Fprintf(b, "    %s;\n        %s;\n        begin\n            case (%s)\n",
		strings.TrimSpace(decl("function", n.W))+" "+fn, strings.TrimSpace(decl("input", iw))+" "+arg, arg)
	for k, w := range words {
		if w != def {
			fmt.Fprintf(b, "                %s: %s = %s;\n", literal(iw, []uint64{uint64(k)}), fn, word(w))
		}
	}
	fmt.Fprintf(b, "                default: %s = %s;\n            endcase\n        end\n    endfunction\n", fn, word(def))
	fmt.Fprintf(b, "    assign %s = %s(%s);\n", e.name[i], fn, e.top(idx))
}

// instance prints instance node i: its module's clock and resets, then
// every port by name in the module's order.
func (e *emitter) instance(b *bytes.Buffer, i int, instOuts []int) {
	n := e.node(i)
	se := e.d.em[n.Sub]
	var conns []string
	for _, c := range []struct {
		on   bool
		name string
	}{{se.clk, "clk"}, {se.rst, "rst"}, {se.arst, "arst"}} {
		if c.on {
			conns = append(conns, fmt.Sprintf("        .%s(%s)", c.name, c.name))
		}
	}
	in := 0
	for k, p := range n.Sub.Ports() {
		var sig string
		if p.Output {
			for _, o := range instOuts {
				if on := e.node(o); on.Args[0] == i && on.Port == k {
					sig = e.name[o]
				}
			}
		} else {
			sig = e.top(n.Args[in])
			in++
		}
		conns = append(conns, fmt.Sprintf("        .%s(%s)", se.ports[k], sig))
	}
	mod := legal(n.Sub.Name())
	if p := e.d.param(n.Sub); p != nil {
		mod = fmt.Sprintf("%s #(.%s(%d))", p.name, p.param, n.Sub.Family().Value)
	}
	fmt.Fprintf(b, "\n    %s %s ( // %s\n%s\n    );\n", mod, e.name[i], n.Pos, strings.Join(conns, ",\n"))
}

// isOne reports whether node id is the constant 1 (an enable that is
// always on, which the printer leaves out rather than print if (1'h1)).
func (e *emitter) isOne(id int) bool {
	n := e.node(id)
	if n.Op != ir.OpConst || len(n.Const) == 0 || n.Const[0] != 1 {
		return false
	}
	for _, w := range n.Const[1:] {
		if w != 0 {
			return false
		}
	}
	return true
}
