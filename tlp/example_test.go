package tlp_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"onic/tlp"
)

// Decode a TLP from wire bytes into a reused TLP, check it, and read its
// fields.
func ExampleTLP_Decode() {
	b, _ := hex.DecodeString("400000010100050ffedc001011223344")
	var t tlp.TLP // reuse across calls: Decode does not allocate
	if err := t.Decode(b); err != nil {
		panic(err)
	}
	if err := t.Validate(); err != nil {
		panic(err)
	}
	fmt.Println(t.Kind(), t.RequesterID, t.Address, t.Data)
	// Output: MWr 01:00.0 4275830800 [17 34 51 68]
}

// Decode and check received TLPs in one call each: a memory write that
// crosses a 4 KB boundary decodes, but is refused with the rule it breaks.
func ExampleTLP_DecodeValidate() {
	var t tlp.TLP
	for _, h := range []string{
		"400000010100050ffedc001011223344",         // MWr, 1 DW at 0xfedc0010
		"40000002010005ff00000ffc1122334455667788", // MWr, 2 DW at 0xffc
	} {
		b, _ := hex.DecodeString(h)
		err := t.DecodeValidate(b)
		fmt.Println(t.Kind(), t.Length, errors.Is(err, tlp.ErrCross4K))
	}
	// Output:
	// MWr 1 false
	// MWr 2 true
}

// Build a TLP from fields and encode it, appending to a buffer.
func ExampleTLP_AppendBinary() {
	f, typ, _ := tlp.FmtType(tlp.MRd, false, 0)
	t := tlp.TLP{Fmt: f, Type: typ, Length: 16, RequesterID: tlp.NewID(1, 0, 0), Tag: 7,
		FirstBE: 0xF, LastBE: 0xF, Address: 0x8000_1000}
	b, err := t.AppendBinary(nil)
	fmt.Printf("%x %v\n", b, err)
	// Output: 00000010010007ff80001000 <nil>
}

// A TLP that breaks a rule of the specification gets an error naming it.
func ExampleTLP_Validate() {
	b, _ := hex.DecodeString("00000002010005ff00000ffc") // MRd of 2 DW at 0xffc
	var t tlp.TLP
	_ = t.Decode(b)
	err := t.Validate()
	fmt.Println(errors.Is(err, tlp.ErrCross4K))
	fmt.Println(err)
	// Output:
	// true
	// cross-4k: MRd at 0xffc with Length 2 DW ends at 0x1004, past the 4 KB boundary 0x1000 — memory request crosses a 4 KB boundary (PCIe Base 5.0 §2.2.7)
}

// The zero-copy header view reads fields straight from the wire bytes.
func ExampleHeader() {
	b, _ := hex.DecodeString("4a0000010100000400000100deadbeef")
	h := tlp.Header(b)
	fmt.Println(h.Kind(), h.CompleterID(), h.Status(), h.ByteCount(), h.Tag())
	// Output: CplD 01:00.0 SC 4 1
}

// Split a DMA write into MWr TLPs under a Max_Payload_Size of 256 bytes.
func ExampleAppendWrites() {
	data := make([]byte, 600)
	ts, _ := tlp.AppendWrites(nil, tlp.NewID(1, 0, 0), 0, 0x1_0000_0F80, data, 256)
	for _, t := range ts {
		fmt.Printf("%s%d at %#x, %d DW\n", t.Kind(), 32+32*int(t.Fmt&1), t.Address, t.Length)
	}
	// Output:
	// MWr64 at 0x100000f80, 32 DW
	// MWr64 at 0x100001000, 64 DW
	// MWr64 at 0x100001100, 54 DW
}

// Answer a 512-byte read with completions under RCB 64 and MPS 256.
func ExampleCompletions() {
	for c := range tlp.Completions(0x1020, 128, 0xF, 0xF, 64, 256) {
		fmt.Printf("%d DW, byte count %d, lower address %#x\n", c.LengthDW, c.ByteCount, c.LowerAddress)
	}
	// Output:
	// 56 DW, byte count 512, lower address 0x20
	// 64 DW, byte count 288, lower address 0x0
	// 8 DW, byte count 32, lower address 0x0
}
