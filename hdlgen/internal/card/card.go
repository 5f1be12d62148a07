// Package card builds the O-NIC's top as far as it is generated: AMD's
// PCIE4 block's four interfaces (hdlgen/internal/pcie4) around the PCIe
// manager's host and port pipelines (hdlgen/manager), with an optical
// link layer (hdlgen/internal/optlink) on each port.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package card

// Ports are the optical ports, by the prefix their top-level signals
// carry.
var Ports = []struct{ Prefix string }{
	{"port_a"},
	{"port_b"},
}
