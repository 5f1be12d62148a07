package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/pcie"
	"onic/tlp"
)

// Software drives a host from outside the emulator: the software of that
// host (a driver or test program behind the host interface, emu/hostif)
// reads and writes configuration space through the host's enumerated
// hierarchy, accesses device memory (MMIO) with TLPs over the host's
// PCIe links, gives devices a window of DMA-able memory, and hears the
// interrupts devices send. Its accesses are the requests of a flow named
// HOST.software, so they are accounted and timed in the report like any
// other traffic.
//
// A Software and its cluster belong to one goroutine.
type Software struct {
	c   *Cluster
	h   *hostNode
	f   *flowState
	mem []byte // DMA memory at base (a shared mapping)
	// memLen is mem's length as attached (mem is dropped on a fault; the
	// host's memory map is not).
	memLen uint64
	base   uint64
	// reads in flight, by the record of each of their requests.
	reads map[int32]softReq
	// OnRead hears each read finish; OnInterrupt each MSI/MSI-X message.
	// Both run inside the emulator's event loop.
	OnRead      func(ReadResult)
	OnInterrupt func(Interrupt)
	// OnMemFault hears that the DMA memory faulted (the file behind a
	// shared mapping shrank, say): from then on devices no longer touch it.
	// It runs inside the emulator's event loop, once. Faults are caught
	// only on a goroutine that has called debug.SetPanicOnFault(true).
	OnMemFault func(error)
	// OnSettle hears each of the software's requests finish (InFlight
	// has gone down by one), inside the event loop: a host interface
	// holding a posted write for want of credits may issue it.
	OnSettle func()
	// Counters of what went wrong with the software's accesses.
	MasterAborts uint64 // accesses no device claimed
	gone         bool
}

// ReadResult is a finished MMIO read. Data is all-ones when Status is not
// successful, as a CPU sees it.
type ReadResult struct {
	ID     uint64
	Status tlp.Status
	Data   []byte
	// Latency is from issue to the last completion.
	Latency time.Duration
}

// Interrupt is an MSI or MSI-X message a device wrote to the host.
type Interrupt struct {
	At      time.Duration
	Address uint64
	Data    uint32
	From    tlp.ID
}

// softReq is one request of a read: the read and where the request's
// bytes end.
type softReq struct {
	rd  *softRead
	end uint64
}

// softRead is a read being answered.
type softRead struct {
	id     uint64
	addr   uint64
	data   []byte
	left   int // requests not yet complete
	status tlp.Status
	start  sim.Time
}

// Attach hands host name to software: from now on its accesses come from
// the returned Software. mem is the host's DMA memory, at physical
// address base; device writes there land in mem and device reads come
// from it. With memory given, it is all the memory devices may reach: a
// device's write or read outside it is an Unsupported Request at the root
// complex (a master abort: the write is dropped, the read completes with
// UR), counted in the host's report. Without memory the host takes every
// write and answers reads with zeros, as for the emulator's own traffic,
// which carries no data. base and mem may not overlap the MSI window
// (0xFEE00000, 1 MiB), where writes are interrupts. A host has one
// software at a time.
func (c *Cluster) Attach(name string, base uint64, mem []byte) (*Software, error) {
	for _, h := range c.hosts {
		if h.cfg.Name != name {
			continue
		}
		if h.soft != nil {
			return nil, fmt.Errorf("host %s: already driven by other software", name)
		}
		if base+uint64(len(mem)) < base {
			return nil, fmt.Errorf("host %s: memory at %#x of %d bytes wraps", name, base, len(mem))
		}
		if end := base + uint64(len(mem)); len(mem) > 0 && base < msiBase+msiSize && msiBase < end {
			return nil, fmt.Errorf("host %s: memory at %#x-%#x overlaps the MSI window %#x-%#x, where writes are interrupts",
				name, base, end-1, uint64(msiBase), uint64(msiBase+msiSize-1))
		}
		s := &Software{c: c, h: h, mem: mem, memLen: uint64(len(mem)), base: base, reads: map[int32]softReq{}}
		s.f = c.softFlow(h)
		h.soft = s
		return s, nil
	}
	return nil, fmt.Errorf("host %q: not in the topology", name)
}

// softFlow is host h's software flow, made the first time.
func (c *Cluster) softFlow(h *hostNode) *flowState {
	for _, f := range c.flows {
		if f.host == h && f.soft {
			return f
		}
	}
	f := &flowState{c: c, idx: len(c.flows), cfg: scenario.FlowConfig{Name: h.cfg.Name + ".software", Op: "software"}, host: h, soft: true, delivered: make([]uint64, TraceBuckets+1)}
	c.flows = append(c.flows, f)
	return f
}

// Detach releases the host: requests in flight finish and are accounted
// as usual, but the software hears no more of them, and devices no
// longer touch its memory.
func (s *Software) Detach() {
	if s.gone {
		return
	}
	s.gone = true
	s.h.soft = nil
	s.mem = nil
	for r := range s.reads {
		delete(s.reads, r)
	}
}

// Host is the host's name.
func (s *Software) Host() string { return s.h.cfg.Name }

// Segments is the number of PCI segments (one per CPU's root complex).
func (s *Software) Segments() int { return len(s.h.hiers) }

// errDetached is the error of any call after Detach.
var errDetached = errors.New("the software has detached from its host")

// ConfigRead reads size (1, 2 or 4) bytes of configuration register reg
// of function id in PCI segment seg, as the root complex's ECAM does: a
// configuration request routed through the hierarchy. An absent
// function reads all-ones.
func (s *Software) ConfigRead(seg int, id tlp.ID, reg, size int) (uint32, tlp.Status, error) {
	cpl, err := s.config(seg, id, reg, size, 0, false)
	if err != nil {
		return 0, 0, err
	}
	if cpl.Status != tlp.StatusSC || len(cpl.Data) < 4 {
		return 1<<(8*size) - 1, cpl.Status, nil
	}
	v := binary.LittleEndian.Uint32(cpl.Data) >> (8 * (reg & 3))
	if size < 4 {
		v &= 1<<(8*size) - 1
	}
	return v, cpl.Status, nil
}

// ConfigWrite writes size bytes of v to configuration register reg of
// function id. A write that moves an O-NIC's BARs takes effect in its
// manager at once.
func (s *Software) ConfigWrite(seg int, id tlp.ID, reg, size int, v uint32) (tlp.Status, error) {
	cpl, err := s.config(seg, id, reg, size, v, true)
	if err != nil {
		return 0, err
	}
	for _, o := range s.h.onics {
		o.mgr.SyncBARs()
		o.configChanged()
	}
	return cpl.Status, nil
}

func (s *Software) config(seg int, id tlp.ID, reg, size int, v uint32, write bool) (tlp.TLP, error) {
	if s.gone {
		return tlp.TLP{}, errDetached
	}
	if seg < 0 || seg >= len(s.h.hiers) {
		return tlp.TLP{}, fmt.Errorf("segment %d: host %s has %d", seg, s.h.cfg.Name, len(s.h.hiers))
	}
	if (size != 1 && size != 2 && size != 4) || reg < 0 || reg+size > 4096 || reg%size != 0 {
		return tlp.TLP{}, fmt.Errorf("config access of %d bytes at %#x: want 1, 2 or 4 bytes, naturally aligned, below 4096", size, reg)
	}
	kind := tlp.CfgRd1
	if write {
		kind = tlp.CfgWr1
	}
	if id.Bus() == 0 {
		kind -= tlp.CfgRd1 - tlp.CfgRd0
	}
	f, typ, _ := tlp.FmtType(kind, false, 0)
	sh := reg & 3
	req := tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: uint8((1<<size - 1) << sh), CompleterID: id, Register: uint16(reg &^ 3)}
	if write {
		req.Data = binary.LittleEndian.AppendUint32(nil, v<<(8*sh))
	}
	return s.h.hiers[seg].Config(&req)
}

// Write issues a posted write of data at physical address addr now
// (at most 4096 bytes, not crossing a 4 KB boundary), as the CPU's stores
// to device memory: MWr TLPs of at most MPS bytes over the link to the
// O-NIC whose BAR claims addr. An address no device claims is a master
// abort: the write is dropped and counted.
func (s *Software) Write(addr uint64, data []byte) error {
	o, err := s.route(addr, len(data))
	if err != nil || o == nil {
		return err
	}
	s.inject(s.xfer(), o, tlp.MWr, addr, len(data), s.h.cfg.MPS, payload(data))
	return nil
}

// SoftwareOnly makes every host its software, as a host-interface server
// runs them: a device's write into a host with no software attached is
// dropped, named host-without-software in the accounting and counted in
// the host's report (WritesWithoutSoftware), and a read of its memory
// completes with UR — never "delivered" to memory no one holds. A
// scenario with traffic generators (flows) keeps its hosts as they are:
// their generators' traffic lands in hosts whatever software is attached.
func (c *Cluster) SoftwareOnly(on bool) { c.softOnly = on && len(c.cfg.Flows) == 0 }

// InFlight is how many of the software's requests (and its O-NIC's
// writes into its memory on its behalf) are still in the emulator.
func (s *Software) InFlight() int { return s.f.inflight }

// Read issues a read of n bytes at addr now (at most 4096, not crossing
// a 4 KB boundary); OnRead hears it finish with id. A master abort
// finishes at once with status UR and all-ones data.
func (s *Software) Read(id uint64, addr uint64, n int) error {
	o, err := s.route(addr, n)
	if err != nil {
		return err
	}
	rd := &softRead{id: id, addr: addr, data: make([]byte, n), start: s.c.s.Now()}
	if o == nil {
		rd.status = tlp.StatusUR
		s.finish(rd)
		return nil
	}
	xi := s.xfer()
	s.inject(xi, o, tlp.MRd, addr, n, s.h.cfg.MRRS, func(r int32, ch tlp.Chunk) []byte {
		rd.left++
		s.reads[r] = softReq{rd, ch.Addr + uint64(ch.Size)}
		return nil
	})
	return nil
}

// route finds the O-NIC whose BARs claim [addr, addr+n): nil for none
// (a master abort, counted).
func (s *Software) route(addr uint64, n int) (*onicNode, error) {
	if s.gone {
		return nil, errDetached
	}
	if n < 1 || n > 4096 || addr/4096 != (addr+uint64(n)-1)/4096 {
		return nil, fmt.Errorf("access of %d bytes at %#x: want 1 to 4096 bytes within one 4 KB page", n, addr)
	}
	for _, o := range s.h.onics {
		for i := range 6 {
			b, size := o.fn.BARAddress(i), o.fn.SizeBAR(i)
			if size > 0 && b != 0 && addr >= b && addr-b+uint64(n) <= size {
				return o, nil
			}
		}
	}
	s.MasterAborts++
	s.h.masterAborts++ // kept by the host: the report outlives the client
	return nil, nil
}

// xfer starts a transfer of the software flow: one access.
func (s *Software) xfer() int32 { return s.f.begin() }

// inject sends the requests of an access over o's link, each with the
// payload data gives it (told the request's record).
func (s *Software) inject(xi int32, o *onicNode, kind tlp.Kind, addr uint64, size, max int, data func(int32, tlp.Chunk) []byte) {
	s.f.send(xi, reqs{kind: kind, addr: addr, size: size, max: max, st: stPlain, l: o.link, id: s.h.id, host: s.h, data: data})
}

// deviceWrite has O-NIC o write data to this host's memory at addr at
// ready (a task shell's completion record or MSI-X message), accounted
// as a transfer of the software's flow.
func (s *Software) deviceWrite(o *onicNode, addr uint64, data []byte, ready sim.Time) {
	s.f.send(s.xfer(), reqs{kind: tlp.MWr, addr: addr, size: len(data), max: s.h.cfg.MPS, st: stPlain, l: o.link, side: 1, id: o.self, ready: ready, data: payload(data)})
}

// payload gives each write request its bytes of data, in whole DWs.
func payload(data []byte) func(int32, tlp.Chunk) []byte {
	return func(_ int32, ch tlp.Chunk) []byte {
		b := make([]byte, int(ch.LengthDW)*4)
		copy(b[ch.Addr&3:], data[ch.Offset:ch.Offset+ch.Size])
		return b
	}
}

// completion takes a completion m for one of the software's reads, the
// last of its request if done. Call it before the request is settled:
// the record still holds the bytes the request was waiting for.
func (s *Software) completion(m *msg, done bool) {
	q, ok := s.reads[m.rec]
	if !ok {
		return
	}
	rd := q.rd
	if m.t.Status != tlp.StatusSC {
		rd.status = m.t.Status
	} else if m.t.Data != nil {
		// This completion's bytes are the last ByteCount of the request.
		lo := int(m.t.LowerAddress & 3)
		n := min(int(m.t.ByteCount), len(m.t.Data)-lo)
		if off := int(q.end - uint64(m.t.ByteCount) - rd.addr); n > 0 && off >= 0 && off < len(rd.data) {
			copy(rd.data[off:], m.t.Data[lo:lo+n])
		}
	}
	if done {
		s.ended(m.rec, rd)
	}
}

// ended notes that request r of read rd is over; the read finishes with
// its last request.
func (s *Software) ended(r int32, rd *softRead) {
	delete(s.reads, r)
	if rd.left--; rd.left == 0 {
		s.finish(rd)
	}
}

// StatusCompletionTimeout is the status a software read ends with when no
// completion came within its host's completion timeout (PCIe Base §2.8):
// its data is all-ones, as a CPU's load reads then. It is not a
// completion status (those are 3 bits); hostif passes it on as it is.
const StatusCompletionTimeout tlp.Status = 8

// timedOut ends the read request r belongs to, if it is one of the
// software's: its host's completion timeout passed (sweepTags). A
// completion that comes later finds no read and is dropped.
func (s *Software) timedOut(r int32) {
	q, ok := s.reads[r]
	if !ok {
		return
	}
	q.rd.status = StatusCompletionTimeout
	s.ended(r, q.rd)
}

// finish reports a read.
func (s *Software) finish(rd *softRead) {
	if rd.status != tlp.StatusSC {
		for i := range rd.data {
			rd.data[i] = 0xFF
		}
	}
	if s.OnRead != nil {
		s.OnRead(ReadResult{ID: rd.id, Status: rd.status, Data: rd.data, Latency: time.Duration((s.c.s.Now() - rd.start) / sim.Nanosecond)})
	}
}

// inMemory reports whether n bytes at addr lie in the host's memory: the
// DMA memory given at Attach, or anywhere when none was given.
func (s *Software) inMemory(addr uint64, n int) bool {
	if s.memLen == 0 {
		return true
	}
	return addr >= s.base && addr-s.base < s.memLen && uint64(n) <= s.memLen-(addr-s.base)
}

// memWrite puts a device's write into the DMA memory, if it falls there.
func (s *Software) memWrite(t *tlp.TLP) {
	if t.Data == nil || t.Length == 0 || s.mem == nil {
		return
	}
	s.guard(func() {
		// The bytes the byte enables select.
		first, last := t.FirstBE, t.LastBE
		n := int(t.Length)
		for i := 0; i < n*4 && i < len(t.Data); i++ {
			be := uint8(0xF)
			switch {
			case i < 4:
				be = first
			case i >= (n-1)*4 && n > 1:
				be = last
			}
			if be>>(i&3)&1 == 0 {
				continue
			}
			if a := t.Address + uint64(i); a >= s.base && a-s.base < uint64(len(s.mem)) {
				s.mem[a-s.base] = t.Data[i]
			}
		}
	})
}

// memRead is the data of n bytes of host memory at addr: the DMA
// memory's where it lies, zeros elsewhere.
func (s *Software) memRead(addr uint64, n int) []byte {
	b := make([]byte, n)
	if s.mem == nil {
		return b
	}
	s.guard(func() {
		for i := range b {
			if a := addr + uint64(i); a >= s.base && a-s.base < uint64(len(s.mem)) {
				b[i] = s.mem[a-s.base]
			}
		}
	})
	return b
}

// guard runs f, an access to the DMA memory. A memory fault in it (with
// debug.SetPanicOnFault on) ends the memory's use: the access is lost,
// the software hears OnMemFault, and devices no longer touch the memory.
// Any other panic goes on up.
func (s *Software) guard(f func()) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, fault := r.(interface{ Addr() uintptr }); !fault {
			panic(r)
		}
		s.mem = nil
		if s.OnMemFault != nil {
			s.OnMemFault(fmt.Errorf("DMA memory faulted (%v): was its file truncated?", r))
		}
	}()
	f()
}

// interrupt reports an MSI or MSI-X write.
func (s *Software) interrupt(t *tlp.TLP) {
	if s.OnInterrupt == nil {
		return
	}
	var d uint32
	if len(t.Data) >= 4 {
		d = binary.LittleEndian.Uint32(t.Data)
	}
	s.OnInterrupt(Interrupt{At: s.c.Now(), Address: t.Address, Data: d, From: t.RequesterID})
}

// ONICFunction returns the function the host sees for O-NIC name, for
// tests and tools (nil if the host has no such O-NIC).
func (s *Software) ONICFunction(name string) *pcie.Function {
	for _, o := range s.h.onics {
		if o.cfg.Name == name {
			return o.fn
		}
	}
	return nil
}

// completionData is the payload of a completion of read rd that carries
// the last byteCount bytes of it in lengthDW DWs, from the DMA memory.
func (s *Software) completionData(rd *tlp.TLP, byteCount uint16, lengthDW uint16) []byte {
	total, _ := tlp.ReadByteCount(rd.Address, rd.Length, rd.FirstBE, rd.LastBE)
	start := rd.Address + uint64(firstByte(rd.FirstBE)) + uint64(total-int(byteCount))
	b := make([]byte, int(lengthDW)*4)
	lo := int(start & 3)
	copy(b[lo:], s.memRead(start, min(int(byteCount), len(b)-lo)))
	return b
}

// firstByte is the offset in its DW of the first byte a first-DW byte
// enable selects (0 for none).
func firstByte(be uint8) int {
	for i := range 4 {
		if be>>i&1 != 0 {
			return i
		}
	}
	return 0
}

// Stop makes a running Advance return after the current event (for
// callbacks that need the caller to act, such as OnRead).
func (c *Cluster) Stop() { c.s.Stop() }

// Idle reports whether nothing is scheduled: time would pass with
// nothing happening.
func (c *Cluster) Idle() bool { return c.s.Pending() == 0 }
