package pcie

import (
	"fmt"

	"onic/tlp"
)

// Route is where a TLP goes through an enumerated hierarchy.
type Route struct {
	// Path lists the nodes the TLP passes, from the source to the target
	// (the root complex when it ends in host memory or at the host).
	Path []*Node
	// Target is the node that consumes the TLP, Func its function; nil if
	// nothing claims it.
	Target *Node
	Func   int
	// Host reports that the TLP ends at the root complex: in system memory
	// for a memory request no port claims, or at the host for messages to
	// the root complex and completions to the host bridge.
	Host bool
	// Broadcast lists, for a broadcast message, every node it reaches.
	Broadcast []*Node
	// Status is what the requester sees: SC when the TLP reaches a target,
	// UR when the routing ends without one (an address or ID that nothing
	// below the last bridge claims, or an absent function), or when a
	// port's ACS source validation blocks it.
	Status tlp.Status
	// ACSViolation reports that source validation blocked the TLP at the
	// last node of Path.
	ACSViolation bool
	// Redirected reports that an ACS P2P redirect sent a peer-to-peer TLP
	// up to the root complex instead of turning at a switch.
	Redirected bool
}

// acsControl returns the ACS Control register of a port, or 0.
func acsControl(n *Node) uint16 {
	br := n.Bridge()
	if br == nil {
		return 0
	}
	off := br.capOffset(ExtCapACS, true)
	if off == 0 {
		return 0
	}
	return br.Space.Read16(off + 6)
}

// claims reports whether node n, or something below it, is the target of
// t's address or ID, read from the configuration registers as hardware
// decodes them.
func claims(n *Node, t *tlp.TLP, byID bool, id tlp.ID) bool {
	if br := n.Bridge(); br != nil && n.Kind != RootComplexNode {
		if byID {
			sec, sub := br.BusRange()
			return id.Bus() == n.Bus && id.Device() == n.Dev || id.Bus() >= sec && id.Bus() <= sub
		}
		if br.Space.Read16(0x04)&0x2 == 0 && t.Kind().Class() != tlp.ClassIO {
			return false // memory space disabled
		}
		io, mem, pref := br.Windows()
		if t.Kind().Class() == tlp.ClassIO {
			return io.Contains(t.Address)
		}
		return mem.Contains(t.Address) || pref.Contains(t.Address)
	}
	if byID {
		return id.Bus() == n.Bus && id.Device() == n.Dev
	}
	_, ok := claimFunc(n, t)
	return ok
}

// claimFunc returns the function of endpoint n whose BAR holds t's address.
func claimFunc(n *Node, t *tlp.TLP) (int, bool) {
	io := t.Kind().Class() == tlp.ClassIO
	for fi, f := range n.Funcs {
		cmd := f.Space.Read16(0x04)
		for i, b := range f.BARs {
			if b.Kind == BARNone || (b.Kind == BARIO) != io {
				continue
			}
			if io && cmd&1 == 0 || !io && cmd&2 == 0 {
				continue
			}
			if base := f.BARAddress(i); t.Address >= base && t.Address-base < b.Size {
				return fi, true
			}
		}
	}
	return 0, false
}

// routeKind says how t is routed: by address, by ID (with the ID), or
// implicitly (with the message routing).
func routeKind(t *tlp.TLP) (byID bool, id tlp.ID, implicit bool, r tlp.Routing) {
	switch t.Kind().Class() {
	case tlp.ClassCompletion:
		return true, t.RequesterID, false, 0
	case tlp.ClassConfig:
		return true, t.CompleterID, false, 0
	case tlp.ClassMessage:
		switch t.Routing() {
		case tlp.RouteByAddress:
			return false, 0, false, 0
		case tlp.RouteByID:
			return true, t.DestinationID(), false, 0
		}
		return false, 0, true, t.Routing()
	}
	return false, 0, false, 0
}

// Route follows t from node src (a device; the root complex for requests
// the host issues) to its target: up until an ancestor's bus holds a node
// that claims it, then down, so peer-to-peer traffic turns at the lowest
// common switch. Memory requests no port claims end in host memory.
//
// Long: the walk up and then down the hierarchy is one loop over the bus
// levels, with each kind of claim (BAR, bus range, ID) checked where the
// walk meets it.
func (h *Hierarchy) Route(src *Node, t *tlp.TLP) (Route, error) {
	if src == nil {
		return Route{}, fmt.Errorf("route: no source node")
	}
	if t.Kind() == tlp.KindInvalid {
		return Route{}, fmt.Errorf("route: TLP has a reserved Fmt/Type")
	}
	byID, id, implicit, r := routeKind(t)
	rt := Route{Path: []*Node{src}}
	if implicit {
		switch r {
		case tlp.RouteToRC, tlp.RouteGatherToRC:
			for n := src.Parent; n != nil; n = n.Parent {
				rt.Path = append(rt.Path, n)
			}
			rt.Target, rt.Host, rt.Status = h.Root, true, tlp.StatusSC
		case tlp.RouteBroadcast:
			walk(src, func(n *Node) {
				if n != src {
					rt.Broadcast = append(rt.Broadcast, n)
				}
			})
			rt.Target, rt.Status = src, tlp.StatusSC
		default: // local and reserved: terminate at the receiver, the link partner
			if src.Parent != nil {
				rt.Path = append(rt.Path, src.Parent)
				rt.Target = src.Parent
			} else {
				rt.Target = src
			}
			rt.Status = tlp.StatusSC
		}
		return rt, nil
	}
	// Up: from the source, look at each ancestor's bus for a claimant.
	from := src
	var down *Node
	redirect := false // an ACS redirect is carrying the TLP up to the root
	for anc := src; anc != nil; anc = anc.Parent {
		if anc != src {
			rt.Path = append(rt.Path, anc)
		}
		if anc == src && src.Kind != RootComplexNode {
			continue // a device does not route to itself across its link
		}
		if anc.Kind == RootPortNode || anc.Kind == SwitchDownNode {
			// The TLP entered this port from below (from its secondary side).
			acs := acsControl(anc)
			if acs&ACSSourceValidation != 0 && t.Kind().IsRequest() {
				sec, sub := anc.Bridge().BusRange()
				if b := t.RequesterID.Bus(); b < sec || b > sub {
					rt.Status, rt.ACSViolation = tlp.StatusUR, true
					return rt, nil
				}
			}
			isCpl := t.Kind().Class() == tlp.ClassCompletion
			if anc.Kind == SwitchDownNode && (!isCpl && acs&ACSRequestRedirect != 0 || isCpl && acs&ACSCompletionRedirect != 0) {
				redirect = true
			}
		}
		for _, c := range anc.Children {
			// A redirected TLP may turn back down the root port it came
			// up through: the root complex routes it like any other.
			hairpin := redirect && anc.Kind == RootComplexNode
			if (c != from || hairpin) && claims(c, t, byID, id) {
				down = c
				break
			}
		}
		if down != nil && redirect && anc.Kind == SwitchUpNode {
			// Peer-to-peer inside the switch is redirected upstream.
			down, rt.Redirected = nil, true
		}
		if down != nil {
			break
		}
		if anc.Kind == RootComplexNode {
			break
		}
		from = anc
		// A bridge passes a TLP upstream only if it does not claim it
		// itself (it came from below, so it belongs elsewhere).
	}
	if down == nil {
		// Nothing claims it: memory requests go to system memory, and
		// completions or ID-routed TLPs for the root complex's own ID end
		// at the host; everything else is unsupported.
		if !byID && t.Kind().Class() != tlp.ClassIO {
			rt.Target, rt.Host, rt.Status = h.Root, true, tlp.StatusSC
			return rt, nil
		}
		if byID && id.Bus() == 0 && id.Device() == 0 {
			rt.Target, rt.Host, rt.Status = h.Root, true, tlp.StatusSC
			return rt, nil
		}
		rt.Status = tlp.StatusUR
		return rt, nil
	}
	// Down: at each bridge choose the child that claims it.
	for n := down; ; {
		rt.Path = append(rt.Path, n)
		if n.Bridge() == nil || n.Kind == EndpointNode {
			fn, ok := 0, false
			if byID {
				if int(id.Function()) < len(n.Funcs) {
					fn, ok = int(id.Function()), true
				}
			} else {
				fn, ok = claimFunc(n, t)
			}
			if !ok {
				rt.Status = tlp.StatusUR
				return rt, nil
			}
			rt.Target, rt.Func, rt.Status = n, fn, tlp.StatusSC
			return rt, nil
		}
		// A configuration request whose target bus is the bridge's own
		// position (its own ID) ends at the bridge function.
		if byID && id.Bus() == n.Bus && id.Device() == n.Dev {
			if int(id.Function()) < len(n.Funcs) {
				rt.Target, rt.Func, rt.Status = n, int(id.Function()), tlp.StatusSC
			} else {
				rt.Status = tlp.StatusUR
			}
			return rt, nil
		}
		var next *Node
		for _, c := range n.Children {
			if claims(c, t, byID, id) {
				next = c
				break
			}
		}
		if next == nil {
			rt.Status = tlp.StatusUR // the bridge forwards it, but nothing below decodes it
			return rt, nil
		}
		n = next
	}
}
