package pg213

import (
	"fmt"

	"onic/tlp"
)

// RQ descriptor field positions (PG213, requester request descriptor for
// memory, I/O and atomic requests). The request type, address, AT and
// Dword count sit where the CQ descriptor has them.
const (
	rqPoisonLo            = 79
	rqReqIDLo, rqReqIDW   = 80, 16 // requester bus (95:88) over device/function (87:80)
	rqTagLo, rqTagW       = 96, 8
	rqCplIDLo, rqCplIDW   = 104, 16
	rqReqIDEnLo           = 120
	rqTCLo, rqTCW         = 121, 3
	rqAttrLo, rqAttrW     = 124, 3
	rqForceECRCLo         = 127
	rcLowerAddrLo, rcLAW  = 0, 12
	rcErrorLo, rcErrorW   = 12, 4
	rcRequestCompletedLo  = 30
	rcCplIDLo, rcCplIDW   = 72, 16
	rcReqIDLo, rcReqIDW   = 48, 16
	rcByteCountLo, rcBCW  = 16, 13
	rcLockedLo            = 29
	rcDWCountLo, rcDWW    = 32, 11
	rcStatusLo, rcStatusW = 43, 3
	rcPoisonLo            = 46
	rcTagLo, rcTagW       = 64, 8
	rcTCLo, rcTCW         = 89, 3
	rcAttrLo, rcAttrW     = 92, 3
)

// RQ is a request as the user logic hands it to the block on the
// requester request interface: the 16-byte descriptor, the byte enables
// for s_axis_rq_tuser (first_be, last_be), and the payload.
type RQ struct {
	Descriptor      [16]byte
	FirstBE, LastBE uint8
	Payload         []byte
}

// ToRQ is the RQ packet for request t. With useID clear the block puts
// its own requester ID in the TLP (Requester ID Enable clear), as an
// endpoint's requests normally do; with it set, t's requester ID goes on
// the wire, which is what a manager issuing requests for a peer needs.
func ToRQ(t *tlp.TLP, useID bool) (RQ, error) {
	var rt uint64 = 1 << 8
	for r, k := range reqKinds {
		if k == t.Kind() {
			rt = r
		}
	}
	if rt > 15 {
		return RQ{}, fmt.Errorf("pg213: a %s is not sent as a memory, I/O or atomic RQ request", t.Kind())
	}
	if t.Tag > 0xFF {
		return RQ{}, fmt.Errorf("pg213: tag %#x does not fit the RQ descriptor's 8 bits", t.Tag)
	}
	var b bits
	b.set(cqATLo, cqATW, uint64(t.AT))
	b.set(cqAddrLo, cqAddrW, t.Address>>2)
	b.set(cqDWCountLo, cqDWCountW, uint64(t.Length))
	b.set(cqReqTypeLo, cqReqTypeW, rt)
	if t.EP {
		b.set(rqPoisonLo, 1, 1)
	}
	b.set(rqReqIDLo, rqReqIDW, uint64(t.RequesterID))
	b.set(rqTagLo, rqTagW, uint64(t.Tag))
	if useID {
		b.set(rqReqIDEnLo, 1, 1)
	}
	b.set(rqTCLo, rqTCW, uint64(t.TC))
	b.set(rqAttrLo, rqAttrW, uint64(t.Attr))
	var r RQ
	copy(r.Descriptor[:], b.bytes(16))
	r.FirstBE, r.LastBE, r.Payload = t.FirstBE, t.LastBE, t.Data
	return r, nil
}

// TLP returns the request the block sends for r, from requester self
// unless the descriptor enables its own requester ID.
func (r *RQ) TLP(self tlp.ID) (tlp.TLP, error) {
	b := fromBytes(r.Descriptor[:])
	rt := b.get(cqReqTypeLo, cqReqTypeW)
	k, ok := reqKinds[rt]
	if !ok {
		return tlp.TLP{}, fmt.Errorf("pg213: RQ request type %04b is not a memory, I/O or atomic request", rt)
	}
	addr := b.get(cqAddrLo, cqAddrW) << 2
	dw := b.get(cqDWCountLo, cqDWCountW)
	if dw < 1 || dw > 1024 {
		return tlp.TLP{}, fmt.Errorf("pg213: RQ Dword count %d is outside 1-1024", dw)
	}
	id := self
	if b.get(rqReqIDEnLo, 1) == 1 {
		id = tlp.ID(b.get(rqReqIDLo, rqReqIDW))
	}
	f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
	t := tlp.TLP{
		Fmt: f, Type: typ, TC: uint8(b.get(rqTCLo, rqTCW)), Attr: tlp.Attr(b.get(rqAttrLo, rqAttrW)),
		AT: uint8(b.get(cqATLo, cqATW)), EP: b.get(rqPoisonLo, 1) == 1, Length: uint16(dw), Tag: uint16(b.get(rqTagLo, rqTagW)),
		RequesterID: id, FirstBE: r.FirstBE & 15, LastBE: r.LastBE & 15, Address: addr,
	}
	switch {
	case k.HasData() && len(r.Payload) != int(dw)*4:
		return tlp.TLP{}, fmt.Errorf("pg213: RQ %s with Dword count %d carries %d payload bytes", k, dw, len(r.Payload))
	case !k.HasData() && len(r.Payload) != 0:
		return tlp.TLP{}, fmt.Errorf("pg213: RQ %s carries %d payload bytes", k, len(r.Payload))
	case k.HasData():
		t.Data = r.Payload
	}
	return t, nil
}

// RC is a completion as the block delivers it on the requester
// completion interface: the 12-byte descriptor and the payload.
type RC struct {
	Descriptor [12]byte
	Payload    []byte
}

// ToRC is what the block delivers on RC for completion t. address is the
// request's address, from which the block (out of its split-completion
// table) reports 12 low bits where the TLP carries 7; done says whether
// this completion finishes its request.
func ToRC(t *tlp.TLP, address uint64, done bool) (RC, error) {
	if t.Kind().Class() != tlp.ClassCompletion {
		return RC{}, fmt.Errorf("pg213: a %s is not a completion", t.Kind())
	}
	if t.Tag > 0xFF {
		return RC{}, fmt.Errorf("pg213: tag %#x does not fit the RC descriptor's 8 bits", t.Tag)
	}
	var b bits
	b.set(rcLowerAddrLo, rcLAW, address&0xF80|uint64(t.LowerAddress))
	b.set(rcByteCountLo, rcBCW, uint64(t.ByteCount))
	if t.Kind() == tlp.CplLk || t.Kind() == tlp.CplDLk {
		b.set(rcLockedLo, 1, 1)
	}
	if done {
		b.set(rcRequestCompletedLo, 1, 1)
	}
	if t.Kind().HasData() {
		b.set(rcDWCountLo, rcDWW, uint64(t.Length))
	}
	b.set(rcStatusLo, rcStatusW, uint64(t.Status))
	if t.EP {
		b.set(rcPoisonLo, 1, 1)
	}
	b.set(rcReqIDLo, rcReqIDW, uint64(t.RequesterID))
	b.set(rcTagLo, rcTagW, uint64(t.Tag))
	b.set(rcCplIDLo, rcCplIDW, uint64(t.CompleterID))
	b.set(rcTCLo, rcTCW, uint64(t.TC))
	b.set(rcAttrLo, rcAttrW, uint64(t.Attr))
	var r RC
	copy(r.Descriptor[:], b.bytes(12))
	r.Payload = t.Data
	return r, nil
}

// TLP returns the completion r describes, its error code (0 when the
// block found nothing wrong) and whether it finishes its request.
func (r *RC) TLP() (t tlp.TLP, errCode uint8, done bool, err error) {
	b := fromBytes(r.Descriptor[:])
	dw := b.get(rcDWCountLo, rcDWW)
	locked := b.get(rcLockedLo, 1) == 1
	k := tlp.Cpl
	switch {
	case dw > 0 && locked:
		k = tlp.CplDLk
	case dw > 0:
		k = tlp.CplD
	case locked:
		k = tlp.CplLk
	}
	if dw > 1024 || len(r.Payload) != int(dw)*4 {
		return tlp.TLP{}, 0, false, fmt.Errorf("pg213: RC Dword count %d with %d payload bytes", dw, len(r.Payload))
	}
	bc := b.get(rcByteCountLo, rcBCW)
	if bc < 1 || bc > 4096 {
		return tlp.TLP{}, 0, false, fmt.Errorf("pg213: RC byte count %d is outside 1-4096", bc)
	}
	f, typ, _ := tlp.FmtType(k, false, 0)
	t = tlp.TLP{
		Fmt: f, Type: typ, TC: uint8(b.get(rcTCLo, rcTCW)), Attr: tlp.Attr(b.get(rcAttrLo, rcAttrW)),
		EP: b.get(rcPoisonLo, 1) == 1, Tag: uint16(b.get(rcTagLo, rcTagW)), RequesterID: tlp.ID(b.get(rcReqIDLo, rcReqIDW)),
		CompleterID: tlp.ID(b.get(rcCplIDLo, rcCplIDW)), Status: tlp.Status(b.get(rcStatusLo, rcStatusW)),
		ByteCount: uint16(bc), LowerAddress: uint8(b.get(rcLowerAddrLo, 7)),
	}
	if dw > 0 {
		t.Length, t.Data = uint16(dw), r.Payload
	}
	return t, uint8(b.get(rcErrorLo, rcErrorW)), b.get(rcRequestCompletedLo, 1) == 1, nil
}
