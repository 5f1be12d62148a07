package rc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"onic/tlp"
)

func newRC(t *testing.T, c Config) *RC {
	t.Helper()
	r, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func base(mps, mrrs, rcb int) Config {
	return Config{ID: tlp.NewID(0, 0, 0), Ports: []Port{{1, 1}, {2, 3}}, MemBase: 1 << 32, MemSize: 1 << 20, MPS: mps, MRRS: mrrs, RCB: rcb, Timeout: 100}
}

// TestCompletionSplitting: a device's read of system memory is answered
// with completions that end at RCB boundaries and carry at most MPS
// bytes, each with the Byte Count left and the Lower Address of its first
// byte (§2.3.1.1), routed by the requester's bus.
func TestCompletionSplitting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mps, rcb int
		fill     bool
		addr     uint64
		n        int
		want     string // byte count/lower address/DWs of each completion
	}{
		{"one completion", 256, 64, false, 0x1_0000_1000, 64, "64/00/16"},
		{"unaligned start ends at the RCB", 256, 64, false, 0x1_0000_1010, 600, "600/10/12 552/40/64 296/40/64 40/40/10"},
		{"RCB 128", 128, 128, false, 0x1_0000_1004, 300, "300/04/31 176/00/32 48/00/12"},
		{"byte enables inside a DW", 256, 64, false, 0x1_0000_1001, 2, "2/01/1"},
		// Fill: the first completion as long as MPS allows, to an RCB.
		{"fill: unaligned start", 256, 64, true, 0x1_0000_1010, 600, "600/10/60 360/00/64 104/00/26"},
		{"fill: RCB 128", 128, 128, true, 0x1_0000_1004, 300, "300/04/31 176/00/32 48/00/12"},
		{"fill: start in a DW", 256, 64, true, 0x1_0000_1003, 300, "300/03/64 47/00/12"},
	} {
		c := base(tc.mps, 512, tc.rcb)
		c.Fill = tc.fill
		r := newRC(t, c)
		rd := r.memReq(tlp.MRd, tc.addr, tc.n, 7)
		rd.RequesterID = tlp.NewID(2, 0, 0)
		var got []string
		for _, o := range r.Receive(0, &rd) {
			if o.Port != 1 {
				t.Fatalf("%s: a completion for bus 2 went down port %d", tc.name, o.Port)
			}
			if err := o.TLP.Validate(); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got = append(got, fmt.Sprintf("%d/%02x/%d", o.TLP.ByteCount, o.TLP.LowerAddress, o.TLP.Length))
		}
		if s := fmt.Sprint(got); s != "["+tc.want+"]" {
			t.Errorf("%s: %s, want [%s]", tc.name, s, tc.want)
		}
	}
	r := newRC(t, base(256, 512, 64))
	rd := r.memReq(tlp.MRd, 0x1_0000_0000, 4, 1)
	rd.RequesterID = tlp.NewID(9, 0, 0)
	if out := r.Receive(0, &rd); len(out) != 0 || r.Unroutable != 1 {
		t.Fatalf("a read from bus 9, behind no port: %v, unroutable %d", out, r.Unroutable)
	}
	rd = r.memReq(tlp.MRd, 0x2000, 4, 1)
	rd.RequesterID = tlp.NewID(1, 0, 0)
	if out := r.Receive(0, &rd); len(out) != 1 || out[0].TLP.Status != tlp.StatusUR {
		t.Fatalf("a read outside memory: %v", out)
	}
}

// TestLoopback: one root complex's CPU reads and writes another's memory
// (its completions routed back to the first's bus), for random sizes from
// 1 byte to 4 KiB at any alignment, under every MPS, MRRS and RCB: every
// byte arrives, and nothing is unexpected or malformed.
func TestLoopback(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, mps := range []int{128, 256, 512} {
		for _, mrrs := range []int{128, 512, 4096} {
			for _, rcb := range []int{64, 128} {
				a := newRC(t, Config{ID: tlp.NewID(0, 0, 0), Ports: []Port{{1, 1}}, MemBase: 0, MemSize: 1 << 20, MPS: mps, MRRS: mrrs, RCB: rcb})
				b := newRC(t, Config{ID: tlp.NewID(1, 0, 0), Ports: []Port{{0, 0}}, MemBase: 1 << 32, MemSize: 1 << 20, MPS: mps, MRRS: mrrs, RCB: rcb})
				for range 40 {
					n := 1 + r.IntN(4096)
					at := uint64(1<<32) + uint64(r.IntN(1<<20-n))
					data := make([]byte, n)
					for i := range data {
						data[i] = byte(r.Uint32())
					}
					for _, o := range a.Write(0, at, data) {
						if len(o.TLP.Data) > mps || o.TLP.Address>>12 != (o.TLP.Address+uint64(len(o.TLP.Data))-1)>>12 {
							t.Fatalf("write of %d at %#x: %v", n, at, &o.TLP)
						}
						b.Receive(0, &o.TLP)
					}
					id, reqs, ok := a.Read(0, at, n)
					if !ok {
						t.Fatal("no tags")
					}
					for _, q := range reqs {
						if 4*int(q.TLP.Length) > mrrs+4 {
							t.Fatalf("read request %v over MRRS %d", &q.TLP, mrrs)
						}
						for _, c := range b.Receive(0, &q.TLP) {
							a.Receive(0, &c.TLP)
						}
					}
					done := a.Done()
					if len(done) != 1 || done[0].ID != id || done[0].Status != tlp.StatusSC || !bytes.Equal(done[0].Data, data) {
						t.Fatalf("MPS %d MRRS %d RCB %d: read of %d at %#x: %+v", mps, mrrs, rcb, n, at, done)
					}
				}
				if a.Counts != (Counts{}) || b.Counts != (Counts{}) {
					t.Fatalf("MPS %d MRRS %d RCB %d: counts %+v %+v", mps, mrrs, rcb, a.Counts, b.Counts)
				}
			}
		}
	}
}

// TestCompletionChecks: a completion for the CPU's read is matched by tag
// and requester ID and must carry what is still owed; others are
// unexpected. An error status or poison ends the read with an error, and
// so does the completion timeout.
func TestCompletionChecks(t *testing.T) {
	a := newRC(t, base(256, 512, 64))
	id, reqs, _ := a.Read(0, 0x100, 8)
	q := reqs[0].TLP
	cpl := func(mod func(*tlp.TLP)) *tlp.TLP {
		c := &tlp.TLP{RequesterID: a.cfg.ID, Tag: q.Tag, ByteCount: 8, LowerAddress: 0, Length: 2, Data: make([]byte, 8)}
		c.Fmt, c.Type, _ = tlp.FmtType(tlp.CplD, false, 0)
		if mod != nil {
			mod(c)
		}
		return c
	}
	for _, tc := range []struct {
		name string
		c    *tlp.TLP
	}{
		{"another tag", cpl(func(c *tlp.TLP) { c.Tag++ })},
		{"another requester", cpl(func(c *tlp.TLP) { c.RequesterID = tlp.NewID(5, 0, 0) })},
		{"a byte count not owed", cpl(func(c *tlp.TLP) { c.ByteCount, c.Length, c.Data = 4, 1, make([]byte, 4) })},
		{"a lower address elsewhere", cpl(func(c *tlp.TLP) { c.LowerAddress = 4 })},
	} {
		before := a.Unexpected
		a.Receive(0, tc.c)
		if a.Unexpected != before+1 || a.Outstanding() != 1 {
			t.Fatalf("%s: unexpected %d, outstanding %d (%+v)", tc.name, a.Unexpected, a.Outstanding(), a.Counts)
		}
	}
	a.Receive(0, cpl(nil))
	if d := a.Done(); len(d) != 1 || d[0].ID != id || d[0].Status != tlp.StatusSC {
		t.Fatalf("the right completion: %+v", d)
	}
	_, reqs, _ = a.Read(0, 0x100, 8)
	q = reqs[0].TLP
	ur := cpl(func(c *tlp.TLP) {
		c.Fmt, c.Type, _ = tlp.FmtType(tlp.Cpl, false, 0)
		c.Length, c.Data, c.Status = 0, nil, tlp.StatusUR
	})
	a.Receive(0, ur)
	if d := a.Done(); len(d) != 1 || d[0].Status != tlp.StatusUR {
		t.Fatalf("a UR completion: %+v", d)
	}
	_, reqs, _ = a.Read(0, 0x100, 8)
	q = reqs[0].TLP
	a.Receive(0, cpl(func(c *tlp.TLP) { c.EP = true }))
	if d := a.Done(); len(d) != 1 || d[0].Status == tlp.StatusSC || a.Poisoned != 1 {
		t.Fatalf("a poisoned completion: %+v, poisoned %d", d, a.Poisoned)
	}
	a.Read(0, 0x100, 8)
	for range 101 {
		a.Tick()
	}
	if d := a.Done(); len(d) != 1 || d[0].Status == tlp.StatusSC || a.TimedOut != 1 {
		t.Fatalf("a read nobody answers: %+v, timed out %d", d, a.TimedOut)
	}
}
