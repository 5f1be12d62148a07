// Package cosim co-simulates the generated PCIe manager (designs/manager)
// against the manager model the emulator runs (pcie/manager): it drives
// random TLP streams — well-formed, malformed, denied, missing every
// table, back to back, with random valid/ready backpressure on every
// interface, and with ports going down, windows switched off, LUT
// entries rewritten and access rules written over AXI-Lite between
// bursts — through the IR cycle
// simulator, records every input of every cycle, replays that record into
// the emitted Verilog under Icarus and Verilator, and checks, for each of
// the three, every TLP that leaves against the model: which output, the
// translated header, the payload, the completions generated, and the
// counters read back at the end.
//
// A run is fully determined by its seed; a failing seed is re-run with
// `go test ./testbenches/cosim -run TestCosim -seed N` (see docs/hdl.md).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package cosim

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"onic/designs/manager"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// BAR addresses the bench programs into the O-NIC function (each
// aligned to its size).
var barBase = [6]uint64{0: 0xF000_0000, 2: 0x40_0000_0000, 4: 0x80_0000_0000}

// standInBase is where the host put the stand-ins' BARs (stand-in i's
// BAR b at standInBase + i<<36 + b<<32), apart from the O-NIC's.
const standInBase = 0x100_0000_0000

func standInBAR(i, b int) uint64 { return standInBase + uint64(i)<<36 + uint64(b)<<32 }

// Self is the O-NIC's routing ID in the bench.
const Self = tlp.ID(0x0300)

// Bench is one manager configuration under test: the generated design
// and a model built from the same configuration.
type Bench struct {
	Config manager.Config
	Design *manager.Design
	fn     *pcie.Function
	// standIns are the model's stand-in functions for c.StandIns, their
	// BARs at standInBAR.
	standIns []*pcie.Function
	ds       []acl.Domain
	rid      []tlp.ID
	slots    int // access rule slots
}

// NewBench generates the design for c and prepares the model's function
// (an O-NIC with the BAR sizes of c, at fixed addresses).
func NewBench(c manager.Config, f *pcie.Function) (*Bench, error) {
	d, err := manager.Build(c)
	if err != nil {
		return nil, err
	}
	for i, b := range f.BARs {
		if b.Kind != pcie.BARMem32 && b.Kind != pcie.BARMem64 {
			continue
		}
		f.Space.Write(0x10+4*i, 4, uint32(barBase[i]))
		if b.Kind == pcie.BARMem64 {
			f.Space.Write(0x14+4*i, 4, uint32(barBase[i]>>32))
		}
		if f.BARAddress(i) != barBase[i] {
			return nil, fmt.Errorf("cosim: BAR%d did not take address %#x", i, barBase[i])
		}
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	b := &Bench{Config: c, Design: d, fn: f}
	for i, si := range c.StandIns {
		sf := si.Function
		for k, size := range si.BARs() {
			if size != 0 {
				sf.Space.Write(0x10+4*k, 4, uint32(standInBAR(i, k)))
				sf.Space.Write(0x14+4*k, 4, uint32(standInBAR(i, k)>>32))
				if sf.BARAddress(k) != standInBAR(i, k) {
					return nil, fmt.Errorf("cosim: stand-in %d BAR%d did not take address %#x (stand-ins' BARs here are 64-bit)", i, k, standInBAR(i, k))
				}
			}
		}
		sf.Space.Write(0x04, 2, 0x0006)
		b.standIns = append(b.standIns, sf)
	}
	mdl, err := b.newModel()
	if err != nil {
		return nil, err
	}
	a, err := acl.Build(c.Manager.Access, mdl.Tables().KernelSlots())
	if err != nil {
		return nil, err
	}
	_, rid := mdl.Tables().RID()
	b.ds, b.rid, b.slots = a.Domains(), rid, a.RuleSlots()
	return b, nil
}

// newModel builds the model of b's configuration, its stand-ins added.
func (b *Bench) newModel() (*pmgr.Manager, error) {
	m, err := pmgr.New(b.Config.Manager, b.fn, Self)
	if err != nil {
		return nil, err
	}
	for i, si := range b.Config.StandIns {
		port := ntb.Egress{Kind: ntb.EgressPortA}
		if si.Port == "port-b" {
			port = ntb.Egress{Kind: ntb.EgressPortB}
		}
		if err := m.AddStandIn(pmgr.StandIn{Function: b.standIns[i], RemoteBARs: si.Remote, Port: port, MSI: si.MSI}); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// model returns a fresh model (counters zero, tables as configured).
func (b *Bench) model() *pmgr.Manager {
	m, err := b.newModel()
	if err != nil {
		panic(err) // NewBench built the same configuration
	}
	return m
}

// OpKind says what a stimulus step does.
type OpKind uint8

// Stimulus steps.
const (
	OpTLP      OpKind = iota // send a TLP from the host
	OpDrain                  // stop sending until everything has left (all outputs ready)
	OpPortDown               // set port_down (A bit 0, B bit 1)
	OpWriteReg               // an AXI-Lite write
	OpReadReg                // an AXI-Lite read
)

// Op is one step of a stimulus.
type Op struct {
	Kind OpKind
	Raw  []byte   // OpTLP: header (12 or 16 bytes) and payload
	Bar  uint8    // OpTLP: the BAR the PCIe core decoded (7: none)
	Fn   uint8    // OpTLP: the function it decoded it for (0 the O-NIC, i+1 stand-in i)
	Addr uint32   // register
	Data uint32   // register value, or port_down
	Strb uint8    // write strobes
	TLP  *tlp.TLP // OpTLP: the same TLP as the model sees it
}

// Stimulus is a run's steps and the backpressure it applies.
type Stimulus struct {
	Seed uint64
	Ops  []Op
	// Percent of cycles on which the host offers a new beat, and on which
	// each output (port A, port B, kernel, local, completions) is ready.
	Offer int
	Ready [5]int
}

// Generate makes a stimulus of about n TLPs from seed.
func (b *Bench) Generate(seed uint64, n int) *Stimulus {
	rng := rand.New(rand.NewPCG(seed, seed^0x6F6E6963))
	s := &Stimulus{Seed: seed, Offer: 30 + rng.IntN(71)}
	for i := range s.Ready {
		s.Ready[i] = 20 + rng.IntN(81)
	}
	if rng.IntN(4) == 0 { // back to back, nothing stalls
		s.Offer = 100
		s.Ready = [5]int{100, 100, 100, 100, 100}
	}
	g := gen{b: b, rng: rng}
	for range 2 * b.slots { // software sets up its access rules first
		s.Ops = append(s.Ops, g.rule()...)
	}
	for len(s.Ops) < n {
		if rng.IntN(60) == 0 {
			s.Ops = append(s.Ops, Op{Kind: OpDrain})
			s.Ops = append(s.Ops, g.control()...)
			continue
		}
		s.Ops = append(s.Ops, g.tlp())
	}
	s.Ops = append(s.Ops, Op{Kind: OpDrain})
	for i := range b.Design.Registers {
		s.Ops = append(s.Ops, Op{Kind: OpReadReg, Addr: b.Design.Registers[i].Offset})
	}
	return s
}

// gen draws random steps.
type gen struct {
	b     *Bench
	rng   *rand.Rand
	down  uint32
	en    uint64 // window enables as software last wrote them
	init  bool
	rules []acl.RuleSlot // the access rule slots as software last wrote them
}

// start gives the generator software's view of the registers after
// reset, once.
func (g *gen) start() {
	if !g.init {
		g.en, g.init = ntb.Enables(g.b.Design.Windows), true
		g.rules = make([]acl.RuleSlot, g.b.slots)
	}
}

// control is a random change made between bursts: a port going down or
// up, a window switched, a LUT entry rewritten, an access rule written.
func (g *gen) control() []Op {
	d := g.b.Design
	g.start()
	switch g.rng.IntN(4) {
	case 3:
		if g.b.slots > 0 {
			return g.rule()
		}
	case 0:
		g.down = uint32(g.rng.IntN(4))
		return []Op{{Kind: OpPortDown, Data: g.down}}
	case 1:
		if len(d.Windows) > 0 {
			g.en ^= 1 << g.rng.IntN(len(d.Windows))
			strb := uint8(0xF)
			if g.rng.IntN(3) == 0 {
				strb = uint8(1 + g.rng.IntN(15)) // only some bytes change
			}
			return []Op{{Kind: OpWriteReg, Addr: pmgr.RegWinEnLo, Data: uint32(g.en), Strb: strb},
				{Kind: OpWriteReg, Addr: pmgr.RegWinEnHi, Data: uint32(g.en >> 32), Strb: 0xF}}
		}
	}
	if len(d.LUT.Entries) == 0 {
		return nil
	}
	i := g.rng.IntN(len(d.LUT.Entries))
	if g.rng.IntN(16) == 0 {
		i += len(d.LUT.Entries) // past the table: writes nothing
	}
	eg := []uint32{1, 2, 3, 4}[g.rng.IntN(4)]
	ctrl := uint32(g.rng.IntN(2)) | eg<<1
	if eg == 3 {
		ctrl |= uint32(g.rng.IntN(4)) << 8
	}
	at := g.rng.Uint64N(1<<40) &^ (d.LUT.EntrySize - 1)
	return []Op{
		{Kind: OpWriteReg, Addr: pmgr.RegLUTIndex, Data: uint32(i), Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegLUTAddrLo, Data: uint32(at), Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegLUTAddrHi, Data: uint32(at >> 32), Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegLUTCtrl, Data: ctrl, Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegLUTCommit, Data: 1, Strb: 0xF},
	}
}

// rule writes an access rule slot: for a domain (or an index past them),
// over a translation target, a configured range or the register BAR, on
// or off, with any rights; sometimes into an index past the slots, and
// sometimes with only some bytes of a staging register written.
func (g *gen) rule() []Op {
	g.start()
	r := g.rng
	var bases []uint64 // mostly where translations land, so rules decide
	for _, w := range g.b.Design.Windows {
		bases = append(bases, w.Translated, w.Translated, w.FailoverAt)
	}
	for _, e := range g.b.Design.LUT.Entries {
		if e.Enabled {
			bases = append(bases, e.Translated)
		}
	}
	if r.IntN(3) == 0 {
		for _, d := range g.b.ds {
			for _, sp := range d.Spans {
				bases = append(bases, sp.Base, sp.End)
			}
		}
		bases = append(bases, 0, r.Uint64()>>r.IntN(40))
	}
	base := bases[r.IntN(len(bases))]&^(acl.Page-1) + uint64(r.IntN(24)-4)*acl.Page
	rs := acl.RuleSlot{Enabled: r.IntN(4) != 0, Read: r.IntN(2) == 0, Write: r.IntN(3) != 0,
		Domain: uint16(r.IntN(max(len(g.b.ds), 1))), Base: base, Pages: []uint32{0, 1, 2, 16, 256, 1 << 20}[r.IntN(6)]}
	if r.IntN(8) == 0 {
		rs.Domain = uint16(len(g.b.ds) + r.IntN(3)) // no such domain: the commit writes nothing
	}
	if r.IntN(8) == 0 {
		// At the top of the address space: with more pages than are left
		// below 2^64 the range would wrap, and the commit writes nothing.
		base = -uint64(r.IntN(4)+1) * acl.Page
		rs.Base, rs.Pages = base, uint32(r.IntN(8))
	}
	i := r.IntN(g.b.slots)
	switch {
	case r.IntN(16) == 0:
		i = g.b.slots + r.IntN(4) // past the slots: writes nothing
	case int(rs.Domain) < len(g.b.ds) && acl.SlotFits(rs.Base, rs.Pages):
		g.rules[i] = rs
	}
	ctrl := uint32(b2u(rs.Enabled) | b2u(rs.Read)<<1 | b2u(rs.Write)<<2 | uint64(rs.Domain)<<16)
	lo := uint32(base) | uint32(r.IntN(acl.Page)) // the low bits are ignored
	ops := []Op{
		{Kind: OpWriteReg, Addr: pmgr.RegACLIndex, Data: uint32(i), Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegACLBaseLo, Data: lo, Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegACLBaseHi, Data: uint32(base >> 32), Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegACLPages, Data: rs.Pages, Strb: 0xF},
		{Kind: OpWriteReg, Addr: pmgr.RegACLCtrl, Data: ctrl, Strb: 0xF},
	}
	if r.IntN(4) == 0 { // rewrite the domain byte alone
		ops = append(ops, Op{Kind: OpWriteReg, Addr: pmgr.RegACLCtrl, Data: ctrl, Strb: 0x4})
	}
	return append(ops, Op{Kind: OpWriteReg, Addr: pmgr.RegACLCommit, Data: 0, Strb: uint8(r.IntN(16))})
}

// requester picks a requester ID: one a domain names, one with a proxy
// ID, the O-NIC itself, or anyone.
func (g *gen) requester() tlp.ID {
	switch g.rng.IntN(4) {
	case 0, 1:
		if len(g.b.ds) > 0 {
			d := g.b.ds[g.rng.IntN(len(g.b.ds))]
			if len(d.Requesters) > 0 {
				r := d.Requesters[g.rng.IntN(len(d.Requesters))]
				return r[0] + tlp.ID(g.rng.IntN(int(r[1]-r[0])+1))
			}
		}
	case 2:
		if len(g.b.rid) > 0 {
			return g.b.rid[g.rng.IntN(len(g.b.rid))]
		}
		return Self
	}
	return tlp.ID(g.rng.IntN(1 << 16))
}

// address picks a memory address: in or at the edge of a window, a LUT
// entry, an ACL range, the register BAR, another BAR, or nowhere.
func (g *gen) address() uint64 { return g.anyAddress() &^ 3 }

// targeted picks a requester and an address the tables are likely to
// let through: a domain's requester, and a window or LUT entry whose
// translation lands in one of that domain's ranges.
func (g *gen) targeted() (tlp.ID, uint64, bool) {
	r := g.rng
	if len(g.b.ds) == 0 {
		return 0, 0, false
	}
	di := r.IntN(len(g.b.ds))
	d := g.b.ds[di]
	spans := d.Spans
	for _, rs := range g.rules { // and the rule slots software gave it
		if rs.Enabled && int(rs.Domain) == di && rs.Pages > 0 && rs.Base+uint64(rs.Pages)*acl.Page > rs.Base {
			spans = append(spans[:len(spans):len(spans)], acl.Span{Base: rs.Base, End: rs.Base + uint64(rs.Pages)*acl.Page, Read: rs.Read, Write: rs.Write})
		}
	}
	if len(d.Requesters) == 0 || len(spans) == 0 {
		return 0, 0, false
	}
	req := d.Requesters[r.IntN(len(d.Requesters))]
	id := req[0] + tlp.ID(r.IntN(int(req[1]-req[0])+1))
	if r.IntN(4) != 0 { // mostly one with a proxy ID, so it may leave through a port
		for _, p := range g.b.rid {
			if p >= req[0] && p <= req[1] && r.IntN(2) == 0 {
				id = p
			}
		}
	}
	sp := spans[r.IntN(len(spans))]
	if n := len(spans) - len(d.Spans); n > 0 && r.IntN(2) == 0 {
		sp = spans[len(d.Spans)+r.IntN(n)] // one of the rule slots
	}
	type target struct {
		bar            int
		off, size, xlt uint64
	}
	var ts []target
	for _, w := range g.b.Design.Windows {
		ts = append(ts, target{w.BAR, w.Offset, w.Size, w.Translated})
		if w.Failover.Kind != ntb.EgressNone {
			ts = append(ts, target{w.BAR, w.Offset, w.Size, w.FailoverAt})
		}
	}
	if l := g.b.Design.LUT; len(l.Entries) > 0 {
		for i, e := range l.Entries {
			if !e.Enabled && r.IntN(8) != 0 {
				continue
			}
			ts = append(ts, target{l.BAR, l.Offset + uint64(i)*l.EntrySize, l.EntrySize, e.Translated})
		}
	}
	rb := g.b.Config.Manager.RegisterBAR
	ts = append(ts, target{rb, 0, g.b.Config.BARs[rb], 0})
	for i, si := range g.b.Config.StandIns { // a stand-in's BAR is a window onto the device's
		for k, size := range si.BARs() {
			if size != 0 {
				ts = append(ts, target{-1 - (i*8 + k), 0, size, si.Remote[k]})
			}
		}
	}
	r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
	for _, t := range ts {
		lo, hi := max(sp.Base, t.xlt), min(sp.End, t.xlt+t.size)
		if lo >= hi {
			continue
		}
		a := lo + r.Uint64N(hi-lo)
		base := uint64(0)
		if t.bar < 0 {
			base = standInBAR((-1-t.bar)/8, (-1-t.bar)%8)
		} else {
			base = barBase[t.bar]
		}
		return id, base + t.off + (a - t.xlt), true
	}
	return 0, 0, false
}

// multicastTarget picks a write through a multicast window anywhere in
// it, by a requester of a domain with a range its first copy lands in:
// whether the second copy may be made is the access check's to say
// (each copy is checked on its own), and a domain rarely has the right
// for all of them.
func (g *gen) multicastTarget() (tlp.ID, uint64, bool) {
	r := g.rng
	var ws []ntb.Window
	for _, w := range g.b.Design.Windows {
		if w.Multicast {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return 0, 0, false
	}
	w := ws[r.IntN(len(ws))]
	for _, d := range g.b.ds {
		for _, sp := range d.Spans {
			if sp.Write && len(d.Requesters) > 0 && sp.Base < w.Translated+w.Size && w.Translated < sp.End {
				req := d.Requesters[r.IntN(len(d.Requesters))]
				id := req[0]
				for _, p := range g.b.rid { // one with a proxy ID, so it may leave
					if p >= req[0] && p <= req[1] {
						id = p
					}
				}
				return id, barBase[w.BAR] + w.Offset + r.Uint64N(w.Size), true
			}
		}
	}
	return 0, 0, false
}

func (g *gen) anyAddress() uint64 {
	d := g.b.Design
	r := g.rng
	switch r.IntN(8) {
	case 0, 1, 2:
		if len(d.Windows) > 0 {
			w := d.Windows[r.IntN(len(d.Windows))]
			off := w.Offset + r.Uint64N(w.Size)
			if r.IntN(4) == 0 {
				off = w.Offset + w.Size - 8 + r.Uint64N(16) // across the end
			}
			return barBase[w.BAR] + off
		}
	case 3, 4:
		if l := d.LUT; len(l.Entries) > 0 {
			return barBase[l.BAR] + l.Offset + r.Uint64N(uint64(len(l.Entries)+1)*l.EntrySize)
		}
	case 5:
		return barBase[g.b.Config.Manager.RegisterBAR] + r.Uint64N(g.b.Config.BARs[g.b.Config.Manager.RegisterBAR]+64)
	case 6:
		if len(g.b.ds) > 0 { // an address a domain names, sent straight at a BAR
			bar := []int{0, 2, 4}[r.IntN(3)]
			return barBase[bar] + r.Uint64N(g.b.Config.BARs[bar]+1)
		}
	case 7:
		if n := len(g.b.Config.StandIns); n > 0 && r.IntN(2) == 0 { // a stand-in's BAR, or past its end
			i, k := r.IntN(n), r.IntN(6)
			return standInBAR(i, k) + r.Uint64N(g.b.Config.StandIns[i].BARs()[k]+64)
		}
	}
	return r.Uint64() >> r.IntN(33)
}

// barOf is the function and BAR the PCIe core would report for addr
// (BAR 7: none), for memory requests; other TLPs carry none.
func (b *Bench) barOf(addr uint64) (fn, bar uint8) {
	for i := range 6 {
		if s := b.Config.BARs[i]; s != 0 && addr >= barBase[i] && addr-barBase[i] < s {
			return 0, uint8(i)
		}
	}
	for i, si := range b.Config.StandIns {
		for k, s := range si.BARs() {
			if base := standInBAR(i, k); s != 0 && addr >= base && addr-base < s {
				return uint8(i + 1), uint8(k)
			}
		}
	}
	return 0, 7
}

var kinds = []tlp.Kind{tlp.MWr, tlp.MWr, tlp.MWr, tlp.MRd, tlp.MRd, tlp.MRd, tlp.MRdLk, tlp.FetchAdd, tlp.Swap, tlp.CAS,
	tlp.IORd, tlp.IOWr, tlp.CfgRd0, tlp.CfgWr1, tlp.Msg, tlp.MsgD, tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}

// tlp draws one TLP from the host.
//
// Long: one short case per kind it handles, in one switch; split, the
// cases would only move apart.
func (g *gen) tlp() Op {
	r := g.rng
	if r.IntN(40) == 0 { // a reserved Fmt/Type: the core let it through
		for {
			raw := make([]byte, 16)
			for i := range raw {
				raw[i] = byte(r.IntN(256))
			}
			f, typ := tlp.Fmt(raw[0]>>5), raw[0]&31
			if f == tlp.FmtPrefix || tlp.KindOf(f, typ) != tlp.KindInvalid {
				continue
			}
			raw[2] &^= 0x3 // keep the payload short
			raw[3] &= 0x7
			h := tlp.Header(raw)
			n := 12 + 4*int(f&1)
			if f&2 != 0 {
				n += 4 * max(int(h.LengthField()), 1)
			}
			for len(raw) < n {
				raw = append(raw, byte(r.IntN(256)))
			}
			raw = raw[:n]
			t := &tlp.TLP{Fmt: f, Type: typ, RequesterID: h.RequesterID()}
			return Op{Kind: OpTLP, Raw: raw, Bar: 7, TLP: t}
		}
	}
	k := kinds[r.IntN(len(kinds))]
	t := tlp.TLP{TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), Tag: uint16(r.IntN(1024)), RequesterID: g.requester()}
	if r.IntN(8) == 0 {
		t.TH, t.PH = true, uint8(r.IntN(4))
	}
	t.LN = r.IntN(16) == 0
	t.EP = r.IntN(16) == 0
	addr64 := false
	switch k.Class() {
	case tlp.ClassMemory, tlp.ClassAtomic, tlp.ClassIO:
		t.Address = g.address()
		if id, a, ok := g.targeted(); ok && r.IntN(2) == 0 {
			t.RequesterID, t.Address = id, a&^3
		}
		if id, a, ok := g.multicastTarget(); ok && k == tlp.MWr && r.IntN(6) == 0 {
			t.RequesterID, t.Address = id, a&^3
		}
		addr64 = t.Address >= 1<<32 || r.IntN(10) == 0 && k.Class() != tlp.ClassIO
		if k.Class() == tlp.ClassIO {
			t.Address &= 0xFFFF_FFFC
		}
		t.FirstBE, t.LastBE = uint8(r.IntN(16)), uint8(r.IntN(16))
		t.Length = uint16(1 + r.IntN(4))
		switch r.IntN(6) {
		case 0:
			t.Length = uint16(1 + r.IntN(64))
		case 1:
			t.Length = uint16(1 + r.IntN(1024)) // up to 64 beats of payload
			if k == tlp.MWr && r.IntN(4) != 0 {
				t.Length = uint16(1 + r.IntN(128))
			}
		}
		if t.Length == 1 {
			t.LastBE = 0
		}
		switch k {
		case tlp.FetchAdd, tlp.Swap:
			t.Length, t.FirstBE, t.LastBE = uint16(1+r.IntN(2)), 0xF, 0
			if t.Length == 2 {
				t.LastBE = 0xF
			}
		case tlp.CAS:
			t.Length, t.FirstBE, t.LastBE = []uint16{2, 4, 8}[r.IntN(3)], 0xF, 0xF
		case tlp.IORd, tlp.IOWr:
			t.Length, t.LastBE = 1, 0
		}
		if k.Class() != tlp.ClassMemory && k.Class() != tlp.ClassAtomic || k == tlp.MRdLk {
			t.TH, t.PH = false, 0
		}
	case tlp.ClassConfig:
		t.CompleterID, t.Register, t.FirstBE, t.Length = tlp.ID(r.IntN(1<<16)), uint16(r.IntN(1024))*4, uint8(r.IntN(16)), 1
		t.TH, t.PH = false, 0
	case tlp.ClassMessage:
		t.MessageCode = uint8(r.IntN(256))
		binary.BigEndian.PutUint64(t.MessageData[:], r.Uint64())
		if k == tlp.MsgD {
			t.Length = uint16(1 + r.IntN(8))
		}
		t.TH, t.PH = false, 0
	case tlp.ClassCompletion:
		t.CompleterID, t.Status, t.ByteCount, t.LowerAddress = tlp.ID(r.IntN(1<<16)), tlp.Status(r.IntN(5)), uint16(1+r.IntN(4096)), uint8(r.IntN(128))
		if r.IntN(2) == 0 {
			t.RequesterID = Self
		}
		if k == tlp.CplD || k == tlp.CplDLk {
			t.Length = uint16(1 + r.IntN(32))
		}
		t.TH, t.PH = false, 0
	}
	msix := k == tlp.MWr && r.IntN(3) == 0 && g.msixWrite(&t)
	if msix {
		addr64 = t.Address >= 1<<32
	}
	var routing tlp.Routing
	if k.Class() == tlp.ClassMessage {
		routing = tlp.Routing([]uint8{0, 2, 3, 4, 5}[r.IntN(5)])
	}
	f, typ, ok := tlp.FmtType(k, addr64, routing)
	if !ok {
		f, typ, _ = tlp.FmtType(k, false, routing)
	}
	t.Fmt, t.Type = f, typ
	if k.HasData() {
		t.Data = make([]byte, int(t.Length)*4)
		for i := range t.Data {
			t.Data[i] = byte(r.IntN(256))
		}
	}
	if msix {
		g.msixData(&t)
	}
	raw, err := t.MarshalBinary()
	if err != nil {
		panic(fmt.Sprintf("cosim: generated an unencodable %s: %v", k, err)) // a bug in this generator
	}
	var dec tlp.TLP
	if err := dec.Decode(raw); err != nil {
		panic(fmt.Sprintf("cosim: generated %s does not decode: %v", k, err))
	}
	fn, bar := uint8(0), uint8(7)
	if c := k.Class(); c == tlp.ClassMemory || c == tlp.ClassAtomic {
		fn, bar = g.b.barOf(dec.Address)
	}
	return Op{Kind: OpTLP, Raw: raw, Bar: bar, Fn: fn, TLP: &dec}
}

// msixWrite aims memory write t at the MSI-X table of a stand-in with an
// MSI window, as a driver programs a vector: mostly the host's requester
// (which may reach the device), a DW or two at an entry's address or
// data, sometimes across an entry, into the table from before it, or
// with a partial byte enable. It reports false when no stand-in has a
// window.
func (g *gen) msixWrite(t *tlp.TLP) bool {
	r := g.rng
	var with []int
	for i, si := range g.b.Config.StandIns {
		if si.MSI != nil {
			with = append(with, i)
		}
	}
	if len(with) == 0 {
		return false
	}
	i := with[r.IntN(len(with))]
	bar, off, end := g.b.Config.StandIns[i].Function.MSIXTable()
	at := off + 4*r.Uint64N((end-off)/4+8) - 16 // (from 16 bytes before the table to 16 past it)
	if r.IntN(2) == 0 {
		at = off + 16*r.Uint64N((end-off)/16) + 4*r.Uint64N(2) // an entry's address
	}
	t.Address = standInBAR(i, bar) + at
	t.Length = uint16([]int{1, 1, 2, 2, 3, 4, 5}[r.IntN(7)])
	t.FirstBE, t.LastBE = 0xF, 0xF
	if r.IntN(8) == 0 {
		t.FirstBE = uint8(r.IntN(16))
	}
	if r.IntN(8) == 0 {
		t.LastBE = uint8(r.IntN(16))
	}
	if t.Length == 1 {
		t.LastBE = 0
	}
	if r.IntN(8) != 0 {
		t.RequesterID = 0 // 00:00.0, the host's, with a proxy ID
	}
	return true
}

// msixData fills the first DWs of an MSI-X table write t with what a
// driver writes there: mostly an address in the window (its low DW, its
// high DW, where the entry has them), sometimes not.
func (g *gen) msixData(t *tlp.TLP) {
	r := g.rng
	fn, bar := g.b.barOf(t.Address)
	if fn == 0 {
		return
	}
	si := g.b.Config.StandIns[fn-1]
	w := si.MSI
	_, off, _ := si.Function.MSIXTable()
	k := int((t.Address - standInBAR(int(fn-1), int(bar)) - off) % 16 / 4) // (off: below 2^32 in the BAR)
	entry := []uint32{uint32(w.HostBase) + uint32(r.Uint64N(w.Size))&^3, uint32(w.HostBase >> 32), r.Uint32(), r.Uint32() & 1}
	for j := range entry[:2] {
		if r.IntN(10) == 0 {
			entry[j] = r.Uint32()
		}
	}
	for d := 0; 4*d+4 <= len(t.Data); d++ {
		binary.LittleEndian.PutUint32(t.Data[4*d:], entry[(k+d)%4])
	}
}
