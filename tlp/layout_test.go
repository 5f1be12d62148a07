package tlp

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// fieldViews are, for every field in the table, what the decoder (TLP) and
// the Header view read for it, as raw field values. A nil view has no
// accessor for the field.
var fieldViews = map[string]struct {
	tlp func(*TLP) uint64
	hdr func(Header) uint64
}{
	"fmt":           {func(t *TLP) uint64 { return uint64(t.Fmt) }, func(h Header) uint64 { return uint64(h.Fmt()) }},
	"type":          {func(t *TLP) uint64 { return uint64(t.Type) }, func(h Header) uint64 { return uint64(h.Type()) }},
	"tc":            {func(t *TLP) uint64 { return uint64(t.TC) }, func(h Header) uint64 { return uint64(h.TC()) }},
	"attr":          {func(t *TLP) uint64 { return uint64(t.Attr) }, func(h Header) uint64 { return uint64(h.Attr()) }},
	"ln":            {func(t *TLP) uint64 { return u(t.LN) }, func(h Header) uint64 { return u(h.LN()) }},
	"th":            {func(t *TLP) uint64 { return u(t.TH) }, func(h Header) uint64 { return u(h.TH()) }},
	"td":            {func(t *TLP) uint64 { return u(t.TD) }, func(h Header) uint64 { return u(h.TD()) }},
	"ep":            {func(t *TLP) uint64 { return u(t.EP) }, func(h Header) uint64 { return u(h.EP()) }},
	"at":            {func(t *TLP) uint64 { return uint64(t.AT) }, func(h Header) uint64 { return uint64(h.AT()) }},
	"length":        {func(t *TLP) uint64 { return uint64(t.Length) & 0x3FF }, func(h Header) uint64 { return uint64(h.LengthField()) }},
	"tag":           {func(t *TLP) uint64 { return uint64(t.Tag) }, func(h Header) uint64 { return uint64(h.Tag()) }},
	"requester_id":  {func(t *TLP) uint64 { return uint64(t.RequesterID) }, func(h Header) uint64 { return uint64(h.RequesterID()) }},
	"completer_id":  {func(t *TLP) uint64 { return uint64(t.CompleterID) }, func(h Header) uint64 { return uint64(h.CompleterID()) }},
	"last_be":       {func(t *TLP) uint64 { return uint64(t.LastBE) }, func(h Header) uint64 { return uint64(h.LastBE()) }},
	"first_be":      {func(t *TLP) uint64 { return uint64(t.FirstBE) }, func(h Header) uint64 { return uint64(h.FirstBE()) }},
	"message_code":  {func(t *TLP) uint64 { return uint64(t.MessageCode) }, func(h Header) uint64 { return uint64(h.MessageCode()) }},
	"status":        {func(t *TLP) uint64 { return uint64(t.Status) }, func(h Header) uint64 { return uint64(h.Status()) }},
	"bcm":           {func(t *TLP) uint64 { return u(t.BCM) }, func(h Header) uint64 { return u(h.BCM()) }},
	"byte_count":    {func(t *TLP) uint64 { return uint64(t.ByteCount) & 0xFFF }, func(h Header) uint64 { return uint64(h.ByteCountField()) }},
	"lower_address": {func(t *TLP) uint64 { return uint64(t.LowerAddress) }, func(h Header) uint64 { return uint64(h.LowerAddress()) }},
	"register":      {func(t *TLP) uint64 { return uint64(t.Register) }, func(h Header) uint64 { return uint64(h.Register()) }},
	"address":       {func(t *TLP) uint64 { return t.Address }, nil}, // the view's Address is for memory requests only; checked below
	"ph":            {func(t *TLP) uint64 { return uint64(t.PH) }, func(h Header) uint64 { return uint64(h.PH()) }},
	"message_data":  {func(t *TLP) uint64 { return binary.BigEndian.Uint64(t.MessageData[:]) }, nil},
}

func u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// TestLayoutTable checks the table itself: every field has views, every
// part lies inside the header it is for, a layout's width fits the value
// it decodes to, and no two fields of any header share a bit.
func TestLayoutTable(t *testing.T) {
	if len(fieldViews) != len(HeaderFields) {
		t.Errorf("%d fields in the table, %d with views", len(HeaderFields), len(fieldViews))
	}
	for k := MRd; k < numKinds; k++ {
		for _, addr64 := range []bool{false, true} {
			for _, route := range []Routing{RouteByAddress, RouteByID} {
				f, typ, _ := FmtType(k, addr64, route)
				var used [4]uint32
				owner := map[[2]int]string{}
				for _, hf := range HeaderFields {
					if _, ok := fieldViews[hf.Name]; !ok {
						t.Errorf("field %s has no views in the test", hf.Name)
					}
					l, ok := hf.Layout(k.Class(), f, Routing(typ&7) == RouteByAddress)
					if !ok {
						continue
					}
					if l.Width() > 64 {
						t.Errorf("%v: %s is %d bits wide", k, hf.Name, l.Width())
					}
					for _, p := range l.Parts {
						if p.DW*4+4 > f.HeaderLen() || p.Lo < 0 || p.Hi > 31 || p.Hi < p.Lo {
							t.Errorf("%v (Fmt %d): %s part %+v is outside the %d-byte header", k, f, hf.Name, p, f.HeaderLen())
							continue
						}
						for b := p.Lo; b <= p.Hi; b++ {
							if used[p.DW]>>b&1 != 0 {
								t.Errorf("%v (Fmt %d): DW%d bit %d is in both %s and %s", k, f, p.DW, b, owner[[2]int{p.DW, b}], hf.Name)
							}
							used[p.DW] |= 1 << b
							owner[[2]int{p.DW, b}] = hf.Name
						}
					}
				}
			}
		}
	}
}

// TestLayoutAgrees holds the decoders (straight and general path) and the
// Header view to the table, field by field: for every vector and for
// random TLPs of every kind, what the table extracts from the wire bytes
// is what they read, and a field the kind does not carry decodes as zero.
func TestLayoutAgrees(t *testing.T) {
	var encs [][]byte
	for _, v := range vectors {
		encs = append(encs, mustHex(t, v.hex))
	}
	r := rand.New(rand.NewPCG(7, 9))
	for i := range 20000 {
		x := randomTLP(r, MRd+Kind(i%int(numKinds-1)))
		b, err := x.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, b)
	}
	checked := map[string]int{}
	for _, b := range encs {
		for _, general := range []bool{false, true} {
			generalOnly = general
			var d TLP
			err := d.Decode(b)
			generalOnly = false
			if err != nil {
				continue
			}
			h := Header(b[len(d.Prefixes):])
			for _, hf := range HeaderFields {
				want, carried := hf.Extract(h)
				views := fieldViews[hf.Name]
				got := views.tlp(&d)
				if !carried {
					want = 0
				}
				if got != want {
					t.Fatalf("%v %x: %s decodes as %#x, the table says %#x (general path %v)", d.Kind(), b, hf.Name, got, want, general)
				}
				if carried && views.hdr != nil {
					if hv := views.hdr(h); hv != want {
						t.Fatalf("%v %x: Header view reads %s as %#x, the table says %#x", d.Kind(), b, hf.Name, hv, want)
					}
				}
				if carried && hf.Name == "address" && d.Kind().Class() != ClassMessage && h.Address() != want {
					t.Fatalf("%v %x: Header view reads address %#x, the table says %#x", d.Kind(), b, h.Address(), want)
				}
				if carried {
					checked[hf.Name]++
				}
			}
		}
	}
	for _, hf := range HeaderFields {
		if checked[hf.Name] < 100 {
			t.Errorf("field %s checked only %d times", hf.Name, checked[hf.Name])
		}
	}
}
