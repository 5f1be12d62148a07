package cluster

import (
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/tlp"
)

// TestHostRoutesCompletionsByID: a host's root complex sends a read's
// completions to the root port whose bus holds the requester's ID, in
// the read's own PCI segment; a read whose requester no root port holds
// is an Unexpected Completion, counted at the host and never answered.
func TestHostRoutesCompletionsByID(t *testing.T) {
	c := scenario.TwoParty()
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	h := cl.hosts[1]
	o := h.onics[0]
	for _, tc := range []struct {
		name string
		seg  int
		id   tlp.ID
		want *onicNode
	}{
		{"the O-NIC's own ID", o.seg, o.self, o},
		{"another function on its bus", o.seg, tlp.NewID(o.self.Bus(), 0, 1), nil},
		{"a bus no root port holds: the proxy ID a peer sent", o.seg, tlp.NewID(0x10, 0, 0), nil},
		{"another segment", o.seg + 1, o.self, nil},
	} {
		if got := h.routeByID(tc.seg, tc.id); got != tc.want {
			t.Errorf("%s: routed to %v, want %v", tc.name, got, tc.want)
		}
	}
	m := cl.newMsg()
	m.t = tlp.TLP{RequesterID: tlp.NewID(0x10, 0, 0), Length: 1, FirstBE: 0xF, Address: 1 << 32}
	m.t.Fmt, m.t.Type, _ = tlp.FmtType(tlp.MRd, true, 0)
	m.at, m.host = o, h
	free := len(cl.free)
	h.answerRead(m)
	if h.unexpected != 1 || len(cl.free) != free+1 {
		t.Fatalf("a read from 10:00.0: %d unexpected completions, %d messages freed", h.unexpected, len(cl.free)-free)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	if r.Hosts[1].UnexpectedCompletions != 1 {
		t.Fatalf("report: host B's unexpected completions %d", r.Hosts[1].UnexpectedCompletions)
	}
}

// TestReadsCrossByID: the two-party exchange with reads: every read of
// the far host's memory reaches it as the far O-NIC's own request and
// its completions come back through both O-NICs' tables; nothing is
// unexpected and no tag is left outstanding once the run has drained.
func TestReadsCrossByID(t *testing.T) {
	c, err := scenario.Lookup("two-party-read")
	if err != nil {
		t.Fatal(err)
	}
	c.Duration = 50 * time.Microsecond
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	a := r.Accounting
	if a.Delivered == 0 || a.Dropped != 0 || a.ErrorStatus != 0 {
		t.Fatalf("accounting %+v", a)
	}
	for _, h := range r.Hosts {
		if h.UnexpectedCompletions != 0 {
			t.Fatalf("host %s: %d unexpected completions", h.Name, h.UnexpectedCompletions)
		}
	}
	for _, o := range r.ONICs {
		if n := o.Manager["unexpected-completion"]; n != 0 {
			t.Fatalf("%s: %d unexpected completions", o.Name, n)
		}
	}
	for _, o := range cl.onics {
		if n := o.mgr.Outstanding(); n > int(a.InFlight) {
			t.Fatalf("%s: %d tags outstanding for %d requests in flight", o.cfg.Name, n, a.InFlight)
		}
	}
	t.Logf("%d reads delivered, %d in flight", a.Delivered, a.InFlight)
}
