// Package rc is a PCI Express root complex with system memory, written
// from the PCIe Base Specification and kept apart from the emulator's
// host (emu/cluster) on purpose: it is the independent reference the
// O-NIC's model and generated card are held to. It shares no splitting,
// routing or completion code with them; only the TLP codec.
//
// What it does, with the rules it follows:
//
//   - Routes completions by ID (§2.2.9): a completion for a request a
//     device sent goes down the root port whose bus range holds the
//     requester's bus; a requester behind no port cannot be answered (an
//     Unexpected Completion at the root complex, counted).
//   - Completes memory reads of its memory (§2.3.1.1): split at Read
//     Completion Boundaries and never beyond MPS, each completion's Byte
//     Count the bytes left, Lower Address the first byte's address; reads
//     outside memory complete with UR (§2.3.1).
//   - Takes memory writes into memory; writes outside it are dropped and
//     counted (unsupported requests, §2.3.1: no completion for a posted
//     request).
//   - Issues the CPU's reads and writes to device memory (MMIO): writes
//     cut at MPS and at 4 KiB boundaries, reads at MRRS and at 4 KiB
//     (§2.2.7), each read with a tag of its own; it matches completions to
//     them by tag and requester ID, checks each one's Byte Count and Lower
//     Address against what is still owed and its payload against MPS
//     (Unexpected Completion or Malformed TLP otherwise, §2.3.2, §2.2.8),
//     and ends a read with an error status on UR or CA, on a poisoned
//     completion (§2.7.2), or when it times out (§2.8).
//   - Checks every TLP it receives with the codec's strict decoder rules
//     (tlp.Validate) and its payload against MPS: a TLP that breaks a rule
//     is malformed, dropped and counted.
package rc

import (
	"fmt"

	"onic/tlp"
)

// Port is a root port: the buses below it.
type Port struct {
	Secondary, Subordinate uint8
}

// Config is a root complex's configuration.
type Config struct {
	ID    tlp.ID // the root complex's requester ID (its host bridge)
	Ports []Port // root ports, by index
	// MemBase and MemSize are system memory's place in the address space.
	MemBase, MemSize uint64
	// MPS, MRRS and RCB are the sizes its configuration space says
	// (Device Control, Link Control): 128-4096, 128-4096, 64 or 128.
	MPS, MRRS, RCB int
	// Timeout is how many Tick calls a read may wait for its completions
	// (the Completion Timeout, §2.8); 0 never times out.
	Timeout int
	// Fill chooses how it splits a read's completions, both ways
	// §2.3.1.1 allows: false (the default) ends the first completion at
	// the first RCB boundary when the read starts off one, as root
	// complexes that return data a cache line at a time do; true makes
	// every completion as long as MPS allows, each but the last ending on
	// an RCB boundary (what the emulator's hosts do).
	Fill bool
}

// Out is a TLP the root complex sends down root port Port.
type Out struct {
	Port int
	TLP  tlp.TLP
}

// Counts are what went wrong, by kind.
type Counts struct {
	Malformed      uint64 // received TLPs that break a rule of the specification, dropped
	Unexpected     uint64 // completions that match no outstanding read, dropped
	Unroutable     uint64 // completions to send for a requester behind no root port
	Unsupported    uint64 // requests outside memory: writes dropped, reads answered UR
	Poisoned       uint64 // poisoned TLPs received
	TimedOut       uint64 // reads the completion timeout ended
	ErrorCompleted uint64 // reads a completion with an error status ended
}

// Read is a read the CPU issued, as it finishes.
type Read struct {
	ID     int    // as Read returned it
	Data   []byte // the bytes read (nil unless Status is SC)
	Status tlp.Status
	Err    string // why it failed, when it did
}

// read is one read request outstanding.
type read struct {
	id        int
	port      int
	addr      uint64 // of the first byte the request asks for
	data      []byte // where its bytes go
	owed      int    // bytes still to come
	wait      int    // ticks waited
	requestID int    // the CPU read it is part of
}

// cpuRead is a CPU read split into requests.
type cpuRead struct {
	data   []byte
	left   int // requests still outstanding
	status tlp.Status
	err    string
}

// RC is a root complex.
type RC struct {
	cfg  Config
	mem  map[uint64][]byte // 4 KiB pages, by page address
	tags [256]*read
	next uint8
	cpu  map[int]*cpuRead
	nID  int
	done []Read
	Counts
}

// New checks c and makes the root complex.
func New(c Config) (*RC, error) {
	pow2 := func(v, lo, hi int) bool { return v >= lo && v <= hi && v&(v-1) == 0 }
	switch {
	case !pow2(c.MPS, 128, 4096):
		return nil, fmt.Errorf("rc: MPS %d is not a power of two from 128 to 4096", c.MPS)
	case !pow2(c.MRRS, 128, 4096):
		return nil, fmt.Errorf("rc: MRRS %d is not a power of two from 128 to 4096", c.MRRS)
	case c.RCB != 64 && c.RCB != 128:
		return nil, fmt.Errorf("rc: RCB %d is not 64 or 128", c.RCB)
	case c.MemSize == 0 || c.MemBase+c.MemSize < c.MemBase:
		return nil, fmt.Errorf("rc: memory %#x+%#x is empty or wraps", c.MemBase, c.MemSize)
	case len(c.Ports) == 0:
		return nil, fmt.Errorf("rc: no root ports")
	}
	return &RC{cfg: c, mem: map[uint64][]byte{}, cpu: map[int]*cpuRead{}}, nil
}

// inMem reports whether [a, a+n) is system memory.
func (r *RC) inMem(a uint64, n int) bool {
	return a >= r.cfg.MemBase && a-r.cfg.MemBase+uint64(n) <= r.cfg.MemSize
}

// Poke writes b into memory at a (the CPU's own stores).
func (r *RC) Poke(a uint64, b []byte) {
	for i, v := range b {
		p := (a + uint64(i)) &^ 0xFFF
		pg := r.mem[p]
		if pg == nil {
			pg = make([]byte, 4096)
			r.mem[p] = pg
		}
		pg[(a+uint64(i))&0xFFF] = v
	}
}

// Peek reads n bytes of memory at a (never-written bytes read 0).
func (r *RC) Peek(a uint64, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if pg := r.mem[(a+uint64(i))&^0xFFF]; pg != nil {
			b[i] = pg[(a+uint64(i))&0xFFF]
		}
	}
	return b
}

// portOf is the root port whose bus range holds id's bus.
func (r *RC) portOf(id tlp.ID) (int, bool) {
	for i, p := range r.cfg.Ports {
		if b := id.Bus(); b >= p.Secondary && b <= p.Subordinate {
			return i, true
		}
	}
	return 0, false
}

// memReq makes a memory request header for [a, a+n), n at most 4096 and
// not crossing a 4 KiB boundary: the 3-DW form below 4 GiB (§2.2.4.1),
// byte enables for the first and last DW (§2.2.5).
func (r *RC) memReq(k tlp.Kind, a uint64, n int, tag uint16) tlp.TLP {
	first := a &^ 3
	last := (a + uint64(n) - 1) &^ 3
	dws := int((last-first)/4) + 1
	fbe := uint8(0xF<<(a&3)) & 0xF
	lbe := uint8(0xF >> (3 - (a+uint64(n)-1)&3))
	if dws == 1 {
		fbe &= lbe
		lbe = 0
	}
	x := tlp.TLP{RequesterID: r.cfg.ID, Tag: tag, Address: first, Length: uint16(dws & 0x3FF), FirstBE: fbe, LastBE: lbe}
	x.Fmt, x.Type, _ = tlp.FmtType(k, first >= 1<<32, 0)
	return x
}

// Write is the CPU's store of data at a into device memory behind root
// port port: MWr TLPs of at most MPS bytes, none crossing a 4 KiB
// boundary (§2.2.7).
func (r *RC) Write(port int, a uint64, data []byte) []Out {
	var out []Out
	for off := 0; off < len(data); {
		n := min(len(data)-off, r.cfg.MPS-int((a+uint64(off))%uint64(r.cfg.MPS)), 4096-int((a+uint64(off))&0xFFF))
		x := r.memReq(tlp.MWr, a+uint64(off), n, 0)
		x.Data = make([]byte, 4*int(x.Length))
		copy(x.Data[(a+uint64(off))&3:], data[off:off+n])
		out = append(out, Out{port, x})
		off += n
	}
	return out
}

// Read is the CPU's load of n bytes at a from device memory behind root
// port port: MRd TLPs of at most MRRS bytes, none crossing a 4 KiB
// boundary, each with a free tag. It returns the read's ID (Done reports
// it when it finishes) and the requests; ok is false when there are not
// enough free tags (nothing is sent).
func (r *RC) Read(port int, a uint64, n int) (id int, out []Out, ok bool) {
	type piece struct {
		a uint64
		n int
	}
	var ps []piece
	for off := 0; off < n; {
		m := min(n-off, r.cfg.MRRS-int((a+uint64(off))%uint64(r.cfg.MRRS)), 4096-int((a+uint64(off))&0xFFF))
		ps = append(ps, piece{a + uint64(off), m})
		off += m
	}
	free := 0
	for _, t := range r.tags {
		if t == nil {
			free++
		}
	}
	if n <= 0 || free < len(ps) {
		return 0, nil, false
	}
	r.nID++
	id = r.nID
	cr := &cpuRead{data: make([]byte, n), left: len(ps), status: tlp.StatusSC}
	r.cpu[id] = cr
	off := 0
	for _, p := range ps {
		for r.tags[r.next] != nil {
			r.next++
		}
		tag := r.next
		r.next++
		r.tags[tag] = &read{id: int(tag), port: port, addr: p.a, data: cr.data[off : off+p.n], owed: p.n, requestID: id}
		out = append(out, Out{port, r.memReq(tlp.MRd, p.a, p.n, uint16(tag))})
		off += p.n
	}
	return id, out, true
}

// Outstanding is how many read requests wait for completions.
func (r *RC) Outstanding() int {
	n := 0
	for _, t := range r.tags {
		if t != nil {
			n++
		}
	}
	return n
}

// Done returns the CPU reads that have finished since the last call.
func (r *RC) Done() []Read {
	d := r.done
	r.done = nil
	return d
}

// end finishes request tag's part of its CPU read with status.
func (r *RC) end(tag int, status tlp.Status, why string) {
	rd := r.tags[tag]
	r.tags[tag] = nil
	cr := r.cpu[rd.requestID]
	if status != tlp.StatusSC && cr.status == tlp.StatusSC {
		cr.status, cr.err = status, why
	}
	if cr.left--; cr.left == 0 {
		out := Read{ID: rd.requestID, Status: cr.status, Err: cr.err}
		if cr.status == tlp.StatusSC {
			out.Data = cr.data
		}
		r.done = append(r.done, out)
		delete(r.cpu, rd.requestID)
	}
}

// Tick counts one unit of time for the completion timeout.
func (r *RC) Tick() {
	if r.cfg.Timeout == 0 {
		return
	}
	for i, t := range r.tags {
		if t != nil {
			if t.wait++; t.wait > r.cfg.Timeout {
				r.TimedOut++
				r.end(i, tlp.StatusCA, "completion timeout")
			}
		}
	}
}

// Receive takes TLP t arriving from root port port and returns what the
// root complex sends in answer.
func (r *RC) Receive(port int, t *tlp.TLP) []Out {
	if err := t.Validate(); err != nil {
		r.Malformed++
		return nil
	}
	if t.Kind().HasData() && len(t.Data) > r.cfg.MPS {
		r.Malformed++ // §2.2.2: no TLP's payload exceeds the receiver's MPS
		return nil
	}
	if t.EP {
		r.Poisoned++
	}
	switch k := t.Kind(); {
	case k == tlp.MWr:
		if t.EP {
			return nil // §2.7.2: poisoned write data is not written
		}
		a, data := t.Address, t.Data
		lo, hi := beBytes(t)
		if !r.inMem(a+uint64(lo), hi-lo) {
			r.Unsupported++
			return nil
		}
		for i := lo; i < hi; i++ {
			if beOn(t, i) {
				r.Poke(a+uint64(i), data[i:i+1])
			}
		}
		return nil
	case k == tlp.MRd:
		return r.complete(t)
	case k.Class() == tlp.ClassCompletion:
		r.completion(t)
		return nil
	default:
		if k.IsNonPosted() {
			return r.answer(t, tlp.StatusUR, nil, 0, 0)
		}
		r.Unsupported++
		return nil
	}
}

// beBytes is the span of bytes a memory request's byte enables cover,
// as offsets from its DW-aligned address (§2.2.5): from the first
// enabled byte of the first DW to the last enabled byte of the last. A
// zero-length read (one DW, no byte enabled) covers nothing.
func beBytes(t *tlp.TLP) (lo, hi int) {
	dws := int(t.Length)
	if dws == 0 {
		dws = 1024
	}
	last := t.LastBE
	if dws == 1 {
		last = t.FirstBE
	}
	if t.FirstBE == 0 || last == 0 {
		return 0, 0
	}
	for t.FirstBE>>lo&1 == 0 {
		lo++
	}
	top := 3
	for last>>top&1 == 0 {
		top--
	}
	return lo, 4*(dws-1) + top + 1
}

// beOn reports whether byte i of request t is enabled: the first DW's by
// First DW BE, the last's by Last DW BE, every one between.
func beOn(t *tlp.TLP, i int) bool {
	dws := int(t.Length)
	if dws == 0 {
		dws = 1024
	}
	switch {
	case i < 4:
		return t.FirstBE>>i&1 == 1
	case i >= 4*(dws-1):
		return t.LastBE>>(i-4*(dws-1))&1 == 1
	}
	return true
}

// complete answers memory read t from system memory: completions split
// at Read Completion Boundaries and at most MPS each (§2.3.1.1), sent
// down the root port that holds the requester.
func (r *RC) complete(t *tlp.TLP) []Out {
	lo, hi := beBytes(t)
	start := t.Address + uint64(lo)
	n := hi - lo
	if n == 0 {
		// A zero-length read: one completion of one DW, Byte Count 1.
		if !r.inMem(t.Address, 4) {
			return r.answer(t, tlp.StatusUR, nil, 1, uint8(t.Address&0x7F))
		}
		return r.answer(t, tlp.StatusSC, make([]byte, 4), 1, uint8(t.Address&0x7F))
	}
	if !r.inMem(start, n) {
		r.Unsupported++
		return r.answer(t, tlp.StatusUR, nil, n, uint8(start&0x7F))
	}
	var out []Out
	at, left := start, n
	for left > 0 {
		// This completion's data runs from at to the next RCB boundary
		// (the first, unless Fill) or for whole RCBs, at most MPS,
		// DW-aligned.
		limit := at&^uint64(r.cfg.RCB-1) + uint64(r.cfg.MPS)
		switch {
		case r.cfg.Fill:
			// At most MPS from its first DW, to an RCB boundary.
			limit = ((at &^ 3) + uint64(r.cfg.MPS)) &^ uint64(r.cfg.RCB-1)
		case !r.cfg.Fill && at%uint64(r.cfg.RCB) != 0:
			limit = min(limit, at&^uint64(r.cfg.RCB-1)+uint64(r.cfg.RCB))
		}
		if limit-at > uint64(left) {
			limit = at + uint64(left)
		}
		dw0, dwEnd := at&^3, (limit+3)&^3
		data := make([]byte, dwEnd-dw0)
		copy(data[at-dw0:], r.Peek(at, int(limit-at)))
		o := r.answer(t, tlp.StatusSC, data, left, uint8(at&0x7F))
		if o == nil {
			return nil
		}
		out = append(out, o...)
		left -= int(limit - at)
		at = limit
	}
	return out
}

// answer is one completion for request t, routed by its requester ID.
func (r *RC) answer(t *tlp.TLP, status tlp.Status, data []byte, byteCount int, la uint8) []Out {
	port, ok := r.portOf(t.RequesterID)
	if !ok {
		r.Unroutable++
		return nil
	}
	k := tlp.Cpl
	if data != nil {
		k = tlp.CplD
	}
	c := tlp.TLP{RequesterID: t.RequesterID, CompleterID: r.cfg.ID, Tag: t.Tag, TC: t.TC, Attr: t.Attr, Status: status,
		ByteCount: uint16(byteCount & 0xFFF), LowerAddress: la, Data: data, Length: uint16(len(data) / 4 & 0x3FF)}
	c.Fmt, c.Type, _ = tlp.FmtType(k, false, 0)
	return []Out{{port, c}}
}

// completion takes completion c for one of the CPU's reads.
func (r *RC) completion(c *tlp.TLP) {
	if c.RequesterID != r.cfg.ID || c.Tag >= 256 || r.tags[c.Tag] == nil {
		r.Unexpected++
		return
	}
	rd := r.tags[c.Tag]
	if c.Status != tlp.StatusSC {
		r.ErrorCompleted++
		r.end(int(c.Tag), c.Status, fmt.Sprintf("completion status %v", c.Status))
		return
	}
	bc := int(c.ByteCount)
	if bc == 0 {
		bc = 4096
	}
	at := rd.addr + uint64(len(rd.data)-rd.owed) // the next byte owed
	if bc != rd.owed || uint64(c.LowerAddress) != at&0x7F || !c.Kind().HasData() {
		r.Unexpected++ // §2.3.2: it does not match what the read still owes
		return
	}
	if c.EP {
		r.end(int(c.Tag), tlp.StatusCA, "poisoned completion")
		return
	}
	n := min(len(c.Data)-int(at&3), rd.owed)
	if n <= 0 {
		r.Malformed++
		return
	}
	// A completion other than the last must end at an RCB boundary
	// (§2.3.1.1).
	if n < rd.owed && (at+uint64(n))%uint64(r.cfg.RCB) != 0 {
		r.Malformed++
		return
	}
	copy(rd.data[len(rd.data)-rd.owed:], c.Data[at&3:int(at&3)+n])
	rd.owed -= n
	rd.wait = 0
	if rd.owed == 0 {
		r.end(int(c.Tag), tlp.StatusSC, "")
	}
}
