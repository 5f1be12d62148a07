package tlp

import (
	"testing"
)

// mwr64 is a 4 DW memory write with a 256-byte payload, the common DMA TLP.
func mwr64(b *testing.B) []byte {
	x := TLP{Fmt: Fmt4DWData, Length: 64, RequesterID: NewID(1, 0, 0), Tag: 3, FirstBE: 0xF, LastBE: 0xF,
		Address: 0x12_3456_7000, Data: make([]byte, 256)}
	enc, err := x.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	return enc
}

func BenchmarkDecodeMWr64(b *testing.B) {
	enc := mwr64(b)
	var d TLP
	b.ReportAllocs()
	b.SetBytes(16)
	for b.Loop() {
		if err := d.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeValidateMWr64 is header decode and validation as one
// operation, the way Layer.DecodeFromBytes does it.
func BenchmarkDecodeValidateMWr64(b *testing.B) {
	enc := mwr64(b)
	var d TLP
	b.ReportAllocs()
	b.SetBytes(16)
	for b.Loop() {
		if err := d.DecodeValidate(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeThenValidateMWr64 is the same work as two calls.
func BenchmarkDecodeThenValidateMWr64(b *testing.B) {
	enc := mwr64(b)
	var d TLP
	b.ReportAllocs()
	b.SetBytes(16)
	for b.Loop() {
		if err := d.Decode(enc); err != nil {
			b.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateMWr64(b *testing.B) {
	var d TLP
	if err := d.Decode(mwr64(b)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeMWr64(b *testing.B) {
	var d TLP
	if err := d.Decode(mwr64(b)); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	b.SetBytes(int64(d.Len()))
	for b.Loop() {
		var err error
		if buf, err = d.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeaderViewMWr64(b *testing.B) {
	h := Header(mwr64(b))
	var sink uint64
	b.ReportAllocs()
	for b.Loop() {
		sink += h.Address() + uint64(h.Length()) + uint64(h.RequesterID()) + uint64(h.Tag())
	}
	_ = sink
}

func BenchmarkECRC256(b *testing.B) {
	enc := mwr64(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(enc)))
	for b.Loop() {
		_ = ECRC(enc, 0)
	}
}

// BenchmarkSplitDMA splits a 1 MiB DMA write at an unaligned address into
// MPS-256 requests (4097 chunks per op).
func BenchmarkSplitDMA(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for c := range Chunks(0x1_0000_0003, 1<<20, 256) {
			n += c.Size
		}
	}
	_ = n
}

// BenchmarkCompletions builds the completions of a 4 KB read (RCB 64, MPS 256).
func BenchmarkCompletions(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for c := range Completions(0x1000, 1024, 0xF, 0xF, 64, 256) {
			n += int(c.LengthDW)
		}
	}
	_ = n
}

// BenchmarkDecodeCplD64 decodes a completion with 64 bytes of data, the
// other common TLP (reads answered at RCB 64); it takes the general path.
func BenchmarkDecodeCplD64(b *testing.B) {
	x := TLP{Fmt: Fmt3DWData, Type: 0b01010, Length: 16, CompleterID: NewID(2, 0, 0), RequesterID: NewID(1, 0, 0),
		Tag: 3, ByteCount: 64, LowerAddress: 0x40, Data: make([]byte, 64)}
	enc, err := x.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	var d TLP
	b.ReportAllocs()
	b.SetBytes(12)
	for b.Loop() {
		if err := d.DecodeValidate(enc); err != nil {
			b.Fatal(err)
		}
	}
}
