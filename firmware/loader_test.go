package firmware_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"testing"

	"onic/firmware"
	"onic/firmware/build"
)

// memBackend is a board that remembers what was loaded: the state the
// refusal tests compare before and after.
type memBackend struct {
	part    string
	running *firmware.Image
	slots   map[int]string // kernel image loaded into each slot since
	log     []string
}

func (b *memBackend) Part() string             { return b.part }
func (b *memBackend) Board() firmware.Board    { return firmware.Board{} }
func (b *memBackend) Running() *firmware.Image { return b.running }
func (b *memBackend) Full(im *firmware.Image, c firmware.Cost) error {
	b.running, b.slots = im, map[int]string{}
	b.log = append(b.log, fmt.Sprintf("full %s %v", im.Manifest.Name, c.Total))
	return nil
}
func (b *memBackend) Partial(k *firmware.Image, c firmware.Cost) error {
	b.slots[k.Manifest.Slots[0].Slot] = k.Manifest.Name
	b.log = append(b.log, fmt.Sprintf("partial %d %s %v", c.Slot, k.Manifest.Name, c.Total))
	return nil
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
