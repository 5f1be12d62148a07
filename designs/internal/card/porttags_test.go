package card

import (
	"fmt"
	"testing"

	"onic/designs/internal/tlpstim"
	"onic/pcie/manager"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// portTagsDUT drives one PortTagsModule: send puts a TLP through toward
// the link and returns it as it left; receive offers one from the link
// and returns it as it went on, or false if it was dropped.
type portTagsDUT struct {
	t      *testing.T
	d      *dut
	toLink tlpStream
}

func newPortTags(t *testing.T) *portTagsDUT {
	d := newDUT(t, PortTagsModule())
	d.drive("up", 1)
	d.drive("m_tlp_ready", 1)
	d.drive("m_rx_ready", 1)
	d.SetReset(true)
	d.Step()
	d.SetReset(false)
	return &portTagsDUT{t: t, d: d}
}

func (p *portTagsDUT) beats(x *tlp.TLP) []tlpstim.Beat { return tlpBeatsOf(p.t, x) }

// send offers x toward the link and runs up to limit cycles, returning
// what left toward the link meanwhile (with the rest of anything still
// waiting); ok says x was taken.
func (p *portTagsDUT) send(x *tlp.TLP, limit int) (out []tlp.TLP, ok bool) {
	p.t.Helper()
	bs := p.beats(x)
	for c := 0; c < limit && (len(bs) > 0 || c < 4); c++ {
		p.d.drive("s_rx_valid", 0)
		p.d.drive("s_tlp_valid", b2u(len(bs) > 0))
		if len(bs) > 0 {
			b := bs[0]
			p.d.drive("s_tlp_hdr", b.Hdr...)
			p.d.drive("s_tlp_data", b.Data...)
			p.d.drive("s_tlp_keep", b.Keep)
			p.d.drive("s_tlp_sop", b2u(b.SOP))
			p.d.drive("s_tlp_eop", b2u(b.EOP))
		}
		p.d.Settle()
		if len(bs) > 0 && p.d.bit("s_tlp_ready") {
			bs = bs[1:]
		}
		out = append(out, p.collect()...)
		p.d.Step()
	}
	p.d.drive("s_tlp_valid", 0)
	return out, len(bs) == 0
}

// collect takes what leaves toward the link this cycle.
func (p *portTagsDUT) collect() []tlp.TLP {
	if p.d.bit("m_tlp_valid") {
		if x, ok := p.toLink.beat(p.t, p.d, "m_tlp_"); ok {
			return []tlp.TLP{x}
		}
	}
	return nil
}

// idle runs n cycles with nothing offered, returning what left toward
// the link.
func (p *portTagsDUT) idle(n int) (out []tlp.TLP) {
	for range n {
		p.d.drive("s_rx_valid", 0)
		p.d.drive("s_tlp_valid", 0)
		p.d.Settle()
		out = append(out, p.collect()...)
		p.d.Step()
	}
	return out
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
	one := func(out []tlp.TLP, ok bool) tlp.TLP {
		t.Helper()
		if !ok || len(out) != 1 {
			t.Fatalf("taken %v, %d TLPs left: want one", ok, len(out))
		}
		return out[0]
	}
	if out := one(a.send(read(0x2C7), 10)); out.Tag != 0 || out.RequesterID != proxy {
		t.Fatalf("the read left as %v", &out)
	}
	w := &tlp.TLP{RequesterID: proxy, Tag: 0x155, Length: 1, FirstBE: 0xF, Address: 0x1000, Data: make([]byte, 4)}
	w.Fmt, w.Type, _ = tlp.FmtType(tlp.MWr, false, 0)
	if out := one(a.send(w, 10)); out.Tag != 0x155 {
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
	// Every tag out: the next reads park, and completions and writes
	// pass them; np_room falls once 16 wait; a tag freed by an
	// answer goes to the first parked read. A link that goes down frees
	// every tag.
	for i := range manager.Tags {
		if out, ok := a.send(read(uint16(i)), 300); !ok || len(out) != 1 {
			t.Fatalf("read %d: taken %v, %d out", i, ok, len(out))
		}
	}
	for i := range 20 {
		if out, ok := a.send(read(uint16(0x300+i)), 20); !ok || len(out) != 0 {
			t.Fatalf("parked read %d: taken %v, %d out with every tag out", i, ok, len(out))
		}
		if room := a.d.bit("np_room"); room != (i+1 < 16) {
			t.Fatalf("np_room %v with %d reads parked", room, i)
		}
	}
	if out := one(a.send(answer(3, tlp.NewID(0x20, 0, 0), 4, 1), 20)); out.Tag != 3 {
		t.Fatalf("a completion behind the parked reads left as %v", &out)
	}
	if out := one(a.send(w, 20)); out.Tag != 0x155 {
		t.Fatalf("a write behind the parked reads left as %v", &out)
	}
	if _, ok := a.receive(answer(5, proxy, 16, 4)); !ok {
		t.Fatal("the answer for tag 5 was dropped")
	}
	if out := a.idle(300); len(out) != 1 || out[0].Tag != 5 {
		t.Fatalf("after tag 5 was freed: %v", out)
	}
	a.d.drive("up", 0)
	a.d.Step()
	a.d.drive("up", 1)
	if out := a.idle(300); len(out) != 19 {
		t.Fatalf("after the link went down and up, %d of the 19 parked reads left", len(out))
	}
}

func TestPortTagsLint(t *testing.T) { verilator.Lint(t, PortTagsModule()) }
