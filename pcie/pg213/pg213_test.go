package pg213

import (
	"bytes"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"onic/tlp"
)

// docField is one row of a PG213 descriptor field table, as the guide
// writes it ("74:64").
type docField struct {
	bits  string
	value func(t *tlp.TLP) uint64
}

// fromDoc builds a descriptor from the guide's bit ranges, independently
// of the package's constants.
func fromDoc(t *tlp.TLP, n int, rows []docField) []byte {
	v := new(big.Int)
	for _, r := range rows {
		var hi, lo int
		if _, err := fmt.Sscanf(r.bits, "%d:%d", &hi, &lo); err != nil {
			fmt.Sscanf(r.bits, "%d", &hi)
			lo = hi
		}
		f := new(big.Int).SetUint64(r.value(t))
		f.And(f, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(hi-lo+1)), big.NewInt(1)))
		v.Or(v, f.Lsh(f, uint(lo)))
	}
	out := make([]byte, n)
	be := v.FillBytes(make([]byte, n))
	for i := range n {
		out[i] = be[n-1-i] // little-endian, as on the bus
	}
	return out
}

// TestCQAgainstGuide: ToCQ's descriptor equals one assembled from the
// guide's table (PG213, completer request descriptor for memory, I/O and
// atomic requests), and converts back to the same TLP.
func TestCQAgainstGuide(t *testing.T) {
	rows := []docField{
		{"1:0", func(t *tlp.TLP) uint64 { return uint64(t.AT) }},
		{"63:2", func(t *tlp.TLP) uint64 { return t.Address >> 2 }},
		{"74:64", func(t *tlp.TLP) uint64 { return uint64(t.Length) }},
		{"78:75", func(t *tlp.TLP) uint64 { return 0b0001 }}, // memory write
		{"95:80", func(t *tlp.TLP) uint64 { return uint64(t.RequesterID) }},
		{"103:96", func(t *tlp.TLP) uint64 { return uint64(t.Tag) }},
		{"111:104", func(t *tlp.TLP) uint64 { return 3 }},  // target function
		{"114:112", func(t *tlp.TLP) uint64 { return 2 }},  // BAR ID
		{"120:115", func(t *tlp.TLP) uint64 { return 20 }}, // BAR aperture: 1 MiB
		{"123:121", func(t *tlp.TLP) uint64 { return uint64(t.TC) }},
		{"126:124", func(t *tlp.TLP) uint64 { return uint64(t.Attr) }},
	}
	w := tlp.TLP{Fmt: tlp.Fmt4DWData, Length: 4, RequesterID: tlp.NewID(0x81, 3, 1), Tag: 0x2A, TC: 5, Attr: 6, AT: 1,
		FirstBE: 0xF, LastBE: 0x3, Address: 0x1234_5678_9ABC, Data: bytes.Repeat([]byte{0xA5}, 16)}
	c, err := ToCQ(&w, 2, 20, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := fromDoc(&w, 16, rows); !bytes.Equal(c.Descriptor[:], want) {
		t.Fatalf("descriptor\n got %x\nwant %x", c.Descriptor, want)
	}
	if id, ap := c.BAR(); id != 2 || ap != 20 || c.TargetFunction() != 3 {
		t.Fatalf("BAR %d aperture %d function %d", id, ap, c.TargetFunction())
	}
	back, err := c.TLP()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.String(), w.String(); got != want {
		t.Fatalf("back\n got %s\nwant %s", got, want)
	}
}

// TestCCAgainstGuide: ToCC's descriptor equals one assembled from the
// guide's completer completion descriptor table.
func TestCCAgainstGuide(t *testing.T) {
	rows := []docField{
		{"6:0", func(t *tlp.TLP) uint64 { return uint64(t.LowerAddress) }},
		{"9:8", func(t *tlp.TLP) uint64 { return uint64(t.AT) }},
		{"28:16", func(t *tlp.TLP) uint64 { return uint64(t.ByteCount) }},
		{"29", func(t *tlp.TLP) uint64 { return 0 }}, // not a locked read's completion
		{"42:32", func(t *tlp.TLP) uint64 { return uint64(t.Length) }},
		{"45:43", func(t *tlp.TLP) uint64 { return uint64(t.Status) }},
		{"46", func(t *tlp.TLP) uint64 { return 1 }}, // poisoned
		{"63:48", func(t *tlp.TLP) uint64 { return uint64(t.RequesterID) }},
		{"71:64", func(t *tlp.TLP) uint64 { return uint64(t.Tag) }},
		{"79:72", func(t *tlp.TLP) uint64 { return uint64(t.CompleterID) & 0xFF }}, // device/function
		{"87:80", func(t *tlp.TLP) uint64 { return uint64(t.CompleterID) >> 8 }},   // bus
		{"88", func(t *tlp.TLP) uint64 { return 1 }},                               // completer ID enable
		{"91:89", func(t *tlp.TLP) uint64 { return uint64(t.TC) }},
		{"94:92", func(t *tlp.TLP) uint64 { return uint64(t.Attr) }},
	}
	c := tlp.TLP{Fmt: tlp.Fmt3DWData, Type: 0b01010, Length: 2, RequesterID: tlp.NewID(1, 0, 0), CompleterID: tlp.NewID(0x40, 1, 2),
		Tag: 0x7E, Status: tlp.StatusSC, EP: true, TC: 3, Attr: 2, ByteCount: 8, LowerAddress: 0x44, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}
	cc, err := ToCC(&c, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := fromDoc(&c, 12, rows); !bytes.Equal(cc.Descriptor[:], want) {
		t.Fatalf("descriptor\n got %x\nwant %x", cc.Descriptor, want)
	}
	back, err := cc.TLP(tlp.NewID(9, 9, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := back.String(), c.String(); got != want {
		t.Fatalf("back\n got %s\nwant %s", got, want)
	}
}

// TestRoundTrip: random requests of every kind CQ carries, and random
// completions, convert to descriptors and back unchanged.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []tlp.Kind{tlp.MRd, tlp.MRdLk, tlp.MWr, tlp.IORd, tlp.IOWr, tlp.FetchAdd, tlp.Swap, tlp.CAS}
	for i := range 5000 {
		k := kinds[i%len(kinds)]
		addr := uint64(r.Uint32()) &^ 3
		if k != tlp.IORd && k != tlp.IOWr && r.IntN(2) == 0 {
			addr = r.Uint64()&^3 | 1<<40
		}
		f, typ, _ := tlp.FmtType(k, addr > 0xFFFF_FFFF, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), AT: uint8(r.IntN(4)),
			Length: uint16(1 + r.IntN(1024)), Tag: uint16(r.IntN(256)), RequesterID: tlp.ID(r.Uint32()),
			FirstBE: uint8(r.IntN(16)), LastBE: uint8(r.IntN(16)), Address: addr}
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
		}
		c, err := ToCQ(&x, r.IntN(6), 12+r.IntN(40), uint8(r.IntN(4)))
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.TLP()
		if err != nil || back.String() != x.String() {
			t.Fatalf("%v: %v\n got %s\nwant %s", k, err, back.String(), x.String())
		}
	}
	ckinds := []tlp.Kind{tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}
	for i := range 4000 {
		k := ckinds[i%len(ckinds)]
		f, typ, _ := tlp.FmtType(k, false, 0)
		x := tlp.TLP{Fmt: f, Type: typ, TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), Tag: uint16(r.IntN(256)),
			RequesterID: tlp.ID(r.Uint32()), CompleterID: tlp.ID(r.Uint32()), Status: tlp.Status(r.IntN(8)),
			ByteCount: uint16(1 + r.IntN(4096)), LowerAddress: uint8(r.IntN(128)), EP: r.IntN(2) == 0}
		if k.HasData() {
			x.Length = uint16(1 + r.IntN(1024))
			x.Data = make([]byte, 4*int(x.Length))
		}
		cc, err := ToCC(&x, true)
		if err != nil {
			t.Fatal(err)
		}
		back, err := cc.TLP(0)
		if err != nil || back.String() != x.String() {
			t.Fatalf("%v: %v\n got %s\nwant %s", k, err, back.String(), x.String())
		}
	}
}

// TestRefused: what CQ and CC cannot carry is an error naming it.
func TestRefused(t *testing.T) {
	cfg := tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0b00100, Length: 1}
	if _, err := ToCQ(&cfg, 0, 20, 0); err == nil || !strings.Contains(err.Error(), "CfgRd0") {
		t.Errorf("a configuration read: %v", err)
	}
	big := tlp.TLP{Fmt: tlp.Fmt3DW, Length: 1, Tag: 0x300}
	if _, err := ToCQ(&big, 0, 20, 0); err == nil || !strings.Contains(err.Error(), "8 bits") {
		t.Errorf("a 10-bit tag: %v", err)
	}
	var c CQ
	c.Descriptor[9] = 0b1100 << 3 // request type 1100: a message
	if _, err := c.TLP(); err == nil || !strings.Contains(err.Error(), "request type 1100") {
		t.Errorf("a message: %v", err)
	}
	mrd := tlp.TLP{Fmt: tlp.Fmt3DW, Length: 1}
	if _, err := ToCC(&mrd, false); err == nil {
		t.Error("a request as a completion")
	}
}

// TestFieldTable: on each interface its descriptor's fields fit the
// descriptor and no two of them share a bit (the CQ's target function and
// the RQ's completer ID share bits, as the CC's address type and the RC's
// lower address do: each is one interface's).
func TestFieldTable(t *testing.T) {
	for _, d := range []struct {
		iface  string
		bits   int
		fields []Field
	}{
		{"CQ", 128, []Field{ReqAT, ReqAddress, ReqDWCount, ReqType, ReqRequesterID, ReqTag, ReqTargetFn, ReqBARID, ReqBARAperture, ReqTC, ReqAttr}},
		{"RQ", 128, []Field{ReqAT, ReqAddress, ReqDWCount, ReqType, ReqPoisoned, ReqRequesterID, ReqTag, ReqCompleterID, ReqIDEnable, ReqTC, ReqAttr, ReqForceECRC}},
		{"CC", 96, []Field{CplLowerAddress, CplAT, CplByteCount, CplLocked, CplDWCount, CplStatus, CplPoisoned, CplRequesterID, CplTag, CplCompleterID, CplIDEnable, CplTC, CplAttr, CplForceECRC}},
		{"RC", 96, []Field{CplRCLowerAddress, CplErrorCode, CplByteCount, CplLocked, CplRequestDone, CplDWCount, CplStatus, CplPoisoned, CplRequesterID, CplTag, CplCompleterID, CplTC, CplAttr}},
	} {
		owner := make([]string, d.bits)
		for _, f := range d.fields {
			if f.W < 1 || f.Lo < 0 || f.Lo+f.W > d.bits {
				t.Errorf("%s: %s bits %d+%d outside the %d-bit descriptor", d.iface, f.Name, f.Lo, f.W, d.bits)
				continue
			}
			for b := f.Lo; b < f.Lo+f.W; b++ {
				if owner[b] != "" {
					t.Errorf("%s: bit %d is %s's and %s's", d.iface, b, owner[b], f.Name)
				}
				owner[b] = f.Name
			}
		}
	}
	for _, fs := range [][]Field{RequestFields, CompletionFields} {
		seen := map[string]bool{}
		for _, f := range fs {
			if seen[f.Name] {
				t.Errorf("%s listed twice", f.Name)
			}
			seen[f.Name] = true
		}
	}
}
