package tlphdr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	pmgr "onic/pcie/manager"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// decoder is a module with the header in and every field out.
func testDecoder() *ir.Module {
	m := ir.NewModule("tlp_hdr_decode")
	f := Decode(m, "hdr", m.Input("hdr", 128))
	for _, o := range []struct {
		name string
		v    ir.Value
	}{
		{"fmt", f.Fmt}, {"type", f.Type}, {"tc", f.TC}, {"attr", f.Attr}, {"at", f.AT}, {"td", f.TD}, {"ep", f.EP},
		{"th", f.TH}, {"ln", f.LN}, {"length", f.Length}, {"four_dw", f.FourDW}, {"has_data", f.HasData},
		{"requester", f.Requester}, {"completer", f.Completer}, {"completion", f.Completion}, {"tag", f.Tag}, {"first_be", f.FirstBE}, {"last_be", f.LastBE}, {"address", f.Address},
	} {
		m.Output(o.name, o.v)
	}
	return m
}

// TestAgainstCodec: for every one of onic's TLP vectors, the decoder's
// fields equal what the tlp package decodes.
func TestAgainstCodec(t *testing.T) {
	s, err := sim.New(testDecoder())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vectors(t) {
		name, raw, p := v.name, v.raw, v.p
		// The 128-bit header: DW0 in the top bits, PCIe byte order.
		var hdr [16]byte
		copy(hdr[:], raw[:p.HeaderLen()])
		words := []uint64{be64(hdr[8:16]), be64(hdr[0:8])}
		s.SetWords("hdr", words)
		get := func(o string) uint64 { v, _ := s.Get(o); return v }
		length := uint64(p.Length) & 0x3FF
		checks := []struct {
			field     string
			got, want uint64
		}{
			{"fmt", get("fmt"), uint64(p.Fmt)}, {"type", get("type"), uint64(p.Type)}, {"tc", get("tc"), uint64(p.TC)},
			{"attr", get("attr"), uint64(p.Attr)}, {"at", get("at"), uint64(p.AT)}, {"td", get("td"), b(p.TD)},
			{"ep", get("ep"), b(p.EP)}, {"th", get("th"), b(p.TH)}, {"ln", get("ln"), b(p.LN)},
			{"length", get("length"), length}, {"four_dw", get("four_dw"), b(p.HeaderLen() == 16)},
			{"has_data", get("has_data"), b(p.Kind().HasData())}, {"requester", get("requester"), uint64(p.RequesterID)},
			{"completion", get("completion"), b(p.Kind().Class() == tlp.ClassCompletion)},
		}
		if p.Kind().Class() == tlp.ClassCompletion {
			checks = append(checks, []struct {
				field     string
				got, want uint64
			}{{"completer", get("completer"), uint64(p.CompleterID)}, {"tag", get("tag"), uint64(p.Tag)}}...)
		}
		if c := p.Kind().Class(); c == tlp.ClassMemory || c == tlp.ClassIO {
			checks = append(checks, []struct {
				field     string
				got, want uint64
			}{
				{"tag", get("tag"), uint64(p.Tag)}, {"first_be", get("first_be"), uint64(p.FirstBE)},
				{"last_be", get("last_be"), uint64(p.LastBE)}, {"address", get("address"), p.Address},
			}...)
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s: %s is %#x in the RTL, %#x in the codec", name, c.field, c.got, c.want)
			}
		}
		n++
	}
	if n < 25 {
		t.Fatalf("only %d vectors checked", n)
	}
}

// vector is one of onic's TLP vectors (tlp/testdata/vectors.txt).
type vector struct {
	name string
	raw  []byte
	p    tlp.TLP
}

// vectors are onic's TLP vectors without prefixes (the header bus
// carries the header only).
func vectors(t *testing.T) []vector {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "tlp", "testdata", "vectors.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var vs []vector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, hx, _ := strings.Cut(line, "\t")
		raw, err := hex.DecodeString(hx)
		if err != nil {
			t.Fatal(err)
		}
		var p tlp.TLP
		if err := p.Decode(raw); err != nil || len(p.Prefixes) != 0 {
			continue
		}
		vs = append(vs, vector{name, raw, p})
	}
	return vs
}

func be64(b []byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

func b(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// TestVerilog: the decoder is clean under Verilator -Wall.
func TestVerilog(t *testing.T) { verilator.Lint(t, testDecoder()) }

// TestAgainstTable: for random headers of every kind the decoder serves
// (memory, I/O and completions), each output equals what the TLP field
// table extracts from the same bytes.
func TestAgainstTable(t *testing.T) {
	s, err := sim.New(testDecoder())
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{ // decoder output -> table field
		"fmt": "fmt", "type": "type", "tc": "tc", "attr": "attr", "at": "at", "td": "td", "ep": "ep", "th": "th",
		"ln": "ln", "length": "length", "requester": "requester_id", "tag": "tag",
	}
	r := rand.New(rand.NewPCG(3, 5))
	kinds := []tlp.Kind{tlp.MRd, tlp.MWr, tlp.MRdLk, tlp.IORd, tlp.IOWr, tlp.Cpl, tlp.CplD, tlp.CplLk, tlp.CplDLk}
	for i := range 5000 {
		k := kinds[i%len(kinds)]
		f, typ, _ := tlp.FmtType(k, r.IntN(2) == 0 && k.Class() != tlp.ClassIO, 0)
		var hdr [16]byte
		for j := range hdr {
			hdr[j] = byte(r.Uint32())
		}
		hdr[0] = byte(f)<<5 | typ
		h := tlp.Header(hdr[:])
		s.SetWords("hdr", []uint64{be64(hdr[8:16]), be64(hdr[0:8])})
		get := func(o string) uint64 { v, _ := s.Get(o); return v }
		want := map[string]string{}
		for o, field := range outs {
			want[o] = field
		}
		if k.Class() == tlp.ClassCompletion {
			want["completer"] = "completer_id"
		} else {
			want["first_be"], want["last_be"], want["address"] = "first_be", "last_be", "address"
		}
		for o, field := range want {
			w, ok := tlp.FieldByName(field).Extract(h)
			if !ok {
				t.Fatalf("%v: the table has no %s", k, field)
			}
			if g := get(o); g != w {
				t.Fatalf("%v %x: %s is %#x in the RTL, %#x by the table", k, hdr, o, g, w)
			}
		}
		if g, w := get("completion"), b(k.Class() == tlp.ClassCompletion); g != w {
			t.Fatalf("%v: completion is %d", k, g)
		}
	}
}

// TestRewriteAgainstApply: the RTL's header rewrite (Rewrite, what the
// manager's pipelines send a forwarded request with) gives, for random
// memory requests and AtomicOps of both header forms — processing hints,
// traffic classes and attributes included — and random translated
// addresses above and below 4 GiB and requester IDs, the very header
// bytes pcie/manager's Outcome.Apply gives the emulator's TLP: the 3-DW
// form below 4 GiB, the 4-DW form above (PCIe §2.2.4.1).
func TestRewriteAgainstApply(t *testing.T) {
	m := ir.NewModule("tlp_hdr_rewrite")
	m.Output("out", Rewrite(m, "rw", m.Input("hdr", 128), m.Input("addr", 64), m.Input("req", 16)))
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	kinds := []tlp.Kind{tlp.MRd, tlp.MWr, tlp.FetchAdd, tlp.Swap, tlp.CAS}
	forms := [2]int{}
	for i := range 4000 {
		k := kinds[i%len(kinds)]
		x := tlp.TLP{TC: uint8(r.IntN(8)), Attr: tlp.Attr(r.IntN(8)), Tag: uint16(r.IntN(1024)), RequesterID: tlp.ID(r.Uint32()),
			Length: uint16(1 + r.IntN(64)), FirstBE: 0xF, LastBE: 0xF, Address: r.Uint64() &^ 7}
		if r.IntN(2) == 0 {
			x.Address &= 0xFFFF_FFF8
		}
		switch k {
		case tlp.FetchAdd, tlp.Swap:
			x.Length = uint16(1 + r.IntN(2))
		case tlp.CAS:
			x.Length = []uint16{2, 4, 8}[r.IntN(3)]
		}
		if x.Length == 1 {
			x.LastBE = 0
		}
		if k.Class() == tlp.ClassMemory && r.IntN(3) == 0 {
			x.TH, x.PH = true, uint8(r.IntN(4))
		}
		x.Fmt, x.Type, _ = tlp.FmtType(k, x.Address >= 1<<32, 0)
		if k.HasData() {
			x.Data = make([]byte, 4*int(x.Length))
		}
		in, err := x.MarshalBinary()
		if err != nil {
			t.Fatalf("%v: %v", &x, err)
		}
		addr, req := r.Uint64()&^7, tlp.ID(r.Uint32())
		if r.IntN(2) == 0 {
			addr &= 0xFFFF_FFF8
		}
		o := pmgr.Outcome{Address: addr, Requester: req, Tag: x.Tag}
		y := x
		o.Apply(&y)
		want, err := y.MarshalBinary()
		if err != nil {
			t.Fatalf("%v: %v", &y, err)
		}
		hl := y.HeaderLen()
		forms[hl/4-3]++
		var hdr [16]byte
		copy(hdr[:], in[:x.HeaderLen()])
		s.SetWords("hdr", []uint64{be64(hdr[8:16]), be64(hdr[0:8])})
		s.SetWords("addr", []uint64{addr})
		s.SetWords("req", []uint64{uint64(req)})
		out, err := s.GetWords("out")
		if err != nil {
			t.Fatal(err)
		}
		var got [16]byte
		binary.BigEndian.PutUint64(got[:8], out[1])
		binary.BigEndian.PutUint64(got[8:], out[0])
		if !bytes.Equal(got[:hl], want[:hl]) {
			t.Fatalf("%v to %#x as %s:\n RTL   %x\n Apply %x", &x, addr, req, got[:hl], want[:hl])
		}
	}
	if forms[0] == 0 || forms[1] == 0 {
		t.Fatalf("header forms %v: the test misses one", forms)
	}
}

// TestSetTag: SetTag on a request's 128-bit header and on a completion's
// 96-bit one gives the header the codec encodes with that tag.
func TestSetTag(t *testing.T) {
	m := ir.NewModule("tlp_set_tag")
	tag := m.Input("tag", 10)
	m.Output("req", SetTag(m, m.Input("req_hdr", 128), tlp.ClassMemory, tag))
	m.Output("cpl", SetTag(m, m.Input("cpl_hdr", 96), tlp.ClassCompletion, tag))
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(11, 12))
	for range 500 {
		rd := tlp.TLP{RequesterID: tlp.ID(r.Uint32()), Tag: uint16(r.IntN(1024)), Length: 1, FirstBE: 0xF, Address: uint64(r.Uint32()) &^ 3}
		rd.Fmt, rd.Type, _ = tlp.FmtType(tlp.MRd, false, 0)
		c := tlp.TLP{RequesterID: tlp.ID(r.Uint32()), CompleterID: tlp.ID(r.Uint32()), Tag: uint16(r.IntN(1024)), ByteCount: 4}
		c.Fmt, c.Type, _ = tlp.FmtType(tlp.Cpl, false, 0)
		newTag := uint16(r.IntN(1024))
		words := func(x *tlp.TLP) []uint64 {
			b, err := x.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var h [16]byte
			copy(h[:], b)
			return []uint64{be64(h[8:16]), be64(h[0:8])}
		}
		s.SetWords("req_hdr", words(&rd))
		cw := words(&c)
		s.SetWords("cpl_hdr", []uint64{cw[0]>>32 | cw[1]<<32, cw[1] >> 32})
		s.SetWords("tag", []uint64{uint64(newTag)})
		rd.Tag, c.Tag = newTag, newTag
		if got, _ := s.GetWords("req"); fmt.Sprint(got) != fmt.Sprint(words(&rd)) {
			t.Fatalf("request: %x, want %x", got, words(&rd))
		}
		cw = words(&c)
		if got, _ := s.GetWords("cpl"); fmt.Sprint(got) != fmt.Sprint([]uint64{cw[0]>>32 | cw[1]<<32, cw[1] >> 32}) {
			t.Fatalf("completion: %x, want %x", got, cw)
		}
	}
}

// TestComposeAgainstCodec: for every one of onic's memory, I/O and
// completion TLP vectors, a header composed from the fields the table
// extracts out of its bytes is those bytes — 128 bits, and for a 3-DW
// header also the 96-bit form.
func TestComposeAgainstCodec(t *testing.T) {
	n := 0
	for _, v := range vectors(t) {
		name, raw, p := v.name, v.raw, v.p
		c := p.Kind().Class()
		if c != tlp.ClassMemory && c != tlp.ClassIO && c != tlp.ClassCompletion {
			continue
		}
		h := tlp.Header(raw[:p.HeaderLen()])
		var hdr [16]byte
		copy(hdr[:], h)
		for _, w := range []int{128, 96} {
			if w == 96 && p.HeaderLen() == 16 {
				continue
			}
			m := ir.NewModule("compose")
			var sets []Set
			for i := range tlp.HeaderFields {
				hf := &tlp.HeaderFields[i]
				l, ok := hf.Layout(c, p.Fmt, false)
				if !ok {
					continue
				}
				sets = append(sets, Set{hf.Name, m.Input(hf.Name, l.Width())})
			}
			m.Output("hdr", Compose(m, w, c, p.Fmt, sets...))
			s, err := sim.New(m)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tlp.HeaderFields {
				hf := &tlp.HeaderFields[i]
				if _, ok := hf.Layout(c, p.Fmt, false); ok {
					v, _ := hf.Extract(h)
					if err := s.Set(hf.Name, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := s.GetWords("hdr")
			if err != nil {
				t.Fatal(err)
			}
			want := []uint64{be64(hdr[8:16]), be64(hdr[0:8])}
			if w == 96 {
				want = []uint64{be64(hdr[4:12]), be64(hdr[0:4])}
			}
			if got[0] != want[0] || len(got) > 1 && got[1] != want[1] {
				t.Errorf("%s (%d bits): composed %x, the vector's header %x", name, w, got, want)
			}
		}
		n++
	}
	if n < 12 {
		t.Fatalf("only %d vectors composed", n)
	}
}

// TestTypeCodes: for each of the 32 Type values, IsType says MWr (and
// MRd) exactly where the codec decodes a 3-DW header with (without) data
// as one, and IsMessage exactly where a 4-DW one is a message (tlp.KindOf).
func TestTypeCodes(t *testing.T) {
	m := ir.NewModule("types")
	typ := m.Input("type", 5)
	m.Output("is_mwr", IsType(m, typ, tlp.MWr))
	m.Output("is_mrd", IsType(m, typ, tlp.MRd))
	m.Output("is_cpl", IsType(m, typ, tlp.Cpl))
	m.Output("is_msg", IsMessage(m, typ))
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	for v := range uint64(32) {
		s.Set("type", v)
		s.Settle()
		for _, c := range []struct {
			out  string
			want bool
		}{
			{"is_mwr", tlp.KindOf(tlp.Fmt3DWData, uint8(v)) == tlp.MWr},
			{"is_mrd", tlp.KindOf(tlp.Fmt3DW, uint8(v)) == tlp.MRd},
			{"is_cpl", tlp.KindOf(tlp.Fmt3DW, uint8(v)) == tlp.Cpl},
			{"is_msg", tlp.KindOf(tlp.Fmt4DW, uint8(v)) == tlp.Msg},
		} {
			if got, _ := s.Get(c.out); (got == 1) != c.want {
				t.Errorf("type %05b: %s %d, the codec says %v", v, c.out, got, c.want)
			}
		}
	}
}
