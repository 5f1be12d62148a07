package optlink

import (
	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// Module builds one optical port's link layer (onic_optlink) for cfg.
//
// Toward the manager: s_tlp_* (TLPs to send, the manager's egress stream
// format) and m_tlp_* (TLPs received, the same format). Toward the
// transceiver wrapper: tx_data, tx_ctl and tx_valid out with tx_ready in
// (the wrapper takes a word each cycle tx_ready is high), and rx_data,
// rx_ctl, rx_valid in, so that one card's tx_* joined to another's rx_*
// makes a link; phy_up is the wrapper's "lanes locked and bonded". state
// is StateDown, StateTraining or StateUp; replays, naks, crc_errors,
// lost, stalls and malformed count replays (the replay buffer sent again
// from its oldest frame, for a Nak or the replay timer), Naks sent,
// damaged frames and control words received (after a damaged frame the
// receiver skips to the next control word, so it examines none of the
// frames between), frames dropped when the link went
// down (and TLPs that reached it while down), the times a partner that
// stopped making progress took the link down (Config.CreditCycles,
// ReplayRollover), and good frames whose length is not the one their
// TLP header says (taken and acknowledged, never handed on).
//
// A TLP is admitted only while the link is up and the replay buffer and
// the far end's credits have room for its whole frame, so s_tlp_ready
// holds TLPs back while the link is down or busy (the "hold" behaviour;
// a manager told the port is down fails them instead). An admitted frame
// is framed, written whole into the replay buffer, and only then sent
// (store and forward: a frame is never cut by a control word). Control
// words go out between frames: training words until the link is up, then
// data-link words carrying the Ack or Nak and the credit limit whenever
// one is due (AckCycles) or there is nothing else to send, and before
// every replay, so the receiver finds frame boundaries again after a
// damaged frame by skipping to the next control word.
func Module(cfg Config) (*ir.Module, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := ir.NewModule("onic_optlink")
	l := &builder{m: m, cfg: cfg}
	l.ports()
	l.state()
	l.transmit()
	l.receive()
	l.training()
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// builder holds the signals the link's stages share.
type builder struct {
	m   *ir.Module
	cfg Config

	phyUp, txReady, rxData, rxCtl, rxValid ir.Value // inputs

	st, up, down, enterDown ir.Value   // link state
	states                  []ir.Value // the link state register's states, by StateDown, StateTraining, StateUp
	epoch                   ir.Value

	// Received control words.
	goodTS, goodDL   ir.Value
	ctlSeen, ctlNak  ir.Value
	ctlAck, ctlLimit ir.Value

	// What this end's receiver asks its control words to say.
	rxNext, ackPend, nakPend, rxLimit ir.Value
	// sentCtlWire is ctl_sent, for logic built before the sender.
	sentCtlWire   ir.Value
	heard, peerUp ir.Value

	sentCtl ir.Value // a control word went out this cycle

	// stalled: the partner stopped making progress (credits never
	// returned, or REPLAY_NUM rolled over): the link goes down.
	stalled ir.Value
}

// CounterBits is the width of the link's event counters. They
// saturate at all ones rather than wrap: a hostile partner can cause an
// event a cycle (2^32 cycles are 17 s at 250 MHz), and a counter that
// wraps says nothing is wrong.
const CounterBits = 32

// Counters are the link's counter outputs, each CounterBits wide and
// saturating.
var Counters = []string{"crc_errors", "naks", "replays", "lost", "stalls", "malformed"}

// counter is a saturating event count. The event is registered first,
// so the count is a cycle late and its adder starts at a register.
func (l *builder) counter(name string, inc ir.Value) ir.Value {
	ir.Helper()
	m := l.m
	ev := m.Reg(name+"_event", 1, 0)
	m.SetNext(ev, inc)
	return l.saturating(name, m.Named(name+"_inc", m.Zext(ev, CounterBits)))
}

// saturating is a CounterBits register named name that adds add
// (CounterBits wide) each cycle and stays at all ones once there.
func (l *builder) saturating(name string, add ir.Value) ir.Value {
	ir.Helper()
	m := l.m
	r := m.Reg(name, CounterBits, 0)
	m.SetNext(r, m.SatAddU(r, add))
	return r
}

func (l *builder) ports() {
	m := l.m
	m.Describe("phy_up", "From the transceiver wrapper: the lanes are locked and bonded.")
	m.Describe("tx_", "Lane words to the wrapper, a 512-bit word a cycle while tx_ready is high: tx_ctl marks a control word (training, Ack or Nak and credits) among the frames' words; join one card's tx_* to another's rx_*.")
	m.Describe("rx_", "Lane words from the wrapper, as the partner's tx_* sent them.")
	m.Describe("state", "The link's state: 0 DOWN, 1 TRAINING, 2 UP.")
	m.Describe("s_tlp_", "TLPs to send, from the manager's egress stream: a 128-bit header, the payload from byte 0, a keep bit per DW, sop and eop; admitted only while the link is up and a whole frame fits the replay buffer and the partner's credits.")
	m.Describe("replays", "Saturating counters: replays of the replay buffer, Naks sent, damaged frames and control words, frames lost when the link went down, stalls that took it down, and good frames whose length lies.")
	m.Describe("m_tlp_", "TLPs received and checked, in the manager's stream format.")
	l.phyUp = m.Input("phy_up", 1)
	l.txReady = m.Input("tx_ready", 1)
	l.rxData = m.Input("rx_data", dataBits)
	l.rxCtl = m.Input("rx_ctl", 1)
	l.rxValid = m.Input("rx_valid", 1)
}

// state declares the link state register (driven by training) and what
// the other stages read from it.
func (l *builder) state() {
	m := l.m
	l.st = m.Reg("link_state", 2, StateDown)
	l.states = m.States(l.st, "DOWN", "TRAINING", "UP") // (StateDown, StateTraining, StateUp)
	l.up = m.Named("link_up", m.Eq(l.st, l.states[StateUp]))
	l.down = m.Named("link_down", m.Eq(l.st, l.states[StateDown]))
	l.enterDown = m.Wire("enter_down", 1)
	l.epoch = m.Reg("epoch", 1, 0)
	m.SetNext(l.epoch, m.Xor(l.epoch, l.enterDown))
	m.Output("state", l.st)

	// What the receiver hears and asks for, read by the transmitter
	// before receive builds it.
	l.goodTS = m.Wire("rx_good_ts", 1)
	l.goodDL = m.Wire("rx_good_dl", 1)
	l.ctlSeen = m.Wire("rx_ctl_seen", 1)
	l.ctlNak = m.Wire("rx_ctl_nak", 1)
	l.ctlAck = m.Wire("rx_ctl_ack", SeqBits)
	l.ctlLimit = m.Wire("rx_ctl_limit", 16)
	l.rxNext = m.Reg("rx_next", SeqBits, 0)
	l.ackPend = m.Reg("ack_pending", 1, 0)
	l.sentCtlWire = m.Wire("ctl_sent_w", 1)
	l.nakPend = m.Reg("nak_pending", 1, 0)
	l.heard = m.Reg("heard", 1, 0)
	l.peerUp = m.Reg("peer_up", 1, 0)
	l.rxLimit = m.Reg("rx_limit", 16, 0)
	l.stalled = m.Wire("stalled", 1)
}

// transmit builds admission, the framer, the replay buffer and its
// writer, Ack processing and the replay timer, and the sender.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func (l *builder) transmit() {
	m, cfg := l.m, l.cfg
	R := cfg.ReplayWords
	A := ir.AddrBits(R)
	P := A + 1 // pointers carry a wrap bit
	one := func(w int) ir.Value { return m.Const(w, 1) }

	// Pointers into the replay buffer: the oldest unacknowledged frame's
	// start (ack), the next word to send, the end of the space reserved
	// by admitted frames, the next word the writer writes, and the end of
	// the last whole frame written.
	ackPtr := m.Reg("ack_ptr", P, 0)
	sendPtr := m.Reg("send_ptr", P, 0)
	resvPtr := m.Reg("resv_ptr", P, 0)
	wrPtr := m.Reg("wr_ptr", P, 0)
	donePtr := m.Reg("done_ptr", P, 0)
	nextSeq := m.Reg("next_seq", SeqBits, 0)
	acked := m.Reg("acked_seq", SeqBits, SeqMask)
	creditUsed := m.Reg("credit_used", 16, 0)
	txLimit := m.Reg("tx_limit", 16, 0)

	// The manager's stream enters through a register slice that also
	// carries the frame's size in words, worked out from the header as it
	// arrives, so admission starts from registers.
	inHdr := m.Input("s_tlp_hdr", hdrBits)
	inN := m.Named("tx_in_dws", payloadDWs(m, inHdr))
	inS := axis.New(m, "tx_in", m.Concat(m.Named("tx_in_frame_words", wordsFor(m, "tx_in_frame", inN, true)), m.Named("tx_in_data_words", wordsFor(m, "tx_in_data", inN, false)), inHdr, m.Input("s_tlp_data", dataBits),
		m.Input("s_tlp_keep", keepBits), m.Input("s_tlp_sop", 1), m.Input("s_tlp_eop", 1)), m.Input("s_tlp_valid", 1))
	m.Output("s_tlp_ready", inS.Ready)
	sk := axis.Instance(m, "tx_in_slice", axis.SkidModule(inS.Data.Width()), inS)
	at := sk.Data.Width()
	field := func(w int) ir.Value { at -= w; return m.Slice(sk.Data, at, w) }
	frameWords := m.Named("tx_frame_words", field(7))
	dataWords := m.Named("tx_data_words", field(7))
	hdr, data, keep, sop, eop := m.Named("tx_hdr", field(hdrBits)), field(dataBits), field(keepBits), field(1), field(1)
	valid := sk.Valid

	// Admission: a TLP's first beat enters only when its whole frame fits
	// the replay buffer and the far end's credits. The replay buffer's
	// tail is the ack pointer, or the send pointer while a replay still
	// reads words older than it; it is registered, and the room and
	// credits left are registers too, so a cycle behind (the tail only
	// moves forward: a stale one is on the safe side).
	// How far the send pointer and the end of the whole frames are ahead
	// of the ack pointer are registers of their own (below: worked out
	// from the pointers' next values), so no subtraction is between the
	// ack pointer and the sender's choice, which runs on into the Nak
	// pending flag (238 MHz by the estimate on the board tops with them).
	sendAhead := m.Reg("send_ahead", P, 0)
	doneAhead := m.Reg("done_ahead", P, 0)
	behind := m.Named("send_behind", m.LtU(doneAhead, sendAhead))
	tail := m.Reg("replay_tail", P, 0)
	m.SetNext(tail, m.Mux(l.down, m.Const(P, 0), m.Mux(behind, sendPtr, ackPtr)))
	room := m.Reg("replay_room_left", 12, uint64(R))
	creditLeft := m.Reg("credit_left", 16, 0)
	spaceOK := m.Named("replay_room", m.Not(m.LtU(room, m.Zext(frameWords, 12))))
	// (The frame's data words are 7 bits: the credits left cover them when
	// bits 14..7 hold anything, or the low 7 bits do, a short compare.)
	creditOK := m.Named("credit_ok", m.And(m.Not(m.Slice(creditLeft, 15, 1)),
		m.Or(m.RedOr(m.Slice(creditLeft, 7, 8)), m.Not(m.LtU(m.Slice(creditLeft, 0, 7), dataWords)))))
	inTLP := m.Reg("in_tlp", 1, 0)
	gate := m.Named("admit_gate", m.Or(inTLP, m.And(l.peerUp, m.And(spaceOK, creditOK))))
	framerReady := m.Wire("framer_ready", 1)
	// While down the link takes what reaches its input and drops it
	// (counted in lost), so nothing waits at a dark link: what the card
	// holds for a port it holds before the link (docs/hdl.md).
	// A TLP whose first beat is dropped is dropped whole, even if the
	// link leaves down before its last beat: the rest must never be
	// framed as if it were a TLP of its own.
	discarding := m.Reg("tx_discarding", 1, 0)
	between := m.Named("tx_between", m.Not(inTLP)) // no TLP under way
	discard := m.Named("tx_discard", m.Or(discarding, m.And(l.down, between)))
	gate = m.Named("admit_gate_kept", m.And(gate, m.Named("tx_keeping", m.Not(discard))))
	m.Assign(sk.Ready, m.Or(m.And(framerReady, gate), discard))
	offer := m.Named("tx_offer", m.And(valid, gate))
	take := m.Named("tx_take", m.And(offer, framerReady))
	admit := m.Named("admit", m.And(take, m.And(sop, between)))
	m.SetNext(inTLP, m.Mux(take, m.Not(eop), inTLP))
	m.SetNext(discarding, m.Mux(m.And(valid, discard), m.Not(eop), discarding))
	discarded := m.Named("tx_discarded", m.And(m.Named("tx_first_beat", m.And(valid, sop)), discard))

	// End of each frame in the replay buffer, by sequence number: an Ack
	// of frame s frees the buffer up to endOf[s].
	// The entry is written a cycle after the admission (from registers:
	// the admission decision is the transmitter's longest path), and
	// endSeq, the sequence number up to which entries are written, bounds
	// the Acks taken.
	endOf := m.Memory("frame_end", R, P)
	endWr := m.Reg("frame_end_we", 1, 0)
	endAddr := m.RegNoReset("frame_end_addr", A)
	endData := m.RegNoReset("frame_end_data", P)
	m.SetNext(endWr, admit)
	m.SetNext(endAddr, m.Slice(nextSeq, 0, A))
	m.SetNext(endData, m.Named("frame_end_next", m.Add(resvPtr, m.Zext(frameWords, P))))
	m.WritePort(endOf, endAddr, endData, endWr, ir.Value{})
	endSeq := m.Reg("frame_end_seq", SeqBits, 0)

	framerOut := m.Wire("framer_out_ready", 1)
	fr := m.Instance("framer", FramerModule(), map[string]ir.Value{
		"tlp_hdr": hdr, "tlp_data": data, "tlp_keep": keep,
		"tlp_sop": sop, "tlp_eop": eop, "tlp_valid": offer,
		"seq": nextSeq, "epoch": l.epoch, "frame_ready": framerOut,
	})
	m.Assign(framerReady, fr["tlp_ready"])

	// The writer adds the LCRC: into the last DW of the frame's last
	// word when that DW is free, else in a word of its own on the next
	// cycle. Frames framed in an earlier link-up period are dropped.
	wFirst := m.Reg("wr_first", 1, 1)
	wDrop := m.Reg("wr_drop", 1, 0)
	pend := m.Reg("lcrc_pending", 1, 0)
	crcReg := m.RegNoReset("wr_crc", 32)
	word := m.Named("wr_word", m.And(fr["frame_data"], m.Named("wr_keep_mask", keepMask(m, fr["frame_keep"]))))
	last := fr["frame_last"]
	wValid := fr["frame_valid"]
	wOpen := m.Named("wr_open", m.Not(pend)) // no LCRC waits for a word of its own
	m.Assign(framerOut, wOpen)
	wTake := m.Named("wr_take", m.And(wValid, wOpen))
	stale := m.Or(l.down, m.Ne(m.Slice(word, 23, 1), l.epoch))
	// A frame the link went down in the middle of is dropped whole: its
	// words after the down would land in the restarted buffer.
	dropOn := m.Named("wr_drop_on", m.Or(wDrop, l.down)) // a frame being dropped goes on being dropped
	drop := m.Named("wr_dropping", m.Mux(wFirst, m.Named("wr_stale", stale), dropOn))
	crcCur := m.Mux(wFirst, m.Const(32, 0xffffffff), crcReg)
	crcIn := m.Named("wr_crc_in", m.Mux(pend, crcReg, crcCur))
	low := m.Mux(pend, m.Const(dataBits-32, 0), m.Slice(word, 0, dataBits-32))
	// One CRC over the first 480 bits serves both: the LCRC (inverted)
	// and, carried over the last 32, the register for the next word
	// (when nothing is pending, crcIn and low are crcCur and the word's).
	crcLow := crc(m, "wr_crc_low", crcIn, low)
	lcrc := m.Named("wr_lcrc", m.Not(crcLow))
	lcrcRoom := m.Named("lcrc_room", m.Not(m.Slice(fr["frame_keep"], keepBits-1, 1)))
	closes := m.Named("wr_closes", m.Or(pend, m.And(last, lcrcRoom)))
	wData := m.Mux(closes, m.Concat(lcrc, low), word)
	wr := m.Named("wr_en", m.And(m.Or(wTake, pend), m.Not(m.Mux(pend, wDrop, drop))))
	replayMem := m.Memory("replay_buf", R, dataBits+1)
	m.WritePort(replayMem, m.Slice(wrPtr, 0, A), m.Named("wr_buf_in", m.Concat(closes, wData)), wr, ir.Value{})
	m.SetNext(crcReg, crc(m, "wr_crc_next", crcLow, m.Slice(word, dataBits-32, 32)))
	m.SetEnable(crcReg, wTake)
	m.SetNext(pend, m.And(wTake, m.And(last, m.Not(lcrcRoom))))
	m.SetNext(wFirst, m.Mux(wTake, last, wFirst))
	m.SetNext(wDrop, m.Mux(m.And(wTake, wFirst), drop, dropOn))

	// Acks and Naks from the far end: an Ack of s frees frames up to s
	// (ackPtr follows a cycle later, from the end table); a Nak also asks
	// for a replay, once ackPtr has moved.
	ackDelta := m.Named("ack_delta", m.Sub(l.ctlAck, acked))
	outstanding := m.Named("outstanding", m.Sub(m.Sub(nextSeq, one(SeqBits)), acked))
	ackable := m.Named("ackable", m.Sub(m.Sub(endSeq, one(SeqBits)), acked)) // the outstanding frames whose end is written
	dlHeard := m.Named("dl_heard", m.And(l.goodDL, l.up))                    // a good data-link word while up
	progress := m.Named("ack_progress", m.And(dlHeard, m.And(m.Ne(ackDelta, m.Const(SeqBits, 0)), m.Not(m.LtU(ackable, ackDelta)))))
	endRead := m.ReadPort(endOf, m.Slice(l.ctlAck, 0, A), one(1))
	ackMoved := m.Reg("ack_moved", 1, 0)
	m.SetNext(ackMoved, progress)
	nakSeen := m.Reg("nak_seen", 1, 0)
	m.SetNext(nakSeen, m.And(m.And(l.goodDL, l.up), l.ctlNak))

	// The replay timer runs while frames are unacknowledged and restarts
	// on Ack progress and on each replay.
	timer := m.Reg("replay_timer", 16, 0)
	expired := m.Named("replay_expired", m.Eq(timer, m.Const(16, uint64(cfg.ReplayCycles))))
	idle := m.Eq(outstanding, m.Const(SeqBits, 0))
	m.SetNext(timer, m.Mux(m.Or(m.Or(idle, progress), m.Or(expired, m.Not(l.up))), m.Const(16, 0), m.Add(timer, one(16))))
	replayPend := m.Reg("replay_pending", 1, 0)

	// The sender: a control word, or the replay buffer's next word. The
	// buffer is read one edge ahead at the pointer the next cycle sends
	// from; a frame is sent only once it is whole (donePtr, a cycle late
	// so its last word has been written before it is read).
	mid := m.Reg("mid_frame", 1, 0)
	sinceCtl := m.Reg("since_ctl", 16, 0)
	doneD := m.Reg("done_ptr_d", P, 0)
	m.SetNext(doneD, donePtr)
	avail := m.Named("tx_avail", m.Ne(sendPtr, doneD))
	jump := m.Named("tx_jump", m.And(m.Not(mid), m.Or(replayPend, behind)))
	sentLimit := m.Reg("sent_limit", 16, 0) // the credit limit the last control word carried
	// A control word is due when an Ack or credit update has waited
	// AckCycles, and at least every quarter of LostCycles in any case, so
	// a far end that only receives still hears this end is alive.
	//
	// Whether since_ctl has reached each threshold is a register of its
	// own, worked out with the counter's next value (it reaches k next
	// cycle when no control word goes now and it is at k-1 or more), so
	// no comparison of the counter is on the path to the sender's
	// decision.
	reached := func(name string, k int) ir.Value {
		r := m.Reg(name, 1, 0) // since_ctl resets to 0, below every k (k >= 1)
		m.SetNext(r, m.And(m.Not(l.sentCtlWire), m.Not(m.LtU(sinceCtl, m.Const(16, uint64(k-1))))))
		return r
	}
	keepalive := reached("since_ctl_keepalive", max(1, cfg.LostCycles/4))
	ackTime := reached("since_ctl_ack", cfg.AckCycles)
	ctlDue := m.Named("ctl_due", m.Or(keepalive, m.And(ackTime, m.Or(l.ackPend, m.Ne(l.rxLimit, sentLimit)))))
	sendData := m.Named("send_data", m.And(l.up, m.Or(mid, m.And(m.And(avail, m.Not(jump)), m.Not(m.Or(l.nakPend, ctlDue))))))
	moved := m.Named("tx_moved", m.And(l.txReady, l.phyUp))
	sentData := m.Named("data_sent", m.And(moved, sendData))
	sendCtl := m.Named("send_ctl", m.Not(sendData))
	sentCtl := m.Named("ctl_sent", m.And(moved, sendCtl))
	m.Assign(l.sentCtlWire, sentCtl)
	replayStart := m.Named("replay_start", m.And(sentCtl, jump)) // a control word goes and the sender jumps back
	sendNext := m.Named("send_ptr_next", m.Mux(l.down, m.Const(P, 0), m.Mux(sentData, m.Named("send_ptr_inc", m.Add(sendPtr, one(P))), m.Mux(replayStart, ackPtr, sendPtr))))
	m.SetNext(sendPtr, sendNext)
	rd := m.ReadPort(replayMem, m.Slice(sendNext, 0, A), one(1))
	// (A frame cut by the link going down is not finished after: the
	// buffer restarts, and sending resumes at a frame's start.)
	m.SetNext(mid, m.And(m.Not(l.down), m.Mux(sentData, m.Not(m.Slice(rd, dataBits, 1)), mid)))
	m.SetNext(sinceCtl, m.Mux(sentCtl, m.Const(16, 0), m.Mux(m.LtU(sinceCtl, m.Const(16, 0xffff)), m.Add(sinceCtl, one(16)), sinceCtl)))
	m.SetNext(replayPend, m.And(l.up, m.Or(m.Or(nakSeen, expired), m.And(replayPend, m.Not(replayStart)))))
	replayBegun := m.Named("replay_begun", m.And(replayStart, replayPend)) // a replay starts
	m.Output("replays", l.counter("replay_count", replayBegun))

	// The control word: training until up, then data-link words.
	kind := m.Mux(l.up, m.Const(8, KindDL), m.Const(8, KindTS))
	nak := m.And(l.up, l.nakPend)
	dw0 := m.Concat(m.Const(4, 0), m.Sub(l.rxNext, one(SeqBits)), m.Const(6, 0), nak, m.And(m.Not(l.up), l.heard), kind)
	ctlLow := m.Named("ctl_word", m.Concat(m.Const(dataBits-32-64, 0), m.Zext(l.rxLimit, 32), dw0))
	ctlWord := m.Concat(m.Not(crc(m, "ctl_crc", m.Const(32, 0xffffffff), ctlLow)), ctlLow)
	m.SetNext(sentLimit, m.Mux(sentCtl, l.rxLimit, sentLimit))
	l.sentCtl = sentCtl
	m.Output("tx_data", m.Mux(sendData, m.Slice(rd, 0, dataBits), ctlWord))
	m.Output("tx_ctl", sendCtl)
	m.Output("tx_valid", l.phyUp)

	// Pointer and sequence bookkeeping; everything restarts while down.
	zero := func(r ir.Value, v ir.Value) { m.SetNext(r, m.Mux(l.down, m.Const(r.Width(), 0), v)) }
	ackNext := m.Named("ack_ptr_next", m.Mux(l.down, m.Const(P, 0), m.Mux(ackMoved, endRead, ackPtr)))
	m.SetNext(ackPtr, ackNext)
	wrInc := m.Named("wr_ptr_inc", m.Add(wrPtr, one(P)))
	zero(wrPtr, m.Mux(wr, wrInc, wrPtr))
	doneNext := m.Named("done_ptr_next", m.Mux(l.down, m.Const(P, 0), m.Mux(m.And(wr, closes), wrInc, donePtr)))
	m.SetNext(donePtr, doneNext)
	// send_ahead and done_ahead: the next pointers less the next ack
	// pointer, the send pointer's three ways worked out beside its
	// choice (which only picks one).
	ahead := func(p ir.Value) ir.Value { return m.Sub(p, ackNext) }
	m.SetNext(sendAhead, m.Mux(l.down, m.Const(P, 0), m.Mux(sentData, m.Named("send_ahead_inc", ahead(m.Add(sendPtr, one(P)))),
		m.Mux(replayStart, m.Named("send_ahead_replay", ahead(ackPtr)), m.Named("send_ahead_stay", ahead(sendPtr))))))
	m.SetNext(doneAhead, m.Named("done_ahead_next", ahead(doneNext)))
	zero(nextSeq, m.Mux(admit, m.Add(nextSeq, one(SeqBits)), nextSeq))
	zero(endSeq, nextSeq)
	m.SetNext(acked, m.Mux(l.down, m.Const(SeqBits, SeqMask), m.Mux(progress, l.ctlAck, acked)))
	usedIfAdmit := m.Named("credit_used_admit", m.Add(creditUsed, m.Zext(dataWords, 16)))
	m.SetNext(creditUsed, m.Mux(l.down, m.Const(16, 0), m.Mux(admit, usedIfAdmit, creditUsed)))
	learn := m.Named("tx_limit_learn", m.Or(dlHeard, m.And(l.goodTS, m.Eq(l.st, l.states[StateTraining]))))
	limit := m.Named("tx_limit_now", m.Mux(learn, l.ctlLimit, txLimit))
	m.SetNext(txLimit, m.Mux(l.down, m.Const(16, 0), limit))
	// The credits left after this cycle, both ways the admission can go
	// worked out beside it, so it only chooses (the admission is the
	// transmitter's longest path).
	m.SetNext(creditLeft, m.Mux(l.down, m.Const(16, 0), m.Mux(admit, m.Sub(limit, usedIfAdmit), m.Sub(limit, creditUsed))))
	resvNext := m.Named("resv_ptr_next", m.Mux(l.down, m.Const(P, 0), m.Mux(admit, m.Add(resvPtr, m.Zext(frameWords, P)), resvPtr)))
	m.SetNext(resvPtr, resvNext)
	// room = R - (resv - tail) = (R + tail) - resv, modulo 2R as the
	// pointers count (R - used is 0 to R, so the residue is the value);
	// R + tail is a register of its own.
	rPlusTail := m.Reg("replay_r_plus_tail", P, uint64(R))
	m.SetNext(rPlusTail, m.Add(m.Const(P, uint64(R)), m.Mux(l.down, m.Const(P, 0), m.Mux(behind, sendPtr, ackPtr))))
	m.SetNext(room, m.Zext(m.Sub(rPlusTail, resvNext), 12))
	// The frames lost, added up a cycle later from a register: going
	// down is at the end of the link's longest paths (a watchdog's count
	// through the next state), and a 32-bit saturating add after it was
	// the card's critical path (221 MHz).
	lostNow := m.Reg("lost_now", CounterBits, 0)
	m.SetNext(lostNow, m.Named("lost_count_inc", m.Add(m.Mux(l.enterDown, m.Zext(outstanding, CounterBits), m.Const(CounterBits, 0)),
		m.Zext(discarded, CounterBits))))
	m.Output("lost", l.saturating("lost_count", lostNow))

	// Progress watchdogs. A TLP waiting at admission for credits the far
	// end never returns (no larger limit) for CreditCycles; or
	// ReplayRollover replays in a row without Ack progress (a partner
	// that never acknowledges, or Naks for ever): the link goes down,
	// as PCIe retrains on REPLAY_NUM rollover, and trains again.
	starved := m.Named("credit_starved", m.And(m.And(valid, sop), m.And(m.Not(inTLP), m.And(l.peerUp, m.Not(creditOK)))))
	creditGrew := m.Ne(limit, txLimit)
	waitCnt := m.Reg("credit_wait", 16, 0)
	m.SetNext(waitCnt, m.Mux(m.Or(m.Not(m.And(starved, l.up)), creditGrew), m.Const(16, 0), m.Add(waitCnt, one(16))))
	creditStall := m.Named("credit_stall", m.Eq(waitCnt, m.Const(16, uint64(cfg.CreditCycles))))
	replayNum := m.Reg("replay_num", 3, 0)
	m.SetNext(replayNum, m.Mux(m.Or(l.down, progress), m.Const(3, 0), m.Mux(replayBegun, m.Add(replayNum, m.Const(3, 1)), replayNum)))
	rollover := m.Named("replay_rollover", m.And(l.up, m.Eq(replayNum, m.Const(3, ReplayRollover))))
	m.Assign(l.stalled, m.Or(creditStall, rollover))
	m.Output("stalls", l.counter("stall_count", m.And(l.up, l.stalled)))
}

// receive builds the receiver: control words checked and read, frames
// parsed, checked and stored speculatively in the receive buffer (kept
// when their LCRC and sequence number are right, else rewound), the Ack
// and Nak they call for, and the reader that hands stored frames to the
// deframer and returns their credits.
//
// Long: one netlist, written in the order its signals flow (as the
// Verilog prints it); its stages share most of their wires, and pieces
// would only hand them back and forth.
func (l *builder) receive() {
	m, cfg := l.m, l.cfg
	R := cfg.RxWords
	A := ir.AddrBits(R)
	P := A + 1
	one := func(w int) ir.Value { return m.Const(w, 1) }
	ones := m.Const(32, 0xffffffff)
	// The words from the lanes go through a register stage first, with
	// the deep part of the CRC check: the CRC is linear, so the CRC of a
	// word's first 60 bytes from a running value r is the CRC of those
	// bytes from zero (a 480-input XOR tree, worked out here) xor the CRC
	// of 480 zero bits from r (32 inputs, next cycle). The check that
	// decides where the receive buffer's write pointer goes next is then
	// shallow.
	w := m.RegNoReset("rx_data_r", dataBits)
	m.SetNext(w, l.rxData)
	ctl := m.RegNoReset("rx_ctl_r", 1)
	m.SetNext(ctl, l.rxCtl)
	valid := m.Reg("rx_valid_r", 1, 0)
	m.SetNext(valid, m.And(l.rxValid, l.phyUp))
	dataCRC := m.RegNoReset("rx_data_crc", 32)
	m.SetNext(dataCRC, crc(m, "rx_data_crc_in", m.Const(32, 0), m.Slice(l.rxData, 0, dataBits-32)))
	v := m.Named("rx_word", m.And(valid, l.phyUp))
	isCtl := m.Named("rx_is_ctl", m.And(v, ctl))
	isData := m.Named("rx_is_data", m.And(v, m.Not(ctl)))

	rxIn := m.Reg("rx_in_frame", 1, 0)
	rxSkip := m.Reg("rx_skip", 1, 0) // framing lost: skip to the next control word
	rxLeft := m.Reg("rx_words_left", 7, 0)
	rxDWs := m.Reg("rx_dws_left", 11, 0)
	rxStore := m.Reg("rx_store", 1, 0)
	rxSeqOK := m.Reg("rx_seq_ok", 1, 0)
	rxDup := m.Reg("rx_dup", 1, 0)
	rxCRC := m.RegNoReset("rx_crc", 32)
	nakSent := m.Reg("nak_sent", 1, 0)
	wptr := m.Reg("rx_wptr", P, 0)
	commit := m.Reg("rx_commit", P, 0)
	rptr := m.Reg("rx_rptr", P, 0)

	// The CRC check: a control word's over its first 60 bytes; a frame's
	// over everything before its last DW, carried on from earlier words.
	first := m.Named("rx_first", m.And(isData, m.And(m.Not(rxIn), m.Not(rxSkip))))
	inFrame := m.Named("rx_more", m.And(isData, rxIn))
	crcCur := m.Mux(first, ones, rxCRC)
	crcLow := m.Named("rx_crc_low", m.Xor(dataCRC, crcAhead(m, "rx_crc_carry", m.Mux(ctl, ones, crcCur), dataBits-32)))
	check := m.Named("rx_crc_ok", m.Eq(m.Slice(w, dataBits-32, 32), m.Not(crcLow)))
	m.SetNext(rxCRC, crc(m, "rx_crc_next", crcLow, m.Slice(w, dataBits-32, 32)))
	m.SetEnable(rxCRC, isData)

	// Control words.
	goodCtl := m.Named("rx_good_ctl", m.And(isCtl, check))
	kind := m.Slice(w, 0, 8)
	// What a good control word says is registered before the rest of
	// the link acts on it, a cycle later.
	reg := func(name string, v ir.Value, reset bool) ir.Value {
		var r ir.Value
		if reset {
			r = m.Reg(name, v.Width(), 0)
		} else {
			r = m.RegNoReset(name, v.Width())
		}
		m.SetNext(r, v)
		return r
	}
	m.Assign(l.goodTS, reg("rx_ts_r", m.And(goodCtl, m.Eq(kind, m.Const(8, KindTS))), true))
	m.Assign(l.goodDL, reg("rx_dl_r", m.And(goodCtl, m.Eq(kind, m.Const(8, KindDL))), true))
	m.Assign(l.ctlSeen, reg("rx_seen_r", m.Slice(w, 8, 1), false))
	m.Assign(l.ctlNak, reg("rx_nak_r", m.Slice(w, 9, 1), false))
	m.Assign(l.ctlAck, reg("rx_ack_r", m.Slice(w, 16, SeqBits), false))
	m.Assign(l.ctlLimit, reg("rx_limit_r", m.Slice(w, 32, 16), false))

	// A frame's first word: its token says its length and sequence
	// number; it is stored only if it is the next in sequence and fits.
	n := m.Slice(w, 12, 11)
	tokOK := m.Named("rx_token_ok", m.And(m.Eq(m.Slice(w, 24, 8), m.Const(8, Marker)), m.Not(m.LtU(m.Const(11, MaxPayloadDWs), n))))
	seq := m.Slice(w, 0, SeqBits)
	seqOK := m.Named("rx_seq_ok_now", m.Mux(first, m.Named("rx_seq_next", m.Eq(seq, l.rxNext)), rxSeqOK))
	dup := m.Named("rx_dup_now", m.Mux(first, m.Slice(m.Named("rx_seq_ahead", m.Sub(seq, l.rxNext)), SeqBits-1, 1), rxDup)) // behind rx_next: already received
	// Free space, kept a cycle behind the pointers (the reader only
	// frees words, so a stale count is on the safe side).
	free := m.Reg("rx_free", 12, uint64(R-1))
	spaceOK := m.Named("rx_space_ok", m.Not(m.LtU(free, m.Named("rx_frame_words", m.Zext(wordsFor(m, "rx_data", n, false), 12)))))
	store := m.Named("rx_storing", m.Mux(first, m.And(m.And(tokOK, m.Eq(seq, l.rxNext)), m.And(spaceOK, l.up)), rxStore))
	// The token's length must be the one the TLP's header says (its
	// Length with data, none without): the link takes a frame that
	// breaks this — it is good as a frame, so a Nak would only bring it
	// back — but hands nothing of it on, counting it in malformed, as a
	// transaction layer drops a Malformed TLP (PCIe Base §2.2.2.1).
	rxLenOK := m.Reg("rx_len_ok", 1, 0)
	lenOK := m.Named("rx_len_ok_now", m.Mux(first, m.Eq(n, payloadDWs(m, m.Slice(w, 32, hdrBits))), rxLenOK))
	m.SetNext(rxLenOK, lenOK)
	dwsHere := m.Named("rx_dws_here", m.Mux(first, m.Add(n, m.Const(11, FrontDWs)), rxDWs))
	left := m.Named("rx_left_now", m.Mux(first, wordsFor(m, "rx_frame", n, true), rxLeft))
	lastWord := m.Named("rx_last_word", m.Eq(left, m.Const(7, 1)))
	full := m.Named("rx_word_full", m.Not(m.LtU(dwsHere, m.Const(11, WordDWs))))
	keep := m.Named("rx_keep", m.Mux(full, m.Const(keepBits, 0xffff), m.Not(m.Shl(m.Const(keepBits, 0xffff), m.Slice(dwsHere, 0, 4)))))
	hasDWs := m.Named("rx_has_dws", m.Ne(dwsHere, m.Const(11, 0)))
	dataLast := m.Named("rx_data_last", m.And(hasDWs, m.Not(m.LtU(m.Const(11, WordDWs), dwsHere))))
	active := m.Named("rx_active", m.Or(m.And(first, tokOK), inFrame))
	wr := m.Named("rx_wr", m.And(active, m.And(m.And(store, lenOK), hasDWs)))
	rxBuf := m.Memory("rx_buf", R, dataBits+keepBits+1)
	m.WritePort(rxBuf, m.Slice(wptr, 0, A), m.Named("rx_buf_in", m.Concat(dataLast, keep, w)), wr, ir.Value{})

	ends := m.Named("rx_frame_end", m.And(active, lastWord))
	good := m.Named("rx_frame_good", m.And(ends, check))
	commitNow := m.Named("rx_commit_now", m.And(good, m.And(store, lenOK)))
	dropped := m.Named("rx_malformed", m.And(good, m.And(store, m.Not(lenOK)))) // acknowledged, not handed on
	taken := m.Named("rx_taken", m.Or(commitNow, dropped))
	truncated := m.Named("rx_truncated", m.And(isCtl, rxIn))
	bad := m.Named("rx_bad", m.Or(m.Or(m.And(first, m.Not(tokOK)), m.And(ends, m.Not(check))), truncated))
	future := m.Named("rx_future", m.And(good, m.And(m.Not(seqOK), m.Not(dup))))
	noRoom := m.Named("rx_no_room", m.And(good, m.And(seqOK, m.Not(store))))
	nakNow := m.Named("rx_nak", m.And(m.And(l.up, m.Not(nakSent)), m.Or(bad, m.Or(future, noRoom))))
	rewind := m.Named("rx_rewind", m.Or(m.Or(l.down, bad), m.And(ends, m.Not(commitNow))))

	dlSent := m.And(l.sentCtl, l.up)
	down := func(r, v ir.Value, reset uint64) { m.SetNext(r, m.Mux(l.down, m.Const(r.Width(), reset), v)) }
	down(rxIn, m.Mux(isCtl, m.Const(1, 0), m.Mux(active, m.Not(lastWord), rxIn)), 0)
	down(rxSkip, m.Mux(isCtl, m.Const(1, 0), m.Or(rxSkip, bad)), 0)
	m.SetNext(rxLeft, m.Mux(active, m.Sub(left, one(7)), rxLeft))
	m.SetNext(rxDWs, m.Mux(active, m.Mux(full, m.Sub(dwsHere, m.Const(11, WordDWs)), m.Const(11, 0)), rxDWs))
	m.SetNext(rxStore, store)
	m.SetNext(rxSeqOK, seqOK)
	m.SetNext(rxDup, dup)
	down(nakSent, m.Mux(taken, m.Const(1, 0), m.Or(nakSent, nakNow)), 0)
	down(l.nakPend, m.Or(nakNow, m.And(l.nakPend, m.Not(dlSent))), 0)
	down(l.ackPend, m.Or(m.Or(taken, m.And(good, dup)), m.And(l.ackPend, m.Not(dlSent))), 0)
	down(l.rxNext, m.Mux(taken, m.Add(l.rxNext, one(SeqBits)), l.rxNext), 0)
	wNext := m.Named("rx_wptr_inc", m.Add(wptr, m.Zext(wr, P)))
	wptrNext := m.Mux(rewind, commit, wNext)
	m.SetNext(wptr, wptrNext)
	m.SetNext(commit, m.Mux(commitNow, wNext, commit))
	m.Output("crc_errors", l.counter("crc_error_count", m.And(m.Not(l.down), m.Or(bad, m.And(isCtl, m.Not(check))))))
	m.Output("naks", l.counter("nak_count", nakNow))
	m.Output("malformed", l.counter("malformed_count", dropped))

	// The reader hands whole frames to the deframer, reading the buffer
	// one edge ahead; each word taken returns a credit.
	commitD := m.Reg("rx_commit_d", P, 0)
	m.SetNext(commitD, commit)
	avail := m.Named("rx_avail", m.Ne(rptr, commitD))
	dfReady := m.Wire("deframer_ready", 1)
	took := m.Named("rx_took", m.And(avail, dfReady))
	rNext := m.Named("rx_rptr_next", m.Add(rptr, m.Zext(took, P)))
	m.SetNext(rptr, rNext)
	// It is worked out from the pointers as they are, a word short of
	// the truth at most (the word written this cycle; a rewind and the
	// reader only free words), and one word of the buffer is never
	// offered in credits, so the check is never the tighter of the two:
	// no arithmetic on this cycle's frame reaches it.
	m.SetNext(free, m.Sub(m.Const(12, uint64(R-1)), m.Zext(m.Sub(wptr, rptr), 12)))
	rd := m.ReadPort(rxBuf, m.Slice(rNext, 0, A), one(1))
	df := m.Instance("deframer", DeframerModule(), map[string]ir.Value{
		"in_data": m.Slice(rd, 0, dataBits), "in_keep": m.Slice(rd, dataBits, keepBits), "in_last": m.Slice(rd, dataBits+keepBits, 1),
		"in_valid": avail, "tlp_ready": m.Input("m_tlp_ready", 1),
	})
	m.Assign(dfReady, df["in_ready"])
	for _, f := range []string{"hdr", "data", "keep", "sop", "eop", "valid"} {
		m.Output("m_tlp_"+f, df["tlp_"+f])
	}
	// While down the limit restarts at the free space (less the one word
	// the free count keeps back); after that each word read out adds a
	// credit.
	occupied := m.Zext(m.Sub(commit, rptr), 16)
	m.SetNext(l.rxLimit, m.Mux(l.down, m.Sub(m.Const(16, uint64(R-1)), occupied), m.Add(l.rxLimit, m.Zext(took, 16))))
}

// training builds the link state machine: down until the PHY is up;
// training words until both ends hear each other's training words (each
// says so in its own, Seen) and TrainCycles have passed; up until the PHY
// drops, the far end starts training afresh (a training word without
// Seen: training words with it are the far end's last ones, still in
// flight), or no good control word arrives for LostCycles. An up end
// sends frames only once it has heard a data-link word, so the far end is
// up to take them.
func (l *builder) training() {
	m, cfg := l.m, l.cfg
	goodCtl := m.Or(l.goodTS, l.goodDL)
	quietCnt := m.Reg("quiet_cycles", 16, 0)
	quiet := m.Named("quiet", m.Eq(quietCnt, m.Const(16, uint64(cfg.LostCycles))))
	m.SetNext(quietCnt, m.Mux(m.Or(goodCtl, l.down), m.Const(16, 0), m.Mux(quiet, quietCnt, m.Add(quietCnt, m.Const(16, 1)))))
	m.SetNext(l.heard, m.And(m.Not(l.down), m.Mux(l.goodTS, m.Const(1, 1), m.And(l.heard, m.Not(quiet)))))
	training := m.Eq(l.st, l.states[StateTraining])
	fresh := m.Named("rx_fresh_ts", m.And(l.goodTS, m.Not(l.ctlSeen))) // the far end (re)starts training
	hs := m.Reg("handshake", 1, 0)
	trainCnt := m.Reg("train_count", 16, 0)
	trained := m.Named("trained", m.And(hs, m.Eq(trainCnt, m.Const(16, uint64(cfg.TrainCycles)))))
	m.SetNext(hs, m.And(training, m.And(m.Or(m.And(hs, m.Not(fresh)), m.And(l.goodTS, l.ctlSeen)), m.Not(quiet))))
	m.SetNext(trainCnt, m.Mux(m.And(training, hs), m.Add(trainCnt, m.Const(16, 1)), m.Const(16, 0)))
	st := func(s uint64) ir.Value { return l.states[s] }
	fromDown := m.Mux(l.phyUp, st(StateTraining), st(StateDown))
	fromTraining := m.Mux(m.Not(l.phyUp), st(StateDown), m.Mux(trained, st(StateUp), st(StateTraining)))
	// An up end that hears no data-link word from the far end for
	// LostCycles has a partner that is not up (it went back to training
	// while this end finished, and only training words with Seen come):
	// down, so that both train again.
	unconfirmed := m.Reg("up_unconfirmed", 16, 0)
	lonely := m.Named("up_alone", m.Eq(unconfirmed, m.Const(16, uint64(cfg.LostCycles))))
	m.SetNext(unconfirmed, m.Mux(m.And(l.up, m.Not(l.peerUp)), m.Mux(lonely, unconfirmed, m.Add(unconfirmed, m.Const(16, 1))), m.Const(16, 0)))
	fromUp := m.Mux(m.Or(m.Or(m.Not(l.phyUp), l.stalled), m.Or(m.Or(fresh, quiet), lonely)), st(StateDown), st(StateUp))
	next := m.Named("link_state_next", m.Mux(l.down, fromDown, m.Mux(training, fromTraining, fromUp)))
	m.SetNext(l.st, next)
	m.Assign(l.enterDown, m.And(m.Not(l.down), m.Eq(next, st(StateDown))))
	m.SetNext(l.peerUp, m.And(l.up, m.Or(l.peerUp, l.goodDL)))
}
