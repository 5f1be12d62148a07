package pcie

import (
	"fmt"
	"sort"

	"onic/tlp"
)

// Hierarchy is a PCIe hierarchy under one root complex.
type Hierarchy struct {
	Name   string
	Root   *Node
	MMIO32 Range
	MMIO64 Range
	IO     Range
	// MPS is the Max_Payload_Size chosen for each root port's subtree
	// during enumeration, by root port name.
	MPS map[string]int
}

// DefaultApertures returns the default address apertures of a root complex:
// 32-bit MMIO 0xc0000000-0xfebfffff (below the local APIC and firmware), a
// 64-bit window at 256 GiB-512 GiB, and I/O ports 0x1000-0xffff.
func DefaultApertures() TopologyConfig {
	return TopologyConfig{
		MMIO32: Range{0xC000_0000, 0xFEBF_FFFF},
		MMIO64: Range{0x40_0000_0000, 0x7F_FFFF_FFFF},
		IO:     Range{0x1000, 0xFFFF},
	}
}

// Resource kinds: which bridge window a BAR is assigned from.
type resKind int

const (
	resIO resKind = iota
	resMem
	resPref
	numRes
)

var resNames = [numRes]string{"I/O", "memory", "prefetchable memory"}

// Window granularity of bridges (PCI-to-PCI Bridge Architecture 1.2):
// memory windows in 1 MiB units, I/O in 4 KiB.
var resGranule = [numRes]uint64{4 << 10, 1 << 20, 1 << 20}

// item is one thing placed in a window: a BAR or a child bridge's window.
type item struct {
	size, align uint64
	fn          *Function
	bar         int
	child       *Node
}

// win is the window a bridge (or the root complex) needs for one kind.
type win struct {
	size, align uint64
	items       []item
	base        uint64
}

// layout computes, bottom-up, the windows bridge n needs: its children's
// BARs and their own windows, largest alignment first.
func layout(n *Node, wins map[*Node]*[numRes]win) {
	w := &[numRes]win{}
	wins[n] = w
	for _, c := range n.Children {
		for _, f := range c.Funcs {
			nb := 6
			if f.Bridge {
				nb = 2
			}
			for i := 0; i < nb; i++ {
				// As system software does: size the BAR through config
				// writes and classify it by its flag bits; a 64-bit BAR
				// takes the next register as its upper half.
				flags := f.Space.Read32(0x10+4*i) & 0xF
				size := f.SizeBAR(i)
				is64 := flags&1 == 0 && flags&6 == 4
				if size != 0 {
					k := resMem
					switch {
					case flags&1 == 1:
						k = resIO
					case is64 && flags&8 != 0:
						k = resPref
					}
					w[k].items = append(w[k].items, item{size: size, align: size, fn: f, bar: i})
				}
				if is64 {
					i++
				}
			}
		}
		if c.Bridge() != nil {
			layout(c, wins)
			cw := wins[c]
			for k := resKind(0); k < numRes; k++ {
				if cw[k].size > 0 {
					w[k].items = append(w[k].items, item{size: cw[k].size, align: cw[k].align, child: c})
				}
			}
		}
	}
	for k := resKind(0); k < numRes; k++ {
		pack(&w[k], resGranule[k])
	}
}

// pack orders a window's items by alignment (largest first, stable) and
// computes the window's size, rounded to the granule, and alignment.
func pack(w *win, granule uint64) {
	if len(w.items) == 0 {
		return
	}
	sort.SliceStable(w.items, func(i, j int) bool { return w.items[i].align > w.items[j].align })
	var off uint64
	w.align = granule
	for _, it := range w.items {
		off = alignUp(off, it.align) + it.size
		w.align = max(w.align, it.align)
	}
	w.size = alignUp(off, granule)
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// Enumerate does what system software does at boot: numbers the buses
// depth first, sizes every BAR, packs the BARs into bridge windows and
// programs them (all through configuration writes), enables memory, I/O
// and bus mastering, and negotiates MPS for each root port's subtree down
// to the smallest any function in it supports. It fails when the
// apertures or the 256 bus numbers are too small.
func (h *Hierarchy) Enumerate() error {
	last := 0
	for _, rp := range h.Root.Children {
		if err := number(rp, 0, &last); err != nil {
			return err
		}
	}
	wins := map[*Node]*[numRes]win{}
	layout(h.Root, wins)
	rw := wins[h.Root]
	apertures := [numRes]Range{resIO: h.IO, resMem: h.MMIO32, resPref: h.MMIO64}
	fields := [numRes]string{"io", "mmio32", "mmio64"}
	for k := resKind(0); k < numRes; k++ {
		ap := apertures[k]
		base := alignUp(ap.Base, max(rw[k].align, 1))
		if rw[k].size > 0 && (base+rw[k].size-1 > ap.Limit || base < ap.Base) {
			return fmt.Errorf("%s: the hierarchy needs %#x bytes of %s aligned to %#x; the aperture %#x-%#x is too small",
				fields[k], rw[k].size, resNames[k], rw[k].align, ap.Base, ap.Limit)
		}
		rw[k].base = base
	}
	assign(h.Root, wins)
	// Functions integrated in the root complex have no link above them:
	// they run at the largest MPS they support.
	for _, f := range h.Root.Funcs {
		if off := f.capOffset(CapPCIe, false); off != 0 {
			setMPS(f, off, 128<<(f.Space.Read32(off+4)&7))
		}
	}
	h.MPS = map[string]int{}
	for _, rp := range h.Root.Children {
		mps := 4096
		walk(rp, func(n *Node) {
			for _, f := range n.Funcs {
				if off := f.capOffset(CapPCIe, false); off != 0 {
					mps = min(mps, 128<<(f.Space.Read32(off+4)&7))
				}
			}
		})
		walk(rp, func(n *Node) {
			for _, f := range n.Funcs {
				if off := f.capOffset(CapPCIe, false); off != 0 {
					setMPS(f, off, mps)
				}
			}
		})
		h.MPS[rp.Name] = mps
	}
	return nil
}

// setMPS writes the MPS field of Device Control (PCI Express capability at
// off) through a configuration write.
func setMPS(f *Function, off, mps int) {
	enc, _ := encodeSize(mps)
	ctl := uint32(f.Space.Read16(off + 8))
	f.Space.Write(off+8, 2, ctl&^0x00E0|uint32(enc)<<5)
}

// number assigns bus numbers below bridge n, which sits on bus bus.
func number(n *Node, bus uint8, last *int) error {
	n.Bus = bus
	br := n.Bridge()
	if br == nil {
		return nil
	}
	if *last >= 255 {
		return fmt.Errorf("%s: out of bus numbers (256)", n.Name)
	}
	*last++
	sec := uint8(*last)
	br.Space.Write(0x18, 3, uint32(bus)|uint32(sec)<<8|0xFF<<16) // open subordinate while scanning, as Linux does
	for _, c := range n.Children {
		if err := number(c, sec, last); err != nil {
			return err
		}
	}
	br.Space.Write(0x1A, 1, uint32(*last))
	return nil
}

// assign places, top-down, each item of n's windows at its address,
// programming BARs and child bridge windows.
func assign(n *Node, wins map[*Node]*[numRes]win) {
	w := wins[n]
	for k := resKind(0); k < numRes; k++ {
		cur := w[k].base
		for _, it := range w[k].items {
			cur = alignUp(cur, it.align)
			if it.child != nil {
				wins[it.child][k].base = cur
			} else {
				programBAR(it.fn, it.bar, cur)
			}
			cur += it.size
		}
	}
	for _, c := range n.Children {
		for _, f := range c.Funcs {
			cmd := uint32(0x0006) // memory space, bus master
			if hasIO(f) {
				cmd |= 0x0001
			}
			f.Space.Write(0x04, 2, cmd)
		}
		if c.Bridge() != nil {
			programWindows(c.Bridge(), wins[c])
			assign(c, wins)
		}
	}
}

func hasIO(f *Function) bool {
	for _, b := range f.BARs {
		if b.Kind == BARIO {
			return true
		}
	}
	return f.Bridge
}

func programBAR(f *Function, i int, addr uint64) {
	off := 0x10 + 4*i
	flags := f.Space.Read32(off) & 0xF
	f.Space.Write(off, 4, uint32(addr))
	if flags&1 == 0 && flags&6 == 4 {
		f.Space.Write(off+4, 4, uint32(addr>>32))
	}
}

// programWindows writes a bridge's I/O, memory and prefetchable windows;
// an empty window is written with base above limit, which closes it.
func programWindows(br *Function, w *[numRes]win) {
	s := br.Space
	lim := func(k resKind) (uint64, uint64, bool) {
		if w[k].size == 0 {
			return 0, 0, false
		}
		return w[k].base, w[k].base + w[k].size - 1, true
	}
	if b, l, ok := lim(resIO); ok {
		s.Write(0x1C, 1, uint32(b>>8)&0xF0)
		s.Write(0x1D, 1, uint32(l>>8)&0xF0)
		s.Write(0x30, 2, uint32(b>>16))
		s.Write(0x32, 2, uint32(l>>16))
	} else {
		s.Write(0x1C, 1, 0xF0)
		s.Write(0x1D, 1, 0x00)
	}
	if b, l, ok := lim(resMem); ok {
		s.Write(0x20, 2, uint32(b>>16))
		s.Write(0x22, 2, uint32(l>>16))
	} else {
		s.Write(0x20, 2, 0xFFF0)
		s.Write(0x22, 2, 0x0000)
	}
	if b, l, ok := lim(resPref); ok {
		s.Write(0x24, 2, uint32(b>>16))
		s.Write(0x26, 2, uint32(l>>16))
		s.Write(0x28, 4, uint32(b>>32))
		s.Write(0x2C, 4, uint32(l>>32))
	} else {
		s.Write(0x24, 2, 0xFFF0)
		s.Write(0x26, 2, 0x0000)
		s.Write(0x28, 4, 0xFFFFFFFF)
		s.Write(0x2C, 4, 0)
	}
}

// Windows returns the I/O, memory and prefetchable windows a bridge
// function forwards, decoded from its configuration registers (empty
// windows have Limit < Base).
func (f *Function) Windows() (io, mem, pref Range) {
	s := f.Space
	io = Range{uint64(s.Read8(0x1C)&0xF0)<<8 | uint64(s.Read16(0x30))<<16,
		uint64(s.Read8(0x1D)&0xF0)<<8 | 0xFFF | uint64(s.Read16(0x32))<<16}
	mem = Range{uint64(s.Read16(0x20)&0xFFF0) << 16, uint64(s.Read16(0x22)&0xFFF0)<<16 | 0xFFFFF}
	pref = Range{uint64(s.Read16(0x24)&0xFFF0)<<16 | uint64(s.Read32(0x28))<<32,
		uint64(s.Read16(0x26)&0xFFF0)<<16 | 0xFFFFF | uint64(s.Read32(0x2C))<<32}
	return io, mem, pref
}

// Config issues configuration request req from the root complex and
// returns the completion, as the host sees it: routed by ID through the
// enumerated hierarchy, answered by the target function (CplD, Cpl, or CRS
// while it is not ready), or completed with UR by the last bridge on the
// way when no function exists at that ID.
func (h *Hierarchy) Config(req *tlp.TLP) (tlp.TLP, error) {
	if c := req.Kind().Class(); c != tlp.ClassConfig {
		return tlp.TLP{}, fmt.Errorf("config: %s is not a configuration request", req.Kind())
	}
	r, err := h.Route(h.Root, req)
	if err != nil {
		return tlp.TLP{}, err
	}
	if r.Status != tlp.StatusSC || r.Target == nil || r.Host {
		last := r.Path[len(r.Path)-1]
		if r.Host && r.Target == h.Root {
			return h.Root.Funcs[0].HandleConfig(req, h.Root.ID(0)), nil
		}
		return Completion(req, last.ID(0), tlp.StatusUR, nil), nil
	}
	return r.Target.Funcs[r.Func].HandleConfig(req, r.Target.ID(r.Func)), nil
}

// BusRange returns a bridge's secondary and subordinate bus numbers.
func (f *Function) BusRange() (sec, sub uint8) { return f.Space.Read8(0x19), f.Space.Read8(0x1A) }

// walk calls fn for n and every node below it, depth first.
func walk(n *Node, fn func(*Node)) {
	fn(n)
	for _, c := range n.Children {
		walk(c, fn)
	}
}

// Walk calls fn for every node of the hierarchy, depth first, root
// complex first.
func (h *Hierarchy) Walk(fn func(*Node)) { walk(h.Root, fn) }

// Find returns the node with the given name, or nil.
func (h *Hierarchy) Find(name string) *Node {
	var found *Node
	h.Walk(func(n *Node) {
		if n.Name == name && found == nil {
			found = n
		}
	})
	return found
}

// FindID returns the node and function number holding routing ID id.
func (h *Hierarchy) FindID(id uint16) (*Node, int) {
	var found *Node
	fn := -1
	h.Walk(func(n *Node) {
		for i := range n.Funcs {
			if uint16(n.ID(i)) == id && found == nil {
				found, fn = n, i
			}
		}
	})
	return found, fn
}
