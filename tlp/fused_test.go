package tlp

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"
)

// sameDecode reports how a and b differ as decoded TLPs: every field equal,
// and Prefixes and Data viewing the same bytes of the same buffer. It
// returns "" when they are the same.
func sameDecode(a, b *TLP) string {
	view := func(x []byte) (unsafe.Pointer, int, int) {
		return unsafe.Pointer(unsafe.SliceData(x)), len(x), cap(x)
	}
	ap, al, ac := view(a.Prefixes)
	bp, bl, bc := view(b.Prefixes)
	if al != bl || ac != bc || al != 0 && ap != bp || !bytes.Equal(a.Prefixes, b.Prefixes) {
		return "Prefixes"
	}
	ap, al, ac = view(a.Data)
	bp, bl, bc = view(b.Data)
	if al != bl || ac != bc || al != 0 && ap != bp || (a.Data == nil) != (b.Data == nil) {
		return "Data"
	}
	x, y := *a, *b
	x.Prefixes, x.Data, y.Prefixes, y.Data = nil, nil, nil, nil
	if !reflect.DeepEqual(x, y) {
		return "fields"
	}
	return ""
}

// checkFused holds for any input b: Decode's straight path for memory
// requests (decodeMemory) fills exactly what the general decoder does, its
// valid flag says exactly whether Validate would pass a digest-free
// request, and DecodeValidate returns what Decode followed by Validate
// returns, leaving the same TLP behind.
func checkFused(t *testing.T, b []byte) {
	t.Helper()
	var general, straight, two, fused TLP
	generalOnly = true
	generalErr := general.Decode(b)
	generalOnly = false
	done, valid := straight.decodeMemory(b, true)
	if done {
		if generalErr != nil {
			t.Fatalf("%x: straight path decoded what the general one rejects (%v)", b, generalErr)
		}
		if d := sameDecode(&straight, &general); d != "" {
			t.Fatalf("%x: straight and general decode differ in %s\n straight %+v\n general  %+v", b, d, straight, general)
		}
		if want := !general.TD && general.Validate() == nil; valid != want {
			t.Fatalf("%x: straight path says valid=%v, Validate says %v", b, valid, want)
		}
	} else if sameDecode(&straight, &TLP{}) != "" {
		t.Fatalf("%x: straight path declined but wrote %+v", b, straight)
	}
	var twoErr error
	if twoErr = two.Decode(b); twoErr == nil {
		twoErr = two.Validate()
	}
	fusedErr := fused.DecodeValidate(b)
	if (twoErr == nil) != (fusedErr == nil) || twoErr != nil && twoErr.Error() != fusedErr.Error() {
		t.Fatalf("%x: Decode+Validate gives %v, DecodeValidate %v", b, twoErr, fusedErr)
	}
	if d := sameDecode(&fused, &two); d != "" {
		t.Fatalf("%x: DecodeValidate leaves a TLP differing in %s", b, d)
	}
}

// TestDecodeValidateAgrees runs checkFused over every vector, every bad
// vector, each of them with every bit flipped and cut at every length, and
// random memory requests with random fields (most breaking some rule).
func TestDecodeValidateAgrees(t *testing.T) {
	var inputs [][]byte
	for _, v := range vectors {
		inputs = append(inputs, mustHex(t, v.hex))
	}
	for _, v := range badVectors {
		inputs = append(inputs, mustHex(t, v.hex))
	}
	for _, orig := range inputs {
		checkFused(t, orig)
		for n := range len(orig) {
			checkFused(t, orig[:n:n])
		}
		for bit := range len(orig) * 8 {
			b := bytes.Clone(orig)
			b[bit/8] ^= 1 << (bit % 8)
			checkFused(t, b)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	straight := 0
	for range 100000 {
		x := randomRequest(r)
		if r.IntN(2) == 0 {
			x.Prefixes = nil
		}
		if r.IntN(2) == 0 {
			x.TD = false
		}
		b, err := x.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%+v does not encode: %v", x, err)
		}
		var d TLP
		if done, valid := d.decodeMemory(b, true); done && valid {
			straight++
		}
		checkFused(t, b)
	}
	// The random requests must reach the straight path's valid case often
	// enough for the comparison to mean something.
	if straight < 10000 {
		t.Fatalf("only %d of 100000 random requests took the straight path as valid", straight)
	}
}
