package gty

import (
	"fmt"

	"onic/hdlgen/ir"
)

// With 16 lanes (FLEET's 16 × 8.25 Gb/s plan) a cycle of 64-bit blocks
// would carry two words, at half the card's word rate per cycle; the
// wrapper runs the transceivers' 4-byte interface instead (UserBits 32:
// a block in two cycles, its header with the first; the user clock is
// the line rate / 33, 250 MHz), so the lanes carry a word a cycle, and
// its lane format is the one docs/hdl.md gives FLEET's plan:
//
//   - Two words in a row, A then B, go out together: A's block j (bits
//     64j to 64j+63) on lane j, B's on lane 8+j, each block's low half in
//     its first cycle and high half in its second.
//   - Sync headers as each word's own on eight lanes: lane 0's is 10 for
//     a control A and lane 1's for an idle A, lanes 8 and 9 the same for
//     B; every other lane's is 01.
//   - Scrambling and markers as for the other plans, on the 64-bit
//     blocks: every MarkerWords words (MarkerWords/2 blocks a lane) a
//     marker block on every lane at once.

// txHalves is TX for 16 lanes. Words go out in the block time after the
// pair's: A is held a cycle so that, with B on the input, every lane's
// block is scrambled whole and the headers (B's flags among them) go out
// with the blocks' first halves.
//
// Long: one module, built top to bottom.
func txHalves(c Config) (*ir.Module, error) {
	n := c.Lanes
	m, data, ctl, valid, ready := txModule("To the transceiver IP (4-byte interface): per lane 32 bits a cycle, a block's low half then its high half, its sync header (bits 1:0 of 6) with the first, and the gearbox sequence.")

	second := m.Reg("block_second_half", 1, 0)
	first := m.Named("block_first_half", m.Not(second))
	pairs := c.MarkerWords / 2
	since := m.Reg("blocks_since_marker", widthFor(pairs+1), 0)
	seq := m.Reg("marker_seq", 8, 0)
	// Whether this block is a marker: decided in its first cycle, kept
	// for its second.
	markerKept := m.Reg("marker_block", 1, 0)
	markerNow := m.Named("marker_now", m.Mux(first, m.Eq(since, m.Const(since.Width(), uint64(pairs))), markerKept))
	m.SetNext(markerKept, markerNow)
	m.SetEnable(markerKept, m.And(ready, first))
	take := m.Named("take", m.And(ready, m.Not(markerNow)))
	m.Output("tx_ready", take)
	idle := m.Named("idle", m.Not(valid))
	word := m.Named("word", m.Mux(valid, data, m.Const(WordBits, 0)))

	// A: the block's first word, held for its second cycle.
	loadA := m.Named("word_a_load", m.And(ready, first))
	wordA := m.RegNoReset("word_a", WordBits)
	m.SetNext(wordA, word)
	m.SetEnable(wordA, loadA)
	ctlA, idleA := m.Reg("word_a_ctl", 1, 0), m.Reg("word_a_idle", 1, 0)
	m.SetNext(ctlA, ctl)
	m.SetEnable(ctlA, loadA)
	m.SetNext(idleA, idle)
	m.SetEnable(idleA, loadA)

	// In the second cycle, with B on the input: the block, scrambled,
	// into the registers the lanes send from in the next two cycles.
	build := m.Named("block_build", m.And(ready, second))
	hdr := func(ctrl ir.Value) ir.Value {
		return m.Mux(ctrl, m.Const(2, HeaderControl), m.Const(2, HeaderData))
	}
	seqField := m.Named("marker_seq_field", m.Zext(m.Concat(seq, m.Const(16, 0)), 64))
	var halvesOut, headersOut []ir.Value
	for l := range n {
		// Lanes 0-7 carry A's blocks, 8-15 B's (the word on the input).
		src := wordA
		if l >= blocksPerWord {
			src = word
		}
		payload := m.Named(fmt.Sprintf("lane%d_payload", l), m.Slice(src, 64*(l%blocksPerWord), 64))
		state := m.Reg(fmt.Sprintf("lane%d_scrambler", l), 58, 0)
		line, next := scramble(m, fmt.Sprintf("lane%d_scrambled", l), payload, state, false)
		m.SetNext(state, next)
		m.SetEnable(state, m.And(build, m.Not(markerNow)))
		markSeq := m.Or(m.ConstWords(64, []uint64{MarkerMagic<<32 | uint64(l)}), seqField)
		var h ir.Value
		switch l {
		case 0:
			h = hdr(m.Or(ctlA, idleA))
		case 1:
			h = hdr(idleA)
		case blocksPerWord:
			h = hdr(m.Or(ctl, idle))
		case blocksPerWord + 1:
			h = hdr(idle)
		default:
			h = m.Const(2, HeaderData)
		}
		blk := m.Reg(fmt.Sprintf("lane%d_block", l), 64, 0)
		m.SetNext(blk, m.Mux(markerNow, markSeq, line))
		m.SetEnable(blk, build)
		bh := m.Reg(fmt.Sprintf("lane%d_header", l), 2, HeaderData)
		m.SetNext(bh, m.Mux(markerNow, m.Const(2, HeaderControl), h))
		m.SetEnable(bh, build)
		halvesOut = append(halvesOut, m.Named(fmt.Sprintf("lane%d_half", l), m.Mux(first, m.Slice(blk, 0, 32), m.Slice(blk, 32, 32))))
		headersOut = append(headersOut, bh)
	}
	m.SetNext(second, m.Not(second))
	m.SetEnable(second, ready)
	m.SetNext(since, m.Mux(markerNow, m.Const(since.Width(), 0), m.Add(since, m.Const(since.Width(), 1))))
	m.SetEnable(since, build)
	m.SetNext(seq, m.Add(seq, m.Const(8, 1)))
	m.SetEnable(seq, m.And(build, markerNow))
	txOutputs(m, ready, halvesOut, headersOut)
	return m, m.Check()
}

// joinHalves is lane l's 4-byte interface (data, header and their valid
// bits, from the transceiver) joined into 64-bit blocks for the lane's
// logic: a cycle whose header is valid holds the block's low half, the
// next its high half, and the block (blk, hdr) is there in that second
// cycle (dv). After a gearbox slip the halves keep alternating, and the
// lane's block lock finds the boundary as it does on whole blocks.
func joinHalves(m *ir.Module, l int, data, header, dataValid, headerValid ir.Value) (blk, hdr, dv ir.Value) {
	p := fmt.Sprintf("lane%d_", l)
	lo := m.RegNoReset(p+"low_half", 32)
	loHdr := m.RegNoReset(p+"low_header", 2)
	have := m.Reg(p+"low_held", 1, 0)
	firstHalf := m.Named(p+"first_half", m.And(dataValid, headerValid))
	m.SetNext(lo, data)
	m.SetEnable(lo, firstHalf)
	m.SetNext(loHdr, header)
	m.SetEnable(loHdr, firstHalf)
	dv = m.Named(p+"block_valid", m.And(dataValid, m.And(m.Not(headerValid), have)))
	m.SetNext(have, m.Mux(firstHalf, m.Const(1, 1), m.Mux(dataValid, m.Const(1, 0), have)))
	return m.Named(p+"joined", m.Concat(data, lo)), loHdr, dv
}

// splitHalves builds RX's words for 16 lanes: a pick takes a block from
// every lane, lanes 0-7's word A and lanes 8-15's word B; A goes out
// (registered) at once and B the cycle after (secondWord, which also
// keeps the next pick back a cycle), each unless its header says idle.
func splitHalves(m *ir.Module, heads []axisHead, pop, allMarker, secondWord ir.Value) {
	allMarker = m.Named("markers_out", allMarker)
	pick := m.Named("deskew_pick", m.And(pop, m.Not(allMarker)))
	var aParts, bParts []ir.Value
	for j := blocksPerWord - 1; j >= 0; j-- {
		aParts = append(aParts, m.Slice(heads[j].data, 0, 64))
		bParts = append(bParts, m.Slice(heads[blocksPerWord+j].data, 0, 64))
	}
	isCtl := func(l int) ir.Value {
		return m.Eq(m.Slice(heads[l].data, 64, 2), m.Const(2, HeaderControl))
	}
	wordA, wordB := m.Named("block_word_a", m.Concat(aParts...)), m.Named("block_word_b", m.Concat(bParts...))
	ctlA, idleA := m.Named("word_a_control", isCtl(0)), m.Named("word_a_idle", isCtl(1))
	heldB := m.RegNoReset("word_b_held", WordBits)
	m.SetNext(heldB, wordB)
	m.SetEnable(heldB, pick)
	ctlB, idleB := m.Reg("word_b_ctl", 1, 0), m.Reg("word_b_idle", 1, 1)
	m.SetNext(ctlB, isCtl(blocksPerWord))
	m.SetEnable(ctlB, pick)
	m.SetNext(idleB, isCtl(blocksPerWord+1))
	m.SetEnable(idleB, pick)
	m.SetNext(secondWord, pick)
	sendA := m.Named("word_a_out", m.And(pick, m.Not(idleA)))
	sendB := m.Named("word_b_out", m.And(secondWord, m.Not(idleB)))
	outData := m.RegNoReset("rx_word", WordBits)
	m.SetNext(outData, m.Mux(secondWord, heldB, wordA))
	m.SetEnable(outData, m.Or(sendA, sendB))
	outCtl := m.Reg("rx_word_ctl", 1, 0)
	m.SetNext(outCtl, m.Mux(secondWord, ctlB, ctlA))
	m.SetEnable(outCtl, m.Or(sendA, sendB))
	outValid := m.Reg("rx_word_valid", 1, 0)
	m.SetNext(outValid, m.Or(sendA, sendB))
	m.Output("rx_data", outData)
	m.Output("rx_ctl", outCtl)
	m.Output("rx_valid", outValid)
}
