package cosim

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/tlp"
)

// Trace is what a run drove and saw, in a form every simulator produces
// the same way: one line of hex per cycle with every input (Inputs, in
// Layout order), and one line per transfer out of the design (Log:
// "cycle name hex", see Outputs).
type Trace struct {
	Inputs []string
	Log    []string

	vecs [][][]uint64 // each cycle's inputs as words, in Inputs' layout (replayed by benchmarks)
}

// port is one input or output of the design as the trace lays it out.
type port struct {
	name string
	w    int
}

// inputLayout lists the inputs in trace order: rst first, then the
// module's inputs in port order.
func inputLayout(m *ir.Module) []port {
	ps := []port{{"rst", 1}}
	for _, p := range m.Ports() {
		if !p.Output {
			ps = append(ps, port{p.Name, m.Node(p.Node).W})
		}
	}
	return ps
}

// route is an output stream and the fields its log lines carry, most
// significant first.
type route struct {
	name   string // in the log
	prefix string // port name prefix
	fields []string
}

// routes are the design's output streams, plus AXI-Lite read data.
var routes = []route{
	{"A", "m_port_a", []string{"tlp_hdr", "tlp_data", "tlp_keep", "tlp_sop", "tlp_eop"}},
	{"B", "m_port_b", []string{"tlp_hdr", "tlp_data", "tlp_keep", "tlp_sop", "tlp_eop"}},
	{"K", "m_kernel", []string{"slot", "tlp_hdr", "tlp_data", "tlp_keep", "tlp_sop", "tlp_eop"}},
	{"L", "m_local", []string{"tlp_hdr", "tlp_data", "tlp_keep", "tlp_sop", "tlp_eop"}},
	{"C", "m_cpl", []string{"tlp_hdr"}},
}

// drainCycles is how long a drain step waits with every output ready:
// longer than the pipeline, so everything sent before it has left.
const drainCycles = 24

// hexOf formats vals (words, least significant first) of widths ws as
// one hex number, the first the most significant, with as many digits as
// Verilog's %h prints for their concatenation.
func hexOf(vals [][]uint64, ws []int) string {
	v := new(big.Int)
	t := new(big.Int)
	n := 0
	for i, words := range vals {
		t.SetUint64(0)
		for k := len(words) - 1; k >= 0; k-- {
			t.Lsh(t, 64)
			t.Or(t, new(big.Int).SetUint64(words[k]))
		}
		t.And(t, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(ws[i])), big.NewInt(1)))
		v.Lsh(v, uint(ws[i]))
		v.Or(v, t)
		n += ws[i]
	}
	s := v.Text(16)
	if d := (n + 3) / 4; len(s) < d {
		s = strings.Repeat("0", d-len(s)) + s
	}
	return s
}

// Run drives st through the IR simulation of the bench's design and
// returns the trace. maxCycles bounds the run (a stuck design fails
// instead of hanging).
func (b *Bench) Run(st *Stimulus, maxCycles int) (*Trace, error) {
	m := b.Design.Module
	s, err := sim.New(m)
	if err != nil {
		return nil, err
	}
	d := &driver{b: b, s: s, st: st, rng: rand.New(rand.NewPCG(st.Seed, 7)), layout: inputLayout(m), in: map[string][]uint64{}}
	W := b.Design.DataWidth
	d.wb = W / 8
	tr := &Trace{}
	for cyc := 0; ; cyc++ {
		if cyc >= maxCycles {
			return tr, fmt.Errorf("cosim: seed %d: not finished after %d cycles (op %d of %d)", st.Seed, maxCycles, d.op, len(st.Ops))
		}
		if d.drive(cyc) {
			break
		}
		// Inputs of this cycle.
		var vals [][]uint64
		var ws []int
		for _, p := range d.layout {
			v := d.in[p.name]
			if v == nil {
				v = []uint64{0}
			}
			vals, ws = append(vals, v), append(ws, p.w)
			if p.name != "rst" {
				if err := s.Drive(p.name, v); err != nil {
					return nil, err
				}
			}
		}
		s.SetReset(d.in["rst"][0] != 0)
		s.Settle()
		tr.Inputs = append(tr.Inputs, hexOf(vals, ws))
		vec := make([][]uint64, len(vals))
		for k, v := range vals {
			vec[k] = append([]uint64(nil), v...)
		}
		tr.vecs = append(tr.vecs, vec)
		d.observe(cyc, tr)
		s.Step()
	}
	return tr, nil
}

// driver is the bench's side of every interface.
type driver struct {
	b      *Bench
	s      *sim.Sim
	st     *Stimulus
	rng    *rand.Rand
	layout []port
	in     map[string][]uint64
	wb     int // data bytes per beat

	op       int  // current step
	beat     int  // next beat of the current TLP
	valid    bool // a beat is offered (held until taken)
	idle     int  // cycles left in a drain
	axiPhase int  // 0 address/data offered, 1 waiting for the response
	portDown uint64
}

func (d *driver) set(name string, v ...uint64) { d.in[name] = append(d.in[name][:0], v...) }

// beats is the number of data beats of a TLP's payload (at least one).
func (d *driver) beats(op *Op) int {
	hl := tlp.Header(op.Raw).HeaderLen()
	return max(1, (len(op.Raw)-hl+d.wb-1)/d.wb)
}

// drive sets this cycle's inputs; it reports true when the stimulus is
// over.
func (d *driver) drive(cyc int) bool {
	rst := uint64(0)
	if cyc < 2 {
		rst = 1
	}
	d.set("rst", rst)
	d.set("self_id", uint64(Self))
	d.set("port_down", d.portDown)
	draining := false
	// Host stream.
	d.set("s_host_tlp_valid", 0)
	d.set("s_axil_awvalid", 0)
	d.set("s_axil_wvalid", 0)
	d.set("s_axil_arvalid", 0)
	d.set("s_axil_bready", 1)
	d.set("s_axil_rready", 1)
	d.garbage()
	if rst == 0 && d.op < len(d.st.Ops) {
		op := &d.st.Ops[d.op]
		switch op.Kind {
		case OpTLP:
			if !d.valid {
				d.valid = d.rng.IntN(100) < d.st.Offer
			}
			if d.valid {
				d.beatInputs(op)
			}
		case OpDrain:
			draining = true
		case OpPortDown:
			d.portDown = uint64(op.Data)
			d.set("port_down", d.portDown)
		case OpWriteReg:
			if d.axiPhase == 0 {
				d.set("s_axil_awaddr", uint64(op.Addr))
				d.set("s_axil_wdata", uint64(op.Data))
				d.set("s_axil_wstrb", uint64(op.Strb))
				d.set("s_axil_awvalid", 1)
				d.set("s_axil_wvalid", 1)
			}
		case OpReadReg:
			if d.axiPhase == 0 {
				d.set("s_axil_araddr", uint64(op.Addr))
				d.set("s_axil_arvalid", 1)
			}
		}
	}
	for i, r := range routes {
		ready := uint64(0)
		if draining || d.op >= len(d.st.Ops) || d.rng.IntN(100) < d.st.Ready[i] {
			ready = 1
		}
		d.set(r.prefix+"_tlp_ready", ready)
	}
	// The run ends after the last step (a drain and the register reads).
	return d.op >= len(d.st.Ops)
}

// garbage drives random values on the stream and AXI-Lite inputs that
// no valid qualifies this cycle, so the design cannot depend on them.
func (d *driver) garbage() {
	r := d.rng
	words := func(n int) []uint64 {
		v := make([]uint64, n)
		for i := range v {
			v[i] = r.Uint64()
		}
		return v
	}
	d.set("s_host_tlp_hdr", words(2)...)
	d.set("s_host_tlp_bar", r.Uint64N(8))
	if len(d.b.Config.StandIns) > 0 {
		d.set("s_host_tlp_func", r.Uint64N(4))
	}
	d.set("s_host_tlp_data", words(d.wb/8)...)
	d.set("s_host_tlp_keep", r.Uint64())
	d.set("s_host_tlp_sop", r.Uint64N(2))
	d.set("s_host_tlp_eop", r.Uint64N(2))
	d.set("s_axil_awaddr", r.Uint64N(1<<12))
	d.set("s_axil_wdata", r.Uint64N(1<<32))
	d.set("s_axil_wstrb", r.Uint64N(16))
	d.set("s_axil_araddr", r.Uint64N(1<<12))
}

// beatInputs drives beat d.beat of op's TLP.
func (d *driver) beatInputs(op *Op) {
	hl := tlp.Header(op.Raw).HeaderLen()
	n := d.beats(op)
	hdr := make([]uint64, 2)
	if d.beat == 0 {
		var h [16]byte
		copy(h[:], op.Raw[:hl])
		for i := range 8 {
			hdr[1] = hdr[1]<<8 | uint64(h[i])
			hdr[0] = hdr[0]<<8 | uint64(h[8+i])
		}
	}
	payload := op.Raw[hl:]
	data := make([]uint64, d.wb/8)
	keep := uint64(0)
	for j := range d.wb {
		at := d.beat*d.wb + j
		if at >= len(payload) {
			break
		}
		data[j/8] |= uint64(payload[at]) << (8 * (j % 8))
		keep |= 1 << (j / 4)
	}
	d.set("s_host_tlp_valid", 1)
	d.set("s_host_tlp_hdr", hdr...)
	d.set("s_host_tlp_bar", uint64(op.Bar))
	if len(d.b.Config.StandIns) > 0 {
		d.set("s_host_tlp_func", uint64(op.Fn))
	}
	d.set("s_host_tlp_data", data...)
	d.set("s_host_tlp_keep", keep)
	d.set("s_host_tlp_sop", b2u(d.beat == 0))
	d.set("s_host_tlp_eop", b2u(d.beat == n-1))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// observe logs this cycle's transfers out of the design and moves the
// stimulus on for the transfers into it.
func (d *driver) observe(cyc int, tr *Trace) {
	s := d.s
	get := func(name string) []uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			panic(err) // the layout is the generator's; a mismatch is a bug here
		}
		return append([]uint64(nil), v...)
	}
	bit := func(name string) bool { return get(name)[0] != 0 }
	for _, r := range routes {
		if !bit(r.prefix+"_tlp_valid") || d.in[r.prefix+"_tlp_ready"][0] == 0 {
			continue
		}
		var vals [][]uint64
		var ws []int
		for _, f := range r.fields {
			name := r.prefix + "_" + f
			vals = append(vals, get(name))
			ws = append(ws, d.width(name))
		}
		tr.Log = append(tr.Log, fmt.Sprintf("%d %s %s", cyc, r.name, hexOf(vals, ws)))
	}
	if bit("s_axil_rvalid") {
		tr.Log = append(tr.Log, fmt.Sprintf("%d R %s", cyc, hexOf([][]uint64{get("s_axil_rdata")}, []int{32})))
	}
	if d.in["rst"][0] != 0 || d.op >= len(d.st.Ops) {
		return
	}
	op := &d.st.Ops[d.op]
	switch op.Kind {
	case OpTLP:
		if d.valid && bit("s_host_tlp_ready") {
			d.valid = false
			d.beat++
			if d.beat == d.beats(op) {
				d.beat = 0
				d.op++
			}
		}
	case OpDrain:
		if d.idle == 0 {
			d.idle = drainCycles
		}
		d.idle--
		if d.idle == 0 {
			d.op++
		}
	case OpPortDown:
		d.op++
	case OpWriteReg:
		switch {
		case d.axiPhase == 0 && bit("s_axil_awready"):
			d.axiPhase = 1
		case d.axiPhase == 1 && bit("s_axil_bvalid"):
			d.axiPhase = 0
			d.op++
		}
	case OpReadReg:
		switch {
		case d.axiPhase == 0 && bit("s_axil_arready"):
			d.axiPhase = 1
		case d.axiPhase == 1 && bit("s_axil_rvalid"):
			d.axiPhase = 0
			d.op++
		}
	}
}

// width is the width of port name.
func (d *driver) width(name string) int {
	m := d.b.Design.Module
	for _, p := range m.Ports() {
		if p.Name == name {
			return m.Node(p.Node).W
		}
	}
	panic("cosim: no port " + name)
}
