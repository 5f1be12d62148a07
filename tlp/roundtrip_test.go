package tlp

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randomTLP returns a TLP of kind k whose every field the kind carries holds
// a random value that fits its width. It is encodable but not necessarily
// valid under Validate's rules.
func randomTLP(r *rand.Rand, k Kind) TLP {
	addr64 := r.IntN(2) == 0 && k != IORd && k != IOWr
	route := Routing(r.IntN(8))
	f, typ, _ := FmtType(k, addr64, route)
	t := TLP{
		Fmt: f, Type: typ,
		TC: uint8(r.IntN(8)), Tag: uint16(r.IntN(1024)), Attr: Attr(r.IntN(8)),
		LN: r.IntN(2) == 0, TH: r.IntN(2) == 0, TD: r.IntN(4) == 0, EP: r.IntN(2) == 0, AT: uint8(r.IntN(4)),
	}
	if k.lengthDefined() {
		t.Length = uint16(1 + r.IntN(1024))
		if r.IntN(3) != 0 {
			t.Length = uint16(1 + r.IntN(16))
		}
	} else {
		t.Length = uint16(r.IntN(1024))
	}
	if k.HasData() {
		t.Data = make([]byte, int(t.Length)*4)
		for i := range t.Data {
			t.Data[i] = byte(r.Uint32())
		}
	}
	for i := r.IntN(3); i > 0; i-- {
		p := []byte{0x80 | byte(r.IntN(32)), byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}
		t.Prefixes = append(t.Prefixes, p...)
	}
	switch k.Class() {
	case ClassMemory, ClassIO, ClassAtomic:
		t.RequesterID = ID(r.Uint32())
		t.FirstBE, t.LastBE = uint8(r.IntN(16)), uint8(r.IntN(16))
		t.PH = uint8(r.IntN(4))
		if f.Is4DW() {
			t.Address = r.Uint64() &^ 3
		} else {
			t.Address = uint64(r.Uint32()) &^ 3
		}
	case ClassConfig:
		t.RequesterID, t.CompleterID = ID(r.Uint32()), ID(r.Uint32())
		t.FirstBE, t.LastBE = uint8(r.IntN(16)), uint8(r.IntN(16))
		t.Register = uint16(r.IntN(1024)) * 4
	case ClassMessage:
		t.RequesterID = ID(r.Uint32())
		t.MessageCode = uint8(r.Uint32())
		if route == RouteByAddress {
			t.Address = r.Uint64()
		} else {
			for i := range t.MessageData {
				t.MessageData[i] = byte(r.Uint32())
			}
		}
	case ClassCompletion:
		t.RequesterID, t.CompleterID = ID(r.Uint32()), ID(r.Uint32())
		t.Status = Status(r.IntN(8))
		t.BCM = r.IntN(2) == 0
		t.ByteCount = uint16(1 + r.IntN(4096))
		t.LowerAddress = uint8(r.IntN(128))
	}
	return t
}

// TestRoundTripRandom: for random field values of every kind, Decode of
// AppendBinary gives back the same fields, and AppendBinary of that gives
// the same bytes.
func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 7))
	for _, k := range Kinds() {
		for i := 0; i < 2000; i++ {
			x := randomTLP(r, k)
			b, err := x.AppendBinary(nil)
			if err != nil {
				t.Fatalf("%s: AppendBinary(%+v): %v", k, x, err)
			}
			if len(b) != x.Len() {
				t.Fatalf("%s: encoded %d bytes, Len says %d", k, len(b), x.Len())
			}
			var d TLP
			if err := d.Decode(b); err != nil {
				t.Fatalf("%s: Decode(%x): %v", k, b, err)
			}
			if x.TD {
				x.Digest = d.Digest
				if e := ECRC(b[:len(b)-4], len(x.Prefixes)); d.Digest != e {
					t.Fatalf("%s: digest %08x, ECRC %08x", k, d.Digest, e)
				}
			}
			if !equalFields(&d, &x) {
				t.Fatalf("%s: round trip changed fields\n got %+v\nwant %+v", k, d, x)
			}
			b2, err := d.AppendBinary(nil)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("%s: re-encode differs (%v)\n got %x\nwant %x", k, err, b2, b)
			}
		}
	}
}

// TestAppendBinaryAppends checks that encoding appends after existing
// content and can reuse a buffer's capacity without allocating.
func TestAppendBinaryAppends(t *testing.T) {
	x := TLP{Fmt: Fmt3DWData, Length: 1, FirstBE: 0xF, Address: 0x40, Data: []byte{1, 2, 3, 4}, TD: true}
	buf := append(make([]byte, 0, 256), 0xAA, 0xBB)
	out, err := x.AppendBinary(buf)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != 0xAA || out[1] != 0xBB || len(out) != 2+x.Len() {
		t.Fatalf("AppendBinary did not append: %x", out)
	}
	allocs := testing.AllocsPerRun(100, func() {
		out, _ = x.AppendBinary(buf[:0])
	})
	if allocs != 0 {
		t.Errorf("AppendBinary into a large enough buffer: %.1f allocs, want 0", allocs)
	}
}

// TestDecodeValidateAllocs proves the hot path allocation-free: decoding
// into a reused TLP and validating it, for every valid vector.
func TestDecodeValidateAllocs(t *testing.T) {
	for _, v := range vectors {
		b := mustHex(t, v.hex)
		var d TLP
		allocs := testing.AllocsPerRun(200, func() {
			if d.Decode(b) != nil || d.Validate() != nil {
				panic("vector stopped validating")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: Decode+Validate made %.1f allocs, want 0", v.name, allocs)
		}
		allocs = testing.AllocsPerRun(200, func() {
			if d.DecodeValidate(b) != nil {
				panic("vector stopped validating")
			}
		})
		if allocs != 0 {
			t.Errorf("%s: DecodeValidate made %.1f allocs, want 0", v.name, allocs)
		}
	}
	var n int
	allocs := testing.AllocsPerRun(100, func() {
		for c := range Chunks(0x1234, 100000, 256) {
			n += c.Size
		}
		for c := range Completions(0x1000, 1024, 0xF, 0xF, 64, 256) {
			n += int(c.LengthDW)
		}
	})
	if allocs != 0 {
		t.Errorf("Chunks/Completions: %.1f allocs, want 0", allocs)
	}
}

// randomRequest returns a random memory request (MRd, MRdLk or MWr) biased
// toward the edges of the memory rules: about half have a 32-bit address,
// no processing hint, or a length of 1-3 DWs.
func randomRequest(r *rand.Rand) TLP {
	k := []Kind{MRd, MRdLk, MWr}[r.IntN(3)]
	x := randomTLP(r, k)
	if r.IntN(2) == 0 {
		x.Address &= 0xFFFFFFFF
	}
	if r.IntN(2) == 0 {
		x.PH = 0
	}
	if r.IntN(2) == 0 {
		x.Length = uint16(1 + r.IntN(3))
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
		}
	}
	return x
}

// TestMemoryFastPathAgrees checks memoryOK, Validate's one-expression test
// for memory requests, against the rule-by-rule checks of memoryErr over
// random field values.
func TestMemoryFastPathAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 200000; i++ {
		x := randomRequest(r)
		k := x.Kind()
		if x.memoryOK(k) != (x.memoryErr(k) == nil) {
			t.Fatalf("%s: memoryOK %v but memoryErr %v for %+v", k, x.memoryOK(k), x.memoryErr(k), x)
		}
	}
}
