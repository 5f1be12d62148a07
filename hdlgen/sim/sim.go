// Package sim is the cycle simulator of hdlgen/ir modules: a module is
// compiled once into a levelised list of instructions over one 64-bit
// slot per signal, and each clock cycle runs the list and then commits the
// registers. A slow reference evaluator (Reference) computes the same
// thing by walking the netlist with big integers; tests and a fuzz target
// hold the two equal, in the manner of Amaranth's simulators.
//
// Every signal has its words in one array: one word for a signal of up to
// 64 bits, (w+63)/64 for a wider one (a 512-bit tdata bus), least
// significant first. Operations on signals of up to 64 bits run on a fast
// path, one word each; the few on wider ones go through a multi-word
// evaluator, so a 512-bit data path costs its wide operations only.
package sim

import (
	"fmt"
	"slices"

	"onic/hdlgen/ir"
)

// inst is one compiled operation: v[dst] = op(v[a], v[b], ...), over
// word offsets into Sim.v. It is 32 bytes, two to a cache line.
type inst struct {
	mask      uint64 // result mask
	dst, a, b int32
	c         int32 // mux: third operand; concat: part count (parts from b in Sim.parts); opSliceW: 1 if the slice spans two words
	node      int32 // the node it computes
	op        ir.Op
	sh        uint8 // slice: low bit (opSliceW: within word a)
	aw        uint8 // width of operand a
}

// Instructions beyond the IR's operations.
const (
	// opWide is an operation with an operand or result over 64 bits: a
	// is its node, evaluated word by word (evalWide).
	opWide ir.Op = 200 + iota
	// opSliceW is a slice of at most 64 bits out of a wider signal: a is
	// the word holding its low bit.
	opSliceW
)

// readPort is a registered memory read; writePort a memory write. Their
// fields are word offsets (mem: which memory).
type readPort struct {
	slot, mem, addr, en, nw int32
}

type writePort struct {
	mem, addr, data, en, be int32 // be -1: whole words
	bytes, nw               int32
}

// reg is a register's commit: word offsets of itself, its next value and
// its enable (-1: always).
type reg struct {
	slot, next, en int32
	nw             int32    // words
	reset          []uint64 // reset value's words
	async          bool
	noReset        bool // a data-path register: rst leaves it alone
}

// Sim simulates one module. It is not safe for concurrent use.
type Sim struct {
	m       *ir.Module
	v       []uint64 // every signal's words
	off     []int32  // each node's first word (wires and same-size zero-extensions share their operand's)
	nw      []int32  // each node's word count
	prog    []inst   // the combinational logic, levelised: first what only the state reaches, then what the inputs reach
	split   int      // prog[split:] is the inputs' cone
	stale   bool     // the inputs' cone is out of date (inputs driven or the state changed since it ran)
	regs    []reg
	layers  []copyLayer // the delay lines' stages, each one array copy (layout)
	staged  []uint64    // register next values, staged so all commit at once
	parts   []int32     // concat operands, then their widths: see compile
	mems    [][]uint64  // memories' words, nw per entry
	reads   []readPort
	writes  []writePort
	rstaged []uint64 // read ports' words, staged like registers
	inputs  map[string]int32
	outputs map[string]int32
	rst     bool
	arst    bool
	cycles  uint64
	vcd     *vcd // nil unless TraceVCD was called
	// vcdAt is the time VCDTime gave (vcdAtSet: it was called).
	vcdAt    uint64
	vcdAtSet bool
	at       []int      // where each node of the module given to New went in the flattened one (nil: not flattened)
	model    Model      // the compiled simulator running this program (nil: interpreted)
	sent     [2]bool    // the rst and arst the model last had (SetResets; a new model has both low)
	whole    bool       // v holds every signal's value, the dead ones' and (with a model) the ones generated code keeps in variables
	dead     []inst     // the logic nothing observable reads (levelised), evaluated only when a value is asked for
	roms     [][]uint64 // the ROMs looked up by opTable, padded to one word per index value
}

// Model is a simulator GoSource generated for one program: v and the
// memories are its arrays, and its methods run the program's parts.
type Model interface {
	// Fingerprint identifies the program (the module as compiled).
	Fingerprint() string
	// Words and Memories are the model's state, in New's layout.
	Words() []uint64
	Memories() [][]uint64
	// SetResets drives rst and arst for the next Edge.
	SetResets(rst, arst bool)
	// EvalState settles the logic no input reaches; EvalInputs the
	// inputs' cone (after EvalState).
	EvalState()
	EvalInputs()
	// Edge is one rising edge without any evaluation; it reports whether
	// a register or read port may have changed (false lets the next
	// EvalState be skipped; generated code always says true).
	Edge() bool
	// Touch says the state was written from outside (an asynchronous
	// reset), so the next EvalState evaluates all of it: generated
	// EvalState evaluates only what reads the state the edges changed
	// (and, in a design too big for the activity mask, EvalInputs only
	// what reads a word that changed: all of it after Touch too).
	Touch()
}

var models = map[string]func() Model{}

// Register makes New run modules whose program has the fingerprint of
// the models newModel returns on that compiled code instead of the
// interpreter. The files GoSource generates call it from init; a model
// whose module has since changed has another fingerprint and is not used.
func Register(newModel func() Model) { models[newModel().Fingerprint()] = newModel }

// New compiles m. Instances are flattened first (ir.Flatten), so a
// hierarchy simulates as one netlist; Value still takes m's node indices.
// If code GoSource generated for the same program is linked in (Register),
// the simulation runs on it; Compiled says whether it does.
func New(m *ir.Module) (*Sim, error) {
	if len(models) == 0 {
		return NewInterpreter(m)
	}
	s, err := compile(m, true)
	if err != nil {
		return s, err
	}
	if newModel, ok := models[s.fingerprint()]; ok {
		x := newModel()
		if len(x.Words()) == max(len(s.v), 1) {
			copy(x.Words(), s.v)
			s.v = x.Words()[:len(s.v)]
			s.mems = x.Memories()
			s.model = x
		}
	}
	return s, nil
}

// Compiled reports whether the simulation runs on generated code (New
// found it registered) rather than on the interpreter.
func (s *Sim) Compiled() bool { return s.model != nil }

// NewInterpreter is New without generated code: the program is always
// interpreted (for holding generated code to the interpreter).
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func NewInterpreter(m *ir.Module) (*Sim, error) { return compile(m, false) }

// compile flattens, simplifies and builds m; with hotLayout, a program of
// hotLayoutWords words or more is built again with the words generated
// code touches first (as GoSource and New lay it out, so that their
// fingerprints agree; interpreting, the layout makes no difference).
func compile(m *ir.Module, hotLayout bool) (*Sim, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	m, at := ir.Flatten(m)
	m = simplify(m)
	s, err := build(m, at, nil)
	if err != nil || !hotLayout || len(s.v) < hotLayoutWords {
		return s, err
	}
	return build(m, at, s.hot())
}

// build compiles the flattened, simplified module m; the nodes hot marks
// (nil: all) get their words first (hot).
//
// Long: one compiler pass whose steps share its work lists and maps;
// pieces would pass them all back and forth.
func build(m *ir.Module, at []int, hot []bool) (*Sim, error) {
	s := &Sim{m: m, at: at, inputs: map[string]int32{}, outputs: map[string]int32{}}
	words := func(i int) int32 { return int32((m.Node(i).W + 63) / 64) }
	// A wire, or a zero-extension to as many words, is its operand's
	// value: it shares the operand's words and costs no instruction. So
	// is a slice of whole words (a bus taken out of a wider register: a
	// task shell's output data), which shares those of the operand's
	// words, from the word it starts at (from).
	rep, from := make([]int32, m.Len()), make([]int32, m.Len())
	for i := range rep {
		rep[i] = int32(i)
		switch n := m.Node(i); {
		case (n.Op == ir.OpWire || n.Op == ir.OpZext) && words(i) == words(n.Args[0]):
			rep[i] = int32(n.Args[0])
		case n.Op == ir.OpSlice && n.Lo%64 == 0 && n.W%64 == 0:
			rep[i], from[i] = int32(n.Args[0]), int32(n.Lo/64)
		}
	}
	for i := range rep { // follow chains (a wire may be driven by a later node; Check ruled out loops)
		for rep[i] != rep[rep[i]] {
			from[i] += from[rep[i]]
			rep[i] = rep[rep[i]]
		}
	}
	s.off, s.nw = make([]int32, m.Len()), make([]int32, m.Len())
	total := int32(0)
	for i := range rep {
		s.nw[i] = words(i)
	}
	order, layers := layout(m, rep, from, words)
	if hot != nil {
		var cold []int
		order = slices.DeleteFunc(order, func(i int) bool {
			if !hot[i] {
				cold = append(cold, i)
			}
			return !hot[i]
		})
		order = append(order, cold...)
	}
	for _, i := range order { // (a memory's and a write port's words stay zero: their value is no signal's)
		s.off[i] = total
		total += s.nw[i]
	}
	for i := range rep {
		s.off[i] = s.off[rep[i]] + from[i]
	}
	s.v = make([]uint64, total)
	for _, p := range m.Ports() {
		if p.Output {
			s.outputs[p.Name] = int32(p.Node)
		} else {
			s.inputs[p.Name] = int32(p.Node)
		}
	}
	// Levelise: every combinational node after its operands; registers,
	// inputs and constants are sources.
	state := make([]uint8, m.Len()) // 0 new, 1 visiting, 2 done
	var visit func(i int)
	visit = func(i int) {
		if state[i] != 0 {
			return
		}
		state[i] = 1
		n := m.Node(i)
		switch n.Op {
		case ir.OpInput, ir.OpReg, ir.OpMem, ir.OpMemRead, ir.OpMemWrite:
			// sources and sinks: operands are compiled through their own visits
		case ir.OpConst:
			copy(s.get(i), n.Const)
		default:
			if t := tableOf(m, i); t != nil {
				visit(t.Index) // (the tree too, below: its nodes stay readable)
			}
			for _, a := range n.Args {
				visit(a)
			}
			if rep[i] == int32(i) {
				s.prog = append(s.prog, s.compile(i))
			}
		}
		state[i] = 2
	}
	for i := 0; i < m.Len(); i++ {
		visit(i)
	}
	s.prune()
	s.splitProg()
	regOf := map[int]int{}
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.Op == ir.OpReg {
			regOf[i] = len(s.regs)
			r := reg{slot: s.off[i], next: s.off[n.Args[0]], en: -1, nw: s.nw[i], reset: n.Reset, async: n.Async, noReset: n.NoReset}
			if len(n.Args) > 1 && n.Args[1] >= 0 {
				r.en = s.off[n.Args[1]]
			}
			s.regs = append(s.regs, r)
			copy(s.get(i), n.Reset)
		}
	}
	s.layers = s.copyLayers(layers, regOf)
	memOf := map[int]int32{}
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.Op == ir.OpMem {
			memOf[i] = int32(len(s.mems))
			s.mems = append(s.mems, make([]uint64, n.Depth*int(s.nw[i])))
		}
	}
	staged := 0
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		switch n.Op {
		case ir.OpMemRead:
			s.reads = append(s.reads, readPort{slot: s.off[i], mem: memOf[n.Args[0]], addr: s.off[n.Args[1]], en: s.off[n.Args[2]], nw: s.nw[i]})
			staged += int(s.nw[i])
		case ir.OpMemWrite:
			be := int32(-1)
			if n.Args[4] >= 0 {
				be = s.off[n.Args[4]]
			}
			s.writes = append(s.writes, writePort{mem: memOf[n.Args[0]], addr: s.off[n.Args[1]], data: s.off[n.Args[2]],
				en: s.off[n.Args[3]], be: be, bytes: int32(m.Node(n.Args[0]).W / 8), nw: s.nw[n.Args[0]]})
		}
	}
	s.rstaged = make([]uint64, staged)
	for _, r := range s.regs {
		staged += int(r.nw)
	}
	s.staged = make([]uint64, staged-len(s.rstaged))
	s.eval(0, len(s.prog))
	return s, nil
}

// prune moves the logic nothing observable reads (no port, register,
// memory port, nor anything they read) out of prog into dead, which
// valueWords runs only when a value is asked for: dead logic costs no
// cycle. The program stays levelised, and so does dead (a dead node reads
// only what is evaluated before it, live or dead).
func (s *Sim) prune() {
	m := s.m
	live := make([]bool, m.Len())
	var mark func(i int)
	mark = func(i int) {
		if i < 0 || live[i] {
			return
		}
		live[i] = true
		if t := tableOf(m, i); t != nil {
			mark(t.Index) // (a ROM's lookup reads its index alone)
			return
		}
		switch m.Node(i).Op {
		case ir.OpReg, ir.OpMemRead, ir.OpMemWrite:
			// their operands are marked as roots below
		default:
			for _, a := range m.Node(i).Args {
				mark(a)
			}
		}
	}
	for _, p := range m.Ports() {
		mark(p.Node)
	}
	for i := 0; i < m.Len(); i++ {
		switch n := m.Node(i); n.Op {
		case ir.OpReg, ir.OpMemRead, ir.OpMemWrite:
			for _, a := range n.Args {
				mark(a)
			}
		}
	}
	var keep []inst
	for _, in := range s.prog {
		if live[in.node] {
			keep = append(keep, in)
		} else {
			s.dead = append(s.dead, in)
		}
	}
	s.prog = keep
	s.whole = len(s.dead) == 0
}

// splitProg orders the program in two parts, each still levelised: the
// operations no input reaches, then the inputs' cone. A cycle then
// evaluates every operation once: the first part after the edge (only
// the state changed), the cone once the inputs are driven (Settle, or
// lazily at the next Get or Step).
func (s *Sim) splitProg() {
	m := s.m
	cone := make([]int8, m.Len()) // 0 unknown, 1 no, 2 yes
	var reach func(i int) bool
	reach = func(i int) bool {
		if cone[i] == 0 {
			cone[i] = 1
			switch n := m.Node(i); n.Op {
			case ir.OpInput:
				cone[i] = 2
			case ir.OpReg, ir.OpMem, ir.OpMemRead, ir.OpMemWrite, ir.OpConst:
			default:
				for _, a := range n.Args {
					if a >= 0 && reach(a) {
						cone[i] = 2
					}
				}
			}
		}
		return cone[i] == 2
	}
	var state, inputs []inst
	for _, in := range s.prog {
		if reach(int(in.node)) {
			inputs = append(inputs, in)
		} else {
			state = append(state, in)
		}
	}
	s.prog = append(state, inputs...)
	s.split = len(state)
}

// get is node i's words.
func (s *Sim) get(i int) []uint64 { return s.v[s.off[i] : s.off[i]+s.nw[i]] }

func mask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

// compile turns node i into an instruction.
func (s *Sim) compile(i int) inst {
	n := s.m.Node(i)
	in := inst{op: n.Op, dst: s.off[i], mask: mask(n.W), a: -1, b: -1, c: -1, node: int32(i)}
	wide := n.W > 64
	for _, a := range n.Args {
		wide = wide || s.m.Node(a).W > 64
	}
	if wide {
		if a := n.Args[0]; n.Op == ir.OpSlice && n.W <= 64 {
			// A field of a wide signal: one or two words, shifted.
			in.op, in.a, in.sh, in.c = opSliceW, s.off[a]+int32(n.Lo/64), uint8(n.Lo%64), 0
			if n.Lo%64+n.W > 64 {
				in.c = 1
			}
			return in
		}
		in.op, in.a = opWide, int32(i)
		return in
	}
	if t := tableOf(s.m, i); t != nil {
		in.op, in.a, in.aw = opTable, s.off[t.Index], uint8(s.m.Node(t.Index).W)
		in.c = int32(-2 - len(s.roms))
		s.roms = append(s.roms, romWords(s.m, t))
		return in
	}
	if len(n.Args) > 0 {
		in.a = s.off[n.Args[0]]
		in.aw = uint8(s.m.Node(n.Args[0]).W)
	}
	if len(n.Args) > 1 {
		in.b = s.off[n.Args[1]]
	}
	if len(n.Args) > 2 {
		in.c = s.off[n.Args[2]]
	}
	switch n.Op {
	case ir.OpSlice:
		in.sh = uint8(n.Lo)
	case ir.OpConcat:
		in.b, in.c = int32(len(s.parts)), int32(len(n.Args))
		for _, a := range n.Args {
			s.parts = append(s.parts, s.off[a], int32(s.m.Node(a).W))
		}
	}
	return in
}

// eval runs prog[from:to].
func (s *Sim) eval(from, to int) {
	if s.model != nil {
		if from < s.split {
			s.model.EvalState()
		}
		if to > s.split {
			s.model.EvalInputs()
		}
		s.whole = false
		return
	}
	s.interpret(from, to)
	s.whole = len(s.dead) == 0
}

// interpret runs prog[from:to] on the interpreter.
func (s *Sim) interpret(from, to int) { s.run(s.prog[from:to]) }

// run interprets the instructions of prog.
func (s *Sim) run(prog []inst) {
	v := s.v
	for k := range prog {
		in := &prog[k]
		var r uint64
		switch in.op {
		case opWide:
			s.evalWide(int(in.a))
			continue
		case opSliceW:
			r = v[in.a] >> in.sh
			if in.c != 0 {
				r |= v[in.a+1] << (64 - in.sh)
			}
			v[in.dst] = r & in.mask
			continue
		}
		a := v[in.a] // every combinational op has an operand
		switch in.op {
		case ir.OpWire:
			r = a
		case opTable:
			r = s.roms[-2-in.c][a]
		case ir.OpAdd:
			r = a + v[in.b]
		case ir.OpSub:
			r = a - v[in.b]
		case ir.OpAnd:
			r = a & v[in.b]
		case ir.OpOr:
			r = a | v[in.b]
		case ir.OpXor:
			r = a ^ v[in.b]
		case ir.OpNot:
			r = ^a
		case ir.OpEq:
			r = b2u(a == v[in.b])
		case ir.OpNe:
			r = b2u(a != v[in.b])
		case ir.OpLtU:
			r = b2u(a < v[in.b])
		case ir.OpLtS:
			r = b2u(signed(a, in.aw) < signed(v[in.b], in.aw))
		case ir.OpMux:
			if a != 0 {
				r = v[in.b]
			} else {
				r = v[in.c]
			}
		case ir.OpSlice:
			r = a >> in.sh
		case ir.OpConcat:
			ps := s.parts[in.b : in.b+2*in.c]
			for j := 0; j < len(ps); j += 2 {
				r = r<<uint(ps[j+1]) | v[ps[j]]
			}
		case ir.OpZext:
			r = a
		case ir.OpSext:
			r = uint64(signed(a, in.aw))
		case ir.OpRedOr:
			r = b2u(a != 0)
		case ir.OpRedAnd:
			r = b2u(a == mask(int(in.aw)))
		case ir.OpRedXor:
			r = parity(a)
		case ir.OpMul:
			r = a * v[in.b]
		case ir.OpShl:
			if n := v[in.b]; n < 64 {
				r = a << n
			}
		case ir.OpShr:
			if n := v[in.b]; n < 64 {
				r = a >> n
			}
		case ir.OpSar:
			n := min(v[in.b], 63)
			r = uint64(signed(a, in.aw) >> n)
		}
		v[in.dst] = r & in.mask
	}
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// signed reads the low w bits of v as a two's-complement number.
func signed(v uint64, w uint8) int64 {
	sh := 64 - uint(w)
	return int64(v<<sh) >> sh
}

func parity(v uint64) uint64 {
	v ^= v >> 32
	v ^= v >> 16
	v ^= v >> 8
	v ^= v >> 4
	v ^= v >> 2
	v ^= v >> 1
	return v & 1
}

// SetReset holds the module's reset (rst) high or low for the next edges.
func (s *Sim) SetReset(on bool) { s.rst = on }

// SetAsyncReset drives arst: while it is high, registers with an
// asynchronous reset hold their reset value, from this moment.
func (s *Sim) SetAsyncReset(on bool) {
	s.arst = on
	if on {
		for k := range s.regs {
			if r := &s.regs[k]; r.async {
				copy(s.v[r.slot:r.slot+r.nw], r.reset)
			}
		}
		if s.model != nil {
			s.model.Touch()
		}
		s.eval(0, s.split)
		s.stale = true
	}
}

// Set drives input name with v (masked to its width); the logic it
// reaches settles before anything is read or the next edge.
func (s *Sim) Set(name string, v uint64) error { return s.SetWords(name, []uint64{v}) }

// SetWords drives input name with a value given as 64-bit words, least
// significant first (missing words are zero; bits beyond its width are
// dropped), as Set does.
func (s *Sim) SetWords(name string, v []uint64) error { return s.Drive(name, v) }

// Drive drives input name with a value given as words, as SetWords does.
// Driving is cheap: only the logic the inputs reach is evaluated, once,
// when a value is next read (Get, Value, ...), at Settle, or at the next
// Step, however many inputs were driven.
func (s *Sim) Drive(name string, v []uint64) error {
	i, ok := s.inputs[name]
	if !ok {
		return fmt.Errorf("module %s has no input %q", s.m.Name(), name)
	}
	s.DrivePort(s.portAt(i, true), v)
	return nil
}

// Port is a handle on an input or output for driving or reading it
// without looking its name up each cycle (Sim.Port).
type Port struct {
	off, nw int32
	mask    uint64 // the top word's
	input   bool
}

// Port returns the handle of input or output name.
func (s *Sim) Port(name string) (Port, error) {
	i, in := s.inputs[name]
	if !in {
		var ok bool
		if i, ok = s.outputs[name]; !ok {
			return Port{}, fmt.Errorf("module %s has no port %q", s.m.Name(), name)
		}
	}
	return s.portAt(i, in), nil
}

// portAt is the handle of port node i.
func (s *Sim) portAt(i int32, input bool) Port {
	return Port{off: s.off[i], nw: s.nw[i], mask: mask(s.m.Node(int(i)).W - 64*(int(s.nw[i])-1)), input: input}
}

// DrivePort is Drive through a handle (an input's; driving an output's
// does nothing).
func (s *Sim) DrivePort(p Port, v []uint64) {
	if p.nw == 1 && len(v) == 1 && p.input { // (small enough to inline)
		s.stale = true
		s.v[p.off] = v[0] & p.mask
		return
	}
	s.driveWords(p, v)
}

// Frame is a set of inputs driven together from one vector of words
// (Sim.Frame), the way a Verilator harness stores a recorded vector into
// the model's members cycle after cycle.
type Frame struct {
	s    *Sim
	ptr  []*uint64 // each word of a vector: where it goes (an output's: scratch)
	mask []uint64  // and what of it the port keeps
	// scratch takes the words of ports that are not inputs, so a drive is
	// one loop without a test.
	scratch uint64
	// run: the words of S the vector fills, when they are one run in the
	// vector's order (a module's inputs in port order, as a kernel's
	// stream driver gives them); a drive is then one copy, and only the
	// words listed in part (places in the vector whose mask is not all
	// ones) are masked.
	run  []uint64
	part []int
}

// Frame prepares driving ports ps together: a vector holds each port's
// value in turn, its word count of words. Ports that are not inputs are
// skipped with their words.
func (s *Sim) Frame(ps []Port) *Frame {
	f := &Frame{s: s}
	run := len(ps) > 0
	for k, p := range ps {
		run = run && p.input && (k == 0 || p.off == ps[k-1].off+ps[k-1].nw)
		for j := range p.nw {
			d, m := &f.scratch, ^uint64(0)
			if p.input {
				d = &s.v[p.off+j] // (s.v never moves)
			}
			if j == p.nw-1 {
				m = p.mask
			}
			f.ptr, f.mask = append(f.ptr, d), append(f.mask, m)
			if m != ^uint64(0) {
				f.part = append(f.part, len(f.ptr)-1)
			}
		}
	}
	if run {
		f.run = s.v[ps[0].off : ps[0].off+int32(len(f.ptr))]
	}
	return f
}

// Drive drives the frame's ports from v (a short v drives the words it
// has).
func (f *Frame) Drive(v []uint64) {
	f.s.stale = true
	if f.run != nil && len(v) >= len(f.run) {
		// (one copy and the few narrow ports' masks: a word at a time
		// through the pointers cost a small kernel's replay a quarter
		// of its time)
		copy(f.run, v)
		run, mask := f.run, f.mask[:len(f.run)]
		for _, i := range f.part {
			run[i] &= mask[i]
		}
		return
	}
	n := min(len(v), len(f.ptr))
	ptr, mask, v := f.ptr[:n], f.mask[:n], v[:n]
	for i, p := range ptr {
		*p = v[i] & mask[i]
	}
}

// driveWords is DrivePort's path for a wide value, or a value given in
// other than one word (kept out of line so DrivePort inlines into a
// testbench's loop).
func (s *Sim) driveWords(p Port, v []uint64) {
	if !p.input {
		return
	}
	s.stale = true
	d := s.v[p.off : p.off+p.nw]
	for j := range d { // (a loop: clear and copy cost calls for a few words)
		if j < len(v) {
			d[j] = v[j]
		} else {
			d[j] = 0
		}
	}
	d[len(d)-1] &= p.mask
}

// Read is GetWords through a handle (valid until the next Drive or Step).
func (s *Sim) Read(p Port) []uint64 {
	s.Settle()
	return s.v[p.off : p.off+p.nw]
}

// Settle evaluates the logic the inputs reach, if an input was driven or
// the state changed since it last ran. Reading a value settles first, so
// calling it is never needed for correctness.
func (s *Sim) Settle() {
	if s.stale {
		s.eval(s.split, len(s.prog))
		s.stale = false
	}
}

// Get returns output name's value (its low 64 bits; GetWords has all).
func (s *Sim) Get(name string) (uint64, error) {
	i, ok := s.outputs[name]
	if !ok {
		return 0, fmt.Errorf("module %s has no output %q", s.m.Name(), name)
	}
	s.Settle()
	return s.get(int(i))[0], nil
}

// GetWords returns output name's value as 64-bit words, least
// significant first (valid until the next Set or Step).
func (s *Sim) GetWords(name string) ([]uint64, error) {
	i, ok := s.outputs[name]
	if !ok {
		return nil, fmt.Errorf("module %s has no output %q", s.m.Name(), name)
	}
	s.Settle()
	return s.get(int(i)), nil
}

// node maps a node of the module given to New to the simulated one.
func (s *Sim) node(i int) int {
	if s.at != nil {
		return s.at[i]
	}
	return i
}

// Value returns node i's current value (its low 64 bits).
func (s *Sim) Value(i int) uint64 { return s.ValueWords(i)[0] }

// ValueWords returns node i's current value as words, least significant
// first (valid until the next Set or Step). An instance, which has no
// value of its own (its outputs do), reads as zero.
func (s *Sim) ValueWords(i int) []uint64 {
	if j := s.node(i); j >= 0 {
		return s.valueWords(j)
	}
	return []uint64{0}
}

// valueWords is the value of node i of the simulated (flattened) module.
func (s *Sim) valueWords(i int) []uint64 {
	s.Settle()
	if !s.whole {
		// Dead logic is not evaluated each cycle, and generated code
		// keeps what only it reads in Go variables, not in v: the
		// interpreter fills in every signal's value.
		if s.model != nil {
			s.interpret(0, len(s.prog))
		}
		s.run(s.dead)
		s.whole = true
	}
	return s.get(i)
}

// Step is one rising clock edge: every register takes its reset value
// (rst high), its next value (enabled) or keeps its own, all at once; then
// the logic only the state reaches settles (the rest when next read).
func (s *Sim) Step() {
	s.Settle()
	if s.model != nil {
		if s.rst != s.sent[0] || s.arst != s.sent[1] { // (a call each edge cost a small design's replay 5%)
			s.model.SetResets(s.rst, s.arst)
			s.sent = [2]bool{s.rst, s.arst}
		}
		s.afterEdge(s.model.Edge())
		return
	}
	v := s.v
	off := 0
	for k := range s.regs {
		r := &s.regs[k]
		if r.nw == 1 {
			switch {
			case !r.noReset && (r.async && s.arst || !r.async && s.rst):
				s.staged[off] = r.reset[0]
			case r.en < 0 || v[r.en] != 0:
				s.staged[off] = v[r.next]
			default:
				s.staged[off] = v[r.slot]
			}
			off++
			continue
		}
		dst := s.staged[off : off+int(r.nw)]
		switch {
		case !r.noReset && (r.async && s.arst || !r.async && s.rst):
			copy(dst, r.reset)
		case r.en < 0 || v[r.en] != 0:
			copy(dst, v[r.next:r.next+r.nw])
		default:
			copy(dst, v[r.slot:r.slot+r.nw])
		}
		off += int(r.nw)
	}
	// Memory reads see the words before this edge's writes (read-first).
	roff := 0
	for k := range s.reads {
		p := &s.reads[k]
		dst := s.rstaged[roff : roff+int(p.nw)]
		if v[p.en] != 0 {
			mem := s.mems[p.mem]
			a := int(v[p.addr]) * int(p.nw)
			copy(dst, mem[a:a+int(p.nw)])
		} else {
			copy(dst, v[p.slot:p.slot+p.nw])
		}
		roff += int(p.nw)
	}
	for k := range s.writes {
		p := &s.writes[k]
		if v[p.en] == 0 {
			continue
		}
		a := int(v[p.addr]) * int(p.nw)
		word := s.mems[p.mem][a : a+int(p.nw)]
		data := v[p.data : p.data+p.nw]
		if p.be < 0 {
			copy(word, data)
			continue
		}
		be := v[p.be:]
		for b := 0; b < int(p.bytes); b++ {
			if be[b/64]>>uint(b%64)&1 != 0 {
				q, r := b/8, uint(8*(b%8))
				word[q] = word[q]&^(0xFF<<r) | data[q]&(0xFF<<r)
			}
		}
	}
	var changed uint64 // the or of every state word's change
	off = 0
	for k := range s.regs {
		r := &s.regs[k]
		if r.nw == 1 {
			changed |= v[r.slot] ^ s.staged[off]
			v[r.slot] = s.staged[off]
			off++
			continue
		}
		for j := range int(r.nw) {
			changed |= v[int(r.slot)+j] ^ s.staged[off+j]
		}
		off += copy(v[r.slot:r.slot+r.nw], s.staged[off:])
	}
	roff = 0
	for k := range s.reads {
		p := &s.reads[k]
		for j := range int(p.nw) {
			changed |= v[int(p.slot)+j] ^ s.rstaged[roff+j]
		}
		roff += copy(v[p.slot:p.slot+p.nw], s.rstaged[roff:roff+int(p.nw)])
	}
	s.afterEdge(changed != 0)
}

// afterEdge settles what only the state reaches, if the edge changed any
// register or read port (if none did, nothing the logic computes from them
// can have changed, and the edge costs no evaluation), and leaves the
// inputs' cone for when it is next needed (after this cycle's inputs are
// driven).
func (s *Sim) afterEdge(changed bool) {
	s.cycles++
	if changed {
		s.eval(0, s.split)
		s.stale = true
	}
	if s.vcd != nil {
		s.traceEdge()
	}
}

// Cycles returns how many edges have been simulated.
func (s *Sim) Cycles() uint64 { return s.cycles }
