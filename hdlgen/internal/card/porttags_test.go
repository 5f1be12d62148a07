package card

import (
	"fmt"
	"testing"

	"onic/hdlgen/internal/tlpstim"
	"onic/pcie/manager"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// portTagsDUT drives one PortTagsModule: send puts a TLP through toward
// the link and returns it as it left; receive offers one from the link
// and returns it as it went on, or false if it was dropped.
type portTagsDUT struct {
	t *testing.T
	d *dut
}

func newPortTags(t *testing.T) *portTagsDUT {
	d := newDUT(t, PortTagsModule())
	d.drive("up", 1)
	d.drive("m_tlp_ready", 1)
	d.drive("m_rx_ready", 1)
	d.SetReset(true)
	d.Step()
	d.SetReset(false)
	return &portTagsDUT{t, d}
}

func (p *portTagsDUT) beats(x *tlp.TLP) []tlpstim.Beat { return tlpBeatsOf(p.t, x) }

// send offers x toward the link until it is taken (or limit cycles) and
// returns the header it left with.
func (p *portTagsDUT) send(x *tlp.TLP, limit int) (tlp.TLP, bool) {
	p.t.Helper()
	var s tlpStream
	for _, b := range p.beats(x) {
		taken := false
		for c := 0; c < limit && !taken; c++ {
			p.d.drive("s_tlp_valid", 1)
			p.d.drive("s_tlp_hdr", b.Hdr...)
			p.d.drive("s_tlp_data", b.Data...)
			p.d.drive("s_tlp_keep", b.Keep)
			p.d.drive("s_tlp_sop", b2u(b.SOP))
			p.d.drive("s_tlp_eop", b2u(b.EOP))
			p.d.drive("s_rx_valid", 0)
			p.d.Settle()
			if p.d.bit("s_tlp_ready") {
				taken = true
				if out, ok := s.beat(p.t, p.d, "m_tlp_"); ok {
					p.d.Step()
					p.d.drive("s_tlp_valid", 0)
					return out, true
				}
			}
			p.d.Step()
		}
		if !taken {
			p.d.drive("s_tlp_valid", 0)
			return tlp.TLP{}, false
		}
	}
	p.t.Fatal("a TLP with no last beat")
	return tlp.TLP{}, false
}

// receive offers x from the link and returns what went on to the port
// pipeline, if anything did.
func (p *portTagsDUT) receive(x *tlp.TLP) (tlp.TLP, bool) {
	p.t.Helper()
	var s tlpStream
	var got *tlp.TLP
	bs := p.beats(x)
	for c := 0; c < 4*len(bs)+8; c++ {
		p.d.drive("s_tlp_valid", 0)
		p.d.drive("s_rx_valid", b2u(len(bs) > 0))
		if len(bs) > 0 {
			b := bs[0]
			p.d.drive("s_rx_hdr", b.Hdr...)
			p.d.drive("s_rx_data", b.Data...)
			p.d.drive("s_rx_keep", b.Keep)
			p.d.drive("s_rx_sop", b2u(b.SOP))
			p.d.drive("s_rx_eop", b2u(b.EOP))
		}
		p.d.Settle()
		if len(bs) > 0 && p.d.bit("s_rx_ready") {
			bs = bs[1:]
		}
		if p.d.bit("m_rx_valid") {
			if out, ok := s.beat(p.t, p.d, "m_rx_"); ok {
				got = &out
			}
		}
		p.d.Step()
	}
	if got == nil {
		return tlp.TLP{}, false
	}
	return *got, true
}

// TestPortTags: a port's requester tag table. A read leaves with a tag
// of the port's and a write or a completion with its own; the answer
// from the port, for that tag and proxy ID, goes on with the read's own
// tag and frees the tag; a completion for a free tag, for another
// requester ID, with T8 set, or a successful one without data is dropped
// and counted (a peer cannot answer what the card did not send it, and
// the other port's table holds nothing the first port sent); a read
// waits while all 256 tags are out; a link that goes down frees them.
func TestPortTags(t *testing.T) {
	proxy := tlp.NewID(0x10, 0, 1)
	read := func(tag uint16) *tlp.TLP {
		x := &tlp.TLP{RequesterID: proxy, Tag: tag, Length: 4, FirstBE: 0xF, LastBE: 0xF, Address: 0x1_0000_0040}
		x.Fmt, x.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
		return x
	}
	answer := func(tag uint16, req tlp.ID, bc uint16, dws uint16) *tlp.TLP {
		c := &tlp.TLP{RequesterID: req, CompleterID: tlp.NewID(0, 0, 0), Tag: tag, ByteCount: bc, LowerAddress: 0x40, Length: dws,
			Data: make([]byte, 4*int(dws))}
		c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
		return c
	}
	a, b := newPortTags(t), newPortTags(t)
	out, ok := a.send(read(0x2C7), 4)
	if !ok || out.Tag != 0 || out.RequesterID != proxy {
		t.Fatalf("the read left as %v", &out)
	}
	w := &tlp.TLP{RequesterID: proxy, Tag: 0x155, Length: 1, FirstBE: 0xF, Address: 0x1000, Data: make([]byte, 4)}
	w.Fmt, w.Type, _ = tlp.FmtType(tlp.MWr, false, 0)
	if out, ok := a.send(w, 4); !ok || out.Tag != 0x155 {
		t.Fatalf("a write left as %v", &out)
	}
	for _, tc := range []struct {
		name string
		p    *portTagsDUT
		c    *tlp.TLP
		want string // "" dropped
	}{
		{"the answer, on the other port", b, answer(0, proxy, 16, 4), ""},
		{"for a free tag", a, answer(1, proxy, 16, 4), ""},
		{"for another requester ID", a, answer(0, tlp.NewID(0x10, 0, 0), 16, 4), ""},
		{"with T8 set", a, answer(0x100, proxy, 16, 4), ""},
		{"successful without data", a, func() *tlp.TLP {
			c := answer(0, proxy, 16, 0)
			c.Fmt, c.Type, _ = tlp.FmtType(tlp.Cpl, false, 0)
			c.Length, c.Data = 0, nil
			return c
		}(), ""},
		{"the first half of the answer", a, answer(0, proxy, 16, 2), "tag 0x2c7"},
		{"the second half", a, answer(0, proxy, 8, 2), "tag 0x2c7"},
		{"the answer again: its tag is free", a, answer(0, proxy, 8, 2), ""},
	} {
		got, ok := tc.p.receive(tc.c)
		s := ""
		if ok {
			s = fmt.Sprintf("tag %#x", got.Tag)
		}
		if s != tc.want {
			t.Fatalf("%s: went on as %q, want %q", tc.name, s, tc.want)
		}
	}
	if n := a.d.get("unexpected")[0]; n != 5 {
		t.Fatalf("port A counted %d unexpected completions, want 5", n)
	}
	if n := b.d.get("unexpected")[0]; n != 1 {
		t.Fatalf("port B counted %d unexpected completions, want 1", n)
	}
	// Every tag out: the next read waits; completions and writes do not.
	for i := range manager.Tags {
		if _, ok := a.send(read(uint16(i)), 300); !ok {
			t.Fatalf("read %d did not leave", i)
		}
	}
	if _, ok := a.send(read(7), 300); ok {
		t.Fatal("a read left with every tag out")
	}
	if out, ok := a.send(answer(3, tlp.NewID(0x20, 0, 0), 4, 1), 4); !ok || out.Tag != 3 {
		t.Fatal("a completion waited behind the tags")
	}
	a.d.drive("up", 0)
	a.d.Step()
	a.d.drive("up", 1)
	if _, ok := a.send(read(7), 300); !ok {
		t.Fatal("a read could not leave after the link went down and up")
	}
}

func TestPortTagsLint(t *testing.T) { verilator.Lint(t, PortTagsModule()) }
