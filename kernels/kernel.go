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
	"maps"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"

	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/internal/suggest"
)

// Kernel describes an in-network kernel. Its body is either Lane (an
// elementwise kernel: one function applied to every lane, the framework
// doing everything else) or Body (a beat-level kernel: it sees whole
// beats, keeps state, and decides per step what leaves), never both.
type Kernel struct {
	Name    string // a lower-case identifier with dashes: "sum-int32"
	Version string // semantic version of this kernel's behaviour
	Doc     string // one sentence for `onic kernel list`
	// Params are the constants the kernel was built with, for listings
	// and the generated files' headers (a kernel with other constants is
	// another Kernel value, made by the same Go constructor).
	Params []Param

	In    Elem // element type of the inputs
	Out   Elem // element type of the output (the zero Elem: In)
	Lanes int  // elements per input beat
	// OutLanes is the number of output elements per beat (0: Lanes).
	OutLanes int
	// Inputs is the number of input streams: 1, or 2 to combine what
	// arrives on the two optical ports. Two inputs carry packets of the
	// same length, paired beat by beat; the output ends where input 0's
	// packet ends.
	Inputs int
	// OutGaps says the output's tkeep may have gaps inside a packet
	// (bytes left out in place, as the filter leaves out the records it
	// drops), for whoever takes the stream to pack. The O-NIC's kernel
	// slots send each output packet as one write of its kept bytes in
	// order, so they do not take such a kernel.
	OutGaps bool

	// Lane builds one output element from one element of each input (an
	// elementwise kernel): the same function is applied to every lane,
	// and an output element is present where it is in every input.
	Lane func(m *ir.Module, in []ir.Value) ir.Value
	// Ref is an elementwise kernel's reference: the output element, as a
	// bit pattern, for the input elements' bit patterns. It is plain Go,
	// written without the IR, and defines what the kernel means.
	Ref func(in []uint64) uint64

	// Body builds a beat-level kernel's step (see Step).
	Body func(s *Step)
	// RefPacket is a beat-level kernel's reference: the output packet's
	// bytes for the input packets' bytes, in plain Go.
	RefPacket func(in [][]byte) ([]byte, error)
	// Sample, if set, makes n-element input packets for tests when random
	// elements would not exercise the kernel (records that match a
	// filter, packets that end in a correct CRC). Its packets must be
	// accepted by RefPacket.
	Sample func(rng *rand.Rand, n int) [][]byte
	// RefRegs, for a kernel with an AXI-Lite register interface (ports
	// s_axil_*, 12-bit byte addresses, 32-bit data), is the reference for
	// what reads return after the input packets have gone through: the
	// registers tests read back, by address, with their values.
	RefRegs func(in [][]byte) (map[uint32]uint32, error)
}

// Param is one constant a kernel was built with.
type Param struct {
	Name, Value string
}

// Beat is one AXI-Stream beat inside a kernel: tdata, tkeep (a bit per
// byte) and tlast.
type Beat struct {
	Data, Keep, Last ir.Value
}

// Step is what a beat-level body works with. The framework offers the
// body the input beats (one per input, paired) every cycle; a step
// happens in a cycle when every input has a beat and, if the step emits,
// the output can take one. In a step the body's Out beat leaves if Emit
// is 1, and the input beats are consumed unless Again is 1 (then the body
// sees them again in the next step: how a kernel sends more beats than it
// takes, such as a trailer that does not fit). Registers the body keeps
// change on Go() or Next().
type Step struct {
	M  *ir.Module
	In []Beat // the beats on offer, one per input

	// Set by the body.
	Out   Beat     // the output beat (data of OutBits, keep of OutBits/8)
	Emit  ir.Value // 1 bit: the step sends Out (unset: every step does)
	Again ir.Value // 1 bit: the step keeps the input beats (unset: never)
	Hold  ir.Value // 1 bit: no step this cycle, whatever is on offer (unset: never)

	goW, nextW, first ir.Value
	adv               ir.Value // 1 while the pipeline moves (Stage)
	stages            int      // the deepest stage a Stage call made
	live              map[int]ir.Value
}

// Advance is 1 in a cycle the pipeline moves: every stage hands its beat
// to the next, the last to the output. (Only for a body that calls
// Stage.)
func (s *Step) Advance() ir.Value {
	if s.adv.Width() == 0 {
		s.adv = s.M.Wire("pipe_adv", 1)
	}
	return s.adv
}

// Live is 1 while pipeline stage k holds the beat of a step (not a
// bubble). With Advance and a staged marker, a body learns when the beat
// a stage-0 decision was made for leaves stage k: how a result computed
// down the pipeline comes back to the body's registers.
func (s *Step) Live(k int) ir.Value {
	if s.live == nil {
		s.live = map[int]ir.Value{}
	}
	if s.live[k].Width() == 0 {
		s.live[k] = s.M.Wire(fmt.Sprintf("stage%d_live", k), 1)
	}
	return s.live[k]
}

// maxStages bounds a body's pipeline.
const maxStages = 8

// Stage returns v registered into pipeline stage k (1 for the first
// register after the step, 2 for the next, ...): how a beat-level body
// splits logic too deep for one clock cycle. Compute from the input beats
// and the body's registers as usual (stage 0), pass what the next stage
// needs through Stage(1, ...), compute on from those, and so on; Out must
// be the values of the last stage (its Data, Keep and Last all staged as
// deep). Emit, Again and Hold stay stage-0 decisions. The pipeline moves
// as a whole: every stage advances when the last one can hand its beat
// on, so it still takes a beat a cycle, and the kernel's latency grows by
// one cycle per stage (measured, so the emulator's profile follows).
func (s *Step) Stage(k int, v ir.Value) ir.Value {
	ir.Helper() // the register is the body's line's
	m := s.M
	if k < 1 || k > maxStages {
		m.Errorf(v, "stage %d: a body has stages 1 to %d", k, maxStages)
		return v
	}
	s.Advance()
	s.stages = max(s.stages, k)
	// The register is named after the value it holds (stage2_sum for a
	// value named sum), so the Verilog and the waveforms show what
	// travels down the pipeline; an unnamed value's register is named by
	// its place.
	name := fmt.Sprintf("stage%d_%d", k, m.Len())
	if n := m.Node(v.ID()).Name; n != "" {
		name = m.FreeName(fmt.Sprintf("stage%d_%s", k, strings.TrimPrefix(n, fmt.Sprintf("stage%d_", k-1))))
	}
	r := m.RegNoReset(name, v.Width())
	m.SetNext(r, v)
	m.SetEnable(r, s.adv)
	return r
}

// Go is 1 in a cycle a step happens.
func (s *Step) Go() ir.Value {
	if s.goW.Width() == 0 {
		s.goW = s.M.Wire("step_go", 1)
	}
	return s.goW
}

// Next is 1 in a cycle the input beats are consumed: Go and not Again.
func (s *Step) Next() ir.Value {
	if s.nextW.Width() == 0 {
		s.nextW = s.M.Wire("step_next", 1)
	}
	return s.nextW
}

// First is 1 while the input beats on offer are the first of their
// packets.
func (s *Step) First() ir.Value {
	if s.first.Width() == 0 {
		mid := s.M.Reg("in_packet", 1, 0) // a packet has begun and not ended
		s.M.SetNext(mid, s.M.Not(s.In[0].Last))
		s.M.SetEnable(mid, s.Next())
		s.first = s.M.Not(mid)
	}
	return s.first
}

// out is the output element type.
func (k *Kernel) out() Elem {
	if k.Out.Bits == 0 {
		return k.In
	}
	return k.Out
}

// outLanes is the number of output elements per beat.
func (k *Kernel) outLanes() int {
	if k.OutLanes == 0 {
		return k.Lanes
	}
	return k.OutLanes
}

// InBits is the width of an input beat's tdata.
func (k *Kernel) InBits() int { return k.Lanes * k.In.Bits }

// OutBits is the width of the output beat's tdata.
func (k *Kernel) OutBits() int { return k.outLanes() * k.out().Bits }

// validate checks the description.
func (k *Kernel) validate() error {
	switch {
	case k.Name == "":
		return fmt.Errorf("kernel: no name")
	case k.In.Bits == 0 || k.In.Bits%8 != 0:
		return fmt.Errorf("kernel %s: in: element type %q is not whole bytes", k.Name, k.In.Name)
	case k.out().Bits%8 != 0:
		return fmt.Errorf("kernel %s: out: element type %q is not whole bytes", k.Name, k.out().Name)
	case k.Lanes < 1 || k.InBits() > 1024 || k.OutBits() > 1024 || k.OutLanes < 0:
		return fmt.Errorf("kernel %s: lanes: %d lanes of %s in and %d of %s out make beats of %d and %d bits (1 to 1024)",
			k.Name, k.Lanes, k.In, k.outLanes(), k.out(), k.InBits(), k.OutBits())
	case k.Inputs != 1 && k.Inputs != 2:
		return fmt.Errorf("kernel %s: inputs: %d (want 1 or 2)", k.Name, k.Inputs)
	case (k.Lane == nil) == (k.Body == nil):
		return fmt.Errorf("kernel %s: body: set exactly one of Lane (elementwise) and Body (beat-level)", k.Name)
	case k.Lane != nil && k.Ref == nil && k.RefPacket == nil:
		return fmt.Errorf("kernel %s: ref: no reference function", k.Name)
	case k.Lane != nil && k.outLanes() != k.Lanes:
		return fmt.Errorf("kernel %s: out lanes: an elementwise kernel has as many output lanes as input lanes (%d, not %d)", k.Name, k.Lanes, k.outLanes())
	case k.Body != nil && k.RefPacket == nil:
		return fmt.Errorf("kernel %s: ref packet: a beat-level kernel needs a packet reference function", k.Name)
	}
	return nil
}

// Module builds the kernel's hardware: input ports s0_* (and s1_*), the
// output m_*, each an AXI-Stream with tdata, tkeep, tlast, tvalid and
// tready. Steps happen as Step describes, and the output is registered in
// a full-throughput register slice. The module is named after the kernel
// ("sum-int32" becomes onic_kernel_sum_int32).
func (k *Kernel) Module() (*ir.Module, error) {
	if err := k.validate(); err != nil {
		return nil, err
	}
	m := ir.NewModule("onic_kernel_" + ident(k.Name))
	wi, wo := k.InBits(), k.OutBits()
	s := &Step{M: m}
	var valids, readies []ir.Value
	for i := range k.Inputs {
		p := fmt.Sprintf("s%d", i)
		s.In = append(s.In, Beat{Data: m.Input(p+"_tdata", wi), Keep: m.Input(p+"_tkeep", wi/8), Last: m.Input(p+"_tlast", 1)})
		valids = append(valids, m.Input(p+"_tvalid", 1))
		readies = append(readies, m.Wire(p+"_ready", 1))
		m.Output(p+"_tready", readies[i])
	}
	if k.Lane != nil {
		k.lanes(s)
	} else {
		k.Body(s)
	}
	// The body's own mistakes first, each once with its line: they are
	// usually why the beat below has the wrong shape.
	if err := m.Err(); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", k.Name, err)
	}
	o := s.Out
	switch {
	case o.Data.Width() != wo || o.Keep.Width() != wo/8 || o.Last.Width() != 1:
		return nil, fmt.Errorf("kernel %s: body: output beat of data %d, keep %d and last %d bits; want %d, %d and 1",
			k.Name, o.Data.Width(), o.Keep.Width(), o.Last.Width(), wo, wo/8)
	case s.Emit.Width() > 1 || s.Again.Width() > 1 || s.Hold.Width() > 1:
		return nil, fmt.Errorf("kernel %s: body: emit, again and hold are 1 bit, not %d, %d and %d", k.Name, s.Emit.Width(), s.Again.Width(), s.Hold.Width())
	}
	all := m.Const(1, 1)
	for _, v := range valids {
		all = m.And(all, v)
	}
	if s.Hold.Width() == 1 {
		all = m.And(all, m.Not(s.Hold))
	}
	outValid := all
	if s.Emit.Width() == 1 {
		outValid = m.And(all, s.Emit)
	}
	var res axis.Stream
	room := ir.Value{} // room for what this step sends
	if s.stages == 0 {
		if len(s.live) > 0 || s.adv.Width() != 0 {
			return nil, fmt.Errorf("kernel %s: body: Live or Advance without a pipeline (no Stage call)", k.Name)
		}
		res = axis.New(m, "res", m.Concat(o.Last, o.Keep, o.Data), outValid)
		room = res.Ready
	} else {
		// The pipeline: a valid bit per stage beside the body's staged
		// values, all moving when the last stage's beat can leave (or
		// it holds none).
		v := make([]ir.Value, s.stages+1)
		for i := 1; i <= s.stages; i++ {
			v[i] = m.Reg(fmt.Sprintf("stage%d_valid", i), 1, 0)
		}
		res = axis.New(m, "res", m.Concat(o.Last, o.Keep, o.Data), v[s.stages])
		m.Assign(s.adv, m.Or(res.Ready, m.Not(v[s.stages])))
		room = s.adv
		v[0] = m.And(outValid, s.adv) // a step that emits enters stage 1
		for i := 1; i <= s.stages; i++ {
			m.SetNext(v[i], v[i-1])
			m.SetEnable(v[i], s.adv)
		}
		for _, i := range slices.Sorted(maps.Keys(s.live)) {
			w := s.live[i]
			if i < 1 || i > s.stages {
				return nil, fmt.Errorf("kernel %s: body: Live(%d) of a pipeline of %d stages", k.Name, i, s.stages)
			}
			m.Assign(w, v[i])
		}
	}
	space := room
	if s.Emit.Width() == 1 {
		space = m.Or(room, m.Not(s.Emit))
	}
	take := space // the inputs are consumed (given every input has a beat)
	if s.Again.Width() == 1 {
		take = m.And(space, m.Not(s.Again))
	}
	if s.Hold.Width() == 1 {
		take = m.And(take, m.Not(s.Hold))
	}
	for i, r := range readies {
		others := m.Const(1, 1)
		for j, v := range valids {
			if j != i {
				others = m.And(others, v)
			}
		}
		m.Assign(r, m.And(take, others))
	}
	if s.goW.Width() == 1 {
		m.Assign(s.goW, m.And(all, space))
	}
	if s.nextW.Width() == 1 {
		m.Assign(s.nextW, m.And(all, take))
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

// lanes is the body of an elementwise kernel: Lane on every lane, an
// element present where it is in every input, the packet ending with
// input 0's.
func (k *Kernel) lanes(s *Step) {
	m, eo := s.M, k.out()
	var lanes, keeps []ir.Value
	for l := k.Lanes - 1; l >= 0; l-- { // most significant first, for Concat
		var elems []ir.Value
		present := m.Const(1, 1)
		for j, in := range s.In {
			elems = append(elems, m.Named(fmt.Sprintf("s%d_lane%d", j, l), m.Slice(in.Data, l*k.In.Bits, k.In.Bits)))
			present = m.And(present, m.Slice(in.Keep, l*k.In.Bytes(), 1))
		}
		present = m.Named(fmt.Sprintf("lane%d_present", l), present)
		v := k.Lane(m, elems)
		if err := eo.check(v); err != nil {
			// At the line that built the value, once for every lane.
			m.Errorf(v, "lane: %v", err)
			v = m.Const(eo.Bits, 0)
		}
		lanes = append(lanes, m.Named(fmt.Sprintf("lane%d_out", l), v))
		for range eo.Bytes() {
			keeps = append(keeps, present)
		}
	}
	s.Out = Beat{Data: m.Concat(lanes...), Keep: m.Concat(keeps...), Last: s.In[0].Last}
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
	if k.RefPacket != nil {
		return k.RefPacket(in)
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

// registry is every registered kernel: the built-in library, then a
// program's own.
var registry struct {
	sync.Mutex
	ks []*Kernel
}

// Register adds kernels to the library that Library, Lookup and every
// onic command use: the built-in kernels register themselves this way,
// and a program of your own passes its kernels to cli.Main, which calls
// it. Each kernel must be a valid description (its hardware builds), with
// a name (lower-case words joined by dashes) that no registered kernel
// has; if one is not, nothing is registered and the error names it.
func Register(ks ...*Kernel) error {
	registry.Lock()
	defer registry.Unlock()
	seen := map[string]bool{}
	for _, k := range registry.ks {
		seen[k.Name] = true
	}
	for _, k := range ks {
		if k == nil {
			return fmt.Errorf("register: a nil kernel")
		}
		if !validName.MatchString(k.Name) {
			return fmt.Errorf("register: kernel name %q: use lower-case letters, digits and dots, words joined by dashes (abs-diff)", k.Name)
		}
		if seen[k.Name] {
			return fmt.Errorf("register: kernel %s: a registered kernel has that name", k.Name)
		}
		if _, err := k.Module(); err != nil {
			return fmt.Errorf("register: %w", err)
		}
		seen[k.Name] = true
	}
	registry.ks = append(registry.ks, ks...)
	return nil
}

// MustRegister is Register for kernels known to be good (the built-in
// library's, in init functions): it panics if Register fails.
func MustRegister(ks ...*Kernel) {
	if err := Register(ks...); err != nil {
		panic(err)
	}
}

// validName is what a kernel may be called.
var validName = regexp.MustCompile(`^[a-z][a-z0-9.]*(-[a-z0-9.]+)*$`)

// ValidName reports whether name is a kernel name onic accepts: lower-case
// letters, digits and dots, words joined by dashes ("abs-diff",
// "sum-q8.24-block").
func ValidName(name string) bool { return validName.MatchString(name) }

// Library returns every registered kernel (the built-in ones and a
// program's own), sorted by name.
func Library() []*Kernel {
	registry.Lock()
	out := slices.Clone(registry.ks)
	registry.Unlock()
	slices.SortFunc(out, func(a, b *Kernel) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the registered kernel named name.
func Lookup(name string) (*Kernel, error) {
	lib := Library()
	for _, k := range lib {
		if k.Name == name {
			return k, nil
		}
	}
	var names []string
	for _, k := range lib {
		names = append(names, k.Name)
	}
	if s := suggest.Nearest(name, names); s != "" {
		return nil, fmt.Errorf("no kernel %q; did you mean %s? (registered: %v)", name, s, names)
	}
	return nil, fmt.Errorf("no kernel %q (registered: %v)", name, names)
}
