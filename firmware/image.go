package firmware

import (
	"github.com/tinylib/msgp/msgp"

	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"onic/internal/readfile"
)

// Image is a firmware image: its manifest, the signatures over it and
// its payloads, in the manifest's order.
type Image struct {
	Manifest   Manifest
	Signatures []Signature
	Payloads   [][]byte
	raw        []byte // the manifest's bytes, what the signatures cover
}

// AddPayload appends a payload and its record to the manifest (a build
// tool assembling an image; Seal afterwards).
func (im *Image) AddPayload(name, kind string, slot int, b []byte) {
	h := sha256.Sum256(b)
	im.Manifest.Payloads = append(im.Manifest.Payloads, PayloadRecord{Name: name, Kind: kind, Slot: slot, Size: int64(len(b)), SHA256: h[:]})
	im.Payloads = append(im.Payloads, b)
}

// StaticID is the static region's identity: the part and the names and
// hashes of the static payloads that say what the hardware is — its RTL
// and constraints (Verilog, the file list, XDC, the Vivado script). The
// generated documentation (README, register map, C header) is not in
// it, so a version bump that leaves the hardware alone keeps every
// kernel built for it loadable. (Format 2 images hashed every static RTL
// payload, documentation included; they are read by that rule.)
func (im *Image) StaticID() string {
	h := sha256.New()
	fmt.Fprintf(h, "part %s\n", strings.ToLower(im.Manifest.Part))
	for _, p := range im.Manifest.Payloads {
		if p.Slot == -1 && p.Kind == PayloadRTL && (im.Manifest.Format < 3 || IsHardware(p.Name)) {
			fmt.Fprintf(h, "%s %x\n", p.Name, p.SHA256)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// IsHardware reports whether a payload named name describes hardware
// (Verilog, file list, constraints, Vivado script) rather than documents
// it: the payloads a static identity covers.
func IsHardware(name string) bool {
	for _, ext := range []string{".v", ".sv", ".f", ".xdc", ".tcl"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Seal encodes the manifest after a build tool has filled it in; any
// signatures are over an older one and are dropped.
func (im *Image) Seal() {
	raw, err := im.Manifest.MarshalMsg(nil)
	if err != nil { // only for values msgp cannot encode; a Manifest has none
		panic(err)
	}
	im.raw, im.Signatures = raw, nil
}

// Payload returns the payload named name.
func (im *Image) Payload(name string) ([]byte, bool) {
	for i, p := range im.Manifest.Payloads {
		if p.Name == name {
			return im.Payloads[i], true
		}
	}
	return nil, false
}

// MaxPayloadName is the longest payload name an image may carry.
const MaxPayloadName = 200

// ValidPayloadName reports whether name can be a payload's: a relative
// path of one or more names separated by "/", each of letters, digits,
// ".", "_" and "-" and none "." or "..", at most MaxPayloadName bytes.
// So a payload written out under its name (Extract) stays in the
// directory it is written to, whatever the image says.
func ValidPayloadName(name string) bool {
	if name == "" || len(name) > MaxPayloadName {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return false
			}
		}
	}
	return true
}

// Extract writes every payload of the image into dir under its name
// (static/..., slot<N>/..., spec.json: the layout build.tcl expects) and
// returns the paths written. dir must not exist yet, or be empty, so
// nothing of another image is mixed in.
func (im *Image) Extract(dir string) ([]string, error) {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%s: not empty; extract into a new directory", dir)
	}
	var paths []string
	for i, p := range im.Manifest.Payloads {
		if !ValidPayloadName(p.Name) { // Parse refuses such images; one built in memory may still have one
			return paths, fmt.Errorf("payload %q: not a relative path", p.Name)
		}
		path := filepath.Join(dir, filepath.FromSlash(p.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return paths, err
		}
		if err := os.WriteFile(path, im.Payloads[i], 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// Spec is the image's firmware spec (an image kind only).
func (im *Image) Spec() (Spec, error) {
	b, ok := im.Payload("spec.json")
	if !ok {
		return Spec{}, errors.New("the image has no spec.json payload")
	}
	return parseSpec(b)
}

// SlotEntry returns slot n's entry.
func (m *Manifest) SlotEntry(n int) (SlotManifest, bool) {
	for _, s := range m.Slots {
		if s.Slot == n {
			return s, true
		}
	}
	return SlotManifest{}, false
}

// Attach adds a vendor bitstream to the image, for slot n (its partial
// bitstream) or the whole device (n == -1), replacing one attached
// before; the sizes in the manifest become the bitstream's configuration
// data's (what the configuration port loads). The bitstream must be a .bit
// or .bin file (ParseBitstream), a .bit one for the image's part; those
// problems are a *BitstreamError. The manifest changes, so the image must
// be signed again.
func (im *Image) Attach(n int, bit []byte) error {
	if len(bit) == 0 {
		return errors.New("the bitstream is empty")
	}
	bs, err := ParseBitstream(bit)
	if err != nil {
		return &BitstreamError{err}
	}
	if !bs.ForPart(im.Manifest.Part) {
		return &BitstreamError{fmt.Errorf("it is for part %q, the image for %s", bs.Part, im.Manifest.Part)}
	}
	name := "full.bit"
	if n >= 0 {
		name = fmt.Sprintf("slot%d.bit", n)
		i := slices.IndexFunc(im.Manifest.Slots, func(s SlotManifest) bool { return s.Slot == n })
		if i < 0 {
			return fmt.Errorf("slot %d: the image has no such slot", n)
		}
		im.Manifest.Slots[i].Bytes, im.Manifest.Slots[i].Estimated = int64(bs.DataBytes), false
	} else {
		if im.Manifest.Kind != KindImage {
			return errors.New("a full bitstream belongs in an image, not a kernel image")
		}
		im.Manifest.FullBytes, im.Manifest.FullEstimated = int64(bs.DataBytes), false
	}
	if i := slices.IndexFunc(im.Manifest.Payloads, func(p PayloadRecord) bool { return p.Name == name }); i >= 0 {
		im.Manifest.Payloads = slices.Delete(im.Manifest.Payloads, i, i+1)
		im.Payloads = slices.Delete(im.Payloads, i, i+1)
	}
	im.AddPayload(name, PayloadBitstream, n, bit)
	im.Seal()
	return nil
}

// KernelImage is the kernel image of slot n: that slot's entry and
// payloads, bound to this image's static region, to load by partial
// reconfiguration. It is unsigned.
func (im *Image) KernelImage(n int) (*Image, error) {
	if im.Manifest.Kind != KindImage {
		return nil, errors.New("not an image")
	}
	sl, ok := im.Manifest.SlotEntry(n)
	if !ok || sl.Kernel == "" {
		return nil, fmt.Errorf("slot %d: the image has no kernel there", n)
	}
	m := im.Manifest
	k := &Image{Manifest: Manifest{Format: FormatVersion, Kind: KindKernel, Name: sl.Kernel, Version: sl.KernelVersion,
		Part: m.Part, Family: m.Family, Static: m.Static, ClockMHz: m.ClockMHz, Slots: []SlotManifest{sl}}}
	for i, p := range m.Payloads {
		if p.Slot == n {
			k.AddPayload(p.Name, p.Kind, p.Slot, im.Payloads[i])
		}
	}
	k.Seal()
	return k, nil
}

// MarshalBinary is the image file.
func (im *Image) MarshalBinary() ([]byte, error) {
	e := envelope{Magic: Magic, Manifest: im.raw, Signatures: im.Signatures, Payloads: im.Payloads}
	return e.MarshalMsg(nil)
}

// ErrMalformed is wrapped by every error Parse returns for bytes that are
// not a well-formed image.
var ErrMalformed = errors.New("malformed image")

// ErrCorrupt is wrapped by Parse's errors for a payload whose size or
// SHA-256 differs from the manifest's.
var ErrCorrupt = errors.New("corrupted payload")

// MaxListed is the most entries an image's lists may have (payloads,
// signatures, slots, tenants): the msgp:limit the decoders enforce before
// allocating.
const MaxListed = 4096

// limitSaid turns msgp's "configured reader limit exceeded" into what the
// user can act on.
func limitSaid(err error) error {
	if errors.Is(err, msgp.ErrLimitExceeded) {
		return fmt.Errorf("a list holds more than %d entries, the most an image may have (split it into several images)", MaxListed)
	}
	return err
}

// Parse reads an image file and checks everything that needs no key: the
// envelope and manifest decode completely with nothing left over, the
// format version is this one, the manifest is consistent, and every
// payload has the size and SHA-256 the manifest gives. Signatures are
// checked by Signers and the loader. The image's payloads are slices of
// b (it costs b's memory once): b must not change while the image is in
// use.
func Parse(b []byte) (*Image, error) {
	var e envelope
	rest, err := e.UnmarshalMsg(b)
	if err != nil {
		return nil, fmt.Errorf("%w: envelope: %v", ErrMalformed, limitSaid(err))
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the envelope", ErrMalformed, len(rest))
	}
	if e.Magic != Magic {
		return nil, fmt.Errorf("%w: magic %q, want %q", ErrMalformed, e.Magic, Magic)
	}
	im := &Image{Signatures: e.Signatures, Payloads: e.Payloads, raw: e.Manifest}
	rest, err = im.Manifest.UnmarshalMsg(e.Manifest)
	if err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrMalformed, limitSaid(err))
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the manifest", ErrMalformed, len(rest))
	}
	m := &im.Manifest
	if m.Format != FormatVersion && m.Format != 2 {
		return nil, fmt.Errorf("%w: manifest format %d; this onic reads 2 and %d", ErrMalformed, m.Format, FormatVersion)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrMalformed, err)
	}
	if len(e.Payloads) != len(m.Payloads) {
		return nil, fmt.Errorf("%w: %d payloads, the manifest lists %d", ErrMalformed, len(e.Payloads), len(m.Payloads))
	}
	for i, p := range m.Payloads {
		h := sha256.Sum256(e.Payloads[i])
		switch {
		case int64(len(e.Payloads[i])) != p.Size:
			return nil, fmt.Errorf("%w: %s: %d bytes, the manifest says %d", ErrCorrupt, p.Name, len(e.Payloads[i]), p.Size)
		case !bytes.Equal(h[:], p.SHA256):
			return nil, fmt.Errorf("%w: %s: SHA-256 %x, the manifest says %x", ErrCorrupt, p.Name, h[:8], p.SHA256[:min(8, len(p.SHA256))])
		}
	}
	if m.Kind == KindImage {
		if _, err := im.Spec(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if id := im.StaticID(); id != m.Static {
			return nil, fmt.Errorf("%w: static identity %.16s does not match the static payloads (%.16s)", ErrMalformed, m.Static, id)
		}
	}
	return im, nil
}

// MaxImageFile is the largest image file ReadFile reads: a whole
// bitstream for the largest UltraScale+ parts is under 200 MB.
const MaxImageFile = 256 << 20

// ReadFile reads and parses an image file, a regular file of at most
// MaxImageFile bytes.
func ReadFile(path string) (*Image, error) {
	b, err := readfile.Read(path, MaxImageFile)
	if err != nil {
		return nil, err
	}
	im, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return im, nil
}

// check is the manifest's own consistency.
func (m *Manifest) check() error {
	if m.Kind != KindImage && m.Kind != KindKernel {
		return fmt.Errorf("kind %q: want %q or %q", m.Kind, KindImage, KindKernel)
	}
	if !semver.MatchString(m.Version) {
		return fmt.Errorf("version %q: not a semantic version", m.Version)
	}
	if _, err := LookupPart(m.Part); err != nil {
		return fmt.Errorf("part: %v", err)
	}
	if len(m.Static) != 64 {
		return fmt.Errorf("static %q: want a hex SHA-256", m.Static)
	}
	if m.Kind == KindImage && (m.ManagerDepth <= 0 || !(m.ClockMHz > 0) || m.DataWidth != 256 && m.DataWidth != 512) {
		return fmt.Errorf("manager: %d cycles at %g MHz, %d-bit data path: want a positive depth and clock and 256 or 512 bits",
			m.ManagerDepth, m.ClockMHz, m.DataWidth)
	}
	if m.Kind == KindKernel && (len(m.Slots) != 1 || m.Slots[0].Kernel == "") {
		return fmt.Errorf("a kernel image has one slot with a kernel (it has %d)", len(m.Slots))
	}
	slots := map[int]bool{}
	for _, s := range m.Slots {
		if slots[s.Slot] || s.Slot < 0 {
			return fmt.Errorf("slot %d: negative or listed twice", s.Slot)
		}
		slots[s.Slot] = true
		if s.Bytes < 0 {
			return fmt.Errorf("slot %d: bytes %d", s.Slot, s.Bytes)
		}
	}
	names := map[string]bool{}
	for _, p := range m.Payloads {
		switch {
		case names[p.Name]:
			return fmt.Errorf("payload %q listed twice", p.Name)
		case p.Kind != PayloadSpec && p.Kind != PayloadRTL && p.Kind != PayloadBitstream:
			return fmt.Errorf("payload %q: kind %q", p.Name, p.Kind)
		case p.Slot != -1 && !slots[p.Slot]:
			return fmt.Errorf("payload %q: slot %d is not in the manifest", p.Name, p.Slot)
		case !ValidPayloadName(p.Name):
			return fmt.Errorf("payload %q: not a relative path of names of a-z A-Z 0-9 . _ - (at most %d bytes)", p.Name, MaxPayloadName)
		case len(p.SHA256) != sha256.Size:
			return fmt.Errorf("payload %q: SHA-256 of %d bytes", p.Name, len(p.SHA256))
		}
		names[p.Name] = true
	}
	return nil
}
