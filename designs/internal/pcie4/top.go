package pcie4

import (
	"strings"

	"onic/hdlgen/ir"
)

// CQModule is the completer request adapter as a module of its own
// (onic_pcie4_cq).
func CQModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_cq")
	CQ(m)
	return m
}

// CCModule is the completer completion adapter as a module of its own
// (onic_pcie4_cc).
func CCModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_cc")
	CC(m)
	return m
}

// HostTop builds name: the PCIe manager mgr behind the completer side of
// AMD's PCIE4 block. Requests from the block's CQ interface go through
// the CQ adapter into the manager's host stream; the UR/CA completions
// the manager generates go through the CC adapter back to the block. Every
// other port of the manager (the optical ports' and kernels' streams,
// m_local, AXI-Lite, self_id, port_down) is a port of the top under its
// own name. The requester side (RQ/RC) is not here yet.
func HostTop(name string, mgr *ir.Module) *ir.Module {
	m := ir.NewModule(name)
	cqIn := map[string]ir.Value{}
	ccIn := map[string]ir.Value{}
	mgrIn := map[string]ir.Value{}
	cq, cc := CQModule(), CCModule()
	for _, p := range cq.Ports() {
		if !p.Output && strings.HasPrefix(p.Name, "m_axis_cq_") {
			cqIn[p.Name] = m.Input(p.Name, cq.Node(p.Node).W)
		}
	}
	for _, p := range mgr.Ports() {
		if !p.Output && !strings.HasPrefix(p.Name, "s_host_tlp_") && p.Name != "m_cpl_tlp_ready" {
			mgrIn[p.Name] = m.Input(p.Name, mgr.Node(p.Node).W)
		}
	}
	ccReady := m.Input("s_axis_cc_tready", 1)
	// The manager's host stream comes from the CQ adapter, whose ready
	// comes from the manager: a wire ties the loop.
	hostReady := m.Wire("host_tlp_ready", 1)
	cqIn["tlp_ready"] = hostReady
	cqOut := m.Instance("cq", cq, cqIn)
	for _, f := range []string{"hdr", "bar", "data", "keep", "sop", "eop", "valid"} {
		mgrIn["s_host_tlp_"+f] = cqOut["tlp_"+f]
	}
	if mgr.HasInput("s_host_tlp_func") { // a manager with stand-ins
		mgrIn["s_host_tlp_func"] = cqOut["tlp_func"]
	}
	cplReady := m.Wire("cpl_tlp_ready", 1)
	mgrIn["m_cpl_tlp_ready"] = cplReady
	mgrOut := m.Instance("manager", mgr, mgrIn)
	m.Assign(hostReady, mgrOut["s_host_tlp_ready"])
	// The manager's completions are header-only: one beat each.
	ccIn["tlp_hdr"] = mgrOut["m_cpl_tlp_hdr"]
	ccIn["tlp_data"] = m.Const(dataBits, 0)
	ccIn["tlp_keep"] = m.Const(keepBits, 0)
	ccIn["tlp_sop"] = m.Const(1, 1)
	ccIn["tlp_eop"] = m.Const(1, 1)
	ccIn["tlp_valid"] = mgrOut["m_cpl_tlp_valid"]
	ccIn["s_axis_cc_tready"] = ccReady
	ccOut := m.Instance("cc", cc, ccIn)
	m.Assign(cplReady, ccOut["tlp_ready"])
	for _, p := range cq.Ports() {
		if p.Output && strings.HasPrefix(p.Name, "m_axis_cq_") {
			m.Output(p.Name, cqOut[p.Name])
		}
	}
	for _, p := range cc.Ports() {
		if p.Output && strings.HasPrefix(p.Name, "s_axis_cc_") {
			m.Output(p.Name, ccOut[p.Name])
		}
	}
	for _, p := range mgr.Ports() {
		if p.Output && p.Name != "s_host_tlp_ready" && !strings.HasPrefix(p.Name, "m_cpl_tlp_") {
			m.Output(p.Name, mgrOut[p.Name])
		}
	}
	// Non-posted credit (PG213, "Selective Flow Control for Non-Posted
	// Requests"): the block delivers a non-posted request only while its
	// credit counter is non-zero, and the counter grows by one each cycle
	// this asks for it (saturating at 32). The manager takes requests in
	// order under tready backpressure alone, so credit is asked for every
	// cycle.
	m.Output("pcie_cq_np_req", m.Named("np_credit", m.Const(2, 0b01)))
	return m
}

// RQModule is the requester request adapter as a module of its own
// (onic_pcie4_rq).
func RQModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_rq")
	RQ(m)
	return m
}

// RCModule is the requester completion adapter as a module of its own
// (onic_pcie4_rc).
func RCModule() *ir.Module {
	m := ir.NewModule("onic_pcie4_rc")
	RC(m)
	return m
}
