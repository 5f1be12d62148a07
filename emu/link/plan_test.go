package link

import (
	"math"
	"strings"
	"testing"

	"onic/emu/sim"
	"onic/pcie/lanes"
)

// opticalWords is how many 512-bit words the optical link's wire format
// (docs/hdl.md, "The optical link") gives a frame of n payload DWs: a
// token DW, a four-DW header slot, the payload and an LCRC DW, in words
// of 16 DWs. Written from the format's description, not from the RTL.
func opticalWords(n int) int64 { return int64(1+4+n+1+15) / 16 }

// TestOpticalPlans: on each preset lane plan one memory write takes the
// RTL's whole words at the plan's word time, and a long run of 256-byte
// writes moves at the plan's data rate less the frames' overhead (five
// words for 256 bytes): a plan slower than PCIe Gen3 x16 (4 x 25.78125
// Gb/s, 100 Gb/s of data) limits the link.
func TestOpticalPlans(t *testing.T) {
	for _, p := range lanes.Presets {
		for _, n := range []int{0, 1, 16, 64, 128, 1024} {
			s, l, _, b := newLink(t, Config{Plan: p, MPS: 4096, Propagation: 50 * sim.Nanosecond})
			l.Send(0, &Packet{Class: Posted, Bytes: 16 + 4*n, Payload: 4 * n})
			s.Run(sim.Millisecond)
			want := sim.Time(math.Ceil(float64(opticalWords(n))*p.WordPS())) + 50*sim.Nanosecond
			if len(b.at) != 1 || absDiff(b.at[0], want) > 1 {
				t.Errorf("%v, %d DWs: arrived at %v, want %v (%d words)", p, n, b.at, want, opticalWords(n))
			}
		}
		// A three-DW header takes the frame's four-DW slot all the same.
		s, l, _, b := newLink(t, Config{Plan: p, MPS: 256})
		l.Send(0, &Packet{Class: Posted, Bytes: 12 + 44, Payload: 44})
		s.Run(sim.Millisecond)
		if want := sim.Time(math.Ceil(2 * p.WordPS())); len(b.at) != 1 || absDiff(b.at[0], want) > 1 {
			t.Errorf("%v, 3-DW header and 11 DWs: arrived at %v, want %v (two words)", p, b.at, want)
		}

		const count = 2000
		s, l, _, b = newLink(t, Config{Plan: p, MPS: 256, Credits: Credits{PH: 256, PD: 8192, NPH: 64, NPD: 64}, ReplayBytes: 64 << 10})
		for range count {
			l.Send(0, &Packet{Class: Posted, Bytes: 16 + 256, Payload: 256})
		}
		s.Run(sim.Second)
		if len(b.at) != count {
			t.Fatalf("%v: %d of %d writes arrived", p, len(b.at), count)
		}
		gbps := float64(256*8*(count-1)) / float64(b.at[count-1]-b.at[0]) * 1000 // bits per ps to Gb/s
		want := min(p.DataGbps(), 128) * 256 / (5 * 64)
		if math.Abs(gbps-want) > want*0.001 {
			t.Errorf("%v: 256-byte writes at %.3f Gb/s, want %.3f", p, gbps, want)
		}
		t.Logf("%-16v %7.2f Gb/s of 256-byte writes (a word every %.1f ps)", p, gbps, p.WordPS())
	}
}

func absDiff(a, b sim.Time) sim.Time {
	if a > b {
		return a - b
	}
	return b - a
}

// TestOpticalRxWords: an optical link with RxWords has one receive
// buffer of 64-byte words for every TLP, as the RTL's optical link
// advertises (docs/hdl.md): a receiver that holds its TLPs open takes
// as many as their frames' token, header slot and payload words fit,
// whatever their classes — 256-byte writes five words each, header-only
// reads one — and releases let the next in.
func TestOpticalRxWords(t *testing.T) {
	const words = 100
	for _, tc := range []struct {
		name string
		pkts []Packet
		want int
	}{
		{"256-byte writes", []Packet{{Class: Posted, Bytes: 16 + 256, Payload: 256}}, words / 5},
		{"64-byte writes", []Packet{{Class: Posted, Bytes: 16 + 64, Payload: 64}}, words / 2},
		{"reads and writes", []Packet{{Class: NonPosted, Bytes: 16}, {Class: Posted, Bytes: 16 + 256, Payload: 256}}, 2 * words / 6},
	} {
		s, l, _, b := newLink(t, Config{Plan: lanes.Presets[0], MPS: 256, RxWords: words})
		b.hold = HoldOpen
		for i := range 200 {
			p := tc.pkts[i%len(tc.pkts)]
			l.Send(0, &p)
		}
		s.Run(50 * sim.Microsecond)
		if len(b.at) != tc.want {
			t.Errorf("%s: %d TLPs in a buffer of %d words, want %d", tc.name, len(b.at), words, tc.want)
		}
		// (Two releases: the first of the reads and writes frees one word,
		// too few for the write next in line.)
		l.Release(1, l.Epoch(), 0)
		l.Release(1, l.Epoch(), 0)
		s.Run(100 * sim.Microsecond)
		if len(b.at) <= tc.want {
			t.Errorf("%s: releases let nothing in (%d TLPs)", tc.name, len(b.at))
		}
	}
	s := sim.New(0)
	for _, c := range []Config{
		{Gen: 3, Lanes: 16, MPS: 256, RxWords: 100},     // (not optical)
		{Plan: lanes.Presets[0], MPS: 256, RxWords: 64}, // (less than a 4 KiB frame's 65 words)
	} {
		if _, err := New(s, c, nil, nil); err == nil || !strings.Contains(err.Error(), "rx_words") {
			t.Errorf("%+v: %v, want an rx_words error", c, err)
		}
	}
}
