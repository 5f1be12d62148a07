package optlink

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		n := r.IntN(MaxPayloadDWs + 1)
		if i < 40 {
			n = i // every short length, across the word boundaries
		}
		f := Frame{Seq: uint16(r.IntN(SeqMask + 1)), Epoch: r.IntN(2) == 0, Payload: make([]byte, 4*n)}
		for j := range f.Header {
			f.Header[j] = byte(r.Uint32())
		}
		for j := range f.Payload {
			f.Payload[j] = byte(r.Uint32())
		}
		ws, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != Words(n) || DataWords(n) > Words(n) || Words(n)-DataWords(n) > 1 {
			t.Fatalf("payload %d DWs: %d words, Words %d, DataWords %d", n, len(ws), Words(n), DataWords(n))
		}
		if (FrontDWs+n)%WordDWs == 0 != (Words(n) != DataWords(n)) {
			t.Fatalf("payload %d DWs: the LCRC has a word of its own exactly when the data fills the last word", n)
		}
		g, k, err := DecodeFrame(ws)
		if err != nil || k != len(ws) || g.Seq != f.Seq || g.Epoch != f.Epoch || g.Header != f.Header || !bytes.Equal(g.Payload, f.Payload) {
			t.Fatalf("frame %d: decoded %+v (%d words, %v)", i, g, k, err)
		}
		// Any one flipped bit is caught.
		bit := r.IntN(len(ws) * 512)
		ws[bit/512].Bytes[bit%512/8] ^= 1 << (bit % 8)
		if _, _, err := DecodeFrame(ws); err == nil {
			t.Fatalf("frame %d: bit %d flipped, decoded anyway", i, bit)
		}
	}
}

func TestControlRoundTrip(t *testing.T) {
	for _, c := range []Control{{Kind: KindTS}, {Kind: KindTS, Seen: true, Limit: 256}, {Kind: KindDL, Nak: true, AckSeq: 4095, Limit: 65535}, {Kind: KindDL, AckSeq: 17}} {
		w := c.Word()
		g, err := DecodeControl(w)
		if err != nil || g != c {
			t.Fatalf("%+v: decoded %+v, %v", c, g, err)
		}
		w.Bytes[7] ^= 0x10
		if _, err := DecodeControl(w); err == nil {
			t.Fatalf("%+v: damaged word decoded", c)
		}
	}
	if _, err := DecodeControl((Control{Kind: 7}).Word()); err == nil {
		t.Fatal("a control word of an unknown kind decoded")
	}
}

// The matrices the RTL's CRC is built from compute what hash/crc32 does.
func TestCRCMatrix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{480, 512} {
		mat := crcMatrix(n)
		for range 50 {
			data := make([]byte, n/8)
			for j := range data {
				data[j] = byte(r.Uint32())
			}
			reg := r.Uint32()
			in := make([]uint64, (32+n+63)/64)
			in[0] = uint64(reg)
			for k := 0; k < n; k++ {
				if data[k/8]>>(k%8)&1 == 1 {
					in[(32+k)/64] |= 1 << ((32 + k) % 64)
				}
			}
			var got uint32
			for j := range 32 {
				p := 0
				for x := range in {
					p ^= popParity(in[x] & mat[j][x])
				}
				got |= uint32(p) << j
			}
			// hash/crc32's Update takes and returns the inverted register.
			if want := ^crc32.Update(^reg, crc32.IEEETable, data); got != want {
				t.Fatalf("%d bits: register %08x, want %08x", n, got, want)
			}
		}
	}
}

func popParity(v uint64) int {
	v ^= v >> 32
	v ^= v >> 16
	v ^= v >> 8
	v ^= v >> 4
	v ^= v >> 2
	v ^= v >> 1
	return int(v & 1)
}

func TestTokenLayout(t *testing.T) {
	f := Frame{Seq: 0xabc, Epoch: true, Payload: make([]byte, 8)}
	ws, _ := f.Encode()
	if tok := binary.LittleEndian.Uint32(ws[0].Bytes[:]); tok != 0xfb800abc|2<<12 {
		t.Fatalf("token %08x", tok)
	}
}
