// Package idmap is a table from PCIe routing IDs (bus:device.function) to
// small values, for the per-requester lookups of an O-NIC's manager:
// which access domain a requester belongs to, its proxy ID, the port its
// requests came in on. A flat table of 2^16 entries costs 64-128 KiB per
// O-NIC whatever it holds; this one is two-level — a bus's 256 entries
// exist only once one of them is set — so an O-NIC whose requesters sit
// on a few buses costs about 2 KiB, and a cluster of hundreds of O-NICs
// does not spend its memory on empty tables. A lookup is two loads and
// never allocates.
package idmap

import "onic/tlp"

// Value is what a table may hold.
type Value interface{ ~uint8 | ~uint16 }

// Map maps routing IDs to values of type V; the zero Map holds the zero
// value for every ID, and so does an ID never set.
type Map[V Value] struct {
	bus [256]*[256]V
}

// Get returns the value of id.
func (m *Map[V]) Get(id tlp.ID) V {
	if p := m.bus[id>>8]; p != nil {
		return p[id&0xFF]
	}
	return 0
}

// Set sets the value of id. Setting the first non-zero value on a bus
// allocates that bus's entries (256 values); nothing else allocates.
func (m *Map[V]) Set(id tlp.ID, v V) {
	p := m.bus[id>>8]
	if p == nil {
		if v == 0 {
			return
		}
		p = new([256]V)
		m.bus[id>>8] = p
	}
	p[id&0xFF] = v
}

// Buses returns how many buses have entries allocated.
func (m *Map[V]) Buses() int {
	n := 0
	for _, p := range m.bus {
		if p != nil {
			n++
		}
	}
	return n
}
