package cluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/testbenches/tools"
	"onic/tlp"
	"onic/tlp/pcap"
)

// captured runs c capturing at taps and returns the pcap bytes and report.
func captured(t *testing.T, c scenario.Config, taps ...string) ([]byte, Report) {
	t.Helper()
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := cl.Capture(&buf, taps); err != nil {
		t.Fatal(err)
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), r
}

// TestCapture: with every tap on, each TLP arrival is one record, in time
// order; the host link shows the host's own requests, the far O-NIC's
// port shows them translated (proxy requester, far-side address); two
// runs write identical bytes.
func TestCapture(t *testing.T) {
	c := scenario.TwoParty()
	c.Duration = 5 * time.Microsecond
	pc, r := captured(t, c)
	if len(r.Taps) != 6 || r.Taps[0] != "onicA.host" || r.Taps[4] != "onicB.port-a" {
		t.Fatalf("taps %v", r.Taps)
	}
	rd, err := pcap.NewReader(bytes.NewReader(pc))
	if err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	seen := map[uint16]int{}
	for {
		var p tlp.TLP
		rec, err := rd.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.At < last {
			t.Fatalf("record %d at %v before %v", rd.Count(), rec.At, last)
		}
		last = rec.At
		seen[rec.Tap.Tap]++
		if rec.Interface != int(rec.Tap.Tap) || rd.Interface(rec.Interface) != r.Taps[rec.Tap.Tap] {
			t.Fatalf("record %d: tap %d on pcapng interface %d %q", rd.Count(), rec.Tap.Tap, rec.Interface, rd.Interface(rec.Interface))
		}
		if p.Kind() == tlp.MWr && (!p.Snapped || p.Length == 0 || len(rec.Raw) != p.HeaderLen()) {
			// A generator's write has no bytes: its header alone, which
			// says how long it is.
			t.Fatalf("record %d: a generator's write not snapped to its header: %v (%d bytes)", rd.Count(), &p, len(rec.Raw))
		}
		switch rec.Tap.Tap {
		case 0: // onicA.host: downstream, A's writes into its O-NIC's BAR2;
			// upstream, B's writes into A's memory, issued by A's O-NIC
			// under its own ID (01:00.0)
			down := rec.Tap.Direction == pcap.Downstream && p.RequesterID == tlp.NewID(0, 0, 0) && p.Address>>32 == 0x40
			up := rec.Tap.Direction == pcap.Upstream && p.RequesterID == tlp.NewID(0x01, 0, 0) && p.Address>>30 == 4
			if p.Kind() != tlp.MWr || !down && !up {
				t.Fatalf("onicA.host: %+v %v", rec.Tap, &p)
			}
			if up {
				seen[100]++
			}
		case 4: // onicB's port A: A's writes as the far side sees them
			if p.Kind() == tlp.MWr && (p.RequesterID != tlp.NewID(0x10, 0, 0) || p.Address>>30 != 4) {
				t.Fatalf("onicB.port-a: %v", &p)
			}
		}
	}
	if uint64(rd.Count()) != r.Speed.TLPs || seen[0] == 0 || seen[4] == 0 || seen[1] == 0 || seen[100] == 0 {
		t.Fatalf("%d records for %d arrivals; per tap %v", rd.Count(), r.Speed.TLPs, seen)
	}
	// No payload bytes written: at most pcapng's block per record (32
	// bytes), the tap and a 4 DW TLP header, after the section and one
	// interface block per tap.
	if max := 1024 + rd.Count()*(32+pcap.TapHeaderLen+16); len(pc) > max {
		t.Errorf("capture of %d records is %d bytes, more than headers alone (%d)", rd.Count(), len(pc), max)
	}
	again, _ := captured(t, c)
	if !bytes.Equal(pc, again) {
		t.Error("two runs wrote different captures")
	}
	one, _ := captured(t, c, "onicA.port-a")
	if len(one) == 0 || len(one) >= len(pc) {
		t.Errorf("one tap: %d bytes of %d", len(one), len(pc))
	}
	cl, _ := Build(c)
	if err := cl.Capture(io.Discard, []string{"onicA.hots"}); err == nil || !strings.Contains(err.Error(), `tap "onicA.hots"`) {
		t.Errorf("unknown tap: %v", err)
	}
}

// TestTsharkReadsEmulatorCapture: the real tshark, with onic's dissector,
// reads an emulator capture: the same frames, taps and TLP kinds, each
// frame on the pcapng interface named after its tap, with Source and
// Destination filled (a request's requester and address, a completion's
// completer and requester) and an Info column that says what it is.
func TestTsharkReadsEmulatorCapture(t *testing.T) {
	tshark := tools.Require(t, "tshark")
	c := scenario.TwoParty()
	c.Duration = 2 * time.Microsecond
	pc, r := captured(t, c)
	path := filepath.Join(t.TempDir(), "emu.pcap")
	if err := os.WriteFile(path, pc, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-n", "-X", "lua_script:"+filepath.Join("..", "..", "tlp", "wireshark", "onic.lua"),
		"-r", path, "-T", "fields", "-E", "separator=|", "-e", "onic.tap", "-e", "onic_tlp.kind", "-e", "frame.interface_name",
		"-e", "_ws.col.Source", "-e", "_ws.col.Destination", "-e", "_ws.col.Info").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if uint64(len(lines)) != r.Speed.TLPs {
		t.Fatalf("tshark saw %d frames, the run %d arrivals", len(lines), r.Speed.TLPs)
	}
	rd, _ := pcap.NewReader(bytes.NewReader(pc))
	for i, line := range lines {
		var p tlp.TLP
		rec, err := rd.Next(&p)
		if err != nil {
			t.Fatal(err)
		}
		src, dst := p.RequesterID.String(), fmt.Sprintf("0x%x", p.Address)
		info := fmt.Sprintf("%s %d B %s", p.Kind(), 4*int(p.Length), dst)
		if !p.Kind().IsRequest() {
			src, dst = p.CompleterID.String(), p.RequesterID.String()
			info = fmt.Sprintf("%s %s", p.Kind(), p.Status)
		}
		want := strings.Join([]string{strconv.Itoa(int(rec.Tap.Tap)), p.Kind().String(), r.Taps[rec.Tap.Tap], src, dst}, "|")
		if got, _, _ := strings.Cut(line, "|"+info); !strings.HasPrefix(line[len(got):], "|"+info) || got != want {
			t.Fatalf("frame %d: tshark %q, onic %q", i+1, line, want)
		}
	}
}
