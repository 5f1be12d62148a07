// Package acl is the O-NIC PCIe manager's security check: which requester
// may touch which addresses, through which egress. It follows VT-d's
// shape — a requester ID (or ID range) selects a domain, a domain lists
// address ranges with read and write permission at 4 KiB granularity — and
// adds PCIe ACS-style controls: source validation (a requester ID must
// belong to the link it arrived on) and egress control (a domain may only
// send to the egresses it is given).
//
// An ACL is built once from a Config, checked completely (errors name the
// field path); Check does not allocate.
package acl

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"onic/pcie/internal/idmap"
	"onic/pcie/ntb"
	"onic/tlp"
)

// Page is the permission granularity.
const Page = 4 << 10

// Config describes the access-control rules.
type Config struct {
	// DenyStatus is the completion status of a denied non-posted request:
	// UR (the default) or CA.
	DenyStatus string         `mapstructure:"deny_status"`
	Domains    []DomainConfig `mapstructure:"domains"`
	// RuleSlots is the number of run-time rules software may program
	// through the register map (0 to MaxRuleSlots; 0, the default, gives
	// none): each adds one range with its rights to one domain, on top of
	// the configured ranges (see RuleSlot).
	RuleSlots int `mapstructure:"rule_slots"`
}

// MaxRuleSlots bounds Config.RuleSlots (the CAPS register has 6 bits for
// it, and each slot is three 64-bit comparisons in the hardware check).
const MaxRuleSlots = 32

// RuleSlot is a run-time access rule: while Enabled, requesters of
// domain Domain may access [Base, Base+Pages*4 KiB) with the rights Read
// and Write grant. An access is allowed when a configured range or an
// enabled slot of the requester's domain holds all of it with the right
// it needs; it is NoRange when none holds it, and ReadDenied or
// WriteDenied when those that hold it lack the right.
type RuleSlot struct {
	Enabled     bool
	Read, Write bool
	Domain      uint16
	Base        uint64 // a multiple of 4 KiB
	Pages       uint32 // length in 4 KiB pages
}

// holds reports whether the slot holds size bytes at addr (as the
// hardware computes it: no wrap past 2^64 is possible because the
// offset is taken from Base).
func (s *RuleSlot) holds(addr, size uint64) bool {
	n := uint64(s.Pages) * Page
	off := addr - s.Base
	return addr >= s.Base && off < n && n-off >= size
}

// DomainConfig is one protection domain.
type DomainConfig struct {
	Name string `mapstructure:"name"`
	// Requesters are IDs ("bb:dd.f") or inclusive ranges ("bb:dd.f-bb:dd.f").
	Requesters []string      `mapstructure:"requesters"`
	Ranges     []RangeConfig `mapstructure:"ranges"`
	// Egress lists the egresses the domain may use (port-a, port-b,
	// kernel:N, local, host); empty allows all.
	Egress []string `mapstructure:"egress"`
	// Ingress lists where the domain's requesters may arrive from (host,
	// port-a, port-b): a request from another ingress with one of their
	// IDs is forged and refused as SourceInvalid. Required: a peer's ID
	// is only trustworthy on the link the peer is behind.
	Ingress []string `mapstructure:"ingress"`
}

// Ingress is where a request entered the O-NIC (pcie/manager.Ingress is
// this type).
type Ingress uint8

// Ingresses.
const (
	FromHost  Ingress = iota // the host-facing PCIe link
	FromPortA                // optical port A
	FromPortB                // optical port B
	numIngresses
)

var ingressNames = [numIngresses]string{"host", "port-a", "port-b"}

// ParseIngress reads an ingress's configuration name: "host", "port-a"
// or "port-b".
func ParseIngress(s string) (Ingress, error) {
	in := slices.Index(ingressNames[:], s)
	if in < 0 {
		return 0, fmt.Errorf("%q must be host, port-a or port-b", s)
	}
	return Ingress(in), nil
}

// String returns the ingress's configuration name, "port-a".
func (i Ingress) String() string {
	if i < numIngresses {
		return ingressNames[i]
	}
	return fmt.Sprintf("ingress(%d)", i)
}

// RangeConfig is an address range with permissions. Base and Size are
// multiples of 4 KiB.
type RangeConfig struct {
	Base  uint64 `mapstructure:"base"`
	Size  uint64 `mapstructure:"size"`
	Read  bool   `mapstructure:"read"`
	Write bool   `mapstructure:"write"`
}

// Rule names why a request was denied.
type Rule uint8

// Denial rules.
const (
	Allowed       Rule = iota
	NoDomain           // the requester belongs to no domain
	NoRange            // the address is in none of the domain's ranges
	ReadDenied         // the range is not readable
	WriteDenied        // the range is not writable
	EgressDenied       // the domain may not use the egress
	SourceInvalid      // the requester ID does not belong to the ingress link
	NumRules           // how many rules there are, Allowed included
)

// Denials lists the rules that refuse an access (every rule but
// Allowed), in order.
func Denials() []Rule {
	out := make([]Rule, 0, NumRules-1)
	for r := NoDomain; r < NumRules; r++ {
		out = append(out, r)
	}
	return out
}

var ruleNames = [NumRules]string{"allowed", "no-domain", "no-range", "read-denied", "write-denied", "egress-denied", "source-invalid"}

// String returns a short name such as "write-denied".
func (r Rule) String() string {
	if r < NumRules {
		return ruleNames[r]
	}
	return fmt.Sprintf("rule(%d)", r)
}

type span struct {
	base, end   uint64 // end exclusive
	read, write bool
}

type domain struct {
	name    string
	reqs    [][2]tlp.ID // requester ID ranges, inclusive, as configured
	spans   []span      // sorted, non-overlapping
	bases   []uint64    // spans[i].base, dense for the search
	egress  uint32      // bit per egress: 0 port A, 1 port B, 2 local, 3 host, 8+N kernel N; all ones = any
	ingress uint8       // bit per Ingress its requesters may arrive from
}

// ACL is a built, checked access-control table.
type ACL struct {
	byReq      idmap.Map[uint16] // requester ID -> domain index + 1 (0: none)
	domains    []domain
	DenyStatus tlp.Status
	slots      []RuleSlot
	active     int // enabled slots: 0 keeps Check on its configured-ranges path
}

func egressBit(e ntb.Egress) uint32 {
	switch e.Kind {
	case ntb.EgressPortA:
		return 1 << 0
	case ntb.EgressPortB:
		return 1 << 1
	case ntb.EgressLocal:
		return 1 << 2
	case ntb.EgressHost:
		return 1 << 3
	case ntb.EgressKernel:
		return 1 << (8 + e.Slot)
	}
	return 0
}

// Build checks c and builds the ACL. kernelSlots bounds kernel egresses.
func Build(c Config, kernelSlots int) (*ACL, error) {
	a := &ACL{DenyStatus: tlp.StatusUR}
	switch c.DenyStatus {
	case "", "UR":
	case "CA":
		a.DenyStatus = tlp.StatusCA
	default:
		return nil, fmt.Errorf("deny_status: %q must be UR or CA", c.DenyStatus)
	}
	if c.RuleSlots < 0 || c.RuleSlots > MaxRuleSlots {
		return nil, fmt.Errorf("rule_slots: %d must be 0 to %d", c.RuleSlots, MaxRuleSlots)
	}
	a.slots = make([]RuleSlot, c.RuleSlots)
	if len(c.Domains) > 0xFFFE {
		return nil, fmt.Errorf("domains: %d domains, at most 65534", len(c.Domains))
	}
	for di, dc := range c.Domains {
		p := fmt.Sprintf("domains[%d]", di)
		d := domain{name: dc.Name, egress: ^uint32(0)}
		if d.name == "" {
			d.name = p
		}
		for ri, r := range dc.Requesters {
			lo, hi, err := parseIDRange(r)
			if err != nil {
				return nil, fmt.Errorf("%s.requesters[%d]: %v", p, ri, err)
			}
			for id := int(lo); id <= int(hi); id++ {
				if prev := a.byReq.Get(tlp.ID(id)); prev != 0 {
					return nil, fmt.Errorf("%s.requesters[%d]: %s already belongs to domain %s", p, ri, tlp.ID(id), a.domains[prev-1].name)
				}
			}
			for id := int(lo); id <= int(hi); id++ {
				a.byReq.Set(tlp.ID(id), uint16(di+1))
			}
			d.reqs = append(d.reqs, [2]tlp.ID{lo, hi})
		}
		for ri, r := range dc.Ranges {
			rp := fmt.Sprintf("%s.ranges[%d]", p, ri)
			if r.Size == 0 || r.Base%Page != 0 || r.Size%Page != 0 {
				return nil, fmt.Errorf("%s: base %#x and size %#x must be non-zero multiples of 4 KiB", rp, r.Base, r.Size)
			}
			if r.Base+r.Size < r.Base {
				return nil, fmt.Errorf("%s: base %#x plus size %#x wraps past 2^64", rp, r.Base, r.Size)
			}
			if !r.Read && !r.Write {
				return nil, fmt.Errorf("%s: grants neither read nor write", rp)
			}
			d.spans = append(d.spans, span{r.Base, r.Base + r.Size, r.Read, r.Write})
		}
		sort.Slice(d.spans, func(i, j int) bool { return d.spans[i].base < d.spans[j].base })
		for i := 1; i < len(d.spans); i++ {
			if d.spans[i].base < d.spans[i-1].end {
				return nil, fmt.Errorf("%s.ranges: %#x-%#x overlaps %#x-%#x", p, d.spans[i].base, d.spans[i].end-1, d.spans[i-1].base, d.spans[i-1].end-1)
			}
		}
		for _, sp := range d.spans {
			d.bases = append(d.bases, sp.base)
		}
		if len(dc.Ingress) == 0 {
			return nil, fmt.Errorf("%s.ingress: say where this domain's requesters arrive from (host, port-a or port-b): an ID is only trusted on its own link", p)
		}
		for ii, s := range dc.Ingress {
			in, err := ParseIngress(s)
			if err != nil {
				return nil, fmt.Errorf("%s.ingress[%d]: %v", p, ii, err)
			}
			d.ingress |= 1 << in
		}
		if len(dc.Egress) > 0 {
			d.egress = 0
			for ei, e := range dc.Egress {
				eg, err := ntb.ParseEgress(e, kernelSlots)
				if err != nil {
					return nil, fmt.Errorf("%s.egress[%d]: %v", p, ei, err)
				}
				d.egress |= egressBit(eg)
			}
		}
		a.domains = append(a.domains, d)
	}
	return a, nil
}

func parseIDRange(s string) (tlp.ID, tlp.ID, error) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := tlp.ParseID(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	hi := lo
	if isRange {
		if hi, err = tlp.ParseID(strings.TrimSpace(b)); err != nil {
			return 0, 0, err
		}
		if hi < lo {
			return 0, 0, fmt.Errorf("range %s runs backwards", s)
		}
	}
	return lo, hi, nil
}

// Op is the access a TLP makes, for the check: the rights it needs.
type Op uint8

// Ops. An AtomicOp reads and writes its target (PCIe Base §6.15), so it
// needs both rights, as an IOMMU requires (VT-d checks an atomic against
// read and write permission).
const (
	OpRead      Op = 1 << iota // a memory read
	OpWrite                    // a memory write
	OpReadWrite = OpRead | OpWrite
)

// OpOf returns the access a memory request or AtomicOp of kind k makes:
// a read (MRd), a write (MWr) or both (FetchAdd, Swap, CAS).
func OpOf(k tlp.Kind) Op {
	switch {
	case k.Class() == tlp.ClassAtomic:
		return OpReadWrite
	case k.HasData():
		return OpWrite
	}
	return OpRead
}

// Verdict is the result of a check.
type Verdict struct {
	Rule   Rule // Allowed or why not
	Domain int  // domain index, -1 if none
}

// Check decides whether requester req, arriving from ingress in, may
// access size bytes (at least 1) at addr, with the rights op needs,
// through egress e. The requester's domain must accept requests from in
// (else SourceInvalid: a forged ID), and the whole access must lie in one
// range. A missing write right is WriteDenied before a missing read
// right is ReadDenied; an op with no bits needs the read right. It does
// not allocate.
func (a *ACL) Check(req tlp.ID, in Ingress, addr, size uint64, op Op, e ntb.Egress) Verdict {
	di := int(a.byReq.Get(req)) - 1
	if di < 0 {
		return Verdict{NoDomain, -1}
	}
	d := &a.domains[di]
	if d.ingress>>in&1 == 0 {
		return Verdict{SourceInvalid, di}
	}
	if d.egress&egressBit(e) == 0 {
		return Verdict{EgressDenied, di}
	}
	// The last span starting at or before addr.
	hit, rd, wr := false, false, false
	if i := ntb.Floor(d.bases, addr); i >= 0 {
		s := &d.spans[i]
		if addr < s.end && size-1 <= s.end-1-addr {
			hit, rd, wr = true, s.read, s.write
		}
	}
	if a.active > 0 {
		for j := range a.slots {
			if s := &a.slots[j]; s.Enabled && int(s.Domain) == di && s.holds(addr, size) {
				hit, rd, wr = true, rd || s.Read, wr || s.Write
			}
		}
	}
	switch {
	case !hit:
		return Verdict{NoRange, di}
	case op&OpWrite != 0 && !wr:
		return Verdict{WriteDenied, di}
	case (op&OpRead != 0 || op == 0) && !rd:
		return Verdict{ReadDenied, di}
	}
	return Verdict{Allowed, di}
}

// SlotFits reports whether pages 4 KiB pages from base (a multiple of
// 4 KiB) end at or below 2^64.
func SlotFits(base uint64, pages uint32) bool {
	return uint64(pages) <= (1<<52)-base/Page
}

// RuleSlots returns the number of run-time rule slots.
func (a *ACL) RuleSlots() int { return len(a.slots) }

// RuleSlot returns slot i (the zero RuleSlot when i is out of range).
func (a *ACL) RuleSlot(i int) RuleSlot {
	if i < 0 || i >= len(a.slots) {
		return RuleSlot{}
	}
	return a.slots[i]
}

// SetRuleSlot replaces slot i with r, as software does through the
// register map. Checks from then on see it. A slot must be one the ACL
// has, page-aligned, end at or below 2^64 (a range past it would wrap to
// address 0) and name a domain that exists; otherwise the slot is left
// as it was (the register map's commit writes nothing).
func (a *ACL) SetRuleSlot(i int, r RuleSlot) error {
	if i < 0 || i >= len(a.slots) {
		return fmt.Errorf("rule slot %d: the ACL has %d", i, len(a.slots))
	}
	if r.Base%Page != 0 {
		return fmt.Errorf("rule slot %d: base %#x is not a multiple of 4 KiB", i, r.Base)
	}
	if !SlotFits(r.Base, r.Pages) {
		return fmt.Errorf("rule slot %d: %d pages at %#x pass 2^64", i, r.Pages, r.Base)
	}
	if int(r.Domain) >= len(a.domains) {
		return fmt.Errorf("rule slot %d: domain %d: the ACL has %d", i, r.Domain, len(a.domains))
	}
	if a.slots[i].Enabled {
		a.active--
	}
	if r.Enabled {
		a.active++
	}
	a.slots[i] = r
	return nil
}

// Span is an address range of a domain: [Base, End) with its rights.
type Span struct {
	Base, End   uint64
	Read, Write bool
}

// Domain is a read-only view of a checked domain, for building the
// hardware check from the same tables.
type Domain struct {
	Name       string
	Requesters [][2]tlp.ID // inclusive requester ID ranges
	Spans      []Span      // sorted, non-overlapping
	// Egress has a bit per egress the domain may use (see EgressBit);
	// all ones when it may use any.
	Egress uint32
	// Ingress has a bit per Ingress its requesters may arrive from.
	Ingress uint8
}

// Domains returns a copy of the checked domains, in configuration order.
func (a *ACL) Domains() []Domain {
	out := make([]Domain, len(a.domains))
	for i, d := range a.domains {
		out[i] = Domain{Name: d.name, Requesters: append([][2]tlp.ID(nil), d.reqs...), Egress: d.egress, Ingress: d.ingress}
		for _, s := range d.spans {
			out[i].Spans = append(out[i].Spans, Span{s.base, s.end, s.read, s.write})
		}
	}
	return out
}

// EgressBit is the bit of Domain.Egress that stands for e: 0 port A, 1
// port B, 2 local registers, 3 host, 8+N kernel slot N.
func EgressBit(e ntb.Egress) uint32 { return egressBit(e) }

// DomainName returns the name of domain i.
func (a *ACL) DomainName(i int) string {
	if i < 0 || i >= len(a.domains) {
		return ""
	}
	return a.domains[i].name
}
