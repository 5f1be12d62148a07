// Package bittest writes stand-in AMD bitstream files for tests: the .bit
// file layout (docs/firmware.md, "Attaching bitstreams") around
// configuration data that is padding, the bus-width pattern, the sync word
// and zeros. No FPGA would accept the data; onic's checks of the file
// form, its length fields and its part do.
package bittest

import "encoding/binary"

// Bit returns a .bit file for part (as Vivado names it in the header)
// holding n bytes of configuration data (n >= 48).
func Bit(part string, n int) []byte {
	b := []byte{0x00, 0x09, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x0f, 0xf0, 0x00, 0x00, 0x01}
	for _, f := range []struct {
		key byte
		v   string
	}{{'a', "onic_top;UserID=0XFFFFFFFF;Version=2024.2"}, {'b', part}, {'c', "2026/11/24"}, {'d', "08:00:00"}} {
		b = append(b, f.key)
		b = binary.BigEndian.AppendUint16(b, uint16(len(f.v)+1))
		b = append(append(b, f.v...), 0)
	}
	b = append(b, 'e')
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	return append(b, Bin(n)...)
}

// Bin returns n bytes of .bin configuration data (n >= 48): padding, the
// bus-width detection words, padding, the sync word, then zeros.
func Bin(n int) []byte {
	d := make([]byte, n)
	for i := range 32 {
		d[i] = 0xff
	}
	copy(d[32:], []byte{0x00, 0x00, 0x00, 0xbb, 0x11, 0x22, 0x00, 0x44, 0xff, 0xff, 0xff, 0xff, 0xaa, 0x99, 0x55, 0x66})
	return d
}
