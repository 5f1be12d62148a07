package manager

import (
	"encoding/binary"
	"fmt"

	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/ntb"
	"onic/tlp"
)

// MSIWindow maps the borrowing host's interrupt region into the lender's
// address space.
type MSIWindow struct {
	// HostBase and Size: the region of MSI addresses the borrowing host
	// programs (on x86, 0xfee00000, 1 MiB).
	HostBase, Size uint64
	// RemoteBase is where that region appears in the lender's domain: a
	// window on the lender's O-NIC that forwards to HostBase through the
	// port towards the borrower.
	RemoteBase uint64
}

// Check says whether an O-NIC can carry the window: a non-zero size,
// DW-aligned bases, and on each side a region inside one 4 GiB-aligned
// block, so that each address DW of an MSI-X entry maps on its own
// (Rewrite). x86's interrupt region (0xfee00000, 1 MiB) and a window in
// one BAR of the lender's O-NIC are.
func (w MSIWindow) Check() error {
	switch {
	case w.Size == 0 || w.Size > 1<<32:
		return fmt.Errorf("MSI window: size %#x must be 1 byte to 4 GiB", w.Size)
	case w.HostBase%4 != 0 || w.RemoteBase%4 != 0:
		return fmt.Errorf("MSI window: bases %#x and %#x must be DW-aligned", w.HostBase, w.RemoteBase)
	case w.HostBase>>32 != (w.HostBase+w.Size-1)>>32:
		return fmt.Errorf("MSI window: host region %#x+%#x crosses a 4 GiB boundary", w.HostBase, w.Size)
	case w.RemoteBase>>32 != (w.RemoteBase+w.Size-1)>>32:
		return fmt.Errorf("MSI window: remote region %#x+%#x crosses a 4 GiB boundary", w.RemoteBase, w.Size)
	}
	return nil
}

// Rewrite maps DW number dw (0 to 3) of an MSI-X table entry, as the host
// writes it, to what the lent device must hold: the message address's
// low DW (0) and high DW (1) through the window, each on its own (Check);
// the data and vector control (2, 3) as they are. ok is false for an
// address DW outside the window: the device would interrupt to an address
// nothing on the lender's side leads back from.
func (w MSIWindow) Rewrite(dw int, v uint32) (out uint32, ok bool) {
	switch dw {
	case 0:
		rel := v - uint32(w.HostBase)
		if uint64(rel) >= w.Size {
			return v, false
		}
		return uint32(w.RemoteBase) + rel, true
	case 1:
		if v != uint32(w.HostBase>>32) {
			return v, false
		}
		return uint32(w.RemoteBase >> 32), true
	}
	return v, true
}

// StandIn is a function the O-NIC presents to its host for a lent device
// behind an optical port (SmartIO's device lending, pcie/lend): each of
// its BARs is a window onto the device's BAR at the same offset.
type StandIn struct {
	// Function is what the host enumerates: the device's IDs, class,
	// BARs and capabilities (pcie.Function.StandIn).
	Function *pcie.Function
	// RemoteBARs are where the lender's enumeration put the device's
	// BARs, each aligned to its size.
	RemoteBARs [6]uint64
	// Port is the optical port towards the lender.
	Port ntb.Egress
	// MSI, when set, is the loan's MSI window: the message addresses the
	// host writes into the stand-in's MSI-X table (in the device's BAR)
	// leave mapped through it (MSIWindow.Rewrite), so the device's
	// interrupt writes come back to the host's interrupt region. It
	// needs the function's MSI-X capability.
	MSI *MSIWindow
}

// DWRewrite replaces the first payload DWs of a TLP: DW i becomes DW[i]
// where bit i of Mask is set.
type DWRewrite struct {
	Mask uint8
	DW   [2]uint32
}

// RewritePayload returns the payload a forwarded TLP leaves with: p
// itself, or for a write into a lent device's MSI-X table (Rewrite) a
// copy with the message address mapped through the loan's MSI window.
func (o *Outcome) RewritePayload(p []byte) []byte {
	if o.Rewrite.Mask == 0 {
		return p
	}
	q := append([]byte(nil), p...)
	for i, v := range o.Rewrite.DW {
		if o.Rewrite.Mask>>i&1 != 0 && 4*i+4 <= len(q) {
			binary.LittleEndian.PutUint32(q[4*i:], v)
		}
	}
	return q
}

// standIn is a registered StandIn and where the host put its BARs.
type standIn struct {
	fn     *pcie.Function
	bars   [6]bar
	remote [6]uint64
	port   ntb.Egress
	msi    *MSIWindow
	// The MSI-X table: its BAR (-1: none) and byte range in it.
	msixBAR          int
	msixOff, msixEnd uint64
}

// AddStandIn registers s. Call SyncBARs after the host has enumerated
// s.Function.
func (m *Manager) AddStandIn(s StandIn) error {
	f := s.Function
	if !s.Port.IsPort() {
		return fmt.Errorf("stand-in %s: egress %s is not an optical port", f.Name, s.Port)
	}
	for i, b := range f.BARs {
		if (b.Kind == pcie.BARMem32 || b.Kind == pcie.BARMem64) && s.RemoteBARs[i]%b.Size != 0 {
			return fmt.Errorf("stand-in %s: remote BAR%d at %#x is not aligned to its size %#x", f.Name, i, s.RemoteBARs[i], b.Size)
		}
	}
	sd := standIn{fn: f, remote: s.RemoteBARs, port: s.Port, msixBAR: -1}
	if s.MSI != nil {
		if err := s.MSI.Check(); err != nil {
			return fmt.Errorf("stand-in %s: %v", f.Name, err)
		}
		if sd.msixBAR, sd.msixOff, sd.msixEnd = f.MSIXTable(); sd.msixBAR < 0 {
			return fmt.Errorf("stand-in %s: an MSI window needs the device's MSI-X capability, and it has none", f.Name)
		}
		w := *s.MSI
		sd.msi = &w
	}
	m.standIns = append(m.standIns, sd)
	m.SyncBARs()
	return nil
}

// processStandIn handles an access to a stand-in's BAR, or fails it as
// not for us.
func (m *Manager) processStandIn(t *tlp.TLP, in Ingress, op acl.Op, size uint64, o *Outcome) {
	for si := range m.standIns {
		sd := &m.standIns[si]
		for i := range sd.bars {
			b := &sd.bars[i]
			if !b.present || t.Address < b.base || t.Address-b.base >= b.size {
				continue
			}
			if m.PortDown[portIdx(sd.port)] {
				m.fail(t, PortDown, tlp.StatusUR, o)
				return
			}
			addr := sd.remote[i] + (t.Address - b.base)
			if v := m.access.Check(t.RequesterID, in, addr, size, op, sd.port); v.Rule != acl.Allowed {
				m.deny(t, in, addr, v.Rule, o)
				return
			}
			p, ok := m.tables.ProxyID(t.RequesterID)
			if !ok {
				m.fail(t, NoProxyID, tlp.StatusUR, o)
				return
			}
			var rw DWRewrite
			if sd.msi != nil && i == sd.msixBAR && t.Kind() == tlp.MWr {
				if rw, ok = sd.rewriteMSIX(t.Address-b.base, t); !ok {
					m.fail(t, MSIXAddress, tlp.StatusUR, o)
					return
				}
			}
			m.forward(o, sd.port, addr, p)
			o.Rewrite = rw
			return
		}
	}
	m.fail(t, NotForUs, tlp.StatusUR, o)
}

// rewriteMSIX works out how memory write t, at offset off of the BAR
// holding the stand-in's MSI-X table, leaves: a write that touches the
// table must lie within one entry, and the address DWs it writes must be
// whole and in the MSI window (ok false otherwise). The address DWs can
// only be the first two of the payload.
func (sd *standIn) rewriteMSIX(off uint64, t *tlp.TLP) (rw DWRewrite, ok bool) {
	n := 4 * uint64(t.Length)
	if t.Length == 0 { // (1,024 DWs)
		n = 4096
	}
	if off >= sd.msixEnd || off+n <= sd.msixOff {
		return rw, true // not the table
	}
	if off < sd.msixOff || (off-sd.msixOff)%16+n > 16 || len(t.Data) < int(n) {
		return rw, false
	}
	k := int((off - sd.msixOff) % 16 / 4) // the entry DW the payload starts at
	for i := 0; k+i < 2 && uint64(4*i) < n; i++ {
		be := uint8(0xF)
		switch {
		case i == 0:
			be = t.FirstBE
		case uint64(4*i+4) == n:
			be = t.LastBE
		}
		if be != 0xF {
			return rw, false
		}
		v, ok := sd.msi.Rewrite(k+i, binary.LittleEndian.Uint32(t.Data[4*i:]))
		if !ok {
			return rw, false
		}
		rw.Mask |= 1 << i
		rw.DW[i] = v
	}
	return rw, true
}
