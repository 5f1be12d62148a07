package pcap

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"onic/tlp"
)

// Layer type numbers registered with gopacket (user range, below gopacket's
// 2000-entry fast table).
const (
	layerTypeTLPNum = 1647
	layerTypeTapNum = 1648
)

var (
	// LayerTypeTLP is the gopacket layer type of a PCIe TLP.
	LayerTypeTLP = gopacket.RegisterLayerType(layerTypeTLPNum, gopacket.LayerTypeMetadata{
		Name: "PCIeTLP", Decoder: gopacket.DecodeFunc(decodeLayer)})
	// LayerTypeTap is the gopacket layer type of onic's pcap pseudo-header
	// (see TapHeader), which precedes each TLP in onic's captures.
	LayerTypeTap = gopacket.RegisterLayerType(layerTypeTapNum, gopacket.LayerTypeMetadata{
		Name: "ONICTap", Decoder: gopacket.DecodeFunc(decodeTap)})
)

// LinkTypeONIC is the pcap link type of onic's TLP captures: LINKTYPE_USER0
// (147), each record a TapHeader followed by one TLP. See docs/pcap.md.
const LinkTypeONIC = layers.LinkType(147)

func init() {
	layers.LinkTypeMetadata[LinkTypeONIC] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeTap), Name: "ONIC-TLP", LayerType: LayerTypeTap}
}

// Layer is a TLP as a gopacket layer. It implements gopacket.DecodingLayer
// (allocation-free decoding into a reused Layer) and
// gopacket.SerializableLayer. Its contents are the prefixes, header and
// digest; its payload is the TLP's data, which it hands on as
// gopacket.LayerTypePayload.
type Layer struct {
	tlp.TLP
	contents []byte
}

// LayerType returns LayerTypeTLP.
func (l *Layer) LayerType() gopacket.LayerType { return LayerTypeTLP }

// LayerContents returns the TLP's bytes without the payload.
func (l *Layer) LayerContents() []byte { return l.contents }

// LayerPayload returns the TLP's data payload.
func (l *Layer) LayerPayload() []byte { return l.Data }

// CanDecode returns LayerTypeTLP.
func (l *Layer) CanDecode() gopacket.LayerClass { return LayerTypeTLP }

// NextLayerType returns gopacket.LayerTypePayload when the TLP carries data
// and gopacket.LayerTypeZero otherwise.
func (l *Layer) NextLayerType() gopacket.LayerType {
	if len(l.Data) > 0 {
		return gopacket.LayerTypePayload
	}
	return gopacket.LayerTypeZero
}

// DecodeFromBytes decodes one TLP (Decode), then checks it (Validate). A
// TLP that decodes but breaks a rule is still available in l, and the error
// names the rule. It does not allocate for a valid TLP. A TLP snapped to
// its header (docs/pcap.md) decodes with Snapped set and the packet marked
// truncated.
func (l *Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if l.DecodeValidate(data) == nil { // (the fast path for a valid TLP)
		l.contents = data[:len(l.Prefixes)+l.HeaderLen()]
		return nil
	}
	// Keep the two errors apart: a TLP that decodes but breaks a rule is
	// still a layer.
	err := l.Decode(data)
	if _, snapped := tlp.SnappedSize(data); err != nil && snapped {
		// The capture kept the header only (docs/pcap.md): decoded as
		// that, and the packet marked truncated as gopacket does.
		df.SetTruncated()
		err = l.DecodeSnapped(data)
	}
	if err != nil {
		if e, ok := err.(*tlp.Error); ok && (e.Rule == tlp.ErrTruncatedHeader || e.Rule == tlp.ErrTruncatedPayload) {
			df.SetTruncated()
		}
		l.contents = data
		return err
	}
	l.contents = data[:len(l.Prefixes)+l.HeaderLen()]
	return l.Validate()
}

// SerializeTo encodes the TLP into a gopacket serialize buffer. With
// opts.ComputeChecksums it computes the ECRC when TD is set (AppendBinary
// always does).
func (l *Layer) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(l.Len())
	if err != nil {
		return err
	}
	out, err := l.AppendBinary(buf[:0])
	copy(buf, out) // a no-op unless AppendBinary had to move the bytes
	return err
}

func decodeLayer(data []byte, p gopacket.PacketBuilder) error {
	l := &Layer{}
	err := l.DecodeFromBytes(data, p)
	if l.Kind() == tlp.KindInvalid {
		return err
	}
	p.AddLayer(l)
	if err != nil {
		return err
	}
	if len(l.Data) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}

// Direction says which way a captured TLP travelled.
type Direction uint8

// Directions: downstream is away from the root complex (towards devices),
// upstream towards it.
const (
	Downstream Direction = 0
	Upstream   Direction = 1
)

// String returns "down" or "up".
func (d Direction) String() string {
	if d == Upstream {
		return "up"
	}
	return "down"
}

// TapHeaderLen is the size of onic's pcap pseudo-header.
const TapHeaderLen = 4

// TapVersion is the pseudo-header version onic writes.
const TapVersion = 1

// TapHeader is the pseudo-header before each TLP in onic's captures: where
// the TLP was seen. Wire layout (big-endian), see docs/pcap.md:
//
//	byte 0     version (1)
//	byte 1     bit 0: direction (0 downstream, 1 upstream); bits 7:1 zero
//	bytes 2-3  tap: the link or port the capture point sits on
type TapHeader struct {
	Version   uint8
	Direction Direction
	Tap       uint16
}

// AppendTo appends the 4-byte pseudo-header to b.
func (h TapHeader) AppendTo(b []byte) []byte {
	v := h.Version
	if v == 0 {
		v = TapVersion
	}
	return append(b, v, uint8(h.Direction&1), uint8(h.Tap>>8), uint8(h.Tap))
}

// ParseTapHeader reads a pseudo-header from the start of b.
func ParseTapHeader(b []byte) (TapHeader, error) {
	if len(b) < TapHeaderLen {
		return TapHeader{}, fmt.Errorf("pcap pseudo-header: %d bytes, need %d", len(b), TapHeaderLen)
	}
	if b[0] != TapVersion {
		return TapHeader{}, fmt.Errorf("pcap pseudo-header: version %d, this onic reads version %d", b[0], TapVersion)
	}
	if b[1]&^1 != 0 {
		return TapHeader{}, fmt.Errorf("pcap pseudo-header: reserved flag bits %#02x set", b[1]&^1)
	}
	return TapHeader{Version: b[0], Direction: Direction(b[1] & 1), Tap: binary.BigEndian.Uint16(b[2:])}, nil
}

// Tap is the pseudo-header as a gopacket layer; it implements
// gopacket.DecodingLayer and hands on LayerTypeTLP.
type Tap struct {
	TapHeader
	contents, payload []byte
}

// LayerType returns LayerTypeTap.
func (t *Tap) LayerType() gopacket.LayerType { return LayerTypeTap }

// LayerContents returns the pseudo-header bytes.
func (t *Tap) LayerContents() []byte { return t.contents }

// LayerPayload returns the TLP bytes.
func (t *Tap) LayerPayload() []byte { return t.payload }

// CanDecode returns LayerTypeTap.
func (t *Tap) CanDecode() gopacket.LayerClass { return LayerTypeTap }

// NextLayerType returns LayerTypeTLP.
func (t *Tap) NextLayerType() gopacket.LayerType { return LayerTypeTLP }

// DecodeFromBytes reads the pseudo-header.
func (t *Tap) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	h, err := ParseTapHeader(data)
	if err != nil {
		df.SetTruncated()
		return err
	}
	t.TapHeader, t.contents, t.payload = h, data[:TapHeaderLen], data[TapHeaderLen:]
	return nil
}

func decodeTap(data []byte, p gopacket.PacketBuilder) error {
	t := &Tap{}
	if err := t.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(t)
	return p.NextDecoder(LayerTypeTLP)
}
