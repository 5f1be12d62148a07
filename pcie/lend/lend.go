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
//     interrupt address (MSI-X table entries on their way through the
//     borrower's O-NIC: MSIWindow.Rewrite);
//   - the device's DMA reaches the borrowing host through a DMA window on
//     the lender's O-NIC.
package lend

import (
	"encoding/binary"
	"fmt"

	"onic/pcie"
	"onic/pcie/manager"
	"onic/tlp"
)

// MSIWindow maps the borrowing host's interrupt region into the lender's
// address space (the borrower's O-NIC rewrites MSI-X table entries
// through it: pcie/manager.StandIn).
type MSIWindow = manager.MSIWindow

// Loan ties a stand-in function to the lent device.
type Loan struct {
	StandIn  *pcie.Function
	Device   *pcie.Function // the lent function, in the lender's hierarchy
	DeviceID tlp.ID         // its routing ID there
	// Proxy is the requester ID forwarded configuration requests carry in
	// the lender's domain (the lender's O-NIC).
	Proxy tlp.ID
	MSI   MSIWindow

	// MSI-X: where the stand-in's vector table is (BAR -1: none).
	msixBAR          int
	msixOff, msixEnd uint64
}

// New checks that the stand-in presents the device and the MSI window is
// usable, and returns the loan.
func New(standIn, device *pcie.Function, deviceID, proxy tlp.ID, msi MSIWindow) (*Loan, error) {
	sa, sb := standIn.Space.Read32(0), device.Space.Read32(0)
	if sa != sb {
		return nil, fmt.Errorf("loan %s: stand-in IDs %08x do not match the device's %08x", standIn.Name, sa, sb)
	}
	if err := msi.Check(); err != nil {
		return nil, fmt.Errorf("loan %s: %v", standIn.Name, err)
	}
	l := &Loan{StandIn: standIn, Device: device, DeviceID: deviceID, Proxy: proxy, MSI: msi, msixBAR: -1}
	l.msixBAR, l.msixOff, l.msixEnd = standIn.MSIXTable()
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
// MSI window, each address DW on its own (MSIWindow.Rewrite), as the
// borrower's O-NIC does on the way (pcie/manager.StandIn.MSI). Writes
// elsewhere are left alone. An address outside the window is an error,
// and data is then left unchanged.
func (l *Loan) RewriteMSIX(bar int, off uint64, data []byte) error {
	if bar != l.msixBAR || len(data)%4 != 0 || off%4 != 0 || off+uint64(len(data)) <= l.msixOff || off >= l.msixEnd {
		return nil
	}
	out := append([]byte(nil), data...)
	for p := 0; p < len(data); p += 4 {
		a := off + uint64(p)
		if a < l.msixOff || a >= l.msixEnd {
			continue
		}
		v := binary.LittleEndian.Uint32(data[p:])
		r, ok := l.MSI.Rewrite(int((a-l.msixOff)%16/4), v)
		if !ok {
			return fmt.Errorf("loan %s: MSI-X address DW %#x at %#x is outside the MSI window %#x-%#x", l.StandIn.Name, v, a, l.MSI.HostBase, l.MSI.HostBase+l.MSI.Size-1)
		}
		binary.LittleEndian.PutUint32(out[p:], r)
	}
	copy(data, out)
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
