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
	return &Loan{StandIn: standIn, Device: device, DeviceID: deviceID, Proxy: proxy, MSI: msi}, nil
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
			if host-l.MSI.HostBase >= l.MSI.Size || host < l.MSI.HostBase {
				return cpl, nil, fmt.Errorf("loan %s: MSI address %#x is outside the MSI window %#x-%#x", l.StandIn.Name, host, l.MSI.HostBase, l.MSI.HostBase+l.MSI.Size-1)
			}
			remote := l.MSI.RemoteBase + (host - l.MSI.HostBase)
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
