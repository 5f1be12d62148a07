package sim

import (
	"fmt"
	"math/big"

	"onic/hdlgen/ir"
)

// Reference is the slow, obviously-correct evaluator the compiled
// simulator is checked against: it walks the netlist from each node to its
// operands with arbitrary-precision integers, taking every operator from
// its definition (modular arithmetic, two's complement by subtracting
// 2^w), with no compilation, no levelisation and no 64-bit tricks.
type Reference struct {
	m     *ir.Module
	in    map[int]*big.Int            // input values
	state map[int]*big.Int            // register values
	memo  map[int]*big.Int            // this cycle's combinational values
	mems  map[int]map[string]*big.Int // memory node -> address -> word (absent: 0)
	rst   bool
	arst  bool
	at    []int // where each node of the module given went in the flattened one (nil: not flattened)
}

// NewReference prepares m for reference evaluation, registers at reset.
func NewReference(m *ir.Module) (*Reference, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	m, at := ir.Flatten(m)
	r := &Reference{m: m, at: at, in: map[int]*big.Int{}, state: map[int]*big.Int{}, mems: map[int]map[string]*big.Int{}}
	for i := 0; i < m.Len(); i++ {
		n := m.Node(i)
		switch n.Op {
		case ir.OpInput:
			r.in[i] = new(big.Int)
		case ir.OpReg:
			r.state[i] = words(n.Reset)
		case ir.OpMemRead:
			r.state[i] = new(big.Int)
		case ir.OpMem:
			r.mems[i] = map[string]*big.Int{}
		}
	}
	return r, nil
}

func words(ws []uint64) *big.Int {
	v := new(big.Int)
	for k := len(ws) - 1; k >= 0; k-- {
		v.Lsh(v, 64)
		v.Or(v, new(big.Int).SetUint64(ws[k]))
	}
	return v
}

func pow2(w int) *big.Int { return new(big.Int).Lsh(big.NewInt(1), uint(w)) }

// mod reduces v modulo 2^w into [0, 2^w).
func mod(v *big.Int, w int) *big.Int { return new(big.Int).Mod(v, pow2(w)) }

// toSigned reads an unsigned w-bit value as two's complement.
func toSigned(v *big.Int, w int) *big.Int {
	if v.Bit(w-1) == 1 {
		return new(big.Int).Sub(v, pow2(w))
	}
	return new(big.Int).Set(v)
}

// node maps a node of the module given to NewReference to its own.
func (r *Reference) node(i int) int {
	if r.at != nil {
		return r.at[i]
	}
	return i
}

// SetInput drives input node i.
func (r *Reference) SetInput(i int, v uint64) {
	i = r.node(i)
	r.in[i] = mod(new(big.Int).SetUint64(v), r.m.Node(i).W)
	r.memo = nil
}

// SetInputWords drives input node i with a value given as words, least
// significant first (bits beyond its width are dropped).
func (r *Reference) SetInputWords(i int, v []uint64) {
	i = r.node(i)
	r.in[i] = mod(words(v), r.m.Node(i).W)
	r.memo = nil
}

// SetReset holds rst high or low for the next edges.
func (r *Reference) SetReset(on bool) { r.rst = on }

// SetAsyncReset drives arst: asynchronously reset registers hold their
// reset value while it is high.
func (r *Reference) SetAsyncReset(on bool) {
	r.arst = on
	if on {
		for i := range r.state {
			if n := r.m.Node(i); n.Op == ir.OpReg && n.Async {
				r.state[i] = words(n.Reset)
			}
		}
		r.memo = nil
	}
}

// Value returns node i's value this cycle.
func (r *Reference) Value(i int) *big.Int { return r.value(r.node(i)) }

// value is the value of node i of the flattened module.
func (r *Reference) value(i int) *big.Int {
	if r.memo == nil {
		r.memo = map[int]*big.Int{}
	}
	if v, ok := r.memo[i]; ok {
		return v
	}
	n := r.m.Node(i)
	arg := func(k int) *big.Int { return r.value(n.Args[k]) }
	bit := func(b bool) *big.Int {
		if b {
			return big.NewInt(1)
		}
		return new(big.Int)
	}
	var v *big.Int
	switch n.Op {
	case ir.OpInput:
		v = r.in[i]
	case ir.OpReg, ir.OpMemRead:
		v = r.state[i]
	case ir.OpConst:
		v = words(n.Const)
	case ir.OpMem, ir.OpMemWrite:
		v = new(big.Int) // no value of their own
	case ir.OpWire, ir.OpZext:
		v = arg(0)
	case ir.OpAdd:
		v = mod(new(big.Int).Add(arg(0), arg(1)), n.W)
	case ir.OpSub:
		v = mod(new(big.Int).Sub(arg(0), arg(1)), n.W)
	case ir.OpMul:
		v = new(big.Int).Mul(arg(0), arg(1))
	case ir.OpAnd:
		v = new(big.Int).And(arg(0), arg(1))
	case ir.OpOr:
		v = new(big.Int).Or(arg(0), arg(1))
	case ir.OpXor:
		v = new(big.Int).Xor(arg(0), arg(1))
	case ir.OpNot:
		v = new(big.Int).Sub(new(big.Int).Sub(pow2(n.W), big.NewInt(1)), arg(0))
	case ir.OpEq:
		v = bit(arg(0).Cmp(arg(1)) == 0)
	case ir.OpNe:
		v = bit(arg(0).Cmp(arg(1)) != 0)
	case ir.OpLtU:
		v = bit(arg(0).Cmp(arg(1)) < 0)
	case ir.OpLtS:
		w := r.m.Node(n.Args[0]).W
		v = bit(toSigned(arg(0), w).Cmp(toSigned(arg(1), w)) < 0)
	case ir.OpMux:
		if arg(0).Sign() != 0 {
			v = arg(1)
		} else {
			v = arg(2)
		}
	case ir.OpSlice:
		v = mod(new(big.Int).Rsh(arg(0), uint(n.Lo)), n.W)
	case ir.OpConcat:
		v = new(big.Int)
		for k, a := range n.Args {
			v.Lsh(v, uint(r.m.Node(a).W))
			v.Add(v, arg(k))
		}
	case ir.OpSext:
		v = mod(toSigned(arg(0), r.m.Node(n.Args[0]).W), n.W)
	case ir.OpRedOr:
		v = bit(arg(0).Sign() != 0)
	case ir.OpRedAnd:
		w := r.m.Node(n.Args[0]).W
		v = bit(arg(0).Cmp(new(big.Int).Sub(pow2(w), big.NewInt(1))) == 0)
	case ir.OpRedXor:
		ones := 0
		for b := 0; b < r.m.Node(n.Args[0]).W; b++ {
			ones += int(arg(0).Bit(b))
		}
		v = bit(ones%2 == 1)
	case ir.OpShl:
		sh := arg(1)
		if sh.Cmp(big.NewInt(int64(n.W))) >= 0 {
			v = new(big.Int)
		} else {
			v = mod(new(big.Int).Lsh(arg(0), uint(sh.Uint64())), n.W)
		}
	case ir.OpShr:
		sh := arg(1)
		if sh.Cmp(big.NewInt(int64(n.W))) >= 0 {
			v = new(big.Int)
		} else {
			v = new(big.Int).Rsh(arg(0), uint(sh.Uint64()))
		}
	case ir.OpSar:
		sh := arg(1)
		s := toSigned(arg(0), n.W)
		if sh.Cmp(big.NewInt(int64(n.W))) >= 0 {
			sh = big.NewInt(int64(n.W))
		}
		// An arithmetic shift is floor division by 2^sh, which big.Int's
		// Euclidean Div is for a positive divisor.
		v = mod(new(big.Int).Div(s, pow2(int(sh.Uint64()))), n.W)
	default:
		panic(fmt.Sprintf("reference: no rule for %s", n.Op))
	}
	r.memo[i] = v
	return v
}

// word is memory mem's word at addr.
func (r *Reference) word(mem int, addr *big.Int) *big.Int {
	if w, ok := r.mems[mem][addr.String()]; ok {
		return w
	}
	return new(big.Int)
}

// Step is one rising edge: registers take reset, their enabled next
// value, or keep theirs; read ports take the addressed word as it was
// before the edge; write ports then change their words.
func (r *Reference) Step() {
	next := map[int]*big.Int{}
	for i, cur := range r.state {
		n := r.m.Node(i)
		switch {
		case n.Op == ir.OpMemRead:
			if r.value(n.Args[2]).Sign() != 0 {
				next[i] = r.word(n.Args[0], r.value(n.Args[1]))
			} else {
				next[i] = cur
			}
		case !n.NoReset && (n.Async && r.arst || !n.Async && r.rst):
			next[i] = words(n.Reset)
		case len(n.Args) < 2 || n.Args[1] < 0 || r.value(n.Args[1]).Sign() != 0:
			next[i] = r.value(n.Args[0])
		default:
			next[i] = cur
		}
	}
	// Writes in node order, each from the values before the edge.
	for i := 0; i < r.m.Len(); i++ {
		n := r.m.Node(i)
		if n.Op != ir.OpMemWrite || r.value(n.Args[3]).Sign() == 0 {
			continue
		}
		addr, data := r.value(n.Args[1]), r.value(n.Args[2])
		w := new(big.Int).Set(r.word(n.Args[0], addr))
		if n.Args[4] < 0 {
			w.Set(data)
		} else {
			be := r.value(n.Args[4])
			for b := 0; b < r.m.Node(n.Args[0]).W/8; b++ {
				if be.Bit(b) == 1 {
					for k := 8 * b; k < 8*b+8; k++ {
						w.SetBit(w, k, data.Bit(k))
					}
				}
			}
		}
		r.mems[n.Args[0]][addr.String()] = w
	}
	r.state, r.memo = next, nil
}
