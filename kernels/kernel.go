// Package kernels is onic's in-network kernel authoring API and its
// built-in library. A kernel is a Go value: a name, a version, its element
// type and lanes, one or two input streams and one output, and a body
// written with the hdlgen IR builder. From that one description come the
// module the emulator simulates (hdlgen/sim) and the Verilog handed to
// vendor tools (hdlgen/verilog); a plain Go reference function, written
// independently, is what tests hold both to.
//
// Streams are AXI-Stream packets: tdata (Lanes elements, element i in
// the i-th Bits-wide field from the bottom, bytes in AXI order), tkeep
// (a bit per byte; streams carry whole elements, so an element is present
// when the keep bit of its first byte is), tlast, tvalid and tready.
package kernels

import (
	"fmt"
	"slices"

	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// Kernel describes an in-network kernel.
type Kernel struct {
	Name    string // a lower-case identifier with dashes: "sum-int32"
	Version string // semantic version of this kernel's behaviour
	Doc     string // one sentence for `onic kernel list`

	In    Elem // element type of the inputs
	Out   Elem // element type of the output (the zero Elem: In)
	Lanes int  // elements per beat
	// Inputs is the number of input streams: 1, or 2 to combine what
	// arrives on the two optical ports. Two inputs carry packets of the
	// same length, paired beat by beat; the output ends where input 0's
	// packet ends, and an element is present where it is in both.
	Inputs int

	// Lane builds one output element from one element of each input (an
	// elementwise kernel): the same function is applied to every lane.
	Lane func(m *ir.Module, in []ir.Value) ir.Value
	// Ref is the reference: the output element, as a bit pattern, for
	// the input elements' bit patterns. It is plain Go, written without
	// the IR, and defines what the kernel means.
	Ref func(in []uint64) uint64
}

// out is the output element type.
func (k *Kernel) out() Elem {
	if k.Out.Bits == 0 {
		return k.In
	}
	return k.Out
}

// InBits and OutBits are the widths of an input and the output beat.
func (k *Kernel) InBits() int { return k.Lanes * k.In.Bits }

// OutBits is the width of the output beat's tdata.
func (k *Kernel) OutBits() int { return k.Lanes * k.out().Bits }

// validate checks the description.
func (k *Kernel) validate() error {
	switch {
	case k.Name == "":
		return fmt.Errorf("kernel: no name")
	case k.In.Bits == 0 || k.In.Bits%8 != 0:
		return fmt.Errorf("kernel %s: in: element type %q is not whole bytes", k.Name, k.In.Name)
	case k.out().Bits%8 != 0:
		return fmt.Errorf("kernel %s: out: element type %q is not whole bytes", k.Name, k.out().Name)
	case k.Lanes < 1 || k.InBits() > 1024 || k.OutBits() > 1024:
		return fmt.Errorf("kernel %s: lanes: %d lanes of %s make a beat of %d bits (1 to 1024)", k.Name, k.Lanes, k.In, k.InBits())
	case k.Inputs != 1 && k.Inputs != 2:
		return fmt.Errorf("kernel %s: inputs: %d (want 1 or 2)", k.Name, k.Inputs)
	case k.Lane == nil:
		return fmt.Errorf("kernel %s: lane: no body", k.Name)
	case k.Ref == nil:
		return fmt.Errorf("kernel %s: ref: no reference function", k.Name)
	}
	return nil
}

// Module builds the kernel's hardware: input ports s0_* (and s1_*), the
// output m_*, each an AXI-Stream with tdata, tkeep, tlast, tvalid and
// tready. Beats are joined (a beat moves in when every input has one and
// the output can take it), the lanes computed, and the result registered
// in a full-throughput register slice. The module is named after the
// kernel ("sum-int32" becomes onic_kernel_sum_int32).
func (k *Kernel) Module() (*ir.Module, error) {
	if err := k.validate(); err != nil {
		return nil, err
	}
	m := ir.NewModule("onic_kernel_" + ident(k.Name))
	wi, wo := k.InBits(), k.OutBits()
	type input struct{ data, keep, last, valid, ready ir.Value }
	ins := make([]input, k.Inputs)
	for i := range ins {
		p := fmt.Sprintf("s%d", i)
		ins[i] = input{data: m.Input(p+"_tdata", wi), keep: m.Input(p+"_tkeep", wi/8), last: m.Input(p+"_tlast", 1),
			valid: m.Input(p+"_tvalid", 1), ready: m.Wire(p+"_ready", 1)}
		m.Output(p+"_tready", ins[i].ready)
	}
	eo := k.out()
	var lanes, keeps []ir.Value
	for l := k.Lanes - 1; l >= 0; l-- { // most significant first, for Concat
		var elems []ir.Value
		present := m.Const(1, 1)
		for _, in := range ins {
			elems = append(elems, m.Slice(in.data, l*k.In.Bits, k.In.Bits))
			present = m.And(present, m.Slice(in.keep, l*k.In.Bytes(), 1))
		}
		v := k.Lane(m, elems)
		if err := eo.check(v); err != nil {
			return nil, fmt.Errorf("kernel %s: lane: %v", k.Name, err)
		}
		lanes = append(lanes, v)
		for range eo.Bytes() {
			keeps = append(keeps, present)
		}
	}
	all := m.Const(1, 1)
	for _, in := range ins {
		all = m.And(all, in.valid)
	}
	res := axis.New(m, "res", m.Concat(ins[0].last, m.Concat(keeps...), m.Concat(lanes...)), all)
	for i, in := range ins {
		others := m.Const(1, 1)
		for j, o := range ins {
			if j != i {
				others = m.And(others, o.valid)
			}
		}
		m.Assign(in.ready, m.And(res.Ready, others))
	}
	out := axis.Skid(m, "out", res)
	m.Output("m_tdata", m.Slice(out.Data, 0, wo))
	m.Output("m_tkeep", m.Slice(out.Data, wo, wo/8))
	m.Output("m_tlast", m.Slice(out.Data, wo+wo/8, 1))
	m.Output("m_tvalid", out.Valid)
	m.Assign(out.Ready, m.Input("m_tready", 1))
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	return m, nil
}

// Reference computes the kernel's output packet from its input packets
// (little-endian element bytes) with the reference function alone. Two
// inputs pair element by element; input 0 sets the length, and an element
// missing from input 1 leaves a gap: the output has only the elements
// present in both, in order.
func (k *Kernel) Reference(in [][]byte) ([]byte, error) {
	if err := k.validate(); err != nil {
		return nil, err
	}
	if len(in) != k.Inputs {
		return nil, fmt.Errorf("kernel %s: %d input packets for %d inputs", k.Name, len(in), k.Inputs)
	}
	eb, ob := k.In.Bytes(), k.out().Bytes()
	for i, p := range in {
		if len(p)%eb != 0 {
			return nil, fmt.Errorf("kernel %s: input %d: %d bytes is not a whole number of %s elements", k.Name, i, len(p), k.In)
		}
	}
	n := len(in[0]) / eb
	for _, p := range in[1:] {
		n = min(n, len(p)/eb)
	}
	out := make([]byte, 0, n*ob)
	args := make([]uint64, len(in))
	for e := range n {
		for i, p := range in {
			args[i] = le(p[e*eb : e*eb+eb])
		}
		out = putLE(out, k.Ref(args), ob)
	}
	return out, nil
}

// le reads a little-endian unsigned number.
func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// putLE appends the low n bytes of v, little-endian.
func putLE(b []byte, v uint64, n int) []byte {
	for range n {
		b = append(b, byte(v))
		v >>= 8
	}
	return b
}

// ident turns a kernel name into an identifier part.
func ident(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// library is the built-in kernels, by name.
var library []*Kernel

// register adds built-in kernels (in init functions).
func register(ks ...*Kernel) { library = append(library, ks...) }

// Library returns the built-in kernels, sorted by name.
func Library() []*Kernel {
	out := slices.Clone(library)
	slices.SortFunc(out, func(a, b *Kernel) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Lookup returns the built-in kernel named name.
func Lookup(name string) (*Kernel, error) {
	for _, k := range library {
		if k.Name == name {
			return k, nil
		}
	}
	var names []string
	for _, k := range Library() {
		names = append(names, k.Name)
	}
	return nil, fmt.Errorf("no kernel %q (built in: %v)", name, names)
}
