package cluster

import (
	"fmt"
	"io"
	"time"

	"onic/emu/sim"
	"onic/tlp/pcap"
)

// Taps names the capture points of the cluster, indexed by tap number:
// three per O-NIC, in configuration order: its host link
// ("onicA.host": downstream records arrive at the O-NIC, upstream ones at
// the host), then its optical ports ("onicA.port-a", "onicA.port-b": TLPs
// arriving at that port from the MEMS, recorded as upstream, towards that
// O-NIC's host).
func (cl *Cluster) Taps() []string {
	var out []string
	for _, o := range cl.onics {
		out = append(out, o.cfg.Name+".host", o.cfg.Name+".port-a", o.cfg.Name+".port-b")
	}
	return out
}

// tap is the tap number of O-NIC o's host link (where 0) or port where-1.
func (o *onicNode) tap(where int) int { return 3*o.idx + where }

// capture records TLPs as they arrive at the chosen taps.
type capture struct {
	w   *pcap.Writer
	on  []bool // by tap number
	err error
}

// Capture makes Run write every TLP arriving at the named taps (all of
// them if taps is empty) to w as a pcapng file in onic's TLP format
// (docs/pcap.md), one interface per tap named after it (Taps),
// time-stamped with simulated time. Payloads the
// emulator has the bytes of (a host program's writes through emu serve)
// are written as they are; the others are snapped to the header (the
// record's length still the whole TLP's): traffic generators carry sizes,
// not data.
func (cl *Cluster) Capture(w io.Writer, taps []string) error {
	all := cl.Taps()
	on := make([]bool, len(all))
	for _, name := range taps {
		found := false
		for i, n := range all {
			if n == name {
				on[i], found = true, true
			}
		}
		if !found {
			return fmt.Errorf("tap %q: no such capture point (taps: %v)", name, all)
		}
	}
	if len(taps) == 0 {
		for i := range on {
			on[i] = true
		}
	}
	pw, err := pcap.NewNgWriter(w, all)
	if err != nil {
		return err
	}
	cl.capture = &capture{w: pw, on: on}
	if cl.hw != nil {
		cl.hw.x.Capture(true) // the cards' ports' taps
	}
	return nil
}

// record writes m, arriving now at tap, if that tap is on.
func (cl *Cluster) record(tap int, up bool, m *msg) { cl.recordAt(tap, up, m, cl.s.Now()) }

// recordAt is record at simulated time now (a card's TLP arrives at the
// cycle it did, inside a batch of cycles).
func (cl *Cluster) recordAt(tap int, up bool, m *msg, now sim.Time) {
	cp := cl.capture
	if cp.err != nil || !cp.on[tap] {
		return
	}
	t := m.t
	if t.Kind().HasData() && (t.Length == 0 || len(t.Data) != int(t.Length)*4) {
		// No bytes (a traffic generator's: the emulator carries sizes):
		// the header alone, saying how long the TLP is. A host program's
		// data is kept.
		t.Snapped, t.Data = true, nil
	}
	dir := pcap.Downstream
	if up {
		dir = pcap.Upstream
	}
	at := time.Duration(now / sim.Nanosecond)
	if err := cp.w.WriteTLP(at, pcap.TapHeader{Direction: dir, Tap: uint16(tap)}, &t); err != nil {
		cp.err = fmt.Errorf("capture at tap %d, %v: %w", tap, at, err)
	}
}
