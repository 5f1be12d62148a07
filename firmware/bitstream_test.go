package firmware

import (
	"strings"
	"testing"

	"onic/internal/bittest"
)

func TestParseBitstream(t *testing.T) {
	good := bittest.Bit("xcvu9p-flga2104-2L-e", 4096)
	for _, c := range []struct {
		name string
		b    []byte
		form string
		err  string
	}{
		{"bit", good, "bit", ""},
		{"bin", bittest.Bin(4096), "bin", ""},
		{"zeros", make([]byte, 4096), "", "not a bitstream"},
		{"text", []byte("hello, world"), "", "not a bitstream"},
		{"cut", good[:len(good)-1], "", "the configuration data is 4096 bytes, the file holds 4095"},
		{"longer", append(good[:len(good):len(good)], 0), "", "the file holds 4097"},
		{"header only", good[:20], "", "field 'a' of 42 bytes runs past the end"},
		{"preamble only", good[:13], "", `field 'a' missing at byte 13`},
		{"no sync", append(good[:len(good)-4096:len(good)-4096], make([]byte, 4096)...), "", "no sync word"},
	} {
		bs, err := ParseBitstream(c.b)
		switch {
		case c.err == "" && (err != nil || bs.Form != c.form):
			t.Errorf("%s: %+v %v", c.name, bs, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
	bs, _ := ParseBitstream(good)
	if bs.Part != "xcvu9p-flga2104-2L-e" || bs.DataBytes != 4096 || bs.Date != "2026/11/24" || !strings.HasPrefix(bs.Design, "onic_top") {
		t.Errorf("fields: %+v", bs)
	}
	for _, c := range []struct {
		in, part string
		ok       bool
	}{
		{"xcvu9p-flga2104-2L-e", DefaultPart, true},
		{"vu9pflga2104", DefaultPart, true},
		{"XCVU9P-FLGA2104", DefaultPart, true},
		{"xcku15p-ffve1517-2-e", DefaultPart, false},
		{"7a35tcpg236", "xc7a35t-cpg236-1", true},
		{"7a35tcpg236", "xc7a100t-csg324-1", false},
	} {
		if got := (Bitstream{Form: "bit", Part: c.in}).ForPart(c.part); got != c.ok {
			t.Errorf("%q for %s: %v, want %v", c.in, c.part, got, c.ok)
		}
	}
}

func FuzzParseBitstream(f *testing.F) {
	f.Add(bittest.Bit("xcvu9p-flga2104-2L-e", 64))
	f.Add(bittest.Bin(64))
	f.Fuzz(func(t *testing.T, b []byte) {
		bs, err := ParseBitstream(b)
		if err == nil && (bs.DataBytes > len(b) || bs.Form != "bit" && bs.Form != "bin") {
			t.Fatalf("%+v from %d bytes", bs, len(b))
		}
	})
}
