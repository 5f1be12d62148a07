// Package lend implements SmartIO-style device lending across O-NICs: a
// lender's device is presented to a borrowing host as a stand-in function
// of the borrower's O-NIC (pcie.Function.StandIn). The host enumerates and
// drives the stand-in as if it were the device:
//
//   - its BARs are windows onto the device's BARs (the borrower's manager
//     translates them, see manager.AddStandIn);
//   - its configuration writes are forwarded to the device, except BAR
//     registers, which belong to each side's own enumeration;
//   - the MSI address the host programs is rewritten through an MSI
//     window, so the device's interrupt write, issued in the lender's
//     address space, comes back through the O-NICs to the host's
//     interrupt address;
//   - the device's DMA reaches the borrowing host through a DMA window on
//     the lender's O-NIC.
package lend

import (
	"encoding/binary"
	"fmt"

	"onic/pcie"
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

// Loan ties a stand-in function to the lent device.
type Loan struct {
	StandIn  *pcie.Function
	Device   *pcie.Function // the lent function, in the lender's hierarchy
	DeviceID tlp.ID         // its routing ID there
	// Proxy is the requester ID forwarded configuration requests carry in
	// the lender's domain (the lender's O-NIC).
	Proxy tlp.ID
	MSI   MSIWindow

	// MSI-X: where the stand-in's vector table is, and the addresses the
	// host has programmed into it (a shadow, since entries are written a
	// DW at a time).
	msixBAR    int
	msixOff    uint64
	msixShadow [][2]uint32
}

// New checks that the stand-in presents the device and the MSI window is
// usable, and returns the loan.
func New(standIn, device *pcie.Function, deviceID, proxy tlp.ID, msi MSIWindow) (*Loan, error) {
	sa, sb := standIn.Space.Read32(0), device.Space.Read32(0)
	if sa != sb {
		return nil, fmt.Errorf("loan %s: stand-in IDs %08x do not match the device's %08x", standIn.Name, sa, sb)
	}
	if msi.Size == 0 || msi.HostBase%4 != 0 || msi.RemoteBase%4 != 0 {
		return nil, fmt.Errorf("loan %s: MSI window needs a non-zero size and DW-aligned bases", standIn.Name)
	}
	l := &Loan{StandIn: standIn, Device: device, DeviceID: deviceID, Proxy: proxy, MSI: msi, msixBAR: -1}
	if off := standIn.CapOffset(pcie.CapMSIX, false); off != 0 {
		n := int(standIn.Space.Read16(off+2)&0x7FF) + 1
		tbl := standIn.Space.Read32(off + 4)
		l.msixBAR, l.msixOff = int(tbl&7), uint64(tbl&^7)
		l.msixShadow = make([][2]uint32, n)
	}
	return l, nil
}

// remote maps a host MSI address into the lender's domain.
func (l *Loan) remote(host uint64) (uint64, error) {
	if host < l.MSI.HostBase || host-l.MSI.HostBase >= l.MSI.Size {
		return 0, fmt.Errorf("loan %s: MSI address %#x is outside the MSI window %#x-%#x", l.StandIn.Name, host, l.MSI.HostBase, l.MSI.HostBase+l.MSI.Size-1)
	}
	return l.MSI.RemoteBase + (host - l.MSI.HostBase), nil
}

// RewriteMSIX rewrites, in place, the payload of a memory write at offset
// off of the stand-in's BAR bar before it is forwarded to the device:
// message addresses written into the MSI-X table are mapped through the
// MSI window, like MSI's. Writes elsewhere are left alone. An address
// outside the window is an error, and data is then left unchanged.
func (l *Loan) RewriteMSIX(bar int, off uint64, data []byte) error {
	if bar != l.msixBAR || len(data)%4 != 0 || off%4 != 0 {
		return nil
	}
	end := l.msixOff + uint64(len(l.msixShadow))*16
	if off+uint64(len(data)) <= l.msixOff || off >= end {
		return nil
	}
	// Apply the write to the shadow, then rewrite the address DWs it holds.
	type fix struct {
		pos   int // byte position in data
		entry int
		hi    bool
	}
	var fixes []fix
	for p := 0; p < len(data); p += 4 {
		a := off + uint64(p)
		if a < l.msixOff || a >= end {
			continue
		}
		e, w := int((a-l.msixOff)/16), int((a-l.msixOff)%16/4)
		if w < 2 {
			l.msixShadow[e][w] = binary.LittleEndian.Uint32(data[p:])
			fixes = append(fixes, fix{p, e, w == 1})
		}
	}
	for _, f := range fixes {
		host := uint64(l.msixShadow[f.entry][0]) | uint64(l.msixShadow[f.entry][1])<<32
		r, err := l.remote(host)
		if err != nil {
			return err
		}
		dw := uint32(r)
		if f.hi {
			dw = uint32(r >> 32)
		}
		binary.LittleEndian.PutUint32(data[f.pos:], dw)
	}
	return nil
}

// DeviceAddress maps an address in one of the stand-in's BARs, as the
// borrowing host sees it, to the same place in the lent device's BAR in
// the lender's domain. A driver gives a device lent by the same lender
// this address, so peer-to-peer traffic between the two stays inside the
// lender's hierarchy and takes the shortest path there, never crossing
// the optical ports.
func (l *Loan) DeviceAddress(hostAddr uint64) (uint64, bool) {
	for i, b := range l.StandIn.BARs {
		if b.Kind != pcie.BARMem32 && b.Kind != pcie.BARMem64 {
			continue
		}
		base := l.StandIn.BARAddress(i)
		if hostAddr >= base && hostAddr-base < b.Size {
			return l.Device.BARAddress(i) + (hostAddr - base), true
		}
	}
	return 0, false
}

// Config answers a configuration request the host sent to the stand-in
// (self is the stand-in's routing ID). It returns the completion and, for
// a write that must reach the device, the configuration write to forward
// through the O-NICs (nil otherwise). An MSI address outside the MSI
// window cannot be carried: the write still completes to the host, and the
// error says why the device was not updated.
func (l *Loan) Config(req *tlp.TLP, self tlp.ID) (cpl tlp.TLP, fwd *tlp.TLP, err error) {
	cpl = l.StandIn.HandleConfig(req, self)
	k := req.Kind()
	if cpl.Status != tlp.StatusSC || (k != tlp.CfgWr0 && k != tlp.CfgWr1) {
		return cpl, nil, nil
	}
	reg := int(req.Register)
	if reg >= 0x10 && reg < 0x28 || reg == 0x30 {
		return cpl, nil, nil // BARs and the ROM BAR stay local
	}
	data := append([]byte(nil), req.Data...)
	if msi := l.StandIn.CapOffset(pcie.CapMSI, false); msi != 0 {
		is64 := l.StandIn.Space.Read16(msi+2)&(1<<7) != 0
		if reg == msi+4 || is64 && reg == msi+8 {
			host := uint64(l.StandIn.Space.Read32(msi + 4))
			if is64 {
				host |= uint64(l.StandIn.Space.Read32(msi+8)) << 32
			}
			remote, err := l.remote(host)
			if err != nil {
				return cpl, nil, err
			}
			dw := uint32(remote)
			if reg == msi+8 {
				dw = uint32(remote >> 32)
			}
			binary.LittleEndian.PutUint32(data, dw)
		}
	}
	f, typ, _ := tlp.FmtType(tlp.CfgWr0, false, 0)
	fwd = &tlp.TLP{Fmt: f, Type: typ, Length: 1, RequesterID: l.Proxy, Tag: req.Tag,
		CompleterID: l.DeviceID, Register: req.Register, FirstBE: req.FirstBE, Data: data}
	return cpl, fwd, nil
}
