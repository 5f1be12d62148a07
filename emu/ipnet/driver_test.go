package ipnet

import (
	"bytes"
	"math/rand/v2"
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
