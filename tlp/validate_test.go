package tlp

import (
	"errors"
	"strings"
	"testing"
)

// badVectors are TLPs that break exactly one rule; the test checks Decode or
// Validate names that rule.
var badVectors = []struct {
	name string
	hex  string
	rule Rule
}{
	{"empty", "", ErrTruncatedHeader},
	{"three bytes", "400000", ErrTruncatedHeader},
	{"3DW header cut", "40000001 0100050f fedc00", ErrTruncatedHeader},
	{"4DW header cut", "20000001 0100050f 00000001", ErrTruncatedHeader},
	{"prefix only", "91012345", ErrTruncatedHeader},
	{"prefix cut", "910123", ErrTruncatedHeader},
	{"payload cut", "40000002 0100050f fedc0010 11223344", ErrTruncatedPayload},
	{"digest cut", "40008001 0100050f fedc0010 11223344 aabb", ErrTruncatedPayload},
	{"trailing payload", "40000001 0100050f fedc0010 11223344 55667788", ErrLengthMismatch},
	{"data on a read", "00000001 0100050f fedc0010 11223344", ErrLengthMismatch},
	{"reserved fmt 101", "a0000001 0100050f fedc0010", ErrReservedFmtType},
	{"reserved type 00011", "03000001 0100050f fedc0010", ErrReservedFmtType},
	{"IORd with 4DW", "22000001 0100050f 00000000 00000cf8", ErrReservedFmtType},
	{"Msg with 3DW", "14000000 01000020 00000000", ErrReservedFmtType},
	{"deprecated TCfgRd", "1b000001 0100050f 00000000", ErrReservedFmtType},
	{"five End-End prefixes", strings.Repeat("91000000", 5) + "00000001 0100050f 00001000", ErrPrefix},
	{"MRd crossing 4K", "00000002 010005ff 00000ffc", ErrCross4K},
	{"MWr crossing 4K", "40000002 010005ff 00001ffc 00000000 00000000", ErrCross4K},
	{"MRd 1024 DW unaligned", "00000000 0100ffff 00000004", ErrCross4K},
	{"first BE zero", "00000002 010005f0 00001000", ErrFirstBEZero},
	{"last BE with length 1", "00000001 010005ff 00001000", ErrLastBE},
	{"last BE zero with length 3", "00000003 0100050f 00001000", ErrLastBE},
	{"first BE not contiguous, 3 DW", "00000003 010005f5 00001000", ErrBENonContiguous},
	{"last BE not contiguous, 3 DW", "00000003 010005bf 00001000", ErrBENonContiguous},
	{"2 DW not QW aligned, gaps", "00000002 010005f5 00001004", ErrBENonContiguous},
	{"IORd length 2", "02000002 0100050f 00000cf8", ErrIOConfigLength},
	{"CfgRd0 length 2", "04000002 0100050f 01000000", ErrIOConfigLength},
	{"CfgWr0 TC 1", "44100001 0100050f 01000000 00000000", ErrIOConfigField},
	{"IORd attr RO", "02002001 0100050f 00000cf8", ErrIOConfigField},
	{"IORd last BE", "02000001 010005ff 00000cf8", ErrIOConfigField},
	{"CfgRd1 TH", "05010001 0100050f 01000000", ErrIOConfigField},
	{"FetchAdd 12 bytes", "4c000003 01001100 00001000 00000001 00000000 00000000", ErrAtomicSize},
	{"CAS 4 bytes", "4e000001 01001300 00002000 00000001", ErrAtomicSize},
	{"Swap 8B misaligned", "4d000002 01001200 00001004 00000000 00000001", ErrAtomicAlign},
	{"CAS 16B operands misaligned", "4e000008 01001300 00002008" + strings.Repeat("00000000", 8), ErrAtomicAlign},
	{"CplD last: length too long", "4a000002 01000004 00000000 00000000 00000000", ErrByteCount},
	{"CplD last: lower address pushes past", "4a000001 01000004 00000001 00000000", ErrByteCount},
	{"CplD partial not on 64B", "4a000004 01000080 00000010 00000000 00000000 00000000 00000000", ErrByteCount},
	{"Cpl reserved status", "0a000000 0100e004 00000000", ErrCplStatus},
	{"CplD with UR", "4a000001 01002004 00000000 00000000", ErrCplStatus},
	{"Cpl reserved length", "0a000001 01000004 00000000", ErrReservedBits},
	{"Cpl reserved bit in byte 11", "0a000000 01000004 00000080", ErrReservedBits},
	{"CfgRd0 reserved bits", "04000001 0100050f 010010 00", ErrReservedBits},
	{"MRd32 PH without TH", "00000001 0100050f 00001001", ErrReservedBits},
	{"Cpl TH", "0a010000 01000004 00000000", ErrReservedBits},
	{"Msg AT", "34000400 01000020 00000000 00000000", ErrReservedBits},
	{"MRd64 below 4 GB", "20000001 0100050f 00000000 00001000", ErrAddress64},
	{"FetchAdd64 below 4 GB", "6c000001 01001100 00000000 00001000 00000001", ErrAddress64},
	{"INTA not local", "30000000 01000020 00000000 00000000", ErrMessage},
	{"INTA with data", "74000001 01000020 00000000 00000000 00000000", ErrMessage},
	{"Set_Slot_Power_Limit without data", "34000000 00000050 00000000 00000000", ErrMessage},
	{"ECRC mismatch", "40008001 0100050f fedc0010 11223344 00000000", ErrECRC},
}

func TestBadVectors(t *testing.T) {
	for _, v := range badVectors {
		t.Run(v.name, func(t *testing.T) {
			var d TLP
			err := d.Decode(mustHex(t, v.hex))
			if err == nil {
				err = d.Validate()
			}
			if !errors.Is(err, v.rule) {
				t.Fatalf("got %v, want rule %s", err, v.rule.Name())
			}
			var te *Error
			if !errors.As(err, &te) || te.Detail == "" {
				t.Fatalf("error %v is not a detailed *tlp.Error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, v.rule.Name()+": ") || !strings.Contains(msg, "§"+v.rule.Section()) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q does not name rule %s and §%s on one line", msg, v.rule.Name(), v.rule.Section())
			}
		})
	}
}

func TestEveryRuleIsExercised(t *testing.T) {
	seen := map[Rule]bool{ErrFieldRange: true} // encoding only; TestEncodeRejects covers it
	for _, v := range badVectors {
		seen[v.rule] = true
	}
	for _, r := range Rules() {
		if !seen[r] {
			t.Errorf("rule %s has no bad vector", r.Name())
		}
		if r.Section() == "" || strings.HasPrefix(r.Name(), "rule-") {
			t.Errorf("rule %d lacks a name or section", r)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	base := func() TLP {
		return TLP{Fmt: Fmt3DWData, Length: 1, FirstBE: 0xF, Address: 0x1000, Data: make([]byte, 4)}
	}
	for _, tc := range []struct {
		name string
		mod  func(*TLP)
		rule Rule
	}{
		{"tc 8", func(t *TLP) { t.TC = 8 }, ErrFieldRange},
		{"tag 1024", func(t *TLP) { t.Tag = 1024 }, ErrFieldRange},
		{"attr 8", func(t *TLP) { t.Attr = 8 }, ErrFieldRange},
		{"at 4", func(t *TLP) { t.AT = 4 }, ErrFieldRange},
		{"ph 4", func(t *TLP) { t.PH = 4 }, ErrFieldRange},
		{"first_be 16", func(t *TLP) { t.FirstBE = 16 }, ErrFieldRange},
		{"length 0", func(t *TLP) { t.Length = 0; t.Data = nil }, ErrFieldRange},
		{"length 1025", func(t *TLP) { t.Length = 1025; t.Data = make([]byte, 4100) }, ErrFieldRange},
		{"data short", func(t *TLP) { t.Data = t.Data[:3] }, ErrLengthMismatch},
		{"data on a read", func(t *TLP) { t.Fmt = Fmt3DW }, ErrLengthMismatch},
		{"64-bit address in 3DW", func(t *TLP) { t.Address = 1 << 32 }, ErrFieldRange},
		{"unaligned address", func(t *TLP) { t.Address = 0x1001 }, ErrFieldRange},
		{"reserved fmt/type", func(t *TLP) { t.Type = 3 }, ErrReservedFmtType},
		{"prefix not whole DW", func(t *TLP) { t.Prefixes = []byte{0x91, 0} }, ErrFieldRange},
		{"prefix without Fmt 100", func(t *TLP) { t.Prefixes = []byte{0x11, 0, 0, 0} }, ErrFieldRange},
		{"register unaligned", func(t *TLP) { *t = TLP{Fmt: Fmt3DW, Type: 4, Length: 1, Register: 0x102} }, ErrFieldRange},
		{"register 4096", func(t *TLP) { *t = TLP{Fmt: Fmt3DW, Type: 4, Length: 1, Register: 0x1000} }, ErrFieldRange},
		{"byte count 0", func(t *TLP) { *t = TLP{Fmt: Fmt3DW, Type: 0xA} }, ErrFieldRange},
		{"status 8", func(t *TLP) { *t = TLP{Fmt: Fmt3DW, Type: 0xA, ByteCount: 4, Status: 8} }, ErrFieldRange},
		{"lower address 128", func(t *TLP) { *t = TLP{Fmt: Fmt3DW, Type: 0xA, ByteCount: 4, LowerAddress: 128} }, ErrFieldRange},
	} {
		x := base()
		tc.mod(&x)
		buf := []byte{0xEE}
		out, err := x.AppendBinary(buf)
		if !errors.Is(err, tc.rule) {
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.rule.Name())
		}
		if len(out) != 1 || out[0] != 0xEE {
			t.Errorf("%s: failed encode changed the buffer to %x", tc.name, out)
		}
	}
}

// TestReservedBitsAreTheOnlyLoss flips every header bit of every valid
// vector: the result either fails Decode/Validate or re-encodes to exactly
// the flipped bytes. So no bit that Validate accepts is lost by decoding.
func TestReservedBitsAreTheOnlyLoss(t *testing.T) {
	for _, v := range vectors {
		orig := mustHex(t, v.hex)
		for bit := 0; bit < len(orig)*8; bit++ {
			b := append([]byte(nil), orig...)
			b[bit/8] ^= 1 << (bit % 8)
			var d TLP
			if d.Decode(b) != nil || d.Validate() != nil {
				continue
			}
			enc, err := d.AppendBinary(nil)
			if err != nil {
				t.Fatalf("%s bit %d: valid TLP does not encode: %v", v.name, bit, err)
			}
			if string(enc) != string(b) {
				t.Fatalf("%s bit %d: valid TLP re-encodes differently\n got %x\nwant %x", v.name, bit, enc, b)
			}
		}
	}
}
