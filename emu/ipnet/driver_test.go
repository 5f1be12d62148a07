package ipnet

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// twoParty is the two-party cluster without its traffic generators.
func twoParty(t *testing.T) (*cluster.Cluster, *Driver) {
	t.Helper()
	cfg := scenario.TwoParty()
	cfg.Flows = nil
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cl, d
}

// frame is an Ethernet frame from host src to host dst (-1: broadcast)
// of n bytes in all.
func frame(r *rand.Rand, src, dst, n int) []byte {
	f := make([]byte, n)
	to := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if dst >= 0 {
		to = MAC(dst)
	}
	from := MAC(src)
	copy(f, to[:])
	copy(f[6:], from[:])
	f[12], f[13] = 0x08, 0x00
	for i := 14; i < n; i++ {
		f[i] = byte(r.Uint32())
	}
	return f
}

// TestFramesCross: frames of every size from 60 bytes to the largest a
// slot carries, more at once than a ring holds, cross from A to B and
// from B to A whole and in order — each TLPs through both O-NICs — with
// the full ring holding the sender back (queued, never dropped or
// overwritten); and broadcast frames reach the peer.
func TestFramesCross(t *testing.T) {
	cl, d := twoParty(t)
	if p := d.Peers(0); len(p) != 1 || p[0] != "B" {
		t.Fatalf("A's peers %v, want [B]", p)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var want [2][][]byte
	for i := range 300 {
		src := i % 2
		n := 60 + r.IntN(1500)
		if i%50 == 0 {
			n = SlotBytes - slotHeader
		}
		dst := 1 - src
		if i%37 == 0 {
			dst = -1
		}
		f := frame(r, src, dst, n)
		d.Send(src, f)
		want[1-src] = append(want[1-src], f)
	}
	var got [2][][]byte
	for step := 0; step < 2000 && (len(got[0]) < len(want[0]) || len(got[1]) < len(want[1])); step++ {
		cl.Advance(cl.Now() + time.Microsecond)
		for h := range 2 {
			d.Receive(h, func(f []byte) { got[h] = append(got[h], append([]byte(nil), f...)) })
		}
		d.Pump()
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	for h := range 2 {
		if len(got[h]) != len(want[h]) {
			t.Fatalf("host %d received %d frames, want %d", h, len(got[h]), len(want[h]))
		}
		for i := range want[h] {
			if !bytes.Equal(got[h][i], want[h][i]) {
				t.Fatalf("host %d, frame %d: other bytes than were sent", h, i)
			}
		}
		st := d.Hosts[1-h].Stats
		if st.Queued == 0 || st.Dropped != 0 {
			t.Errorf("host %d's sender: %+v: want frames queued behind the full ring, none dropped", 1-h, st)
		}
	}
	cl.Advance(cl.Now() + 5*time.Microsecond) // (the last credits land)
	rep, err := cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Accounting
	if a.Delivered != a.Injected || a.Injected == 0 {
		t.Errorf("accounting %+v: every TLP of the frames should be delivered", a)
	}
	t.Logf("%d and %d frames; %d TLPs injected, at %v", len(got[0]), len(got[1]), a.Injected, cl.Now())
}

// TestDoorbellsAndBroadcast runs the driver on the ip-over-pcie cluster
// (A between B and C, doorbell windows to each peer's MSI range, a
// multicast window on A) the way its hosts would run it, by interrupt:
// frames from A reach B and C and theirs reach A, whole and in order, a
// receiver looks at its rings only on an MSI-X doorbell (or its
// watchdog), every doorbell is a TLP the far root complex raises as an
// MSI, and each broadcast frame from A is one write through the
// multicast window that both B and C take exactly once.
func TestDoorbellsAndBroadcast(t *testing.T) {
	cfg := scenario.IPOverPCIe()
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if !d.Doorbells(i) {
			t.Fatalf("host %s polls: every peer has a doorbell window to it", d.Hosts[i].Name)
		}
	}
	if d.Hosts[0].mcast == nil || d.Hosts[1].mcast != nil {
		t.Fatalf("multicast window: A %v, B %v; want A's only", d.Hosts[0].mcast, d.Hosts[1].mcast)
	}

	// A frame written without its doorbell waits for the watchdog.
	r := rand.New(rand.NewPCG(3, 4))
	got := make([][][]byte, 3)
	keep := func(h int) func([]byte) {
		return func(f []byte) { got[h] = append(got[h], append([]byte(nil), f...)) }
	}
	d.Send(0, frame(r, 0, 1, 200))
	cl.Advance(cl.Now() + 20*time.Microsecond)
	d.Hosts[1].serviceAt = cl.Now() // (as if it had just looked)
	d.Service(1, keep(1))
	if len(got[1]) != 0 {
		t.Fatalf("B took a frame no doorbell announced before its watchdog")
	}
	d.Ring()
	cl.Advance(cl.Now() + 20*time.Microsecond)
	if !d.Hosts[1].rx {
		t.Fatalf("the doorbell raised no RX interrupt at B")
	}
	d.Service(1, keep(1))
	if len(got[1]) != 1 {
		t.Fatalf("B took %d frames after the doorbell, want 1", len(got[1]))
	}
	got[1] = nil

	var want [3][][]byte
	bcasts := 0
	for i := range 400 {
		src, dst := 0, 1+i%2
		if i%3 == 2 {
			src, dst = dst, 0
		}
		if i%29 == 0 {
			src, dst = 0, -1
			bcasts++
		}
		f := frame(r, src, dst, 60+r.IntN(3000))
		d.Send(src, f)
		if dst < 0 {
			want[1] = append(want[1], f)
			want[2] = append(want[2], f)
		} else {
			want[dst] = append(want[dst], f)
		}
	}
	done := func() bool {
		for h := range 3 {
			if len(got[h]) < len(want[h]) {
				return false
			}
		}
		return true
	}
	for step := 0; step < 5000 && !done(); step++ {
		d.Ring()
		cl.Advance(cl.Now() + time.Microsecond)
		for h := range 3 {
			d.Service(h, keep(h))
		}
	}
	if err := d.Err(); err != nil {
		t.Fatal(err)
	}
	// Per ring, order holds; a broadcast frame comes by its own ring, so
	// compare each receiver's frames as a multiset and each sender's in
	// order.
	for h := range 3 {
		if len(got[h]) != len(want[h]) {
			t.Fatalf("host %d took %d frames, want %d", h, len(got[h]), len(want[h]))
		}
		seen := map[string]int{}
		for _, f := range got[h] {
			seen[string(f)]++
		}
		for _, f := range want[h] {
			if seen[string(f)] == 0 {
				t.Fatalf("host %d: a frame sent to it never came whole (or came twice)", h)
			}
			seen[string(f)]--
		}
	}
	a, b, c := d.Hosts[0].Stats, d.Hosts[1].Stats, d.Hosts[2].Stats
	if a.Multicast != uint64(bcasts) {
		t.Errorf("A wrote %d broadcast frames through the multicast window, want %d", a.Multicast, bcasts)
	}
	for _, h := range d.Hosts {
		if h.Stats.Doorbells == 0 || h.Stats.Interrupts == 0 || h.Stats.Lost+h.Stats.Corrupt+h.Stats.Dropped != 0 {
			t.Errorf("host %s: %+v: want doorbells rung and taken, nothing lost", h.Name, h.Stats)
		}
	}
	cl.Advance(cl.Now() + 20*time.Microsecond) // (the last doorbells land)
	rep, err := cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	var rung, msis uint64
	for i, h := range d.Hosts {
		rung += h.Stats.Doorbells
		msis += rep.Hosts[i].Interrupts
		if rep.Hosts[i].Interrupts != h.Stats.Interrupts {
			t.Errorf("host %s: the root complex raised %d MSIs, the driver took %d", h.Name, rep.Hosts[i].Interrupts, h.Stats.Interrupts)
		}
	}
	if rung != msis {
		t.Errorf("%d doorbells rung, %d MSIs raised", rung, msis)
	}
	if ac := rep.Accounting; ac.Delivered != ac.Injected {
		t.Errorf("accounting %+v: every TLP should be delivered", ac)
	}
	t.Logf("A %+v; B %+v; C %+v", a, b, c)
}

// TestPace: the lag is followed at its worst and in wall time spent over
// a millisecond behind, and said live once when it passes LiveLag, again
// only a second later, and when it has caught up.
func TestPace(t *testing.T) {
	var live bytes.Buffer
	p := pace{live: &live}
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	for _, st := range []struct {
		at, lag time.Duration
		says    string
	}{
		{0, 0, ""},
		{10 * ms, 2 * ms, ""},
		{20 * ms, 25 * ms, "25.0 ms behind"},
		{30 * ms, 30 * ms, ""},
		{1020 * ms, 40 * ms, "40.0 ms behind"},
		{1030 * ms, 500 * time.Microsecond, "caught up"},
		{1040 * ms, 0, ""},
	} {
		live.Reset()
		p.step(t0.Add(st.at), st.lag)
		if got := live.String(); (st.says == "") != (got == "") || !strings.Contains(got, st.says) {
			t.Errorf("at %v, lag %v: said %q, want %q", st.at, st.lag, got, st.says)
		}
	}
	if p.maxLag != 40*ms || p.behind != 1020*ms {
		t.Errorf("max lag %v, behind %v; want 40ms and 1.02s", p.maxLag, p.behind)
	}
}
