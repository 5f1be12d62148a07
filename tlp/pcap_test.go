package tlp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"

	"onic/testbenches/tools"
	"onic/tlp"
	"onic/tlp/pcap"
)

// writeVectors writes every valid vector to a capture, record i at i µs + 3 ns
// on tap i, alternating direction.
func writeVectors(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range tlp.Vectors() {
		var d tlp.TLP
		if err := d.Decode(tlp.MustHex(t, v.Hex)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteTLP(time.Duration(i)*time.Microsecond+3, pcap.TapHeader{Direction: pcap.Direction(i & 1), Tap: uint16(100 + i)}, &d); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestPcapRoundTrip(t *testing.T) {
	data := writeVectors(t)
	if again := writeVectors(t); !bytes.Equal(data, again) {
		t.Fatal("the same TLPs gave two different captures")
	}
	r, err := pcap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var d tlp.TLP
	for i, v := range tlp.Vectors() {
		rec, err := r.Next(&d)
		if err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		if rec.At != time.Duration(i)*time.Microsecond+3 || rec.Tap.Tap != uint16(100+i) || rec.Tap.Direction != pcap.Direction(i&1) {
			t.Fatalf("record %d: at %v tap %+v", i+1, rec.At, rec.Tap)
		}
		if !bytes.Equal(rec.Raw, tlp.MustHex(t, v.Hex)) || !tlp.EqualFields(&d, &v.Want) {
			t.Fatalf("record %d: got %x", i+1, rec.Raw)
		}
	}
	if _, err := r.Next(&d); err != io.EOF {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}
}

func TestPcapMalformedRecordsKeepReaderUsable(t *testing.T) {
	var buf bytes.Buffer
	w, _ := pcap.NewWriter(&buf)
	good := tlp.TLP{Fmt: tlp.Fmt3DW, Length: 1, FirstBE: 0xF, Address: 0x100}
	_ = w.WriteTLP(0, pcap.TapHeader{}, &good)
	_ = w.WriteRaw(1, pcap.TapHeader{}, []byte{0x40, 0, 0, 2, 0, 0, 0, 0xF}) // truncated
	_ = w.WriteTLP(2, pcap.TapHeader{Tap: 9}, &good)
	r, err := pcap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var d tlp.TLP
	if _, err := r.Next(&d); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(&d); !errors.Is(err, tlp.ErrTruncatedHeader) || !strings.Contains(err.Error(), "pcap record 2") {
		t.Fatalf("bad record: %v", err)
	}
	if rec, err := r.Next(&d); err != nil || rec.Tap.Tap != 9 {
		t.Fatalf("record after a bad one: %+v %v", rec, err)
	}
}

func TestPcapRejectsOtherLinkTypes(t *testing.T) {
	data := writeVectors(t)
	data[20] = 1 // LINKTYPE_ETHERNET in the little-endian file header
	if _, err := pcap.NewReader(bytes.NewReader(data)); err == nil || !strings.Contains(err.Error(), "link type 1") {
		t.Fatalf("Ethernet capture accepted: %v", err)
	}
	if _, err := pcap.NewReader(bytes.NewReader([]byte("not a pcap"))); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestGopacketNewPacket(t *testing.T) {
	for _, v := range tlp.Vectors() {
		raw := pcap.TapHeader{Direction: pcap.Upstream, Tap: 7}.AppendTo(nil)
		raw = append(raw, tlp.MustHex(t, v.Hex)...)
		p := gopacket.NewPacket(raw, pcap.LinkTypeONIC, gopacket.Default)
		if el := p.ErrorLayer(); el != nil {
			t.Fatalf("%s: %v", v.Name, el.Error())
		}
		tap, ok := p.Layer(pcap.LayerTypeTap).(*pcap.Tap)
		if !ok || tap.Tap != 7 || tap.Direction != pcap.Upstream {
			t.Fatalf("%s: tap layer %+v", v.Name, p.Layer(pcap.LayerTypeTap))
		}
		l, ok := p.Layer(pcap.LayerTypeTLP).(*pcap.Layer)
		if !ok || !tlp.EqualFields(&l.TLP, &v.Want) {
			t.Fatalf("%s: TLP layer %+v", v.Name, p.Layer(pcap.LayerTypeTLP))
		}
		if v.Want.Kind().HasData() {
			if app := p.ApplicationLayer(); app == nil || !bytes.Equal(app.Payload(), v.Want.Data) {
				t.Fatalf("%s: payload layer %v", v.Name, app)
			}
		}
	}
	// A malformed TLP surfaces as gopacket's error layer naming the rule.
	raw := append(pcap.TapHeader{}.AppendTo(nil), tlp.MustHex(t, "00000002 010005ff 00000ffc")...)
	p := gopacket.NewPacket(raw, pcap.LinkTypeONIC, gopacket.Default)
	if el := p.ErrorLayer(); el == nil || !errors.Is(el.Error(), tlp.ErrCross4K) {
		t.Fatalf("4 KB crossing not reported: %v", el)
	}
}

func TestDecodingLayerParser(t *testing.T) {
	var tap pcap.Tap
	var l pcap.Layer
	var payload gopacket.Payload
	parser := gopacket.NewDecodingLayerParser(pcap.LayerTypeTap, &tap, &l, &payload)
	decoded := make([]gopacket.LayerType, 0, 4)
	for _, v := range tlp.Vectors() {
		raw := append(pcap.TapHeader{Tap: 3}.AppendTo(nil), tlp.MustHex(t, v.Hex)...)
		if err := parser.DecodeLayers(raw, &decoded); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if decoded[0] != pcap.LayerTypeTap || decoded[1] != pcap.LayerTypeTLP || !tlp.EqualFields(&l.TLP, &v.Want) {
			t.Fatalf("%s: decoded %v %+v", v.Name, decoded, l.TLP)
		}
		allocs := testing.AllocsPerRun(100, func() { _ = parser.DecodeLayers(raw, &decoded) })
		if allocs != 0 {
			t.Errorf("%s: DecodingLayerParser made %.1f allocs, want 0", v.Name, allocs)
		}
	}
}

func TestSerializeLayer(t *testing.T) {
	for _, v := range tlp.Vectors() {
		l := pcap.Layer{TLP: v.Want}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &l); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if !bytes.Equal(buf.Bytes(), tlp.MustHex(t, v.Hex)) {
			t.Fatalf("%s: serialized %x", v.Name, buf.Bytes())
		}
	}
}

// TestTsharkReadsCapture has the real tshark read a capture and checks the
// frame count, each frame's length, timestamp and link encapsulation.
func TestTsharkReadsCapture(t *testing.T) {
	tshark := tools.Require(t, "tshark")
	path := filepath.Join(t.TempDir(), "vectors.pcap")
	if err := os.WriteFile(path, writeVectors(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tshark, "-n", "-r", path, "-T", "fields",
		"-e", "frame.number", "-e", "frame.len", "-e", "frame.time_epoch", "-e", "frame.protocols")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(tlp.Vectors()) {
		t.Fatalf("tshark saw %d frames, want %d:\n%s", len(lines), len(tlp.Vectors()), out)
	}
	for i, line := range lines {
		f := strings.Split(line, "\t")
		wantLen := pcap.TapHeaderLen + len(tlp.MustHex(t, tlp.Vectors()[i].Hex))
		wantTime := fmt.Sprintf("0.%06d003", i)
		if len(f) != 4 || f[0] != fmt.Sprint(i+1) || f[1] != fmt.Sprint(wantLen) || f[2] != wantTime || !strings.HasPrefix(f[3], "user_dlt") {
			t.Errorf("frame %d: tshark says %q; want length %d, time %s, user_dlt encapsulation", i+1, line, wantLen, wantTime)
		}
	}
}

// TestTsharkDissector runs tshark with onic's Wireshark dissector
// (wireshark/onic.lua) over a capture of every vector and compares each
// field tshark decodes with onic's own decoder: two independent decoders
// that must agree.
func TestTsharkDissector(t *testing.T) {
	tshark := tools.Require(t, "tshark")
	path := filepath.Join(t.TempDir(), "vectors.pcap")
	if err := os.WriteFile(path, writeVectors(t), 0o644); err != nil {
		t.Fatal(err)
	}
	fields := []string{"onic.tap", "onic.direction", "onic_tlp.kind", "onic_tlp.tag", "onic_tlp.length",
		"onic_tlp.requester", "onic_tlp.completer", "onic_tlp.address", "onic_tlp.first_be", "onic_tlp.last_be",
		"onic_tlp.byte_count", "onic_tlp.status", "onic_tlp.lower_address", "onic_tlp.message_code", "onic_tlp.register",
		"onic_tlp.data"}
	args := []string{"-n", "-X", "lua_script:" + filepath.Join("wireshark", "onic.lua"), "-r", path,
		"-T", "fields", "-E", "separator=|"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(tlp.Vectors()) {
		t.Fatalf("tshark decoded %d frames, want %d:\n%s", len(lines), len(tlp.Vectors()), out)
	}
	for i, v := range tlp.Vectors() {
		w := &v.Want
		k, c := w.Kind(), w.Kind().Class()
		want := []string{fmt.Sprint(100 + i), fmt.Sprint(i & 1), k.String(), fmt.Sprintf("0x%04x", w.Tag), "",
			w.RequesterID.String(), "", "", "", "", "", "", "", "", "", fmt.Sprintf("%x", w.Data)}
		if tlp.LengthDefined(k) {
			want[4] = fmt.Sprint(w.Length)
		}
		if c == tlp.ClassCompletion || c == tlp.ClassConfig {
			want[6] = w.CompleterID.String()
		}
		if c == tlp.ClassMemory || c == tlp.ClassIO || c == tlp.ClassAtomic || c == tlp.ClassMessage && w.Routing() == tlp.RouteByAddress {
			want[7] = fmt.Sprintf("0x%016x", w.Address)
		}
		if c == tlp.ClassMemory || c == tlp.ClassIO || c == tlp.ClassAtomic || c == tlp.ClassConfig {
			want[8], want[9] = fmt.Sprintf("0x%02x", w.FirstBE), fmt.Sprintf("0x%02x", w.LastBE)
		}
		if c == tlp.ClassCompletion {
			want[10], want[11], want[12] = fmt.Sprint(w.ByteCount), fmt.Sprint(uint8(w.Status)), fmt.Sprintf("0x%02x", w.LowerAddress)
		}
		if c == tlp.ClassMessage {
			want[13] = fmt.Sprintf("0x%02x", w.MessageCode)
		}
		if c == tlp.ClassConfig {
			want[14] = fmt.Sprintf("0x%04x", w.Register)
		}
		if got, w := lines[i], strings.Join(want, "|"); got != w {
			t.Errorf("%s: tshark and onic disagree\n tshark %s\n onic   %s", v.Name, got, w)
		}
	}
}
