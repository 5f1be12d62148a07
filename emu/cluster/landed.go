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

// Settled is a request of a flow ending: the flow, its number among the
// flow's requests in issue order (the same in every run of the scenario,
// whatever the timing: a transfer's requests are numbered in a row), how
// it ended and why, and when.
type Settled struct {
	Flow    string
	Request int
	Outcome Outcome
	Reason  string // empty when delivered
	At      time.Duration
}

// OnSettled makes the cluster call f with each request of a flow as it
// settles (its outcome in the accounting), in order: how a test holds
// two runs of a scenario — on the model and on the cards — to ending the
// same requests the same way.
func (c *Cluster) OnSettled(f func(Settled)) { c.settled = f }

// tellSettled tells the OnSettled function of request rec ending.
func (c *Cluster) tellSettled(rec *record, why string) {
	if rec.outcome == Delivered {
		why = ""
	}
	c.settled(Settled{Flow: c.flows[rec.flow].cfg.Name, Request: int(rec.n), Outcome: rec.outcome, Reason: why, At: c.Now()})
}
