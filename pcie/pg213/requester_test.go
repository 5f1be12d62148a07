package pg213

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"onic/tlp"
)

// TestRQAgainstGuide: ToRQ's descriptor equals one assembled from the
// guide's requester request descriptor table, and reads back as the same
// request with the requester ID it enabled.
func TestRQAgainstGuide(t *testing.T) {
	rows := []docField{
		{"1:0", func(t *tlp.TLP) uint64 { return uint64(t.AT) }},
		{"63:2", func(t *tlp.TLP) uint64 { return t.Address >> 2 }},
		{"74:64", func(t *tlp.TLP) uint64 { return uint64(t.Length) }},
		{"78:75", func(t *tlp.TLP) uint64 { return 0b0000 }}, // memory read
		{"79", func(t *tlp.TLP) uint64 { return 0 }},         // poisoned
		{"95:80", func(t *tlp.TLP) uint64 { return uint64(t.RequesterID) }},
		{"103:96", func(t *tlp.TLP) uint64 { return uint64(t.Tag) }},
		{"119:104", func(t *tlp.TLP) uint64 { return 0 }}, // completer ID: configuration requests only
		{"120", func(t *tlp.TLP) uint64 { return 1 }},     // requester ID enable
		{"123:121", func(t *tlp.TLP) uint64 { return uint64(t.TC) }},
		{"126:124", func(t *tlp.TLP) uint64 { return uint64(t.Attr) }},
	}
	x := tlp.TLP{Fmt: tlp.Fmt4DW, Length: 128, RequesterID: tlp.NewID(0x10, 2, 0), Tag: 0x91, TC: 2, Attr: 1, AT: 0,
		FirstBE: 0xF, LastBE: 0xF, Address: 0x40_0000_1000}
	r, err := ToRQ(&x, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := fromDoc(&x, 16, rows); !bytes.Equal(r.Descriptor[:], want) {
		t.Fatalf("descriptor\n got %x\nwant %x", r.Descriptor, want)
	}
	back, err := r.TLP(tlp.NewID(9, 0, 0))
	if err != nil || back.String() != x.String() {
		t.Fatalf("back: %v\n got %s\nwant %s", err, back.String(), x.String())
	}
	r, _ = ToRQ(&x, false)
	if back, _ := r.TLP(tlp.NewID(9, 0, 0)); back.RequesterID != tlp.NewID(9, 0, 0) {
		t.Fatalf("without Requester ID Enable the block's ID is used, got %s", back.RequesterID)
	}
}

// TestRCAgainstGuide: ToRC's descriptor equals one assembled from the
// guide's requester completion descriptor table (12-bit lower address,
// error code, request completed).
func TestRCAgainstGuide(t *testing.T) {
	rows := []docField{
		{"11:0", func(t *tlp.TLP) uint64 { return 0xA80 | uint64(t.LowerAddress) }},
		{"15:12", func(t *tlp.TLP) uint64 { return 0 }}, // error code: none
		{"28:16", func(t *tlp.TLP) uint64 { return uint64(t.ByteCount) }},
		{"29", func(t *tlp.TLP) uint64 { return 0 }},
		{"30", func(t *tlp.TLP) uint64 { return 1 }}, // request completed
		{"42:32", func(t *tlp.TLP) uint64 { return uint64(t.Length) }},
		{"45:43", func(t *tlp.TLP) uint64 { return uint64(t.Status) }},
		{"46", func(t *tlp.TLP) uint64 { return 0 }},
		{"63:48", func(t *tlp.TLP) uint64 { return uint64(t.RequesterID) }},
		{"71:64", func(t *tlp.TLP) uint64 { return uint64(t.Tag) }},
		{"87:72", func(t *tlp.TLP) uint64 { return uint64(t.CompleterID) }},
		{"91:89", func(t *tlp.TLP) uint64 { return uint64(t.TC) }},
		{"94:92", func(t *tlp.TLP) uint64 { return uint64(t.Attr) }},
	}
	c := tlp.TLP{Fmt: tlp.Fmt3DWData, Type: 0b01010, Length: 4, RequesterID: tlp.NewID(0x10, 2, 0), CompleterID: tlp.NewID(3, 0, 0),
		Tag: 0x91, TC: 1, Attr: 4, ByteCount: 16, LowerAddress: 0x10, Data: make([]byte, 16)}
	r, err := ToRC(&c, 0x1234_5A90, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := fromDoc(&c, 12, rows); !bytes.Equal(r.Descriptor[:], want) {
		t.Fatalf("descriptor\n got %x\nwant %x", r.Descriptor, want)
	}
	back, code, done, err := r.TLP()
	if err != nil || back.String() != c.String() || code != 0 || !done {
		t.Fatalf("back: %v code %d done %v\n got %s\nwant %s", err, code, done, back.String(), c.String())
	}
}

// TestRequesterRoundTrip: random requests and completions convert to RQ
// and RC descriptors and back unchanged.
func TestRequesterRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	kinds := []tlp.Kind{tlp.MRd, tlp.MRdLk, tlp.MWr, tlp.IORd, tlp.IOWr, tlp.FetchAdd, tlp.Swap, tlp.CAS}
	for i := range 4000 {
		k := kinds[i%len(kinds)]
		addr := uint64(r.Uint32()) &^ 3
		if k != tlp.IORd && k != tlp.IOWr && r.IntN(2) == 0 {
			addr = r.Uint64()&^3 | 1<<40
		}
		f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), AT: uint8(r.IntN(4)), EP: r.IntN(3) == 0,
			Length: uint16(1 + r.IntN(1024)), Tag: uint16(r.IntN(256)), RequesterID: tlp.ID(r.Uint32()),
			FirstBE: uint8(r.IntN(16)), LastBE: uint8(r.IntN(16)), Address: addr}
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
		}
		q, err := ToRQ(&x, true)
		if err != nil {
			t.Fatal(err)
		}
		back, err := q.TLP(0)
		if err != nil || back.String() != x.String() {
			t.Fatalf("%v: %v\n got %s\nwant %s", k, err, back.String(), x.String())
		}
	}
	ckinds := []tlp.Kind{tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}
	for i := range 4000 {
		k := ckinds[i%len(ckinds)]
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), Tag: uint16(r.IntN(256)), EP: r.IntN(2) == 0,
			RequesterID: tlp.ID(r.Uint32()), CompleterID: tlp.ID(r.Uint32()), Status: tlp.Status(r.IntN(8)),
			ByteCount: uint16(1 + r.IntN(4096)), LowerAddress: uint8(r.IntN(128))}
		if k.HasData() {
			x.Length = uint16(1 + r.IntN(1024))
			x.Data = make([]byte, 4*int(x.Length))
		}
		done := r.IntN(2) == 0
		c, err := ToRC(&x, r.Uint64(), done)
		if err != nil {
			t.Fatal(err)
		}
		back, _, gotDone, err := c.TLP()
		if err != nil || back.String() != x.String() || gotDone != done {
			t.Fatalf("%v: %v done %v/%v\n got %s\nwant %s", k, err, gotDone, done, back.String(), x.String())
		}
	}
}
