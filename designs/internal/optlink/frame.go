// Package optlink is the O-NIC's optical port in RTL: a TLP link layer
// over the transceivers with sequence numbers, an LCRC per frame, Ack/Nak
// with a replay buffer and replay timer, credit-based flow control and
// link training, below which a GTY transceiver wrapper carries 512-bit
// words over 16 lanes. Its wire format is written down here in Go (Frame,
// Control, Word) and in docs/hdl.md, "Optical link layer"; the RTL is
// held to this model.
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package optlink

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Word is one 512-bit transfer on the lane interface: 64 bytes, byte n
// carried in bits [8n+7:8n] of tx_data (lane n/4 carries bytes 4k..4k+3
// of each word, least significant first), and whether it is a control
// word (tx_ctl).
type Word struct {
	Ctl   bool
	Bytes [WordBytes]byte
}

// Wire-format constants.
const (
	// WordBytes is the size of a lane-interface word.
	WordBytes = 64
	// WordDWs is the number of DWs in a word.
	WordDWs = WordBytes / 4
	// Marker is a frame token's top byte (the value of the STP symbol of
	// 8b/10b PCIe, for someone reading a capture).
	Marker = 0xFB
	// FrontDWs is the token and the 4-DW header slot before a frame's
	// payload.
	FrontDWs = 5
	// MaxPayloadDWs is the largest payload a frame carries (4 KiB).
	MaxPayloadDWs = 1024
	// SeqBits is the width of a sequence number, as in PCIe.
	SeqBits = 12
	// SeqMask masks a sequence number.
	SeqMask = 1<<SeqBits - 1
)

// Control word kinds.
const (
	// KindTS is a training word: the sender's link is not up.
	KindTS = 1
	// KindDL is a data-link word: the sender's link is up; it carries the
	// Ack or Nak and the credit limit.
	KindDL = 2
)

// Frame is one TLP on the wire: its sequence number, the manager's 128-bit
// header bus (DW0 of the TLP in bits 127:96; 3 DW headers leave bits 31:0
// zero) and the payload DWs, least significant byte first as on the
// manager's data bus. Epoch is the token's bit 23: which link-up period
// the frame was admitted in (the receiver ignores it).
type Frame struct {
	Seq     uint16
	Epoch   bool
	Header  [16]byte // the 128-bit header bus, little-endian
	Payload []byte   // a multiple of 4 bytes, at most 4 KiB
}

// Words returns how many lane words a frame of n payload DWs takes: the
// token, the header slot, the payload and the LCRC, which sits in the
// last DW of the last word.
func Words(n int) int { return (FrontDWs + n + 1 + WordDWs - 1) / WordDWs }

// DataWords returns how many of those words hold the token, header or
// payload: what the receiver stores, and so what a frame costs in
// credits. It is Words(n) less one when the LCRC has a word to itself.
func DataWords(n int) int { return (FrontDWs + n + WordDWs - 1) / WordDWs }

// token is a frame's first DW.
func token(seq uint16, n int, epoch bool) uint32 {
	t := uint32(seq&SeqMask) | uint32(n)<<12 | Marker<<24
	if epoch {
		t |= 1 << 23
	}
	return t
}

// Encode returns the frame's words, LCRC included: the CRC-32 of IEEE
// 802.3 (hash/crc32's IEEE table: reflected, initial and final value all
// ones) over every byte of the frame before the LCRC, zero padding
// included, stored little-endian in the last DW.
func (f *Frame) Encode() ([]Word, error) {
	if len(f.Payload)%4 != 0 || len(f.Payload) > 4*MaxPayloadDWs {
		return nil, fmt.Errorf("optlink: payload of %d bytes: want a multiple of 4 up to %d", len(f.Payload), 4*MaxPayloadDWs)
	}
	n := len(f.Payload) / 4
	buf := make([]byte, Words(n)*WordBytes)
	binary.LittleEndian.PutUint32(buf, token(f.Seq, n, f.Epoch))
	copy(buf[4:], f.Header[:])
	copy(buf[4*FrontDWs:], f.Payload)
	binary.LittleEndian.PutUint32(buf[len(buf)-4:], crc32.ChecksumIEEE(buf[:len(buf)-4]))
	ws := make([]Word, len(buf)/WordBytes)
	for i := range ws {
		copy(ws[i].Bytes[:], buf[i*WordBytes:])
	}
	return ws, nil
}

// DecodeFrame reads one frame from the front of ws (data words), checking
// its token and LCRC; it returns the frame and the words it took.
func DecodeFrame(ws []Word) (*Frame, int, error) {
	if len(ws) == 0 || ws[0].Ctl {
		return nil, 0, fmt.Errorf("optlink: no data word to start a frame")
	}
	t := binary.LittleEndian.Uint32(ws[0].Bytes[:])
	n := int(t >> 12 & 0x7ff)
	if t>>24 != Marker || n > MaxPayloadDWs {
		return nil, 0, fmt.Errorf("optlink: bad token %#08x", t)
	}
	k := Words(n)
	if len(ws) < k {
		return nil, 0, fmt.Errorf("optlink: frame of %d words cut short at %d", k, len(ws))
	}
	buf := make([]byte, 0, k*WordBytes)
	for _, w := range ws[:k] {
		if w.Ctl {
			return nil, 0, fmt.Errorf("optlink: control word inside a frame")
		}
		buf = append(buf, w.Bytes[:]...)
	}
	if got, want := binary.LittleEndian.Uint32(buf[len(buf)-4:]), crc32.ChecksumIEEE(buf[:len(buf)-4]); got != want {
		return nil, 0, fmt.Errorf("optlink: frame %d: LCRC %#08x, want %#08x", t&SeqMask, got, want)
	}
	f := &Frame{Seq: uint16(t & SeqMask), Epoch: t>>23&1 == 1, Payload: append([]byte(nil), buf[4*FrontDWs:4*(FrontDWs+n)]...)}
	copy(f.Header[:], buf[4:])
	return f, k, nil
}

// Control is a control word's content.
type Control struct {
	Kind uint8
	// Seen (training words): the sender receives good control words
	// from this end.
	Seen bool
	// Nak (data-link words): a frame was lost or damaged; replay
	// everything after AckSeq.
	Nak bool
	// AckSeq is the last sequence number received in order.
	AckSeq uint16
	// Limit is the credit limit: the sender may have sent frames of
	// DataWords totalling up to this (modulo 2^16) since the link came up.
	Limit uint16
}

// Word returns c as a control word: DW0 holds the kind (bits 7:0), Seen
// (8), Nak (9) and AckSeq (27:16), DW1 the limit (15:0), DW2-14 are zero
// and DW15 is the CRC-32 of the bytes before it.
func (c Control) Word() Word {
	w := Word{Ctl: true}
	dw0 := uint32(c.Kind) | uint32(c.AckSeq&SeqMask)<<16
	if c.Seen {
		dw0 |= 1 << 8
	}
	if c.Nak {
		dw0 |= 1 << 9
	}
	binary.LittleEndian.PutUint32(w.Bytes[0:], dw0)
	binary.LittleEndian.PutUint32(w.Bytes[4:], uint32(c.Limit))
	binary.LittleEndian.PutUint32(w.Bytes[60:], crc32.ChecksumIEEE(w.Bytes[:60]))
	return w
}

// DecodeControl reads a control word, checking its CRC and kind.
func DecodeControl(w Word) (Control, error) {
	if !w.Ctl {
		return Control{}, fmt.Errorf("optlink: not a control word")
	}
	if got, want := binary.LittleEndian.Uint32(w.Bytes[60:]), crc32.ChecksumIEEE(w.Bytes[:60]); got != want {
		return Control{}, fmt.Errorf("optlink: control word CRC %#08x, want %#08x", got, want)
	}
	dw0 := binary.LittleEndian.Uint32(w.Bytes[0:])
	c := Control{Kind: uint8(dw0), Seen: dw0>>8&1 == 1, Nak: dw0>>9&1 == 1, AckSeq: uint16(dw0 >> 16 & SeqMask),
		Limit: uint16(binary.LittleEndian.Uint32(w.Bytes[4:]))}
	if c.Kind != KindTS && c.Kind != KindDL {
		return Control{}, fmt.Errorf("optlink: control word of kind %d", c.Kind)
	}
	return c, nil
}

// crcStep is the CRC-32 register update for one bit, least significant
// bit of each byte first: what hash/crc32 computes, a bit at a time.
func crcStep(crc uint32, bit uint32) uint32 {
	if (crc^bit)&1 == 1 {
		return crc>>1 ^ 0xedb88320
	}
	return crc >> 1
}

// crcMatrix returns, for each of the 32 bits of the CRC register after n
// data bits, the inputs it is the parity of: bit i of mask j (a 32+n bit
// number as little-endian words) is register bit i for i < 32, data bit
// i-32 otherwise. The update is linear over GF(2), so each input's
// effect is found alone.
func crcMatrix(n int) [32][]uint64 {
	var m [32][]uint64
	for j := range m {
		m[j] = make([]uint64, (32+n+63)/64)
	}
	for i := 0; i < 32+n; i++ {
		var crc uint32
		if i < 32 {
			crc = 1 << i
		}
		for k := 0; k < n; k++ {
			b := uint32(0)
			if k == i-32 {
				b = 1
			}
			crc = crcStep(crc, b)
		}
		for j := range 32 {
			if crc>>j&1 == 1 {
				m[j][i/64] |= 1 << (i % 64)
			}
		}
	}
	return m
}
