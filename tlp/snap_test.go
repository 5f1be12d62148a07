package tlp_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"

	"onic/testbenches/tools"
	"onic/tlp"
	"onic/tlp/pcap"
)

// snappable returns random TLPs of every kind that has something a capture
// can leave out (a payload, or a digest), each with the bytes of its whole
// encoding.
func snappable(t *testing.T, n int) ([]tlp.TLP, [][]byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 9))
	var ts []tlp.TLP
	var bs [][]byte
	for _, k := range tlp.Kinds() {
		for range n {
			x := tlp.RandomTLP(r, k)
			if !k.HasData() && !x.TD {
				x.TD = true
			}
			b, err := x.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			ts, bs = append(ts, x), append(bs, b)
		}
	}
	return ts, bs
}

// TestSnapped: a record written snapped holds the pseudo-header and the
// TLP's prefixes and header, and declares the whole TLP's length; it reads
// back with every header field and Snapped set, through the reader, JSON
// and gopacket, and is written again byte for byte.
func TestSnapped(t *testing.T) {
	ts, bs := snappable(t, 50)
	var file bytes.Buffer
	w, err := pcap.NewWriter(&file)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		if err := w.WriteSnapped(0, pcap.TapHeader{Tap: uint16(i)}, &ts[i]); err != nil {
			t.Fatal(err)
		}
	}
	r, err := pcap.NewReader(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	w2, _ := pcap.NewWriter(&again)
	var d tlp.TLP
	for i, x := range ts {
		rec, err := r.Next(&d)
		if err != nil {
			t.Fatalf("record %d (%s): %v", i+1, x.Kind(), err)
		}
		head := len(x.Prefixes) + x.HeaderLen()
		if !bytes.Equal(rec.Raw, bs[i][:head]) || !d.Snapped || d.Data != nil || d.Digest != 0 {
			t.Fatalf("record %d (%s): raw %x snapped %v data %d bytes", i+1, x.Kind(), rec.Raw, d.Snapped, len(d.Data))
		}
		want := x
		want.Data, want.Digest, want.Snapped = nil, 0, true
		if !tlp.EqualFields(&d, &want) {
			t.Fatalf("record %d: fields\n got %+v\nwant %+v", i+1, d, want)
		}
		if _, err := d.AppendBinary(nil); !errors.Is(err, tlp.ErrTruncatedPayload) {
			t.Fatalf("record %d: a snapped TLP encoded whole: %v", i+1, err)
		}
		// JSON keeps it snapped: no data, no digest, the length.
		j := d.AppendJSON(nil)
		var u tlp.TLP
		if err := u.UnmarshalJSON(j); err != nil || !u.Snapped || !tlp.EqualFields(&u, &want) {
			t.Fatalf("record %d: JSON %s back: %v %+v", i+1, j, err, u)
		}
		if bytes.Contains(j, []byte(`"data"`)) || bytes.Contains(j, []byte(`"ecrc"`)) {
			t.Fatalf("record %d: JSON of a snapped TLP: %s", i+1, j)
		}
		if err := w2.WriteTLP(0, pcap.TapHeader{Tap: uint16(i)}, &u); err != nil {
			t.Fatal(err)
		}
		// DecodeSnapped of a whole TLP is Decode.
		var whole tlp.TLP
		if err := whole.DecodeSnapped(bs[i]); err != nil || whole.Snapped || !bytes.Equal(whole.Data, x.Data) {
			t.Fatalf("record %d: DecodeSnapped of the whole TLP: %v snapped %v", i+1, err, whole.Snapped)
		}
	}
	if !bytes.Equal(file.Bytes(), again.Bytes()) {
		t.Fatal("writing the snapped TLPs read back gave a different file")
	}
	// The pcap record lengths: captured the header, original the whole.
	b := file.Bytes()[24:]
	for i := range ts {
		incl, orig := binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
		if int(incl) != pcap.TapHeaderLen+len(ts[i].Prefixes)+ts[i].HeaderLen() || int(orig) != pcap.TapHeaderLen+len(bs[i]) {
			t.Fatalf("record %d: lengths %d/%d, want header %d/whole %d", i+1, incl, orig,
				pcap.TapHeaderLen+len(ts[i].Prefixes)+ts[i].HeaderLen(), pcap.TapHeaderLen+len(bs[i]))
		}
		b = b[16+incl:]
	}
	// gopacket marks the packet truncated and decodes the header.
	for i := range ts[:40] {
		raw := append(pcap.TapHeader{Tap: 1}.AppendTo(nil), bs[i][:len(ts[i].Prefixes)+ts[i].HeaderLen()]...)
		p := gopacket.NewPacket(raw, pcap.LinkTypeONIC, gopacket.Default)
		l, ok := p.Layer(pcap.LayerTypeTLP).(*pcap.Layer)
		if !ok || !l.Snapped || !p.Metadata().Truncated || l.Kind() != ts[i].Kind() || l.Tag != ts[i].Tag {
			t.Fatalf("gopacket, record %d: layer %v truncated %v", i+1, p.Layer(pcap.LayerTypeTLP), p.Metadata().Truncated)
		}
	}
}

// TestSnappedRefusals: a record cut anywhere but at the end of the header,
// or declaring another length than its header's, is an error naming it;
// the reader goes on. JSON refuses a snapped TLP with data.
func TestSnappedRefusals(t *testing.T) {
	x := tlp.TLP{Fmt: tlp.Fmt4DWData, Type: 0, Length: 4, RequesterID: 0x100, Address: 1 << 32, FirstBE: 15, LastBE: 15, Data: make([]byte, 16)}
	whole, _ := x.AppendBinary(nil)
	var file bytes.Buffer
	w := pcapgo.NewWriterNanos(&file)
	if err := w.WriteFileHeader(pcap.SnapLen, pcap.LinkTypeONIC); err != nil {
		t.Fatal(err)
	}
	// cut writes a record of whole's first n bytes that says it had full.
	cut := func(n, full int) {
		rec := append(pcap.TapHeader{}.AppendTo(nil), whole[:n]...)
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(0, 0), CaptureLength: len(rec), Length: pcap.TapHeaderLen + full}
		if err := w.WritePacket(ci, rec); err != nil {
			t.Fatal(err)
		}
	}
	cut(20, len(whole))   // into the payload
	cut(12, len(whole))   // into the header
	cut(16, len(whole)+4) // the header, but not this TLP's length
	cut(16, len(whole))   // good
	r, _ := pcap.NewReader(bytes.NewReader(file.Bytes()))
	var d tlp.TLP
	for i := 1; i <= 3; i++ {
		if _, err := r.Next(&d); err == nil || !strings.Contains(err.Error(), "not at the end of a TLP header") {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if _, err := r.Next(&d); err != nil || !d.Snapped || d.Address != 1<<32 {
		t.Errorf("record 4: %v %+v", err, d)
	}
	for _, j := range []string{
		`{"kind":"MWr","address":"0x100000000","length":4,"first_be":15,"last_be":15,"requester_id":"01:00.0","snapped":true,"data":"00000000"}`,
		`{"kind":"MWr","address":"0x100000000","first_be":15,"last_be":15,"requester_id":"01:00.0","snapped":true}`,
		`{"kind":"MRd","address":"0x100000000","length":4,"first_be":15,"last_be":15,"requester_id":"01:00.0","snapped":true}`,
	} {
		var u tlp.TLP
		if err := u.UnmarshalJSON([]byte(j)); err == nil {
			t.Errorf("%s: accepted", j)
		}
	}
}

// TestTsharkSnapped: the dissector shows a snapped record's header fields
// and how many bytes the capture left out, with no malformed-packet error.
func TestTsharkSnapped(t *testing.T) {
	tshark := tools.Require(t, "tshark")
	ts, bs := snappable(t, 2)
	var file bytes.Buffer
	w, _ := pcap.NewWriter(&file)
	for i := range ts {
		if err := w.WriteSnapped(0, pcap.TapHeader{Tap: uint16(i)}, &ts[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "snapped.pcap")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-n", "-X", "lua_script:"+filepath.Join("wireshark", "onic.lua"), "-r", path,
		"-T", "fields", "-E", "separator=|", "-e", "onic_tlp.kind", "-e", "onic_tlp.tag", "-e", "onic_tlp.snapped",
		"-e", "_ws.expert", "-e", "_ws.malformed").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(ts) {
		t.Fatalf("tshark decoded %d frames, want %d:\n%s", len(lines), len(ts), out)
	}
	for i, x := range ts {
		left := len(bs[i]) - len(x.Prefixes) - x.HeaderLen()
		want := fmt.Sprintf("%s|0x%04x|%d||", x.Kind(), x.Tag, left)
		if lines[i] != want {
			t.Errorf("frame %d: tshark %q, want %q", i+1, lines[i], want)
		}
	}
}
