package tlp

import (
	"bytes"
	"testing"
)

func addVectorSeeds(f *testing.F) {
	for _, v := range vectors {
		f.Add(mustHex(f, v.hex))
	}
	for _, v := range badVectors {
		f.Add(mustHex(f, v.hex))
	}
}

// FuzzDecode: Decode and Validate never panic, never read past the input
// (the race-free bounds checks of Go would panic), a TLP that decodes and
// validates encodes back to exactly the input bytes, and DecodeValidate
// agrees with Decode followed by Validate (checkFused).
func FuzzDecode(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		// Decode a copy with no spare capacity so an overread cannot hide
		// in the slice's tail.
		in := append(make([]byte, 0, len(b)), b...)
		checkFused(t, in)
		var d TLP
		if err := d.Decode(in); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Decode error %T is not *tlp.Error", err)
			}
			return
		}
		_ = d.String()
		if d.Validate() != nil {
			return
		}
		enc, err := d.AppendBinary(nil)
		if err != nil {
			t.Fatalf("valid TLP %x does not encode: %v", b, err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("decode∘encode is not the identity\n in  %x\n out %x", b, enc)
		}
	})
}

// FuzzJSON: a decoded TLP printed as JSON reads back to the same fields, and
// a valid one encodes from JSON to exactly the input bytes.
func FuzzJSON(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		var d TLP
		if d.Decode(b) != nil {
			return
		}
		js := d.AppendJSON(nil)
		var back TLP
		if err := back.UnmarshalJSON(js); err != nil {
			t.Fatalf("JSON %s of %x does not parse: %v", js, b, err)
		}
		if !equalFields(&back, &d) {
			t.Fatalf("JSON round trip changed fields\n json %s\n got  %+v\n want %+v", js, back, d)
		}
		if d.Validate() != nil {
			return
		}
		enc, err := back.AppendBinary(nil)
		if err != nil {
			t.Fatalf("JSON %s does not encode: %v", js, err)
		}
		if !bytes.Equal(enc, b) {
			t.Fatalf("JSON round trip changed the TLP\n json %s\n got  %x\n want %x", js, enc, b)
		}
	})
}

// FuzzDecodeSnapped: DecodeSnapped never panics; what it accepts as
// snapped is exactly a header its AppendHeader writes again, and anything
// else it accepts is what Decode gives.
func FuzzDecodeSnapped(f *testing.F) {
	addVectorSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append(make([]byte, 0, len(b)), b...)
		var d TLP
		if err := d.DecodeSnapped(in); err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("DecodeSnapped error %T is not *tlp.Error", err)
			}
			return
		}
		if !d.Snapped {
			var w TLP
			if err := w.Decode(in); err != nil || !equalFields(&w, &d) {
				t.Fatalf("DecodeSnapped of a whole TLP %x differs from Decode (%v)", b, err)
			}
			return
		}
		if d.Data != nil || d.Digest != 0 {
			t.Fatalf("snapped %x has data or a digest", b)
		}
		_ = d.String()
		if d.Validate() == nil {
			h, err := d.AppendHeader(nil)
			if err != nil || !bytes.Equal(h, b) {
				t.Fatalf("snapped header %x written again as %x (%v)", b, h, err)
			}
		}
	})
}
