package cluster

import (
	"bytes"
	"io"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/tlp"
	"onic/tlp/pcap"
)

// TestHostTags: host A reads B's memory with 32 transfers of 64 KiB in
// flight (4,096 requests of 512 bytes, far more than a requester has
// tags toward an O-NIC), and its O-NIC's host tap sees every read carry
// an 8-bit tag (T9 and T8 00b: the O-NIC does not advertise 10-bit tag
// completion, PG213's CQ descriptor carries 8 bits) that no other read
// of A's root complex still waiting for completions holds (PCIe Base
// §2.2.6.2); all 256 are out at once, so reads waited for tags, and every
// read is still answered whole.
func TestHostTags(t *testing.T) {
	cfg, err := scenario.Lookup("two-party-read")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Duration = 40 * time.Microsecond
	cfg.Flows = cfg.Flows[:1]
	cfg.Flows[0].Depth = 32
	pc, rep := captured(t, cfg, "onicA.host")
	if a := rep.Accounting; a.Delivered == 0 || a.Dropped+a.Denied+a.ErrorStatus+a.Unsupported != 0 {
		t.Fatalf("accounting %+v", a)
	}
	rd, err := pcap.NewReader(bytes.NewReader(pc))
	if err != nil {
		t.Fatal(err)
	}
	left := map[uint16]int{} // outstanding reads by tag: bytes still owed
	most, reads := 0, 0
	for {
		var p tlp.TLP
		_, err := rd.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch p.Kind() {
		case tlp.MRd:
			if p.Tag > 0xFF {
				t.Fatalf("read %d: tag %#x, a 10-bit tag toward a completer without 10-bit tags", reads, p.Tag)
			}
			if _, out := left[p.Tag]; out {
				t.Fatalf("read %d: tag %#x is another outstanding read's", reads, p.Tag)
			}
			left[p.Tag] = int(p.Length) * 4
			most = max(most, len(left))
			reads++
		case tlp.CplD:
			n, out := left[p.Tag]
			if !out {
				t.Fatalf("a completion for tag %#x, which no read holds", p.Tag)
			}
			if n -= int(p.Length) * 4; n <= 0 { // (a capture keeps a generator's headers: Length, not Data)
				delete(left, p.Tag)
			} else {
				left[p.Tag] = n
			}
		}
	}
	if most != 256 || reads < 1024 {
		t.Fatalf("%d reads, at most %d outstanding at once; want all 256 tags out", reads, most)
	}
	t.Logf("%d reads, %d Gb/s; at most %d outstanding", reads, int(rep.Flows[0].Gbps), most)
}
