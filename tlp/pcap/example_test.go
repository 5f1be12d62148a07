package pcap_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/gopacket"

	"onic/tlp"
	"onic/tlp/pcap"
)

// Write a capture and read it back; timestamps are simulated time.
func ExampleWriter() {
	var buf bytes.Buffer
	w, _ := pcap.NewWriter(&buf)
	f, typ, _ := tlp.FmtType(tlp.MRd, false, 0)
	t := tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, Address: 0x40}
	_ = w.WriteTLP(1500*time.Nanosecond, pcap.TapHeader{Direction: pcap.Upstream, Tap: 2}, &t)

	r, _ := pcap.NewReader(&buf)
	var got tlp.TLP
	rec, err := r.Next(&got)
	fmt.Println(rec.At, rec.Tap.Tap, rec.Tap.Direction, got.Kind(), err)
	// Output: 1.5µs 2 up MRd <nil>
}

// Decode captured TLPs with gopacket, allocation-free.
func ExampleLayer() {
	var tap pcap.Tap
	var l pcap.Layer
	var payload gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(pcap.LayerTypeTap, &tap, &l, &payload)
	rec, _ := hex.DecodeString("01010003" + "4a0000010100000400000100deadbeef")
	var layers []gopacket.LayerType
	err := parser.DecodeLayers(rec, &layers)
	fmt.Println(layers, tap.Direction, l.Kind(), err)
	// Output: [ONICTap PCIeTLP Payload] up CplD <nil>
}
