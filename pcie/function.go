package pcie

import (
	"fmt"
	"math/bits"

	"onic/tlp"
)

// BARKind is what a Base Address Register decodes.
type BARKind uint8

// BAR kinds.
const (
	BARNone  BARKind = iota // not implemented: reads as zero, ignores writes
	BARMem32                // 32-bit memory
	BARMem64                // 64-bit memory: takes this BAR and the next
	BARIO                   // I/O space
)

var barKindNames = [...]string{"none", "mem32", "mem64", "io"}

// String returns "none", "mem32", "mem64" or "io".
func (k BARKind) String() string {
	if int(k) < len(barKindNames) {
		return barKindNames[k]
	}
	return fmt.Sprintf("BARKind(%d)", k)
}

// BAR describes one Base Address Register.
type BAR struct {
	Kind         BARKind
	Prefetchable bool   // memory BARs only
	Size         uint64 // bytes, a power of two: at least 16 for memory, 4 to 256 for I/O
}

// Function is one PCIe function: its configuration space and what it was
// built from. A Function that is not Ready answers configuration requests
// with Configuration Request Retry Status (CRS), as a device still
// initialising does.
type Function struct {
	Name   string
	Space  *Space
	Bridge bool   // type 1 header
	BARs   [6]BAR // type 0: six; type 1: two
	Ready  bool
}

// Config is what the standard header of a function holds.
type Config struct {
	Name              string
	VendorID          uint16
	DeviceID          uint16
	Revision          uint8
	Class             uint32 // base class <<16 | subclass <<8 | programming interface
	SubsystemVendorID uint16
	SubsystemID       uint16
	InterruptPin      uint8 // 0 none, 1-4 INTA-INTD
	MultiFunction     bool
	BARs              [6]BAR // a bridge may use the first two
}

// Command and Status register bits software may write (§7.5.1.1).
const (
	cmdRW     = 0x0547 // I/O, memory, bus master, parity error response, SERR#, INTx disable
	statusW1C = 0xF900 // master data parity error, signaled/received target abort, received master abort, signaled system error, detected parity error
)

func (c *Config) check(bridge bool) error {
	if c.VendorID == 0xFFFF || c.VendorID == 0 {
		return fmt.Errorf("vendor_id %#04x is not a valid vendor ID", c.VendorID)
	}
	if c.Class > 0xFFFFFF {
		return fmt.Errorf("class %#x does not fit 24 bits", c.Class)
	}
	if c.InterruptPin > 4 {
		return fmt.Errorf("interrupt_pin %d: must be 0 (none) or 1-4 (INTA-INTD)", c.InterruptPin)
	}
	n := 6
	if bridge {
		n = 2
	}
	for i := 0; i < 6; i++ {
		b := c.BARs[i]
		if b.Kind == BARNone {
			continue
		}
		field := fmt.Sprintf("bars[%d]", i)
		if i >= n {
			return fmt.Errorf("%s: a type 1 header has only BARs 0 and 1", field)
		}
		if b.Size == 0 || bits.OnesCount64(b.Size) != 1 {
			return fmt.Errorf("%s: size %#x is not a power of two", field, b.Size)
		}
		switch b.Kind {
		case BARIO:
			if b.Size < 4 || b.Size > 256 {
				return fmt.Errorf("%s: I/O BAR size %d must be 4 to 256 bytes", field, b.Size)
			}
			if b.Prefetchable {
				return fmt.Errorf("%s: I/O BARs cannot be prefetchable", field)
			}
		case BARMem32:
			if b.Size < 16 || b.Size > 1<<31 {
				return fmt.Errorf("%s: 32-bit memory BAR size %#x must be 16 bytes to 2 GiB", field, b.Size)
			}
		case BARMem64:
			if b.Size < 16 || b.Size > 1<<63 {
				return fmt.Errorf("%s: 64-bit memory BAR size %#x must be at least 16 bytes", field, b.Size)
			}
			if i+1 >= n {
				return fmt.Errorf("%s: a 64-bit BAR needs the next BAR for its upper half", field)
			}
			if c.BARs[i+1].Kind != BARNone {
				return fmt.Errorf("bars[%d]: holds the upper half of 64-bit bars[%d] and must be none", i+1, i)
			}
		default:
			return fmt.Errorf("%s: unknown kind %d", field, b.Kind)
		}
	}
	return nil
}

// NewEndpoint builds a function with a type 0 header. Capabilities are
// added afterwards with the Add* methods.
func NewEndpoint(c Config) (*Function, error) {
	if err := c.check(false); err != nil {
		return nil, fmt.Errorf("%s: %v", c.Name, err)
	}
	f := &Function{Name: c.Name, Space: newSpace(), BARs: c.BARs, Ready: true}
	f.header(c, 0x00)
	s := f.Space
	for i := 0; i < 6; i++ {
		f.setupBAR(0x10+4*i, i, c.BARs)
	}
	s.Set16(0x2C, c.SubsystemVendorID)
	s.Set16(0x2E, c.SubsystemID)
	s.Set8(0x3D, c.InterruptPin)
	return f, nil
}

// NewBridge builds a function with a type 1 (PCI-to-PCI bridge) header, as
// root ports and switch ports have: bus numbers, and I/O (32-bit), memory
// and prefetchable memory (64-bit) windows.
func NewBridge(c Config) (*Function, error) {
	if c.Class == 0 {
		c.Class = 0x060400
	}
	if err := c.check(true); err != nil {
		return nil, fmt.Errorf("%s: %v", c.Name, err)
	}
	f := &Function{Name: c.Name, Space: newSpace(), Bridge: true, BARs: c.BARs, Ready: true}
	f.header(c, 0x01)
	s := f.Space
	for i := 0; i < 2; i++ {
		f.setupBAR(0x10+4*i, i, c.BARs)
	}
	s.SetAccess(0x18, 3, 0xFFFFFF, RW) // primary, secondary, subordinate bus numbers
	s.Set8(0x1C, 0x01)                 // I/O base: 32-bit I/O addressing
	s.Set8(0x1D, 0x01)
	s.SetAccess(0x1C, 2, 0xF0F0, RW)
	s.SetAccess(0x1E, 2, statusW1C, RW1C) // secondary status
	s.SetAccess(0x20, 4, 0xFFF0FFF0, RW)  // memory base and limit
	s.Set16(0x24, 0x0001)                 // prefetchable base and limit: 64-bit
	s.Set16(0x26, 0x0001)
	s.SetAccess(0x24, 4, 0xFFF0FFF0, RW)
	s.SetAccess(0x28, 8, 0xFFFFFFFF, RW) // prefetchable base and limit, upper 32 bits
	s.SetAccess(0x2C, 4, 0xFFFFFFFF, RW)
	s.SetAccess(0x30, 4, 0xFFFFFFFF, RW) // I/O base and limit, upper 16 bits
	s.Set8(0x3D, c.InterruptPin)
	s.SetAccess(0x3E, 2, 0x005F, RW) // bridge control
	return f, nil
}

func (f *Function) header(c Config, typ uint8) {
	s := f.Space
	s.Set16(0x00, c.VendorID)
	s.Set16(0x02, c.DeviceID)
	s.SetAccess(0x04, 2, cmdRW, RW)
	s.SetAccess(0x06, 2, statusW1C, RW1C)
	s.Set8(0x08, c.Revision)
	s.Set8(0x09, uint8(c.Class))
	s.Set8(0x0A, uint8(c.Class>>8))
	s.Set8(0x0B, uint8(c.Class>>16))
	s.SetAccess(0x0C, 1, 0xFF, RW) // cache line size
	if c.MultiFunction {
		typ |= 0x80
	}
	s.Set8(0x0E, typ)
	s.SetAccess(0x3C, 1, 0xFF, RW) // interrupt line
}

// setupBAR sets the read-only flag bits of BAR i and makes its address bits
// above the size writable, so writing all ones reads back the size mask.
func (f *Function) setupBAR(off, i int, bars [6]BAR) {
	s := f.Space
	b := bars[i]
	switch b.Kind {
	case BARMem32, BARMem64:
		flags := uint32(0)
		if b.Kind == BARMem64 {
			flags |= 0x4
		}
		if b.Prefetchable {
			flags |= 0x8
		}
		s.Set32(off, flags)
		s.SetAccess(off, 4, ^uint32(b.Size-1)&^0xF, RW)
		if b.Kind == BARMem64 {
			s.SetAccess(off+4, 4, ^uint32((b.Size-1)>>32), RW)
		}
	case BARIO:
		s.Set32(off, 0x1)
		s.SetAccess(off, 4, ^uint32(b.Size-1)&^0x3, RW)
	}
}

// BARAddress returns the address programmed into BAR i (for a 64-bit BAR,
// both halves), without the flag bits.
func (f *Function) BARAddress(i int) uint64 {
	s := f.Space
	off := 0x10 + 4*i
	switch f.BARs[i].Kind {
	case BARMem32:
		return uint64(s.Read32(off) &^ 0xF)
	case BARMem64:
		return uint64(s.Read32(off)&^0xF) | uint64(s.Read32(off+4))<<32
	case BARIO:
		return uint64(s.Read32(off) &^ 0x3)
	}
	return 0
}

// SizeBAR runs the BAR sizing protocol on BAR i as system software does:
// save the BAR, write all ones, read back the mask, restore. It returns the
// size decoded from the mask alone and leaves the BAR as it was.
func (f *Function) SizeBAR(i int) uint64 {
	s := f.Space
	off := 0x10 + 4*i
	probe := func(off int) uint32 {
		saved := s.Read32(off)
		s.Write(off, 4, 0xFFFFFFFF)
		m := s.Read32(off)
		s.Write(off, 4, saved)
		return m
	}
	lo := probe(off)
	if lo == 0 {
		return 0
	}
	var mask uint64
	switch {
	case lo&1 == 1: // I/O
		mask = uint64(lo&^0x3) | 0xFFFFFFFF_00000000
	case lo&0x6 == 0x4: // 64-bit memory: the upper half holds the rest of the mask
		mask = uint64(lo&^0xF) | uint64(probe(off+4))<<32
	default:
		mask = uint64(lo&^0xF) | 0xFFFFFFFF_00000000
	}
	return ^mask + 1
}

// HandleConfig answers a configuration request addressed to this function
// (self is its routing ID) and returns the completion: CplD with the
// register's DW for a read, Cpl for a write, CRS while the function is not
// ready, UR for a request that is not a configuration request.
func (f *Function) HandleConfig(req *tlp.TLP, self tlp.ID) tlp.TLP {
	k := req.Kind()
	if k != tlp.CfgRd0 && k != tlp.CfgWr0 && k != tlp.CfgRd1 && k != tlp.CfgWr1 {
		return Completion(req, self, tlp.StatusUR, nil)
	}
	if !f.Ready {
		return Completion(req, self, tlp.StatusCRS, nil)
	}
	reg := int(req.Register)
	if k == tlp.CfgWr0 || k == tlp.CfgWr1 {
		var d [4]byte
		copy(d[:], req.Data)
		f.Space.WriteDW(reg, d, req.FirstBE)
		return Completion(req, self, tlp.StatusSC, nil)
	}
	data := make([]byte, 4)
	copy(data, f.Space.b[reg:reg+4])
	return Completion(req, self, tlp.StatusSC, data)
}

// Completion builds the completion of a non-posted request that is not a
// memory read (I/O and configuration requests, and failed requests of any
// kind): Byte Count 4 and Lower Address 0 for I/O and configuration
// requests (§2.2.9), CplD when data is given, Cpl otherwise.
func Completion(req *tlp.TLP, completer tlp.ID, status tlp.Status, data []byte) tlp.TLP {
	kind := tlp.Cpl
	if data != nil {
		kind = tlp.CplD
	}
	if req.Kind() == tlp.MRdLk {
		kind += tlp.CplLk - tlp.Cpl // CplLk or CplDLk
	}
	f, typ, _ := tlp.FmtType(kind, false, 0)
	c := tlp.TLP{Fmt: f, Type: typ, TC: req.TC, Attr: req.Attr, Tag: req.Tag,
		CompleterID: completer, RequesterID: req.RequesterID, Status: status, ByteCount: 4, Data: data}
	if data != nil {
		c.Length = uint16(len(data) / 4)
	}
	if k := req.Kind(); (k == tlp.MRd || k == tlp.MRdLk) && status != tlp.StatusSC {
		// A failed memory read reports the bytes it would have returned.
		bc, la := tlp.ReadByteCount(req.Address, req.Length, req.FirstBE, req.LastBE)
		c.ByteCount, c.LowerAddress = uint16(bc), la
	}
	return c
}

// StandIn returns a new function that presents itself to software exactly
// as f does — IDs, class, BAR sizes and flags, capabilities, register
// access — but with its BARs unassigned and decoding off, as after reset.
// An O-NIC shows such a function to its host for a device it borrows
// through an optical port (SmartIO's device lending); the host enumerates
// it like any other.
func (f *Function) StandIn(name string) *Function {
	s := *f.Space
	s.capNames = append([]CapInfo(nil), f.Space.capNames...)
	c := &Function{Name: name, Space: &s, Bridge: f.Bridge, BARs: f.BARs, Ready: true}
	for i := 0; i < 6; i++ {
		off := 0x10 + 4*i
		if i > 0 && f.BARs[i-1].Kind == BARMem64 {
			s.Set32(off, 0) // upper half of a 64-bit BAR
			continue
		}
		s.b[off] &= 0xF // keep the flag bits, clear the address
		s.b[off+1], s.b[off+2], s.b[off+3] = 0, 0, 0
	}
	s.Set16(0x04, 0)
	return c
}

// CapOffset returns the offset of the first capability with the given ID
// (an extended capability ID when extended is set), or 0.
func (f *Function) CapOffset(id uint16, extended bool) int { return f.capOffset(id, extended) }

// ReadCompletions are the successful completions a completer that splits
// at MPS-aligned addresses sends for memory read req with data (the
// bytes of req's whole DWs, as Completion takes them): each carries at
// most mps bytes, each but the last ends at an MPS-aligned address (a
// Read Completion Boundary, PCIe §2.3.1.1), the first with the Byte
// Count and Lower Address the byte enables give (§2.2.9) and each later
// one with the bytes still owed and its first DW's address. The O-NIC's
// register block answers reads this way.
func ReadCompletions(req *tlp.TLP, completer tlp.ID, data []byte, mps int) []tlp.TLP {
	bc, la := tlp.ReadByteCount(req.Address, req.Length, req.FirstBE, req.LastBE)
	var out []tlp.TLP
	addr := req.Address &^ 3
	for off := 0; off < len(data); {
		n := min(len(data)-off, mps-int((addr+uint64(off))%uint64(mps)))
		c := Completion(req, completer, tlp.StatusSC, data[off:off+n])
		c.ByteCount = uint16(bc & 0xFFF)
		c.LowerAddress = la
		if off > 0 {
			c.LowerAddress = uint8((addr + uint64(off)) & 0x7F)
		}
		out = append(out, c)
		carried := n
		if off == 0 {
			carried -= int(la & 3)
		}
		bc -= carried
		off += n
	}
	return out
}

// MemorySizes returns the sizes of f's memory BARs by index (0 where a
// BAR is not a memory BAR): what the manager's tables are built against.
func (f *Function) MemorySizes() [6]uint64 {
	var s [6]uint64
	for i, b := range f.BARs {
		if b.Kind == BARMem32 || b.Kind == BARMem64 {
			s[i] = b.Size
		}
	}
	return s
}
