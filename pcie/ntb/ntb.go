// Package ntb holds an O-NIC's address translation tables, the
// non-transparent-bridge mechanisms SmartIO and FLEET rely on: direct
// windows (power-of-two, naturally aligned BAR ranges mapped to a far-side
// base behind an egress), a look-up table window (a BAR range cut into
// equal entries, each with its own far-side base) and a requester-ID table
// (local IDs mapped to proxy IDs, so completions find their way back).
//
// Tables are built once from a Config, which is checked completely (errors
// name the field path); lookups are allocation-free.
package ntb

import (
	"cmp"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"onic/pcie/internal/idmap"
	"onic/tlp"
)

// EgressKind says where the manager sends a translated TLP.
type EgressKind uint8

// Egress kinds.
const (
	EgressNone   EgressKind = iota
	EgressPortA             // optical port A
	EgressPortB             // optical port B
	EgressKernel            // an in-network kernel slot
	EgressLocal             // the O-NIC's own registers
	EgressHost              // the host-facing PCIe link (for TLPs arriving from a port)
)

// Egress is a destination: a port, a kernel slot, or local registers.
type Egress struct {
	Kind EgressKind
	Slot uint8 // kernel slot for EgressKernel
}

// String returns "port-a", "port-b", "kernel:N", "local" or "none".
func (e Egress) String() string {
	switch e.Kind {
	case EgressPortA:
		return "port-a"
	case EgressPortB:
		return "port-b"
	case EgressKernel:
		return "kernel:" + strconv.Itoa(int(e.Slot))
	case EgressLocal:
		return "local"
	case EgressHost:
		return "host"
	}
	return "none"
}

// ParseEgress parses the forms String returns; kernel slots must be below
// slots.
func ParseEgress(s string, slots int) (Egress, error) {
	switch s {
	case "port-a":
		return Egress{Kind: EgressPortA}, nil
	case "port-b":
		return Egress{Kind: EgressPortB}, nil
	case "local":
		return Egress{Kind: EgressLocal}, nil
	case "host":
		return Egress{Kind: EgressHost}, nil
	}
	if rest, ok := strings.CutPrefix(s, "kernel:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n >= slots {
			return Egress{}, fmt.Errorf("%q: kernel slot must be 0 to %d", s, slots-1)
		}
		return Egress{Kind: EgressKernel, Slot: uint8(n)}, nil
	}
	return Egress{}, fmt.Errorf("%q is not port-a, port-b, kernel:N, local or host", s)
}

// IsPort reports whether e is an optical port.
func (e Egress) IsPort() bool { return e.Kind == EgressPortA || e.Kind == EgressPortB }

// Config describes an O-NIC's translation resources and their contents,
// as the firmware spec holds them. Addresses of windows are offsets in
// the O-NIC's BARs, so they stay valid when the OS moves the BARs.
type Config struct {
	MaxWindows  int            `mapstructure:"max_windows"`  // direct windows the hardware has (default 6)
	KernelSlots int            `mapstructure:"kernel_slots"` // default 4
	Windows     []WindowConfig `mapstructure:"windows"`
	LUT         LUTConfig      `mapstructure:"lut"`
	RID         RIDConfig      `mapstructure:"rid"`
}

// WindowConfig is one direct window.
type WindowConfig struct {
	Name       string `mapstructure:"name"`
	BAR        int    `mapstructure:"bar"`
	Offset     uint64 `mapstructure:"offset"`     // in the BAR, aligned to Size
	Size       uint64 `mapstructure:"size"`       // power of two, at least 4 KiB
	Egress     string `mapstructure:"egress"`     // port-a, port-b, kernel:N, local
	Translated uint64 `mapstructure:"translated"` // far-side base, aligned to Size
	Disabled   bool   `mapstructure:"disabled"`
	// Failover names a second egress and base that take over while the
	// first egress (a port) is down: SmartIO's multipath.
	FailoverEgress     string `mapstructure:"failover_egress"`
	FailoverTranslated uint64 `mapstructure:"failover_translated"`
	// Multicast replicates writes to both ports (the second at
	// FailoverTranslated): SmartIO's overlay-BAR multicast.
	Multicast bool `mapstructure:"multicast"`
}

// LUTConfig is the look-up table window: Entries entries of EntrySize
// bytes starting at Offset in BAR.
type LUTConfig struct {
	BAR       int              `mapstructure:"bar"`
	Offset    uint64           `mapstructure:"offset"`
	Entries   int              `mapstructure:"entries"`    // at most 512 (default 512)
	EntrySize uint64           `mapstructure:"entry_size"` // power of two, at least 4 KiB (default 64 KiB)
	Map       []LUTEntryConfig `mapstructure:"map"`
}

// LUTEntryConfig fills one LUT entry.
type LUTEntryConfig struct {
	Index      int    `mapstructure:"index"`
	Egress     string `mapstructure:"egress"`
	Translated uint64 `mapstructure:"translated"`
}

// RIDConfig is the requester-ID translation table: local requester IDs
// leaving through a port get proxy IDs ProxyBase, ProxyBase+1, ...
type RIDConfig struct {
	Entries   int      `mapstructure:"entries"` // at most 512 (default 512)
	ProxyBase string   `mapstructure:"proxy_base"`
	Map       []string `mapstructure:"map"` // local IDs, bb:dd.f, in table order
}

// Limits taken from the Microchip Switchtec NTB (shared/REFERENCE.md).
const (
	DefaultMaxWindows = 6
	MaxWindowsLimit   = 64
	DefaultLUTEntries = 512
	MaxLUTEntries     = 512
	DefaultEntrySize  = 64 << 10
	DefaultRIDEntries = 512
	MaxRIDEntries     = 512
	MinWindowSize     = 4 << 10
)

// Window is a checked direct window.
type Window struct {
	Name       string
	BAR        int
	Offset     uint64
	Size       uint64
	shift      uint8 // log2(Size)
	Egress     Egress
	Translated uint64
	Enabled    bool
	Failover   Egress // EgressNone if none
	FailoverAt uint64
	Multicast  bool
}

// LUTEntry is one checked LUT entry.
type LUTEntry struct {
	Enabled    bool
	Egress     Egress
	Translated uint64
}

// Tables are an O-NIC's checked translation tables.
type Tables struct {
	windows []Window // sorted by BAR, then Offset
	keys    []uint64 // BAR<<61 | Offset of each window, for the search
	lut     []LUTEntry
	lutBAR  int
	lutOff  uint64
	lutSize uint64
	lutSh   uint8
	rid     []tlp.ID          // proxy index -> local ID
	ridFast idmap.Map[uint16] // local ID -> proxy index + 1 (0: none)
	proxy   tlp.ID
	slots   int
}

// DefaultKernelSlots is how many kernel slots an O-NIC has when its
// configuration does not say.
const DefaultKernelSlots = 4

// Slots returns how many kernel slots c gives the O-NIC: KernelSlots, or
// DefaultKernelSlots when it is 0.
func (c Config) Slots() int { return cmp.Or(c.KernelSlots, DefaultKernelSlots) }

// Build checks c and builds the tables. barSizes gives the O-NIC's BAR
// sizes, so windows and the LUT can be checked against them.
func Build(c Config, barSizes [6]uint64) (*Tables, error) {
	if c.MaxWindows == 0 {
		c.MaxWindows = DefaultMaxWindows
	}
	c.KernelSlots = c.Slots()
	if c.MaxWindows < 0 || c.MaxWindows > MaxWindowsLimit {
		return nil, fmt.Errorf("max_windows: %d must be 1 to %d", c.MaxWindows, MaxWindowsLimit)
	}
	if len(c.Windows) > c.MaxWindows {
		return nil, fmt.Errorf("windows: %d windows, the hardware has %d (max_windows)", len(c.Windows), c.MaxWindows)
	}
	t := &Tables{slots: c.KernelSlots}
	for i, w := range c.Windows {
		p := fmt.Sprintf("windows[%d]", i)
		win, err := checkWindow(w, p, barSizes, c.KernelSlots)
		if err != nil {
			return nil, err
		}
		for j, o := range t.windows {
			if o.BAR == win.BAR && win.Offset < o.Offset+o.Size && o.Offset < win.Offset+win.Size {
				return nil, fmt.Errorf("%s: BAR%d %#x-%#x overlaps windows[%d] (%s) at %#x-%#x",
					p, win.BAR, win.Offset, win.Offset+win.Size-1, indexOf(c.Windows, o.Name, j), o.Name, o.Offset, o.Offset+o.Size-1)
			}
		}
		t.windows = append(t.windows, win)
	}
	sortWindows(t.windows)
	for _, w := range t.windows {
		t.keys = append(t.keys, uint64(w.BAR)<<61|w.Offset)
	}
	if err := t.buildLUT(c.LUT, barSizes); err != nil {
		return nil, err
	}
	for _, w := range t.windows {
		if t.lutSize > 0 && w.BAR == t.lutBAR && w.Offset < t.lutOff+t.lutSize && t.lutOff < w.Offset+w.Size {
			return nil, fmt.Errorf("lut: BAR%d %#x-%#x overlaps window %s", t.lutBAR, t.lutOff, t.lutOff+t.lutSize-1, w.Name)
		}
	}
	if err := t.buildRID(c.RID); err != nil {
		return nil, err
	}
	return t, nil
}

func indexOf(ws []WindowConfig, name string, fallback int) int {
	for i, w := range ws {
		if w.Name == name {
			return i
		}
	}
	return fallback
}

func checkWindow(w WindowConfig, p string, barSizes [6]uint64, slots int) (Window, error) {
	if w.Name == "" {
		w.Name = p
	}
	if w.BAR < 0 || w.BAR > 5 || barSizes[w.BAR] == 0 {
		return Window{}, fmt.Errorf("%s.bar: %d is not a memory BAR of the O-NIC", p, w.BAR)
	}
	if w.Size < MinWindowSize || bits.OnesCount64(w.Size) != 1 {
		return Window{}, fmt.Errorf("%s.size: %#x must be a power of two of at least 4 KiB", p, w.Size)
	}
	if w.Offset%w.Size != 0 {
		return Window{}, fmt.Errorf("%s.offset: %#x is not aligned to the window size %#x", p, w.Offset, w.Size)
	}
	if w.Offset+w.Size > barSizes[w.BAR] {
		return Window{}, fmt.Errorf("%s: %#x-%#x lies outside BAR%d (%#x bytes)", p, w.Offset, w.Offset+w.Size-1, w.BAR, barSizes[w.BAR])
	}
	if w.Translated%w.Size != 0 {
		return Window{}, fmt.Errorf("%s.translated: %#x is not aligned to the window size %#x", p, w.Translated, w.Size)
	}
	eg, err := ParseEgress(w.Egress, slots)
	if err != nil {
		return Window{}, fmt.Errorf("%s.egress: %v", p, err)
	}
	win := Window{Name: w.Name, BAR: w.BAR, Offset: w.Offset, Size: w.Size, shift: uint8(bits.TrailingZeros64(w.Size)),
		Egress: eg, Translated: w.Translated, Enabled: !w.Disabled, Multicast: w.Multicast}
	if w.FailoverEgress != "" || w.Multicast {
		if w.FailoverEgress == "" {
			return Window{}, fmt.Errorf("%s.failover_egress: a multicast window needs the second port", p)
		}
		fe, err := ParseEgress(w.FailoverEgress, slots)
		if err != nil {
			return Window{}, fmt.Errorf("%s.failover_egress: %v", p, err)
		}
		if !eg.IsPort() || !fe.IsPort() || fe == eg {
			return Window{}, fmt.Errorf("%s.failover_egress: %s and %s must be the two different optical ports", p, eg, fe)
		}
		if w.FailoverTranslated%w.Size != 0 {
			return Window{}, fmt.Errorf("%s.failover_translated: %#x is not aligned to the window size %#x", p, w.FailoverTranslated, w.Size)
		}
		win.Failover, win.FailoverAt = fe, w.FailoverTranslated
	}
	return win, nil
}

// sortWindows orders windows by BAR and offset for binary search.
func sortWindows(ws []Window) {
	for i := 1; i < len(ws); i++ {
		for j := i; j > 0 && (ws[j].BAR < ws[j-1].BAR || ws[j].BAR == ws[j-1].BAR && ws[j].Offset < ws[j-1].Offset); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func (t *Tables) buildLUT(c LUTConfig, barSizes [6]uint64) error {
	if c.Entries == 0 && len(c.Map) == 0 && c.EntrySize == 0 {
		return nil // no LUT window
	}
	if c.Entries == 0 {
		c.Entries = DefaultLUTEntries
	}
	if c.EntrySize == 0 {
		c.EntrySize = DefaultEntrySize
	}
	if c.Entries < 1 || c.Entries > MaxLUTEntries {
		return fmt.Errorf("lut.entries: %d must be 1 to %d", c.Entries, MaxLUTEntries)
	}
	if c.EntrySize < MinWindowSize || bits.OnesCount64(c.EntrySize) != 1 {
		return fmt.Errorf("lut.entry_size: %#x must be a power of two of at least 4 KiB", c.EntrySize)
	}
	size := uint64(c.Entries) * c.EntrySize
	if c.BAR < 0 || c.BAR > 5 || barSizes[c.BAR] == 0 {
		return fmt.Errorf("lut.bar: %d is not a memory BAR of the O-NIC", c.BAR)
	}
	if c.Offset%c.EntrySize != 0 {
		return fmt.Errorf("lut.offset: %#x is not aligned to the entry size %#x", c.Offset, c.EntrySize)
	}
	if c.Offset+size > barSizes[c.BAR] {
		return fmt.Errorf("lut: %d entries of %#x bytes at %#x do not fit BAR%d (%#x bytes)", c.Entries, c.EntrySize, c.Offset, c.BAR, barSizes[c.BAR])
	}
	t.lut = make([]LUTEntry, c.Entries)
	t.lutBAR, t.lutOff, t.lutSize = c.BAR, c.Offset, size
	t.lutSh = uint8(bits.TrailingZeros64(c.EntrySize))
	for i, m := range c.Map {
		p := fmt.Sprintf("lut.map[%d]", i)
		if m.Index < 0 || m.Index >= c.Entries {
			return fmt.Errorf("%s.index: %d is out of range (the LUT has %d entries)", p, m.Index, c.Entries)
		}
		if t.lut[m.Index].Enabled {
			return fmt.Errorf("%s.index: entry %d is already mapped", p, m.Index)
		}
		if m.Translated%c.EntrySize != 0 {
			return fmt.Errorf("%s.translated: %#x is not aligned to the entry size %#x", p, m.Translated, c.EntrySize)
		}
		eg, err := ParseEgress(m.Egress, t.slots)
		if err != nil {
			return fmt.Errorf("%s.egress: %v", p, err)
		}
		t.lut[m.Index] = LUTEntry{Enabled: true, Egress: eg, Translated: m.Translated}
	}
	return nil
}

func (t *Tables) buildRID(c RIDConfig) error {
	if c.Entries == 0 {
		c.Entries = DefaultRIDEntries
	}
	if c.Entries < 1 || c.Entries > MaxRIDEntries {
		return fmt.Errorf("rid.entries: %d must be 1 to %d", c.Entries, MaxRIDEntries)
	}
	if len(c.Map) > c.Entries {
		return fmt.Errorf("rid.map: %d IDs, the table has %d entries", len(c.Map), c.Entries)
	}
	if c.ProxyBase != "" {
		id, err := tlp.ParseID(c.ProxyBase)
		if err != nil {
			return fmt.Errorf("rid.proxy_base: %v", err)
		}
		if int(id)+c.Entries > 1<<16 {
			return fmt.Errorf("rid.proxy_base: %s plus %d entries runs past ff:1f.7", id, c.Entries)
		}
		t.proxy = id
	} else if len(c.Map) > 0 {
		return fmt.Errorf("rid.proxy_base: required when rid.map is given")
	}
	for i, s := range c.Map {
		id, err := tlp.ParseID(s)
		if err != nil {
			return fmt.Errorf("rid.map[%d]: %v", i, err)
		}
		if t.ridFast.Get(id) != 0 {
			return fmt.Errorf("rid.map[%d]: %s is mapped twice", i, id)
		}
		t.ridFast.Set(id, uint16(i)+1)
		t.rid = append(t.rid, id)
	}
	return nil
}

// HitFlags describe a lookup result.
type HitFlags uint8

// Lookup result flags.
const (
	HitFound   HitFlags = 1 << iota // the address lies in a window or LUT entry
	HitEnabled                      // and that mapping is active
	HitLUT                          // the mapping is a LUT entry (else a direct window)
)

// Hit is the result of a lookup. It is small enough for Go to return in
// registers, which keeps lookups fast.
type Hit struct {
	Flags      HitFlags
	Index      int32  // direct window (in Windows order) or LUT entry
	Egress     Egress // where the TLP goes
	Translated uint64 // the far-side address
	// Second is the multicast copy's egress and address (Kind EgressNone
	// when the window does not multicast).
	Second     Egress
	SecondAddr uint64
}

// Found reports whether the address lies in a window or LUT entry.
func (h Hit) Found() bool { return h.Flags&HitFound != 0 }

// Enabled reports whether the address is in an active mapping.
func (h Hit) Enabled() bool { return h.Flags&HitEnabled != 0 }

// LUT reports whether the mapping is a LUT entry.
func (h Hit) LUT() bool { return h.Flags&HitLUT != 0 }

// Lookup translates offset off in BAR bar into h. portDown reports, per
// port, whether it is down (index 0 port A, 1 port B); a window with a
// failover uses its second port while the first is down. It does not
// allocate. (It fills a caller's Hit rather than returning one: returning
// the struct costs several times the lookup itself.)
func (t *Tables) Lookup(bar int, off uint64, portDown [2]bool, h *Hit) {
	h.Second, h.SecondAddr = Egress{}, 0
	if t.lutSize > 0 && bar == t.lutBAR && off-t.lutOff < t.lutSize && off >= t.lutOff {
		i := int((off - t.lutOff) >> t.lutSh)
		e := &t.lut[i]
		f := HitFound | HitLUT
		if e.Enabled {
			f |= HitEnabled
		}
		h.Flags, h.Index, h.Egress = f, int32(i), e.Egress
		h.Translated = e.Translated + (off-t.lutOff)&(1<<t.lutSh-1)
		return
	}
	// The last window starting at or before the key (BAR in the top bits,
	// then the offset).
	base := Floor(t.keys, uint64(bar)<<61|off)
	if base < 0 {
		h.Flags, h.Index, h.Egress, h.Translated = 0, -1, Egress{}, 0
		return
	}
	w := &t.windows[base]
	if w.BAR != bar || off-w.Offset >= w.Size {
		h.Flags, h.Index, h.Egress, h.Translated = 0, -1, Egress{}, 0
		return
	}
	in := off - w.Offset
	f := HitFound
	if w.Enabled {
		f |= HitEnabled
	}
	h.Flags, h.Index, h.Egress, h.Translated = f, int32(base), w.Egress, w.Translated+in
	if w.Failover.Kind != EgressNone {
		switch {
		case w.Multicast:
			h.Second, h.SecondAddr = w.Failover, w.FailoverAt+in
		case portDown[portIndex(w.Egress)]:
			h.Egress, h.Translated = w.Failover, w.FailoverAt+in
		}
	}
}

// Floor returns the index of the last element of sorted keys that is at
// most k, or -1 if there is none. The search is branch-free (its
// comparisons compile to conditional moves), which keeps lookups over
// unpredictable addresses fast; the window table and the access-control
// ranges both use it.
func Floor(keys []uint64, k uint64) int {
	n := len(keys)
	if n == 0 {
		return -1
	}
	base := 0
	for n > 1 {
		half := n >> 1
		if keys[base+half] <= k {
			base += half
		}
		n -= half
	}
	if keys[base] > k {
		return -1
	}
	return base
}

func portIndex(e Egress) int {
	if e.Kind == EgressPortB {
		return 1
	}
	return 0
}

// Windows returns the checked direct windows, in lookup order.
func (t *Tables) Windows() []Window { return append([]Window(nil), t.windows...) }

// SetWindowEnabled turns direct window i (in Windows order) on or off.
func (t *Tables) SetWindowEnabled(i int, on bool) { t.windows[i].Enabled = on }

// SetLUTEntry changes LUT entry i at run time (as a driver reprogramming
// the table does). It returns an error if i is out of range or the
// translated base is misaligned.
func (t *Tables) SetLUTEntry(i int, e LUTEntry) error {
	if i < 0 || i >= len(t.lut) {
		return fmt.Errorf("lut entry %d: out of range (the LUT has %d entries)", i, len(t.lut))
	}
	if e.Translated&(1<<t.lutSh-1) != 0 {
		return fmt.Errorf("lut entry %d: translated base %#x is not aligned to %#x", i, e.Translated, uint64(1)<<t.lutSh)
	}
	t.lut[i] = e
	return nil
}

// ProxyID returns the proxy ID a local requester uses on the far side, and
// whether the requester is in the table. It does not allocate.
func (t *Tables) ProxyID(local tlp.ID) (tlp.ID, bool) {
	i := t.ridFast.Get(local)
	if i == 0 {
		return 0, false
	}
	return t.proxy + tlp.ID(i-1), true
}

// LocalID maps a proxy ID from a returning completion back to the local
// requester, and reports whether the proxy ID is one of the table's.
func (t *Tables) LocalID(proxy tlp.ID) (tlp.ID, bool) {
	i := int(proxy) - int(t.proxy)
	if i < 0 || i >= len(t.rid) {
		return 0, false
	}
	return t.rid[i], true
}

// LUTView is a read-only copy of the LUT window and its entries, for
// building the hardware table from the emulator's.
type LUTView struct {
	BAR       int
	Offset    uint64 // in the BAR, aligned to EntrySize
	EntrySize uint64 // a power of two
	Entries   []LUTEntry
}

// LUT returns a copy of the LUT window (no entries: there is none).
func (t *Tables) LUT() LUTView {
	if t.lutSize == 0 {
		return LUTView{}
	}
	return LUTView{BAR: t.lutBAR, Offset: t.lutOff, EntrySize: uint64(1) << t.lutSh, Entries: append([]LUTEntry(nil), t.lut...)}
}

// RID returns the requester-ID table: proxy ID base+i stands for
// locals[i] on the far side.
func (t *Tables) RID() (base tlp.ID, locals []tlp.ID) {
	return t.proxy, append([]tlp.ID(nil), t.rid...)
}

// KernelSlots is the number of kernel slots the tables were built for.
func (t *Tables) KernelSlots() int { return t.slots }

// Enables is the reset value of the window enable bits (the register map's WIN_EN_LO/HI): bit k set
// when ws[k] is enabled.
func Enables(ws []Window) uint64 {
	var v uint64
	for k, w := range ws {
		if w.Enabled {
			v |= 1 << k
		}
	}
	return v
}
