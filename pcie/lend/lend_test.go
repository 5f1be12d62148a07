package lend

import (
	"strings"
	"testing"

	"onic/pcie"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// world is two hosts joined through their O-NICs' port A: host B lends its
// GPU to host A.
type world struct {
	hA, hB        *pcie.Hierarchy
	onicA, onicB  *pcie.Node
	gpuB          *pcie.Node
	standIn       *pcie.Function
	mA, mB        *manager.Manager
	loan          *Loan
	msiHost       uint64
	standInID     tlp.ID
	lenderBARs    [6]uint64
	borrowerProxy tlp.ID // host A's requester as host B sees it
	deviceProxy   tlp.ID // the GPU as host A sees it
}

// must returns v, or stops the test run with err (set-up failures only).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func newWorld(t *testing.T) *world {
	w := &world{msiHost: 0xFEE0_0000}
	// Host B: its O-NIC on one root port, the GPU on another.
	w.hB = must(pcie.Build(pcie.TopologyConfig{Name: "hostB", RootPorts: []pcie.PortConfig{
		{Name: "b.rp0", Device: &pcie.DeviceConfig{Name: "onicB", Kind: "onic"}},
		{Name: "b.rp1", Device: &pcie.DeviceConfig{Name: "gpuB", Kind: "gpu"}},
	}}))
	if err := w.hB.Enumerate(); err != nil {
		t.Fatal(err)
	}
	w.onicB, w.gpuB = w.hB.Find("onicB"), w.hB.Find("gpuB")
	gpu := w.gpuB.Funcs[0]
	for i := range gpu.BARs {
		w.lenderBARs[i] = gpu.BARAddress(i)
	}

	// Host A: the default topology, with the GPU's stand-in as function 1
	// of onic0, enumerated by host A like any other function.
	w.hA = must(pcie.Build(pcie.DefaultTopology()))
	w.onicA = w.hA.Find("onic0")
	w.standIn = gpu.StandIn("gpuB (lent)")
	w.onicA.Funcs = append(w.onicA.Funcs, w.standIn)
	w.onicA.Funcs[0].Space.Set8(0x0E, w.onicA.Funcs[0].Space.Read8(0x0E)|0x80) // now multi-function
	if err := w.hA.Enumerate(); err != nil {
		t.Fatal(err)
	}
	w.standInID = w.onicA.ID(1)
	w.borrowerProxy, w.deviceProxy = tlp.NewID(0x10, 0, 0), tlp.NewID(0x20, 0, 0)

	// Host B's O-NIC: the MSI window (BAR2 offset 0, 1 MiB) leads back to
	// host A's interrupt region through port A; the GPU gets a proxy ID;
	// host A's proxy may reach the GPU's BARs.
	onicBBAR2 := w.onicB.Funcs[0].BARAddress(2)
	w.mB = must(manager.New(manager.Config{
		Translation: ntb.Config{
			Windows: []ntb.WindowConfig{{Name: "msi", BAR: 2, Size: 1 << 20, Egress: "port-a", Translated: w.msiHost}},
			RID:     ntb.RIDConfig{ProxyBase: w.deviceProxy.String(), Map: []string{w.gpuB.ID(0).String()}},
		},
		Access: acl.Config{Domains: []acl.DomainConfig{
			{Name: "gpu", Requesters: []string{w.gpuB.ID(0).String()}, Ingress: []string{"host"}, Egress: []string{"port-a"},
				Ranges: []acl.RangeConfig{{Base: w.msiHost, Size: 1 << 20, Write: true}}},
			{Name: "borrower", Requesters: []string{w.borrowerProxy.String()}, Ingress: []string{"port-a"}, Egress: []string{"host"},
				Ranges: []acl.RangeConfig{{Base: w.lenderBARs[1], Size: 16 << 30, Read: true, Write: true}}},
		}},
	}, w.onicB.Funcs[0], w.onicB.ID(0)))

	// Host A's O-NIC: the stand-in's BARs lead to the GPU's through port A;
	// the GPU's proxy may write host A's interrupt region.
	w.mA = must(manager.New(manager.Config{
		Translation: ntb.Config{RID: ntb.RIDConfig{ProxyBase: w.borrowerProxy.String(), Map: []string{"00:00.0"}}},
		Access: acl.Config{Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a"},
				Ranges: []acl.RangeConfig{{Base: w.lenderBARs[1], Size: 16 << 30, Read: true, Write: true}}},
			{Name: "lent-gpu", Requesters: []string{w.deviceProxy.String()}, Ingress: []string{"port-a"}, Egress: []string{"host"},
				Ranges: []acl.RangeConfig{{Base: w.msiHost, Size: 1 << 20, Write: true}}},
		}},
	}, w.onicA.Funcs[0], w.onicA.ID(0)))
	if err := w.mA.AddStandIn(manager.StandIn{Function: w.standIn, RemoteBARs: w.lenderBARs, Port: ntb.Egress{Kind: ntb.EgressPortA}}); err != nil {
		t.Fatal(err)
	}
	w.loan = must(New(w.standIn, gpu, w.gpuB.ID(0), w.onicB.ID(0), MSIWindow{HostBase: w.msiHost, Size: 1 << 20, RemoteBase: onicBBAR2}))
	return w
}

func memTLP(k tlp.Kind, addr uint64, req tlp.ID) *tlp.TLP {
	f, typ, _ := tlp.FmtType(k, addr >= 1<<32, 0)
	t := &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, Address: addr, RequesterID: req}
	if k.HasData() {
		t.Data = []byte{0x2A, 0, 0, 0}
	}
	return t
}

func TestStandInIsEnumerated(t *testing.T) {
	w := newWorld(t)
	if w.standInID.String() != "03:00.1" {
		t.Fatalf("stand-in at %s, want 03:00.1", w.standInID)
	}
	if w.standIn.Space.Read32(0) != w.gpuB.Funcs[0].Space.Read32(0) || w.standIn.Space.Read32(8) != w.gpuB.Funcs[0].Space.Read32(8) {
		t.Error("the stand-in does not present the GPU's IDs and class")
	}
	for i, b := range w.standIn.BARs {
		if b.Kind == pcie.BARNone {
			continue
		}
		if w.standIn.BARAddress(i) == 0 {
			t.Errorf("stand-in BAR%d unassigned", i)
		}
		if w.standIn.SizeBAR(i) != b.Size {
			t.Errorf("stand-in BAR%d sizes as %#x, want %#x", i, w.standIn.SizeBAR(i), b.Size)
		}
	}
	var tree strings.Builder
	_ = w.hA.WriteTree(&tree)
	if !strings.Contains(tree.String(), "00.1  [0ace:0300] gpuB (lent)") {
		t.Errorf("tree lacks the stand-in:\n%s", tree.String())
	}
}

// TestBorrowedBARAccess: host A reads the stand-in's BAR1; the read crosses
// both O-NICs and reaches the GPU in host B's hierarchy.
func TestBorrowedBARAccess(t *testing.T) {
	w := newWorld(t)
	addr := w.standIn.BARAddress(1) + 0x100
	rd := memTLP(tlp.MRd, addr, tlp.NewID(0, 0, 0))
	r, _ := w.hA.Route(w.hA.Root, rd)
	if r.Target != w.onicA || r.Func != 1 {
		t.Fatalf("host A routes the read to %v fn %d", r.Target, r.Func)
	}
	var o manager.Outcome
	w.mA.Process(rd, manager.FromHost, &o)
	if o.Action != manager.Forward || o.Egress.Kind != ntb.EgressPortA || o.Address != w.lenderBARs[1]+0x100 || o.Requester != w.borrowerProxy {
		t.Fatalf("borrower's O-NIC: %+v", o)
	}
	// On the wire to host B, then through host B's O-NIC into host B.
	wire := *rd
	wire.Address, wire.RequesterID = o.Address, o.Requester
	w.mB.Process(&wire, manager.FromPortA, &o)
	if o.Action != manager.Forward || o.Egress.Kind != ntb.EgressHost {
		t.Fatalf("lender's O-NIC: %+v", o)
	}
	r, _ = w.hB.Route(w.onicB, &wire)
	if r.Target != w.gpuB || r.Func != 0 {
		t.Fatalf("host B routes the read to %v", r.Target)
	}
	// The stand-in's BAR0 (not covered by the borrower's rights) is denied.
	var o2 manager.Outcome
	w.mA.Process(memTLP(tlp.MRd, w.standIn.BARAddress(0), 0), manager.FromHost, &o2)
	if o2.Action != manager.Complete || o2.Reason != manager.Denied {
		t.Errorf("BAR0 outside the host's rights: %+v", o2)
	}
	// With port A down the read completes with UR.
	w.mA.PortDown[0] = true
	w.mA.Process(rd, manager.FromHost, &o2)
	if o2.Action != manager.Complete || o2.Reason != manager.PortDown || o2.Status != tlp.StatusUR {
		t.Errorf("port down: %+v", o2)
	}
}

// TestMSIWindow: host A programs the stand-in's MSI; the forwarded writes
// give the GPU an address in host B's domain (the MSI window), and the
// GPU's interrupt write comes back to host A's interrupt address.
func TestMSIWindow(t *testing.T) {
	w := newWorld(t)
	msi := w.standIn.CapOffset(pcie.CapMSI, false)
	cfgWr := func(reg int, v uint32) *tlp.TLP {
		f, typ, _ := tlp.FmtType(tlp.CfgWr1, false, 0)
		d := []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
		return &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, CompleterID: w.standInID, Register: uint16(reg), Data: d}
	}
	const hostMSI = 0xFEE0_1000
	for _, wr := range []*tlp.TLP{
		cfgWr(msi+4, hostMSI),   // address, low
		cfgWr(msi+8, 0),         // address, high
		cfgWr(msi+12, 0x4021),   // data
		cfgWr(msi, 1<<16),       // enable MSI (Message Control is bytes 2-3)
		cfgWr(0x18, 0xFFFFFFFF), // a BAR write stays local
	} {
		cpl, fwd, err := w.loan.Config(wr, w.standInID)
		if err != nil || cpl.Status != tlp.StatusSC {
			t.Fatalf("register %#x: %v %v", wr.Register, &cpl, err)
		}
		if wr.Register == 0x18 {
			if fwd != nil {
				t.Fatal("a BAR write was forwarded to the device")
			}
			continue
		}
		if fwd == nil || fwd.CompleterID != w.gpuB.ID(0) || fwd.RequesterID != w.onicB.ID(0) {
			t.Fatalf("register %#x: forwarded %v", wr.Register, fwd)
		}
		// The lender's host performs the forwarded write.
		if c, err := w.hB.Config(fwd); err != nil || c.Status != tlp.StatusSC {
			t.Fatalf("lender applying %#x: %v %v", fwd.Register, &c, err)
		}
	}
	gpu := w.gpuB.Funcs[0].Space
	remote := uint64(gpu.Read32(msi+4)) | uint64(gpu.Read32(msi+8))<<32
	want := w.onicB.Funcs[0].BARAddress(2) + (hostMSI - w.msiHost)
	if remote != want {
		t.Fatalf("the GPU's MSI address is %#x, want %#x (the MSI window)", remote, want)
	}
	if gpu.Read16(msi+12) != 0x4021 || gpu.Read16(msi+2)&1 != 1 {
		t.Fatalf("MSI data %#x control %#x not forwarded", gpu.Read16(msi+12), gpu.Read16(msi+2))
	}
	// The host still reads back what it wrote.
	if w.standIn.Space.Read32(msi+4) != hostMSI {
		t.Fatalf("stand-in MSI address %#x", w.standIn.Space.Read32(msi+4))
	}

	// The GPU fires: a write of the data to its MSI address, in host B.
	irq := memTLP(tlp.MWr, remote, w.gpuB.ID(0))
	irq.Data = []byte{0x21, 0x40, 0, 0}
	r, _ := w.hB.Route(w.gpuB, irq)
	if r.Target != w.onicB {
		t.Fatalf("host B routes the interrupt to %v, not the O-NIC", r.Target)
	}
	var o manager.Outcome
	w.mB.Process(irq, manager.FromHost, &o)
	if o.Action != manager.Forward || o.Egress.Kind != ntb.EgressPortA || o.Address != hostMSI || o.Requester != w.deviceProxy {
		t.Fatalf("lender's O-NIC: %+v", o)
	}
	wire := *irq
	wire.Address, wire.RequesterID = o.Address, o.Requester
	w.mA.Process(&wire, manager.FromPortA, &o)
	if o.Action != manager.Forward || o.Egress.Kind != ntb.EgressHost || o.Address != hostMSI {
		t.Fatalf("borrower's O-NIC: %+v", o)
	}
	r, _ = w.hA.Route(w.onicA, &wire)
	if !r.Host {
		t.Fatalf("host A does not take the interrupt write: %v", r.Target)
	}

	// An MSI address outside the window cannot be carried.
	if _, fwd, err := w.loan.Config(cfgWr(msi+4, 0x1000), w.standInID); err == nil || fwd != nil || !strings.Contains(err.Error(), "outside the MSI window") {
		t.Errorf("address outside the window: fwd %v err %v", fwd, err)
	}
}

func TestNewErrors(t *testing.T) {
	w := newWorld(t)
	if _, err := New(w.onicA.Funcs[0], w.gpuB.Funcs[0], 0, 0, MSIWindow{Size: 1}); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("mismatched stand-in: %v", err)
	}
	if _, err := New(w.standIn, w.gpuB.Funcs[0], 0, 0, MSIWindow{}); err == nil {
		t.Error("empty MSI window accepted")
	}
	if err := w.mA.AddStandIn(manager.StandIn{Function: w.standIn, RemoteBARs: w.lenderBARs, Port: ntb.Egress{Kind: ntb.EgressLocal}}); err == nil {
		t.Error("a stand-in behind a non-port egress accepted")
	}
	bad := w.lenderBARs
	bad[1] += 0x1000
	if err := w.mA.AddStandIn(manager.StandIn{Function: w.standIn, RemoteBARs: bad, Port: ntb.Egress{Kind: ntb.EgressPortA}}); err == nil || !strings.Contains(err.Error(), "not aligned") {
		t.Errorf("misaligned remote BAR: %v", err)
	}
}

// TestMSIX lends host B's NVMe controller, whose MSI-X table is in BAR0,
// and checks that table writes are rewritten through the MSI window.
func TestMSIX(t *testing.T) {
	hB := must(pcie.Build(pcie.TopologyConfig{Name: "hostB", RootPorts: []pcie.PortConfig{
		{Name: "b.rp0", Device: &pcie.DeviceConfig{Name: "onicB", Kind: "onic"}},
		{Name: "b.rp1", Device: &pcie.DeviceConfig{Name: "nvmeB", Kind: "nvme"}},
	}}))
	if err := hB.Enumerate(); err != nil {
		t.Fatal(err)
	}
	dev := hB.Find("nvmeB").Funcs[0]
	si := dev.StandIn("nvmeB (lent)")
	si.Space.Write(0x10, 4, 0xD000_0000) // where host A put it
	si.Space.Write(0x14, 4, 0)
	l := must(New(si, dev, hB.Find("nvmeB").ID(0), 0, MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x40_0000_0000}))
	// Entry 3 of the table at BAR0+0x2000: address low, high, data.
	entry := uint64(0x2000 + 3*16)
	low := []byte{0x00, 0x20, 0xE0, 0xFE} // 0xfee02000
	if err := l.RewriteMSIX(0, entry, low); err != nil {
		t.Fatal(err)
	}
	if got := uint32(low[0]) | uint32(low[1])<<8 | uint32(low[2])<<16 | uint32(low[3])<<24; got != 0x0000_2000 {
		t.Errorf("address low rewritten to %#x, want 0x2000", got)
	}
	// A whole-entry write: address high (0) becomes the window's high half;
	// the data DW is untouched.
	full := []byte{0x00, 0x30, 0xE0, 0xFE, 0, 0, 0, 0, 0x55, 0, 0, 0, 0, 0, 0, 0}
	if err := l.RewriteMSIX(0, 0x2000, full); err != nil {
		t.Fatal(err)
	}
	if full[0] != 0 || full[1] != 0x30 || full[2] != 0 || full[3] != 0 || full[4] != 0x40 || full[8] != 0x55 {
		t.Errorf("entry 0 rewritten to % x", full)
	}
	// Writes outside the table are left alone; addresses outside the window fail.
	other := []byte{1, 2, 3, 4}
	if err := l.RewriteMSIX(0, 0x100, other); err != nil || other[0] != 1 {
		t.Errorf("doorbell write changed: % x %v", other, err)
	}
	if err := l.RewriteMSIX(0, 0x2000, []byte{0, 0, 0, 0x10}); err == nil {
		t.Error("an MSI-X address outside the window was accepted")
	}

	// The borrower's O-NIC, with the loan's window on its stand-in,
	// rewrites the same write the same way on its way to the device.
	hA := must(pcie.Build(pcie.DefaultTopology()))
	onicA := hA.Find("onic0").Funcs[0]
	mA := must(manager.New(manager.Config{
		Translation: ntb.Config{RID: ntb.RIDConfig{ProxyBase: "10:00.0", Map: []string{"00:00.0"}}},
		Access: acl.Config{Domains: []acl.DomainConfig{{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a"},
			Ranges: []acl.RangeConfig{{Base: dev.BARAddress(0), Size: 1 << 20, Write: true}}}}},
	}, onicA, tlp.NewID(1, 0, 0)))
	si.Space.Write(0x10, 4, 0) // host A's enumeration, away from its O-NIC's BARs
	si.Space.Write(0x14, 4, 0x70)
	si.Space.Write(0x04, 2, 0x6)
	if err := mA.AddStandIn(manager.StandIn{Function: si, RemoteBARs: [6]uint64{0: dev.BARAddress(0)}, Port: ntb.Egress{Kind: ntb.EgressPortA}, MSI: &l.MSI}); err != nil {
		t.Fatal(err)
	}
	want := []byte{0x00, 0x20, 0xE0, 0xFE, 0, 0, 0, 0}
	f, typ, _ := tlp.FmtType(tlp.MWr, true, 0)
	wr := &tlp.TLP{Fmt: f, Type: typ, Length: 2, FirstBE: 0xF, LastBE: 0xF, Address: 0x70_0000_0000 + entry, Data: append([]byte(nil), want...)}
	var o manager.Outcome
	mA.Process(wr, manager.FromHost, &o)
	if err := l.RewriteMSIX(0, entry, want); err != nil {
		t.Fatal(err)
	}
	if got := o.RewritePayload(wr.Data); o.Action != manager.Forward || string(got) != string(want) {
		t.Errorf("the O-NIC forwards % x (%s %s), the loan rewrites to % x", got, o.Action, o.Reason, want)
	}
}

// TestPeerToPeerShortestPath lends two devices of host B to host A. When
// one DMAs into the other, the driver gives it the peer's address in the
// lender's domain (DeviceAddress), so the write stays in host B.
func TestPeerToPeerShortestPath(t *testing.T) {
	hB := must(pcie.Build(pcie.TopologyConfig{Name: "hostB", RootPorts: []pcie.PortConfig{
		{Name: "b.rp0", Device: &pcie.DeviceConfig{Name: "onicB", Kind: "onic"}},
		{Name: "b.rp1", Device: &pcie.DeviceConfig{Name: "swB", Kind: "switch", Ports: []pcie.PortConfig{
			{Name: "swB.0", Device: &pcie.DeviceConfig{Name: "gpuB", Kind: "gpu"}},
			{Name: "swB.1", Device: &pcie.DeviceConfig{Name: "nvmeB", Kind: "nvme"}},
		}}},
	}}))
	if err := hB.Enumerate(); err != nil {
		t.Fatal(err)
	}
	gpuB, nvmeB := hB.Find("gpuB"), hB.Find("nvmeB")
	si := nvmeB.Funcs[0].StandIn("nvmeB (lent)")
	si.Space.Write(0x10, 4, 0xD010_0000) // host A's assignment
	si.Space.Write(0x14, 4, 0)
	l := must(New(si, nvmeB.Funcs[0], nvmeB.ID(0), 0, MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x40_0000_0000}))
	doorbell, ok := l.DeviceAddress(0xD010_1008)
	if !ok || doorbell != nvmeB.Funcs[0].BARAddress(0)+0x1008 {
		t.Fatalf("DeviceAddress = %#x %v", doorbell, ok)
	}
	r, _ := hB.Route(gpuB, memTLP(tlp.MWr, doorbell, gpuB.ID(0)))
	var path []string
	for _, n := range r.Path {
		path = append(path, n.Name)
	}
	if got := strings.Join(path, " > "); got != "gpuB > swB.0 > swB > swB.1 > nvmeB" {
		t.Errorf("peer write takes %s; want the turn at host B's switch", got)
	}
	if _, ok := l.DeviceAddress(0xD000_0000); ok {
		t.Error("an address outside the stand-in's BARs resolved")
	}
}
