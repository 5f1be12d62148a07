package pg213

import "onic/tlp"

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
	b, err := encodeRequest("RQ", t)
	if err != nil {
		return RQ{}, err
	}
	if t.EP {
		b.set(ReqPoisoned, 1)
	}
	if useID {
		b.set(ReqIDEnable, 1)
	}
	var r RQ
	copy(r.Descriptor[:], b.bytes(16))
	r.FirstBE, r.LastBE, r.Payload = t.FirstBE, t.LastBE, t.Data
	return r, nil
}

// TLP returns the request the block sends for r, from requester self
// unless the descriptor enables its own requester ID.
func (r *RQ) TLP(self tlp.ID) (tlp.TLP, error) {
	b := fromBytes(r.Descriptor[:])
	t, err := decodeRequest("RQ", b, r.Payload)
	if err != nil {
		return tlp.TLP{}, err
	}
	if b.get(ReqIDEnable) == 0 {
		t.RequesterID = self
	}
	t.EP = b.get(ReqPoisoned) == 1
	t.FirstBE, t.LastBE = r.FirstBE&15, r.LastBE&15
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
	b, err := encodeCompletion("RC", t)
	if err != nil {
		return RC{}, err
	}
	b.set(CplRCLowerAddress, address&0xF80|uint64(t.LowerAddress))
	if done {
		b.set(CplRequestDone, 1)
	}
	var r RC
	copy(r.Descriptor[:], b.bytes(12))
	r.Payload = t.Data
	return r, nil
}

// TLP returns the completion r describes, its error code (0 when the
// block found nothing wrong) and whether it finishes its request.
func (r *RC) TLP() (t tlp.TLP, errCode uint8, done bool, err error) {
	b := fromBytes(r.Descriptor[:])
	t, err = decodeCompletion("RC", b, r.Payload)
	if err != nil {
		return tlp.TLP{}, 0, false, err
	}
	return t, uint8(b.get(CplErrorCode)), b.get(CplRequestDone) == 1, nil
}
