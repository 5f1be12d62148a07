package pcap

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"

	"onic/tlp"
)

// SnapLen is the snapshot length onic's captures declare: large enough
// for any TLP (4 prefixes, a 4 DW header, 4096 bytes of data and an ECRC)
// with its pseudo-header, so no TLP is ever cut.
const SnapLen = 8192

// Writer writes TLPs to a capture file with nanosecond timestamps on
// link type LinkTypeONIC: classic pcap (NewWriter) or pcapng with an
// interface per tap (NewNgWriter). Timestamps are simulated time
// since the epoch, so the same run gives a byte-identical file.
type Writer struct {
	w interface {
		WritePacket(gopacket.CaptureInfo, []byte) error
	}
	ng  *pcapgo.NgWriter // when pcapng
	tap int              // the record's interface (pcapng)
	buf []byte
}

// NewWriter writes the pcap file header to w.
func NewWriter(w io.Writer) (*Writer, error) {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(SnapLen, LinkTypeONIC); err != nil {
		return nil, fmt.Errorf("pcap: writing file header: %w", err)
	}
	return &Writer{w: pw, buf: make([]byte, 0, 512)}, nil
}

// NewNgWriter writes a pcapng section header to w and an interface
// per name in taps, each tap's number its interface's: Wireshark then
// shows the capture point's name (frame.interface_name) beside the
// pseudo-header's number. A record's tap must be one of them. Each
// record is handed on to w as it is written.
func NewNgWriter(w io.Writer, taps []string) (*Writer, error) {
	if len(taps) == 0 {
		return nil, fmt.Errorf("pcapng: no taps to name")
	}
	// No hardware or OS in the section: the same run gives the same file
	// on any machine.
	opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "onic"}}
	intf := func(i int) pcapgo.NgInterface {
		return pcapgo.NgInterface{Name: taps[i], Description: fmt.Sprintf("onic TLP tap %d", i), LinkType: LinkTypeONIC,
			SnapLength: SnapLen, TimestampResolution: 9}
	}
	ng, err := pcapgo.NewNgWriterInterface(w, intf(0), opts)
	if err != nil {
		return nil, fmt.Errorf("pcapng: writing the section header: %w", err)
	}
	for i := 1; i < len(taps); i++ {
		if _, err := ng.AddInterface(intf(i)); err != nil {
			return nil, fmt.Errorf("pcapng: interface %s: %w", taps[i], err)
		}
	}
	if err := ng.Flush(); err != nil {
		return nil, err
	}
	return &Writer{w: ng, ng: ng, buf: make([]byte, 0, 512)}, nil
}

// WriteTLP writes one record: the pseudo-header h and t encoded, at time at
// after the start of the capture. A Snapped TLP is written as
// WriteSnapped writes it.
func (p *Writer) WriteTLP(at time.Duration, h TapHeader, t *tlp.TLP) error {
	p.tap = int(h.Tap)
	if t.Snapped {
		return p.WriteSnapped(at, h, t)
	}
	rec, err := t.AppendBinary(h.AppendTo(p.buf[:0]))
	if err != nil {
		return err
	}
	p.buf = rec
	return p.write(at, rec)
}

// WriteSnapped writes one record snapped to the header: the pseudo-header,
// t's prefixes and header, and none of its payload or digest, with the
// record's original length the whole TLP's (pcap's own way of saying the
// capture kept only the first bytes). It is for TLPs whose payload bytes
// are not known, such as a traffic model's, which carries sizes alone: the
// header says everything there is, and a capture of a long run stays small.
// t.Data is ignored; Length gives the payload's size.
func (p *Writer) WriteSnapped(at time.Duration, h TapHeader, t *tlp.TLP) error {
	p.tap = int(h.Tap)
	b, err := t.AppendHeader(h.AppendTo(p.buf[:0]))
	if err != nil {
		return err
	}
	p.buf = b
	full := len(b)
	if t.Kind().HasData() {
		full += 4 * int(t.Length)
	}
	if t.TD {
		full += 4
	}
	return p.writeCut(at, b, full)
}

// WriteRaw writes one record holding TLP bytes as they are, for recording
// malformed TLPs seen on a link.
func (p *Writer) WriteRaw(at time.Duration, h TapHeader, raw []byte) error {
	p.tap = int(h.Tap)
	p.buf = append(h.AppendTo(p.buf[:0]), raw...)
	return p.write(at, p.buf)
}

func (p *Writer) write(at time.Duration, rec []byte) error {
	return p.writeCut(at, rec, len(rec))
}

// writeCut writes rec as a record whose original length is full.
func (p *Writer) writeCut(at time.Duration, rec []byte, full int) error {
	if full > SnapLen {
		return fmt.Errorf("pcap: record of %d bytes exceeds the snapshot length %d", full, SnapLen)
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, 0).UTC().Add(at), CaptureLength: len(rec), Length: full}
	if p.ng == nil {
		return p.w.WritePacket(ci, rec)
	}
	ci.InterfaceIndex = p.tap
	if err := p.ng.WritePacket(ci, rec); err != nil {
		return fmt.Errorf("pcapng: %w", err)
	}
	return p.ng.Flush()
}

// Record is one TLP read from a capture.
type Record struct {
	At  time.Duration // time since the capture's epoch
	Tap TapHeader
	Raw []byte // the TLP bytes captured (only the header's, for a snapped TLP); valid until the next call to Next
	// Interface is the pcapng interface the record was captured on
	// (Reader.Interface names it; the emulator's are its taps); 0 in
	// classic pcap.
	Interface int
}

// Reader reads onic TLP captures, pcap or pcapng.
type Reader struct {
	r interface {
		ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	ng *pcapgo.NgReader // when pcapng
	n  int
}

// ngMagic is a pcapng file's first four bytes (its section header
// block's type, the same in either byte order).
var ngMagic = []byte{0x0a, 0x0d, 0x0d, 0x0a}

// NewReader reads the file header from r — classic pcap or pcapng —
// and checks the link type (of each interface, for pcapng).
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(4); bytes.Equal(head, ngMagic) {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, fmt.Errorf("pcapng: %w", err)
		}
		if lt := ng.LinkType(); lt != LinkTypeONIC {
			return nil, fmt.Errorf("pcapng: link type %d, onic TLP captures use %d (LINKTYPE_USER0)", lt, LinkTypeONIC)
		}
		return &Reader{r: ng, ng: ng}, nil
	}
	pr, err := pcapgo.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	if lt := pr.LinkType(); lt != LinkTypeONIC {
		return nil, fmt.Errorf("pcap: link type %d, onic TLP captures use %d (LINKTYPE_USER0)", lt, LinkTypeONIC)
	}
	return &Reader{r: pr}, nil
}

// Interface is the name pcapng gives interface i (a tap's name in the
// emulator's captures), or "" (classic pcap, or no name).
func (p *Reader) Interface(i int) string {
	if p.ng == nil {
		return ""
	}
	intf, err := p.ng.Interface(i)
	if err != nil {
		return ""
	}
	return intf.Name
}

// Next reads the next record and decodes its TLP into t. It returns io.EOF
// after the last record. A record snapped to the TLP's header (captured
// length less than its length, as WriteSnapped writes) decodes with
// DecodeSnapped: t.Snapped set, no payload. A record whose pseudo-header
// or TLP is malformed, or that is cut anywhere but at the end of the
// header, returns the record with a non-nil error that names the record
// number; the reader stays usable for the next record.
func (p *Reader) Next(t *tlp.TLP) (Record, error) {
	data, ci, err := p.r.ZeroCopyReadPacketData()
	if err != nil {
		if err == io.EOF {
			return Record{}, io.EOF
		}
		return Record{}, fmt.Errorf("pcap record %d: %w", p.n+1, err)
	}
	p.n++
	rec := Record{At: ci.Timestamp.Sub(time.Unix(0, 0)), Interface: ci.InterfaceIndex}
	h, err := ParseTapHeader(data)
	if err != nil {
		return rec, fmt.Errorf("pcap record %d: %w", p.n, err)
	}
	rec.Tap, rec.Raw = h, data[TapHeaderLen:]
	if ci.CaptureLength < ci.Length {
		// Snapped: the bytes kept must be the TLP's header, and the
		// length the record gives must be the one the header gives.
		if size, ok := tlp.SnappedSize(rec.Raw); !ok || size != ci.Length-TapHeaderLen {
			rec.Raw = nil
			return rec, fmt.Errorf("pcap record %d: cut to %d of %d bytes, not at the end of a TLP header", p.n, ci.CaptureLength, ci.Length)
		}
		if err := t.DecodeSnapped(rec.Raw); err != nil {
			return rec, fmt.Errorf("pcap record %d: %w", p.n, err)
		}
		return rec, nil
	}
	if err := t.Decode(rec.Raw); err != nil {
		return rec, fmt.Errorf("pcap record %d: %w", p.n, err)
	}
	return rec, nil
}

// Count returns the number of records read so far.
func (p *Reader) Count() int { return p.n }
