package cluster

import (
	"time"

	"onic/tlp"
)

// Landing is a write that reached a host: its memory, or its interrupt
// controller (an MSI), whether or not the host then takes it.
type Landing struct {
	Host    string        // the host
	From    string        // the O-NIC whose link brought it
	At      time.Duration // simulated time
	Address uint64
	Bytes   int
	Data    []byte // its payload, if the TLP carried one (the emulator's own traffic carries none)
}

// OnLanded makes the cluster call f with each write that reaches a host,
// in the order they arrive: what onic emu run --compare holds two runs
// to. f must not keep Data.
func (c *Cluster) OnLanded(f func(Landing)) { c.landed = f }

// land tells the OnLanded function of write m reaching host h.
func (h *hostNode) land(m *msg) {
	c := h.c
	if c.landed == nil || m.t.Kind() != tlp.MWr {
		return
	}
	from := ""
	if m.at != nil {
		from = m.at.cfg.Name
	}
	c.landed(Landing{Host: h.cfg.Name, From: from, At: c.Now(), Address: m.t.Address, Bytes: int(m.t.Length) * 4, Data: m.t.Data})
}
