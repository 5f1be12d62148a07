// Package gty generates the wrapper between an optical port's lane
// interface (the optical link layer's 512-bit words, designs/internal/optlink)
// and the GTY transceivers of a lane plan (pcie/lanes): per port a
// transmit module, on the transceivers' transmit user clock, and a
// receive module, on their receive user clock. The transceivers run AMD's
// 64B/66B asynchronous gearbox (gtwizard_ultrascale with
// TX_DATA_ENCODING 64B66B_ASYNC, 64-bit user and internal data, UG578):
// each lane takes a 64-bit block and its 2-bit sync header every cycle,
// and gives them back on the far side with a data-valid and a
// header-valid bit and a gearbox-slip input to move the block boundary by
// a bit.
//
// The lane format, written here and in docs/hdl.md ("The GTY wrapper"):
//
//   - A word is eight 64-bit blocks, block j its bits 64j to 64j+63; block
//     j goes on lane j mod N in the word's (j div N)-th cycle, so a word
//     takes 8/N cycles (N of 1, 2, 4 or 8 lanes).
//   - Sync headers (IEEE 802.3 clause 49's values: 01 data, 10 control):
//     block 0's is 10 for a control word (tx_ctl) and block 1's is 10 for
//     an idle word (what the wrapper sends when the card has none); every
//     other block's is 01.
//   - Block payloads are scrambled on each lane by the self-synchronising
//     scrambler x^58 + x^39 + 1 of clause 49.2.6, bit 0 first.
//   - Every MarkerWords words, one cycle carries an alignment marker on
//     every lane at once, unscrambled: sync header 10, payload
//     0x4F4E4943 ("ONIC") in bits 63:32, a marker sequence number in bits
//     23:16 and the lane's number in bits 7:0. Markers mark word
//     boundaries and bond the lanes.
//
// The receiver locks each lane's blocks (64 good sync headers in a row;
// a bad header before lock, or 16 in a window of 64 after it, slips the
// gearbox by a bit and waits 32 cycles), finds the lane's markers (two
// a marker period apart lock it; four missed in a row lose it),
// descrambles, and deskews the lanes in a FIFO each: all lanes start
// writing at the marker whose sequence number is two after the one lane 0
// last saw, and are read in step once each holds it; markers that do not
// come out together restart the bonding. phy_up is high while the lanes
// are bonded. There is no clock compensation to do in the wrapper: the
// receive module runs on the recovered clock and onic_top's crossing
// FIFO into user_clk drains faster than any lane plan fills it.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package gty

import (
	"fmt"
	"math/bits"

	"onic/hdlgen/axis"
	"onic/hdlgen/ir"
)

// WordBits is the lane interface's word: the optical link layer's.
const WordBits = 512

// blocksPerWord is a word's 64-bit blocks.
const blocksPerWord = WordBits / 64

// Sync header values (IEEE 802.3 clause 49.2.4.3), as the GTY's
// TXHEADER/RXHEADER bits 1:0 carry them.
const (
	HeaderData    = 0b01
	HeaderControl = 0b10
)

// MarkerMagic is an alignment marker's payload bits 63:32.
const MarkerMagic = 0x4F4E4943

// Config is a wrapper's shape.
type Config struct {
	// Lanes is the lane plan's lanes: 1, 2, 4, 8 or 16.
	Lanes int
	// MarkerWords is how many words go between alignment markers (zero:
	// DefaultMarkerWords). It must be at least 2.
	MarkerWords int
	// SkewBlocks is the skew between lanes the receiver's deskew FIFOs
	// absorb, in blocks (zero: DefaultSkewBlocks); the FIFOs are the next
	// power of two above it deep.
	SkewBlocks int
}

// Defaults.
const (
	// DefaultMarkerWords puts a marker every 4096 words: 0.024% of a
	// lane's blocks.
	DefaultMarkerWords = 4096
	// DefaultSkewBlocks is 16 blocks: 41 ns at 25.78125 Gb/s, far more
	// than the lanes of a QSFP28 module and its fibre differ.
	DefaultSkewBlocks = 16
)

// resolved is c with its defaults, checked.
func (c Config) resolved() (Config, error) {
	switch c.Lanes {
	case 1, 2, 4, 8, 16:
	default:
		return c, fmt.Errorf("gty: %d lanes: the wrapper takes 1, 2, 4, 8 or 16 (a word's eight blocks split evenly, or two words' sixteen)", c.Lanes)
	}
	if c.MarkerWords == 0 {
		c.MarkerWords = DefaultMarkerWords
	}
	if c.MarkerWords < 2 || c.MarkerWords > 1<<16 {
		return c, fmt.Errorf("gty: marker_words %d must be 2 to 65536", c.MarkerWords)
	}
	if c.halves() && c.MarkerWords%2 != 0 {
		return c, fmt.Errorf("gty: marker_words %d must be even with 16 lanes (a block carries two words)", c.MarkerWords)
	}
	if c.SkewBlocks == 0 {
		c.SkewBlocks = DefaultSkewBlocks
	}
	if c.SkewBlocks < 1 || c.SkewBlocks > 1024 {
		return c, fmt.Errorf("gty: skew %d blocks must be 1 to 1024", c.SkewBlocks)
	}
	return c, nil
}

// halves says the wrapper runs the transceivers' 4-byte interface: 16
// lanes, where a cycle's 64-bit blocks would carry two words.
func (c Config) halves() bool { return c.Lanes == 16 }

// UserBits is the transceiver interface's bits a lane a cycle: 64 (the
// 8-byte interface, a block and its header a cycle), or 32 with 16 lanes
// (the 4-byte interface, a block in two cycles, the header with the
// first: so the lanes carry one word a cycle at a word clock of the line
// rate / 33, 250 MHz at FLEET's 8.25 Gb/s, as fast as the card's).
func (c Config) UserBits() int {
	if c.halves() {
		return 32
	}
	return 64
}

// cycles is how many cycles a word takes on the lanes (16 lanes: one,
// two words in a block's two cycles).
func (c Config) cycles() int { return max(1, blocksPerWord/c.Lanes) }

// period is the lane blocks from one marker to the next.
func (c Config) period() int {
	if c.halves() {
		return c.MarkerWords/2 + 1
	}
	return c.MarkerWords*c.cycles() + 1
}

// widthFor is the bits a counter to n-1 takes (at least 1).
func widthFor(n int) int { return max(1, bits.Len(uint(n-1))) }

// scramble is the clause 49.2.6 scrambler's (or, with descramble, its
// descrambler's) 64 bits for in, bit 0 first, given state: the last 58
// bits on the line (state bit 57 the most recent). It returns the bits,
// named name, and the next state. Bit i of the output is bit i of in
// xor the line's bits i-39 and i-58, the ones before bit 0 from the
// state; the scrambler's line is its output, so it is built in three
// parts, each from the ones before (bits 0-38 from the state alone,
// 39-57 from the first part, 58-63 from both).
func scramble(m *ir.Module, name string, in, state ir.Value, descramble bool) (out, next ir.Value) {
	if descramble {
		// The line is the input: all at once.
		tap39 := m.Concat(m.Slice(in, 0, 25), m.Slice(state, 19, 39))
		tap58 := m.Concat(m.Slice(in, 0, 6), state)
		out = m.Named(name, m.Xor(in, m.Xor(tap39, tap58)))
		return out, m.Slice(in, 6, 58)
	}
	lo := m.Named(name+"_lo", m.Xor(m.Slice(in, 0, 39), m.Xor(m.Slice(state, 19, 39), m.Slice(state, 0, 39))))
	mid := m.Named(name+"_mid", m.Xor(m.Slice(in, 39, 19), m.Xor(m.Slice(lo, 0, 19), m.Slice(state, 39, 19))))
	hi := m.Named(name+"_hi", m.Xor(m.Slice(in, 58, 6), m.Xor(m.Slice(lo, 19, 6), m.Slice(lo, 0, 6))))
	out = m.Named(name, m.Concat(hi, mid, lo))
	return out, m.Slice(out, 6, 58)
}

// Scramble is the scrambler in software, for models and tests: the 64
// line bits for payload and the next state (as scramble).
func Scramble(payload, state uint64) (line, next uint64) {
	for i := range 64 {
		h := state>>19&1 ^ state&1 // bits i-39 and i-58 of the line
		b := payload>>i&1 ^ h
		line |= b << i
		state = state>>1 | b<<57
	}
	return line, state
}

// Descramble undoes Scramble: the payload for 64 line bits and the next
// state.
func Descramble(line, state uint64) (payload, next uint64) {
	for i := range 64 {
		b := line >> i & 1
		payload |= (b ^ state>>19&1 ^ state&1) << i
		state = state>>1 | b<<57
	}
	return payload, state
}

// Marker is lane's alignment marker payload with sequence number seq.
func Marker(seq uint8, lane int) uint64 {
	return MarkerMagic<<32 | uint64(seq)<<16 | uint64(lane)
}

// TX is the transmit module, onic_gty_tx: the card's words (tx_data,
// tx_ctl, tx_valid; tx_ready is high in the cycles that start a word and
// carry no marker) out on the lanes as gt_txdata (64 bits a lane, lane 0
// lowest), gt_txheader (the wizard's 6 bits a lane, the sync header in
// bits 1:0) and gt_txsequence (a count of 0 to 31 a lane, as AMD's
// example drives the asynchronous gearbox). gt_ready (the transmitter's
// reset done and its user clock running) holds everything while low.
//
// Long: one module, built top to bottom.
func TX(c Config) (*ir.Module, error) {
	c, err := c.resolved()
	if err != nil {
		return nil, err
	}
	if c.halves() {
		return txHalves(c)
	}
	n, k := c.Lanes, c.cycles()
	m, data, ctl, valid, ready := txModule("To the transceiver IP: per lane a 64-bit block, its sync header (bits 1:0 of 6) and the gearbox sequence, every cycle.")

	blk := m.Reg("word_cycle", widthFor(k), 0)
	since := m.Reg("words_since_marker", widthFor(c.MarkerWords+1), 0)
	seq := m.Reg("marker_seq", 8, 0)
	atStart := m.Named("word_start", m.Eq(blk, m.Const(blk.Width(), 0)))
	markerNow := m.Named("marker_now", m.And(atStart, m.Eq(since, m.Const(since.Width(), uint64(c.MarkerWords)))))
	noMarker := m.Named("no_marker", m.Not(markerNow))
	take := m.Named("take", m.And(ready, m.And(atStart, noMarker)))
	step := m.Named("scramble_step", m.And(ready, noMarker))
	seqField := m.Named("marker_seq_field", m.Zext(m.Concat(seq, m.Const(16, 0)), 64))
	m.Output("tx_ready", take)
	idle := m.Named("idle", m.Not(valid))
	word := m.Named("word", m.Mux(valid, data, m.Const(WordBits, 0)))

	// The rest of the word, shifted down a cycle's blocks at a time.
	var rest, restIdle ir.Value
	if k > 1 {
		rest = m.RegNoReset("word_rest", WordBits-n*64)
		shifted := m.Zext(m.ShrC(rest, n*64), rest.Width())
		m.SetNext(rest, m.Mux(take, m.Slice(word, n*64, WordBits-n*64), shifted))
		m.SetEnable(rest, ready)
		if n == 1 {
			restIdle = m.Reg("word_idle", 1, 0)
			m.SetNext(restIdle, idle)
			m.SetEnable(restIdle, take)
		}
	}
	cur := word
	if k > 1 {
		cur = m.Named("cycle_blocks", m.Mux(atStart, m.Slice(word, 0, n*64), m.Slice(rest, 0, n*64)))
	} else {
		cur = m.Slice(word, 0, n*64)
	}
	hdr := func(ctrl ir.Value) ir.Value {
		return m.Mux(ctrl, m.Const(2, HeaderControl), m.Const(2, HeaderData))
	}
	dataHdr := m.Const(2, HeaderData)
	var blocks, headers []ir.Value
	for l := range n {
		payload := m.Slice(cur, l*64, 64)
		state := m.Reg(fmt.Sprintf("lane%d_scrambler", l), 58, 0)
		line, next := scramble(m, fmt.Sprintf("lane%d_scrambled", l), payload, state, false)
		m.SetNext(state, next)
		m.SetEnable(state, step)
		mark := m.ConstWords(64, []uint64{MarkerMagic<<32 | uint64(l)})
		markSeq := m.Or(mark, seqField)
		blocks = append(blocks, m.Named(fmt.Sprintf("lane%d_block", l), m.Mux(markerNow, markSeq, line)))
		h := dataHdr
		switch {
		case l == 0:
			h = m.Mux(atStart, hdr(m.Or(ctl, idle)), dataHdr)
			if k > 1 && n == 1 {
				h = m.Mux(atStart, h, m.Mux(m.Eq(blk, m.Const(blk.Width(), 1)), hdr(restIdle), dataHdr))
			}
		case l == 1:
			h = m.Mux(atStart, hdr(idle), dataHdr)
		}
		headers = append(headers, m.Named(fmt.Sprintf("lane%d_header", l), m.Mux(markerNow, m.Const(2, HeaderControl), h)))
	}
	m.SetNext(blk, m.Mux(markerNow, blk, m.Mux(m.Eq(blk, m.Const(blk.Width(), uint64(k-1))), m.Const(blk.Width(), 0), m.Add(blk, m.Const(blk.Width(), 1)))))
	m.SetEnable(blk, ready)
	m.SetNext(since, m.Mux(markerNow, m.Const(since.Width(), 0), m.Add(since, m.Zext(take, since.Width()))))
	m.SetEnable(since, ready)
	m.SetNext(seq, m.Add(seq, m.Const(8, 1)))
	m.SetEnable(seq, m.And(ready, markerNow))
	txOutputs(m, ready, blocks, headers)
	return m, m.Check()
}

// txModule is the transmit module (onic_gty_tx) with its card-side
// inputs and gt_ready declared, gt describing its interface to the
// transceiver IP.
func txModule(gt string) (m *ir.Module, data, ctl, valid, ready ir.Value) {
	m = ir.NewModule("onic_gty_tx")
	m.Describe("tx_", "The card's words to send (onic_top's port_<x>_tx_*): a word is taken when tx_ready is high, a control word if tx_ctl; with tx_valid low the lanes carry an idle word.")
	m.Describe("gt_ready", "The transceivers' transmit side is out of reset and its user clock runs.")
	m.Describe("gt_tx", gt)
	return m, m.Input("tx_data", WordBits), m.Input("tx_ctl", 1), m.Input("tx_valid", 1), m.Input("gt_ready", 1)
}

// txOutputs drives the transmit module's outputs to the transceiver IP:
// each lane's data and sync header (lane 0 lowest; the header in bits
// 1:0 of the wizard's 6), and the gearbox sequence, a count of 0 to 31
// a cycle while ready, on every lane.
func txOutputs(m *ir.Module, ready ir.Value, data, headers []ir.Value) {
	gseq := m.Reg("gearbox_seq", 7, 0)
	m.SetNext(gseq, m.Mux(m.Eq(gseq, m.Const(7, 31)), m.Const(7, 0), m.Add(gseq, m.Const(7, 1))))
	m.SetEnable(gseq, ready)
	var txd, txh, txs []ir.Value
	for l := len(data) - 1; l >= 0; l-- {
		txd = append(txd, data[l])
		txh = append(txh, m.Zext(headers[l], 6))
		txs = append(txs, gseq)
	}
	m.Output("gt_txdata", m.Concat(txd...))
	m.Output("gt_txheader", m.Concat(txh...))
	m.Output("gt_txsequence", m.Concat(txs...))
}

// Deskew states of the receive module.
const (
	deskewHunt = iota // waiting for every lane's markers
	deskewArm         // each lane starts at the chosen marker
	deskewRun         // bonded: words come out
)

// rxLane is one lane's state in the receive module, as its FIFO sees it.
type rxLane struct {
	blockLocked, markerLocked, started ir.Value
	lastSeq                            ir.Value
	// startHere: this block is the marker the lanes start at.
	startHere ir.Value
	// write, entry: a block for the deskew FIFO ({marker, header,
	// payload}).
	write, entry ir.Value
}

// rxLaneLogic builds lane l's block lock, marker lock and descrambler.
//
// Long: the three per-lane machines of clause 49's and 82's receivers,
// written out in the order a block meets them.
func rxLaneLogic(m *ir.Module, c Config, l int, data, header, dv, target, arm, hunt ir.Value) (rxLane, ir.Value) {
	p := fmt.Sprintf("lane%d_", l)
	isCtl := m.Named(p+"header_control", m.Eq(header, m.Const(2, HeaderControl)))
	hv := m.Named(p+"header_ok", m.Or(m.Eq(header, m.Const(2, HeaderData)), isCtl))
	bad0 := m.Named(p+"header_bad", m.Not(hv))

	// Block lock (clause 49.2.9's, with a slip on the gearbox for each
	// bad header while hunting).
	locked := m.Reg(p+"block_locked", 1, 0)
	good := m.Reg(p+"good_headers", 6, 0)
	window := m.Reg(p+"lock_window", 6, 0)
	bad := m.Reg(p+"bad_headers", 5, 0)
	wait := m.Reg(p+"slip_wait", 6, 0)
	waiting := m.Named(p+"slip_waiting", m.Ne(wait, m.Const(6, 0)))
	block := m.Named(p+"block", m.And(dv, m.Not(waiting)))
	unlocked := m.Named(p+"block_unlocked", m.Not(locked))
	huntSlip := m.And(unlocked, bad0)
	lose := m.Named(p+"lock_lost", m.And(locked, m.And(bad0, m.Eq(bad, m.Const(5, 15)))))
	slip := m.Named(p+"slip", m.And(block, m.Or(huntSlip, lose)))
	gained := m.Named(p+"lock_gained", m.And(block, m.And(unlocked, m.And(hv, m.Eq(good, m.Const(6, 63))))))
	m.SetNext(locked, m.Mux(gained, m.Const(1, 1), m.Mux(slip, m.Const(1, 0), locked)))
	m.SetNext(good, m.Mux(m.Or(slip, gained), m.Const(6, 0), m.Add(good, m.Const(6, 1))))
	m.SetEnable(good, m.And(block, unlocked))
	windowEnd := m.Eq(window, m.Const(6, 63))
	m.SetNext(window, m.Mux(locked, m.Add(window, m.Const(6, 1)), m.Const(6, 0)))
	m.SetEnable(window, block)
	m.SetNext(bad, m.Mux(m.Or(unlocked, windowEnd), m.Const(5, 0), m.Add(bad, m.Zext(bad0, 5))))
	m.SetEnable(bad, block)
	m.SetNext(wait, m.Mux(slip, m.Const(6, 32), m.Sub(wait, m.Zext(waiting, 6))))
	slipOut := m.Reg(p+"gearbox_slip", 1, 0)
	m.SetNext(slipOut, slip)

	// Marker lock: two markers a period apart lock it, four expected
	// markers missed in a row lose it.
	per := c.period()
	cw := widthFor(per)
	isMarker := m.Named(p+"is_marker", m.And(isCtl,
		m.And(m.Eq(m.Slice(data, 32, 32), m.Const(32, MarkerMagic)),
			m.And(m.Eq(m.Slice(data, 24, 8), m.Const(8, 0)), m.Eq(m.Slice(data, 0, 16), m.Const(16, uint64(l)))))))
	seqIn := m.Slice(data, 16, 8)
	mLocked := m.Reg(p+"marker_locked", 1, 0)
	seen := m.Reg(p+"marker_seen", 1, 0)
	count := m.Reg(p+"since_marker", cw, 0)
	missed := m.Reg(p+"markers_missed", 2, 0)
	lastSeq := m.Reg(p+"marker_last_seq", 8, 0)
	expect := m.Named(p+"marker_due", m.Eq(count, m.Const(cw, uint64(per-1))))
	lb := m.Named(p+"locked_block", m.And(block, locked))
	// Where a marker is (locked: where one is due, whether or not it came
	// through intact).
	slot := m.Named(p+"marker_slot", m.And(lb, m.Mux(mLocked, expect, isMarker)))
	mUnlocked := m.Named(p+"marker_unlocked", m.Not(mLocked))
	gotDue := m.And(expect, isMarker)
	lockNow := m.And(mUnlocked, m.And(seen, gotDue))
	miss := m.Named(p+"marker_missing", m.And(mLocked, m.And(expect, m.Not(isMarker))))
	loseM := m.Named(p+"marker_lost", m.Or(unlocked, m.And(lb, m.And(miss, m.Eq(missed, m.Const(2, 3))))))
	m.SetNext(mLocked, m.Mux(loseM, m.Const(1, 0), m.Mux(m.And(lb, lockNow), m.Const(1, 1), mLocked)))
	// Unlocked, a marker is seen; a period without the next forgets it.
	overdue := m.And(mUnlocked, m.And(expect, m.Not(isMarker)))
	m.SetNext(seen, m.Mux(loseM, m.Const(1, 0), m.Mux(lb, m.Mux(isMarker, m.Const(1, 1), m.Mux(overdue, m.Const(1, 0), seen)), seen)))
	m.SetNext(count, m.Mux(slot, m.Const(cw, 0), m.Mux(expect, m.Const(cw, 0), m.Add(count, m.Const(cw, 1)))))
	m.SetEnable(count, lb)
	m.SetNext(missed, m.Mux(miss, m.Add(missed, m.Const(2, 1)), m.Const(2, 0)))
	m.SetEnable(missed, m.And(lb, m.And(mLocked, expect)))
	m.SetNext(lastSeq, seqIn)
	m.SetEnable(lastSeq, m.And(lb, isMarker))

	// The descrambler skips markers as the scrambler did.
	state := m.Reg(p+"descrambler", 58, 0)
	payload, next := scramble(m, p+"descrambled", data, state, true)
	m.SetNext(state, next)
	m.SetEnable(state, m.And(lb, m.Not(slot)))

	// Deskew: the lane starts at the target marker and writes every
	// locked block from there.
	started := m.Reg(p+"started", 1, 0)
	startHere := m.Named(p+"start_here", m.And(arm, m.And(m.Not(started), m.And(slot, m.And(isMarker, m.Eq(seqIn, target))))))
	writing := m.Named(p+"writing", m.Or(started, startHere))
	m.SetNext(started, m.Mux(hunt, m.Const(1, 0), writing))
	write := m.Named(p+"write", m.And(lb, writing))
	entry := m.Concat(slot, header, m.Mux(slot, data, payload))
	return rxLane{blockLocked: locked, markerLocked: mLocked, started: started, lastSeq: lastSeq,
		startHere: startHere, write: write, entry: entry}, slipOut
}

// RX is the receive module, onic_gty_rx: the transceivers' blocks
// (gt_rxdata, gt_rxheader, gt_rxdatavalid, gt_rxheadervalid, in the
// wizard's widths, lane 0 lowest) back into the card's words (rx_data,
// rx_ctl, rx_valid, onic_top's port_<x>_rx_*), with gt_rxgearboxslip
// asking a lane's gearbox to move by a bit, phy_up while the lanes are
// bonded, and lanes_locked (a bit a lane) and realigns (how many times
// bonding restarted) for bring-up. gt_ready (the receivers' reset done)
// low holds every lane unlocked.
//
// Long: one module, built top to bottom.
func RX(c Config) (*ir.Module, error) {
	c, err := c.resolved()
	if err != nil {
		return nil, err
	}
	n := c.Lanes
	m := ir.NewModule("onic_gty_rx")
	m.Describe("gt_rx", "From the transceiver IP: per lane a 64-bit block (with 16 lanes, 32 bits: a block's halves in turn), its sync header (bits 1:0 of 6) and their valid bits (bit 0 of 2).")
	m.Describe("gt_ready", "The transceivers' receive side is out of reset.")
	m.Describe("gt_rxgearboxslip", "To the transceiver IP: move the lane's block boundary by a bit.")
	m.Describe("rx_", "The words received, to onic_top's port_<x>_rx_*: a word a cycle at most while rx_valid is high, a control word if rx_ctl.")
	m.Describe("phy_up", "The lanes are locked and bonded (onic_top's port_<x>_phy_up).")
	m.Describe("lanes_locked", "Bring-up: each lane's blocks are locked.")
	m.Describe("realigns", "Bring-up: how many times the lanes' bonding restarted.")
	// The transceivers' outputs are registered first: a block's marker
	// compare and lock logic get a whole cycle of the word clock (390.625
	// MHz at 25.78125 Gb/s).
	ub := c.UserBits()
	rxd := m.RegNoReset("rx_blocks", n*ub)
	m.SetNext(rxd, m.Input("gt_rxdata", n*ub))
	rxh := m.RegNoReset("rx_headers", n*6)
	m.SetNext(rxh, m.Input("gt_rxheader", n*6))
	rxdv := m.Reg("rx_data_valid", n*2, 0)
	m.SetNext(rxdv, m.Input("gt_rxdatavalid", n*2))
	rxhv := m.Reg("rx_header_valid", n*2, 0)
	m.SetNext(rxhv, m.Input("gt_rxheadervalid", n*2))
	ready := m.Reg("rx_ready", 1, 0)
	m.SetNext(ready, m.Input("gt_ready", 1))

	st := m.Reg("deskew_state", 2, deskewHunt)
	states := m.States(st, "HUNT", "ARM", "RUN")
	hunt := m.Named("deskew_hunt", m.Eq(st, states[deskewHunt]))
	arm := m.Named("deskew_arm", m.Eq(st, states[deskewArm]))
	run := m.Named("deskew_run", m.Eq(st, states[deskewRun]))
	target := m.Reg("deskew_target", 8, 0)

	depth := 1 << widthFor(c.SkewBlocks+2)
	var lanes []rxLane
	var slips, lockedBits []ir.Value
	var heads []axisHead
	allValid := ir.Value{}
	pop := m.Wire("deskew_pop", 1)
	take := m.Named("deskew_take", m.Or(hunt, pop))
	live := m.Named("deskew_live", m.Not(hunt))
	for l := range n {
		var ln rxLane
		var slip ir.Value
		if c.halves() {
			blk, hdr, dv := joinHalves(m, l, m.Slice(rxd, 32*l, 32), m.Slice(rxh, 6*l, 2), m.And(ready, m.Slice(rxdv, 2*l, 1)), m.Slice(rxhv, 2*l, 1))
			ln, slip = rxLaneLogic(m, c, l, blk, hdr, dv, target, arm, hunt)
		} else {
			dv := m.And(ready, m.And(m.Slice(rxdv, 2*l, 1), m.Slice(rxhv, 2*l, 1)))
			ln, slip = rxLaneLogic(m, c, l, m.Slice(rxd, 64*l, 64), m.Slice(rxh, 6*l, 2), dv, target, arm, hunt)
		}
		lanes = append(lanes, ln)
		slips = append(slips, slip)
		lockedBits = append(lockedBits, ln.blockLocked)
		h := fifo(m, fmt.Sprintf("lane%d_deskew", l), ln.entry, ln.write, take, hunt, live, depth)
		heads = append(heads, h)
		if l == 0 {
			allValid = h.validNext
		} else {
			allValid = m.And(allValid, h.validNext)
		}
	}
	// Every lane's FIFO holds a block: a flip-flop of its own, from the
	// FIFOs' next "holds" (the same value, a cycle ahead), so the lanes'
	// common pop is one gate from registers into the FIFOs' read
	// addresses (the receiver's critical path, short of 28 Gb/s's 424 MHz
	// with the AND of the lanes' flags on it).
	allValidQ := m.Reg("deskew_all_valid", 1, 0)
	m.SetNext(allValidQ, m.Named("deskew_all_valid_next", allValid))
	var secondWord ir.Value // 16 lanes: a block's second word goes out next cycle
	if c.halves() {
		secondWord = m.Reg("word_b_pending", 1, 0)
		m.Assign(pop, m.And(run, m.And(allValidQ, m.Not(secondWord))))
	} else {
		m.Assign(pop, m.And(run, allValidQ))
	}

	var allMarker, anyMarker, allStarted, allMLocked, overflow ir.Value
	for l, h := range heads {
		mk := m.Slice(h.data, 66, 1)
		if l == 0 {
			allMarker, anyMarker, allStarted, allMLocked, overflow = mk, mk, lanes[l].started, lanes[l].markerLocked, h.overflow
			continue
		}
		allMarker, anyMarker = m.And(allMarker, mk), m.Or(anyMarker, mk)
		allStarted, allMLocked = m.And(allStarted, lanes[l].started), m.And(allMLocked, lanes[l].markerLocked)
		overflow = m.Or(overflow, h.overflow)
	}
	allMLocked = m.Named("all_markers_locked", allMLocked)
	skewed := m.Named("markers_apart", m.And(pop, m.And(anyMarker, m.Not(allMarker))))
	restart := m.Named("deskew_restart", m.And(m.Not(hunt), m.Or(m.Not(allMLocked), m.Or(skewed, overflow))))
	m.SetNext(st, m.Named("deskew_state_next", m.Mux(restart, states[deskewHunt],
		m.Mux(m.And(hunt, allMLocked), states[deskewArm],
			m.Mux(m.And(arm, allStarted), states[deskewRun], st)))))
	m.SetNext(target, m.Add(lanes[0].lastSeq, m.Const(8, 2)))
	m.SetEnable(target, hunt)
	realigns := m.Reg("realigns_count", 16, 0)
	m.SetNext(realigns, m.Add(realigns, m.Const(16, 1)))
	m.SetEnable(realigns, m.And(restart, m.Ne(realigns, m.Const(16, 0xffff))))

	if c.halves() {
		splitHalves(m, heads, pop, allMarker, secondWord)
	} else {
		reassemble(m, c, heads, pop, allMarker, run)
	}
	up := m.Reg("lanes_bonded", 1, 0)
	m.SetNext(up, m.And(run, m.Not(restart)))
	m.Output("phy_up", up)
	var sl, lk []ir.Value
	for l := n - 1; l >= 0; l-- {
		sl = append(sl, slips[l])
		lk = append(lk, lockedBits[l])
	}
	m.Output("gt_rxgearboxslip", m.Concat(sl...))
	m.Output("lanes_locked", m.Concat(lk...))
	m.Output("realigns", realigns)
	return m, m.Check()
}

// reassemble builds RX's words from its lanes' deskewed blocks: a
// cycle's blocks from every lane, k cycles a word.
func reassemble(m *ir.Module, c Config, heads []axisHead, pop, allMarker, run ir.Value) {
	n, k := c.Lanes, c.cycles()
	cyc := m.Reg("word_cycle", widthFor(k), 0)
	allMarker = m.Named("markers_out", allMarker)
	pick := m.Named("deskew_pick", m.And(pop, m.Not(allMarker)))
	stopped := m.Named("deskew_stopped", m.Not(run))
	var cycleBlocks []ir.Value
	for l := n - 1; l >= 0; l-- {
		cycleBlocks = append(cycleBlocks, m.Slice(heads[l].data, 0, 64))
	}
	blocks := m.Named("cycle_blocks", m.Concat(cycleBlocks...))
	last := m.Named("word_last", m.Eq(cyc, m.Const(cyc.Width(), uint64(k-1))))
	m.SetNext(cyc, m.Mux(m.Or(m.And(pop, allMarker), stopped), m.Const(cyc.Width(), 0),
		m.Mux(last, m.Const(cyc.Width(), 0), m.Add(cyc, m.Const(cyc.Width(), 1)))))
	m.SetEnable(cyc, m.Or(pop, stopped))
	word := blocks
	first := m.Named("word_first", m.Eq(cyc, m.Const(cyc.Width(), 0)))
	hdr0 := m.Slice(heads[0].data, 64, 2)
	var hdr1 ir.Value
	if n > 1 {
		hdr1 = m.Slice(heads[1].data, 64, 2)
	}
	if k > 1 {
		acc := m.RegNoReset("word_acc", WordBits-n*64)
		// The blocks so far, lowest first: a new cycle's go on top and
		// the whole shifts down.
		m.SetNext(acc, m.Slice(m.Concat(blocks, acc), n*64, WordBits-n*64))
		m.SetEnable(acc, pick)
		word = m.Concat(blocks, acc)
		pickFirst := m.Named("word_first_pick", m.And(pick, first))
		h0 := m.Reg("word_header0", 2, 0)
		m.SetNext(h0, hdr0)
		m.SetEnable(h0, pickFirst)
		hdr0 = m.Mux(first, hdr0, h0)
		if n == 1 {
			h1 := m.Reg("word_header1", 2, 0)
			m.SetNext(h1, m.Slice(heads[0].data, 64, 2))
			m.SetEnable(h1, m.And(pick, m.Eq(cyc, m.Const(cyc.Width(), 1))))
			hdr1 = m.Mux(m.Eq(cyc, m.Const(cyc.Width(), 1)), m.Slice(heads[0].data, 64, 2), h1)
		} else {
			h1 := m.Reg("word_header1", 2, 0)
			m.SetNext(h1, hdr1)
			m.SetEnable(h1, pickFirst)
			hdr1 = m.Mux(first, hdr1, h1)
		}
	}
	idle := m.Named("word_idle", m.Eq(hdr1, m.Const(2, HeaderControl)))
	done := m.Named("word_done", m.And(pick, m.And(last, m.Not(idle))))
	outData := m.RegNoReset("rx_word", WordBits)
	m.SetNext(outData, word)
	m.SetEnable(outData, done)
	outCtl := m.Reg("rx_word_ctl", 1, 0)
	m.SetNext(outCtl, m.Eq(hdr0, m.Const(2, HeaderControl)))
	m.SetEnable(outCtl, done)
	outValid := m.Reg("rx_word_valid", 1, 0)
	m.SetNext(outValid, done)
	m.Output("rx_data", outData)
	m.Output("rx_ctl", outCtl)
	m.Output("rx_valid", outValid)
}

// axisHead is a deskew FIFO's output: its head, whether it holds one,
// and whether a write found it full.
type axisHead struct {
	data, valid, overflow ir.Value
	validNext             ir.Value // valid's next value
}

// fifo is a deskew FIFO of depth entries: entry written when write, the
// head taken when take; while flush (hunting) every head is taken and
// nothing written.
func fifo(m *ir.Module, name string, entry, write, take, flush, live ir.Value, depth int) axisHead {
	// A register stage before the FIFO: the block's checks and the RAM's
	// write each get a cycle.
	entryQ := m.RegNoReset(name+"_entry", entry.Width())
	m.SetNext(entryQ, entry)
	writeQ := m.Reg(name+"_write", 1, 0)
	m.SetNext(writeQ, write)
	entry, write = entryQ, m.Named(name+"_push_req", m.And(writeQ, live))
	in := axis.New(m, name+"_in", entry, write)
	out := axis.FIFO(m, name, in, depth)
	ready := take
	m.Assign(out.Ready, ready)
	ov := m.Named(name+"_overflow", m.And(write, m.Not(in.Ready)))
	// Whether the FIFO holds a block, from a register: its own count of
	// blocks, kept beside the FIFO's pointers, so the lanes' pop (all of
	// them holding one) starts from flip-flops.
	cw := ir.AddrBits(depth) + 1
	count := m.Reg(name+"_count", cw, 0)
	holds := m.Reg(name+"_holds", 1, 0) // out.Valid, registered
	push, pop := m.Named(name+"_pushed", m.And(write, in.Ready)), m.Named(name+"_popped", m.And(holds, ready))
	m.SetNext(count, m.Sub(m.Add(count, m.Zext(push, cw)), m.Zext(pop, cw)))
	// Without the adder on the way: it holds one after this cycle if one
	// comes in, if it holds two now, or if it holds one and keeps it.
	two := m.Named(name+"_two", m.Not(m.LtU(count, m.Const(cw, 2))))
	holdsNext := m.Named(name+"_holds_next", m.Or(push, m.Or(two, m.And(holds, m.Not(pop)))))
	m.SetNext(holds, holdsNext)
	return axisHead{data: out.Data, valid: holds, overflow: ov, validNext: holdsNext}
}
