package manager

import "onic/tlp"

// Apply rewrites t, the TLP o was decided for, into the TLP that leaves
// the O-NIC toward o.Egress when that is an optical port or the host
// link: the one place the decision is applied to a TLP (the emulator
// calls it; the RTL's header rewrite, tlphdr.Rewrite, is held to it).
//
//   - A memory request or AtomicOp takes the translated address, in the
//     3-DW form below 4 GiB and the 4-DW form above (PCIe §2.2.4.1: a
//     4-DW header must not carry an address below 4 GiB), and the
//     requester ID the manager chose (a proxy ID toward a port, the
//     O-NIC's own toward its host);
//   - every TLP takes the requester ID and tag of the outcome: for a
//     completion, those of the request it answers as the requester sent
//     it;
//   - a write into a lent device's MSI-X table has its message address
//     mapped through the loan's MSI window (RewritePayload).
func (o *Outcome) Apply(t *tlp.TLP) {
	if c := t.Kind().Class(); c == tlp.ClassMemory || c == tlp.ClassAtomic {
		setAddress(t, o.Address)
	}
	t.RequesterID, t.Tag = o.Requester, o.Tag
	if o.Rewrite.Mask != 0 {
		t.Data = o.RewritePayload(t.Data)
	}
}

// ApplySecond rewrites t, a copy of the write o was decided for, into
// its multicast or relay copy toward o.Second.
func (o *Outcome) ApplySecond(t *tlp.TLP) {
	setAddress(t, o.SecondAddress)
	t.RequesterID = o.SecondRequester
}

// setAddress gives memory request t address a, choosing the header form
// the address needs.
func setAddress(t *tlp.TLP, a uint64) {
	t.Address = a
	if f, typ, ok := tlp.FmtType(t.Kind(), a >= 1<<32, 0); ok {
		t.Fmt, t.Type = f, typ
	}
}
