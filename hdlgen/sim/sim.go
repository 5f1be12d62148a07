// Package sim is the cycle simulator of hdlgen/ir modules: a module is
// compiled once into a levelised list of instructions over one 64-bit
// slot per signal, and each clock cycle runs the list and then commits the
// registers. A slow reference evaluator (Reference) computes the same
// thing by walking the netlist with big integers; tests and a fuzz target
// hold the two equal, in the manner of Amaranth's simulators.
//
// Modules whose signals all fit in 64 bits run on a fast path, one slot
// per signal; a module with a wider signal (a 512-bit tdata bus) runs on a
// multi-word evaluator.
package sim

import (
	"fmt"

	"onic/hdlgen/ir"
)

// inst is one compiled operation: slots[dst] = op(slots[a], slots[b], ...).
// It is 32 bytes, two to a cache line.
type inst struct {
	mask      uint64 // result mask
	dst, a, b int32
	c         int32 // mux: third operand; concat: part count (parts from b in Sim.parts)
	op        ir.Op
	sh        uint8 // slice: low bit
	aw        uint8 // width of operand a
}

// memory is a RAM's words.
type memory struct {
	words []uint64
}

// readPort is a registered memory read; writePort a memory write.
type readPort struct {
	slot, mem, addr, en int32
}

type writePort struct {
	mem, addr, data, en, be int32 // be -1: whole words
	bytes                   int
}

// reg is a register's commit.
type reg struct {
	slot, next, en int32 // en -1: always
	reset          uint64
	async          bool
	noReset        bool // a data-path register: rst leaves it alone
}

// Sim simulates one module. It is not safe for concurrent use.
type Sim struct {
	m       *ir.Module
	slots   []uint64
	prog    []inst
	regs    []reg
	staged  []uint64 // register next values, staged so all commit at once
	parts   []int32  // concat operands, then their widths: see compile
	mems    []memory
	reads   []readPort
	writes  []writePort
	rstaged []uint64 // read ports' words, staged like registers
	inputs  map[string]int32
	outputs map[string]int32
	rst     bool
	arst    bool
	cycles  uint64
	rep     []int32 // 64-bit path: the slot holding each node's value (wires and zero-extensions share their operand's)
	vcd     *vcd    // nil unless TraceVCD was called
	w       *wide   // the multi-word evaluator, for modules with signals over 64 bits
	at      []int   // where each node of the module given to New went in the flattened one (nil: not flattened)
}

// New compiles m. Instances are flattened first (ir.Flatten), so a
// hierarchy simulates as one netlist; Value still takes m's node indices.
func New(m *ir.Module) (*Sim, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	m, at := ir.Flatten(m)
	s := &Sim{m: m, at: at, slots: make([]uint64, m.Len()), inputs: map[string]int32{}, outputs: map[string]int32{}}
	wideSignals := false
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.W > 64 && n.Op != ir.OpMemWrite {
			wideSignals = true
		}
	}
	for _, p := range m.Ports() {
		if p.Output {
			s.outputs[p.Name] = int32(p.Node)
		} else {
			s.inputs[p.Name] = int32(p.Node)
		}
	}
	// On the 64-bit path a wire or a zero-extension is its operand's value:
	// it shares the operand's slot and costs no instruction.
	s.rep = make([]int32, m.Len())
	for i := 0; i < m.Len(); i++ {
		s.rep[i] = int32(i)
		if n := m.Node(i); !wideSignals && (n.Op == ir.OpWire || n.Op == ir.OpZext) {
			s.rep[i] = int32(n.Args[0])
		}
	}
	for i := range s.rep { // follow chains (a wire may be driven by a later node; Check ruled out loops)
		for s.rep[i] != s.rep[s.rep[i]] {
			s.rep[i] = s.rep[s.rep[i]]
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
			s.slots[i] = n.Const[0]
		default:
			for _, a := range n.Args {
				visit(a)
			}
			if s.rep[i] == int32(i) {
				s.prog = append(s.prog, s.compile(i))
			}
		}
		state[i] = 2
	}
	for i := 0; i < m.Len(); i++ {
		visit(i)
	}
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.Op == ir.OpReg {
			r := reg{slot: int32(i), next: s.rep[n.Args[0]], en: -1, reset: n.Reset[0], async: n.Async, noReset: n.NoReset}
			if len(n.Args) > 1 && n.Args[1] >= 0 {
				r.en = s.rep[n.Args[1]]
			}
			s.regs = append(s.regs, r)
			s.slots[i] = r.reset
		}
	}
	memOf := map[int]int32{}
	for i := 0; i < m.Len(); i++ {
		if n := m.Node(i); n.Op == ir.OpMem {
			memOf[i] = int32(len(s.mems))
			s.mems = append(s.mems, memory{words: make([]uint64, n.Depth)})
		}
	}
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		switch n.Op {
		case ir.OpMemRead:
			s.reads = append(s.reads, readPort{slot: int32(i), mem: memOf[n.Args[0]], addr: s.rep[n.Args[1]], en: s.rep[n.Args[2]]})
		case ir.OpMemWrite:
			be := int32(-1)
			if n.Args[4] >= 0 {
				be = s.rep[n.Args[4]]
			}
			s.writes = append(s.writes, writePort{mem: memOf[n.Args[0]], addr: s.rep[n.Args[1]], data: s.rep[n.Args[2]],
				en: s.rep[n.Args[3]], be: be, bytes: m.Node(n.Args[0]).W / 8})
		}
	}
	s.rstaged = make([]uint64, len(s.reads))
	s.staged = make([]uint64, len(s.regs))
	if wideSignals {
		s.w = newWide(s)
	}
	s.eval()
	return s, nil
}

func mask(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<w - 1
}

// compile turns node i into an instruction.
func (s *Sim) compile(i int) inst {
	n := s.m.Node(i)
	in := inst{op: n.Op, dst: int32(i), mask: mask(n.W), a: -1, b: -1, c: -1}
	if len(n.Args) > 0 {
		in.a = s.rep[n.Args[0]]
		in.aw = uint8(s.m.Node(n.Args[0]).W)
	}
	if len(n.Args) > 1 {
		in.b = s.rep[n.Args[1]]
	}
	if len(n.Args) > 2 {
		in.c = s.rep[n.Args[2]]
	}
	switch n.Op {
	case ir.OpSlice:
		in.sh = uint8(n.Lo)
	case ir.OpConcat:
		in.b, in.c = int32(len(s.parts)), int32(len(n.Args))
		for _, a := range n.Args {
			s.parts = append(s.parts, s.rep[a], int32(s.m.Node(a).W))
		}
	}
	return in
}

// eval runs the combinational logic.
func (s *Sim) eval() {
	if s.w != nil {
		s.w.eval(s)
		return
	}
	v := s.slots
	for k := range s.prog {
		in := &s.prog[k]
		a := v[in.a] // every combinational op has an operand
		var r uint64
		switch in.op {
		case ir.OpWire:
			r = a
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
				if s.w != nil {
					copy(s.w.get(int(r.slot)), s.m.Node(int(r.slot)).Reset)
				} else {
					s.slots[r.slot] = r.reset
				}
			}
		}
		s.eval()
	}
}

// Set drives input name with v (masked to its width) and updates the
// combinational logic.
func (s *Sim) Set(name string, v uint64) error { return s.SetWords(name, []uint64{v}) }

// SetWords drives input name with a value given as 64-bit words, least
// significant first (missing words are zero; bits beyond its width are
// dropped), and updates the combinational logic.
func (s *Sim) SetWords(name string, v []uint64) error {
	if err := s.Drive(name, v); err != nil {
		return err
	}
	s.eval()
	return nil
}

// Drive is SetWords without the update: it drives input name and leaves
// the combinational logic as it was until Settle (or Step). A testbench
// that changes many inputs per cycle drives them all and settles once.
func (s *Sim) Drive(name string, v []uint64) error {
	i, ok := s.inputs[name]
	if !ok {
		return fmt.Errorf("module %s has no input %q", s.m.Name(), name)
	}
	w := s.m.Node(int(i)).W
	if s.w != nil {
		d := s.w.get(int(i))
		clear(d)
		copy(d, v)
		topMask(d, w)
	} else if len(v) > 0 {
		s.slots[i] = v[0] & mask(w)
	} else {
		s.slots[i] = 0
	}
	return nil
}

// Settle updates the combinational logic after Drive.
func (s *Sim) Settle() { s.eval() }

// Get returns output name's value (its low 64 bits; GetWords has all).
func (s *Sim) Get(name string) (uint64, error) {
	i, ok := s.outputs[name]
	if !ok {
		return 0, fmt.Errorf("module %s has no output %q", s.m.Name(), name)
	}
	return s.valueWords(int(i))[0], nil
}

// GetWords returns output name's value as 64-bit words, least
// significant first (valid until the next Set or Step).
func (s *Sim) GetWords(name string) ([]uint64, error) {
	i, ok := s.outputs[name]
	if !ok {
		return nil, fmt.Errorf("module %s has no output %q", s.m.Name(), name)
	}
	return s.valueWords(int(i)), nil
}

// node maps a node of the module given to New to the simulated one.
func (s *Sim) node(i int) int {
	if s.at != nil {
		return s.at[i]
	}
	return i
}

// Value returns node i's current value (its low 64 bits).
func (s *Sim) Value(i int) uint64 { return s.valueWords(s.node(i))[0] }

// ValueWords returns node i's current value as words, least significant
// first (valid until the next Set or Step).
func (s *Sim) ValueWords(i int) []uint64 { return s.valueWords(s.node(i)) }

// valueWords is the value of node i of the simulated (flattened) module.
func (s *Sim) valueWords(i int) []uint64 {
	if s.w != nil {
		return s.w.get(i)
	}
	r := s.rep[i]
	return s.slots[r : r+1]
}

// Step is one rising clock edge: every register takes its reset value
// (rst high), its next value (enabled) or keeps its own, all at once; then
// the combinational logic settles.
func (s *Sim) Step() {
	if s.w != nil {
		s.w.step(s)
		s.cycles++
		s.eval()
		if s.vcd != nil {
			s.traceEdge()
		}
		return
	}
	v := s.slots
	for k := range s.regs {
		r := &s.regs[k]
		switch {
		case !r.noReset && (r.async && s.arst || !r.async && s.rst):
			s.staged[k] = r.reset
		case r.en < 0 || v[r.en] != 0:
			s.staged[k] = v[r.next]
		default:
			s.staged[k] = v[r.slot]
		}
	}
	// Memory reads see the words before this edge's writes (read-first).
	for k := range s.reads {
		p := &s.reads[k]
		if v[p.en] != 0 {
			s.rstaged[k] = s.mems[p.mem].words[v[p.addr]]
		} else {
			s.rstaged[k] = v[p.slot]
		}
	}
	for k := range s.writes {
		p := &s.writes[k]
		if v[p.en] == 0 {
			continue
		}
		word := &s.mems[p.mem].words[v[p.addr]]
		if p.be < 0 {
			*word = v[p.data]
			continue
		}
		for b := 0; b < p.bytes; b++ {
			if v[p.be]>>b&1 != 0 {
				*word = *word&^(0xFF<<(8*b)) | v[p.data]&(0xFF<<(8*b))
			}
		}
	}
	for k := range s.regs {
		v[s.regs[k].slot] = s.staged[k]
	}
	for k := range s.reads {
		v[s.reads[k].slot] = s.rstaged[k]
	}
	s.cycles++
	s.eval()
	if s.vcd != nil {
		s.traceEdge()
	}
}

// Cycles returns how many edges have been simulated.
func (s *Sim) Cycles() uint64 { return s.cycles }
