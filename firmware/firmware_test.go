package firmware_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"onic/firmware"
	"onic/firmware/build"
	"onic/testbenches/tools"
)

// The tests share one Yosys cache, so the scale-int32 kernel is synthesised
// once per run.
var (
	cacheOnce sync.Once
	cacheDir  string
	built     *firmware.Image
	buildErr  error
)

// testImage builds testdata/onic-a.yaml (once) and returns a copy. The
// first build synthesises with Yosys (half a minute): a test that needs
// it is a long one.
func testImage(t testing.TB) *firmware.Image {
	t.Helper()
	tools.Long(t)
	tools.Require(t, "yosys")
	cacheOnce.Do(func() {
		cacheDir, buildErr = os.MkdirTemp("", "onic-fw-cache")
		if buildErr != nil {
			return
		}
		var s firmware.Spec
		if s, buildErr = firmware.LoadSpecFile("testdata/onic-a.yaml"); buildErr != nil {
			return
		}
		built, buildErr = build.Build(s, build.Yosys(cacheDir))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	b, err := built.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	im, err := firmware.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cacheDir != "" {
		os.RemoveAll(cacheDir)
	}
	os.Exit(code)
}

// key makes a deterministic key pair.
func key(seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	k := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	return k.Public().(ed25519.PublicKey), k
}

func marshal(t testing.TB, im *firmware.Image) []byte {
	t.Helper()
	b, err := im.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// specLine is how a spec's error begins: the file, the line of the field
// it names, the field.
var specLine = regexp.MustCompile(`^spec\.yaml:[0-9]+: [a-z]`)

// TestLoadSpecErrors: each mistake in a spec is a one-line error led by
// the file and the line of the field it names.
func TestLoadSpecErrors(t *testing.T) {
	good, err := os.ReadFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ old, new, want string }{
		{"name: onic-a", "name: Onic A", "name \"Onic A\""},
		{"version: 1.0.0", "version: \"1.0\"", "version \"1.0\": want a semantic version"},
		{"part: xcvu9p-flga2104-2L-e", "part: xc7a35t-cpg236-1", "target.part: \"xc7a35t-cpg236-1\": unknown device \"xc7a35t\""},
		{"target:\n", "target:\n  family: kintex-ultrascale+\n", "target.family \"kintex-ultrascale+\": part xcvu9p-flga2104-2L-e is virtex-ultrascale+"},
		{"width: 512", "width: 128", "width 128: must be 256 or 512"},
		{"  - slot: 1\n", "  - slot: 2\n", "slots[1].slot 2: the manager has kernel slots 0-1"},
		{"  - slot: 1\n", "  - slot: 0\n", "slots[1].slot 0: given twice"},
		{"kernel: scale-int32", "kernel: fft", "slots[0].kernel: "},
		{"region: {lut: 40000, ff: 80000, bram: 60, dsp: 120}\n    kernel", "region: {lut: 0}\n    kernel", "slots[0].region: want lut > 0"},
		{"bram: 60, dsp: 120}\n    kernel", "bram: 2150, dsp: 120}\n    kernel", "slots: the regions together need more than xcvu9p has (bram 2210 > 2160)"},
		{"slots: [1]", "slots: [3]", "tenants[0].slots[0] 3: no such slot"},
		{"- name: ml", "- name: operator", "tenants[0].name \"operator\""},
		{"clock_mhz: 250", "clock_mz: 250", "clock_mz"},
		{"width: 512", "width: 512\ndown_policy: drop", "down_policy \"drop\": must be hold or fail"},
		{"width: 512", "width: 512\nhold_tlps: 2000000", "hold_tlps 2000000: must be 1 to 1048576"},
	} {
		src := strings.Replace(string(good), c.old, c.new, 1)
		if src == string(good) {
			t.Fatalf("%q is not in the spec", c.old)
		}
		_, err := firmware.LoadSpec("spec.yaml", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), c.want) || !specLine.MatchString(err.Error()) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s -> %s: got %v, want one line with %q", c.old, c.new, err, c.want)
		}
	}
}

// TestBuild: the image is the same bytes every time, parses back to the
// same manifest, spec and payloads, and its sizes follow the part.
func TestBuild(t *testing.T) {
	tools.Long(t)
	im := testImage(t)
	s, err := firmware.LoadSpecFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	again, err := build.Build(s, build.Yosys(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(marshal(t, im), marshal(t, again)) {
		t.Fatal("two builds of one spec differ")
	}
	back, err := firmware.Parse(marshal(t, again))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Manifest, again.Manifest) || !reflect.DeepEqual(back.Payloads, again.Payloads) {
		t.Fatal("the image does not parse back to itself")
	}
	got, err := back.Spec()
	if err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("spec payload: %v\n got %+v\nwant %+v", err, got, s)
	}
	m := back.Manifest
	vu9p, _ := firmware.LookupPart("xcvu9p")
	if m.FullBytes != 76_450_000 || !m.FullEstimated {
		t.Errorf("full bytes %d (estimated %v), want VU9P's 611.6 Mb = 76450000", m.FullBytes, m.FullEstimated)
	}
	// 40000 LUTs of 1182240 is the largest share (3.38%) of 155387 frames.
	if want := int64(5258) * firmware.FrameBytes; m.Slots[0].Bytes != want || m.Slots[1].Bytes != want || vu9p.Frames() != 155387 {
		t.Errorf("slot bytes %d, %d; frames %d; want %d and 155387", m.Slots[0].Bytes, m.Slots[1].Bytes, vu9p.Frames(), want)
	}
	f := m.Slots[0]
	if f.Kernel != "scale-int32" || f.NeedSource != "yosys synth_xilinx" || f.Need.LUT < 500 || f.Need.FF < 500 || m.Slots[1].Kernel != "" {
		t.Errorf("slots: %+v", m.Slots)
	}
	if ok, why := f.Need.Fits(f.Region); !ok {
		t.Errorf("scale-int32 does not fit its region: %s", why)
	}
	if m.ManagerDepth != 6 || m.DataWidth != s.Width || s.Width != firmware.DefaultWidth || len(m.Static) != 64 || m.Family != "virtex-ultrascale+" {
		t.Errorf("manifest: depth %d, data width %d (spec %d), static %q, family %q", m.ManagerDepth, m.DataWidth, s.Width, m.Static, m.Family)
	}
	var text strings.Builder
	back.Describe(&text)
	if !strings.Contains(text.String(), "manager    6 cycles at 250 MHz, 512-bit data path\n") {
		t.Errorf("describe:\n%s", text.String())
	}
	// The static region is the card with the slots' static logic; each
	// slot's payload is its module: the kernel's in slot 0, the empty one
	// in slot 1, each with its file list, which build.tcl reads.
	for _, c := range []struct {
		name string
		slot int
		has  string
	}{
		{"static/onic_top.v", -1, "module onic_top"},
		{"static/onic_card.v", -1, "onic_slot0_kernel slot0_kernel ("},
		{"static/dfx/onic_slot1_kernel_stub.v", -1, "(* black_box *)"},
		{"static/build.tcl", -1, "read_slot [file join $dir .. slot1]"},
		{"slot0/onic_slot0_kernel.v", 0, "module onic_slot0_kernel"},
		{"slot0/onic_kernel_scale_int32.v", 0, "module onic_kernel_scale_int32"},
		{"slot0/files.f", 0, "onic_slot0_kernel.v\n"},
		{"slot1/onic_slot1_kernel.v", 1, "module onic_slot1_kernel"},
	} {
		b, ok := back.Payload(c.name)
		slot := -2
		for _, p := range m.Payloads {
			if p.Name == c.name {
				slot = p.Slot
			}
		}
		if !ok || slot != c.slot || !bytes.Contains(b, []byte(c.has)) {
			t.Errorf("payload %s: present %v, slot %d (want %d), holds %q: %v", c.name, ok, slot, c.slot, c.has, bytes.Contains(b, []byte(c.has)))
		}
	}
	for _, p := range m.Payloads {
		if p.Slot == -1 && strings.Contains(p.Name, "scale_int32") {
			t.Errorf("static payload %s names the kernel", p.Name)
		}
	}
	tcl, _ := back.Payload("static/build.tcl")
	if bytes.Contains(tcl, []byte("scale_int32")) || bytes.Contains(tcl, []byte("scale-int32")) {
		t.Error("build.tcl names the kernel: the static identity would depend on it")
	}
}

// TestBuildRefuses: a kernel no card slot can hold, and a kernel with
// nowhere to send its output, stop the build with one line naming the
// slot.
func TestBuildRefuses(t *testing.T) {
	for _, c := range []struct {
		edit func(*firmware.SlotSpec)
		want string
	}{
		{func(sl *firmware.SlotSpec) { sl.Kernel = "filter" }, "slots[0]: kernel filter leaves gaps in its output"},
		{func(sl *firmware.SlotSpec) { sl.Kernel = "crc32c-append" }, "slots[0]: kernel crc32c-append sends"},
		{func(sl *firmware.SlotSpec) { sl.Egress = "" }, `slots[0].egress: no egress: a kernel's output needs one (host, port-a or port-b)`},
		{func(sl *firmware.SlotSpec) { sl.Egress = "port-c" }, `slots[0].egress: "port-c" must be port-a, port-b or host`},
		{func(sl *firmware.SlotSpec) { sl.PairBufferKiB = 64 }, "slots[0]: sources and pair_buffer_kib are for two-input kernels"},
	} {
		s, err := firmware.LoadSpecFile("testdata/onic-a.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c.edit(&s.Slots[0])
		_, err = build.Build(s, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestParseRefuses: truncated, extended, corrupted and re-labelled images
// are refused with the right error, never a panic.
func TestParseRefuses(t *testing.T) {
	tools.Long(t)
	im := testImage(t)
	b := marshal(t, im)
	for n := 0; n < len(b); n += 1 + n/64 {
		if _, err := firmware.Parse(b[:n]); !errors.Is(err, firmware.ErrMalformed) {
			t.Fatalf("truncated to %d of %d bytes: %v", n, len(b), err)
		}
	}
	if _, err := firmware.Parse(append(bytes.Clone(b), 0xc0)); !errors.Is(err, firmware.ErrMalformed) {
		t.Errorf("a byte after the image: %v", err)
	}
	// Flip a byte in the middle of every payload.
	for i, p := range im.Payloads {
		at := bytes.Index(b, p) + len(p)/2
		c := bytes.Clone(b)
		c[at] ^= 0x20
		if _, err := firmware.Parse(c); !errors.Is(err, firmware.ErrCorrupt) {
			t.Errorf("payload %s changed: %v", im.Manifest.Payloads[i].Name, err)
		}
	}
	// A payload swapped for another of the same size is caught by hash.
	c := &firmware.Image{Manifest: im.Manifest, Payloads: slicesClone(im.Payloads)}
	c.SetRaw(im.Raw())
	c.Payloads[2] = bytes.Repeat([]byte{'x'}, len(c.Payloads[2]))
	if _, err := firmware.Parse(marshal(t, c)); !errors.Is(err, firmware.ErrCorrupt) {
		t.Errorf("replaced payload: %v", err)
	}
	// A manifest whose static identity was edited.
	c = &firmware.Image{Manifest: im.Manifest, Payloads: im.Payloads}
	c.Manifest.Static = strings.Repeat("0", 64)
	c.Seal()
	if _, err := firmware.Parse(marshal(t, c)); !errors.Is(err, firmware.ErrMalformed) {
		t.Errorf("edited static identity: %v", err)
	}
	// A manifest of an earlier format, or one whose manager has no data
	// path width, depth or clock.
	for name, edit := range map[string]func(*firmware.Manifest){
		"format 1":     func(m *firmware.Manifest) { m.Format = 1 },
		"no width":     func(m *firmware.Manifest) { m.DataWidth = 0 },
		"width 128":    func(m *firmware.Manifest) { m.DataWidth = 128 },
		"depth 0":      func(m *firmware.Manifest) { m.ManagerDepth = 0 },
		"negative clk": func(m *firmware.Manifest) { m.ClockMHz = -250 },
	} {
		c = &firmware.Image{Manifest: im.Manifest, Payloads: im.Payloads}
		edit(&c.Manifest)
		c.Seal()
		if _, err := firmware.Parse(marshal(t, c)); !errors.Is(err, firmware.ErrMalformed) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Huge counts in a tiny file.
	for _, h := range [][]byte{
		{0x81, 0xa8, 'p', 'a', 'y', 'l', 'o', 'a', 'd', 's', 0xdd, 0xff, 0xff, 0xff, 0xff},
		{0x81, 0xaa, 's', 'i', 'g', 'n', 'a', 't', 'u', 'r', 'e', 's', 0xdd, 0x7f, 0xff, 0xff, 0xff},
		{0xdf, 0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := firmware.Parse(h); !errors.Is(err, firmware.ErrMalformed) {
			t.Errorf("% x: %v", h, err)
		}
	}
}

func slicesClone(p [][]byte) [][]byte { return append([][]byte(nil), p...) }

// TestSign: signatures verify, name their key, are replaced on re-signing
// and fail after any change to the manifest.
func TestSign(t *testing.T) {
	im := testImage(t)
	_, dev := key(1)
	_, ops := key(2)
	im.Sign(dev)
	im.Sign(ops)
	im.Sign(dev)
	keys, err := im.Signers()
	if err != nil || len(keys) != 2 || !keys[0].Equal(dev.Public()) || !keys[1].Equal(ops.Public()) {
		t.Fatalf("signers %v, %v", keys, err)
	}
	back, err := firmware.Parse(marshal(t, im))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := back.Signers(); err != nil {
		t.Fatal(err)
	}
	back.SetRaw(bytes.Replace(back.Raw(), []byte("onic-a"), []byte("onic-b"), 1))
	if _, err := back.Signers(); err == nil || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("changed manifest: %v", err)
	}
	// Keys round trip through PEM, in the form openssl writes.
	pub, priv, err := firmware.GenerateKey(rand.NewChaCha8([32]byte{7}))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := firmware.ParsePrivateKey(firmware.MarshalPrivateKey(priv))
	if err != nil || !p2.Equal(priv) {
		t.Fatal(err)
	}
	q2, err := firmware.ParsePublicKey(firmware.MarshalPublicKey(pub))
	if err != nil || !q2.Equal(pub) || !strings.HasPrefix(string(firmware.MarshalPublicKey(pub)), "-----BEGIN PUBLIC KEY-----\n") {
		t.Fatal(err)
	}
	if _, err := firmware.ParsePublicKey(firmware.MarshalPrivateKey(priv)); err == nil {
		t.Error("a private key read as a public one")
	}
}

// TestCosts: the cost model's arithmetic on the documented defaults.
func TestCosts(t *testing.T) {
	vu9p, _ := firmware.LookupPart("xcvu9p-flga2104-2L-e")
	ku15p, _ := firmware.LookupPart("XCKU15P-ffve1517-2-e")
	b := firmware.Board{}.WithDefaults(vu9p.Dies)
	full := firmware.FullCost(b, vu9p.FullBytes(), true)
	// 76.45 MB at 500 MB/s is 152.9 ms; then 100 ms + 1 s + 1 ms.
	if full.Load != 152900*time.Microsecond || full.Total != full.Load+1101*time.Millisecond {
		t.Errorf("full %+v", full)
	}
	if p := firmware.PartialCost(b, 0, 2_500_000, true); p.Load != 5*time.Millisecond || p.Total != p.Load || p.LinkDown != 0 {
		t.Errorf("partial on a 3-die part: %+v, want 2.5 MB at 500 MB/s = 5 ms", p)
	}
	if p := firmware.PartialCost((firmware.Board{}).WithDefaults(ku15p.Dies), 0, 2_500_000, true); p.Load != 3125*time.Microsecond {
		t.Errorf("partial on one die: %v, want 2.5 MB at 800 MB/s", p.Load)
	}
	if p := firmware.PartialCost((firmware.Board{ICAPMBps: 5}).WithDefaults(vu9p.Dies), 0, 2_500_000, false); p.Load != 500*time.Millisecond {
		t.Errorf("MCAP at 5 MB/s: %v", p.Load)
	}
	if got := vu9p.RegionBytes(firmware.Resources{LUT: 1, BRAM: 2160}); got != vu9p.Frames()*firmware.FrameBytes {
		t.Errorf("a region with every BRAM: %d bytes, want the whole device's frames", got)
	}
}

// TestBuildDownPolicy: the card in an image follows the spec's
// down_policy: each port has a hold buffer under hold (the default) and
// drops traffic for a dark port under fail; the policy is part of the
// static region's identity.
func TestBuildDownPolicy(t *testing.T) {
	testImage(t) // the kernel measurement cache, shared with the other tests
	good, err := os.ReadFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, tc := range []struct{ policy, has, hasNot string }{
		{"", "port_a_hold_drops", "port_a_down_drops"},
		{"down_policy: hold\nhold_tlps: 64\n", "port_a_hold_drops", "port_a_down_drops"},
		{"down_policy: fail\n", "port_a_down_drops", "port_a_hold_drops"},
	} {
		s, err := firmware.LoadSpec("spec.yaml", strings.NewReader(strings.Replace(string(good), "width: 512\n", "width: 512\n"+tc.policy, 1)))
		if err != nil {
			t.Fatal(err)
		}
		im, err := build.Build(s, build.Yosys(cacheDir))
		if err != nil {
			t.Fatal(err)
		}
		card, ok := im.Payload("static/onic_card.v")
		if !ok {
			t.Fatal("no static/onic_card.v in the image")
		}
		if !bytes.Contains(card, []byte(tc.has)) || bytes.Contains(card, []byte(tc.hasNot)) {
			t.Errorf("%q: the card has %s %v, %s %v", tc.policy, tc.has, bytes.Contains(card, []byte(tc.has)), tc.hasNot, bytes.Contains(card, []byte(tc.hasNot)))
		}
		ids[im.Manifest.Static] = tc.policy
	}
	if len(ids) != 3 {
		t.Errorf("three policies gave %d static identities", len(ids))
	}
}
