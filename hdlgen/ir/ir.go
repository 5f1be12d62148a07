// Package ir is onic's hardware intermediate representation: a flat
// netlist of typed, sized signals built through a Module's methods, in the
// spirit of Amaranth's netlist and CIRCT's core dialects.
//
// Widths are strict: operators never extend or truncate implicitly, and a
// mismatch is an error. Errors do not stop the builder; they are collected
// with the source position (file:line) of the builder call that caused
// them, outside this package, and returned by Check, so a kernel author
// sees every mistake at once and where it was made.
package ir

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Op is what a node computes.
type Op uint8

// Ops. Operands are node indices; W is the node's width.
const (
	OpInput    Op = iota // a module input port
	OpConst              // a constant (Const)
	OpWire               // a named wire, driven once by Assign (Args[0] once driven)
	OpReg                // a register on the module clock: Args[0] next, Args[1] enable (optional)
	OpAdd                // wrapping add, equal widths
	OpSub                // wrapping subtract, equal widths
	OpAnd                // bitwise, equal widths
	OpOr                 //
	OpXor                //
	OpNot                // bitwise complement
	OpEq                 // 1 bit: equal
	OpNe                 // 1 bit: not equal
	OpLtU                // 1 bit: unsigned less than
	OpLtS                // 1 bit: signed less than
	OpMux                // Args[0] (1 bit) ? Args[1] : Args[2]
	OpSlice              // bits [Lo+W-1:Lo] of Args[0]
	OpConcat             // Args[0] is the most significant part
	OpZext               // zero-extend Args[0] to W
	OpSext               // sign-extend Args[0] to W
	OpRedOr              // 1 bit: OR of all bits
	OpRedAnd             // 1 bit: AND of all bits
	OpRedXor             // 1 bit: XOR of all bits (parity)
	OpMul                // unsigned product, W = the operands' widths summed
	OpShl                // Args[0] shifted left by Args[1] (any width), zeros in
	OpShr                // logical right shift by Args[1]
	OpSar                // arithmetic right shift by Args[1] (copies of the sign bit in)
	OpMem                // a synchronous RAM of Depth words of W bits (no value of its own)
	OpMemRead            // registered read: Args[0] memory, Args[1] address, Args[2] enable
	OpMemWrite           // write port (no value): Args memory, address, data, enable, byte enables (or -1)
	OpInstance           // an instance of module Sub (no value): Args its inputs, in Sub's input port order
	OpInstOut            // output Port of an instance: Args[0] the instance, then the inputs the output follows combinationally
)

var opNames = [...]string{"input", "const", "wire", "reg", "add", "sub", "and", "or", "xor", "not", "eq", "ne",
	"ltu", "lts", "mux", "slice", "concat", "zext", "sext", "redor", "redand", "redxor", "mul", "shl", "shr", "sar", "mem", "memread", "memwrite", "inst", "instout"}

// String returns the op's short name, used for temporaries ("add", "mux").
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// Pos is a place in a Go source file.
type Pos struct {
	File string
	Line int
}

// String returns "designs/internal/card/build.go:12": the file's path
// from the root of the Go module it is in (the nearest directory above it
// with a go.mod), so that files of one name in different packages tell
// apart and the text does not depend on where the module was checked
// out; the path as the build recorded it when no go.mod is found (a
// -trimpath build's "module/path/file.go").
func (p Pos) String() string {
	if p.File == "" {
		return "?"
	}
	return fmt.Sprintf("%s:%d", relFile(p.File), p.Line)
}

// moduleRoots caches, by directory, the root of the Go module it is in
// ("" for none).
var moduleRoots sync.Map

// relFile is file's path from its module's root, with forward slashes.
func relFile(file string) string {
	if !filepath.IsAbs(file) {
		return filepath.ToSlash(file)
	}
	dir := filepath.Dir(file)
	root, ok := moduleRoots.Load(dir)
	if !ok {
		r := ""
		for d := dir; ; d = filepath.Dir(d) {
			if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && st.Mode().IsRegular() {
				r = d
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		root, _ = moduleRoots.LoadOrStore(dir, r)
	}
	if r := root.(string); r != "" {
		if rel, err := filepath.Rel(r, file); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(file)
}

// Node is one signal of a module. Nodes are read through Module.Node; the
// builder methods are the only way to make them.
type Node struct {
	Op    Op
	W     int      // width in bits, at least 1
	Args  []int    // operand node indices
	Const []uint64 // OpConst: value, little-endian 64-bit words
	Lo    int      // OpSlice: lowest bit
	Depth int      // OpMem: words
	Name  string   // user's name (inputs, wires, registers; outputs name their driver via Ports)
	Reset []uint64 // OpReg: value on reset
	Async bool     // OpReg: reset by arst, asynchronously (else by rst at an edge)
	// NoReset marks a data-path register (OpReg) that no reset touches: it
	// starts at 0 (as an FPGA's flip-flops do after configuration, INIT=0)
	// and keeps its value through rst.
	NoReset bool
	Pos     Pos     // the builder call that made it
	Drive   Pos     // OpWire, OpReg: the Assign or SetNext call that drove it
	Sub     *Module // OpInstance: the module instanced (Name is the instance's name)
	Port    int     // OpInstOut: the index of the output in Sub's Ports
	// Table is set on the multiplexer at the root of a ROM's tree: the
	// words and the index node, so a printer can show the lookup as a
	// table (a case statement) rather than as its tree. Simulators run
	// the tree.
	Table *Table
}

// Table is what ROM built: Words[index], 0 past the end. Bits, when a
// table's words are flags (FlagBits), names each bit, bit 0 first.
type Table struct {
	Index int
	Words []uint64
	Bits  []string
}

// Port is a module port. Inputs are nodes; an output names the node that
// drives it.
type Port struct {
	Name   string
	Output bool
	Node   int
	Pos    Pos
}

// Value is a signal being built: a handle to a node of its module.
type Value struct {
	m  *Module
	id int
}

// Width returns v's width (0 for the zero Value).
func (v Value) Width() int {
	if v.m == nil {
		return 0
	}
	return v.m.nodes[v.id].W
}

// ID returns v's node index.
func (v Value) ID() int { return v.id }

// Module is a hardware module: ports, and the nodes that compute them on
// one clock (clk) with a synchronous, active-high reset (rst).
type Module struct {
	name   string
	nodes  []Node
	ports  []Port
	names  map[string]Pos
	errs   []error
	family *Family
	fsms   []FSM
	docs   []PortDoc
}

// PortDoc describes one interface of a module: the ports whose names
// start with Prefix.
type PortDoc struct {
	Prefix, Text string
}

// Describe says in prose what the module's interface prefix is (the
// ports whose names start with it: "s_host_tlp_"); a printer puts it
// before the first of them. The first description whose prefix a port
// has is the port's.
func (m *Module) Describe(prefix, text string) {
	m.docs = append(m.docs, PortDoc{prefix, text})
}

// PortDocs returns the interfaces' descriptions, in the order given.
func (m *Module) PortDocs() []PortDoc { return m.docs }

// FSM is a register that holds a state machine's state, and its states'
// names (States).
type FSM struct {
	Reg    int      // the register's node
	States []string // state k's name
	Consts []int    // state k's named constant's node
}

// FSMs returns the module's state machines, in the order States declared
// them.
func (m *Module) FSMs() []FSM { return m.fsms }

// Family says that a module is one member of a family of modules built
// by the same code for different values of one integer parameter (a
// width, a depth). A printer may then print the family once, with a
// parameter, where it can show that the members differ only in it.
type Family struct {
	Name  string            // the family's module name (onic_axis_skid)
	Param string            // the parameter's name (WIDTH)
	Value int               // this member's value
	Build func(int) *Module // builds the member for another value
}

// SetFamily records that m is a member of f.
func (m *Module) SetFamily(f Family) { m.family = &f }

// Family returns the family m belongs to, or nil.
func (m *Module) Family() *Family { return m.family }

// NewModule starts a module named name.
func NewModule(name string) *Module {
	return &Module{name: name, names: map[string]Pos{}}
}

// Name returns the module's name.
func (m *Module) Name() string { return m.name }

// Len returns the number of nodes.
func (m *Module) Len() int { return len(m.nodes) }

// Node returns node i (do not modify it).
func (m *Module) Node(i int) *Node { return &m.nodes[i] }

// Clone returns a copy of m that passes may rewrite: its nodes (through
// Node's pointer) and operand lists are its own, and Append adds nodes to
// it. A simulator simplifies a clone this way; nothing checks it again,
// so a pass must keep every node's value what it was.
func (m *Module) Clone() *Module {
	c := *m
	c.nodes = slices.Clone(m.nodes)
	for i := range c.nodes {
		c.nodes[i].Args = slices.Clone(c.nodes[i].Args)
	}
	c.ports = slices.Clone(m.ports)
	return &c
}

// Append adds node n to m (a Clone) and returns its index.
func (m *Module) Append(n Node) int { return m.add(n).id }

// Ports returns the ports in declaration order.
func (m *Module) Ports() []Port { return m.ports }

// OutputValue returns the value that drives output name, and whether m
// has that output.
func (m *Module) OutputValue(name string) (Value, bool) {
	for _, p := range m.ports {
		if p.Output && p.Name == name {
			return Value{m, p.Node}, true
		}
	}
	return Value{}, false
}

// Error is a mistake in building a module, at the builder call that made it.
type Error struct {
	Pos Pos
	Msg string

	times int // how many times the same call made it (Check counts them)
}

func (e *Error) Error() string {
	msg := e.Pos.where() + ": " + e.Msg
	if e.times > 1 {
		msg += fmt.Sprintf(" (%d times: the line ran once per lane or instance)", e.times)
	}
	return msg
}

// where is the position as an editor opens it: the file relative to the
// working directory when it is below it, else its full path. (String,
// for generated files, gives the base name alone, the same on every
// machine.)
func (p Pos) where() string {
	if p.File == "" {
		return "?"
	}
	f := p.File
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, f); err == nil && !strings.HasPrefix(r, "..") {
			f = r
		}
	}
	return fmt.Sprintf("%s:%d", f, p.Line)
}

// pkgDir is this package's source directory: frames from its non-test
// files are the builder's own, the first other frame is the user's.
var pkgDir = func() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(f)
}()

// helpers holds the functions marked with Helper, by name.
var helpers sync.Map

// Helper marks the function that calls it as a builder helper, the way
// testing.T.Helper marks a test helper: the IR it builds is recorded at
// its caller's position (the user's code that asked for a register,
// say), not at the line inside the helper. Call it first in the helper.
func Helper() {
	pc, _, _, ok := runtime.Caller(1)
	if !ok {
		return
	}
	if fn := runtime.FuncForPC(pc); fn != nil {
		helpers.Store(fn.Name(), true)
	}
}

// caller is the position of the first caller outside this package and
// outside the functions marked with Helper.
func caller() Pos {
	pcs := make([]uintptr, 24)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !more {
			return Pos{f.File, f.Line}
		}
		if filepath.Dir(f.File) == pkgDir && !strings.HasSuffix(f.File, "_test.go") {
			continue // the builder's own
		}
		if _, helper := helpers.Load(f.Function); !helper {
			return Pos{f.File, f.Line}
		}
	}
}

func (m *Module) errorf(p Pos, format string, a ...any) {
	m.errs = append(m.errs, &Error{Pos: p, Msg: fmt.Sprintf(format, a...)})
}

// add appends a node and returns its Value.
func (m *Module) add(n Node) Value {
	m.nodes = append(m.nodes, n)
	return Value{m, len(m.nodes) - 1}
}

// poison is what a failed builder call returns: a constant of the width
// the call would have had (at least 1), so building can go on and every
// error is reported.
func (m *Module) poison(p Pos, w int) Value {
	w = max(w, 1)
	return m.add(Node{Op: OpConst, W: w, Const: make([]uint64, words(w)), Pos: p})
}

func words(w int) int { return (w + 63) / 64 }

// own checks that vs belong to m.
func (m *Module) own(p Pos, what string, vs ...Value) bool {
	for _, v := range vs {
		if v.m != m {
			m.errorf(p, "%s: operand from another module or the zero Value", what)
			return false
		}
	}
	return true
}

// claim reserves a user name.
// FreeName is base if no port, wire or register of m has that name yet,
// else base_2, base_3, ...: the first that is free. For a generator that
// names what it builds after what it builds it from (stage1_sum) and may
// build it more than once.
func (m *Module) FreeName(base string) string {
	name := base
	for i := 2; ; i++ {
		if _, taken := m.names[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
}

func (m *Module) claim(p Pos, name string) bool {
	if name == "" {
		m.errorf(p, "a port, wire or register needs a name")
		return false
	}
	if prev, dup := m.names[name]; dup {
		m.errorf(p, "%q is already a name in module %s (at %s)", name, m.name, prev)
		return false
	}
	m.names[name] = p
	return true
}

// Input declares an input port of width w.
func (m *Module) Input(name string, w int) Value {
	p := caller()
	if w < 1 {
		m.errorf(p, "input %q: width %d must be at least 1", name, w)
		return m.poison(p, 1)
	}
	if name == "clk" || name == "rst" || name == "arst" {
		m.errorf(p, "input %q: clk, rst and arst are the module's clock and resets, declared for it", name)
		return m.poison(p, w)
	}
	m.claim(p, name)
	v := m.add(Node{Op: OpInput, W: w, Name: name, Pos: p})
	m.ports = append(m.ports, Port{Name: name, Node: v.id, Pos: p})
	return v
}

// Output declares an output port driven by v.
func (m *Module) Output(name string, v Value) {
	p := caller()
	if !m.own(p, "output "+name, v) {
		return
	}
	m.claim(p, name)
	m.ports = append(m.ports, Port{Name: name, Output: true, Node: v.id, Pos: p})
}

// Const is a constant of width w and value val (which must fit).
func (m *Module) Const(w int, val uint64) Value {
	p := caller()
	if w < 1 {
		m.errorf(p, "constant: width %d must be at least 1", w)
		return m.poison(p, 1)
	}
	if w < 64 && val>>w != 0 {
		m.errorf(p, "constant %#x does not fit in %d bits", val, w)
		return m.poison(p, w)
	}
	c := make([]uint64, words(w))
	c[0] = val
	return m.add(Node{Op: OpConst, W: w, Const: c, Pos: p})
}

// Wire declares a named wire of width w, to be driven once with Assign.
func (m *Module) Wire(name string, w int) Value {
	p := caller()
	if w < 1 {
		m.errorf(p, "wire %q: width %d must be at least 1", name, w)
		return m.poison(p, 1)
	}
	m.claim(p, name)
	return m.add(Node{Op: OpWire, W: w, Name: name, Pos: p})
}

// Named gives v a name, as a Go variable's name would: the Verilog
// declares it as a wire of that name (a constant as a localparam), and
// the cycle simulator's waveforms show it. It returns v, so a value is
// named where it is built:
//
//	addr := m.Named("translated_addr", m.Mux(hit, lutAddr, winAddr))
//
// Names are unique in a module, like port, wire and register names. A
// value that already has a name (a port, wire or register) keeps it.
func (m *Module) Named(name string, v Value) Value {
	p := caller()
	if !m.own(p, "named", v) {
		return v
	}
	n := &m.nodes[v.id]
	switch {
	case n.Name != "" || n.Op == OpMem || n.Op == OpMemWrite || n.Op == OpInstance:
		return v
	case m.claim(p, name):
		n.Name = name
	}
	return v
}

// Assign drives wire w with v.
func (m *Module) Assign(w, v Value) {
	p := caller()
	if !m.own(p, "assign", w, v) {
		return
	}
	n := &m.nodes[w.id]
	switch {
	case n.Op != OpWire:
		m.errorf(p, "assign: %s is not a wire", m.describe(w.id))
	case len(n.Args) != 0:
		m.errorf(p, "assign: wire %q is already driven (at %s)", n.Name, n.Drive)
	case n.W != v.Width():
		m.errorf(p, "assign: wire %q is %d bits, the value %d", n.Name, n.W, v.Width())
	default:
		n.Args, n.Drive = []int{v.id}, p
	}
}

// States declares that register r holds a state machine's state, state
// k named names[k] (upper case, as IDLE): it returns the states as
// constants of r's width named <R>_<NAME> (RB_STATE_IDLE for r rb_state),
// which a printer declares as localparams, for r's reset, next-state
// logic and comparisons. The Verilog printer also gives simulators (not
// synthesis) a wire <r>_name with the state's name as text, so waveform
// viewers show WRITE where they would show 3'h2.
func (m *Module) States(r Value, names ...string) []Value {
	p := caller()
	if !m.own(p, "states", r) {
		return nil
	}
	n := m.nodes[r.id]
	if n.Op != OpReg || n.Name == "" {
		m.errorf(p, "states: %s is not a named register", n.Op)
		return nil
	}
	if len(names) < 2 || uint64(len(names)-1)>>min(n.W, 63) != 0 {
		m.errorf(p, "states of %s: %d names for %d bits", n.Name, len(names), n.W)
		return nil
	}
	f := FSM{Reg: r.id, States: names}
	var vs []Value
	for k, name := range names {
		if !legalState(name) {
			m.errorf(p, "states of %s: %q is not an upper-case identifier", n.Name, name)
			return nil
		}
		v := make([]uint64, words(n.W))
		v[0] = uint64(k)
		c := m.add(Node{Op: OpConst, W: n.W, Const: v, Pos: p})
		if cn := strings.ToUpper(n.Name) + "_" + name; m.claim(p, cn) {
			m.nodes[c.id].Name = cn
		}
		f.Consts = append(f.Consts, c.id)
		vs = append(vs, c)
	}
	m.fsms = append(m.fsms, f)
	return vs
}

// legalState says whether s is an upper-case identifier.
func legalState(s string) bool {
	for i, c := range s {
		if !(c >= 'A' && c <= 'Z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// Reg declares a register of width w that takes reset on rst; drive it
// with SetNext (and optionally SetEnable).
func (m *Module) Reg(name string, w int, reset uint64) Value {
	return m.reg(caller(), name, w, reset, false)
}

// RegAsync declares a register with an asynchronous reset: it takes reset
// as soon as the module's arst input is high, without waiting for a clock
// edge. Its reset input is arst, not rst, so no signal is used both ways.
func (m *Module) RegAsync(name string, w int, reset uint64) Value {
	return m.reg(caller(), name, w, reset, true)
}

func (m *Module) reg(p Pos, name string, w int, reset uint64, async bool) Value {
	if w < 1 {
		m.errorf(p, "register %q: width %d must be at least 1", name, w)
		return m.poison(p, 1)
	}
	if w < 64 && reset>>w != 0 {
		m.errorf(p, "register %q: reset value %#x does not fit in %d bits", name, reset, w)
		reset = 0
	}
	m.claim(p, name)
	r := make([]uint64, words(w))
	r[0] = reset
	return m.add(Node{Op: OpReg, W: w, Name: name, Reset: r, Async: async, Pos: p})
}

// RegNoReset declares a data-path register of width w that no reset
// touches: it starts at 0 (an FPGA flip-flop's value after
// configuration) and keeps its value while rst is high, which spares the
// reset's fan-out and routing. Use it for data that a valid bit with a
// reset qualifies; control (valid bits, state, counters, configuration)
// takes Reg.
func (m *Module) RegNoReset(name string, w int) Value {
	v := m.reg(caller(), name, w, 0, false)
	if n := &m.nodes[v.id]; n.Op == OpReg {
		n.NoReset = true
	}
	return v
}

// SetNext sets what register r takes at each clock edge (when enabled).
func (m *Module) SetNext(r, next Value) { m.setReg(caller(), r, next, 0) }

// SetEnable makes register r load only when en (1 bit) is high.
func (m *Module) SetEnable(r, en Value) { m.setReg(caller(), r, en, 1) }

func (m *Module) setReg(p Pos, r, v Value, slot int) {
	if !m.own(p, "register", r, v) {
		return
	}
	n := &m.nodes[r.id]
	what := [2]string{"next value", "enable"}[slot]
	want := [2]int{n.W, 1}[slot]
	switch {
	case n.Op != OpReg:
		m.errorf(p, "%s of %s: not a register", what, m.describe(r.id))
	case v.Width() != want:
		m.errorf(p, "register %q: %s is %d bits, want %d", n.Name, what, v.Width(), want)
	default:
		for len(n.Args) <= slot {
			n.Args = append(n.Args, -1)
		}
		if n.Args[slot] >= 0 {
			m.errorf(p, "register %q: %s is already set", n.Name, what)
			return
		}
		n.Args[slot] = v.id
		if slot == 0 {
			n.Drive = p
		}
	}
}

// describe names node i for messages.
func (m *Module) describe(i int) string {
	n := &m.nodes[i]
	if n.Op == OpInstOut {
		inst := &m.nodes[n.Args[0]]
		return fmt.Sprintf("output %q of instance %q", inst.Sub.ports[n.Port].Name, inst.Name)
	}
	if n.Name != "" {
		return fmt.Sprintf("%s %q", n.Op, n.Name)
	}
	return fmt.Sprintf("%s (%s)", n.Op, n.Pos)
}

// binary builds an op on two equal-width operands, of width w (0: theirs).
func (m *Module) binary(op Op, a, b Value, w int) Value {
	p := caller()
	if !m.own(p, op.String(), a, b) {
		return m.poison(p, w)
	}
	if a.Width() != b.Width() {
		m.errorf(p, "%s: operands are %d and %d bits; widths must be equal (extend or slice explicitly)", op, a.Width(), b.Width())
		return m.poison(p, max(w, a.Width()))
	}
	if w == 0 {
		w = a.Width()
	}
	return m.add(Node{Op: op, W: w, Args: []int{a.id, b.id}, Pos: p})
}

// Add is a+b, wrapping.
func (m *Module) Add(a, b Value) Value { return m.binary(OpAdd, a, b, 0) }

// Sub is a-b, wrapping.
func (m *Module) Sub(a, b Value) Value { return m.binary(OpSub, a, b, 0) }

// SatAddU is a+b as unsigned numbers of a's width (b no wider), or all
// ones where the sum does not fit: a counter that saturates rather than
// wrapping, so that a count that overflowed never reads small.
func (m *Module) SatAddU(a, b Value) Value {
	Helper()
	w := a.Width()
	if b.Width() > w {
		panic(fmt.Sprintf("ir: SatAddU of %d bits to %d", b.Width(), w))
	}
	// A narrower b is widened where each use needs it (the two uses
	// then print inline, not through a made-up temporary).
	wide := func() Value {
		if b.Width() < w {
			return m.Zext(b, w)
		}
		return b
	}
	// a+b overflows when b is more than what a lacks of all ones (^a):
	// worked out beside the sum, so that no wider sum is needed twice.
	return m.Mux(m.LtU(m.Not(a), wide()), m.Not(m.Const(w, 0)), m.Add(a, wide()))
}

// And is a&b.
func (m *Module) And(a, b Value) Value { return m.binary(OpAnd, a, b, 0) }

// Or is a|b.
func (m *Module) Or(a, b Value) Value { return m.binary(OpOr, a, b, 0) }

// Xor is a^b.
func (m *Module) Xor(a, b Value) Value { return m.binary(OpXor, a, b, 0) }

// Eq is a==b (1 bit).
func (m *Module) Eq(a, b Value) Value { return m.binary(OpEq, a, b, 1) }

// Ne is a!=b (1 bit).
func (m *Module) Ne(a, b Value) Value { return m.binary(OpNe, a, b, 1) }

// LtU is a<b as unsigned numbers (1 bit).
func (m *Module) LtU(a, b Value) Value { return m.binary(OpLtU, a, b, 1) }

// LtS is a<b as two's-complement numbers (1 bit).
func (m *Module) LtS(a, b Value) Value { return m.binary(OpLtS, a, b, 1) }

// unary builds an op on one operand, of width w (0: its width).
func (m *Module) unary(op Op, a Value, w int) Value {
	p := caller()
	if !m.own(p, op.String(), a) {
		return m.poison(p, w)
	}
	if w == 0 {
		w = a.Width()
	}
	return m.add(Node{Op: op, W: w, Args: []int{a.id}, Pos: p})
}

// Not is ^a.
func (m *Module) Not(a Value) Value { return m.unary(OpNot, a, 0) }

// RedOr is |a (1 bit).
func (m *Module) RedOr(a Value) Value { return m.unary(OpRedOr, a, 1) }

// RedAnd is &a (1 bit).
func (m *Module) RedAnd(a Value) Value { return m.unary(OpRedAnd, a, 1) }

// RedXor is ^a, the parity (1 bit).
func (m *Module) RedXor(a Value) Value { return m.unary(OpRedXor, a, 1) }

// Mux is sel ? a : b, with sel 1 bit and a, b of equal widths.
func (m *Module) Mux(sel, a, b Value) Value {
	p := caller()
	if !m.own(p, "mux", sel, a, b) {
		return m.poison(p, a.Width())
	}
	if sel.Width() != 1 {
		m.errorf(p, "mux: the select is %d bits; it must be 1", sel.Width())
		return m.poison(p, a.Width())
	}
	if a.Width() != b.Width() {
		m.errorf(p, "mux: the choices are %d and %d bits; widths must be equal (extend or slice explicitly)", a.Width(), b.Width())
		return m.poison(p, max(a.Width(), b.Width()))
	}
	return m.add(Node{Op: OpMux, W: a.Width(), Args: []int{sel.id, a.id, b.id}, Pos: p})
}

// Slice is bits [lo+w-1:lo] of a.
func (m *Module) Slice(a Value, lo, w int) Value {
	p := caller()
	if !m.own(p, "slice", a) {
		return m.poison(p, w)
	}
	if lo < 0 || w < 1 || lo+w > a.Width() {
		m.errorf(p, "slice: bits [%d:%d] are outside a %d-bit value", lo+w-1, lo, a.Width())
		return m.poison(p, w)
	}
	if lo == 0 && w == a.Width() {
		return a
	}
	return m.add(Node{Op: OpSlice, W: w, Args: []int{a.id}, Lo: lo, Pos: p})
}

// Concat joins parts, the first the most significant.
func (m *Module) Concat(parts ...Value) Value {
	p := caller()
	if len(parts) == 0 {
		m.errorf(p, "concat: needs at least one part")
		return m.poison(p, 1)
	}
	if !m.own(p, "concat", parts...) {
		return m.poison(p, 1)
	}
	w := 0
	args := make([]int, len(parts))
	for i, v := range parts {
		w += v.Width()
		args[i] = v.id
	}
	return m.add(Node{Op: OpConcat, W: w, Args: args, Pos: p})
}

// extend builds a zero or sign extension to w.
func (m *Module) extend(op Op, a Value, w int) Value {
	p := caller()
	if !m.own(p, op.String(), a) {
		return m.poison(p, w)
	}
	if w < a.Width() {
		m.errorf(p, "%s: cannot extend %d bits to %d (slice to narrow)", op, a.Width(), w)
		return m.poison(p, w)
	}
	if w == a.Width() {
		return a
	}
	return m.add(Node{Op: op, W: w, Args: []int{a.id}, Pos: p})
}

// Zext zero-extends a to w bits.
func (m *Module) Zext(a Value, w int) Value { return m.extend(OpZext, a, w) }

// Sext sign-extends a to w bits.
func (m *Module) Sext(a Value, w int) Value { return m.extend(OpSext, a, w) }

// Mul is the unsigned product a*b, as wide as a and b together (never
// truncated).
func (m *Module) Mul(a, b Value) Value {
	p := caller()
	if !m.own(p, "mul", a, b) {
		return m.poison(p, a.Width()+b.Width())
	}
	return m.add(Node{Op: OpMul, W: a.Width() + b.Width(), Args: []int{a.id, b.id}, Pos: p})
}

// shiftBy builds a shift of a by the unsigned amount n.
func (m *Module) shiftBy(op Op, a, n Value) Value {
	p := caller()
	if !m.own(p, op.String(), a, n) {
		return m.poison(p, a.Width())
	}
	return m.add(Node{Op: op, W: a.Width(), Args: []int{a.id, n.id}, Pos: p})
}

// Shl is a shifted left by n bits (n unsigned, any width), zeros in.
func (m *Module) Shl(a, n Value) Value { return m.shiftBy(OpShl, a, n) }

// Shr is a shifted right by n bits, zeros in.
func (m *Module) Shr(a, n Value) Value { return m.shiftBy(OpShr, a, n) }

// Sar is a shifted right by n bits, copies of its sign bit in.
func (m *Module) Sar(a, n Value) Value { return m.shiftBy(OpSar, a, n) }

// ShlC is a shifted left by the constant n: wiring, no logic.
func (m *Module) ShlC(a Value, n int) Value {
	w := a.Width()
	switch {
	case n <= 0:
		return a
	case n >= w:
		return m.Const(w, 0)
	}
	return m.Concat(m.Slice(a, 0, w-n), m.Const(n, 0))
}

// ShrC is a shifted right by the constant n, zeros in.
func (m *Module) ShrC(a Value, n int) Value {
	w := a.Width()
	switch {
	case n <= 0:
		return a
	case n >= w:
		return m.Const(w, 0)
	}
	return m.Zext(m.Slice(a, n, w-n), w)
}

// SarC is a shifted right by the constant n, copies of the sign bit in.
func (m *Module) SarC(a Value, n int) Value {
	w := a.Width()
	if n <= 0 {
		return a
	}
	n = min(n, w-1)
	return m.Sext(m.Slice(a, n, w-n), w)
}

// Memory declares a synchronous RAM of depth words (a power of two, at
// least 2) of w bits, with no reset: what FPGA block RAMs are. Read it
// with ReadPort and write it with WritePort.
func (m *Module) Memory(name string, depth, w int) Value {
	p := caller()
	if depth < 2 || depth&(depth-1) != 0 || w < 1 {
		m.errorf(p, "memory %q: depth %d must be a power of two of at least 2, width %d at least 1", name, depth, w)
		return m.poison(p, max(w, 1))
	}
	m.claim(p, name)
	return m.add(Node{Op: OpMem, W: w, Depth: depth, Name: name, Pos: p})
}

// AddrBits is the address width of a memory of depth words.
func AddrBits(depth int) int { return bits.Len(uint(depth - 1)) }

// memArgs checks that mem is a memory and addr addresses it exactly.
func (m *Module) memArgs(p Pos, what string, mem, addr Value) bool {
	if !m.own(p, what, mem, addr) {
		return false
	}
	n := &m.nodes[mem.id]
	if n.Op != OpMem {
		m.errorf(p, "%s: %s is not a memory", what, m.describe(mem.id))
		return false
	}
	if want := AddrBits(n.Depth); addr.Width() != want {
		m.errorf(p, "%s: memory %q of %d words takes a %d-bit address, not %d", what, n.Name, n.Depth, want, addr.Width())
		return false
	}
	return true
}

// ReadPort reads mem at addr on each rising edge when en (1 bit) is high;
// the word appears after the edge (a registered read) and holds
// otherwise. A word written on the same edge reads as its old value
// (read-first), never undefined.
func (m *Module) ReadPort(mem, addr, en Value) Value {
	p := caller()
	if !m.memArgs(p, "read port", mem, addr) || !m.own(p, "read port", en) {
		return m.poison(p, mem.Width())
	}
	if en.Width() != 1 {
		m.errorf(p, "read port: enable is %d bits, want 1", en.Width())
		return m.poison(p, mem.Width())
	}
	return m.add(Node{Op: OpMemRead, W: mem.Width(), Args: []int{mem.id, addr.id, en.id}, Pos: p})
}

// WritePort writes data to mem at addr on each rising edge when en is
// high. With byteEn (one bit per byte of a word whose width is a multiple
// of 8) only the enabled bytes change; pass the zero Value for whole-word
// writes.
func (m *Module) WritePort(mem, addr, data, en, byteEn Value) {
	p := caller()
	if !m.memArgs(p, "write port", mem, addr) || !m.own(p, "write port", data, en) {
		return
	}
	n := &m.nodes[mem.id]
	if data.Width() != n.W || en.Width() != 1 {
		m.errorf(p, "write port: data is %d bits (memory %q: %d), enable %d bits (want 1)", data.Width(), n.Name, n.W, en.Width())
		return
	}
	be := -1
	if byteEn.m != nil {
		if !m.own(p, "write port", byteEn) {
			return
		}
		if n.W%8 != 0 || byteEn.Width() != n.W/8 {
			m.errorf(p, "write port: byte enables are %d bits; memory %q of %d-bit words needs %d", byteEn.Width(), n.Name, n.W, n.W/8)
			return
		}
		be = byteEn.id
	}
	m.add(Node{Op: OpMemWrite, W: 1, Args: []int{mem.id, addr.id, data.id, en.id, be}, Pos: p})
}

// Inline copies sub's logic into m — the way to use one module inside
// another: sub's wires, registers and memories get their names prefixed
// with prefix and an underscore, its inputs are driven by inputs (by
// input name; every one must be given, at its width), and its outputs are
// returned by name. The copied nodes keep the source positions of sub's
// builder calls, so generated comments still point there. Mistakes are
// recorded at the caller's line, like every other builder error.
func (m *Module) Inline(prefix string, sub *Module, inputs map[string]Value) map[string]Value {
	p := caller()
	outs := map[string]Value{}
	if err := sub.Check(); err != nil {
		m.errorf(p, "inline %s: module %s has errors: %v", prefix, sub.name, strings.ReplaceAll(err.Error(), "\n", "; "))
		return outs
	}
	// Where each of sub's nodes lands in m: inputs at the values given
	// (or a poison constant, after an error), everything else at new
	// nodes appended in sub's order.
	at := m.connect(p, "inline "+prefix, sub, inputs)
	next := len(m.nodes)
	for i := range sub.nodes {
		if sub.nodes[i].Op != OpInput {
			at[i], next = next, next+1
		}
	}
	for i := range sub.nodes {
		n := sub.nodes[i]
		if n.Op == OpInput {
			continue
		}
		n.Args = append([]int(nil), n.Args...)
		for k, a := range n.Args {
			if a >= 0 {
				n.Args[k] = at[a]
			}
		}
		if n.Name != "" {
			n.Name = prefix + "_" + n.Name
			m.claim(p, n.Name)
		}
		m.nodes = append(m.nodes, n)
	}
	for _, port := range sub.ports {
		if port.Output {
			outs[port.Name] = Value{m, at[port.Node]}
		}
	}
	return outs
}

// HasInput reports whether m has an input port named name (a generator
// whose ports depend on its configuration: a manager with stand-ins takes
// s_host_tlp_func).
func (m *Module) HasInput(name string) bool { return m.inputIndex(name) >= 0 }

// inputIndex is the node of m's input name, or -1.
func (m *Module) inputIndex(name string) int {
	for _, p := range m.ports {
		if !p.Output && p.Name == name {
			return p.Node
		}
	}
	return -1
}

// sortedKeys yields the keys of vs in order, so errors come out the same
// every time.
func sortedKeys(vs map[string]Value) func(func(string) bool) {
	keys := make([]string, 0, len(vs))
	for k := range vs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return func(yield func(string) bool) {
		for _, k := range keys {
			if !yield(k) {
				return
			}
		}
	}
}

// built is every error made while building so far. A mistake in code
// that runs once per lane is one mistake: each distinct error is there
// once, with how many times it was made.
func (m *Module) built() []error {
	var errs []error
	first := map[Error]*Error{}
	for _, err := range m.errs {
		e, ok := err.(*Error)
		if !ok {
			errs = append(errs, err)
			continue
		}
		key := Error{Pos: e.Pos, Msg: e.Msg}
		if f := first[key]; f != nil {
			f.times++
			continue
		}
		c := &Error{Pos: e.Pos, Msg: e.Msg, times: 1}
		first[key] = c
		errs = append(errs, c)
	}
	return errs
}

// Err returns the errors made while building so far (each distinct one
// once), without Check's structural checks: for a builder that must stop
// before finishing a module its user's code got wrong.
func (m *Module) Err() error { return errors.Join(m.built()...) }

// Errorf records a mistake in the user's code at the position where v
// was built (a value of the wrong kind handed back to a framework, say),
// reported with the others by Check and Err.
func (m *Module) Errorf(v Value, format string, a ...any) {
	p := Pos{}
	if v.m == m && v.id >= 0 && v.id < len(m.nodes) {
		p = m.nodes[v.id].Pos
	}
	m.errorf(p, format, a...)
}

// Check returns every error made while building, then the structural
// ones: wires never driven, registers without a next value, and
// combinational loops (with the path around the loop).
func (m *Module) Check() error {
	errs := m.built()
	for i := range m.nodes {
		n := &m.nodes[i]
		switch {
		case n.Op == OpWire && len(n.Args) == 0:
			errs = append(errs, &Error{Pos: n.Pos, Msg: fmt.Sprintf("wire %q is never driven", n.Name)})
		case n.Op == OpReg && (len(n.Args) == 0 || n.Args[0] < 0):
			errs = append(errs, &Error{Pos: n.Pos, Msg: fmt.Sprintf("register %q has no next value", n.Name)})
		}
	}
	if len(errs) == 0 {
		if err := m.loops(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// loops finds a combinational cycle: registers break paths, everything
// else passes its operands through.
func (m *Module) loops() error {
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, len(m.nodes))
	var stack []int
	var visit func(i int) error
	visit = func(i int) error {
		colour[i] = grey
		stack = append(stack, i)
		// Registers, memory ports and instances break paths; an
		// instance's output follows only the inputs its module passes
		// through combinationally.
		if op := m.nodes[i].Op; op != OpReg && op != OpMemRead && op != OpMemWrite && op != OpInstance {
			args := m.nodes[i].Args
			if op == OpInstOut {
				args = args[1:]
			}
			for _, a := range args {
				switch colour[a] {
				case grey:
					start := 0
					for k, s := range stack {
						if s == a {
							start = k
						}
					}
					var path []string
					for _, s := range stack[start:] {
						path = append(path, m.describe(s))
					}
					return &Error{Pos: m.nodes[a].Pos, Msg: "combinational loop: " + strings.Join(path, " <- ") + " <- " + m.describe(a)}
				case white:
					if err := visit(a); err != nil {
						return err
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		colour[i] = black
		return nil
	}
	for i := range m.nodes {
		if colour[i] == white {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// ROM is words[idx]: a read-only table of w-bit constants (idx past the
// end reads 0), built as a balanced tree of multiplexers over the bits of
// idx, most significant first, in which a subtree whose words are all
// equal becomes one constant. A table of n distinct words therefore costs
// at most n-1 multiplexers and log2(len(words)) levels of logic.
func (m *Module) ROM(idx Value, w int, words []uint64) Value {
	p := caller()
	if !m.own(p, "rom", idx) {
		return m.poison(p, w)
	}
	if w < 1 || w > 64 {
		m.errorf(p, "rom: width %d must be 1 to 64", w)
		return m.poison(p, w)
	}
	for i, v := range words {
		if w < 64 && v>>w != 0 {
			m.errorf(p, "rom: word %d (%#x) does not fit in %d bits", i, v, w)
			return m.poison(p, w)
		}
	}
	if idx.Width() < 64 && len(words) > 1<<idx.Width() {
		m.errorf(p, "rom: %d words cannot be indexed by %d bits", len(words), idx.Width())
		return m.poison(p, w)
	}
	word := func(i int) uint64 {
		if i < len(words) {
			return words[i]
		}
		return 0
	}
	cst := func(v uint64) Value {
		return m.add(Node{Op: OpConst, W: w, Const: []uint64{v}, Pos: p})
	}
	var tree func(bit, lo int) Value
	tree = func(bit, lo int) Value {
		// The words lo .. lo+2^bit-1, selected by idx[bit-1:0].
		n := 1 << bit
		same := true
		for i := lo + 1; i < lo+n && same; i++ {
			same = word(i) == word(lo)
		}
		if same || lo >= len(words) {
			return cst(word(lo))
		}
		sel := m.add(Node{Op: OpSlice, W: 1, Args: []int{idx.id}, Lo: bit - 1, Pos: p})
		hi := tree(bit-1, lo+n/2)
		low := tree(bit-1, lo)
		return m.add(Node{Op: OpMux, W: w, Args: []int{sel.id, hi.id, low.id}, Pos: p})
	}
	bits := min(AddrBits(max(len(words), 1)), idx.Width())
	v := tree(bits, 0)
	if bits < idx.Width() && len(words) > 0 {
		// Indexes with any higher bit set read 0.
		high := m.add(Node{Op: OpSlice, W: idx.Width() - bits, Args: []int{idx.id}, Lo: bits, Pos: p})
		any := m.add(Node{Op: OpRedOr, W: 1, Args: []int{high.id}, Pos: p})
		v = m.add(Node{Op: OpMux, W: w, Args: []int{any.id, cst(0).id, v.id}, Pos: p})
	}
	if n := &m.nodes[v.id]; n.Op == OpMux {
		n.Table = &Table{Index: idx.id, Words: slices.Clone(words)}
	}
	return v
}

// FlagBits says that the words of ROM table v are flags, and names its
// bits, bit 0 first: a printer writes the words in binary under a
// legend of the names. v must be a ROM's result with one name a bit.
func (m *Module) FlagBits(v Value, names ...string) {
	p := caller()
	if !m.own(p, "flag bits", v) {
		return
	}
	n := &m.nodes[v.id]
	switch {
	case n.Table == nil:
		m.errorf(p, "flag bits: %s is not a table (ROM)", n.Op)
	case len(names) != n.W:
		m.errorf(p, "flag bits: %d names for %d bits", len(names), n.W)
	default:
		n.Table.Bits = slices.Clone(names)
	}
}

// Pick is the value of vals whose select in sels is set, or zero if none
// is — for selects of which at most one can be set (the windows an
// address can fall in, the entries of a table it can match). It is an
// OR over AND-masked choices, built as a balanced tree, so its depth
// grows with the log of the number of choices where a priority chain of
// multiplexers would grow linearly. With more than one select set the
// result is the OR of their values.
func (m *Module) Pick(sels, vals []Value) Value {
	p := caller()
	if len(sels) != len(vals) || len(vals) == 0 {
		m.errorf(p, "pick: %d selects for %d values (want equal, at least 1)", len(sels), len(vals))
		return m.poison(p, 1)
	}
	w := vals[0].Width()
	terms := make([]Value, len(vals))
	for i := range vals {
		if !m.own(p, "pick", sels[i], vals[i]) {
			return m.poison(p, w)
		}
		if sels[i].Width() != 1 || vals[i].Width() != w {
			m.errorf(p, "pick: choice %d has a %d-bit select and a %d-bit value (want 1 and %d)", i, sels[i].Width(), vals[i].Width(), w)
			return m.poison(p, w)
		}
		zero := m.add(Node{Op: OpConst, W: w, Const: make([]uint64, words(w)), Pos: p})
		terms[i] = m.add(Node{Op: OpMux, W: w, Args: []int{sels[i].id, vals[i].id, zero.id}, Pos: p})
	}
	for len(terms) > 1 {
		next := terms[:0:0]
		for i := 0; i+1 < len(terms); i += 2 {
			next = append(next, m.add(Node{Op: OpOr, W: w, Args: []int{terms[i].id, terms[i+1].id}, Pos: p}))
		}
		if len(terms)%2 == 1 {
			next = append(next, terms[len(terms)-1])
		}
		terms = next
	}
	return terms[0]
}

// PopCount is the number of ones in v, as an adder tree (bits.Len of
// v's width wide: a byte keep's count of kept bytes).
func (m *Module) PopCount(v Value) Value {
	n := v.Width()
	if n <= 1 {
		return v
	}
	lo, hi := m.PopCount(m.Slice(v, 0, n/2)), m.PopCount(m.Slice(v, n/2, n-n/2))
	w := bits.Len(uint(n))
	return m.Add(m.Zext(lo, w), m.Zext(hi, w))
}

// Any is the OR of 1-bit values, as a balanced tree (0 for none).
func (m *Module) Any(vs ...Value) Value {
	p := caller()
	if len(vs) == 0 {
		return m.add(Node{Op: OpConst, W: 1, Const: []uint64{0}, Pos: p})
	}
	for i, v := range vs {
		if !m.own(p, "any", v) {
			return m.poison(p, 1)
		}
		if v.Width() != 1 {
			m.errorf(p, "any: value %d is %d bits (want 1)", i, v.Width())
			return m.poison(p, 1)
		}
	}
	terms := append([]Value(nil), vs...)
	for len(terms) > 1 {
		next := terms[:0:0]
		for i := 0; i+1 < len(terms); i += 2 {
			next = append(next, m.add(Node{Op: OpOr, W: 1, Args: []int{terms[i].id, terms[i+1].id}, Pos: p}))
		}
		if len(terms)%2 == 1 {
			next = append(next, terms[len(terms)-1])
		}
		terms = next
	}
	return terms[0]
}

// ConstWords is a constant of width w whose value is given as
// little-endian 64-bit words (for constants wider than 64 bits); bits
// beyond w must be zero.
func (m *Module) ConstWords(w int, val []uint64) Value {
	p := caller()
	if w < 1 || len(val) > words(w) {
		m.errorf(p, "constant: %d words do not make a value of %d bits", len(val), w)
		return m.poison(p, max(w, 1))
	}
	c := make([]uint64, words(w))
	copy(c, val)
	if w%64 != 0 && c[len(c)-1]>>(w%64) != 0 {
		m.errorf(p, "constant does not fit in %d bits", w)
		return m.poison(p, w)
	}
	return m.add(Node{Op: OpConst, W: w, Const: c, Pos: p})
}
