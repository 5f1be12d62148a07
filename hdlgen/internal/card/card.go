// Package card builds the O-NIC's top as far as it is generated: the PCIe
// manager behind the completer side of AMD's PCIE4 block
// (hdlgen/internal/pcie4.HostTop), with an optical link layer
// (hdlgen/internal/optlink) on each of its optical ports.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package card

import (
	"strings"

	"onic/hdlgen/ir"
)

// Ports are the optical ports, by the prefix their top-level signals
// carry and the manager's egress stream that feeds them.
var Ports = []struct{ Prefix, Egress string }{
	{"port_a", "m_port_a_tlp_"},
	{"port_b", "m_port_b_tlp_"},
}

// Top builds name from host (pcie4.HostTop's module: the manager behind
// CQ/CC) and link (optlink.Module), one link instance per optical port.
// The manager's port egress streams feed the links; the links' states
// drive the manager's port_down (a port is down to the manager unless its
// link is up, so failover windows switch and TLPs for a down port fail
// with port-down, the emulator's "fail" policy). For each port the top
// has the link's lane interface as <port>_tx_data, <port>_tx_ctl,
// <port>_tx_valid, <port>_tx_ready, <port>_rx_data, <port>_rx_ctl,
// <port>_rx_valid and <port>_phy_up, its state and counters as
// <port>_state, <port>_replays, <port>_naks, <port>_crc_errors and
// <port>_lost, and the TLPs it receives as <port>_in_tlp_* (the
// manager's stream format) until the manager has port ingresses to take
// them. Every other port of host is a port of the top under its own name.
func Top(name string, host, link *ir.Module) *ir.Module {
	m := ir.NewModule(name)
	hostIn := map[string]ir.Value{}
	for _, p := range host.Ports() {
		switch {
		case p.Output || p.Name == "port_down" || isEgress(p.Name):
		case strings.HasPrefix(p.Name, "remote_"):
			// The remote table's writes come from the port-ingress
			// pipeline, which is not in this top yet.
			hostIn[p.Name] = m.Const(host.Node(p.Node).W, 0)
		default:
			hostIn[p.Name] = m.Input(p.Name, host.Node(p.Node).W)
		}
	}
	// The links read the manager's egress and answer with ready; the
	// manager reads the links' states: wires tie the loops.
	readies := map[string]ir.Value{}
	states := map[string]ir.Value{}
	for _, pt := range Ports {
		readies[pt.Prefix] = m.Wire(pt.Prefix+"_egress_ready", 1)
		hostIn[pt.Egress+"ready"] = readies[pt.Prefix]
		states[pt.Prefix] = m.Wire(pt.Prefix+"_link_state", 2)
	}
	up := func(p string) ir.Value { return m.Eq(states[p], m.Const(2, 2)) }
	hostIn["port_down"] = m.Named("port_down", m.Concat(m.Not(up("port_b")), m.Not(up("port_a"))))
	hostOut := m.Instance("host", host, hostIn)
	for _, p := range host.Ports() {
		if p.Output && !isEgress(p.Name) {
			m.Output(p.Name, hostOut[p.Name])
		}
	}
	for _, pt := range Ports {
		in := map[string]ir.Value{}
		for _, p := range link.Ports() {
			if p.Output {
				continue
			}
			w := link.Node(p.Node).W
			switch {
			case strings.HasPrefix(p.Name, "s_tlp_"):
				in[p.Name] = hostOut[pt.Egress+strings.TrimPrefix(p.Name, "s_tlp_")]
			case p.Name == "m_tlp_ready":
				in[p.Name] = m.Input(pt.Prefix+"_in_tlp_ready", 1)
			default:
				in[p.Name] = m.Input(pt.Prefix+"_"+p.Name, w)
			}
		}
		out := m.Instance(pt.Prefix+"_link", link, in)
		m.Assign(readies[pt.Prefix], out["s_tlp_ready"])
		m.Assign(states[pt.Prefix], out["state"])
		for _, p := range link.Ports() {
			switch {
			case !p.Output || p.Name == "s_tlp_ready":
			case strings.HasPrefix(p.Name, "m_tlp_"):
				m.Output(pt.Prefix+"_in_tlp_"+strings.TrimPrefix(p.Name, "m_tlp_"), out[p.Name])
			default:
				m.Output(pt.Prefix+"_"+p.Name, out[p.Name])
			}
		}
	}
	return m
}

// isEgress says whether a port of the host module is part of a port
// egress stream, which the links take.
func isEgress(name string) bool {
	for _, pt := range Ports {
		if strings.HasPrefix(name, pt.Egress) {
			return true
		}
	}
	return false
}
