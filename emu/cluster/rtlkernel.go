package cluster

import (
	"onic/kernels"
	"onic/pcie/ntb"
	"onic/tlp"
)

// A kernel on a card (UseHardware) changes the bytes of the writes it
// takes, and a write is matched to its landing by its bytes (writeKey).
// So when a host write is handed to a card and will meet a kernel on a
// card — in a window of its own card that leads to a kernel slot, or, out
// of one of its ports, in a far card's kernel_in range — the emulator
// computes what the kernel makes of it with the kernel's Go reference
// (kernels.Kernel.Reference, the function the kernel's RTL is proven
// equal to) and waits for those bytes instead: cut into writes no bigger
// than the one that came in, as the slot cuts them. A two-input kernel's
// output is of a pair, the writes from its two sources taken in the order
// they arrive, each side's in order: the emulator pairs them the same
// way, and the pair ends together when their output lands (record.join),
// as in the model.

// kernelHalf is a write waiting for its partner at a two-input kernel.
type kernelHalf struct {
	rec  int32
	data []byte
}

// kernelSide names one input of one card's kernel slot.
type kernelSide struct {
	card, slot int
}

// post waits for a write of key to land, for request rec.
func (h *hw) post(rec int32, key uint64) {
	h.posted[key] = append(h.posted[key], rec)
	h.c.recs[rec].refs++
}

// hwONIC is the O-NIC of card n.
func (c *Cluster) hwONIC(n int) *onicNode {
	for _, o := range c.onics {
		if o.hw == n {
			return o
		}
	}
	return nil
}

// hwKernelWrite handles host write m into BAR bar of card o when it will
// meet a kernel on a card: through a window of o's own to a kernel slot,
// or out of a port whose circuit leads to a card and into its kernel_in.
// It reports whether it did.
func (c *Cluster) hwKernelWrite(o *onicNode, bar int, m *msg) bool {
	var hit ntb.Hit
	o.mgr.Tables().Lookup(bar, m.t.Address-o.fn.BARAddress(bar), o.mgr.PortDown, &hit)
	if !hit.Enabled() {
		return false
	}
	switch hit.Egress.Kind {
	case ntb.EgressKernel:
		return c.kernelIn(o, int(hit.Egress.Slot), 0, m)
	case ntb.EgressPortA, ntb.EgressPortB:
		far := o.ports[portOf(hit.Egress)].circuit
		if far == nil || far.o.hw < 0 {
			return false // (a Go-model O-NIC's kernel takes it as the model's do)
		}
		t := m.t
		t.Address = hit.Translated
		fm := *m
		fm.t = t
		return c.intoKernel(far, &fm)
	}
	return false
}

// intoKernel handles write m arriving at card port pt (its address as it
// arrives) when it falls in one of the card's kernel_in ranges for that
// port; it reports whether it did.
func (c *Cluster) intoKernel(pt *port, m *msg) bool {
	o := pt.o
	from := [2]string{"port-a", "port-b"}[pt.idx]
	for _, ki := range o.cfg.Manager.KernelIn {
		if ki.From == from && m.t.Address >= ki.Base && m.t.Address-ki.Base < ki.Size {
			side := 0
			for _, k := range o.d.Kernels {
				if k.Slot == ki.Slot && k.Inputs == 2 && k.Sources[1] == ingress(pt.idx) {
					side = 1
				}
			}
			return c.kernelIn(o, ki.Slot, side, m)
		}
	}
	return false
}

// kernelIn waits, for write m into input side of the kernel in card o's
// slot, for the writes the kernel makes of it (with its partner's, for a
// two-input kernel, once the partner has come). It reports false when
// the slot holds no library kernel.
func (c *Cluster) kernelIn(o *onicNode, slot, side int, m *msg) bool {
	var lib *kernels.Kernel
	for _, k := range o.d.Kernels {
		if k.Slot == slot {
			lib = k.Library
		}
	}
	if lib == nil || m.rec < 0 {
		return false
	}
	h := c.hw
	data := m.t.Data
	if lib.Inputs == 1 {
		c.kernelOut(lib, m.rec, [][]byte{data})
		return true
	}
	if h.halves == nil {
		h.halves = map[kernelSide]*[2][]kernelHalf{}
	}
	q := h.halves[kernelSide{o.hw, slot}]
	if q == nil {
		q = new([2][]kernelHalf)
		h.halves[kernelSide{o.hw, slot}] = q
	}
	c.recs[m.rec].refs++ // (held while it waits)
	q[side] = append(q[side], kernelHalf{rec: m.rec, data: data})
	for len(q[0]) > 0 && len(q[1]) > 0 {
		a, b := q[0][0], q[1][0]
		q[0], q[1] = q[0][1:], q[1][1:]
		// The pair ends when its output lands: a's record carries it,
		// b's ends with a's (the join keeps b's hold on its record).
		c.recs[a.rec].join = b.rec + 1
		c.kernelOut(lib, a.rec, [][]byte{a.data, b.data})
		c.unref(a.rec)
	}
	return true
}

// kernelOut waits, for request rec, for the writes lib makes of inputs:
// its reference's output in whole DWs, cut into writes no bigger than the
// first input's.
func (c *Cluster) kernelOut(lib *kernels.Kernel, rec int32, inputs [][]byte) {
	out, err := lib.Reference(inputs)
	if err != nil || len(out) == 0 {
		c.hw.post(rec, writeKey(&tlp.TLP{Length: uint16(len(inputs[0]) / 4), Data: inputs[0]})) // (lands as it is, if at all)
		return
	}
	out = append(out, make([]byte, -len(out)&3)...)
	n := 0
	for off := 0; off < len(out); off += len(inputs[0]) {
		piece := out[off:min(off+len(inputs[0]), len(out))]
		c.hw.post(rec, writeKey(&tlp.TLP{Length: uint16(len(piece) / 4), Data: piece}))
		n++
	}
	c.recs[rec].copies += int32(n - 1)
}
