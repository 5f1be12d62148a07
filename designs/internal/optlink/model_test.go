package optlink

import (
	"bytes"
	"encoding/binary"
	"testing"

	"onic/testbenches/verilator"
)

func toWord(w wire) Word {
	x := Word{Ctl: w.ctl}
	for j := range 8 {
		binary.LittleEndian.PutUint64(x.Bytes[8*j:], w.data[j])
	}
	return x
}

// Every word the RTL transmits is what the Go model of the wire format
// says: control words decode with their CRC, frames with their LCRC
// (hash/crc32), numbered from 0, carrying the TLPs in order.
func TestTransmitAgainstModel(t *testing.T) {
	p := newPair(t, testConfig, 3, 0, 2)
	sent := p.a.queue(p.r, 80)
	p.a.phyUp, p.b.phyUp = true, true
	var frame []Word
	var frames []*Frame
	kinds := map[uint8]int{}
	for p.cycles < 20000 && len(frames) < len(sent) {
		p.step()
		if !p.aLast.valid {
			continue
		}
		w := toWord(p.aLast)
		if w.Ctl {
			if len(frame) != 0 {
				t.Fatalf("cycle %d: a control word cuts a frame after %d words", p.cycles, len(frame))
			}
			c, err := DecodeControl(w)
			if err != nil {
				t.Fatalf("cycle %d: %v", p.cycles, err)
			}
			kinds[c.Kind]++
			continue
		}
		frame = append(frame, w)
		// The token says how long the frame is.
		if len(frame) < Words(int(binary.LittleEndian.Uint32(frame[0].Bytes[:])>>12&0x7ff)) {
			continue
		}
		f, _, err := DecodeFrame(frame)
		if err != nil {
			t.Fatalf("cycle %d: frame %d: %v", p.cycles, len(frames), err)
		}
		frames, frame = append(frames, f), nil
	}
	if len(frames) != len(sent) || kinds[KindTS] == 0 || kinds[KindDL] == 0 {
		t.Fatalf("%d frames of %d, control words %v", len(frames), len(sent), kinds)
	}
	for i, f := range frames {
		var h [16]byte
		binary.LittleEndian.PutUint64(h[:], sent[i].hdr[0])
		binary.LittleEndian.PutUint64(h[8:], sent[i].hdr[1])
		if int(f.Seq) != i || f.Header != h || !bytes.Equal(f.Payload, sent[i].payload) {
			t.Fatalf("frame %d: seq %d, header %x, %d payload bytes; want %v", i, f.Seq, f.Header, len(f.Payload), sent[i])
		}
	}
}

func TestLint(t *testing.T) {
	m, err := Module(Config{})
	if err != nil {
		t.Fatal(err)
	}
	verilator.Lint(t, m)
}
