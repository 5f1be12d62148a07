package msix

import (
	"encoding/binary"
	"testing"

	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/tlp"
)

// bench is onic_msix with what surrounds it on the card, in Go: the
// register block's table (a DW read a cycle after its address, the Mask
// Bits), the PCIe block's MSI-X interface (pg213.MSIX) and its transmit
// pipeline, which returns a slot write's sequence number delay cycles
// after the write entered the host path.
type bench struct {
	t       *testing.T
	s       *sim.Sim
	table   [Vectors * 4]uint32
	masked  uint64
	rdData  uint32
	block   pg213.MSIX
	fn      pg213.FunctionState // the block's view
	cfgEn   bool                // what the card is shown (normally fn's)
	writes  []int               // cycles at which slot writes' numbers come back
	delay   int
	cycle   int
	sent    []tlp.TLP
	sentAt  []int
	signals int
	event   uint64 // the next cycle's event pulses
}

func newBench(t *testing.T, slots, delay int) *bench {
	m, err := Module(slots, 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, s: s, masked: ^uint64(0), delay: delay, fn: pg213.FunctionState{Enable: true, BusMaster: true}, cfgEn: true}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	return b
}

func (b *bench) set(name string, v uint64) {
	if err := b.s.Set(name, v); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) get(name string) uint64 {
	v, err := b.s.Get(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// entry sets vector v's table entry and Mask Bit.
func (b *bench) entry(v int, addr uint64, data uint32, masked bool) {
	b.table[4*v], b.table[4*v+1], b.table[4*v+2] = uint32(addr), uint32(addr>>32), data
	if masked {
		b.masked |= 1 << v
	} else {
		b.masked &^= 1 << v
	}
}

// step runs a cycle with the slots' irq_valid raise and, if posted, a
// slot write entering the host path. It returns irq_ready.
func (b *bench) step(raise uint64, posted bool) uint64 {
	b.set("irq_valid", raise)
	b.set("event", b.event)
	b.event = 0
	b.set("host_posted", b2u(posted))
	if posted {
		b.writes = append(b.writes, b.cycle+b.delay)
	}
	back := len(b.writes) > 0 && b.writes[0] <= b.cycle
	if back {
		b.writes = b.writes[1:]
	}
	b.set("pcie_rq_seq_num0", SlotSeq)
	b.set("pcie_rq_seq_num_vld0", b2u(back))
	b.set("cfg_interrupt_msix_enable", b2u(b.cfgEn))
	b.set("cfg_interrupt_msix_mask", b2u(b.fn.Mask))
	b.set("cfg_function_status", 0x6)
	b.set("table_masked", b.masked)
	b.set("table_rd_data", uint64(b.rdData))
	r := b.block.Cycle(tlp.NewID(1, 0, 0))
	b.set("cfg_interrupt_msi_sent", b2u(r.Sent))
	b.set("cfg_interrupt_msi_fail", b2u(r.Fail))
	if r.Message != nil {
		b.sent, b.sentAt = append(b.sent, *r.Message), append(b.sentAt, b.cycle)
	}
	b.s.Settle()
	if b.get("cfg_interrupt_msix_int") == 1 {
		b.signals++
		req := pg213.MSIXRequest{Address: b.get("cfg_interrupt_msix_address"), Data: uint32(b.get("cfg_interrupt_msix_data")),
			Function: uint8(b.get("cfg_interrupt_msi_function_number"))}
		if err := b.block.Signal(req, b.fn); err != nil {
			b.t.Fatalf("cycle %d: %v", b.cycle, err)
		}
	}
	if b.get("table_rd_en") == 1 {
		b.rdData = b.table[b.get("table_rd_addr")]
	}
	ready := b.get("irq_ready")
	b.s.Step()
	b.cycle++
	return ready
}

func (b *bench) run(n int) {
	for range n {
		b.step(0, false)
	}
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// TestFence: a slot's interrupt waits until the block has returned the
// sequence number of every slot write that entered the host path before
// it was raised (PG213's ordering of an interrupt after the write it
// announces), then leaves with its table entry's address and data.
func TestFence(t *testing.T) {
	for _, delay := range []int{1, 5, 40, 120} {
		b := newBench(t, 2, delay)
		b.entry(1, 0xFEE0_2000, 0x51, false)
		b.step(0, true) // slot 1's record enters the host path
		b.step(0, true) // and another slot's write
		back := b.cycle - 1 + delay
		if b.step(0b10, false)&0b10 == 0 {
			t.Fatal("slot 1's interrupt not taken")
		}
		b.step(0, true) // a write after the interrupt: not waited for
		b.run(delay + 40)
		if len(b.sent) != 1 {
			t.Fatalf("delay %d: %d messages, want 1", delay, len(b.sent))
		}
		m := b.sent[0]
		if m.Address != 0xFEE0_2000 || binary.LittleEndian.Uint32(m.Data) != 0x51 {
			t.Errorf("delay %d: message %v", delay, m)
		}
		if b.sentAt[0] <= back+pg213.MSIXLatency {
			t.Errorf("delay %d: the message left at cycle %d, before the write returned at %d had been past its latency", delay, b.sentAt[0], back)
		}
		if b.sentAt[0] > back+delay+20 {
			t.Errorf("delay %d: the message waited until cycle %d for the write returned at %d (and the one after it?)", delay, b.sentAt[0], back)
		}
		if got := b.get("sent"); got != 1 || b.get("pending") != 0 {
			t.Errorf("delay %d: sent %d, pending %#x", delay, got, b.get("pending"))
		}
	}
}

// TestPendingAndMasks holds the controller to PCIe Base §6.1.4.5: a
// vector that fires while the function is disabled or masked, or while
// its own Mask Bit is set, is pending (PBA) and sent when that ends;
// vectors go lowest first; a message the block fails is pending again.
func TestPendingAndMasks(t *testing.T) {
	b := newBench(t, 3, 2)
	for v := range 3 {
		b.entry(v, 0xFEE0_1000+uint64(v)*16, uint32(0x40+v), false)
	}
	b.cfgEn, b.fn.Enable = false, false
	b.step(0b111, false)
	b.run(50)
	if len(b.sent) != 0 || b.get("pending") != 0b111 || b.signals != 0 {
		t.Fatalf("disabled: %d messages, pending %#x, %d signals", len(b.sent), b.get("pending"), b.signals)
	}
	b.masked |= 1 << 1 // vector 1 masked
	b.cfgEn, b.fn.Enable = true, true
	b.run(60)
	if len(b.sent) != 2 || b.sent[0].Address != 0xFEE0_1000 || b.sent[1].Address != 0xFEE0_1020 || b.get("pending") != 0b010 {
		t.Fatalf("enabled: %v, pending %#x (want vectors 0 and 2, lowest first, 1 pending)", b.sent, b.get("pending"))
	}
	b.fn.Mask = true // the function masked: nothing goes, even unmasked
	b.masked &^= 1 << 1
	b.run(40)
	if len(b.sent) != 2 {
		t.Fatalf("function masked: %d messages", len(b.sent))
	}
	b.fn.Mask = false
	b.run(40)
	if len(b.sent) != 3 || b.sent[2].Address != 0xFEE0_1010 || b.get("pending") != 0 {
		t.Fatalf("unmasked: %v, pending %#x", b.sent, b.get("pending"))
	}
	// The block fails a message (its view of the function differs for a
	// while): pending again, counted, sent once it may.
	b.fn.Enable = false
	b.step(0b001, false)
	b.run(12)
	if b.get("failed") == 0 || b.get("pending")&1 == 0 {
		t.Fatalf("failed %d, pending %#x", b.get("failed"), b.get("pending"))
	}
	b.fn.Enable = true
	b.run(40)
	if len(b.sent) != 4 || b.get("pending") != 0 || b.get("sent") != 4 {
		t.Fatalf("after the failure: %d messages, pending %#x, sent %d", len(b.sent), b.get("pending"), b.get("sent"))
	}
}

// TestEvents: an event (a port's link changing) fires its vector, 16 on,
// at once — nothing to wait for — pending while masked like any other.
func TestEvents(t *testing.T) {
	b := newBench(t, 2, 50)
	b.entry(pcie.ONICMSIXLinkVector+1, 0xFEE0_3000, 0x61, false)
	b.entry(pcie.ONICMSIXLinkVector, 0xFEE0_3010, 0x60, true)
	b.step(0, true) // a slot write in the host path: events do not wait for it
	b.event = 0b11
	b.run(20)
	if len(b.sent) != 1 || b.sent[0].Address != 0xFEE0_3000 || b.get("pending") != 1<<pcie.ONICMSIXLinkVector {
		t.Fatalf("%v, pending %#x (want port B's vector sent, port A's pending)", b.sent, b.get("pending"))
	}
}

// TestModuleErrors: a controller has up to ONICMSIXLinkVector slots, up
// to the rest of the vectors as events, and one source at least.
func TestModuleErrors(t *testing.T) {
	for _, n := range [][2]int{{0, 0}, {pcie.ONICMSIXLinkVector + 1, 0}, {0, Vectors - pcie.ONICMSIXLinkVector + 1}, {-1, 1}} {
		if _, err := Module(n[0], n[1]); err == nil {
			t.Errorf("%d slots, %d events accepted", n[0], n[1])
		}
	}
}
