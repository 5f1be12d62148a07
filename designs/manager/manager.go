// Package manager generates the O-NIC's PCIe manager as hdlgen/ir: the
// hardware twin of pcie/manager, built from the same firmware
// configuration and the same checked tables (pcie/ntb, pcie/acl) the
// emulator runs, and held equal to it TLP by TLP by co-simulation
// (testbenches/cosim).
//
// The module sits on the host-facing side of the O-NIC. TLPs from the
// host's PCIe core arrive on a generic TLP stream — a 128-bit header
// sideband with the start-of-packet beat, 256 or 512 bits of data per
// beat with a keep bit per DW, start and end of packet, and the BAR the
// core decoded — the shape of the generic TLP buses of open FPGA NICs,
// independent of the vendor's PCIe core. Each TLP goes through
//
//	input register slice
//	stage 1: header decode, kind table, BAR offset, LUT read, requester-ID table
//	stage 2: direct windows and LUT entry, failover and multicast, port state
//	stage 3: access check (pcie/acl domains)
//	stage 4: decision (pcie/manager.Process order) and header rewrite
//	router: port A, port B, kernel slot, local registers, or a UR/CA
//	        completion back to the host; posted TLPs that fail are dropped
//	output register slices
//
// one beat per cycle when nothing stalls. Every TLP is counted under the
// reason pcie/manager gives it; the counters, the window enables and the
// LUT are on an AXI-Lite register interface (see Registers).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package manager

import (
	"fmt"
	"math/bits"
	"onic/designs/internal/tlpbus"
	"regexp"
	"strings"

	"onic/designs/internal/access"
	"onic/designs/internal/tlphdr"
	"onic/designs/internal/translate"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// Config is what the generator needs: the manager part of the firmware
// spec, the sizes of the O-NIC function's BARs, and the data path width.
type Config struct {
	// Name is the Verilog module name (default "onic_pcie_manager").
	Name    string
	Manager pmgr.Config
	// BARs are the sizes of the function's memory BARs (0: no BAR), as
	// pcie.Function.BARs has them; BARs are aligned to their size, so an
	// offset is the address's low bits.
	BARs [6]uint64
	// DataWidth is the TLP data path in bits: 256 or 512 (default 512).
	DataWidth int
	// ClockMHz is the clock the design is meant for (default 250); it is
	// written into the constraints and used to turn cycles into time.
	ClockMHz float64
	// Hold is the O-NIC's down policy (emu/scenario's down_policy): true
	// for hold, the emulator's default, false for fail. Under hold a TLP
	// for a window whose port is down leaves for that port, with its
	// translated address and proxy requester, when it would pass the
	// access check and has a proxy ID (pcie/manager.Outcome.Holdable), to
	// wait in the card's hold buffer; it still counts as port-down, as
	// the model counts it. Under fail, and for the rest under hold, it
	// fails with port-down.
	Hold bool
	// HoldTLPs is, under hold, how many TLPs the card's buffer for each
	// port keeps while the port is down (emu/scenario's hold_tlps; default
	// 1024); more are dropped and counted. The manager alone does not use
	// it.
	HoldTLPs int
	// StandIns are the functions the O-NIC presents to its host for lent
	// devices (pcie/manager.AddStandIn), functions 1 to 3 of the card's
	// PCIe block: s_host_tlp_func says which function a request is for.
	// An access to a stand-in's BAR goes out of its port to the device's
	// BAR at the same offset, through the access check, with the
	// requester's proxy ID, as the model's does; none is held while the
	// port is down.
	StandIns []StandIn
	// DropTap adds, for a simulation that must know which host TLP the
	// manager failed (the emulator's RTL backend: the card's drop taps),
	// the outputs drop_tap (1 in the cycle a failed posted TLP with a
	// payload leaves the pipeline), drop_tap_word (the first 64 bits of
	// its payload) and drop_tap_reason (its reason, REASON_*). A manager
	// for a board leaves them out.
	DropTap bool
}

// StandIn is a stand-in function for a lent device.
type StandIn struct {
	// Port is the optical port the device is behind: port-a or port-b.
	Port string
	// Function is what the stand-in presents to the host: the lent
	// device's IDs, class and BARs (pcie.Function.StandIn makes one from
	// the device); its BARs' sizes are the windows', and the card's
	// build.tcl gives the block's function its IDs and BARs.
	Function *pcie.Function
	// Remote is where the lender's enumeration put each of the device's
	// BARs in its domain (aligned to the BAR's size).
	Remote [6]uint64
	// MSI, when set, is the loan's MSI window: writes into the
	// stand-in's MSI-X table (where the function's MSI-X capability puts
	// it, in the device's BAR) leave with their message addresses mapped
	// through it, as pcie/manager.StandIn.MSI does; a write the window
	// cannot carry is dropped as msix-address.
	MSI *pmgr.MSIWindow
}

// BARs are the sizes of the stand-in's memory BARs (0: none).
func (si StandIn) BARs() [6]uint64 { return si.Function.MemorySizes() }

// MaxStandIns is how many stand-ins a card presents: the PCIE4 block has
// four physical functions, and the O-NIC is the first.
const MaxStandIns = 3

// Design is a generated manager and what the toolchain reports about it.
type Design struct {
	Module *ir.Module
	// Config is what it was built from (BuildPortIn takes the same).
	Config Config
	// Depth is the latency in cycles from a beat entering s_host to it
	// leaving on an output, when nothing stalls; II is the initiation
	// interval (cycles between beats the pipeline accepts).
	Depth, II int
	ClockMHz  float64
	DataWidth int
	Windows   []ntb.Window
	LUT       ntb.LUTView
	// Registers is the AXI-Lite register map.
	Registers []pmgr.Register
	// Reasons are the counters, in register order.
	Reasons []pmgr.Reason
	// Domains are the access domains' names, in configuration order: the
	// index ACL_CTRL's domain field takes. RuleSlots is the number of
	// access rule slots (0: no ACL_* registers).
	Domains   []string
	RuleSlots int

	access *ir.Module // the access check's module (Design.PortIn shares it)
}

// Pipeline stages between the input and output register slices: the
// contract's depth (pcie/manager.Depth) less the two slices. TestLatency
// measures the generated design against the contract.
const stages = pmgr.Depth - 2

// Egress numbers of the ntb package as 3-bit codes.
const (
	kindPortA  = uint64(ntb.EgressPortA)
	kindPortB  = uint64(ntb.EgressPortB)
	kindKernel = uint64(ntb.EgressKernel)
	kindLocal  = uint64(ntb.EgressLocal)
)

// Decision actions as 2-bit codes (pcie/manager.Action values).
const (
	actForward  = uint64(pmgr.Forward)
	actComplete = uint64(pmgr.Complete)
	actDrop     = uint64(pmgr.Drop)
)

// Kind-table bits: one entry per (Fmt, Type), from the tlp package.
const (
	kMemAtomic = 1 << iota // memory request or AtomicOp
	kCfgMsg                // configuration request or message
	kCpl                   // completion
	kNonPosted             // answered by a completion
	kData                  // carries a payload
	kMRd                   // MRd or MRdLk (a failed one reports its byte count)
	kLock                  // MRdLk (answered by CplLk)
	kindBits   = iota
)

// kindNames name the kind table's bits, bit 0 first, for the Verilog.
var kindNames = []string{"mem_atomic", "cfg_msg", "cpl", "non_posted", "data", "mrd", "lock"}

// hasMulticast reports whether any of ws is a multicast window.
func hasMulticast(ws []ntb.Window) bool {
	for _, w := range ws {
		if w.Multicast {
			return true
		}
	}
	return false
}

// accessOp is the acl.Op (2 bits) a memory request or AtomicOp with
// these kind bits needs, as acl.OpOf: write when it carries a payload,
// read when it carries none or is answered (an AtomicOp needs both).
func accessOp(m *ir.Module, hasData, nonPosted ir.Value) ir.Value {
	return m.Named("access_op", m.Concat(hasData, m.Or(m.Not(hasData), nonPosted)))
}

// KindTable is the generator's table of TLP kinds, indexed by Fmt<<5 |
// Type, built from tlp.KindOf so the hardware classifies every header
// exactly as the emulator does — reserved encodings included.
func KindTable() []uint64 {
	t := make([]uint64, 256)
	for i := range t {
		k := tlp.KindOf(tlp.Fmt(i>>5), uint8(i&31))
		var v uint64
		switch k.Class() {
		case tlp.ClassMemory, tlp.ClassAtomic:
			v |= kMemAtomic
		case tlp.ClassConfig, tlp.ClassMessage:
			v |= kCfgMsg
		case tlp.ClassCompletion:
			v |= kCpl
		}
		if k.IsNonPosted() {
			v |= kNonPosted
		}
		if k.HasData() {
			v |= kData
		}
		if k == tlp.MRd || k == tlp.MRdLk {
			v |= kMRd
		}
		if k == tlp.MRdLk {
			v |= kLock
		}
		t[i] = v
	}
	return t
}

// withDefaults is c with its name and data width defaulted, or an error
// if the width is not one the generators build.
func (c Config) withDefaults() (Config, error) {
	if c.Name == "" {
		c.Name = "onic_pcie_manager"
	}
	if !moduleName.MatchString(c.Name) {
		// It names the module, its files and the C header: nothing that
		// could leave the output directory or need escaping.
		return c, fmt.Errorf("name %q: a module name is a letter, then up to 63 letters, digits and _", c.Name)
	}
	if c.DataWidth == 0 {
		c.DataWidth = 512
	}
	if c.DataWidth != 256 && c.DataWidth != 512 {
		return c, fmt.Errorf("data_width: %d must be 256 or 512", c.DataWidth)
	}
	return c, nil
}

// moduleName is the form of Config.Name.
var moduleName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// Build generates the manager for c.
func Build(c Config) (*Design, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	if c.ClockMHz == 0 {
		c.ClockMHz = 250
	}
	if c.ClockMHz < 0 {
		return nil, fmt.Errorf("clock_mhz: %g must be positive", c.ClockMHz)
	}
	for i, s := range c.BARs {
		if s != 0 && bits.OnesCount64(s) != 1 {
			return nil, fmt.Errorf("bars[%d]: size %#x is not a power of two", i, s)
		}
	}
	if r := c.Manager.RegisterBAR; r < 0 || r > 5 || c.BARs[r] == 0 {
		return nil, fmt.Errorf("register_bar: %d is not a memory BAR", r)
	}
	if len(c.StandIns) > MaxStandIns {
		return nil, fmt.Errorf("stand_ins: %d; the card's PCIe block has functions for %d", len(c.StandIns), MaxStandIns)
	}
	for i, si := range c.StandIns {
		if si.Port != "port-a" && si.Port != "port-b" {
			return nil, fmt.Errorf("stand_ins[%d].port: %q must be port-a or port-b", i, si.Port)
		}
		if si.Function == nil {
			return nil, fmt.Errorf("stand_ins[%d].function: the stand-in's function (IDs and BARs) is needed", i)
		}
		any := false
		for b, size := range si.BARs() {
			switch {
			case size == 0 && si.Remote[b] != 0:
				return nil, fmt.Errorf("stand_ins[%d].remote[%d]: %#x for a BAR the device does not have", i, b, si.Remote[b])
			case size == 0:
			case bits.OnesCount64(size) != 1:
				return nil, fmt.Errorf("stand_ins[%d].bars[%d]: size %#x is not a power of two", i, b, size)
			case si.Remote[b]%size != 0:
				return nil, fmt.Errorf("stand_ins[%d].remote[%d]: %#x is not aligned to the BAR's size %#x", i, b, si.Remote[b], size)
			default:
				any = true
			}
		}
		if !any {
			return nil, fmt.Errorf("stand_ins[%d].bars: the device has no memory BAR to present", i)
		}
		if si.MSI != nil {
			if err := si.MSI.Check(); err != nil {
				return nil, fmt.Errorf("stand_ins[%d].msi: %v", i, err)
			}
			if bar, _, _ := si.Function.MSIXTable(); bar < 0 {
				return nil, fmt.Errorf("stand_ins[%d].msi: the device has no MSI-X capability whose table to rewrite", i)
			}
		}
	}
	tab, a, err := tables(c)
	if err != nil {
		return nil, err
	}
	d := &Design{Config: c, Depth: stages + 2, II: 1, ClockMHz: c.ClockMHz, DataWidth: c.DataWidth,
		Windows: tab.Windows(), LUT: tab.LUT(), Reasons: pmgr.Reasons(), RuleSlots: a.RuleSlots()}
	for _, dom := range a.Domains() {
		d.Domains = append(d.Domains, dom.Name)
	}
	g := &gen{c: c, d: d, m: ir.NewModule(c.Name), tab: tab, acl: a}
	if err := g.build(); err != nil {
		return nil, err
	}
	if err := g.m.Check(); err != nil {
		return nil, err
	}
	d.Module, d.access = g.m, g.access
	return d, nil
}

// tables builds c's translation and access tables, as both pipelines
// (the host's and the ports', buildPortIn) generate from them, and checks
// what they may hold: at most 24 kernel slots (the access check numbers
// no more), and the relay and kernel_in ranges, which act on TLPs from
// the optical ports.
func tables(c Config) (*ntb.Tables, *acl.ACL, error) {
	tab, err := ntb.Build(c.Manager.Translation, c.BARs)
	if err != nil {
		return nil, nil, fmt.Errorf("translation.%v", err)
	}
	a, err := acl.Build(c.Manager.Access, tab.KernelSlots())
	if err != nil {
		return nil, nil, fmt.Errorf("access.%v", err)
	}
	if tab.KernelSlots() > 24 {
		return nil, nil, fmt.Errorf("translation.kernel_slots: %d; the access check numbers at most 24 slots", tab.KernelSlots())
	}
	if err := c.Manager.CheckPortRanges(tab.KernelSlots()); err != nil {
		return nil, nil, err
	}
	return tab, a, nil
}

// gen holds the generator's state while it builds.
type gen struct {
	c      Config
	d      *Design
	m      *ir.Module
	tab    *ntb.Tables
	acl    *acl.ACL
	consts map[string]ir.Value // the named constants, each built once
	// kernelFromB: the m_kernel stream carries, above the slot, whether
	// the TLP came in on port B (the port pipeline's, for the kernel
	// slots' two-input kernels), out as m_kernel_from_b.
	kernelFromB bool
	// access is the access check's module, built once (accessModule) and
	// shared with the port pipeline of the same design (Design.PortIn).
	access *ir.Module
}

// accessModule returns the design's access-check module, built on first
// use.
func (g *gen) accessModule() (*ir.Module, error) {
	if g.access == nil {
		m, err := access.Module(g.c.Name+"_access", g.acl.Domains(), g.acl.RuleSlots())
		if err != nil {
			return nil, err
		}
		g.access = m
	}
	return g.access, nil
}

// beat is one stage's copy of a TLP beat.
type beat struct {
	// The beat as a TLP stream's (tlpbus.Stream, Side the BAR a host
	// request hit or the port a peer's came in by); Ready is unused.
	tlpbus.Stream
	// fn is the function a host request is for (0 the O-NIC, i+1 stand-in
	// i); only with stand-ins.
	fn ir.Value
}

// stageReg registers b into stage name, loading when adv is high. Only
// the valid bit has a reset: the rest is data it qualifies.
func (g *gen) stageReg(name string, b beat, adv ir.Value) beat {
	ir.Helper()
	m := g.m
	valid := m.Reg(name+"_valid", 1, 0)
	m.SetNext(valid, b.Valid)
	m.SetEnable(valid, adv)
	r := func(field string, v ir.Value) ir.Value {
		ir.Helper()
		return g.dataReg(name+"_"+field, v, adv)
	}
	out := beat{Stream: tlpbus.Stream{Valid: valid, Hdr: r("hdr", b.Hdr), Side: r("bar", b.Side), Data: r("data", b.Data),
		Keep: r("keep", b.Keep), SOP: r("sop", b.SOP), EOP: r("eop", b.EOP)}}
	if b.fn != (ir.Value{}) {
		out.fn = r("func", b.fn)
	}
	return out
}

// tlpState is what the pipeline knows about a TLP besides its beat,
// registered from stage to stage as it is worked out.
type tlpState struct {
	// Stage 1: kind-table bits, BAR offset and whether it is a BAR, the
	// register BAR, access size, LUT hit, proxy requester ID.
	kind, off, barOK, regHit, size, inLUT, proxyOK, proxy ir.Value
	// Stage 2: the translation.
	found, enabled, egress, slot, addr, down, second, secondEg, secondAt, secondDown ir.Value
	// Stage 3: the access check's rule, and with multicast windows the
	// copy's own (for its address, out of its port).
	rule, secondRule ir.Value
	// Stage 1, with stand-ins: the request is for a stand-in's BAR, the
	// device's BAR's address and the stand-in's port.
	standIn, siBase, siEgress ir.Value
	// Stage 3, with MSI windows: a write into a stand-in's MSI-X table
	// the window cannot carry, and the payload DWs that leave rewritten
	// (mask, 2 bits) with their new values.
	msixBad, msixMask, msixDW0, msixDW1 ir.Value
}

// carry registers every known field of t into stage st (registers named
// st_field), loading when adv is high.
func (g *gen) carry(st string, t tlpState, adv ir.Value) tlpState {
	ir.Helper()
	for _, f := range []struct {
		name string
		v    *ir.Value
	}{
		{"kind", &t.kind}, {"off", &t.off}, {"bar_ok", &t.barOK}, {"reg_hit", &t.regHit}, {"size", &t.size},
		{"in_lut", &t.inLUT}, {"proxy_ok", &t.proxyOK}, {"proxy", &t.proxy}, {"found", &t.found}, {"enabled", &t.enabled},
		{"egress", &t.egress}, {"slot", &t.slot}, {"addr", &t.addr}, {"down", &t.down}, {"second", &t.second},
		{"second_egress", &t.secondEg}, {"second_addr", &t.secondAt}, {"second_down", &t.secondDown}, {"rule", &t.rule},
		{"second_rule", &t.secondRule},
		{"stand_in", &t.standIn}, {"stand_in_base", &t.siBase}, {"stand_in_egress", &t.siEgress},
		{"msix_bad", &t.msixBad}, {"msix_mask", &t.msixMask}, {"msix_dw0", &t.msixDW0}, {"msix_dw1", &t.msixDW1},
	} {
		if *f.v != (ir.Value{}) {
			*f.v = g.dataReg(st+"_"+f.name, *f.v, adv)
		}
	}
	return t
}

// dataReg is a data-path register without reset, loaded with v when en
// is high: what it holds counts only while a valid bit (which has a
// reset) says so.
func (g *gen) dataReg(name string, v, en ir.Value) ir.Value {
	ir.Helper()
	x := g.m.RegNoReset(name, v.Width())
	g.m.SetNext(x, v)
	g.m.SetEnable(x, en)
	return x
}

// reg is a register loaded with v when en is high.
func (g *gen) reg(name string, v, en ir.Value) ir.Value {
	ir.Helper()
	x := g.m.Reg(name, v.Width(), 0)
	g.m.SetNext(x, v)
	g.m.SetEnable(x, en)
	return x
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// build generates the pipeline, stage by stage, in the order the
// hardware is laid out: the input slice, stage 1 (classify), the LUT,
// stage 2 (translate), stage 3 (access check), stage 4 (decide), the
// router and the counters. Each stage takes the previous stage's
// registers and returns its own.
func (g *gen) build() error {
	p := g.ports()
	b0 := p.input()
	s1, t1, lutIdx0 := p.classify(b0)
	lutQ := p.lutTable(lutIdx0)
	s2, t2, err := p.translate(s1, t1, lutQ)
	if err != nil {
		return err
	}
	s3, t3, err := p.check(s2, t2)
	if err != nil {
		return err
	}
	d4 := p.decide(s3, t3)
	p.route(d4)
	p.counters(d4)
	return nil
}

// pipe is what the stages share: the module's common ports and signals
// and the LUT's geometry.
type pipe struct {
	*gen
	W, K             int      // data width in bits and in DWs
	one, zero        ir.Value // 1-bit constants
	selfID, portDown ir.Value // inputs
	ax               lite     // the AXI-Lite registers
	adv              ir.Value // the pipeline advances (a wire, driven by the router)
	// held are the valid bits of the input slice and stages 1 to 4: a
	// TLP is in the pipeline while one is set (host_busy).
	held     []ir.Value
	initDone ir.Value // the LUT has been filled (constant 1 without a LUT)

	hasLUT             bool
	lutSh, lutAB, lutW int // entry size bits, address bits, word width

}

// konst is the constant named name (a localparam in the Verilog), built
// on first use.
func (g *gen) konst(name string, w int, v uint64) ir.Value {
	ir.Helper()
	if c, ok := g.consts[name]; ok {
		return c
	}
	if g.consts == nil {
		g.consts = map[string]ir.Value{}
	}
	c := g.m.Named(name, g.m.Const(w, v))
	g.consts[name] = c
	return c
}

// egress is an egress kind's 3-bit code, as the localparam EGRESS_<KIND>.
func (p *pipe) egress(k uint64) ir.Value {
	ir.Helper()
	return p.konst(egressNames[k], 3, k)
}

// egressNames and actionNames are the localparam names of the egress
// kinds' and the actions' codes.
var (
	egressNames = map[uint64]string{uint64(ntb.EgressNone): "EGRESS_NONE", kindPortA: "EGRESS_PORT_A", kindPortB: "EGRESS_PORT_B",
		kindKernel: "EGRESS_KERNEL", kindLocal: "EGRESS_LOCAL"}
	actionNames = map[uint64]string{actForward: "ACT_FORWARD", actComplete: "ACT_COMPLETE", actDrop: "ACT_DROP"}
)

// reason is a decision reason's 4-bit code, as the localparam
// REASON_<NAME>.
func (g *gen) reason(r pmgr.Reason) ir.Value {
	ir.Helper()
	return g.konst("REASON_"+strings.ToUpper(strings.ReplaceAll(r.String(), "-", "_")), 4, uint64(r))
}

// action is a decision action's 2-bit code, as the localparam ACT_<NAME>.
func (p *pipe) action(a uint64) ir.Value {
	ir.Helper()
	return p.konst(actionNames[a], 2, a)
}

// decision is stage 4's registers: what happens to the TLP in it.
type decision struct {
	s4                             beat
	act, reason, egress, slot      ir.Value
	second, secondEg, secondDenied ir.Value
	hdrPrimary, hdrSecond, cplHdr  ir.Value
}

// ports declares the module's shared inputs and the AXI-Lite interface,
// and works out the LUT's geometry.
func (g *gen) ports() *pipe {
	m := g.m
	p := &pipe{gen: g, W: g.c.DataWidth, K: g.c.DataWidth / 32, one: m.Const(1, 1), zero: m.Const(1, 0)}
	m.Describe("self_id", "The O-NIC's own routing ID (bus, device, function), as enumeration gave it.")
	m.Describe("port_down", "Per optical port (bit 0 A, bit 1 B): the port is down or stalled, so the decision fails or holds what is for it.")
	m.Describe("s_axil_", "The manager's registers over AXI-Lite (windows, LUT, access rules, counters): pcie/manager's register map, 12-bit offsets.")
	m.Describe("s_host_tlp_", "TLPs from the host: a 128-bit header (DW0 in the top bits), the payload from byte 0 of the first beat, a keep bit per DW, the BAR and physical function the PCIe block matched; sop and eop frame a TLP.")
	m.Describe("m_port_a_tlp_", "TLPs out of optical port A, translated, with the proxy requester ID: header, payload, keep, sop and eop as on s_host_tlp.")
	m.Describe("m_port_b_tlp_", "The same out of optical port B.")
	m.Describe("m_kernel", "Posted writes for the kernel slots, the slot's number on the sideband.")
	m.Describe("m_local_tlp_", "Requests for the O-NIC's own register BAR, to the register block.")
	m.Describe("m_cpl_tlp_", "Completions the manager makes itself for the host (a failed or refused request's UR or CA): a 96-bit header.")
	m.Describe("host_busy", "A TLP from the host is still in the pipeline.")
	m.Describe("count_", "The decision counters (COUNT_*), saturating.")
	p.selfID = m.Input("self_id", 16)
	p.portDown = m.Input("port_down", 2)
	p.ax = g.axiLite()

	// LUT: a block RAM filled from the configuration after reset.
	lut := g.d.LUT
	p.hasLUT = len(lut.Entries) > 0
	p.initDone = p.one
	if p.hasLUT {
		p.lutSh = bits.TrailingZeros64(lut.EntrySize)
		p.lutAB = max(ir.AddrBits(len(lut.Entries)), 1)
		p.lutW = 1 + 3 + 8 + (64 - p.lutSh)
		p.initDone = m.Reg("lut_init_done", 1, 0)
	}
	return p
}

// input is the host stream through a skid buffer, held back while the
// LUT is being filled; it declares the pipeline's advance wire.
func (p *pipe) input() beat {
	m, W, K := p.m, p.W, p.K
	hostValid := m.Input("s_host_tlp_valid", 1)
	in := beat{Stream: tlpbus.Stream{Valid: m.And(hostValid, p.initDone), Hdr: m.Input("s_host_tlp_hdr", 128), Side: m.Input("s_host_tlp_bar", 3),
		Data: m.Input("s_host_tlp_data", W), Keep: m.Input("s_host_tlp_keep", K),
		SOP: m.Input("s_host_tlp_sop", 1), EOP: m.Input("s_host_tlp_eop", 1)}}
	packed := m.Concat(in.Hdr, in.Side, in.Data, in.Keep, in.SOP, in.EOP)
	if len(p.c.StandIns) > 0 {
		packed = m.Concat(m.Input("s_host_tlp_func", 2), packed)
	}
	inS := axis.New(m, "in", packed, in.Valid)
	m.Output("s_host_tlp_ready", m.And(inS.Ready, p.initDone))
	sk := axis.Instance(m, "in_slice", axis.SkidModule(packed.Width()), inS)
	v := sk.Data
	at := v.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	var fn ir.Value
	if len(p.c.StandIns) > 0 {
		fn = m.Named("in_func", take(2))
	}
	p.held = append(p.held, sk.Valid)
	b0 := beat{Stream: tlpbus.Stream{Valid: sk.Valid, Hdr: m.Named("in_hdr", take(128)), Side: m.Named("in_bar", take(3)), Data: take(W), Keep: take(K),
		SOP: take(1), EOP: take(1)}, fn: fn}

	// The pipeline advances as a whole when its last stage is empty or
	// the router has finished with it.
	p.adv = m.Wire("adv", 1)
	m.Assign(sk.Ready, p.adv)
	return b0
}

// classify is stage 1: decode, classify, BAR offset, LUT index,
// requester IDs. It returns stage 1's registers and the LUT index (read
// into stage 2 by the LUT's read port).
func (p *pipe) classify(b0 beat) (beat, tlpState, ir.Value) {
	m, c, lut := p.m, p.c, p.d.LUT
	lutSh, lutAB := p.lutSh, p.lutAB
	f0 := tlphdr.Decode(m, "in_hdr", b0.Hdr)
	kind0 := m.Named("kind", m.ROM(m.Concat(f0.Fmt, f0.Type), kindBits, KindTable()))
	m.FlagBits(kind0, kindNames...)
	// The BARs by index: the O-NIC's, then (with stand-ins, by function
	// and BAR) each stand-in's.
	var masks, present, bases, egresses []uint64
	add := func(sizes, remote [6]uint64, eg uint64) {
		for b := range 8 { // BAR IDs 6 and 7 name no BAR
			var size, base uint64
			if b < 6 {
				size, base = sizes[b], remote[b] // (Build checked: no address without a BAR)
			}
			masks = append(masks, max(size, 1)-1)
			present = append(present, b2u(size != 0))
			bases = append(bases, base)
			egresses = append(egresses, eg)
		}
	}
	add(c.BARs, [6]uint64{}, 0)
	idx := b0.Side
	var own ir.Value // the request is for the O-NIC's own function (with stand-ins)
	ownAnd := func(v ir.Value) ir.Value {
		if own == (ir.Value{}) {
			return v
		}
		return m.And(own, v)
	}
	if len(c.StandIns) > 0 {
		for _, si := range c.StandIns {
			eg := kindPortA
			if si.Port == "port-b" {
				eg = kindPortB
			}
			add(si.BARs(), si.Remote, eg)
		}
		for len(masks) < 32 {
			add([6]uint64{}, [6]uint64{}, 0)
		}
		idx = m.Concat(b0.fn, b0.Side)
		own = m.Named("own_function", m.Eq(b0.fn, m.Const(2, 0)))
	} else {
		masks, present = masks[:6], present[:6]
	}
	off0 := m.Named("bar_offset", m.And(f0.Address, m.Named("bar_mask", m.ROM(idx, 64, masks))))
	barOK0 := m.Named("bar_ok", m.ROM(idx, 1, present))
	regHit0 := ownAnd(m.Eq(b0.Side, m.Const(3, uint64(c.Manager.RegisterBAR))))
	var standIn0, siBase0, siEgress0 ir.Value
	if len(c.StandIns) > 0 {
		standIn0 = m.Named("stand_in", m.Not(own))
		siBase0 = m.Named("stand_in_base", m.ROM(idx, 64, bases))
		siEgress0 = m.Named("stand_in_egress", m.ROM(idx, 3, egresses))
	}
	size0 := m.Concat(m.Eq(f0.Length, m.Const(10, 0)), f0.Length, m.Const(2, 0)) // 4 * DWs, 13 bits
	inLUT0, lutIdx0 := p.zero, m.Const(1, 0)
	if p.hasLUT {
		page := m.Slice(off0, lutSh, 64-lutSh)
		first := lut.Offset >> lutSh
		rel := m.Sub(page, m.Const(64-lutSh, first))
		inLUT0 = m.And(ownAnd(m.Eq(b0.Side, m.Const(3, uint64(lut.BAR)))),
			m.And(m.Not(m.LtU(page, m.Const(64-lutSh, first))), m.LtU(rel, m.Const(64-lutSh, uint64(len(lut.Entries))))))
		lutIdx0 = m.Slice(rel, 0, lutAB)
	}
	proxyBase, locals := p.tab.RID()
	var ridHits, ridIDs []ir.Value
	for i, id := range locals {
		ridHits = append(ridHits, m.Eq(f0.Requester, m.Const(16, uint64(id))))
		ridIDs = append(ridIDs, m.Const(16, uint64(proxyBase)+uint64(i)))
	}
	proxyOK0, proxy0 := m.Any(ridHits...), m.Const(16, 0)
	if len(ridHits) > 0 {
		proxy0 = m.Pick(ridHits, ridIDs)
	}

	s1 := p.stageReg("s1", b0, p.adv)
	p.held = append(p.held, s1.Valid)
	t1 := p.carry("s1", tlpState{kind: kind0, off: off0, barOK: barOK0, regHit: regHit0, size: size0, inLUT: inLUT0,
		proxyOK: proxyOK0, proxy: proxy0, standIn: standIn0, siBase: siBase0, siEgress: siEgress0}, p.adv)
	return s1, t1, lutIdx0
}

// lutTable builds the LUT's memory, read at idx as the pipeline advances,
// and its fill from the configuration after reset. It returns the entry
// read (invalid without a LUT).
func (p *pipe) lutTable(idx ir.Value) ir.Value {
	m, ax, lut := p.m, p.ax, p.d.LUT
	lutSh, lutAB, lutW, initDone := p.lutSh, p.lutAB, p.lutW, p.initDone
	var lutQ ir.Value
	if p.hasLUT {
		mem := m.Memory("lut", 1<<lutAB, lutW)
		lutQ = m.ReadPort(mem, idx, p.adv)
		// After reset the table is written from the configuration, one
		// entry per cycle; then software may rewrite entries.
		var rom []uint64
		for _, e := range lut.Entries {
			rom = append(rom, lutWord(e, lutSh))
		}
		initIdx := m.Reg("lut_init_idx", lutAB, 0)
		last := m.Eq(initIdx, m.Const(lutAB, uint64(len(lut.Entries)-1)))
		m.SetNext(initIdx, m.Add(initIdx, m.Const(lutAB, 1)))
		m.SetEnable(initIdx, m.Not(initDone))
		m.SetNext(initDone, m.Or(initDone, last))
		staged := m.Concat(m.Slice(ax.lutCtrl, 0, 1), m.Slice(ax.lutCtrl, 1, 3), m.Slice(ax.lutCtrl, 8, 8),
			m.Slice(m.Concat(ax.lutAddrHi, ax.lutAddrLo), lutSh, 64-lutSh))
		m.WritePort(mem, m.Mux(initDone, m.Slice(ax.lutIndex, 0, lutAB), initIdx),
			m.Mux(initDone, staged, m.ROM(initIdx, lutW, rom)),
			m.Or(m.Not(initDone), m.And(ax.lutCommit, m.LtU(ax.lutIndex, m.Const(32, uint64(len(lut.Entries)))))), ir.Value{})
	}
	m.Assign(ax.initDone, initDone)
	return lutQ
}

// downOf is 1 when the port egress kind eg names is down (0 for
// non-ports).
func (p *pipe) downOf(eg ir.Value) ir.Value {
	m := p.m
	return m.Or(m.And(m.Eq(eg, p.egress(kindPortA)), m.Slice(p.portDown, 0, 1)),
		m.And(m.Eq(eg, p.egress(kindPortB)), m.Slice(p.portDown, 1, 1)))
}

// translate is stage 2: the direct windows (with failover and
// multicast) and the LUT entry read in stage 1.
func (p *pipe) translate(s1 beat, t1 tlpState, lutQ ir.Value) (beat, tlpState, error) {
	m, c, d, ax := p.m, p.c, p.d, p.ax
	off1, inLUT1 := t1.off, t1.inLUT
	ws := d.Windows
	var enables ir.Value
	if len(ws) > 0 {
		enables = m.Named("window_enables", m.Slice(m.Concat(ax.winEnHi, ax.winEnLo), 0, len(ws)))
	}
	winMod, err := translate.Module(c.Name+"_windows", ws)
	if err != nil {
		return beat{}, tlpState{}, fmt.Errorf("direct windows: %v", err)
	}
	tr := translate.Instance(m, "windows", winMod, s1.Side, off1, enables)
	found, enabled, egress, slot, addr := tr.Found, tr.Enabled, tr.Egress, tr.Slot, tr.Translated
	// A window with a failover port uses it while its own port is down.
	failover := m.Named("failover", m.And(m.And(tr.HasSecond, m.Not(tr.Multicast)), p.downOf(tr.Egress)))
	egress = m.Mux(failover, tr.SecondEgress, egress)
	addr = m.Mux(failover, tr.SecondTranslated, addr)
	multicast := m.And(tr.HasSecond, tr.Multicast)
	if p.hasLUT {
		lutW, lutSh := p.lutW, p.lutSh
		lutEn := m.Slice(lutQ, lutW-1, 1)
		lutEg := m.Slice(lutQ, lutW-4, 3)
		lutSlot := m.Slice(lutQ, lutW-12, 8)
		lutAddr := m.Concat(m.Slice(lutQ, 0, 64-lutSh), m.Slice(off1, 0, lutSh))
		found = m.Or(found, inLUT1)
		enabled = m.Mux(inLUT1, lutEn, enabled)
		egress = m.Mux(inLUT1, lutEg, egress)
		slot = m.Mux(inLUT1, lutSlot, slot)
		addr = m.Mux(inLUT1, lutAddr, addr)
		multicast = m.And(multicast, m.Not(inLUT1))
	}
	secondEg, secondAt := tr.SecondEgress, tr.SecondTranslated
	if t1.standIn != (ir.Value{}) {
		// A stand-in's BAR is a window onto the device's, always on, to
		// its port; the device's BAR is aligned to its size, so the
		// offset fills its low bits.
		si := t1.standIn
		found, enabled = m.Or(found, si), m.Or(enabled, si)
		egress = m.Mux(si, t1.siEgress, egress)
		slot = m.Mux(si, m.Const(8, 0), slot)
		addr = m.Mux(si, m.Or(t1.siBase, off1), addr)
		multicast = m.And(multicast, m.Not(si))
	}
	// The translation's result, as stage 2 registers it.
	found, enabled = m.Named("translated_found", found), m.Named("translated_enabled", enabled)
	egress, slot = m.Named("translated_egress", egress), m.Named("translated_slot", slot)
	addr, multicast = m.Named("translated_addr", addr), m.Named("multicast", multicast)
	s2 := p.stageReg("s2", s1, p.adv)
	p.held = append(p.held, s2.Valid)
	t1.found, t1.enabled, t1.egress, t1.slot, t1.addr, t1.down = found, enabled, egress, slot, addr, p.downOf(egress)
	t1.second, t1.secondEg, t1.secondAt, t1.secondDown = multicast, secondEg, secondAt, p.downOf(secondEg)
	t1.inLUT, t1.siBase, t1.siEgress = ir.Value{}, ir.Value{}, ir.Value{} // used up
	return s2, p.carry("s2", t1, p.adv), nil
}

// check is stage 3: the access check, on the BAR offset for the O-NIC's
// own registers and on the translated address otherwise.
func (p *pipe) check(s2 beat, t2 tlpState) (beat, tlpState, error) {
	m := p.m
	kind2, off2, regHit2, size2, egress2, slot2, addr2 := t2.kind, t2.off, t2.regHit, t2.size, t2.egress, t2.slot, t2.addr
	chkAddr := m.Named("check_addr", m.Mux(regHit2, off2, addr2))
	kernelBit := m.Add(m.Slice(slot2, 0, 5), m.Const(5, 8))
	egBit := m.Pick([]ir.Value{
		m.Eq(egress2, p.egress(kindPortA)), m.Eq(egress2, p.egress(kindPortB)),
		m.Eq(egress2, p.egress(kindLocal)), m.Eq(egress2, p.egress(kindKernel)),
	}, []ir.Value{m.Const(5, 0), m.Const(5, 1), m.Const(5, 2), kernelBit})
	egBit = m.Named("check_egress", m.Mux(regHit2, m.Const(5, 2), egBit))
	bit2 := func(k int) ir.Value { return m.Slice(kind2, bits.TrailingZeros(uint(k)), 1) }
	op2 := accessOp(m, bit2(kData), bit2(kNonPosted))
	accMod, err := p.accessModule()
	if err != nil {
		return beat{}, tlpState{}, fmt.Errorf("access check: %v", err)
	}
	// This manager's TLPs all come from the host link: a requester ID of a
	// domain bound to an optical port is forged here (source-invalid).
	fromHost := m.Const(2, uint64(acl.FromHost))
	reqLo, reqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassMemory, tlp.Fmt3DW))
	slots := p.ruleSlots(p.ax)
	// The port pipeline checks against the same run-time rules: they
	// leave as acl_slot<i>_* (its inputs of the same names).
	for i, sl := range slots {
		for _, f := range []struct {
			name string
			v    ir.Value
		}{{"en", sl.Enabled}, {"read", sl.Read}, {"write", sl.Write}, {"domain", sl.Domain}, {"page", sl.Page}, {"pages", sl.Pages}} {
			m.Output(fmt.Sprintf("acl_slot%d_%s", i, f.name), f.v)
		}
	}
	v := access.Instance(m, "access", accMod, m.Slice(s2.Hdr, reqLo, reqW), fromHost, chkAddr, size2, op2, egBit, slots)
	if hasMulticast(p.d.Windows) {
		// A multicast window's copy is a write of its own: it is checked
		// for its own address and port (pcie/manager.Process).
		secondBit := m.Named("second_check_egress", m.Mux(m.Eq(t2.secondEg, p.egress(kindPortB)), m.Const(5, 1), m.Const(5, 0)))
		sv := access.Instance(m, "second_access", accMod, m.Slice(s2.Hdr, reqLo, reqW), fromHost, t2.secondAt, size2,
			m.Const(2, uint64(acl.OpWrite)), secondBit, slots)
		t2.secondRule = sv.Rule
	}
	p.msix(s2, &t2)
	s3 := p.stageReg("s3", s2, p.adv)
	p.held = append(p.held, s3.Valid)
	t2.rule, t2.size = v.Rule, ir.Value{}
	return s3, p.carry("s3", t2, p.adv), nil
}

// decide is stage 4: the decision, in the order pcie/manager.Process
// takes it, and the headers the TLP leaves with.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func (p *pipe) decide(s3 beat, t3 tlpState) decision {
	m, adv, selfID := p.m, p.adv, p.selfID
	kind3, off3, barOK3, regHit3, proxyOK3, proxy3 := t3.kind, t3.off, t3.barOK, t3.regHit, t3.proxyOK, t3.proxy
	found3, enabled3, egress3, slot3, addr3, down3 := t3.found, t3.enabled, t3.egress, t3.slot, t3.addr, t3.down
	second3, secondEg3, secondAt3, secondDown3, rule3 := t3.second, t3.secondEg, t3.secondAt, t3.secondDown, t3.rule

	f3 := tlphdr.Decode(m, "s3_hdr", s3.Hdr)
	bit := func(v ir.Value, k int) ir.Value { return m.Slice(v, bits.TrailingZeros(uint(k)), 1) }
	memAtomic, cfgMsg, isCpl := bit(kind3, kMemAtomic), bit(kind3, kCfgMsg), bit(kind3, kCpl)
	nonPosted, hasData := bit(kind3, kNonPosted), bit(kind3, kData)
	allowed := m.Named("allowed", m.Eq(rule3, m.Const(3, uint64(acl.Allowed))))
	isPort := m.Named("to_port", m.Or(m.Eq(egress3, p.egress(kindPortA)), m.Eq(egress3, p.egress(kindPortB))))
	type outcome struct{ reason, egress, slot, addr, req ir.Value }
	r4, eg := p.reason, p.egress
	req3 := f3.Requester
	// Evaluated last to first: the first condition that holds wins. Each
	// step's condition is named for the check (window_miss), and the
	// outcome after it by field and check (reason_window_miss: the reason
	// as the checks from window_miss on decide it).
	o := outcome{r4(pmgr.OK), egress3, slot3, addr3, m.Mux(isPort, proxy3, req3)}
	choose := func(check string, cond ir.Value, alt outcome) {
		ir.Helper()
		cond = m.Named(check, cond)
		step := func(field string, a, b ir.Value) ir.Value {
			ir.Helper()
			return m.Named(field+"_"+check, m.Mux(cond, a, b))
		}
		o = outcome{step("reason", alt.reason, o.reason), step("egress", alt.egress, o.egress), step("slot", alt.slot, o.slot),
			step("addr", alt.addr, o.addr), step("req", alt.req, o.req)}
	}
	fail := func(r pmgr.Reason) outcome { return outcome{r4(r), eg(0), m.Const(8, 0), m.Const(64, 0), req3} }
	local := func(a ir.Value) outcome { return outcome{r4(pmgr.OK), eg(kindLocal), m.Const(8, 0), a, req3} }
	if t3.msixBad != (ir.Value{}) {
		choose("msix_address", t3.msixBad, fail(pmgr.MSIXAddress))
	}
	choose("no_proxy_id", m.And(isPort, m.Not(proxyOK3)), fail(pmgr.NoProxyID))
	choose("denied", m.Not(allowed), fail(pmgr.Denied))
	// Under hold, a TLP for a down port that would pass (the access check,
	// a proxy ID) goes to that port to be held; it is still port-down.
	var holdable ir.Value
	if p.c.Hold {
		holdable = m.And(m.And(isPort, allowed), proxyOK3)
		if t3.standIn != (ir.Value{}) {
			holdable = m.And(holdable, m.Not(t3.standIn)) // the model fails a stand-in's down port at once
		}
		holdable = m.Named("holdable", holdable)
		choose("port_down_failed", m.And(down3, m.Not(holdable)), fail(pmgr.PortDown))
		choose("port_down_held", m.And(down3, holdable), outcome{r4(pmgr.PortDown), egress3, slot3, addr3, proxy3})
	} else {
		choose("port_down", down3, fail(pmgr.PortDown))
	}
	choose("mapping_disabled", m.Not(enabled3), fail(pmgr.MappingDisabled))
	choose("window_miss", m.Not(found3), fail(pmgr.WindowMiss))
	choose("reg_allowed", m.And(regHit3, allowed), local(off3))
	choose("reg_denied", m.And(regHit3, m.Not(allowed)), fail(pmgr.Denied))
	choose("not_for_us", m.Not(barOK3), fail(pmgr.NotForUs))
	choose("unsupported", m.Not(memAtomic), fail(pmgr.Unsupported))
	// A completion from the host answers a request the O-NIC issued to
	// it for a peer: the requester tag table in front of the manager
	// (pcie/manager's tags; designs/internal/pcie4's TagsModule) has put
	// the peer's requester ID and tag back and says on the BAR sideband
	// which port the request came in on (1 A, 2 B). It goes back out of
	// that port; any other completion is unexpected (PCIe §2.3.2).
	cplPort := m.Named("cpl_port", s3.Side)
	toPortA, toPortB := m.Eq(cplPort, m.Const(3, 1)), m.Eq(cplPort, m.Const(3, 2))
	toPeer := outcome{r4(pmgr.OK), m.Mux(toPortB, eg(kindPortB), eg(kindPortA)), m.Const(8, 0), m.Const(64, 0), req3}
	choose("cpl_unexpected", isCpl, fail(pmgr.UnexpectedCompletion))
	choose("cpl_to_peer", m.And(isCpl, m.Or(toPortA, toPortB)), toPeer)
	choose("cfg_or_msg", cfgMsg, local(m.Const(64, 0)))

	ok := m.Named("ok", m.Eq(o.reason, r4(pmgr.OK)))
	forward := ok
	if p.c.Hold {
		// Only the port_down steps give port-down: a holdable TLP they
		// decided is forwarded.
		forward = m.Or(ok, m.Named("held", m.And(m.Eq(o.reason, r4(pmgr.PortDown)), holdable)))
	}
	action := m.Named("action", m.Mux(forward, p.action(actForward), m.Mux(nonPosted, p.action(actComplete), p.action(actDrop))))
	status := m.Named("cpl_status", m.Mux(m.Eq(o.reason, r4(pmgr.Denied)), m.Const(3, uint64(p.acl.DenyStatus)), m.Const(3, uint64(tlp.StatusUR))))
	// The multicast copy: a posted write through a multicast window whose
	// second port is up, and which the access check lets out of that
	// port at its address; one it refuses is counted as relay-denied
	// (the original went on).
	viaWindow := m.Named("via_window", m.And(m.And(ok, memAtomic), m.And(barOK3, m.Not(regHit3))))
	second := m.Named("second_wanted", m.And(m.And(viaWindow, second3), m.And(m.And(hasData, m.Not(nonPosted)), m.Not(secondDown3))))
	var secondDenied ir.Value
	if t3.secondRule != (ir.Value{}) {
		secondOK := m.Named("second_allowed", m.Eq(t3.secondRule, m.Const(3, uint64(acl.Allowed))))
		secondDenied = m.Named("second_denied", m.And(second, m.Not(secondOK)))
		second = m.And(second, secondOK)
	}
	second = m.Named("second_copy", second)
	// Memory requests leave with the translated address and requester;
	// everything else as it came.
	hdrP := m.Named("hdr_primary", m.Mux(memAtomic, tlphdr.Rewrite(m, "rewrite_primary", s3.Hdr, o.addr, o.req), s3.Hdr))
	hdrS := m.Named("hdr_second", tlphdr.Rewrite(m, "rewrite_second", s3.Hdr, secondAt3, o.req))
	cpl := m.Named("cpl_hdr", completion(m, s3.Hdr, selfID, status, bit(kind3, kMRd), bit(kind3, kLock)))

	// The decision is taken on a packet's first beat and kept for the
	// rest of it.
	take := m.Named("take_decision", m.And(adv, m.And(s3.Valid, s3.SOP)))
	var d decision
	if t3.msixMask != (ir.Value{}) {
		// A write into a stand-in's MSI-X table leaves with its address
		// DWs rewritten (it is one beat: it lies within an entry).
		on := func(k int) ir.Value { return m.And(s3.SOP, m.Slice(t3.msixMask, k, 1)) }
		dw := func(k int) ir.Value { return m.Slice(s3.Data, 32*k, 32) }
		s3.Data = m.Named("s3_data_msix", m.Concat(m.Slice(s3.Data, 64, p.W-64),
			m.Mux(on(1), t3.msixDW1, dw(1)), m.Mux(on(0), t3.msixDW0, dw(0))))
	}
	d.s4 = p.stageReg("s4", s3, adv)
	d.act = p.reg("s4_action", action, take)
	d.reason = p.reg("s4_reason", o.reason, take)
	d.egress = p.reg("s4_egress", o.egress, take)
	d.slot = p.dataReg("s4_slot", o.slot, take)
	d.second = p.reg("s4_second", second, take)
	if secondDenied != (ir.Value{}) {
		d.secondDenied = p.reg("s4_second_denied", secondDenied, take)
	}
	d.secondEg = p.reg("s4_second_egress", secondEg3, take)
	d.hdrPrimary = p.dataReg("s4_hdr_primary", hdrP, take)
	d.hdrSecond = p.dataReg("s4_hdr_second", hdrS, take)
	d.cplHdr = p.dataReg("s4_cpl_hdr", cpl, take)
	return d
}

// route is the router: a beat leaves on every output it is for; a
// multicast beat waits until both ports have taken it, and an output that
// took it early is not offered it again. It drives the advance wire.
func (p *pipe) route(d decision) {
	m, s4, adv := p.m, d.s4, p.adv
	fwd := m.Named("forward", m.Eq(d.act, p.action(actForward)))
	is := func(e ir.Value, k uint64) ir.Value { return m.Eq(e, p.egress(k)) }
	toA := m.Named("to_port_a", m.Or(m.And(fwd, is(d.egress, kindPortA)), m.And(d.second, is(d.secondEg, kindPortA))))
	toB := m.Named("to_port_b", m.Or(m.And(fwd, is(d.egress, kindPortB)), m.And(d.second, is(d.secondEg, kindPortB))))
	hdrA := m.Mux(is(d.egress, kindPortA), d.hdrPrimary, d.hdrSecond)
	hdrB := m.Mux(is(d.egress, kindPortB), d.hdrPrimary, d.hdrSecond)
	tail := m.Named("beat_tail", m.Concat(s4.Data, s4.Keep, s4.SOP, s4.EOP))
	routes := []route{
		{"m_port_a", toA, m.Concat(hdrA, tail)},
		{"m_port_b", toB, m.Concat(hdrB, tail)},
		{"m_kernel", m.And(fwd, is(d.egress, kindKernel)), m.Concat(d.slot, d.hdrPrimary, tail)},
		{"m_local", m.And(fwd, is(d.egress, kindLocal)), m.Concat(d.hdrPrimary, tail)},
		{"m_cpl", m.And(m.Eq(d.act, p.action(actComplete)), s4.SOP), d.cplHdr},
	}
	p.router(s4.Valid, adv, routes, p.W, p.K)
	// host_busy: a host TLP is in the pipeline, before its output slices
	// (the card holds the host's next TLP behind a register write until
	// the write has left here and reached the registers).
	m.Output("host_busy", m.Any(append(p.held, s4.Valid)...))
}

// route is one output of a router: its name, whether the beat is for
// it, and the word it carries.
type route struct {
	name     string
	to, data ir.Value
}

// router offers each valid beat on every output it is for, through a
// register slice each; an output that took the beat early is not offered
// it again, and the pipeline advances (adv, a wire it drives) when every
// output the beat is for has it.
func (g *gen) router(valid, adv ir.Value, routes []route, W, K int) {
	ir.Helper()
	m := g.m
	done := m.Const(1, 1)
	for _, r := range routes {
		sent := m.Reg(r.name+"_sent", 1, 0)
		to := m.Named(r.name+"_for", r.to)
		offer := m.Named(r.name+"_offer", m.And(m.And(valid, to), m.Not(sent)))
		st := axis.New(m, r.name+"_in", r.data, offer)
		took := m.Named(r.name+"_took", m.And(offer, st.Ready))
		has := m.Named(r.name+"_has", m.Or(sent, took)) // this output has the beat
		done = m.Named(r.name+"_done", m.And(done, m.Or(m.Not(to), has)))
		m.SetNext(sent, m.Mux(adv, m.Const(1, 0), has))
		out := axis.Instance(m, r.name+"_slice", axis.SkidModule(r.data.Width()), st)
		g.output(r.name, out, W, K)
	}
	m.Assign(adv, m.Or(m.Not(valid), done))
}

// counters counts every TLP under its reason when its first beat
// leaves, and builds the AXI-Lite read side that reports them.
func (p *pipe) counters(d decision) {
	m := p.m
	fire := m.Named("count_fire", m.And(p.adv, m.And(d.s4.Valid, d.s4.SOP)))
	var counts []ir.Value
	for _, r := range p.d.Reasons {
		cnt := m.Reg("count_"+strings.ReplaceAll(r.String(), "-", "_"), 32, 0)
		m.SetNext(cnt, m.SatAddU(cnt, m.Const(32, 1))) // saturates: never reads small after overflowing
		hit := m.Eq(d.reason, p.reason(r))
		if r == pmgr.RelayDenied && d.secondDenied != (ir.Value{}) {
			hit = m.Or(hit, d.secondDenied) // a refused multicast copy
		}
		m.SetEnable(cnt, m.And(fire, hit))
		counts = append(counts, cnt)
	}
	if p.c.DropTap {
		f := tlphdr.Decode(m, "", d.hdrPrimary)
		m.Output("drop_tap", m.And(fire, m.And(m.Eq(d.act, p.action(actDrop)), f.HasData)))
		m.Output("drop_tap_word", m.Slice(d.s4.Data, 0, 64))
		m.Output("drop_tap_reason", d.reason)
	}
	p.axiRead(p.ax, p.portDown, counts)
}

// ruleSlots builds the run-time access rules' registers: slot i takes
// the ACL staging registers when ACL_COMMIT is written with ACL_INDEX i,
// and the check sees it from the next cycle on.
func (g *gen) ruleSlots(l lite) []access.Slot {
	m := g.m
	var out []access.Slot
	if g.acl.RuleSlots() == 0 {
		return nil
	}
	// A commit that names no domain, or whose pages pass 2^64 (the range
	// would wrap to address 0), writes nothing, as acl.SetRuleSlot.
	domainOK := m.LtU(m.Slice(l.aclCtrl, 16, 16), m.Const(16, uint64(len(g.acl.Domains()))))
	end := m.Add(m.Zext(m.Concat(l.aclBaseHi, m.Slice(l.aclBaseLo, 12, 20)), 53), m.Zext(l.aclPages, 53))
	fits := m.LtU(end, m.Const(53, 1<<52+1))
	valid := m.And(domainOK, fits)
	for i := range g.acl.RuleSlots() {
		load := m.And(m.And(l.aclCommit, valid), m.Eq(l.aclIndex, m.Const(32, uint64(i))))
		r := func(field string, v ir.Value) ir.Value { return g.reg(fmt.Sprintf("acl_rule%d_%s", i, field), v, load) }
		out = append(out, access.Slot{
			Enabled: r("en", m.Slice(l.aclCtrl, 0, 1)), Read: r("read", m.Slice(l.aclCtrl, 1, 1)), Write: r("write", m.Slice(l.aclCtrl, 2, 1)),
			Domain: r("domain", m.Slice(l.aclCtrl, 16, 16)), Page: r("page", m.Concat(l.aclBaseHi, m.Slice(l.aclBaseLo, 12, 20))),
			Pages: r("pages", l.aclPages),
		})
	}
	return out
}

// lutWord packs a LUT entry as the table stores it: enabled, egress kind
// (3 bits), kernel slot (8 bits), translated base above the entry size.
func lutWord(e ntb.LUTEntry, sh int) uint64 {
	return b2u(e.Enabled)<<(63-sh+12) | uint64(e.Egress.Kind)<<(64-sh+8) | uint64(e.Egress.Slot)<<(64-sh) | e.Translated>>sh
}

// completion builds the header of the completion that answers the
// request in hdr with status, as pcie.Completion does: Cpl (CplLk for a
// locked read), the request's TC, attributes and tag, completer self,
// Byte Count 4 and Lower Address 0 — except that a failed memory read
// reports the bytes it would have returned and the address of the first
// (§2.2.9, Tables 2-40 and 2-41). It is 96 bits, DW0 on top.
func completion(m *ir.Module, hdr, self, status, mrd, lock ir.Value) ir.Value {
	f := tlphdr.Decode(m, "", hdr)
	leadTab := make([]uint64, 16)
	hiTab := make([]uint64, 16)
	trailTab := make([]uint64, 16)
	for be := range 16 {
		for leadTab[be] = 0; leadTab[be] < 4 && be>>leadTab[be]&1 == 0; leadTab[be]++ {
		}
		if leadTab[be] == 4 {
			leadTab[be] = 0
		}
		for hiTab[be] = 3; be != 0 && be>>hiTab[be]&1 == 0; hiTab[be]-- {
		}
		for trailTab[be] = 0; trailTab[be] < 4 && be<<trailTab[be]&8 == 0; trailTab[be]++ {
		}
	}
	lead := m.Named("cpl_lead_bytes", m.ROM(f.FirstBE, 3, leadTab))
	single := m.Eq(f.Length, m.Const(10, 1))
	noBE := m.Eq(f.FirstBE, m.Const(4, 0))
	lead12 := m.Zext(lead, 12)
	oneDW := m.Sub(m.Add(m.Zext(m.Named("cpl_last_byte", m.ROM(f.FirstBE, 2, hiTab)), 12), m.Const(12, 1)), lead12)
	oneDW = m.Named("cpl_bytes_one_dw", m.Mux(noBE, m.Const(12, 1), oneDW))
	many := m.Sub(m.Sub(m.Concat(f.Length, m.Const(2, 0)), lead12), m.Zext(m.Named("cpl_trail_bytes", m.ROM(f.LastBE, 3, trailTab)), 12))
	bc := m.Named("cpl_byte_count", m.Mux(mrd, m.Mux(single, oneDW, m.Named("cpl_bytes_many_dw", many)), m.Const(12, 4)))
	la := m.Named("cpl_lower_addr", m.Mux(mrd, m.Concat(m.Slice(f.Address, 2, 5), m.Slice(lead, 0, 2)), m.Const(7, 0)))
	typ := m.Mux(lock, m.Const(5, tlphdr.TypeCode(tlp.CplLk)), m.Const(5, tlphdr.TypeCode(tlp.Cpl)))
	tag := f.Tag
	// By the TLP field table: a Cpl (no data), Fmt 000, Length 0.
	return tlphdr.Compose(m, 96, tlp.ClassCompletion, tlp.Fmt3DW,
		tlphdr.Set{Name: "type", V: typ}, tlphdr.Set{Name: "tc", V: f.TC}, tlphdr.Set{Name: "attr", V: f.Attr},
		tlphdr.Set{Name: "tag", V: tag}, tlphdr.Set{Name: "completer_id", V: self}, tlphdr.Set{Name: "status", V: status},
		tlphdr.Set{Name: "byte_count", V: bc}, tlphdr.Set{Name: "requester_id", V: f.Requester}, tlphdr.Set{Name: "lower_address", V: la})
}

// output sends stream s of route name out of the module.
func (g *gen) output(name string, s axis.Stream, W, K int) {
	m := g.m
	v := s.Data
	at := v.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(v, at, w) }
	if name == "m_cpl" {
		m.Output(name+"_tlp_hdr", v)
	} else {
		if name == "m_kernel" {
			if g.kernelFromB {
				m.Output(name+"_from_b", take(1))
			}
			m.Output(name+"_slot", take(8))
		}
		var t tlpbus.Stream
		t.Hdr, t.Data, t.Keep, t.SOP, t.EOP = take(128), take(W), take(K), take(1), take(1)
		tlpbus.Out(m, name+"_tlp_", t, tlpbus.FieldHdr, tlpbus.FieldData, tlpbus.FieldKeep, tlpbus.FieldSOP, tlpbus.FieldEOP)
	}
	m.Output(name+"_tlp_valid", s.Valid)
	m.Assign(s.Ready, m.Input(name+"_tlp_ready", 1))
}

// lite is the AXI-Lite interface's registers and strobes.
type lite struct {
	winEnLo, winEnHi                        ir.Value
	lutIndex, lutAddrLo, lutAddrHi, lutCtrl ir.Value
	lutCommit                               ir.Value // 1 for the cycle a LUT_COMMIT write is accepted
	aclIndex, aclBaseLo, aclBaseHi          ir.Value // the rule slots' staging registers (with slots only)
	aclPages, aclCtrl                       ir.Value
	aclCommit                               ir.Value // 1 for the cycle an ACL_COMMIT write is accepted
	initDone                                ir.Value // wire: the LUT has been filled
	araddr, arvalid, rready, rvalid, rdata  ir.Value
}

// axiLite builds the write side of the AXI-Lite slave (12-bit byte
// addresses, 32-bit data, write strobes honoured) and its registers.
// Writes complete with OKAY; writes to read-only or unmapped addresses
// are ignored.
func (g *gen) axiLite() lite {
	m := g.m
	awaddr := m.Input("s_axil_awaddr", 12)
	awvalid := m.Input("s_axil_awvalid", 1)
	wdata := m.Input("s_axil_wdata", 32)
	wstrb := m.Input("s_axil_wstrb", 4)
	wvalid := m.Input("s_axil_wvalid", 1)
	bready := m.Input("s_axil_bready", 1)
	bvalid := m.Reg("axil_bvalid", 1, 0)
	accept := m.Named("write_accept", m.And(m.And(awvalid, wvalid), m.Not(bvalid)))
	m.Output("s_axil_awready", accept)
	m.Output("s_axil_wready", accept)
	m.SetNext(bvalid, m.Mux(accept, m.Const(1, 1), m.And(bvalid, m.Not(bready))))
	m.Output("s_axil_bvalid", bvalid)
	m.Output("s_axil_bresp", m.Const(2, 0))
	var mask []ir.Value
	for i := 3; i >= 0; i-- {
		s := m.Slice(wstrb, i, 1)
		mask = append(mask, m.Concat(s, s, s, s, s, s, s, s))
	}
	bytes := m.Named("write_mask", m.Concat(mask...))
	writes := func(off uint32) ir.Value {
		return m.And(accept, m.Eq(m.Slice(awaddr, 2, 10), m.Const(10, uint64(off>>2))))
	}
	rw := func(name string, off uint32, reset uint64) ir.Value {
		ir.Helper()
		r := m.Reg(name, 32, reset)
		m.SetNext(r, m.Or(m.And(r, m.Not(bytes)), m.And(wdata, bytes)))
		m.SetEnable(r, writes(off))
		return r
	}
	en := ntb.Enables(g.d.Windows)
	l := lite{
		winEnLo: rw("win_en_lo", pmgr.RegWinEnLo, en&0xFFFF_FFFF), winEnHi: rw("win_en_hi", pmgr.RegWinEnHi, en>>32),
		lutIndex: rw("lut_index", pmgr.RegLUTIndex, 0), lutAddrLo: rw("lut_addr_lo", pmgr.RegLUTAddrLo, 0),
		lutAddrHi: rw("lut_addr_hi", pmgr.RegLUTAddrHi, 0), lutCtrl: rw("lut_ctrl", pmgr.RegLUTCtrl, 0),
		lutCommit: writes(pmgr.RegLUTCommit), initDone: m.Wire("init_done", 1),
		araddr: m.Input("s_axil_araddr", 12), arvalid: m.Input("s_axil_arvalid", 1), rready: m.Input("s_axil_rready", 1),
		rvalid: m.Reg("axil_rvalid", 1, 0), rdata: m.Reg("axil_rdata", 32, 0),
	}
	if n := g.acl.RuleSlots(); n > 0 {
		l.aclIndex, l.aclBaseLo, l.aclBaseHi = rw("acl_index", pmgr.RegACLIndex, 0), rw("acl_base_lo", pmgr.RegACLBaseLo, 0), rw("acl_base_hi", pmgr.RegACLBaseHi, 0)
		l.aclPages, l.aclCtrl, l.aclCommit = rw("acl_pages", pmgr.RegACLPages, 0), rw("acl_ctrl", pmgr.RegACLCtrl, 0), writes(pmgr.RegACLCommit)
	}
	g.d.Registers = pmgr.RegisterMap(g.d.Windows, len(g.d.LUT.Entries), g.acl.RuleSlots(), g.c.DataWidth)
	return l
}

// caps is the CAPS register's value.
func (g *gen) caps() uint32 {
	return pmgr.Caps(len(g.d.Windows), len(g.d.LUT.Entries), g.acl.RuleSlots(), g.c.DataWidth)
}

// axiRead builds the read side: one read in flight, answered the cycle
// after its address is accepted; unmapped addresses read 0.
func (g *gen) axiRead(l lite, portDown ir.Value, counts []ir.Value) {
	m := g.m
	accept := m.Named("read_accept", m.And(l.arvalid, m.Not(l.rvalid)))
	m.Output("s_axil_arready", m.Not(l.rvalid))
	word := m.Slice(l.araddr, 2, 10)
	values := map[uint32]ir.Value{
		pmgr.RegID: m.Const(32, pmgr.IDValue), pmgr.RegVersion: m.Const(32, pmgr.VersionValue), pmgr.RegCaps: m.Const(32, uint64(g.caps())),
		pmgr.RegStatus:  m.Zext(m.Concat(portDown, l.initDone), 32),
		pmgr.RegWinEnLo: l.winEnLo, pmgr.RegWinEnHi: l.winEnHi, pmgr.RegLUTIndex: l.lutIndex,
		pmgr.RegLUTAddrLo: l.lutAddrLo, pmgr.RegLUTAddrHi: l.lutAddrHi, pmgr.RegLUTCtrl: l.lutCtrl,
	}
	if g.acl.RuleSlots() > 0 {
		values[pmgr.RegACLIndex], values[pmgr.RegACLBaseLo], values[pmgr.RegACLBaseHi] = l.aclIndex, l.aclBaseLo, l.aclBaseHi
		values[pmgr.RegACLPages], values[pmgr.RegACLCtrl] = l.aclPages, l.aclCtrl
	}
	for i, c := range counts {
		values[pmgr.RegCount0+4*uint32(i)] = c
	}
	var hits, vals []ir.Value
	for _, r := range g.d.Registers {
		if v, ok := values[r.Offset]; ok {
			hits = append(hits, m.Eq(word, m.Const(10, uint64(r.Offset>>2))))
			vals = append(vals, v)
		}
	}
	m.SetNext(l.rdata, m.Named("read_data", m.Pick(hits, vals)))
	m.SetEnable(l.rdata, accept)
	m.SetNext(l.rvalid, m.Mux(accept, m.Const(1, 1), m.And(l.rvalid, m.Not(l.rready))))
	m.Output("s_axil_rvalid", l.rvalid)
	m.Output("s_axil_rdata", l.rdata)
	m.Output("s_axil_rresp", m.Const(2, 0))
}
