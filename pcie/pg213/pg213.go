// Package pg213 models the user-side descriptors of AMD's UltraScale+
// integrated block for PCI Express (PCIE4, product guide PG213: the
// completer request, completer completion, requester request and
// requester completion descriptor formats): what the block hands the user
// logic on its completer request (CQ) and requester completion (RC)
// interfaces and what it takes on its completer completion (CC) and
// requester request (RQ) interfaces, converted to and from onic's TLPs.
//
// It is written from the product guide's field tables, not from any RTL,
// so the RTL adapter between the block and the PCIe manager can be held to
// it, and the emulator's O-NIC can use it to put the same interface in
// front of its manager.
//
// Descriptors are little-endian bit vectors, as on the AXI4-Stream data
// bus: descriptor bit i is bit i%8 of byte i/8 (m_axis_cq_tdata[127:0] of
// a request's first beat; s_axis_cc_tdata[95:0] of a completion's). The
// 512-bit interface at 250 MHz (Gen3 x16) carries one packet per beat
// sequence with straddling off, which this model assumes.
package pg213

import (
	"encoding/binary"
	"fmt"

	"onic/tlp"
)

// Request types of the CQ descriptor (PG213, "Transaction Types").
const (
	ReqMemRead    = 0b0000
	ReqMemWrite   = 0b0001
	ReqIORead     = 0b0010
	ReqIOWrite    = 0b0011
	ReqFetchAdd   = 0b0100
	ReqSwap       = 0b0101
	ReqCAS        = 0b0110
	ReqLockedRead = 0b0111
)

// reqKinds maps the request types this model converts to TLP kinds;
// configuration requests and messages, which the block in endpoint mode
// handles itself or delivers in other descriptor formats, are not among
// them.
var reqKinds = map[uint64]tlp.Kind{
	ReqMemRead: tlp.MRd, ReqMemWrite: tlp.MWr, ReqIORead: tlp.IORd, ReqIOWrite: tlp.IOWr,
	ReqFetchAdd: tlp.FetchAdd, ReqSwap: tlp.Swap, ReqCAS: tlp.CAS, ReqLockedRead: tlp.MRdLk,
}

// RequestKind returns the TLP kind of request type code, and false for a
// code this model does not convert.
func RequestKind(code uint64) (tlp.Kind, bool) {
	k, ok := reqKinds[code]
	return k, ok
}

// reqCodes is reqKinds the other way round.
var reqCodes = func() map[tlp.Kind]uint64 {
	m := map[tlp.Kind]uint64{}
	for code, k := range reqKinds {
		m[k] = code
	}
	return m
}()

// bits is a little-endian bit vector of up to 128 bits.
type bits [2]uint64

func (b *bits) get(f Field) uint64 {
	lo, w := f.Lo, f.W
	var v uint64
	for i := range w {
		v |= (b[(lo+i)/64] >> ((lo + i) % 64) & 1) << i
	}
	return v
}

func (b *bits) set(f Field, v uint64) {
	lo, w := f.Lo, f.W
	for i := range w {
		k := lo + i
		b[k/64] = b[k/64]&^(1<<(k%64)) | (v>>i&1)<<(k%64)
	}
}

func (b *bits) bytes(n int) []byte {
	out := make([]byte, 16)
	binary.LittleEndian.PutUint64(out, b[0])
	binary.LittleEndian.PutUint64(out[8:], b[1])
	return out[:n]
}

func fromBytes(d []byte) bits {
	var full [16]byte
	copy(full[:], d)
	return bits{binary.LittleEndian.Uint64(full[:]), binary.LittleEndian.Uint64(full[8:])}
}

// CQ is a completer request as the block delivers it: the 16-byte
// descriptor, the byte enables from m_axis_cq_tuser (first_be, last_be),
// and the payload that follows the descriptor.
type CQ struct {
	Descriptor      [16]byte
	FirstBE, LastBE uint8
	Payload         []byte
}

// BAR returns the BAR ID and aperture (log2 of the BAR's size) the block
// matched the request's address against.
func (c *CQ) BAR() (id, aperture int) {
	b := fromBytes(c.Descriptor[:])
	return int(b.get(ReqBARID)), int(b.get(ReqBARAperture))
}

// TargetFunction returns the function the request targets.
func (c *CQ) TargetFunction() uint8 {
	b := fromBytes(c.Descriptor[:])
	return uint8(b.get(ReqTargetFn))
}

// TLP returns the request as a TLP. The block does not pass the 3 or 4 DW
// header form, so an address below 4 GiB gives the 3 DW form, as a
// requester must use (PCIe Base Specification §2.2.4.1). It fails on a
// request type it does not convert, or a payload whose length does not
// match the Dword count.
func (c *CQ) TLP() (tlp.TLP, error) {
	t, err := decodeRequest("CQ", fromBytes(c.Descriptor[:]), c.Payload)
	if err != nil {
		return tlp.TLP{}, err
	}
	t.FirstBE, t.LastBE = c.FirstBE&15, c.LastBE&15
	return t, nil
}

// ToCQ is what the block delivers on CQ for request t, matched to BAR id
// of the given aperture, for target function fn.
func ToCQ(t *tlp.TLP, bar, aperture int, fn uint8) (CQ, error) {
	b, err := encodeRequest("CQ", t)
	if err != nil {
		return CQ{}, err
	}
	b.set(ReqTargetFn, uint64(fn))
	b.set(ReqBARID, uint64(bar))
	b.set(ReqBARAperture, uint64(aperture))
	var c CQ
	copy(c.Descriptor[:], b.bytes(16))
	c.FirstBE, c.LastBE, c.Payload = t.FirstBE, t.LastBE, t.Data
	return c, nil
}

// encodeRequest sets the fields the CQ and RQ descriptors share (address,
// AT, Dword count, request type, requester ID, tag, TC, attributes) for
// request t, on interface iface.
func encodeRequest(iface string, t *tlp.TLP) (bits, error) {
	rt, ok := reqCodes[t.Kind()]
	if !ok {
		return bits{}, fmt.Errorf("pg213: a %s is not carried as a memory, I/O or atomic %s request", t.Kind(), iface)
	}
	if t.Tag > 0xFF {
		return bits{}, fmt.Errorf("pg213: tag %#x does not fit the %s descriptor's 8 bits", t.Tag, iface)
	}
	var b bits
	b.set(ReqAT, uint64(t.AT))
	b.set(ReqAddress, t.Address>>2)
	b.set(ReqDWCount, uint64(t.Length))
	b.set(ReqType, rt)
	b.set(ReqRequesterID, uint64(t.RequesterID))
	b.set(ReqTag, uint64(t.Tag))
	b.set(ReqTC, uint64(t.TC))
	b.set(ReqAttr, uint64(t.Attr))
	return b, nil
}

// decodeRequest is the request the shared fields of a CQ or RQ
// descriptor b describe, with payload; byte enables are the caller's.
func decodeRequest(iface string, b bits, payload []byte) (tlp.TLP, error) {
	rt := b.get(ReqType)
	k, ok := reqKinds[rt]
	if !ok {
		return tlp.TLP{}, fmt.Errorf("pg213: %s request type %04b is not a memory, I/O or atomic request", iface, rt)
	}
	addr := b.get(ReqAddress) << 2
	dw := b.get(ReqDWCount)
	if dw < 1 || dw > 1024 {
		return tlp.TLP{}, fmt.Errorf("pg213: %s Dword count %d is outside 1-1024", iface, dw)
	}
	switch {
	case k.HasData() && len(payload) != int(dw)*4:
		return tlp.TLP{}, fmt.Errorf("pg213: %s %s with Dword count %d carries %d payload bytes", iface, k, dw, len(payload))
	case !k.HasData() && len(payload) != 0:
		return tlp.TLP{}, fmt.Errorf("pg213: %s %s carries %d payload bytes", iface, k, len(payload))
	}
	f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
	t := tlp.TLP{
		Fmt: f, Type: typ, TC: uint8(b.get(ReqTC)), Attr: tlp.Attr(b.get(ReqAttr)),
		AT: uint8(b.get(ReqAT)), Length: uint16(dw), Tag: uint16(b.get(ReqTag)),
		RequesterID: tlp.ID(b.get(ReqRequesterID)), Address: addr,
	}
	if k.HasData() {
		t.Data = payload
	}
	return t, nil
}

// CC is a completion as the user logic hands it to the block: the 12-byte
// descriptor and the payload that follows it.
type CC struct {
	Descriptor [12]byte
	Payload    []byte
}

// ToCC is the CC packet for completion t. The completer ID is sent with
// Completer ID Enable clear (the block fills in its own, as an endpoint
// must), unless useID is set.
func ToCC(t *tlp.TLP, useID bool) (CC, error) {
	b, err := encodeCompletion("CC", t)
	if err != nil {
		return CC{}, err
	}
	b.set(CplLowerAddress, uint64(t.LowerAddress))
	b.set(CplAT, uint64(t.AT))
	if useID {
		b.set(CplIDEnable, 1)
	}
	var c CC
	copy(c.Descriptor[:], b.bytes(12))
	c.Payload = t.Data
	return c, nil
}

// TLP returns the completion the block sends for c, completer self
// unless the descriptor enables its own completer ID.
func (c *CC) TLP(self tlp.ID) (tlp.TLP, error) {
	b := fromBytes(c.Descriptor[:])
	t, err := decodeCompletion("CC", b, c.Payload)
	if err != nil {
		return tlp.TLP{}, err
	}
	if b.get(CplIDEnable) == 0 {
		t.CompleterID = self
	}
	t.AT = uint8(b.get(CplAT))
	return t, nil
}

// encodeCompletion sets the fields the CC and RC descriptors share (byte
// count, locked, Dword count, status, poisoned, requester and completer
// IDs, tag, TC, attributes) for completion t, on interface iface.
func encodeCompletion(iface string, t *tlp.TLP) (bits, error) {
	if t.Kind().Class() != tlp.ClassCompletion {
		return bits{}, fmt.Errorf("pg213: a %s is not a completion", t.Kind())
	}
	if t.Tag > 0xFF {
		return bits{}, fmt.Errorf("pg213: tag %#x does not fit the %s descriptor's 8 bits", t.Tag, iface)
	}
	var b bits
	b.set(CplByteCount, uint64(t.ByteCount)) // 13 bits: 4096 is written as is
	if t.Kind() == tlp.CplLk || t.Kind() == tlp.CplDLk {
		b.set(CplLocked, 1)
	}
	if t.Kind().HasData() {
		b.set(CplDWCount, uint64(t.Length))
	}
	b.set(CplStatus, uint64(t.Status))
	if t.EP {
		b.set(CplPoisoned, 1)
	}
	b.set(CplRequesterID, uint64(t.RequesterID))
	b.set(CplTag, uint64(t.Tag))
	b.set(CplCompleterID, uint64(t.CompleterID))
	b.set(CplTC, uint64(t.TC))
	b.set(CplAttr, uint64(t.Attr))
	return b, nil
}

// decodeCompletion is the completion the shared fields of a CC or RC
// descriptor b describe, with payload, its lower address the 7 bits the
// TLP carries.
func decodeCompletion(iface string, b bits, payload []byte) (tlp.TLP, error) {
	dw := b.get(CplDWCount)
	locked := b.get(CplLocked) == 1
	k := tlp.Cpl
	switch {
	case dw > 0 && locked:
		k = tlp.CplDLk
	case dw > 0:
		k = tlp.CplD
	case locked:
		k = tlp.CplLk
	}
	if dw > 1024 || len(payload) != int(dw)*4 {
		return tlp.TLP{}, fmt.Errorf("pg213: %s Dword count %d with %d payload bytes", iface, dw, len(payload))
	}
	bc := b.get(CplByteCount)
	if bc < 1 || bc > 4096 {
		return tlp.TLP{}, fmt.Errorf("pg213: %s byte count %d is outside 1-4096", iface, bc)
	}
	f, typ, _ := tlp.FmtType(k, false, 0)
	t := tlp.TLP{
		Fmt: f, Type: typ, TC: uint8(b.get(CplTC)), Attr: tlp.Attr(b.get(CplAttr)),
		EP: b.get(CplPoisoned) == 1, Tag: uint16(b.get(CplTag)), RequesterID: tlp.ID(b.get(CplRequesterID)),
		CompleterID: tlp.ID(b.get(CplCompleterID)), Status: tlp.Status(b.get(CplStatus)),
		ByteCount: uint16(bc), LowerAddress: uint8(b.get(CplLowerAddress)),
	}
	if dw > 0 {
		t.Length, t.Data = uint16(dw), payload
	}
	return t, nil
}
