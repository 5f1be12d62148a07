package manager

import (
	"fmt"
	"math/bits"
	"onic/designs/internal/tlpbus"
	"strings"

	"onic/designs/internal/access"
	"onic/designs/internal/tlphdr"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// PortIn is a generated port-ingress pipeline.
type PortIn struct {
	Module *ir.Module
	// RuleSlots is the number of run-time access rule slots its inputs
	// acl_slot<i>_* take (from the manager's ACL registers).
	RuleSlots int
	// Reasons are the counters count_<reason> it outputs.
	Reasons []pmgr.Reason
}

// BuildPortIn generates the manager's pipeline for TLPs arriving from the
// optical ports (<name>_port_in), as pcie/manager.Process decides them
// for ingress FromPortA and FromPortB:
//
//	input: s_port_a_tlp_* and s_port_b_tlp_* (the manager's stream
//	       format), merged packet by packet, through a register slice
//	stage 1: header decode, kind table, requester-ID table (proxy ID to
//	         local requester, for completions), kernel_in and relay ranges
//	stage 2: the access check for the TLP (egress: its kernel slot for a
//	         steered write, else the host) and for a relay copy (egress:
//	         the other port), with the ingress as source
//	stage 3: the decision and the headers the TLP leaves with
//	router:  m_host (requests and completions for the host), m_kernel
//	         (with m_kernel_slot, and m_kernel_from_b for the port), m_local, m_port_a and m_port_b (relay
//	         copies, and the UR/CA completions of refused non-posted
//	         requests, back out of the port they came in on)
//
// Completions whose requester is one of the requester-ID table's proxy
// IDs go to the host with the local requester put back; others are
// dropped as unexpected. Memory requests go to the host unchanged (the
// far side translated them); posted writes in a kernel_in range go to its
// slot at their offset; writes in a relay range also leave by the other
// port. Every TLP is counted under its reason (count_<reason>), refused
// ones also by rule (deny_<rule>); a refused relay copy counts
// relay-denied besides the original's reason.
//
// A request passed to the host leaves the card under the card's own
// requester ID; a non-posted one also with a tag of the card's, from the
// requester tag table between this pipeline and the PCIe block
// (pcie4.TagsModule), which notes the port it came from for its
// completion.
//
// What it does not do yet: the ring of recent denials, and lent devices'
// forwarded configuration.
func BuildPortIn(c Config) (*PortIn, error) { return buildPortIn(c, nil) }

// PortIn is BuildPortIn for d's configuration, sharing d's access-check
// module: the card's two pipelines then instance one module, not two
// identical ones under two names.
func (d *Design) PortIn() (*PortIn, error) { return buildPortIn(d.Config, d.access) }

// buildPortIn is BuildPortIn, with the access-check module access if it
// is not nil.
func buildPortIn(c Config, access *ir.Module) (*PortIn, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	tab, a, err := tables(c)
	if err != nil {
		return nil, err
	}
	g := &gen{c: c, d: &Design{DataWidth: c.DataWidth}, m: ir.NewModule(c.Name + "_port_in"), tab: tab, acl: a, kernelFromB: true, access: access}
	p := &portIn{gen: g, W: c.DataWidth, K: c.DataWidth / 32}
	p.build()
	if err := g.m.Check(); err != nil {
		return nil, err
	}
	return &PortIn{Module: g.m, RuleSlots: a.RuleSlots(), Reasons: pmgr.Reasons()}, nil
}

// portIn builds the port-ingress pipeline.
type portIn struct {
	*gen
	W, K int
	adv  ir.Value
	self ir.Value
}

// fromPort are the ranges of one kind (kernel_in or relay) in
// configuration order: the port they apply to (0 A, 1 B), base, size and
// the kernel slot.
type portRange struct {
	port       uint64
	base, size uint64
	slot       uint64
}

func portOf(from string) uint64 {
	if from == "port-b" {
		return 1
	}
	return 0
}

// build builds the port pipeline's logic into p's module.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func (p *portIn) build() {
	m, W, K := p.m, p.W, p.K
	m.Describe("self_id", "The O-NIC's own routing ID, as enumeration gave it.")
	m.Describe("bus_master", "The host's Bus Master Enable for the O-NIC: clear, no request from a port goes to the host.")
	m.Describe("s_port_a_tlp_", "TLPs from optical port A's link: a 128-bit header (DW0 in the top bits), the payload from byte 0, a keep bit per DW; sop and eop frame a TLP.")
	m.Describe("s_port_b_tlp_", "The same from optical port B.")
	m.Describe("m_host_tlp_", "Requests and completions for the host, checked, with the local requester restored on completions.")
	m.Describe("m_kernel", "Posted writes steered to a kernel slot (kernel_in ranges): the slot on the sideband and whether they came in on port B.")
	m.Describe("m_local_tlp_", "Requests from a port for the O-NIC's own registers, to the register block.")
	m.Describe("m_port_a_tlp_", "Out of port A: writes relayed from port B (relay ranges), and the UR completions for requests that came in on A and are answered here (a configuration request, one not supported).")
	m.Describe("m_port_b_tlp_", "The same for port B.")
	m.Describe("count_", "The port pipeline's decision counters (port_in_count_*), saturating.")
	m.Describe("deny_", "Its access-check denials by rule (port_in_deny_*), saturating.")
	p.self = m.Input("self_id", 16)
	// The host's Bus Master Enable for the O-NIC (PG213
	// cfg_function_status, PF0's bit 2): clear, no request goes upstream.
	busMaster := m.Input("bus_master", 1)
	// Input: the two ports' streams, merged a packet at a time, each
	// word tagged with the port (0 A, 1 B).
	var ins []axis.Stream
	for k, name := range []string{"s_port_a_tlp_", "s_port_b_tlp_"} {
		t := tlpbus.In(m, name, W, tlpbus.FieldEOP, tlpbus.FieldHdr, tlpbus.FieldData, tlpbus.FieldKeep, tlpbus.FieldSOP, tlpbus.FieldValid)
		data := m.Concat(t.EOP, m.Const(1, uint64(k)), t.Hdr, t.Data, t.Keep, t.SOP)
		s := axis.New(m, name+"in", data, t.Valid)
		m.Output(name+"ready", s.Ready)
		ins = append(ins, s)
	}
	merged := axis.PacketMux(m, "port_mux", ins)
	sk := axis.Instance(m, "port_in_slice", axis.SkidModule(merged.Data.Width()), merged)
	at := sk.Data.Width()
	take := func(w int) ir.Value { at -= w; return m.Slice(sk.Data, at, w) }
	eop0 := take(1)
	b0 := beat{Stream: tlpbus.Stream{Valid: sk.Valid, Side: m.Named("pin_ingress", take(1)), Hdr: m.Named("pin_hdr", take(128)), Data: take(W), Keep: take(K)}}
	b0.SOP, b0.EOP = take(1), eop0
	p.adv = m.Wire("adv", 1)
	m.Assign(sk.Ready, p.adv)

	// Stage 1.
	f := tlphdr.Decode(m, "pin_hdr", b0.Hdr)
	kind := m.Named("pin_kind", m.ROM(m.Concat(f.Fmt, f.Type), kindBits, KindTable()))
	m.FlagBits(kind, kindNames...)
	size := m.Concat(m.Eq(f.Length, m.Const(10, 0)), f.Length, m.Const(2, 0))
	proxyBase, locals := p.tab.RID()
	proxyOK, local := m.Const(1, 0), m.Const(16, 0)
	if len(locals) > 0 {
		rel := m.Sub(f.Requester, m.Const(16, uint64(proxyBase)))
		proxyOK = m.LtU(rel, m.Const(16, uint64(len(locals))))
		var tab []uint64
		for _, id := range locals {
			tab = append(tab, uint64(id))
		}
		ib := max(bits.Len(uint(len(locals)-1)), 1)
		local = m.ROM(m.Slice(rel, 0, ib), 16, tab)
	}
	in := func(r portRange, lastIncl bool) ir.Value {
		port := m.Eq(b0.Side, m.Const(1, r.port))
		rel := m.Sub(f.Address, m.Const(64, r.base))
		inside := m.Not(m.LtU(f.Address, m.Const(64, r.base)))
		if lastIncl {
			// Relay: the whole access fits (address - base + size <= range size).
			end := m.Add(m.Zext(rel, 65), m.Zext(size, 65))
			return m.And(port, m.And(inside, m.Not(m.LtU(m.Const(65, r.size), end))))
		}
		return m.And(port, m.And(inside, m.LtU(rel, m.Const(64, r.size))))
	}
	var kiHits, kiSlots, kiOffs []ir.Value
	for _, k := range p.c.Manager.KernelIn {
		r := portRange{portOf(k.From), k.Base, k.Size, uint64(k.Slot)}
		kiHits = append(kiHits, in(r, false))
		kiSlots = append(kiSlots, m.Const(8, r.slot))
		kiOffs = append(kiOffs, m.Sub(f.Address, m.Const(64, r.base)))
	}
	kiHit, kiSlot, kiOff := m.Const(1, 0), m.Const(8, 0), m.Const(64, 0)
	if len(kiHits) > 0 {
		kiHit, kiSlot, kiOff = m.Any(kiHits...), m.Pick(kiHits, kiSlots), m.Pick(kiHits, kiOffs)
	}
	relayHit := m.Const(1, 0)
	for i := len(p.c.Manager.Relay) - 1; i >= 0; i-- {
		r := p.c.Manager.Relay[i]
		relayHit = m.Or(relayHit, in(portRange{portOf(r.From), r.Base, r.Size, 0}, true))
	}
	s1 := p.stageReg("p1", b0, p.adv)
	reg1 := func(name string, v ir.Value) ir.Value { ir.Helper(); return p.dataReg("p1_"+name, v, p.adv) }
	kind1, size1, proxyOK1, local1 := reg1("kind", kind), reg1("size", size), reg1("proxy_ok", m.Named("pin_proxy_ok", proxyOK)), reg1("local", m.Named("pin_local", local))
	kiHit1, kiSlot1, kiOff1, relayHit1 := reg1("kernel_in", m.Named("pin_kernel_in", kiHit)), reg1("kernel_slot", kiSlot), reg1("kernel_off", kiOff), reg1("relay", m.Named("pin_relay", relayHit))

	// Stage 2: the access checks.
	f1 := tlphdr.Decode(m, "p1_hdr", s1.Hdr)
	bit := func(v ir.Value, k int) ir.Value { return m.Slice(v, bits.TrailingZeros(uint(k)), 1) }
	memAtomic1, hasData1, nonPosted1 := bit(kind1, kMemAtomic), bit(kind1, kData), bit(kind1, kNonPosted)
	// A memory request or AtomicOp whose address and length cross 4 KiB
	// is Malformed (PCIe Base §2.2.7): dropped, never answered.
	cross := m.LtU(m.Const(13, 4096), m.Add(m.Zext(m.Slice(f1.Address, 0, 12), 13), size1))
	malformed1 := m.Named("pin_malformed", m.And(memAtomic1, cross))
	// A configuration request (Type 0010x; messages are 10xxx).
	isMsg1 := m.Named("pin_msg", m.Slice(f1.Type, 4, 1))
	isMWr1 := m.Named("pin_mwr", m.And(memAtomic1, m.And(hasData1, m.Not(nonPosted1))))
	steer := m.Named("pin_steer", m.And(isMWr1, kiHit1))
	ingress := m.Add(m.Zext(s1.Side, 2), m.Const(2, 1)) // acl.FromPortA = 1, FromPortB = 2
	kernelBit := m.Add(m.Slice(kiSlot1, 0, 5), m.Const(5, 8))
	egBit := m.Mux(steer, kernelBit, m.Const(5, 3)) // 3: the host
	op := accessOp(m, hasData1, nonPosted1)         // a steered write is an MWr: a write
	accMod, err := p.accessModule()
	if err != nil {
		panic(err) // the domains were checked by acl.Build
	}
	slots := p.ruleSlotInputs()
	v := access.Instance(m, "access", accMod, f1.Requester, ingress, f1.Address, size1, op, egBit, slots)
	other := m.Zext(m.Not(s1.Side), 5) // the other port's egress bit: 0 A, 1 B
	rv := access.Instance(m, "relay_access", accMod, f1.Requester, ingress, f1.Address, size1, m.Const(2, uint64(acl.OpWrite)), other, slots)
	s2 := p.stageReg("p2", s1, p.adv)
	reg2 := func(name string, v ir.Value) ir.Value { ir.Helper(); return p.dataReg("p2_"+name, v, p.adv) }
	kind2, proxyOK2, local2 := reg2("kind", kind1), reg2("proxy_ok", proxyOK1), reg2("local", local1)
	steer2, kiSlot2, kiOff2, relay2 := reg2("steer", steer), reg2("kernel_slot", kiSlot1), reg2("kernel_off", kiOff1), reg2("relay", relayHit1)
	rule2, relayRule2 := reg2("rule", v.Rule), reg2("relay_rule", rv.Rule)
	isMWr2 := reg2("mwr", isMWr1)
	malformed2, isMsg2 := reg2("malformed", malformed1), reg2("msg", isMsg1)

	// Stage 3: the decision.
	f2 := tlphdr.Decode(m, "p2_hdr", s2.Hdr)
	memAtomic, cfgMsg, isCpl := bit(kind2, kMemAtomic), bit(kind2, kCfgMsg), bit(kind2, kCpl)
	nonPosted := bit(kind2, kNonPosted)
	allowed := m.Named("pin_allowed", m.Eq(rule2, m.Const(3, uint64(acl.Allowed))))
	r4 := func(r pmgr.Reason) ir.Value {
		return p.konst("REASON_"+strings.ToUpper(strings.ReplaceAll(r.String(), "-", "_")), 4, uint64(r))
	}
	const (
		egHost   = uint64(ntb.EgressHost)
		egKernel = uint64(ntb.EgressKernel)
		egLocal  = uint64(ntb.EgressLocal)
	)
	eg := func(k uint64) ir.Value { return m.Const(3, k) }
	// The first condition that holds wins, as in fromPort.
	reason, egress := r4(pmgr.Unsupported), eg(0)
	choose := func(cond, rs ir.Value, e uint64) {
		reason, egress = m.Mux(cond, rs, reason), m.Mux(cond, eg(e), egress)
	}
	when := func(name string, v ir.Value) ir.Value { return m.Named("pin_when_"+name, v) }
	memAllowed := when("allowed", m.And(memAtomic, allowed))
	choose(when("denied", m.And(memAtomic, m.Named("pin_not_allowed", m.Not(allowed)))), r4(pmgr.Denied), 0)
	choose(memAllowed, r4(pmgr.OK), egHost)
	choose(when("master_off", m.And(memAllowed, m.And(m.Not(steer2), m.Not(busMaster)))), r4(pmgr.BusMasterDisabled), 0)
	choose(when("steered", m.And(m.And(memAtomic, steer2), allowed)), r4(pmgr.OK), egKernel)
	choose(when("malformed", m.And(memAtomic, malformed2)), r4(pmgr.Malformed), 0)
	choose(when("cpl_unexpected", m.And(isCpl, m.Not(proxyOK2))), r4(pmgr.UnexpectedCompletion), 0)
	choose(when("cpl", m.And(isCpl, proxyOK2)), r4(pmgr.OK), egHost)
	// Messages go to the register block; configuration requests, which
	// only this host's root complex may make, are unsupported (UR).
	choose(when("message", m.And(cfgMsg, isMsg2)), r4(pmgr.OK), egLocal)
	reason, egress = m.Named("pin_reason", reason), m.Named("pin_egress", egress)
	ok := m.Named("pin_ok", m.Eq(reason, r4(pmgr.OK)))
	complete := m.Named("pin_complete", m.And(m.And(m.Not(ok), m.Not(m.Eq(reason, r4(pmgr.Malformed)))), m.And(nonPosted, m.Not(isCpl))))
	toHostReq := m.And(memAtomic, m.Not(steer2))
	relayWrite := m.Named("pin_relay_write", m.And(m.And(ok, toHostReq), m.And(isMWr2, relay2)))
	relayAllowed := m.Named("pin_relay_allowed", m.Eq(relayRule2, m.Const(3, uint64(acl.Allowed))))
	relayCopy := m.Named("pin_relay_copy", m.And(relayWrite, relayAllowed))
	relayDenied := m.Named("pin_relay_denied", m.And(relayWrite, m.Not(relayAllowed)))
	// Headers: a completion for the host gets its local requester back; a
	// steered write its offset in the slot; everything else leaves as it
	// came.
	reqLo, reqW := tlphdr.Pos(tlphdr.Layout("requester_id", tlp.ClassCompletion, tlp.Fmt3DW))
	cplHdr := m.Concat(m.Slice(s2.Hdr, reqLo+reqW, 128-reqLo-reqW), local2, m.Slice(s2.Hdr, 0, reqLo))
	hdr := m.Mux(isCpl, cplHdr, m.Mux(steer2, tlphdr.Rewrite(m, "pin_rewrite", s2.Hdr, kiOff2, f2.Requester), s2.Hdr))
	status := m.Mux(m.Eq(reason, r4(pmgr.Denied)), m.Const(3, uint64(p.acl.DenyStatus)), m.Const(3, uint64(tlp.StatusUR)))
	urHdr := m.Concat(completion(m, s2.Hdr, p.self, status, bit(kind2, kMRd), bit(kind2, kLock)), m.Const(32, 0))

	takeDec := m.Named("pin_take", m.And(p.adv, m.And(s2.Valid, s2.SOP)))
	s3 := p.stageReg("p3", s2, p.adv)
	d := struct{ ok, complete, egress, slot, relay, hdr, urHdr, reason, relayDenied, rule ir.Value }{
		p.reg("p3_ok", ok, takeDec), p.reg("p3_complete", complete, takeDec), p.reg("p3_egress", egress, takeDec),
		p.dataReg("p3_slot", kiSlot2, takeDec), p.reg("p3_relay", relayCopy, takeDec), p.dataReg("p3_out_hdr", hdr, takeDec),
		p.dataReg("p3_ur_hdr", urHdr, takeDec), p.reg("p3_reason", reason, takeDec), p.reg("p3_relay_denied", relayDenied, takeDec),
		p.reg("p3_rule", rule2, takeDec),
	}

	// Router.
	fromB := s3.Side
	isEg := func(k uint64) ir.Value { return m.And(d.ok, m.Eq(d.egress, eg(k))) }
	tail := m.Concat(s3.Data, s3.Keep, s3.SOP, s3.EOP)
	cplBeat := m.Concat(d.urHdr, m.Const(W, 0), m.Const(K, 0), m.Const(1, 1), m.Const(1, 1))
	cplHere := m.And(d.complete, s3.SOP)
	toA := m.Or(m.And(cplHere, m.Not(fromB)), m.And(d.relay, fromB))
	toB := m.Or(m.And(cplHere, fromB), m.And(d.relay, m.Not(fromB)))
	portBeat := m.Mux(d.complete, cplBeat, m.Concat(d.hdr, tail))
	routes := []route{
		{"m_host", isEg(egHost), m.Concat(d.hdr, tail)},
		{"m_kernel", isEg(egKernel), m.Concat(fromB, d.slot, d.hdr, tail)},
		{"m_local", isEg(egLocal), m.Concat(d.hdr, tail)},
		{"m_port_a", toA, portBeat},
		{"m_port_b", toB, portBeat},
	}
	p.router(s3.Valid, p.adv, routes, W, K)

	// Counters.
	fire := m.Named("pin_count", m.And(p.adv, m.And(s3.Valid, s3.SOP)))
	for _, r := range pmgr.Reasons() {
		inc := m.And(fire, m.Eq(d.reason, r4(r)))
		if r == pmgr.RelayDenied {
			inc = m.Or(inc, m.And(fire, d.relayDenied))
		}
		name := "count_" + strings.ReplaceAll(r.String(), "-", "_")
		cnt := m.Reg(name, 32, 0)
		m.SetNext(cnt, m.SatAddU(cnt, m.Named(name+"_inc", m.Zext(inc, 32))))
		m.Output(name+"_total", cnt)
	}
	denied := m.Named("count_denied_now", m.And(fire, m.Eq(d.reason, r4(pmgr.Denied))))
	for rule := acl.Rule(1); rule < acl.NumRules; rule++ {
		name := "deny_" + strings.ReplaceAll(rule.String(), "-", "_")
		cnt := m.Reg(name, 32, 0)
		m.SetNext(cnt, m.SatAddU(cnt, m.Named(name+"_inc", m.Zext(m.And(denied, m.Eq(d.rule, m.Const(3, uint64(rule)))), 32))))
		m.Output(name+"_total", cnt)
	}
}

// ruleSlotInputs declares the run-time access rule slots as inputs
// acl_slot<i>_{en,read,write,domain,page,pages}: the manager's ACL
// registers, which it shares.
func (p *portIn) ruleSlotInputs() []access.Slot {
	m := p.m
	var out []access.Slot
	for i := range p.acl.RuleSlots() {
		in := func(f string, w int) ir.Value { return m.Input(fmt.Sprintf("acl_slot%d_%s", i, f), w) }
		out = append(out, access.Slot{Enabled: in("en", 1), Read: in("read", 1), Write: in("write", 1),
			Domain: in("domain", 16), Page: in("page", 52), Pages: in("pages", 32)})
	}
	return out
}
