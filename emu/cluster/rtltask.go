package cluster

import (
	"encoding/binary"

	"onic/kernels"
	"onic/pcie"
	"onic/tlp"
)

// A task flow on a card (op task, UseHardware): the model's task shell
// needs no setting up and its flows' register writes carry no values,
// but a card's shell is the generated RTL, driven through its registers
// as a driver drives it (docs/kernels.md). The emulator does what that
// driver would: before the run it registers the kernel (TASK_CTRL's
// enable, and its interrupt enable unless the flow polls), gives the
// shell the completion record's address and, for the interrupt, the
// slot's MSI-X table entry (the host's MSI address, the slot as data,
// unmasked) with MSI-X enabled in the function; each task's ARG0 and
// doorbell writes carry the task's length and tag. What the card writes
// back — the completion record and the MSI-X message, which no host
// write's bytes match — belongs to the task running on it: the flow's
// transfer in flight.

// taskRecordAt is where flow f's task records go (the model's default
// when the flow gives none).
func taskRecordAt(f *flowState) uint64 {
	if f.cfg.Task.Record == 0 {
		return 0x7000_0000
	}
	return f.cfg.Task.Record
}

// hwSetupTasks registers the kernels the task flows of card o run on.
func (c *Cluster) hwSetupTasks(o *onicNode) error {
	h := c.hw
	interrupts := false
	for _, f := range c.flows {
		if f.cfg.Op != "task" || f.onic != o {
			continue
		}
		page := kernels.TaskPage(f.cfg.Task.Slot)
		ctrl := uint32(1)
		if !f.cfg.Task.Poll {
			ctrl |= 2
			interrupts = true
			entry := pcie.ONICMSIXTableOffset + 16*uint64(f.cfg.Task.Slot)
			for i, v := range []uint32{msiBase, 0, uint32(f.cfg.Task.Slot), 0} { // address, data, unmasked
				if err := c.hwRegister(o, entry+4*uint64(i), v); err != nil {
					return err
				}
			}
		}
		rec := taskRecordAt(f)
		for _, w := range []struct {
			off uint64
			v   uint32
		}{{kernels.TaskCplLo, uint32(rec)}, {kernels.TaskCplHi, uint32(rec >> 32)}, {kernels.TaskCtrl, ctrl}} {
			if err := c.hwRegister(o, page+w.off, w.v); err != nil {
				return err
			}
		}
	}
	if interrupts {
		return h.x.SetMSIX(o.hw, true, false)
	}
	return nil
}

// hwRegister writes v to offset off of card o's register BAR, as its
// host's software would.
func (c *Cluster) hwRegister(o *onicNode, off uint64, v uint32) error {
	bar := o.cfg.Manager.RegisterBAR
	a := o.fn.BARAddress(bar) + off
	fm, typ, _ := tlp.FmtType(tlp.MWr, a >= 1<<32, 0)
	t := tlp.TLP{Fmt: fm, Type: typ, RequesterID: o.host.id, Length: 1, FirstBE: 0xF, Address: a,
		Data: binary.LittleEndian.AppendUint32(nil, v)}
	return c.hw.x.Request(o.hw, &t, bar)
}

// taskRegValue gives a task flow's register write m (ARG0 or the
// doorbell, carrying no value) the value a driver writes: the task's
// length, or its tag.
func (c *Cluster) taskRegValue(o *onicNode, m *msg) {
	r := &c.recs[m.rec]
	f := c.flows[r.flow]
	reg := m.t.Address - o.fn.BARAddress(o.cfg.Manager.RegisterBAR) - kernels.TaskPage(f.cfg.Task.Slot)
	v := uint32(f.cfg.Size)
	if reg == kernels.TaskDoorbell {
		v = uint32(f.xfers[r.transfer].n) & 0xFFFF
	}
	m.t.Data = binary.LittleEndian.AppendUint32(nil, v)
}

// taskWrite gives write m, which card o sent its host and no host write's
// bytes matched, to the task of o's it ends, if it is one: the completion
// record or the MSI-X message of the transfer in flight of a task flow
// through o. It is then part of that transfer, as the model's shell's
// are.
func (c *Cluster) taskWrite(o *onicNode, m *msg) {
	for _, f := range c.flows {
		if f.cfg.Op != "task" || f.onic != o || f.inflight == 0 {
			continue
		}
		st := stage(0)
		switch a := m.t.Address; {
		case a >= taskRecordAt(f) && a < taskRecordAt(f)+kernels.TaskRecordBytes:
			st = stTaskRecord
		case a&^0xFFFFF == msiBase && len(m.t.Data) == 4 && binary.LittleEndian.Uint32(m.t.Data) == uint32(f.cfg.Task.Slot):
			st = stMSI
		default:
			continue
		}
		xi := int32(-1)
		for i, x := range f.xfers {
			if x.end == 0 && x.left > 0 && (xi < 0 || x.n < f.xfers[xi].n) {
				xi = int32(i)
			}
		}
		if xi < 0 {
			return
		}
		r := c.newRec(record{flow: int32(f.idx), transfer: xi, n: f.reqs, left: int32(m.t.Length) * 4, stage: st})
		f.reqs++
		f.xfers[xi].left++
		c.attach(m, r)
		return
	}
}
