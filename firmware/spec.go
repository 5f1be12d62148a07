// Package firmware is what gets deployed to an O-NIC and how: the
// firmware spec (target part, PCIe manager tables, reconfigurable slots
// and the kernels bound to them, tenants), the signed image built from it
// (an msgp manifest plus payloads), the loader that checks an image
// before anything running is touched, the reflash-cost model, and the
// residency planner (package firmware/plan). docs/firmware.md specifies
// the image format and the cost model with their sources.
package firmware

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"

	"onic/internal/readfile"
	"onic/internal/yamlcfg"
	"onic/kernels"
	"onic/pcie/manager"
)

// Spec is a firmware spec: everything an image is built from. It is read
// from YAML (LoadSpec); every field is in docs/firmware.md.
type Spec struct {
	Name    string `mapstructure:"name" json:"name"`
	Version string `mapstructure:"version" json:"version"` // semantic version, MAJOR.MINOR.PATCH
	// SecurityVersion is the static region's anti-rollback number (0 to
	// MaxSecurityVersion, default 0): raise it when a release fixes
	// something an older image gets wrong (an access rule, a manager
	// bug), and the loader refuses every image with a lower one unless
	// the operator allows the downgrade.
	SecurityVersion int    `mapstructure:"security_version" json:"security_version,omitempty"`
	Target          Target `mapstructure:"target" json:"target"`
	// ClockMHz and Width are the PCIe manager's clock and TLP data path
	// (defaults 250 and 512).
	ClockMHz float64        `mapstructure:"clock_mhz" json:"clock_mhz"`
	Width    int            `mapstructure:"width" json:"width"`
	Manager  manager.Config `mapstructure:"manager" json:"manager"`
	// DownPolicy is what the card does with traffic for an optical port
	// whose link is down: "hold" it (the default, as an emulated O-NIC's
	// down_policy), up to HoldTLPs TLPs a port, or "fail" it.
	DownPolicy string       `mapstructure:"down_policy" json:"down_policy"`
	HoldTLPs   int          `mapstructure:"hold_tlps" json:"hold_tlps"`
	Slots      []SlotSpec   `mapstructure:"slots" json:"slots"`
	Tenants    []TenantSpec `mapstructure:"tenants" json:"tenants"`
}

// Target is the FPGA the image is for.
type Target struct {
	// Part is the full part name (xcvu9p-flga2104-2L-e); its device
	// (xcvu9p) must be one firmware.Parts knows.
	Part string `mapstructure:"part" json:"part"`
	// Family defaults to the part's (virtex-ultrascale+, ...); given, it
	// must agree.
	Family string `mapstructure:"family" json:"family"`
}

// Fits reports whether r fits in region, and if not the first resource
// that does not.
func (r Resources) Fits(region Resources) (bool, string) {
	for _, c := range []struct {
		name      string
		need, has int
	}{{"lut", r.LUT, region.LUT}, {"ff", r.FF, region.FF}, {"bram", r.BRAM, region.BRAM}, {"dsp", r.DSP, region.DSP}} {
		if c.need > c.has {
			return false, fmt.Sprintf("%s %d > %d", c.name, c.need, c.has)
		}
	}
	return true, ""
}

// SlotSpec is a reconfigurable slot: its region (a pblock, given by the
// resources it holds) and the kernel bound to it, with where the kernel's
// output goes in the emulator (the fields of emu/cluster's kernel config).
type SlotSpec struct {
	Slot   int       `mapstructure:"slot" json:"slot"`
	Region Resources `mapstructure:"region" json:"region"`
	// Kernel is a library kernel's name (onic kernel list); empty: the
	// slot is left empty.
	Kernel        string   `mapstructure:"kernel" json:"kernel,omitempty"`
	Egress        string   `mapstructure:"egress" json:"egress,omitempty"`
	Translated    uint64   `mapstructure:"translated" json:"translated,omitempty"`
	Sources       []string `mapstructure:"sources" json:"sources,omitempty"`
	PairBufferKiB int      `mapstructure:"pair_buffer_kib" json:"pair_buffer_kib,omitempty"`
	// SecurityVersion is the slot's kernel's anti-rollback number, as
	// Spec.SecurityVersion is the static region's: a load that would
	// replace this kernel with a lower one is refused.
	SecurityVersion int `mapstructure:"security_version" json:"security_version,omitempty"`
}

// TenantSpec names a tenant and the slots its keys may load kernels
// into. Which keys belong to a tenant is the loader's trust store's
// business, not the image's: an image cannot vouch for itself.
type TenantSpec struct {
	Name  string `mapstructure:"name" json:"name"`
	Slots []int  `mapstructure:"slots" json:"slots"`
}

// Spec defaults and limits.
const (
	DefaultClockMHz = 250
	DefaultWidth    = 512
	DefaultHoldTLPs = 1024    // as emu/scenario's
	MaxHoldTLPs     = 1 << 20 // as emu/scenario's
	// MaxSecurityVersion bounds a security version.
	MaxSecurityVersion = 1<<31 - 1
)

// LoadSpec reads a spec from YAML; name labels the errors. Unknown fields
// are errors. The spec is checked (Check) and its defaults filled in.
func LoadSpec(name string, r io.Reader) (Spec, error) {
	var s Spec
	src, err := io.ReadAll(io.LimitReader(r, MaxSpecFile+1))
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %v", name, err)
	}
	if err := yamlcfg.Decode(name, bytes.NewReader(src), &s, yamlcfg.Options{MaxBytes: MaxSpecFile, Defaulted: specDefaulted}); err != nil {
		return Spec{}, err
	}
	if err := s.Check(); err != nil {
		return Spec{}, yamlcfg.Locate(name, src, err.Error()) // led by the line of the field it names
	}
	return s, nil
}

// specDefaulted are the spec's fields whose default is not zero: an
// explicit 0 there is refused.
var specDefaulted = map[string]bool{"clock_mhz": true, "width": true, "data_width": true, "hold_tlps": true}

// MaxSpecFile is the largest spec file LoadSpecFile reads.
const MaxSpecFile = 4 << 20

// LoadSpecFile is LoadSpec from a file, a regular file of at most
// MaxSpecFile bytes.
func LoadSpecFile(path string) (Spec, error) {
	b, err := readfile.Read(path, MaxSpecFile)
	if err != nil {
		return Spec{}, err
	}
	return LoadSpec(path, bytes.NewReader(b))
}

var (
	semver   = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
	nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

// Check fills in defaults and checks every field, naming the first bad
// one by its path (slots[1].kernel); each slot's kernel must be
// registered (kernels.Lookup), as building the image needs it.
func (s *Spec) Check() error { return s.check(true) }

// check is Check; registered says whether each slot's kernel must be a
// registered one, or only well named (the spec inside an image: reading,
// inspecting or verifying an image needs no kernel's description, and a
// user's kernels are registered only in the user's own onic).
func (s *Spec) check(registered bool) error {
	if !nameRule.MatchString(s.Name) {
		return fmt.Errorf("name %q: want 1-64 of a-z 0-9 . _ -, starting with a letter or digit", s.Name)
	}
	if !semver.MatchString(s.Version) {
		return fmt.Errorf("version %q: want a semantic version MAJOR.MINOR.PATCH", s.Version)
	}
	if s.SecurityVersion < 0 || s.SecurityVersion > MaxSecurityVersion {
		return fmt.Errorf("security_version %d: must be 0 to %d", s.SecurityVersion, MaxSecurityVersion)
	}
	p, err := LookupPart(s.Target.Part)
	if err != nil {
		return fmt.Errorf("target.part: %v", err)
	}
	switch s.Target.Family {
	case "":
		s.Target.Family = p.Family
	case p.Family:
	default:
		return fmt.Errorf("target.family %q: part %s is %s", s.Target.Family, s.Target.Part, p.Family)
	}
	if s.ClockMHz == 0 {
		s.ClockMHz = DefaultClockMHz
	}
	if !(s.ClockMHz > 0 && s.ClockMHz <= 1000) {
		return fmt.Errorf("clock_mhz %g: want (0, 1000]", s.ClockMHz)
	}
	if s.Width == 0 {
		s.Width = DefaultWidth
	}
	if s.Width != 256 && s.Width != 512 {
		return fmt.Errorf("width %d: must be 256 or 512", s.Width)
	}
	switch s.DownPolicy {
	case "":
		s.DownPolicy = "hold"
	case "hold", "fail":
	default:
		return fmt.Errorf("down_policy %q: must be hold or fail", s.DownPolicy)
	}
	if s.HoldTLPs == 0 {
		s.HoldTLPs = DefaultHoldTLPs
	}
	if s.HoldTLPs < 1 || s.HoldTLPs > MaxHoldTLPs {
		return fmt.Errorf("hold_tlps %d: must be 1 to %d", s.HoldTLPs, MaxHoldTLPs)
	}
	nslots := s.Manager.Translation.Slots()
	var total Resources
	seen := map[int]bool{}
	for i, sl := range s.Slots {
		at := fmt.Sprintf("slots[%d]", i)
		if sl.Slot < 0 || sl.Slot >= nslots {
			return fmt.Errorf("%s.slot %d: the manager has kernel slots 0-%d (manager.translation.kernel_slots)", at, sl.Slot, nslots-1)
		}
		if seen[sl.Slot] {
			return fmt.Errorf("%s.slot %d: given twice", at, sl.Slot)
		}
		if sl.SecurityVersion < 0 || sl.SecurityVersion > MaxSecurityVersion {
			return fmt.Errorf("%s.security_version %d: must be 0 to %d", at, sl.SecurityVersion, MaxSecurityVersion)
		}
		seen[sl.Slot] = true
		r := sl.Region
		if r.LUT <= 0 || r.FF < 0 || r.BRAM < 0 || r.DSP < 0 {
			return fmt.Errorf("%s.region: want lut > 0 and ff, bram, dsp >= 0 (got %+v)", at, r)
		}
		total.LUT += r.LUT
		total.FF += r.FF
		total.BRAM += r.BRAM
		total.DSP += r.DSP
		switch {
		case sl.Kernel == "":
		case !kernels.ValidName(sl.Kernel):
			return fmt.Errorf("%s.kernel %q: not a kernel name", at, sl.Kernel)
		case registered:
			if _, err := kernels.Lookup(sl.Kernel); err != nil {
				return fmt.Errorf("%s.kernel: %v", at, err)
			}
		}
	}
	if ok, why := total.Fits(p.Resources); !ok {
		return fmt.Errorf("slots: the regions together need more than %s has (%s)", p.Device, why)
	}
	names := map[string]bool{}
	for i, t := range s.Tenants {
		at := fmt.Sprintf("tenants[%d]", i)
		if !nameRule.MatchString(t.Name) || t.Name == OperatorRole {
			return fmt.Errorf("%s.name %q: want 1-64 of a-z 0-9 . _ - (and not %q)", at, t.Name, OperatorRole)
		}
		if names[t.Name] {
			return fmt.Errorf("%s.name %q: given twice", at, t.Name)
		}
		names[t.Name] = true
		for j, sl := range t.Slots {
			if !seen[sl] {
				return fmt.Errorf("%s.slots[%d] %d: no such slot in slots", at, j, sl)
			}
		}
	}
	slices.SortFunc(s.Slots, func(a, b SlotSpec) int { return a.Slot - b.Slot })
	return nil
}

// Slot returns the spec of slot n.
func (s *Spec) Slot(n int) (SlotSpec, bool) {
	for _, sl := range s.Slots {
		if sl.Slot == n {
			return sl, true
		}
	}
	return SlotSpec{}, false
}

// Canonical is the spec's JSON: the payload an image carries it in, the
// same bytes for the same spec.
func (s *Spec) Canonical() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil { // a Spec has only plain fields
		panic(err)
	}
	return append(b, '\n')
}

// parseSpec reads a spec payload back.
func parseSpec(b []byte) (Spec, error) {
	var s Spec
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("spec payload: %v", err)
	}
	if err := s.check(false); err != nil {
		return Spec{}, fmt.Errorf("spec payload: %v", err)
	}
	return s, nil
}
