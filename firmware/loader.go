package firmware

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"onic/internal/readfile"
	"onic/internal/yamlcfg"
)

// OperatorRole is the trust-store role that may load whole images and
// any slot; every other role is a tenant's name.
const OperatorRole = "operator"

// Trust is the loader's trust store: the keys it accepts and what each
// may load. It belongs to whoever runs the O-NICs, never to an image.
type Trust struct {
	Keys []TrustedKey `mapstructure:"keys"`
	// MinSecurityVersion is the lowest static security version a whole
	// image may carry (0 to MaxSecurityVersion, default 0): an image
	// below it is refused whatever runs and whatever the operator allows
	// at load time — raising it retires every older release for good.
	MinSecurityVersion int `mapstructure:"min_security_version"`
	// Revoked lists keys whose signatures no longer count: each a key's
	// KeyID (16 hex digits, as onic fw inspect prints it), the name of
	// one of Keys, a PEM public key file (relative to the trust file) or
	// a raw key in base64. A revoked key is refused even where Keys
	// still lists it.
	Revoked []string        `mapstructure:"revoked"`
	revoked map[string]bool // KeyIDs
}

// TrustedKey is one accepted key.
type TrustedKey struct {
	Name string `mapstructure:"name"`
	// Key is a PEM public key file (relative to the trust file) or the
	// raw 32-byte key in base64.
	Key string `mapstructure:"key"`
	// Role is "operator" or a tenant named in the running image.
	Role string `mapstructure:"role"`
	pub  ed25519.PublicKey
}

// LoadTrust reads a trust store from YAML; key files are found relative
// to dir.
func LoadTrust(name string, r io.Reader, dir string) (Trust, error) {
	var t Trust
	if err := yamlcfg.Decode(name, r, &t, yamlcfg.Options{MaxBytes: MaxTrustFile}); err != nil {
		return Trust{}, err
	}
	names := map[string]int{}
	for i := range t.Keys {
		k := &t.Keys[i]
		at := fmt.Sprintf("%s: keys[%d]", name, i)
		if k.Name == "" || k.Role == "" {
			return Trust{}, fmt.Errorf("%s: name and role are required", at)
		}
		if j, dup := names[k.Name]; dup {
			return Trust{}, fmt.Errorf("%s.name: %q is already keys[%d]: a name must say which key signed", at, k.Name, j)
		}
		names[k.Name] = i
		if raw, err := base64.StdEncoding.DecodeString(k.Key); err == nil && len(raw) == ed25519.PublicKeySize {
			k.pub = raw
			continue
		}
		p := k.Key
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		pub, err := ReadPublicKey(p)
		if err != nil {
			return Trust{}, fmt.Errorf("%s.key: %v", at, err)
		}
		k.pub = pub
	}
	if t.MinSecurityVersion < 0 || t.MinSecurityVersion > MaxSecurityVersion {
		return Trust{}, fmt.Errorf("%s: min_security_version %d: must be 0 to %d", name, t.MinSecurityVersion, MaxSecurityVersion)
	}
	for i, r := range t.Revoked {
		at := fmt.Sprintf("%s: revoked[%d]", name, i)
		if j, ok := names[r]; ok {
			t.Revoke(t.Keys[j].pub)
			continue
		}
		if keyID.MatchString(r) {
			t.revokeID(r)
			continue
		}
		if raw, err := base64.StdEncoding.DecodeString(r); err == nil && len(raw) == ed25519.PublicKeySize {
			t.Revoke(raw)
			continue
		}
		p := r
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		pub, err := ReadPublicKey(p)
		if err != nil {
			return Trust{}, fmt.Errorf("%s: %q is no key name, key ID (16 hex digits), base64 key or key file: %v", at, r, err)
		}
		t.Revoke(pub)
	}
	return t, nil
}

// keyID is the form of a KeyID.
var keyID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// Revoke stops a key's signatures counting (Trust.Revoked).
func (t *Trust) Revoke(pub ed25519.PublicKey) { t.revokeID(KeyID(pub)) }

func (t *Trust) revokeID(id string) {
	if t.revoked == nil {
		t.revoked = map[string]bool{}
	}
	t.revoked[id] = true
}

// IsRevoked reports whether a key is revoked.
func (t *Trust) IsRevoked(pub ed25519.PublicKey) bool { return t.revoked[KeyID(pub)] }

// MaxTrustFile is the largest trust store file LoadTrustFile reads.
const MaxTrustFile = 1 << 20

// LoadTrustFile reads a trust store file, a regular file of at most
// MaxTrustFile bytes.
func LoadTrustFile(path string) (Trust, error) {
	b, err := readfile.Read(path, MaxTrustFile)
	if err != nil {
		return Trust{}, err
	}
	return LoadTrust(path, bytes.NewReader(b), filepath.Dir(path))
}

// Add trusts a key in a role.
func (t *Trust) Add(name, role string, pub ed25519.PublicKey) {
	t.Keys = append(t.Keys, TrustedKey{Name: name, Role: role, Key: base64.StdEncoding.EncodeToString(pub), pub: pub})
}

// Lookup finds the entries of a key.
func (t *Trust) Lookup(pub ed25519.PublicKey) []TrustedKey {
	var out []TrustedKey
	for _, k := range t.Keys {
		if k.pub.Equal(pub) {
			out = append(out, k)
		}
	}
	return out
}

// Backend is what the loader programs: one O-NIC. The emulator's is
// emu/cluster's; a board backend (JTAG, ICAP or MCAP programming, a hot
// reset and a rescan) implements the same calls.
type Backend interface {
	// Part is the FPGA part on the board.
	Part() string
	// Board is the board's reconfiguration figures (zero fields:
	// defaults).
	Board() Board
	// Running is the image the O-NIC runs, nil before the first.
	Running() *Image
	// Full replaces the whole image: it costs c and takes the O-NIC out
	// for c.Total.
	Full(im *Image, c Cost) error
	// Partial replaces the kernel in k's slot with k's (a kernel image):
	// it costs c and takes only that slot out.
	Partial(k *Image, c Cost) error
	// Kernel is the kernel slot n runs now — the running image's, or the
	// one a partial load put there since — for the anti-rollback check;
	// false for an empty slot or none running.
	Kernel(n int) (SlotManifest, bool)
}

// Refusal reasons: every error Load returns for an image it will not
// load wraps one of these (or ErrMalformed, ErrCorrupt).
var (
	ErrUnsigned  = errors.New("unsigned image")
	ErrSignature = errors.New("bad signature")
	ErrUntrusted = errors.New("signer not trusted")
	ErrTarget    = errors.New("wrong target")
	ErrFit       = errors.New("kernel does not fit its region")
	ErrRollback  = errors.New("security version rollback")
)

// Loader deploys images to one O-NIC after checking them.
type Loader struct {
	Trust   Trust
	Backend Backend
	// AllowDowngrade is the operator's explicit leave, for this load, to
	// replace a region with a lower security version than it runs (never
	// below Trust.MinSecurityVersion); the deployment lists each one.
	AllowDowngrade bool
}

// Deployment is what a load did.
type Deployment struct {
	Kind    string `json:"kind"` // image or kernel
	Name    string `json:"name"`
	Version string `json:"version"`
	Signer  string `json:"signer"` // the trusted key's name
	Role    string `json:"role"`
	Cost    Cost   `json:"cost"`
	// Downgrade lists the regions this load put back to a lower security
	// version, under Loader.AllowDowngrade.
	Downgrade []string `json:"downgrade,omitempty"`
}

// Load checks an image file and deploys it. Everything is checked before
// the backend is touched, so a refused image leaves the O-NIC as it was:
// it must parse and match its hashes; carry signatures that all verify,
// one by a key the trust store gives the right (an operator for a whole
// image; an operator or a tenant the running image lets load that slot
// for a kernel image), no signer revoked; be built for the board's part
// (and a kernel image for the running static region); roll no region back
// to a lower security version (unless AllowDowngrade) nor below the trust
// store's floor; and every kernel must fit its region.
func (l *Loader) Load(b []byte) (Deployment, error) {
	im, err := Parse(b)
	if err != nil {
		return Deployment{}, err
	}
	return l.LoadImage(im)
}

// LoadImage is Load of a parsed image.
func (l *Loader) LoadImage(im *Image) (Deployment, error) {
	m := &im.Manifest
	if len(im.Signatures) == 0 {
		return Deployment{}, fmt.Errorf("%w: %s %s carries no signature (onic fw build --key)", ErrUnsigned, m.Name, m.Version)
	}
	signers, err := im.Signers()
	if err != nil {
		return Deployment{}, fmt.Errorf("%w: %v", ErrSignature, err)
	}
	if want, got := deviceOf(l.Backend.Part()), deviceOf(m.Part); want != got {
		return Deployment{}, fmt.Errorf("%w: the image is for %s, the board has %s", ErrTarget, m.Part, l.Backend.Part())
	}
	running := l.Backend.Running()
	var slot SlotManifest
	var region Resources
	if m.Kind == KindKernel {
		slot = m.Slots[0]
		if running == nil {
			return Deployment{}, fmt.Errorf("%w: a kernel image needs a running image to load into", ErrTarget)
		}
		if m.Static != running.Manifest.Static {
			return Deployment{}, fmt.Errorf("%w: kernel %s was built for static region %.12s, the O-NIC runs %.12s (%s %s)",
				ErrTarget, m.Name, m.Static, running.Manifest.Static, running.Manifest.Name, running.Manifest.Version)
		}
		rs, ok := running.Manifest.SlotEntry(slot.Slot)
		if !ok {
			return Deployment{}, fmt.Errorf("%w: the running image has no slot %d", ErrTarget, slot.Slot)
		}
		region = rs.Region
	}
	// Who may load it.
	var signer TrustedKey
	var why []string
	for _, pub := range signers {
		if l.Trust.IsRevoked(pub) {
			why = append(why, "key "+KeyID(pub)+" is revoked")
			continue
		}
		entries := l.Trust.Lookup(pub)
		if len(entries) == 0 {
			why = append(why, "key "+KeyID(pub)+" is not in the trust store")
		}
		for _, e := range entries {
			switch {
			case e.Role == OperatorRole:
				signer = e
			case m.Kind == KindImage:
				why = append(why, fmt.Sprintf("%s (tenant %s) may load kernels, not whole images", e.Name, e.Role))
			case running.Manifest.tenantMay(e.Role, slot.Slot):
				signer = e
			default:
				why = append(why, fmt.Sprintf("%s: tenant %s may not load slot %d", e.Name, e.Role, slot.Slot))
			}
			if signer.Name != "" {
				break
			}
		}
		if signer.Name != "" {
			break
		}
	}
	if signer.Name == "" {
		return Deployment{}, fmt.Errorf("%w: %s", ErrUntrusted, strings.Join(why, "; "))
	}
	// What it needs.
	board := l.Backend.Board()
	if err := board.Check(); err != nil {
		return Deployment{}, fmt.Errorf("board: %v", err)
	}
	part, _ := LookupPart(m.Part) // Parse checked it
	board = board.WithDefaults(part.Dies)
	d := Deployment{Kind: m.Kind, Name: m.Name, Version: m.Version, Signer: signer.Name, Role: signer.Role}
	if m.Kind == KindImage && int64(m.SecurityVersion) < int64(l.Trust.MinSecurityVersion) {
		return Deployment{}, fmt.Errorf("%w: %s %s has security version %d, below the trust store's min_security_version %d",
			ErrRollback, m.Name, m.Version, m.SecurityVersion, l.Trust.MinSecurityVersion)
	}
	if back := l.rollbacks(m, running); len(back) > 0 {
		if !l.AllowDowngrade {
			return Deployment{}, fmt.Errorf("%w: %s (an operator may allow it: --allow-downgrade)", ErrRollback, strings.Join(back, "; "))
		}
		d.Downgrade = back
	}
	if m.Kind == KindKernel {
		if err := fits(slot, region); err != nil {
			return Deployment{}, err
		}
		d.Cost = PartialCost(board, slot.Slot, slot.Bytes, slot.Estimated)
		return d, l.Backend.Partial(im, d.Cost)
	}
	for _, s := range m.Slots {
		if s.Kernel != "" {
			if err := fits(s, s.Region); err != nil {
				return Deployment{}, err
			}
		}
	}
	d.Cost = FullCost(board, m.FullBytes, m.FullEstimated)
	return d, l.Backend.Full(im, d.Cost)
}

// rollbacks lists each region loading m would put back to a lower
// security version than it runs: the static region (a whole image
// against the running one) and each slot whose kernel it replaces with
// an older build of the same kernel (a different kernel has its own
// numbering, so replacing one with another is no rollback).
func (l *Loader) rollbacks(m *Manifest, running *Image) []string {
	var out []string
	if m.Kind == KindImage && running != nil && m.SecurityVersion < running.Manifest.SecurityVersion {
		rm := &running.Manifest
		out = append(out, fmt.Sprintf("static region: %s %s has security version %d, the running %s %s has %d",
			m.Name, m.Version, m.SecurityVersion, rm.Name, rm.Version, rm.SecurityVersion))
	}
	if running == nil {
		return out
	}
	for _, s := range m.Slots {
		cur, ok := l.Backend.Kernel(s.Slot)
		if s.Kernel == "" || !ok || cur.Kernel != s.Kernel || s.SecurityVersion >= cur.SecurityVersion {
			continue
		}
		out = append(out, fmt.Sprintf("slot %d: kernel %s %s has security version %d, the running %s %s has %d",
			s.Slot, s.Kernel, s.KernelVersion, s.SecurityVersion, cur.Kernel, cur.KernelVersion, cur.SecurityVersion))
	}
	return out
}

// CheckFit checks that each kernel of the image fits the region its
// manifest gives it, as the loader will: an image whose kernel does not
// fit is refused at deployment, so a build or a verify says so first.
func (im *Image) CheckFit() error {
	for _, s := range im.Manifest.Slots {
		if s.Kernel != "" && s.NeedSource != "" {
			if err := fits(s, s.Region); err != nil {
				return err
			}
		}
	}
	return nil
}

// MayLoad says, for each of the image's signers that trust t knows, what
// the loader will let that key do with the image: an operator may load
// anything; a tenant may load a kernel image into a slot the running
// image gives it, never a whole image. ok is whether some signer may load
// it (for a kernel image: given a running image that grants the slot).
func (im *Image) MayLoad(t Trust) (ok bool, lines []string, err error) {
	signers, err := im.Signers()
	if err != nil {
		return false, nil, err
	}
	m := &im.Manifest
	if m.Kind == KindImage && int64(m.SecurityVersion) < int64(t.MinSecurityVersion) {
		return false, []string{fmt.Sprintf("security version %d is below the trust store's min_security_version %d",
			m.SecurityVersion, t.MinSecurityVersion)}, nil
	}
	for _, pub := range signers {
		if t.IsRevoked(pub) {
			lines = append(lines, fmt.Sprintf("key %s: revoked", KeyID(pub)))
			continue
		}
		entries := t.Lookup(pub)
		if len(entries) == 0 {
			lines = append(lines, fmt.Sprintf("key %s: not in the trust store", KeyID(pub)))
		}
		for _, e := range entries {
			switch {
			case e.Role == OperatorRole:
				ok = true
				lines = append(lines, fmt.Sprintf("%s (operator): may load it", e.Name))
			case m.Kind == KindImage:
				lines = append(lines, fmt.Sprintf("%s (tenant %s): refused: a whole image needs an operator's signature", e.Name, e.Role))
			default:
				ok = true
				lines = append(lines, fmt.Sprintf("%s (tenant %s): may load it where the running image's tenants give %s slot %d", e.Name, e.Role, e.Role, m.Slots[0].Slot))
			}
		}
	}
	return ok, lines, nil
}

// fits checks a slot's kernel against a region.
func fits(s SlotManifest, region Resources) error {
	if s.NeedSource == "" {
		return fmt.Errorf("%w: slot %d: %s's resources were never measured (build with synthesis)", ErrFit, s.Slot, s.Kernel)
	}
	if ok, why := s.Need.Fits(region); !ok {
		return fmt.Errorf("%w: slot %d: %s needs %s", ErrFit, s.Slot, s.Kernel, why)
	}
	return nil
}

// tenantMay reports whether the manifest lets tenant load slot n.
func (m *Manifest) tenantMay(tenant string, n int) bool {
	for _, t := range m.Tenants {
		if t.Name == tenant {
			for _, s := range t.Slots {
				if s == n {
					return true
				}
			}
		}
	}
	return false
}

// deviceOf is a part name's device, lower case.
func deviceOf(part string) string {
	d, _, _ := strings.Cut(strings.ToLower(part), "-")
	return d
}
