package kernels

import (
	"bytes"
	"math"
	"testing"
)

// TestMXINT8: known blocks through the simulated quantiser — the scale
// is the largest magnitude's exponent, elements are 1.6 fixed point of
// it rounded to nearest even (ties 0.5 -> 0, 1.5 -> 2, 2.5 -> 2),
// 1.9921875 saturates to 127, a NaN makes the NaN scale and zeros, an
// all-zero block gets scale 2^-126.
func TestMXINT8(t *testing.T) {
	k, err := Lookup("quantize-mxint8")
	if err != nil {
		t.Fatal(err)
	}
	bf := func(vs ...float32) []byte {
		var b []byte
		for _, v := range vs {
			b = putLE(b, uint64(math.Float32bits(v)>>16), 2)
		}
		return b
	}
	for _, c := range []struct {
		in   []byte
		want []byte
	}{
		{bf(3, 1, -0.5, 0.75, 1.0/64, 3.0/64, 5.0/64), []byte{128, 96, 32, 0xF0, 24, 0, 2, 2}},
		{bf(1.9921875, -1.9921875, 0.25), []byte{127, 127, 0x81, 16}},
		{bf(1, float32(math.NaN()), 2), []byte{0xFF, 0, 0, 0}},
		{bf(0, 0), []byte{1, 0, 0}},
	} {
		got, _, err := k.Run([][]byte{c.in}, Traffic{Offer: 0.6, Ready: 0.6, Seed: 3})
		ref, _ := k.Reference([][]byte{c.in})
		if err != nil || !bytes.Equal(got, c.want) || !bytes.Equal(ref, c.want) {
			t.Errorf("%x: simulator %x, reference %x, want %x (%v)", c.in, got, ref, c.want, err)
		}
	}
}
