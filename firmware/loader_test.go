package firmware_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"onic/firmware"
	"onic/firmware/build"
	"onic/testbenches/tools"
)

// memBackend is a board that remembers what was loaded: the state the
// refusal tests compare before and after.
type memBackend struct {
	part    string
	running *firmware.Image
	slots   map[int]string // kernel image loaded into each slot since
	kernels map[int]firmware.SlotManifest
	log     []string
}

func (b *memBackend) Part() string             { return b.part }
func (b *memBackend) Board() firmware.Board    { return firmware.Board{} }
func (b *memBackend) Running() *firmware.Image { return b.running }
func (b *memBackend) Full(im *firmware.Image, c firmware.Cost) error {
	b.running, b.slots, b.kernels = im, map[int]string{}, map[int]firmware.SlotManifest{}
	b.log = append(b.log, fmt.Sprintf("full %s %v", im.Manifest.Name, c.Total))
	return nil
}
func (b *memBackend) Partial(k *firmware.Image, c firmware.Cost) error {
	b.slots[k.Manifest.Slots[0].Slot] = k.Manifest.Name
	b.kernels[k.Manifest.Slots[0].Slot] = k.Manifest.Slots[0]
	b.log = append(b.log, fmt.Sprintf("partial %d %s %v", c.Slot, k.Manifest.Name, c.Total))
	return nil
}

func (b *memBackend) Kernel(n int) (firmware.SlotManifest, bool) {
	if k, ok := b.kernels[n]; ok {
		return k, true
	}
	if b.running == nil {
		return firmware.SlotManifest{}, false
	}
	s, ok := b.running.Manifest.SlotEntry(n)
	return s, ok && s.Kernel != ""
}

// state is everything a load could change.
func (b *memBackend) state(t *testing.T) string {
	var r []byte
	if b.running != nil {
		r = marshal(t, b.running)
	}
	return fmt.Sprintf("%x %v %q", r, b.slots, b.log)
}

// variant builds the test spec changed by edit, unsigned.
func variant(t *testing.T, edit func(*firmware.Spec)) *firmware.Image {
	t.Helper()
	testImage(t) // the shared cache
	s, err := firmware.LoadSpecFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit(&s)
	im, err := build.Build(s, build.Yosys(cacheDir))
	if err != nil {
		t.Fatal(err)
	}
	return im
}

// TestLoaderRefuses: every refusal names its reason and leaves the board
// exactly as it was; the loads that should go through do, at the cost
// model's price.
func TestLoaderRefuses(t *testing.T) {
	tools.Long(t)
	opsPub, ops := key(2)
	alicePub, alice := key(3)
	_, mallory := key(4)
	var trust firmware.Trust
	trust.Add("ops", firmware.OperatorRole, opsPub)
	trust.Add("alice", "ml", alicePub)
	b := &memBackend{part: "xcvu9p-flga2104-2L-e"}
	l := &firmware.Loader{Trust: trust, Backend: b}

	base := testImage(t)
	base.Sign(ops)
	d, err := l.Load(marshal(t, base))
	if err != nil {
		t.Fatal(err)
	}
	if d.Signer != "ops" || d.Cost.Kind != "full" || d.Cost.Total != d.Cost.Load+1101e6 || d.Cost.Bytes != 76_450_000 {
		t.Fatalf("first load: %+v", d)
	}
	// Slot 1 gets a kernel in a variant with the same static region.
	withK := variant(t, func(s *firmware.Spec) { s.Slots[1].Kernel = "scale-int32" })
	if withK.Manifest.Static != base.Manifest.Static {
		t.Fatal("a slot's kernel changed the static identity")
	}
	k1, err := withK.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	k0, err := withK.KernelImage(0)
	if err != nil {
		t.Fatal(err)
	}
	signed := func(im *firmware.Image, keys ...ed25519.PrivateKey) []byte {
		c := *im
		c.Signatures = nil
		for _, k := range keys {
			c.Sign(k)
		}
		return marshal(t, &c)
	}
	otherPart := variant(t, func(s *firmware.Spec) { s.Target = firmware.Target{Part: "xcku15p-ffve1517-2-e"} })
	otherStatic := variant(t, func(s *firmware.Spec) {
		s.Manager.Translation.Windows[0].Size = 0x20000000
		s.Slots[1].Kernel = "scale-int32"
	})
	kOther, err := otherStatic.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	// A kernel of another shape (two inputs where the slot's static logic
	// takes one): its image's static region is another.
	otherShape := variant(t, func(s *firmware.Spec) {
		s.Slots[1].Kernel, s.Slots[1].Sources = "sum-int32", []string{"port-a", "host"}
	})
	if otherShape.Manifest.Static == base.Manifest.Static {
		t.Fatal("a two-input kernel in a one-input slot kept the static identity")
	}
	kShape, err := otherShape.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	// A kernel bigger than its region: the build refuses to make one, so
	// this image is a built one whose manifest was edited afterwards.
	small, err := firmware.LoadSpecFile("testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	small.Slots[0].Region.LUT = 100
	if _, err := build.Build(small, build.Yosys(cacheDir)); err == nil || !strings.Contains(err.Error(), "slots[0].region: scale-int32 1.0.0 in slot 0's module needs lut") {
		t.Errorf("build of a kernel bigger than its region: %v", err)
	}
	tooSmall := *base
	tooSmall.Manifest.Slots = append([]firmware.SlotManifest(nil), base.Manifest.Slots...)
	tooSmall.Manifest.Slots[0].Region.LUT = 100
	tooSmall.Seal()
	if err := tooSmall.CheckFit(); err == nil || !strings.Contains(err.Error(), "slot 0: scale-int32 needs lut") {
		t.Errorf("CheckFit of a kernel bigger than its region: %v", err)
	}
	unmeasured := *withK
	unmeasured.Manifest.Slots = append([]firmware.SlotManifest(nil), withK.Manifest.Slots...)
	unmeasured.Manifest.Slots[1].NeedSource, unmeasured.Manifest.Slots[1].Need = "", firmware.Resources{}
	unmeasured.Seal()
	kUnmeasured, err := unmeasured.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	badSig := signed(base, ops)
	badSig[bytes.LastIndex(badSig, base.Signatures[0].Sig[:8])] ^= 1
	corrupt := signed(base, ops)
	corrupt[bytes.Index(corrupt, []byte("module onic_pcie_manager ("))+3] ^= 1

	for _, c := range []struct {
		name string
		file []byte
		want error
		text string
	}{
		{"unsigned image", signed(base), firmware.ErrUnsigned, "carries no signature"},
		{"bad signature", badSig, firmware.ErrSignature, "does not verify"},
		{"untrusted key", signed(base, mallory), firmware.ErrUntrusted, "is not in the trust store"},
		{"untrusted key beside a bad one", signed(base, mallory, alice), firmware.ErrUntrusted, "may load kernels, not whole images"},
		{"tenant loads a whole image", signed(base, alice), firmware.ErrUntrusted, "alice (tenant ml) may load kernels, not whole images"},
		{"tenant loads a slot not theirs", signed(k0, alice), firmware.ErrUntrusted, "tenant ml may not load slot 0"},
		{"wrong part", signed(otherPart, ops), firmware.ErrTarget, "the image is for xcku15p-ffve1517-2-e, the board has xcvu9p"},
		{"wrong static region", signed(kOther, alice), firmware.ErrTarget, "was built for static region"},
		{"kernel of another shape", signed(kShape, alice), firmware.ErrTarget, "kernel sum-int32 was built for static region"},
		{"kernel does not fit", signed(&tooSmall, ops), firmware.ErrFit, "slot 0: scale-int32 needs lut"},
		{"kernel never measured", signed(kUnmeasured, ops), firmware.ErrFit, "never measured"},
		{"corrupted payload", corrupt, firmware.ErrCorrupt, "static/onic_pcie_manager.v"},
		{"truncated", signed(base, ops)[:5000], firmware.ErrMalformed, "envelope"},
		{"not an image", []byte("#!/bin/sh\nrm -rf /\n"), firmware.ErrMalformed, "envelope"},
	} {
		before := b.state(t)
		_, err := l.Load(c.file)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.want, c.text)
		}
		if after := b.state(t); after != before {
			t.Errorf("%s: the board changed", c.name)
		}
	}
	// A tenant's kernel into its own slot goes in by partial
	// reconfiguration: 2586936 bytes at 500 MB/s (ICAP on a 3-die part).
	d, err = l.Load(signed(k1, alice))
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != firmware.KindKernel || d.Signer != "alice" || d.Cost.Kind != "partial" || d.Cost.Slot != 1 || d.Cost.Total.Nanoseconds() != 5173872 {
		t.Errorf("kernel load: %+v", d)
	}
	if b.slots[1] != "scale-int32" || len(b.log) != 2 {
		t.Errorf("board after the kernel load: %v %q", b.slots, b.log)
	}
}

// TestVersionBumpKeepsStatic: rebuilding the same spec as 1.0.1 changes
// the image (its README says the version) but not the static identity,
// which covers the hardware alone; so a tenant's kernel built for 1.0.0
// loads into an O-NIC running 1.0.1. A change to the hardware (a window's
// size) does change it.
func TestVersionBumpKeepsStatic(t *testing.T) {
	tools.Long(t)
	opsPub, ops := key(2)
	var trust firmware.Trust
	trust.Add("ops", firmware.OperatorRole, opsPub)
	old := variant(t, func(s *firmware.Spec) { s.Slots[1].Kernel = "scale-int32" })
	bumped := variant(t, func(s *firmware.Spec) { s.Version = "1.0.1" })
	if old.Manifest.Static != bumped.Manifest.Static {
		t.Fatalf("a version bump changed the static identity: %.12s -> %.12s", old.Manifest.Static, bumped.Manifest.Static)
	}
	a, _ := old.Payload("static/README.md")
	b, _ := bumped.Payload("static/README.md")
	if bytes.Equal(a, b) {
		t.Fatal("the README does not differ: the test shows nothing")
	}
	hw := variant(t, func(s *firmware.Spec) { s.Manager.Translation.Windows[0].Size = 0x20000000 })
	if hw.Manifest.Static == old.Manifest.Static {
		t.Error("a hardware change kept the static identity")
	}
	b2 := &memBackend{part: "xcvu9p-flga2104-2L-e"}
	l := &firmware.Loader{Trust: trust, Backend: b2}
	bumped.Sign(ops)
	if _, err := l.Load(marshal(t, bumped)); err != nil {
		t.Fatal(err)
	}
	k, err := old.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	k.Sign(ops)
	if _, err := l.Load(marshal(t, k)); err != nil {
		t.Errorf("a kernel built for 1.0.0 into 1.0.1: %v", err)
	}
}

// TestLoaderRollback: a whole image or a kernel with a lower security
// version than the region runs is refused, and the board is left as it
// was, unless the operator allows the downgrade, which the deployment
// lists; the trust store's floor holds even then; a revoked key's
// signature counts for nothing, by name, key ID or key.
func TestLoaderRollback(t *testing.T) {
	opsPub, ops := key(2)
	oldPub, old := key(5)
	var trust firmware.Trust
	trust.Add("ops", firmware.OperatorRole, opsPub)
	trust.Add("old-ops", firmware.OperatorRole, oldPub)
	b := &memBackend{part: "xcvu9p-flga2104-2L-e"}
	l := &firmware.Loader{Trust: trust, Backend: b}
	at := func(sv, ksv int) *firmware.Image {
		im := variant(t, func(s *firmware.Spec) { s.SecurityVersion, s.Slots[0].SecurityVersion = sv, ksv })
		im.Sign(ops)
		return im
	}
	v3, v2, v3k1 := at(3, 2), at(2, 2), at(3, 1)
	if _, err := l.Load(marshal(t, v3)); err != nil {
		t.Fatal(err)
	}
	before := b.state(t)
	for _, tc := range []struct {
		name string
		im   *firmware.Image
		want string
	}{
		{"older static region", v2, "static region: onic-a 1.0.0 has security version 2, the running onic-a 1.0.0 has 3"},
		{"older kernel in slot 0", v3k1, "slot 0: kernel scale-int32 1.0.0 has security version 1, the running scale-int32 1.0.0 has 2"},
	} {
		_, err := l.Load(marshal(t, tc.im))
		if !errors.Is(err, firmware.ErrRollback) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--allow-downgrade") {
			t.Errorf("%s: %v; want a rollback naming %q", tc.name, err, tc.want)
		}
		if b.state(t) != before {
			t.Errorf("%s: a refused load changed the board", tc.name)
		}
	}
	// A kernel image of the running kernel, older: refused alike.
	k, err := v3k1.KernelImage(0)
	if err != nil {
		t.Fatal(err)
	}
	k.Sign(ops)
	if _, err := l.Load(marshal(t, k)); !errors.Is(err, firmware.ErrRollback) {
		t.Errorf("older kernel image: %v, want a rollback", err)
	}
	// Equal or newer is no rollback.
	if d, err := l.Load(marshal(t, at(3, 2))); err != nil || len(d.Downgrade) != 0 {
		t.Errorf("same security versions: %+v, %v", d, err)
	}
	// The operator allows it: loaded, and said.
	l.AllowDowngrade = true
	d, err := l.Load(marshal(t, v2))
	if err != nil || len(d.Downgrade) != 1 || !strings.HasPrefix(d.Downgrade[0], "static region:") {
		t.Errorf("allowed downgrade: %+v, %v", d, err)
	}
	// Never below the floor, allowed or not.
	l.Trust.MinSecurityVersion = 3
	if _, err := l.Load(marshal(t, v2)); !errors.Is(err, firmware.ErrRollback) || !strings.Contains(err.Error(), "min_security_version 3") {
		t.Errorf("below the floor: %v", err)
	}
	l.Trust.MinSecurityVersion, l.AllowDowngrade = 0, false
	// Revocation, from a trust file: by name, by key ID and by key.
	oldSigned := at(3, 2)
	oldSigned.Signatures = nil
	oldSigned.Sign(old)
	for _, rev := range []string{"old-ops", firmware.KeyID(oldPub), base64.StdEncoding.EncodeToString(oldPub)} {
		y := fmt.Sprintf("keys:\n  - {name: ops, role: operator, key: %s}\n  - {name: old-ops, role: operator, key: %s}\nrevoked: [%q]\n",
			base64.StdEncoding.EncodeToString(opsPub), base64.StdEncoding.EncodeToString(oldPub), rev)
		tr, err := firmware.LoadTrust("trust.yaml", strings.NewReader(y), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		rl := &firmware.Loader{Trust: tr, Backend: b}
		if _, err := rl.Load(marshal(t, oldSigned)); !errors.Is(err, firmware.ErrUntrusted) || !strings.Contains(err.Error(), "is revoked") {
			t.Errorf("revoked %q: %v", rev, err)
		}
		if _, err := rl.Load(marshal(t, v3)); err != nil {
			t.Errorf("revoked %q: the other operator's image: %v", rev, err)
		}
	}
	for _, bad := range []string{"revoked: [nobody]", "min_security_version: -1", "revoked: [0123456789abcdeX]"} {
		if _, err := firmware.LoadTrust("trust.yaml", strings.NewReader(bad), t.TempDir()); err == nil {
			t.Errorf("trust %q accepted", bad)
		}
	}
}
