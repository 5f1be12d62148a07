package kernels

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// TestBlockSum: known answers for the exponent alignment — equal
// exponents add, a smaller exponent's elements are shifted right
// (rounding toward minus infinity), a difference past 31 leaves only the
// sign, sums saturate — and a type that is not 32-bit fixed point is
// refused.
func TestBlockSum(t *testing.T) {
	k, err := BlockSum(Fixed(8, 24))
	if err != nil {
		t.Fatal(err)
	}
	block := func(e int32, xs ...int32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(e))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		}
		return b
	}
	for _, c := range []struct{ a, b, want []byte }{
		{block(3, 1, 2, -3), block(3, 10, 20, 30), block(3, 11, 22, 27)},
		{block(2, 100, -100, -1), block(5, 8, 8, 8), block(5, 20, -5, 7)},
		{block(-40, 5, -5), block(0, 1, 1), block(0, 1, 0)},
		{block(7, 1<<31-1, -1<<31), block(7, 1, -1), block(7, 1<<31-1, -1<<31)},
	} {
		got, _, err := k.Run([][]byte{c.a, c.b}, Traffic{Offer: 0.5, Ready: 0.5, Seed: 1})
		if ref, _ := k.Reference([][]byte{c.a, c.b}); err != nil || !bytes.Equal(got, c.want) || !bytes.Equal(ref, c.want) {
			t.Errorf("%x + %x: simulator %x, reference %x, want %x (%v)", c.a, c.b, got, ref, c.want, err)
		}
	}
	if _, err := BlockSum(Int16); err == nil || !strings.Contains(err.Error(), "not a 32-bit fixed-point type") {
		t.Errorf("int16 blocks: %v", err)
	}
}

// TestScale: known products of the Q16.16 scale, rounding and saturating.
func TestScale(t *testing.T) {
	for _, c := range []struct {
		factor int32
		in     []int32
		want   []int32
	}{
		{0x18000, []int32{2, 3, -3, 1 << 30, 1<<31 - 1, -1 << 31}, []int32{3, 5, -4, 0x6000_0000, 1<<31 - 1, -1 << 31}},
		{-0x8000, []int32{4, 5, -5, -1 << 31}, []int32{-2, -2, 3, 1 << 30}},
		{1, []int32{1 << 15, 1<<15 - 1}, []int32{1, 0}},
	} {
		k := Scale(c.factor)
		var in, want []byte
		for i := range c.in {
			in = binary.LittleEndian.AppendUint32(in, uint32(c.in[i]))
			want = binary.LittleEndian.AppendUint32(want, uint32(c.want[i]))
		}
		got, _, err := k.Run([][]byte{in}, Full)
		if ref, _ := k.Reference([][]byte{in}); err != nil || !bytes.Equal(got, want) || !bytes.Equal(ref, want) {
			t.Errorf("factor %#x on %v: simulator %x, reference %x, want %x (%v)", c.factor, c.in, got, ref, want, err)
		}
	}
}
