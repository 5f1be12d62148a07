package kernels

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFilterSpecs: filters of every field width, op and record size from
// 4 bytes to a whole beat agree with their reference under backpressure
// (the library's one is in TestLibraryAgainstReference); beats where
// nothing passes are not sent.
func TestFilterSpecs(t *testing.T) {
	for _, spec := range []FilterSpec{
		{Field: Field{Record: 4, Offset: 3, Width: 1}, Op: "eq", Value: 7},
		{Field: Field{Record: 8, Offset: 0, Width: 8}, Op: "lt", Value: 1 << 60},
		{Field: Field{Record: 32, Offset: 30, Width: 2}, Op: "ne", Value: 0x0800},
		{Field: Field{Record: 64, Offset: 4, Width: 4}, Op: "ge", Value: 0xFFFF_FFFF},
	} {
		k, err := Filter(spec, 64)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(spec.Record), 9))
		for _, n := range []int{0, 3, 4, 64, 65, 200, 1000} {
			in := k.sample(rng, n)
			want, _ := k.Reference(in)
			got, st, err := k.Run(in, Traffic{Offer: 0.7, Ready: 0.5, Seed: uint64(n)})
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s, %d bytes: %v\n got  %x\n want %x", k.Name, n, err, got, want)
			}
			if st.OutBeats > st.InBeats {
				t.Fatalf("%s: %d beats out of %d", k.Name, st.OutBeats, st.InBeats)
			}
		}
	}
	// Nothing passes: only the (empty) last beat leaves.
	k, _ := Filter(FilterSpec{Field: Field{Record: 16, Offset: 0, Width: 4}, Op: "eq", Value: 1}, 64)
	got, st, err := k.Run([][]byte{make([]byte, 640)}, Full)
	if err != nil || len(got) != 0 || st.OutBeats != 1 || st.InBeats != 10 {
		t.Fatalf("all dropped: %x, %d beats out of %d, %v", got, st.OutBeats, st.InBeats, err)
	}
}

// TestFilterBadSpecs: each mistake in a spec is named.
func TestFilterBadSpecs(t *testing.T) {
	for _, c := range []struct {
		spec FilterSpec
		want string
	}{
		{FilterSpec{Field: Field{Record: 12, Offset: 0, Width: 4}, Op: "eq"}, "record: 12 bytes"},
		{FilterSpec{Field: Field{Record: 128, Offset: 0, Width: 4}, Op: "eq"}, "record: 128 bytes"},
		{FilterSpec{Field: Field{Record: 16, Offset: 0, Width: 3}, Op: "eq"}, "width: 3 bytes"},
		{FilterSpec{Field: Field{Record: 16, Offset: 14, Width: 4}, Op: "eq"}, "offset: a 4-byte field at 14 is outside a 16-byte record"},
		{FilterSpec{Field: Field{Record: 16, Offset: 0, Width: 4}, Op: "gt"}, `op: "gt"`},
		{FilterSpec{Field: Field{Record: 16, Offset: 0, Width: 1}, Op: "eq", Value: 256}, "value: 0x100 does not fit a 1-byte field"},
	} {
		if _, err := Filter(c.spec, 64); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}
