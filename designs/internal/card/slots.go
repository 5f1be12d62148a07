package card

import (
	"fmt"
	"onic/designs/internal/tlpbus"
	"reflect"
	"slices"
	"strings"

	"onic/desc"
	"onic/designs/internal/slot"
	"onic/designs/manager"
	"onic/hdlgen/axil"
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
	"onic/kernels"
	"onic/pcie/ntb"
)

// ingressNames name the slots' input streams, as designs/internal/slot's
// module names them.
var ingressNames = []string{"host", "port_a", "port_b"}

// Slot is one kernel slot of the card: its static module and its
// reconfigurable one (designs/internal/slot).
type Slot struct {
	Config     slot.Config
	Static, RM *ir.Module
}

// SlotsOf builds every kernel slot the manager d's tables have, with the
// resolved kernels ks in theirs (a kernel with no name: an empty slot of
// that shape, as a firmware spec gives it, which any kernel of the shape
// then fills by partial reconfiguration) and the others empty. A slot
// holds only library kernels it supports (slot.Supports): an opaque
// kernel, which the emulator times from configured figures, has no RTL.
func SlotsOf(d *manager.Design, ks []desc.Kernel) ([]Slot, error) {
	tab, err := ntb.Build(d.Config.Manager.Translation, d.Config.BARs)
	if err != nil {
		return nil, err
	}
	base, locals := tab.RID()
	cs := make([]slot.Config, tab.KernelSlots())
	for i := range cs {
		cs[i] = slot.Config{Slot: i, ProxyBase: uint16(base)}
		for _, id := range locals {
			cs[i].Locals = append(cs[i].Locals, uint16(id))
		}
	}
	for _, k := range ks {
		if k.Slot < 0 || k.Slot >= len(cs) {
			return nil, fmt.Errorf("%s.slot: %d is not a kernel slot of the O-NIC (it has %d)", k.Where, k.Slot, len(cs))
		}
		if k.Opaque {
			return nil, fmt.Errorf("%s: %q is an opaque kernel, which the emulator times from cycles and gbps; it has no RTL to put in slot %d", k.Where, k.Name, k.Slot)
		}
		if k.Library != nil {
			if err := slot.Supports(k.Library); err != nil {
				return nil, fmt.Errorf("%s: %v", k.Where, err)
			}
		}
		c := &cs[k.Slot]
		c.Kernel, c.Inputs, c.Egress, c.Translated = k.Library, k.Inputs, slot.EgressOf(k.Egress), k.Translated
		if k.Inputs == 2 {
			c.Sources, c.PairBytes = k.Sources, k.PairBytes
		}
	}
	slots := make([]Slot, len(cs))
	// Slots of one shape share one static module: onic_slot, then
	// onic_slot_2, onic_slot_3, ... for further shapes, in slot order.
	var shapes []slot.Config
	var statics []*ir.Module
	for i, c := range cs {
		rm, err := slot.RM(c)
		if err != nil {
			return nil, fmt.Errorf("slot %d: %v", i, err)
		}
		k := slices.IndexFunc(shapes, func(o slot.Config) bool { return sameShape(o, c) })
		if k < 0 {
			name := "onic_slot"
			if len(shapes) > 0 {
				name = fmt.Sprintf("onic_slot_%d", len(shapes)+1)
			}
			st := slot.Build(c, name)
			if err := st.Check(); err != nil {
				return nil, fmt.Errorf("slot %d: %v", i, err)
			}
			k, shapes, statics = len(shapes), append(shapes, c), append(statics, st)
		}
		slots[i] = Slot{Config: c, Static: statics[k], RM: rm}
	}
	return slots, nil
}

// sameShape says whether slots a and b have the same static logic: all
// of their configuration but their number and kernel.
func sameShape(a, b slot.Config) bool {
	norm := func(c slot.Config) slot.Config {
		if c.Inputs == 0 {
			c.Inputs = 1
			if c.Kernel != nil {
				c.Inputs = c.Kernel.Inputs
			}
		}
		c.Slot, c.Kernel = 0, nil
		return c
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// buildSlots places the kernel slots: ins are each ingress's TLPs for
// the slots (the host's from the manager, port A's and port B's from
// their port pipelines), the slot number on the sideband; slotLite the
// register block's master toward the slots' pages (16-bit BAR offsets),
// whose answer the result's second value is; localBusy says a register
// write may be on its way to a shell. It returns each slot's output
// writes by egress (0 the host, 1 port A, 2 port B), and each slot's
// interrupt (irq_valid, and a wire for irq_ready to be driven).
func buildSlots(m *ir.Module, slots []Slot, self ir.Value, ins []tlpbus.Stream, slotLite axil.Bus, localBusy ir.Value) ([3][]tlpbus.Stream, axil.Answer, []axis.Stream) {
	n := len(slots)
	var outs [3][]axis.Stream
	for i, in := range ins {
		outs[i] = axis.Demux(m, fmt.Sprintf("kernel_demux_%s", ingressNames[i]), axis.Stream{Data: m.Const(1, 0), Valid: in.Valid, Ready: in.Ready},
			m.Slice(in.Side, 0, 8), n)
	}
	var byEgress [3][]tlpbus.Stream
	var selW, selR []ir.Value
	var answers []axil.Answer
	var irqs []axis.Stream
	page := func(a ir.Value, k int) ir.Value {
		lo := kernels.TaskPage(k)
		hi := min(lo+0x2000, manager.RegBARSlotsEnd)
		return m.And(m.Not(m.LtU(a, m.Const(16, lo))), m.LtU(a, m.Const(16, hi)))
	}
	// A page's own offset: TaskPage(k) is 0x1000 past a multiple of
	// 0x2000, so bit 12 flips and the bits above go.
	local := func(a ir.Value) ir.Value {
		return m.Concat(m.Not(m.Slice(a, 12, 1)), m.Slice(a, 0, 12))
	}
	for k, s := range slots {
		p := fmt.Sprintf("slot%d", k)
		sin := map[string]ir.Value{"self_id": self, "local_busy": localBusy}
		for i, in := range ins {
			tlpbus.Into(sin, "s_"+ingressNames[i]+"_tlp_", tlpbus.Stream{Hdr: in.Hdr, Data: in.Data, Keep: in.Keep, SOP: in.SOP, EOP: in.EOP, Valid: outs[i][k].Valid})
		}
		w, r := m.Named(p+"_page_write", page(slotLite.AWAddr, k)), m.Named(p+"_page_read", page(slotLite.ARAddr, k))
		selW, selR = append(selW, w), append(selR, r)
		slotLite.Select(m, w, r, local).Into(sin, "s_axil_")
		ready := m.Wire(p+"_out_ready", 1)
		sin["m_tlp_ready"] = ready
		irqReady := m.Wire(p+"_irq_ready", 1)
		sin["irq_ready"] = irqReady
		out := slot.Join(m, p, s.Static, s.RM, sin)
		for i := range ins {
			m.Assign(outs[i][k].Ready, out["s_"+ingressNames[i]+"_tlp_ready"])
		}
		answers = append(answers, axil.AnswerOf(out, "s_axil_"))
		for _, pt := range s.Static.Ports() {
			if pt.Output && (strings.HasPrefix(pt.Name, "drop_") || pt.Name == "out_malformed") {
				m.Output(p+"_"+pt.Name, out[pt.Name])
			}
		}
		irqs = append(irqs, axis.Stream{Valid: out["irq_valid"], Ready: irqReady})
		o := tlpbus.FromOutputs(m, out, "m_tlp_", "", p+"_to_egress_ready")
		m.Assign(ready, o.Ready)
		byEgress[s.Config.Egress] = append(byEgress[s.Config.Egress], o)
	}
	// Pages no slot has (fewer than four slots) read 0.
	none := m.Named("no_slot_page_write", m.Not(m.Any(selW...)))
	noneR := m.Named("no_slot_page_read", m.Not(m.Any(selR...)))
	answers = append(answers, slotLite.Select(m, none, noneR, nil).Zero(m, "no_slot_axil"))
	selW, selR = append(selW, none), append(selR, noneR)
	return byEgress, axil.Choose(m, selW, selR, answers), irqs
}
