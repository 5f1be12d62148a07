package firmware_test

import (
	"bytes"
	"testing"

	"onic/firmware"
	"onic/firmware/build"
)

// FuzzParse: no input makes Parse panic or allocate beyond its input's
// size, and an input it accepts marshals back to the same bytes.
func FuzzParse(f *testing.F) {
	s, err := firmware.LoadSpecFile("testdata/onic-a.yaml")
	if err != nil {
		f.Fatal(err)
	}
	s.Slots[0].Kernel = "" // no kernel: no Yosys, and a small seed
	im, err := build.Build(s, nil)
	if err != nil {
		f.Fatal(err)
	}
	_, k := key(9)
	im.Sign(k)
	seed, err := im.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/3])
	f.Add([]byte{0x84, 0xa5, 'm', 'a', 'g', 'i', 'c', 0xad})
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := firmware.Parse(b)
		if err != nil {
			return
		}
		out, err := im.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := firmware.Parse(out)
		if err != nil {
			t.Fatalf("a parsed image does not parse after marshalling: %v", err)
		}
		again, _ := back.MarshalBinary()
		if !bytes.Equal(out, again) {
			t.Fatal("marshalling is not stable")
		}
		_, _ = im.Signers()
	})
}
