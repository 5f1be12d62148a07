package pcap

import (
	"testing"

	"github.com/google/gopacket"

	"onic/tlp"
)

// BenchmarkLayerMWr64 decodes a 64-bit memory write with 4 bytes of
// data through gopacket's DecodingLayer interface (Layer.DecodeFromBytes
// decodes and validates): tlp's BenchmarkDecodeValidateMWr64 plus the
// layer's bookkeeping.
func BenchmarkLayerMWr64(b *testing.B) {
	x := tlp.TLP{Fmt: tlp.Fmt4DWData, Length: 1, RequesterID: tlp.NewID(1, 0, 0), Tag: 7, FirstBE: 0xF,
		Address: 0x1_2345_6780, Data: []byte{1, 2, 3, 4}}
	enc, err := x.AppendBinary(nil)
	if err != nil {
		b.Fatal(err)
	}
	var l Layer
	b.ReportAllocs()
	b.SetBytes(16)
	for b.Loop() {
		if err := l.DecodeFromBytes(enc, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}
