package cardsim

import (
	"encoding/binary"
	"testing"
	"time"

	"onic/emu/hostif"
	"onic/emu/scenario"
	"onic/kernels"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// TestTaskInterruptAgainstModel: host A's software runs a task on the
// kernel in slot 1 of its O-NIC (FLEET's offload O-NIC, served) with
// MSI-X enabled in the function's capability and the slot's vector in the
// table, first masked, on the model and on the generated card. Both write
// the record, send nothing while the vector is masked and show it pending
// in the PBA (PCIe Base §6.1.4.5), then send the message from the table
// once it is unmasked, clear the bit and count one message sent; and the
// record is in memory when the interrupt arrives. On the card the message
// goes through the PCIe block's MSI-X interface (pcie/pg213.MSIX) and the
// record through its RQ pipeline, longer than the interrupt's.
func TestTaskInterruptAgainstModel(t *testing.T) {
	type outcome struct {
		record, pendingMasked, pendingAfter, sent uint32
		irqsMasked                                int
		irq                                       [2]uint64
		recordAtIRQ                               uint32
	}
	const memBase, recOff, vec, tag = 0x7000_0000, 0x100, 1, 0x2a
	var got [2]outcome
	for k, rtl := range []bool{false, true} {
		cfg := scenario.Offload()
		cfg.Flows = nil // served: the software drives the task
		socket, stop := serve(t, buildOn(t, cfg, rtl))
		c, err := hostif.Dial(socket, hostif.ClientOptions{Host: "A", MemBytes: 1 << 16, MemBase: memBase})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := c.ONICs(0)
		if err != nil {
			t.Fatal(err)
		}
		id := ids[0]
		regs, _ := c.BAR(0, id, pcie.ONICRegBAR)
		win, _ := c.BAR(0, id, pcie.ONICWindowBAR)
		w32 := func(a uint64, v uint32) {
			if err := c.Write32(a, v); err != nil {
				t.Fatal(err)
			}
		}
		r32 := func(a uint64) uint32 {
			v, err := c.Read32(a)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		cap := msixCap(t, c, id) // MSI-X on in the capability
		mc, _, _ := c.ConfigRead(0, id, cap+2, 2)
		if _, err := c.ConfigWrite(0, id, cap+2, 2, mc|0x8000); err != nil {
			t.Fatal(err)
		}
		entry := regs + pcie.ONICMSIXTableOffset + 16*vec
		w32(entry, 0xFEE0_1000)
		w32(entry+4, 0)
		w32(entry+8, 0x41)
		w32(entry+12, 1) // masked
		page := regs + kernels.TaskPage(1)
		w32(page+kernels.TaskCtrl, 3)
		w32(page+kernels.TaskCplLo, memBase+recOff)
		w32(page+kernels.TaskCplHi, 0)
		w32(page+kernels.TaskArg0, 4096)
		w32(page+kernels.TaskDoorbell, tag)
		data := make([]byte, 4096)
		for i := range data {
			data[i] = byte(i*7 + 3)
		}
		for o := 0; o < len(data); o += 256 {
			if err := c.Write(win+uint64(o), data[o:o+256]); err != nil {
				t.Fatal(err)
			}
		}
		o := &got[k]
		mem := c.Mem()
		for i := 0; i < 200 && binary.LittleEndian.Uint32(mem[recOff:]) == 0; i++ {
			if _, err := c.Advance(5 * time.Microsecond); err != nil {
				t.Fatal(err)
			}
		}
		o.record = binary.LittleEndian.Uint32(mem[recOff:])
		irqs, _, err := c.WaitIRQ(20 * time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		o.irqsMasked = len(irqs)
		o.pendingMasked = r32(regs + pcie.ONICMSIXPBAOffset)
		w32(entry+12, 0) // unmasked
		irqs, _, err = c.WaitIRQ(time.Millisecond)
		if err != nil || len(irqs) != 1 {
			t.Fatalf("rtl %v: %d interrupts after unmasking (%v)", rtl, len(irqs), err)
		}
		o.irq = [2]uint64{irqs[0].Addr, uint64(irqs[0].Data)}
		o.recordAtIRQ = binary.LittleEndian.Uint32(mem[recOff:])
		o.pendingAfter = r32(regs + pcie.ONICMSIXPBAOffset)
		// (The offload O-NIC's four slots hold one-input kernels or none;
		// its ports hold what waits for a dark circuit.)
		for i, n := range pmgr.CardCounters(make([]bool, 4), true) {
			if n == "msix_sent" {
				o.sent = r32(regs + pcie.ONICCountersOffset + 4*uint64(i))
			}
		}
		c.Close()
		stop()
	}
	want := outcome{record: kernels.TaskDone | tag, pendingMasked: 1 << vec, irq: [2]uint64{0xFEE0_1000, 0x41},
		recordAtIRQ: kernels.TaskDone | tag, sent: 1}
	for k, o := range got {
		if o != want {
			t.Errorf("%s: %+v, want %+v", []string{"model", "card"}[k], o, want)
		}
	}
}

// TestLinkInterruptAgainstModel: on the two-party cluster served, host
// A's O-NIC's port A comes up (its circuit is lit from the start) and its
// link vector (pcie.ONICMSIXLinkVector) is pending, masked as every
// vector is at reset; with MSI-X enabled and the vector unmasked the
// message comes, on the model and on the card alike.
func TestLinkInterruptAgainstModel(t *testing.T) {
	type outcome struct {
		pending uint32
		irq     [2]uint64
	}
	var got [2]outcome
	for k, rtl := range []bool{false, true} {
		socket, stop := serve(t, buildOn(t, scenario.HostInterface(), rtl))
		c, err := hostif.Dial(socket, hostif.ClientOptions{Host: "A"})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := c.ONICs(0)
		if err != nil {
			t.Fatal(err)
		}
		id := ids[0]
		regs, _ := c.BAR(0, id, pcie.ONICRegBAR)
		if _, err := c.Advance(100 * time.Microsecond); err != nil { // the link trains
			t.Fatal(err)
		}
		o := &got[k]
		if o.pending, err = c.Read32(regs + pcie.ONICMSIXPBAOffset); err != nil {
			t.Fatal(err)
		}
		cap := msixCap(t, c, id)
		mc, _, _ := c.ConfigRead(0, id, cap+2, 2)
		if _, err := c.ConfigWrite(0, id, cap+2, 2, mc|0x8000); err != nil {
			t.Fatal(err)
		}
		entry := regs + pcie.ONICMSIXTableOffset + 16*pcie.ONICMSIXLinkVector
		for i, v := range []uint32{0xFEE0_2000, 0, 0x77, 0} {
			if err := c.Write32(entry+4*uint64(i), v); err != nil {
				t.Fatal(err)
			}
		}
		irqs, _, err := c.WaitIRQ(100 * time.Microsecond)
		if err != nil || len(irqs) != 1 {
			t.Fatalf("rtl %v: %d interrupts (%v)", rtl, len(irqs), err)
		}
		o.irq = [2]uint64{irqs[0].Addr, uint64(irqs[0].Data)}
		c.Close()
		stop()
	}
	if got[0] != got[1] || got[0].pending&(1<<pcie.ONICMSIXLinkVector) == 0 || got[0].irq != [2]uint64{0xFEE0_2000, 0x77} {
		t.Errorf("model %+v, card %+v: want port A's link vector pending, then its message", got[0], got[1])
	}
}

// msixCap is the offset of the O-NIC's MSI-X capability (ID 0x11), found
// from the Capabilities Pointer.
func msixCap(t *testing.T, c *hostif.Client, id tlp.ID) int {
	t.Helper()
	ptr, _, err := c.ConfigRead(0, id, 0x34, 1)
	if err != nil {
		t.Fatal(err)
	}
	for off, n := int(ptr)&0xFC, 0; off >= 0x40 && n < 48; n++ {
		capID, _, _ := c.ConfigRead(0, id, off, 1)
		if capID == pcie.CapMSIX {
			return off
		}
		next, _, _ := c.ConfigRead(0, id, off+1, 1)
		off = int(next) & 0xFC
	}
	t.Fatal("no MSI-X capability")
	return 0
}
