package tlp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad test hex %q: %v", s, err)
	}
	return b
}

// vectors are hand-assembled from the header figures of PCIe Base
// Specification 5.0 §2.2; each lists the fields Decode must produce.
var vectors = []struct {
	name string
	hex  string
	want TLP
}{
	{"MWr32 1DW", "40000001 0100050f fedc0010 11223344",
		TLP{Fmt: Fmt3DWData, Type: 0, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 5, FirstBE: 0xF, Address: 0xFEDC0010, Data: []byte{0x11, 0x22, 0x33, 0x44}}},
	{"MRd64 TC2 RO 10-bit tag", "20a82020 02193aff 00000012 34567800",
		TLP{Fmt: Fmt4DW, Type: 0, TC: 2, Attr: AttrRO, Length: 32, RequesterID: NewID(2, 3, 1), Tag: 0x33A, FirstBE: 0xF, LastBE: 0xF, Address: 0x1234567800}},
	{"MRd32 length 1024 IDO", "00040000 0000ffff 80000000",
		TLP{Fmt: Fmt3DW, Type: 0, Attr: AttrIDO, Length: 1024, Tag: 0xFF, FirstBE: 0xF, LastBE: 0xF, Address: 0x80000000}},
	{"MRd32 NS", "00001001 00000001 80000004",
		TLP{Fmt: Fmt3DW, Type: 0, Attr: AttrNS, Length: 1, Tag: 0, FirstBE: 0x1, Address: 0x80000004}},
	{"MRdLk32", "01000001 01000903 00002000",
		TLP{Fmt: Fmt3DW, Type: 1, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 9, FirstBE: 0x3, Address: 0x2000}},
	{"MRd32 TH PH steering tag", "00010001 01000aa5 00003002",
		TLP{Fmt: Fmt3DW, Type: 0, TH: true, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 10, FirstBE: 0x5, LastBE: 0xA, Address: 0x3000, PH: 2}},
	{"MWr64 AT translated EP", "60004402 0a000cff 00000001 00000000 01020304 05060708",
		TLP{Fmt: Fmt4DWData, Type: 0, EP: true, AT: 1, Length: 2, RequesterID: NewID(10, 0, 0), Tag: 12, FirstBE: 0xF, LastBE: 0xF, Address: 0x100000000, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
	{"IORd", "02000001 0100030f 00000cf8",
		TLP{Fmt: Fmt3DW, Type: 2, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 3, FirstBE: 0xF, Address: 0xCF8}},
	{"IOWr", "42000001 01000401 00000080 aa000000",
		TLP{Fmt: Fmt3DWData, Type: 2, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 4, FirstBE: 0x1, Address: 0x80, Data: []byte{0xAA, 0, 0, 0}}},
	{"CfgRd0 extended register", "04000001 0000010f 01000104",
		TLP{Fmt: Fmt3DW, Type: 4, Length: 1, Tag: 1, FirstBE: 0xF, CompleterID: NewID(1, 0, 0), Register: 0x104}},
	{"CfgWr0", "44000001 00000203 010800 10 ffffffff",
		TLP{Fmt: Fmt3DWData, Type: 4, Length: 1, Tag: 2, FirstBE: 0x3, CompleterID: NewID(1, 1, 0), Register: 0x10, Data: []byte{0xFF, 0xFF, 0xFF, 0xFF}}},
	{"CfgRd1", "05000001 0000070f 02000000",
		TLP{Fmt: Fmt3DW, Type: 5, Length: 1, Tag: 7, FirstBE: 0xF, CompleterID: NewID(2, 0, 0)}},
	{"CfgWr1", "45000001 0000080f 0309 0f fc 12345678",
		TLP{Fmt: Fmt3DWData, Type: 5, Length: 1, Tag: 8, FirstBE: 0xF, CompleterID: NewID(3, 1, 1), Register: 0xFFC, Data: []byte{0x12, 0x34, 0x56, 0x78}}},
	{"Cpl UR", "0a000000 01002004 00000100",
		TLP{Fmt: Fmt3DW, Type: 0xA, CompleterID: NewID(1, 0, 0), Status: StatusUR, ByteCount: 4, Tag: 1}},
	{"CplD config read", "4a000001 01000004 00000100 deadbeef",
		TLP{Fmt: Fmt3DWData, Type: 0xA, Length: 1, CompleterID: NewID(1, 0, 0), Status: StatusSC, ByteCount: 4, Tag: 1, Data: []byte{0xDE, 0xAD, 0xBE, 0xEF}}},
	{"CplD memory read with lower address", "4a000001 01000003 02001641 00112233",
		TLP{Fmt: Fmt3DWData, Type: 0xA, Length: 1, CompleterID: NewID(1, 0, 0), ByteCount: 3, RequesterID: NewID(2, 0, 0), Tag: 0x16, LowerAddress: 0x41, Data: []byte{0, 0x11, 0x22, 0x33}}},
	{"CplD byte count 4096 BCM", "4a000001 01001000 00000000 00000000",
		TLP{Fmt: Fmt3DWData, Type: 0xA, Length: 1, CompleterID: NewID(1, 0, 0), BCM: true, ByteCount: 4096, Data: []byte{0, 0, 0, 0}}},
	{"CplLk CRS", "0b000000 01004004 00000000",
		TLP{Fmt: Fmt3DW, Type: 0xB, CompleterID: NewID(1, 0, 0), Status: StatusCRS, ByteCount: 4}},
	{"CplDLk", "4b000001 01000004 00000000 01020304",
		TLP{Fmt: Fmt3DWData, Type: 0xB, Length: 1, CompleterID: NewID(1, 0, 0), ByteCount: 4, Data: []byte{1, 2, 3, 4}}},
	{"Msg Assert_INTA local", "34000000 01000020 00000000 00000000",
		TLP{Fmt: Fmt4DW, Type: 0x14, RequesterID: NewID(1, 0, 0), MessageCode: MsgAssertINTA}},
	{"Msg ERR_FATAL to RC", "30000000 02000033 00000000 00000000",
		TLP{Fmt: Fmt4DW, Type: 0x10, RequesterID: NewID(2, 0, 0), MessageCode: MsgErrFatal}},
	{"Msg PME_Turn_Off broadcast", "33000000 00000019 00000000 00000000",
		TLP{Fmt: Fmt4DW, Type: 0x13, MessageCode: MsgPMETurnOff}},
	{"Msg PME_TO_Ack gathered", "35000000 01000 01b 00000000 00000000",
		TLP{Fmt: Fmt4DW, Type: 0x15, RequesterID: NewID(1, 0, 0), MessageCode: MsgPMETOAck}},
	{"MsgD Set_Slot_Power_Limit", "74000001 00000050 00000000 00000000 000000fa",
		TLP{Fmt: Fmt4DWData, Type: 0x14, Length: 1, MessageCode: MsgSetSlotPowerLimit, Data: []byte{0, 0, 0, 0xFA}}},
	{"MsgD vendor type 1 by ID", "72000002 0100007f 03000001 00000042 cafebabe 00000001",
		TLP{Fmt: Fmt4DWData, Type: 0x12, Length: 2, RequesterID: NewID(1, 0, 0), MessageCode: MsgVendorType1,
			MessageData: [8]byte{3, 0, 0, 1, 0, 0, 0, 0x42}, Data: []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 1}}},
	{"Msg by address", "31000000 01000060 00000001 00000040",
		TLP{Fmt: Fmt4DW, Type: 0x11, RequesterID: NewID(1, 0, 0), MessageCode: 0x60, Address: 0x100000040}},
	{"FetchAdd32 4B", "4c000001 01001100 00001000 00000001",
		TLP{Fmt: Fmt3DWData, Type: 0xC, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 0x11, Address: 0x1000, Data: []byte{0, 0, 0, 1}}},
	{"Swap64 8B", "6d000002 01001200 00000002 00000008 00000000 00000001",
		TLP{Fmt: Fmt4DWData, Type: 0xD, Length: 2, RequesterID: NewID(1, 0, 0), Tag: 0x12, Address: 0x200000008, Data: []byte{0, 0, 0, 0, 0, 0, 0, 1}}},
	{"CAS32 16B", "4e000004 01001300 00002010 00000001 00000002 00000003 00000004",
		TLP{Fmt: Fmt3DWData, Type: 0xE, Length: 4, RequesterID: NewID(1, 0, 0), Tag: 0x13, Address: 0x2010, Data: []byte{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4}}},
	{"CAS64 32B", "6e000008 01001400 00000001 00000000" + strings.Repeat("00000000", 8),
		TLP{Fmt: Fmt4DWData, Type: 0xE, Length: 8, RequesterID: NewID(1, 0, 0), Tag: 0x14, Address: 0x100000000, Data: make([]byte, 32)}},
	{"MRd64 with PASID and local vendor prefixes", "8e00abcd 91012345 20000001 0100150f 00000001 00000000",
		TLP{Prefixes: []byte{0x8E, 0, 0xAB, 0xCD, 0x91, 0x01, 0x23, 0x45}, Fmt: Fmt4DW, Length: 1, RequesterID: NewID(1, 0, 0), Tag: 0x15, FirstBE: 0xF, Address: 0x100000000}},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			b := mustHex(t, v.hex)
			var got TLP
			if err := got.Decode(b); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !equalFields(&got, &v.want) {
				t.Fatalf("Decode fields\n got %+v\nwant %+v", got, v.want)
			}
			enc, err := v.want.AppendBinary(nil)
			if err != nil {
				t.Fatalf("AppendBinary: %v", err)
			}
			if !bytes.Equal(enc, b) {
				t.Fatalf("AppendBinary\n got %x\nwant %x", enc, b)
			}
		})
	}
}

// equalFields compares the exported fields, treating nil and empty slices
// alike.
func equalFields(a, b *TLP) bool {
	x, y := *a, *b
	x.hdr, y.hdr, x.hdrLen, y.hdrLen = [16]byte{}, [16]byte{}, 0, 0
	x.keepDigest, y.keepDigest = false, false
	if !bytes.Equal(x.Data, y.Data) || !bytes.Equal(x.Prefixes, y.Prefixes) {
		return false
	}
	x.Data, y.Data, x.Prefixes, y.Prefixes = nil, nil, nil, nil
	return reflect.DeepEqual(x, y)
}

func TestEveryKindHasAVector(t *testing.T) {
	seen := map[Kind]bool{}
	for _, v := range vectors {
		seen[v.want.Kind()] = true
	}
	for _, k := range Kinds() {
		if !seen[k] {
			t.Errorf("no hand-checked vector for %s", k)
		}
	}
}

func TestKindTable(t *testing.T) {
	for _, k := range Kinds() {
		for _, addr64 := range []bool{false, true} {
			f, typ, ok := FmtType(k, addr64, RouteLocal)
			if !ok {
				continue
			}
			if got := KindOf(f, typ); got != k {
				t.Errorf("FmtType(%s, %v) = %03b/%05b, which decodes as %s", k, addr64, f, typ, got)
			}
			if f.HasData() != k.HasData() {
				t.Errorf("%s: Fmt %03b HasData %v, kind says %v", k, f, f.HasData(), k.HasData())
			}
		}
		if name := k.String(); name == "invalid" {
			t.Errorf("kind %d has no name", k)
		} else if p, ok := ParseKind(name); !ok || p != k {
			t.Errorf("ParseKind(%q) = %v, %v", name, p, ok)
		}
	}
	// Every reserved combination decodes as invalid.
	reserved := 0
	for f := Fmt(0); f < 8; f++ {
		for typ := uint8(0); typ < 32; typ++ {
			if KindOf(f, typ) == KindInvalid {
				reserved++
			}
		}
	}
	// 256 combinations; 38 are assigned (Table 2-3: MRd, MRdLk, MWr and the
	// three AtomicOps in two header sizes, IORd, IOWr, four configuration
	// kinds, eight routings each of Msg and MsgD, four completions).
	// Prefixes count as reserved here because Decode handles them first.
	if reserved != 256-38 {
		t.Errorf("%d reserved Fmt/Type combinations, want %d", reserved, 256-38)
	}
}

func TestIDFormatAndParse(t *testing.T) {
	for _, tc := range []struct {
		id ID
		s  string
	}{{NewID(0, 0, 0), "00:00.0"}, {NewID(0xAB, 0x1F, 7), "ab:1f.7"}, {NewID(1, 2, 3), "01:02.3"}} {
		if got := tc.id.String(); got != tc.s {
			t.Errorf("String = %q, want %q", got, tc.s)
		}
		if p, err := ParseID(tc.s); err != nil || p != tc.id {
			t.Errorf("ParseID(%q) = %v, %v", tc.s, p, err)
		}
	}
	for _, bad := range []string{"", "1:2", "100:00.0", "00:20.0", "00:00.8", "zz:00.0", "00.00:0"} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
}

// refECRC is a bit-serial evaluation of §2.7.1 written from the
// specification's description, independent of hash/crc32: a 32-bit shift
// register seeded with all ones, polynomial 04C11DB7h in its natural (MSB
// = x^31) orientation, bytes fed bit 0 first, variant bits as 1, the
// remainder complemented, and each result byte bit-reversed into the digest
// with result bits 31:24 in digest byte 0.
func refECRC(covered []byte, hdrOff int) uint32 {
	reg := uint32(0xFFFFFFFF)
	for i, c := range covered {
		if i == hdrOff {
			c |= 0x01
		}
		if i == hdrOff+2 {
			c |= 0x40
		}
		for bit := 0; bit < 8; bit++ {
			in := uint32(c>>bit) & 1
			top := reg >> 31
			reg <<= 1
			if top^in == 1 {
				reg ^= 0x04C11DB7
			}
		}
	}
	reg = ^reg
	var d [4]byte
	for i := 0; i < 4; i++ {
		r := uint8(reg >> (24 - 8*i))
		var rev uint8
		for bit := 0; bit < 8; bit++ {
			rev |= (r >> bit & 1) << (7 - bit)
		}
		d[i] = rev
	}
	return uint32(d[0])<<24 | uint32(d[1])<<16 | uint32(d[2])<<8 | uint32(d[3])
}

func TestECRCMatchesBitSerialReference(t *testing.T) {
	for _, v := range vectors {
		w := v.want
		w.TD = true
		enc, err := w.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		// Only End-End prefixes are covered; drop local ones for the
		// reference.
		var covered []byte
		for i := 0; i < len(w.Prefixes); i += 4 {
			if w.Prefixes[i]&0x10 != 0 {
				covered = append(covered, w.Prefixes[i:i+4]...)
			}
		}
		hdrOff := len(covered)
		covered = append(covered, enc[len(w.Prefixes):len(enc)-4]...)
		want := refECRC(covered, hdrOff)
		got := uint32(enc[len(enc)-4])<<24 | uint32(enc[len(enc)-3])<<16 | uint32(enc[len(enc)-2])<<8 | uint32(enc[len(enc)-1])
		if got != want {
			t.Errorf("%s: digest %08x, bit-serial reference %08x", v.name, got, want)
		}
		var d TLP
		if err := d.Decode(enc); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("%s with ECRC: %v", v.name, err)
		}
		// Variant bits do not change the digest; any other bit does.
		enc[len(w.Prefixes)+2] ^= 0x40 // EP
		if err := d.Decode(enc); err != nil || d.Validate() != nil {
			t.Errorf("%s: flipping EP broke the ECRC check (%v)", v.name, d.Validate())
		}
		enc[len(enc)-5] ^= 0x80
		if err := d.Decode(enc); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if err := d.Validate(); !errors.Is(err, ErrECRC) {
			t.Errorf("%s: corrupted TLP validated as %v, want %v", v.name, err, ErrECRC)
		}
	}
}
