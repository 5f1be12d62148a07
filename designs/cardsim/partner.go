package cardsim

import (
	"encoding/binary"

	"onic/designs/internal/optlink"
	"onic/designs/internal/tlpstim"
	"onic/tlp"
)

// Partner is an optical port's link layer written in Go from the wire
// format (optlink.Frame, optlink.Control, docs/hdl.md "Optical link
// layer"), not from the RTL: the far end of a card's port when the O-NIC
// at the other end of the circuit is the emulator's Go model. It trains,
// frames TLPs with sequence numbers and LCRCs, keeps what it sent until
// it is acknowledged and sends it again on a Nak or when its replay
// timer runs out, spends the credits the card grants and grants its own,
// and acknowledges what it takes — as the card's link layer does, with
// the card's default timers.
type Partner struct {
	phy   bool
	state int // optlink.StateDown, StateTraining, StateUp

	heard, hs, peerUp bool
	trainCnt, quiet   int
	lonely, sinceCtl  int

	// Transmit: TLPs waiting to be framed, frames sent but not yet
	// acknowledged (oldest first), where the sender is among them.
	queue     []tlp.TLP
	unacked   []sent
	at        int            // the next frame of unacked to send
	cur       []optlink.Word // the frame being sent, if any
	word      int            // its next word
	nextSeq   uint16
	txLimit   uint16
	used      uint16
	replay    bool // a replay is due (after a control word)
	timer     int
	replays   int // in a row without Ack progress
	sentLimit uint16
	rxNext    uint16
	ackPend   bool
	nakPend   bool
	nakSent   bool
	rxLimit   uint16
	frame     []optlink.Word // the frame being received
	left      int
	skip      bool
	got       []tlp.TLP
	resent    uint64 // replays started
	lost      uint64 // TLPs lost when the link went down with them unacknowledged
	malformed uint64 // frames received that did not decode as TLPs
}

// sent is a frame sent and not yet acknowledged.
type sent struct {
	seq   uint16
	words []optlink.Word
	data  int // its data words: what it cost in credits
}

// Partner timers and sizes: the card's link layer's defaults
// (optlink.Config), in cycles of the shared clock.
const (
	partnerTrain   = 1024
	partnerReplay  = 2048
	partnerLost    = 4096
	partnerAck     = 42
	partnerRxWords = 256
	partnerReplayW = 256
)

// NewPartner is a Partner whose PHY is up.
func NewPartner() *Partner {
	p := &Partner{phy: true}
	p.reset()
	return p
}

// reset is the link going down: everything in flight is lost.
func (p *Partner) reset() {
	p.lost += uint64(len(p.unacked))
	p.state = optlink.StateDown
	p.heard, p.hs, p.peerUp = false, false, false
	p.trainCnt, p.quiet, p.lonely, p.sinceCtl = 0, 0, 0, 0
	p.unacked, p.at, p.cur, p.word = nil, 0, nil, 0
	p.nextSeq, p.txLimit, p.used, p.replay, p.timer, p.replays = 0, 0, 0, false, 0, 0
	p.rxNext, p.ackPend, p.nakPend, p.nakSent = 0, false, false, false
	p.rxLimit = partnerRxWords - 1
	p.frame, p.left, p.skip = nil, 0, false
}

// Send queues t to go to the card.
func (p *Partner) Send(t tlp.TLP) { p.queue = append(p.queue, t) }

// Queued is how many TLPs wait to be framed.
func (p *Partner) Queued() int { return len(p.queue) }

// Got returns the TLPs taken from the card since the last call.
func (p *Partner) Got() []tlp.TLP {
	g := p.got
	p.got = nil
	return g
}

// Up says whether the link is up.
func (p *Partner) Up() bool { return p.state == optlink.StateUp }

// Busy says whether anything is queued or unacknowledged.
func (p *Partner) Busy() bool { return len(p.queue) > 0 || len(p.unacked) > 0 }

// Lost is how many TLPs the partner lost with its link going down.
func (p *Partner) Lost() uint64 { return p.lost }

// SetPHY says whether the circuit is lit.
func (p *Partner) SetPHY(up bool) {
	if !up && p.state != optlink.StateDown {
		p.reset()
	}
	p.phy = up
}

// Cycle takes the word the card's port sent (rx) and returns the one the
// partner sends it.
func (p *Partner) Cycle(rx Word) Word {
	if !p.phy {
		return Word{}
	}
	if rx.Valid {
		p.receive(rx)
	}
	p.advance()
	if p.state == optlink.StateDown {
		return Word{}
	}
	return p.transmit()
}

// receive takes one word from the card.
func (p *Partner) receive(rx Word) {
	w := rx.optlink()
	if w.Ctl {
		if p.frame != nil { // a frame cut short: framing is lost
			p.badFrame()
		}
		p.skip = false
		c, err := optlink.DecodeControl(w)
		if err != nil {
			return
		}
		p.quiet = 0
		switch c.Kind {
		case optlink.KindTS:
			p.heard = true
			if p.state == optlink.StateTraining {
				p.txLimit = c.Limit
				if c.Seen {
					p.hs = true
				}
			}
			if !c.Seen && p.state == optlink.StateUp {
				p.reset() // the card starts training afresh
				p.state = optlink.StateTraining
			}
		case optlink.KindDL:
			if p.state != optlink.StateUp {
				return
			}
			p.peerUp = true
			p.txLimit = c.Limit
			p.ack(c.AckSeq)
			if c.Nak {
				p.replay = true
			}
		}
		return
	}
	if p.skip || p.state != optlink.StateUp {
		return
	}
	if p.frame == nil {
		tok := binary.LittleEndian.Uint32(w.Bytes[:4])
		n := int(tok >> 12 & 0x7ff)
		if tok>>24 != optlink.Marker || n > optlink.MaxPayloadDWs {
			p.badFrame()
			return
		}
		p.left = optlink.Words(n)
	}
	p.frame = append(p.frame, w)
	if p.left--; p.left > 0 {
		return
	}
	f, _, err := optlink.DecodeFrame(p.frame)
	p.frame = nil
	if err != nil {
		p.badFrame()
		return
	}
	switch d := (f.Seq - p.rxNext) & optlink.SeqMask; {
	case d == 0:
		p.rxNext = (p.rxNext + 1) & optlink.SeqMask
		p.ackPend, p.nakSent = true, false
		p.rxLimit += uint16(optlink.DataWords(len(f.Payload) / 4)) // taken at once: its credits come back
		if t, err := frameTLP(f); err == nil {
			p.got = append(p.got, t)
		} else {
			p.malformed++
		}
	case d >= 1<<(optlink.SeqBits-1): // behind: received already
		p.ackPend = true
	default: // ahead: one was lost
		p.nak()
	}
}

// badFrame is a damaged frame: skip to the next control word, Nak.
func (p *Partner) badFrame() {
	p.frame, p.skip = nil, true
	p.nak()
}

// nak asks for a replay, once until a good frame arrives.
func (p *Partner) nak() {
	if !p.nakSent {
		p.nakPend, p.nakSent = true, true
	}
}

// ack frees the frames up to and including seq (an Ack of a frame not
// outstanding says nothing new).
func (p *Partner) ack(seq uint16) {
	if len(p.unacked) == 0 {
		return
	}
	k := int((seq - p.unacked[0].seq + 1) & optlink.SeqMask)
	if k == 0 || k > len(p.unacked) {
		return
	}
	p.unacked = p.unacked[k:]
	p.at = max(p.at-k, 0)
	p.timer, p.replays = 0, 0
}

// advance runs the link's state machine and timers one cycle.
func (p *Partner) advance() {
	p.quiet++
	switch p.state {
	case optlink.StateDown:
		p.state = optlink.StateTraining
	case optlink.StateTraining:
		if p.quiet >= partnerLost {
			p.hs = false
		}
		if p.hs {
			if p.trainCnt++; p.trainCnt >= partnerTrain {
				p.state = optlink.StateUp
			}
		}
	case optlink.StateUp:
		if !p.peerUp {
			p.lonely++
		}
		if p.quiet >= partnerLost || p.lonely >= partnerLost || p.replays > optlink.ReplayRollover {
			p.reset()
			return
		}
		if len(p.unacked) > 0 {
			if p.timer++; p.timer >= partnerReplay {
				p.replay, p.timer = true, 0
			}
		}
	}
	p.sinceCtl++
}

// transmit picks this cycle's word.
func (p *Partner) transmit() Word {
	if p.state != optlink.StateUp {
		return p.control(optlink.Control{Kind: optlink.KindTS, Seen: p.heard, AckSeq: (p.rxNext - 1) & optlink.SeqMask, Limit: p.rxLimit})
	}
	dl := optlink.Control{Kind: optlink.KindDL, Nak: p.nakPend, AckSeq: (p.rxNext - 1) & optlink.SeqMask, Limit: p.rxLimit}
	if p.cur != nil {
		return p.nextWord()
	}
	due := p.sinceCtl >= partnerLost/4 || p.sinceCtl >= partnerAck && (p.ackPend || p.rxLimit != p.sentLimit)
	if p.nakPend || due {
		return p.control(dl)
	}
	if p.replay {
		// A control word, then everything unacknowledged from the oldest.
		p.replay, p.at = false, 0
		p.replays++
		p.resent++
		return p.control(dl)
	}
	if p.at == len(p.unacked) && p.peerUp {
		p.admit()
	}
	if p.at < len(p.unacked) {
		p.cur, p.word = p.unacked[p.at].words, 0
		p.at++
		return p.nextWord()
	}
	return p.control(dl)
}

// admit frames the next queued TLP if the card's credits and the replay
// buffer have room for it.
func (p *Partner) admit() {
	if len(p.queue) == 0 {
		return
	}
	t := p.queue[0]
	bs, err := tlpstim.Beats(&t)
	if err != nil {
		p.queue = p.queue[1:]
		return
	}
	f := optlink.Frame{Seq: p.nextSeq}
	for i, h := range bs[0].Hdr {
		binary.LittleEndian.PutUint64(f.Header[8*i:], h)
	}
	if t.Kind().HasData() {
		f.Payload = t.Data
		if len(f.Payload) != int(t.Length)*4 {
			f.Payload = make([]byte, int(t.Length)*4)
			copy(f.Payload, t.Data)
		}
	}
	n := len(f.Payload) / 4
	dw := optlink.DataWords(n)
	if left := p.txLimit - p.used; left >= 1<<15 || int(left) < dw {
		return // no credits
	}
	words := 0
	for _, s := range p.unacked {
		words += len(s.words)
	}
	if words+optlink.Words(n) > partnerReplayW {
		return // no room to keep it
	}
	ws, err := f.Encode()
	if err != nil {
		p.queue = p.queue[1:]
		return
	}
	p.queue = p.queue[1:]
	p.used += uint16(dw)
	p.nextSeq = (p.nextSeq + 1) & optlink.SeqMask
	p.unacked = append(p.unacked, sent{seq: f.Seq, words: ws, data: dw})
}

// nextWord sends the next word of the frame under way.
func (p *Partner) nextWord() Word {
	w := p.cur[p.word]
	if p.word++; p.word == len(p.cur) {
		p.cur = nil
	}
	return wordOf(w)
}

// control sends control word c.
func (p *Partner) control(c optlink.Control) Word {
	if c.Kind == optlink.KindDL {
		p.ackPend, p.nakPend, p.sentLimit = false, false, c.Limit
	}
	p.sinceCtl = 0
	return wordOf(c.Word())
}

// frameTLP is the TLP frame f carries: its 128-bit header bus (DW0 on
// top) and its payload.
func frameTLP(f *optlink.Frame) (tlp.TLP, error) {
	hdr := []uint64{binary.LittleEndian.Uint64(f.Header[:8]), binary.LittleEndian.Uint64(f.Header[8:])}
	return tlpstim.TLP(hdr, f.Payload)
}

// optlink is w as the wire format's word.
func (w *Word) optlink() optlink.Word {
	x := optlink.Word{Ctl: w.Ctl}
	for i, d := range w.Data {
		binary.LittleEndian.PutUint64(x.Bytes[8*i:], d)
	}
	return x
}

// wordOf is an optlink word on the lanes.
func wordOf(w optlink.Word) Word {
	x := Word{Ctl: w.Ctl, Valid: true}
	for i := range x.Data {
		x.Data[i] = binary.LittleEndian.Uint64(w.Bytes[8*i:])
	}
	return x
}
