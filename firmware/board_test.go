package firmware

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"onic/firmware/board"
)

// TestBoardCheck: a board's rates are 0 (the default) or in range, never
// a value that makes a reflash negative, instant or endless.
func TestBoardCheck(t *testing.T) {
	for _, tc := range []struct {
		b    Board
		want string
	}{
		{Board{}, ""},
		{Board{ConfigMBps: 500, ICAPMBps: 3822500, LinkDown: time.Microsecond}, ""},
		{Board{ConfigMBps: 1e-300}, "config_mbps 1e-300: must be 0.1 to 1e+07 MB/s"},
		{Board{ICAPMBps: 1e-300}, "icap_mbps 1e-300"},
		{Board{ICAPMBps: math.NaN()}, "icap_mbps NaN"},
		{Board{ConfigMBps: math.Inf(1)}, "config_mbps +Inf"},
		{Board{ConfigMBps: -1}, "config_mbps -1"},
		{Board{Rescan: -time.Second}, "rescan -1s: must be 0 to 1h0m0s"},
		{Board{OpticalBringUp: 2 * time.Hour}, "optical_bring_up 2h0m0s"},
	} {
		err := tc.b.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.b, err, tc.want)
		}
		if err == nil {
			p, _ := LookupPart(DefaultPart)
			if c := FullCost(tc.b.WithDefaults(p.Dies), 1<<20, true); c.Total <= 0 {
				t.Errorf("%+v: full reflash of %v", tc.b, c.Total)
			}
		}
	}
}

// TestTooManyEntries: an image listing more entries than the decoders
// allow is refused with a message a user can act on, not msgp's
// "configured reader limit exceeded".
func TestTooManyEntries(t *testing.T) {
	im := &Image{Manifest: Manifest{Format: FormatVersion, Kind: KindImage, Name: "x", Version: "1.0.0", Part: DefaultPart}}
	for i := range MaxListed + 1 {
		im.AddPayload(fmt.Sprintf("p%d", i), PayloadRTL, -1, []byte{byte(i)})
	}
	im.Seal()
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(b)
	if err == nil || !strings.Contains(err.Error(), "more than 4096 entries") || strings.Contains(err.Error(), "configured reader limit") {
		t.Errorf("Parse of %d payloads: %v", MaxListed+1, err)
	}
}

// TestParseCopiesNothing: parsing an image holds its payloads as slices
// of the file's bytes, so a 64 MiB bitstream costs its memory once
// (docs/firmware.md, "Files and their limits").
func TestParseCopiesNothing(t *testing.T) {
	im := &Image{Manifest: Manifest{Format: FormatVersion, Kind: KindImage, Name: "x", Version: "1.0.0", Part: DefaultPart}}
	im.AddPayload("big.bit", PayloadBitstream, -1, make([]byte, 64<<20))
	im.Manifest.Static, im.Manifest.DataWidth, im.Manifest.ClockMHz, im.Manifest.FullBytes = im.StaticID(), 512, 250, 64<<20
	im.Manifest.Family, im.Manifest.ManagerDepth = "virtex-ultrascale+", 6
	im.Seal()
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Parse(b)
	runtime.ReadMemStats(&after)
	// The image has no spec, so Parse stops there: after the envelope,
	// the manifest and every payload's hash, which is what is measured.
	if err == nil || !strings.Contains(err.Error(), "no spec.json payload") {
		t.Fatalf("parse: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("parsing a %d MiB image allocated %d KiB", len(b)>>20, n>>10)
	}
}

// TestDevicesAgree: firmware/board's device names (what a scenario may
// name) are exactly the devices of Parts (what the cost model knows).
func TestDevicesAgree(t *testing.T) {
	var devs []string
	for _, p := range Parts {
		devs = append(devs, p.Device)
	}
	if fmt.Sprint(devs) != fmt.Sprint(board.Devices) {
		t.Fatalf("firmware.Parts has %v, firmware/board.Devices %v", devs, board.Devices)
	}
}
