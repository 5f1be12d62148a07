package tlp

import (
	"fmt"
	"io"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
)

// PcapSnapLen is the snapshot length onic's captures declare: large enough
// for any TLP (4 prefixes, a 4 DW header, 4096 bytes of data and an ECRC)
// with its pseudo-header, so no TLP is ever cut.
const PcapSnapLen = 8192

// PcapWriter writes TLPs to a pcap file with nanosecond timestamps on link
// type LinkTypeONIC. Timestamps are simulated time since the epoch, so the
// same run gives a byte-identical file.
type PcapWriter struct {
	w   *pcapgo.Writer
	buf []byte
}

// NewPcapWriter writes the pcap file header to w.
func NewPcapWriter(w io.Writer) (*PcapWriter, error) {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(PcapSnapLen, LinkTypeONIC); err != nil {
		return nil, fmt.Errorf("pcap: writing file header: %w", err)
	}
	return &PcapWriter{w: pw, buf: make([]byte, 0, 512)}, nil
}

// WriteTLP writes one record: the pseudo-header h and t encoded, at time at
// after the start of the capture. A Snapped TLP is written as
// WriteSnapped writes it.
func (p *PcapWriter) WriteTLP(at time.Duration, h TapHeader, t *TLP) error {
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
func (p *PcapWriter) WriteSnapped(at time.Duration, h TapHeader, t *TLP) error {
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
func (p *PcapWriter) WriteRaw(at time.Duration, h TapHeader, raw []byte) error {
	p.buf = append(h.AppendTo(p.buf[:0]), raw...)
	return p.write(at, p.buf)
}

func (p *PcapWriter) write(at time.Duration, rec []byte) error {
	return p.writeCut(at, rec, len(rec))
}

// writeCut writes rec as a record whose original length is full.
func (p *PcapWriter) writeCut(at time.Duration, rec []byte, full int) error {
	if full > PcapSnapLen {
		return fmt.Errorf("pcap: record of %d bytes exceeds the snapshot length %d", full, PcapSnapLen)
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, 0).UTC().Add(at), CaptureLength: len(rec), Length: full}
	return p.w.WritePacket(ci, rec)
}

// Record is one TLP read from a capture.
type Record struct {
	At  time.Duration // time since the capture's epoch
	Tap TapHeader
	Raw []byte // the TLP bytes captured (only the header's, for a snapped TLP); valid until the next call to Next
}

// PcapReader reads onic TLP captures.
type PcapReader struct {
	r *pcapgo.Reader
	n int
}

// NewPcapReader reads the pcap file header from r and checks the link type.
func NewPcapReader(r io.Reader) (*PcapReader, error) {
	pr, err := pcapgo.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	if lt := pr.LinkType(); lt != LinkTypeONIC {
		return nil, fmt.Errorf("pcap: link type %d, onic TLP captures use %d (LINKTYPE_USER0)", lt, LinkTypeONIC)
	}
	return &PcapReader{r: pr}, nil
}

// Next reads the next record and decodes its TLP into t. It returns io.EOF
// after the last record. A record snapped to the TLP's header (captured
// length less than its length, as WriteSnapped writes) decodes with
// DecodeSnapped: t.Snapped set, no payload. A record whose pseudo-header
// or TLP is malformed, or that is cut anywhere but at the end of the
// header, returns the record with a non-nil error that names the record
// number; the reader stays usable for the next record.
func (p *PcapReader) Next(t *TLP) (Record, error) {
	data, ci, err := p.r.ZeroCopyReadPacketData()
	if err != nil {
		if err == io.EOF {
			return Record{}, io.EOF
		}
		return Record{}, fmt.Errorf("pcap record %d: %w", p.n+1, err)
	}
	p.n++
	rec := Record{At: ci.Timestamp.Sub(time.Unix(0, 0))}
	h, err := ParseTapHeader(data)
	if err != nil {
		return rec, fmt.Errorf("pcap record %d: %w", p.n, err)
	}
	rec.Tap, rec.Raw = h, data[TapHeaderLen:]
	if ci.CaptureLength < ci.Length {
		// Snapped: the bytes kept must be the TLP's header, and the
		// length the record gives must be the one the header gives.
		if size, ok := headerOnly(rec.Raw); !ok || size != ci.Length-TapHeaderLen {
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
func (p *PcapReader) Count() int { return p.n }

// headerOnly reports whether b is exactly the prefixes and header of a
// TLP whose whole size, which it returns, is larger: a TLP snapped to its
// header, as DecodeSnapped takes it.
func headerOnly(b []byte) (size int, ok bool) {
	size, err := Size(b)
	if err != nil || size <= len(b) {
		return size, false
	}
	off := 0
	for Fmt(b[off]>>5) == FmtPrefix { // (Size found the header after them)
		off += 4
	}
	h := Header(b[off:])
	cut := 0
	if h.Fmt().HasData() {
		cut = int(h.Length()) * 4
	}
	if h.TD() {
		cut += 4
	}
	return size, len(b) == size-cut
}
