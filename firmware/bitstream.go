package firmware

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Bitstream is what onic reads of a vendor bitstream file before packing
// it into an image: which of the two file forms it is and, for a .bit
// file, the fields of its header.
type Bitstream struct {
	// Form is "bit" (a header of named fields before the configuration
	// data) or "bin" (the configuration data alone).
	Form string
	// Design, Part, Date and Time are the .bit header's fields a to d
	// (empty for a .bin file): the design file Vivado wrote it from, the
	// part it configures, and when.
	Design, Part, Date, Time string
	// DataBytes is the size of the configuration data (the .bit header's
	// field e, or the whole .bin file).
	DataBytes int
}

// BitstreamError is a bitstream file Attach refuses: not a bitstream, cut
// short, or for another part.
type BitstreamError struct{ Err error }

func (e *BitstreamError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *BitstreamError) Unwrap() error { return e.Err }

// bitPreamble starts every .bit file: a 2-byte length 9, nine bytes of
// fixed pattern, and a 2-byte length 1 before the first key.
var bitPreamble = []byte{0x00, 0x09, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x00, 0x00, 0x01}

// syncWord marks the start of configuration packets (UG570, "Configuration
// Packets": the sync word 0xAA995566 follows the bus-width detection
// pattern and padding).
var syncWord = []byte{0xaa, 0x99, 0x55, 0x66}

// syncWithin is how far into the configuration data the sync word must
// come: after at most a few dozen words of padding and bus-width
// detection.
const syncWithin = 1024

// ParseBitstream reads b as an AMD (Xilinx) bitstream: a .bit file (the
// preamble, header fields a to d as 2-byte-length strings, field e as a
// 4-byte length and the configuration data, which must be all that
// follows) or a .bin file (configuration data alone). Either way the
// configuration data must carry the sync word within its first KiB.
// Anything else, such as a file of another kind or a .bit cut short, is
// an error saying what is wrong.
func ParseBitstream(b []byte) (Bitstream, error) {
	if !bytes.HasPrefix(b, bitPreamble) {
		if i := bytes.Index(b[:min(len(b), syncWithin)], syncWord); i < 0 {
			return Bitstream{}, errors.New("not a bitstream: no .bit header, and no sync word (0xAA995566) in the first 1 KiB of a .bin")
		}
		return Bitstream{Form: "bin", DataBytes: len(b)}, nil
	}
	bs := Bitstream{Form: "bit"}
	rest := b[len(bitPreamble):]
	for _, f := range []struct {
		key byte
		to  *string
	}{{'a', &bs.Design}, {'b', &bs.Part}, {'c', &bs.Date}, {'d', &bs.Time}} {
		if len(rest) < 3 || rest[0] != f.key {
			return Bitstream{}, fmt.Errorf(".bit header: field %q missing at byte %d", f.key, len(b)-len(rest))
		}
		n := int(binary.BigEndian.Uint16(rest[1:]))
		if len(rest) < 3+n {
			return Bitstream{}, fmt.Errorf(".bit header: field %q of %d bytes runs past the end of the file", f.key, n)
		}
		*f.to = strings.TrimRight(string(rest[3:3+n]), "\x00")
		rest = rest[3+n:]
	}
	if len(rest) < 5 || rest[0] != 'e' {
		return Bitstream{}, fmt.Errorf(".bit header: field 'e' (the configuration data's length) missing at byte %d", len(b)-len(rest))
	}
	n := int(binary.BigEndian.Uint32(rest[1:]))
	data := rest[5:]
	if n != len(data) {
		return Bitstream{}, fmt.Errorf(".bit header: the configuration data is %d bytes, the file holds %d after the header (cut short, or not one bitstream)", n, len(data))
	}
	if !bytes.Contains(data[:min(len(data), syncWithin)], syncWord) {
		return Bitstream{}, errors.New(".bit: no sync word (0xAA995566) in the first 1 KiB of the configuration data")
	}
	bs.DataBytes = n
	return bs, nil
}

// ForPart reports whether a .bit file's part field names the device of
// part (a full part name such as xcvu9p-flga2104-2L-e). Vivado writes the
// field with or without the "xc" prefix and with or without dashes
// (xcvu9p-flga2104-2L-e, 7a35tcpg236), so both are compared without them.
// A .bin file carries no part and is taken as it is.
func (bs Bitstream) ForPart(part string) bool {
	if bs.Form != "bit" {
		return true
	}
	norm := func(s string) string {
		return strings.TrimPrefix(strings.ReplaceAll(strings.ToLower(s), "-", ""), "xc")
	}
	dev, _, _ := strings.Cut(part, "-")
	return strings.HasPrefix(norm(bs.Part), norm(dev))
}
