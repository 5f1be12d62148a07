// Package manager is the decision an O-NIC's PCIe manager takes for every
// TLP: security check, address and requester-ID translation, and egress
// (optical port A or B, a kernel slot, local registers, or the host link).
// The emulator runs it per TLP and the RTL generator fills its tables from
// the same ntb and acl code.
//
// Every TLP gets exactly one Outcome: forwarded (to one egress, or two for
// a multicast write), completed with an error status, or dropped — each
// with a named reason. Failures follow the specification and SmartIO's
// NTB behaviour: a posted write that misses or is denied is dropped and
// counted; a non-posted request completes with UR (or CA for denials when
// configured), so a read returns all ones.
package manager

import (
	"fmt"

	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/ntb"
	"onic/tlp"
)

// Ingress is where a TLP entered the O-NIC: the access check's own type,
// so the model, the access tables and the RTL generators number and name
// the host and the ports one way (acl.ParseIngress reads the names).
type Ingress = acl.Ingress

// Ingresses.
const (
	FromHost  = acl.FromHost  // the host-facing PCIe link
	FromPortA = acl.FromPortA // optical port A
	FromPortB = acl.FromPortB // optical port B

	numIngress = 3
)

// Config is the manager's part of the firmware spec.
type Config struct {
	Translation ntb.Config `mapstructure:"translation"`
	Access      acl.Config `mapstructure:"access"`
	// RegisterBAR is the BAR of the O-NIC's own registers (default 0).
	RegisterBAR int `mapstructure:"register_bar"`
	// Relay lists address ranges whose posted writes arriving from one
	// optical port are also passed on, unchanged, out of the other: a
	// ring multicast, where each O-NIC keeps a copy for its host and
	// relays the write to the next.
	Relay []RelayConfig `mapstructure:"relay"`
	// KernelIn lists address ranges whose posted writes arriving from an
	// optical port go into a kernel slot instead of the host: how data
	// from the two ports meets in a two-input kernel (an allreduce step),
	// or how a one-input kernel transforms what arrives.
	KernelIn []KernelInConfig `mapstructure:"kernel_in"`
}

// KernelInConfig is one range steered into a kernel: posted writes from
// port From (port-a or port-b) to [Base, Base+Size) of this host's
// address space go to kernel slot Slot at offset address-Base. They pass
// the security check with that slot as their egress.
type KernelInConfig struct {
	From string `mapstructure:"from"`
	Base uint64 `mapstructure:"base"`
	Size uint64 `mapstructure:"size"`
	Slot int    `mapstructure:"slot"`
}

// RelayConfig is one relayed range: posted writes from port From
// (port-a or port-b) to [Base, Base+Size) of this host's memory also go
// out of the other port. The copy passes the security check again with
// that port as its egress.
type RelayConfig struct {
	From string `mapstructure:"from"`
	Base uint64 `mapstructure:"base"`
	Size uint64 `mapstructure:"size"`
}

// relay is a checked RelayConfig.
type relay struct {
	from       Ingress
	to         ntb.Egress
	base, size uint64
}

// kernelIn is a checked KernelInConfig.
type kernelIn struct {
	from       Ingress
	slot       ntb.Egress
	base, size uint64
}

// Action is what happens to a TLP.
type Action uint8

// Actions.
const (
	Forward  Action = iota // sent on to Egress (and Second)
	Complete               // answered with a completion of Status
	Drop                   // discarded (posted requests, unexpected completions)
	// Wait: a non-posted request from a port for the host, which passes
	// every check, finds every requester tag outstanding (Tags). Nothing
	// was counted and the TLP was not taken: offer it again once a
	// completion has freed a tag (Outcome.Freed). Posted requests and
	// completions never wait for tags (PCIe ordering: posted requests
	// must be able to pass non-posted ones, PCIe Base §2.4.1).
	Wait
)

var actionNames = [...]string{"forward", "complete", "drop", "wait"}

// String returns "forward", "complete", "drop" or "wait".
func (a Action) String() string { return actionNames[a%4] }

// Reason says why a TLP got its outcome.
type Reason uint8

// Reasons.
const (
	OK                   Reason = iota
	NotForUs                    // the address is in none of the O-NIC's BARs
	WindowMiss                  // in a translation BAR but in no window or LUT entry
	MappingDisabled             // the window or LUT entry is not enabled
	PortDown                    // the egress port is down and nothing takes over
	Denied                      // the security check refused it (see Outcome.Deny)
	NoProxyID                   // the requester has no entry in the requester-ID table
	UnexpectedCompletion        // a completion nobody is waiting for
	Unsupported                 // a request the O-NIC does not implement (I/O)
	RelayDenied                 // a relay or multicast copy was refused by the security check (the original went on)
	// MSIXAddress: a write into a lent device's MSI-X table that the
	// O-NIC cannot carry (StandIn.MSI): a message address outside the
	// MSI window, an address DW written in part, or a write across
	// entries or into the table from outside it.
	MSIXAddress
	// Malformed: a request from a port that breaks a rule of the TLP
	// format the link layer cannot see — one whose address and length
	// cross a 4 KiB boundary (PCIe Base §2.2.7). Dropped, never
	// answered, as a receiver treats a Malformed TLP (§2.3.1.1).
	Malformed
	// BusMasterDisabled: a peer's request for the host while the host
	// has cleared the O-NIC's Bus Master Enable (Command bit 2): the
	// O-NIC may issue no memory request upstream (PCIe Base §7.5.1.1.3),
	// so a posted one is dropped and a non-posted one completed with UR.
	BusMasterDisabled
	numReasons
)

var reasonNames = [numReasons]string{"ok", "not-for-us", "window-miss", "mapping-disabled", "port-down", "denied",
	"no-proxy-id", "unexpected-completion", "unsupported", "relay-denied", "msix-address", "malformed", "bus-master-disabled"}

// String returns a short name such as "window-miss".
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// Reasons lists every reason in order (for reports).
func Reasons() []Reason {
	rs := make([]Reason, numReasons)
	for i := range rs {
		rs[i] = Reason(i)
	}
	return rs
}

// Outcome is the manager's decision for one TLP. For a TLP failed with
// PortDown, Egress, Address and Requester still say where it would have
// gone.
type Outcome struct {
	Action    Action
	Reason    Reason
	Deny      acl.Rule // for Reason Denied
	Egress    ntb.Egress
	Address   uint64 // after translation
	Requester tlp.ID // after requester-ID translation
	// Tag is the tag the TLP leaves with: the O-NIC's own for a
	// non-posted request it issues to its host for a peer, the peer's
	// own put back on that request's completion, the TLP's otherwise.
	Tag uint16
	// Freed reports that this completion finished a request the O-NIC
	// issued for a peer, so its tag is free again (a request that had to
	// Wait may be offered again).
	Freed bool
	// Second is the multicast copy (Kind EgressNone when there is none).
	Second        ntb.Egress
	SecondAddress uint64
	// SecondRequester is the copy's requester ID: the proxy ID for a
	// multicast window's copy, the original requester for a relay copy
	// (which passes from port to port).
	SecondRequester tlp.ID
	Status          tlp.Status // for Action Complete
	// Holdable is, for Reason PortDown, whether the TLP would have gone
	// out of the port had it been up: it passes the access check and has
	// a proxy requester ID. Only such a TLP may be held for the port and
	// sent when it is back (the emulator's hold policy); the manager
	// counts every one as port-down either way.
	Holdable bool
	// Rewrite, for a write into a lent device's MSI-X table, is how its
	// payload leaves (RewritePayload); zero for every other TLP.
	Rewrite DWRewrite
}

// Event records a denial.
type Event struct {
	Requester tlp.ID
	Address   uint64
	Rule      acl.Rule
	Ingress   Ingress
}

// EventRing is the number of most recent denials kept.
const EventRing = 64

type bar struct {
	base, size uint64
	present    bool
}

// Manager holds an O-NIC's tables and counters.
type Manager struct {
	tables *ntb.Tables
	access *acl.ACL
	fn     *pcie.Function
	self   tlp.ID
	regBAR int
	bars   [6]bar
	// PortDown says, per port (0 A, 1 B), whether the optical link is down.
	PortDown [2]bool
	// BusMasterOff says the host has cleared Bus Master Enable in the
	// O-NIC's Command register: peers' requests may not go upstream.
	BusMasterOff bool
	// counts and denials are per ingress (in: the TLP being decided's),
	// as the card counts them: the manager's COUNT_* registers the host's
	// TLPs, the port pipelines' port_in_count_* the ports'.
	counts   [numIngress][numReasons]uint64
	denials  [numIngress][acl.NumRules]uint64 // Denied TLPs by acl.Rule
	in       Ingress
	events   [EventRing]Event
	nEvents  uint64
	hit      ntb.Hit // scratch for lookups
	standIns []standIn
	// tags holds the non-posted requests issued to the host for peers,
	// so their completions find their way back (tags.go).
	tags tagTable
	// out holds, per optical port, the non-posted requests sent out of it
	// (Issue), so their completions are matched on their way back.
	out      [2]tagTable
	relays   []relay
	kernelIn []kernelIn
}

// CheckPortRanges checks c's relay and kernel_in ranges for a manager
// with slots kernel slots: each from port-a or port-b, not empty and not
// wrapping past 2^64, a kernel_in's slot one of the slots, and no two
// kernel_in ranges from the same port overlapping. New checks them; so
// does the RTL generator, whose port pipeline carries them out.
func (c Config) CheckPortRanges(slots int) error {
	for i, r := range c.Relay {
		p := fmt.Sprintf("relay[%d]", i)
		if r.From != "port-a" && r.From != "port-b" {
			return fmt.Errorf("%s.from: %q must be port-a or port-b", p, r.From)
		}
		if r.Size == 0 || r.Base+r.Size < r.Base {
			return fmt.Errorf("%s.size: %#x at %#x is empty or wraps", p, r.Size, r.Base)
		}
	}
	for i, r := range c.KernelIn {
		p := fmt.Sprintf("kernel_in[%d]", i)
		if r.From != "port-a" && r.From != "port-b" {
			return fmt.Errorf("%s.from: %q must be port-a or port-b", p, r.From)
		}
		if r.Size == 0 || r.Base+r.Size < r.Base {
			return fmt.Errorf("%s.size: %#x at %#x is empty or wraps", p, r.Size, r.Base)
		}
		if r.Slot < 0 || r.Slot >= slots {
			return fmt.Errorf("%s.slot: %d is not a kernel slot (0 to %d)", p, r.Slot, slots-1)
		}
		for j, o := range c.KernelIn[:i] {
			if o.From == r.From && r.Base < o.Base+o.Size && o.Base < r.Base+r.Size {
				return fmt.Errorf("%s: overlaps kernel_in[%d] from the same port", p, j)
			}
		}
	}
	return nil
}

// New checks c against the O-NIC's host-facing function f (its BARs) and
// builds the manager. self is f's routing ID after enumeration.
func New(c Config, f *pcie.Function, self tlp.ID) (*Manager, error) {
	sizes := f.MemorySizes()
	if c.RegisterBAR < 0 || c.RegisterBAR > 5 || sizes[c.RegisterBAR] == 0 {
		return nil, fmt.Errorf("register_bar: %d is not a memory BAR of %s", c.RegisterBAR, f.Name)
	}
	tab, err := ntb.Build(c.Translation, sizes)
	if err != nil {
		return nil, fmt.Errorf("translation.%v", err)
	}
	slots := c.Translation.Slots()
	a, err := acl.Build(c.Access, slots)
	if err != nil {
		return nil, fmt.Errorf("access.%v", err)
	}
	if err := c.CheckPortRanges(slots); err != nil {
		return nil, err
	}
	m := &Manager{tables: tab, access: a, fn: f, self: self, regBAR: c.RegisterBAR}
	for _, r := range c.Relay {
		rl := relay{from: FromPortA, to: ntb.Egress{Kind: ntb.EgressPortB}, base: r.Base, size: r.Size}
		if r.From == "port-b" {
			rl.from, rl.to = FromPortB, ntb.Egress{Kind: ntb.EgressPortA}
		}
		m.relays = append(m.relays, rl)
	}
	for _, r := range c.KernelIn {
		ki := kernelIn{from: FromPortA, base: r.Base, size: r.Size, slot: ntb.Egress{Kind: ntb.EgressKernel, Slot: uint8(r.Slot)}}
		if r.From == "port-b" {
			ki.from = FromPortB
		}
		m.kernelIn = append(m.kernelIn, ki)
	}
	m.SyncBARs()
	return m, nil
}

// SyncBARs re-reads where the BARs are from the function's configuration
// space, and the Command register's enables; call it after enumeration
// or whenever software writes them.
func (m *Manager) SyncBARs() {
	syncBARs(m.fn, &m.bars)
	m.BusMasterOff = m.fn.Space.Read16(0x04)&0x4 == 0
	for i := range m.standIns {
		syncBARs(m.standIns[i].fn, &m.standIns[i].bars)
	}
}

// syncBARs reads f's memory BARs into bars. While the Command
// register's Memory Space Enable is clear the function decodes none of
// them (PCIe Base §7.5.1.1.1): a request for one is not for the O-NIC and
// completes with UR.
func syncBARs(f *pcie.Function, bars *[6]bar) {
	mse := f.Space.Read16(0x04)&0x2 != 0
	for i, b := range f.BARs {
		bars[i] = bar{}
		if mse && (b.Kind == pcie.BARMem32 || b.Kind == pcie.BARMem64) {
			bars[i] = bar{base: f.BARAddress(i), size: b.Size, present: true}
		}
	}
}

// Tables returns the translation tables (to change mappings at run time).
func (m *Manager) Tables() *ntb.Tables { return m.tables }

// Access returns the manager's access-control tables, whose run-time rule
// slots software programs through the register map.
func (m *Manager) Access() *acl.ACL { return m.access }

// Count returns how many TLPs got reason r, from every ingress.
func (m *Manager) Count(r Reason) uint64 {
	return m.CountFrom(FromHost, r) + m.CountFrom(FromPortA, r) + m.CountFrom(FromPortB, r)
}

// CountFrom returns how many TLPs from ingress in got reason r: what the
// card's counters say, the manager's COUNT_* registers counting the
// host's (FromHost) and its port pipelines the ports'.
func (m *Manager) CountFrom(in Ingress, r Reason) uint64 {
	if in >= numIngress || r >= numReasons {
		return 0
	}
	return m.counts[in][r]
}

// Denials returns how many TLPs were Denied by access rule r (the
// Denied count split by why: source-invalid, no-range, ...), from every
// ingress.
func (m *Manager) Denials(r acl.Rule) uint64 {
	return m.DenialsFrom(FromHost, r) + m.DenialsFrom(FromPortA, r) + m.DenialsFrom(FromPortB, r)
}

// DenialsFrom returns how many TLPs from ingress in were Denied by access
// rule r.
func (m *Manager) DenialsFrom(in Ingress, r acl.Rule) uint64 {
	if in >= numIngress || r >= acl.NumRules {
		return 0
	}
	return m.denials[in][r]
}

// Counters calls visit with a pointer to each of the manager's counters —
// its decisions by reason and its denials by rule, per ingress — always in
// the same order. The emulator's transfer level (docs/emu.md) extrapolates
// them over the simulated time it skips.
func (m *Manager) Counters(visit func(*uint64)) {
	for in := range m.counts {
		for r := range m.counts[in] {
			visit(&m.counts[in][r])
		}
		for r := range m.denials[in] {
			visit(&m.denials[in][r])
		}
	}
}

// Events returns the most recent denials, oldest first.
func (m *Manager) Events() []Event {
	n := min(m.nEvents, EventRing)
	out := make([]Event, 0, n)
	for i := m.nEvents - n; i < m.nEvents; i++ {
		out = append(out, m.events[i%EventRing])
	}
	return out
}

// fail decides a refused TLP: posted requests are dropped, non-posted ones
// complete with status, completions are dropped.
func (m *Manager) fail(t *tlp.TLP, r Reason, status tlp.Status, o *Outcome) {
	m.counts[m.in][r]++
	*o = Outcome{Action: Drop, Reason: r, Requester: t.RequesterID, Tag: t.Tag}
	if t.Kind().IsNonPosted() {
		o.Action, o.Status = Complete, status
	}
}

func (m *Manager) deny(t *tlp.TLP, in Ingress, addr uint64, rule acl.Rule, o *Outcome) {
	m.denials[m.in][rule]++ // a rule Check returned: in range
	m.events[m.nEvents%EventRing] = Event{Requester: t.RequesterID, Address: addr, Rule: rule, Ingress: in}
	m.nEvents++
	m.fail(t, Denied, m.access.DenyStatus, o)
	o.Deny = rule
}

// forward records a TLP sent on to egress e at address addr.
func (m *Manager) forward(o *Outcome, e ntb.Egress, addr uint64, req tlp.ID) {
	m.counts[m.in][OK]++
	o.Action, o.Reason, o.Deny, o.Status, o.Holdable = Forward, OK, acl.Allowed, 0, false
	o.Egress, o.Address, o.Requester = e, addr, req
	o.Second, o.SecondAddress, o.SecondRequester = ntb.Egress{}, 0, 0
	o.Rewrite = DWRewrite{}
}

// accessSize is the number of bytes a request touches, for the security
// check: its payload or requested length.
func accessSize(t *tlp.TLP) uint64 {
	if t.Length == 0 {
		return 4
	}
	return uint64(t.Length) * 4
}

// Process decides, into o, what happens to t, which entered through in.
// It does not allocate. (It fills a caller's Outcome rather than returning
// one: returning the struct would cost more than the decision.)
func (m *Manager) Process(t *tlp.TLP, in Ingress, o *Outcome) {
	k := t.Kind()
	c := k.Class()
	local := ntb.Egress{Kind: ntb.EgressLocal}
	o.Tag, o.Freed = t.Tag, false
	m.in = in
	if in != FromHost {
		m.fromPort(t, in, c, o)
		return
	}
	switch c {
	case tlp.ClassConfig, tlp.ClassMessage:
		m.forward(o, local, 0, t.RequesterID)
		return
	case tlp.ClassCompletion:
		// The host's root complex routed it here by requester ID: it
		// answers a request the O-NIC issued for a peer, under its own ID
		// and one of its tags, and goes back out of the port that request
		// came in on with the peer's requester ID and tag. The O-NIC
		// issues no non-posted requests of its own, so anything else is
		// an Unexpected Completion (PCIe §2.3.2), dropped and counted.
		if t.RequesterID == m.self {
			if i, done, ok := m.tags.match(t); ok {
				e := m.tags.e[i]
				m.tags.settle(i, t, done)
				port := ntb.Egress{Kind: ntb.EgressPortA}
				if e.port == FromPortB {
					port.Kind = ntb.EgressPortB
				}
				m.forward(o, port, 0, e.requester)
				o.Tag, o.Freed = e.tag, done
				return
			}
		}
		m.fail(t, UnexpectedCompletion, 0, o)
		return
	case tlp.ClassMemory, tlp.ClassAtomic:
	default:
		m.fail(t, Unsupported, tlp.StatusUR, o)
		return
	}
	// Memory requests and AtomicOps: which BAR?
	bi := -1
	var off uint64
	for i := range m.bars {
		b := &m.bars[i]
		if b.present && t.Address-b.base < b.size && t.Address >= b.base {
			bi, off = i, t.Address-b.base
			break
		}
	}
	op := acl.OpOf(k)
	size := accessSize(t)
	if bi < 0 {
		m.processStandIn(t, in, op, size, o)
		return
	}
	if bi == m.regBAR {
		if v := m.access.Check(t.RequesterID, in, off, size, op, local); v.Rule != acl.Allowed {
			m.deny(t, in, off, v.Rule, o)
			return
		}
		m.forward(o, local, off, t.RequesterID)
		return
	}
	h := &m.hit
	m.tables.Lookup(bi, off, m.PortDown, h)
	switch {
	case !h.Found():
		m.fail(t, WindowMiss, tlp.StatusUR, o)
		return
	case !h.Enabled():
		m.fail(t, MappingDisabled, tlp.StatusUR, o)
		return
	case h.Egress.IsPort() && m.PortDown[portIdx(h.Egress)]:
		m.fail(t, PortDown, tlp.StatusUR, o)
		// Say where it would have gone, and whether it could (the access
		// check, not counted: it is counted as port-down), for an
		// emulator that holds traffic until the port is back.
		o.Egress, o.Address = h.Egress, h.Translated
		p, ok := m.tables.ProxyID(t.RequesterID)
		if ok {
			o.Requester = p
		}
		o.Holdable = ok && m.access.Check(t.RequesterID, in, h.Translated, size, op, h.Egress).Rule == acl.Allowed
		return
	}
	if v := m.access.Check(t.RequesterID, in, h.Translated, size, op, h.Egress); v.Rule != acl.Allowed {
		m.deny(t, in, h.Translated, v.Rule, o)
		return
	}
	req := t.RequesterID
	if h.Egress.IsPort() {
		p, ok := m.tables.ProxyID(req)
		if !ok {
			m.fail(t, NoProxyID, tlp.StatusUR, o)
			return
		}
		req = p
	}
	m.forward(o, h.Egress, h.Translated, req)
	if h.Second.Kind != ntb.EgressNone && op == acl.OpWrite && !m.PortDown[portIdx(h.Second)] {
		// The copy is a write of its own, to its own address out of its
		// own port: it passes the check for both or is not made (the
		// original went on), counted as a refused copy.
		if v := m.access.Check(t.RequesterID, in, h.SecondAddr, size, acl.OpWrite, h.Second); v.Rule != acl.Allowed {
			m.counts[m.in][RelayDenied]++
			return
		}
		o.Second, o.SecondAddress, o.SecondRequester = h.Second, h.SecondAddr, req
	}
}

// relay adds a copy of the posted write t, which came in on in, out of
// the other port if a relay range covers it. The copy is made even if
// that port is down: what happens to it then is the caller's policy
// (hold it or count it lost), never a silent skip.
func (m *Manager) relay(t *tlp.TLP, in Ingress, o *Outcome) {
	size := accessSize(t)
	for i := range m.relays {
		r := &m.relays[i]
		if r.from != in || t.Address < r.base || t.Address-r.base+size > r.size {
			continue
		}
		if v := m.access.Check(t.RequesterID, in, t.Address, size, acl.OpWrite, r.to); v.Rule != acl.Allowed {
			m.counts[m.in][RelayDenied]++
			return
		}
		o.Second, o.SecondAddress, o.SecondRequester = r.to, t.Address, t.RequesterID
		return
	}
}

func portIdx(e ntb.Egress) int {
	if e.Kind == ntb.EgressPortB {
		return 1
	}
	return 0
}

// fromPort handles TLPs arriving from an optical port: completions find
// their local requester through the requester-ID table; requests (a
// remote device's DMA into this host, already translated by the far side)
// are checked and passed to the host link, or, for posted writes into a
// kernel_in range, to its kernel slot.
func (m *Manager) fromPort(t *tlp.TLP, in Ingress, c tlp.Class, o *Outcome) {
	host := ntb.Egress{Kind: ntb.EgressHost}
	switch c {
	case tlp.ClassCompletion:
		// It must answer a request sent out of this very port (by tag
		// and proxy requester ID); it goes to the host with the local
		// requester and the tag it asked with.
		out := &m.out[int(in)-1]
		i, done, ok := out.matchReturn(t)
		local, mapped := m.tables.LocalID(t.RequesterID)
		if !ok || !mapped {
			m.fail(t, UnexpectedCompletion, 0, o)
			return
		}
		tag := out.e[i].tag
		out.settle(i, t, done)
		m.forward(o, host, 0, local)
		o.Tag, o.Freed = tag, done
	case tlp.ClassMemory, tlp.ClassAtomic:
		if crosses4K(t) {
			m.counts[m.in][Malformed]++
			*o = Outcome{Action: Drop, Reason: Malformed, Requester: t.RequesterID, Tag: t.Tag}
			return
		}
		if t.Kind() == tlp.MWr {
			for i := range m.kernelIn {
				ki := &m.kernelIn[i]
				if ki.from != in || t.Address < ki.base || t.Address-ki.base >= ki.size {
					continue
				}
				if v := m.access.Check(t.RequesterID, in, t.Address, accessSize(t), acl.OpWrite, ki.slot); v.Rule != acl.Allowed {
					m.deny(t, in, t.Address, v.Rule, o)
					return
				}
				m.forward(o, ki.slot, t.Address-ki.base, t.RequesterID)
				return
			}
		}
		if v := m.access.Check(t.RequesterID, in, t.Address, accessSize(t), acl.OpOf(t.Kind()), host); v.Rule != acl.Allowed {
			m.deny(t, in, t.Address, v.Rule, o)
			return
		}
		if m.BusMasterOff {
			m.fail(t, BusMasterDisabled, tlp.StatusUR, o)
			return
		}
		// Into the host's hierarchy the request goes as the O-NIC's own
		// (tags.go): a non-posted one with a tag of the O-NIC's.
		tag := t.Tag
		if t.Kind().IsNonPosted() {
			var ok bool
			if tag, ok = m.tags.alloc(t, in); !ok {
				*o = Outcome{Action: Wait, Requester: t.RequesterID, Tag: t.Tag}
				return
			}
		}
		m.forward(o, host, t.Address, m.self)
		o.Tag = tag
		if t.Kind() == tlp.MWr {
			m.relay(t, in, o)
		}
	case tlp.ClassMessage:
		m.forward(o, ntb.Egress{Kind: ntb.EgressLocal}, 0, t.RequesterID)
	default:
		// I/O, and configuration requests: nothing behind a port may
		// configure this host's hierarchy (configuration requests are
		// its root complex's alone): UR.
		m.fail(t, Unsupported, tlp.StatusUR, o)
	}
}

// crosses4K reports whether memory request or AtomicOp t's address and
// length cross a 4 KiB boundary, which makes it a Malformed TLP (PCIe
// Base §2.2.7).
func crosses4K(t *tlp.TLP) bool {
	return t.Address&0xFFF+accessSize(t) > 4096
}
