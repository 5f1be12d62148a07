package pcie

import (
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/golden"
	"onic/tlp"
)

func defaultHierarchy(t *testing.T) *Hierarchy {
	t.Helper()
	h, err := Build(DefaultTopology())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Enumerate(); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEnumerateDefault checks bus numbers, windows and BAR addresses
// against values computed by hand: windows hold their children largest
// alignment first and round to 1 MiB; apertures start at 0xc0000000
// (32-bit) and 0x40_0000_0000 (64-bit prefetchable).
func TestEnumerateDefault(t *testing.T) {
	h := defaultHierarchy(t)
	type win struct{ base, limit uint64 }
	empty := win{1, 0}
	for _, tc := range []struct {
		name     string
		id       string
		sec, sub uint8
		mem      win
		pref     win
	}{
		{"rp0", "00:01.0", 1, 6, win{0xC000_0000, 0xC13F_FFFF}, win{0x40_0000_0000, 0x54_01FF_FFFF}},
		{"sw0", "01:00.0", 2, 6, win{0xC000_0000, 0xC13F_FFFF}, win{0x40_0000_0000, 0x54_01FF_FFFF}},
		{"sw0.dp2", "02:02.0", 5, 5, win{0xC000_0000, 0xC10F_FFFF}, win{0x50_0000_0000, 0x54_01FF_FFFF}},
		{"sw0.dp0", "02:00.0", 3, 3, win{0xC110_0000, 0xC11F_FFFF}, win{0x40_0000_0000, 0x44_01FF_FFFF}},
		{"sw0.dp1", "02:01.0", 4, 4, win{0xC120_0000, 0xC12F_FFFF}, win{0x48_0000_0000, 0x4C_01FF_FFFF}},
		{"sw0.dp3", "02:03.0", 6, 6, win{0xC130_0000, 0xC13F_FFFF}, empty},
	} {
		n := h.Find(tc.name)
		if n == nil {
			t.Fatalf("no node %s", tc.name)
		}
		if got := n.ID(0).String(); got != tc.id {
			t.Errorf("%s at %s, want %s", tc.name, got, tc.id)
		}
		br := n.Bridge()
		sec, sub := br.BusRange()
		if sec != tc.sec || sub != tc.sub {
			t.Errorf("%s: buses %02x-%02x, want %02x-%02x", tc.name, sec, sub, tc.sec, tc.sub)
		}
		io, mem, pref := br.Windows()
		if io.Size() != 0 {
			t.Errorf("%s: I/O window %#x-%#x open with no I/O BARs below", tc.name, io.Base, io.Limit)
		}
		if (win{mem.Base, mem.Limit}) != tc.mem {
			t.Errorf("%s: memory window %#x-%#x, want %#x-%#x", tc.name, mem.Base, mem.Limit, tc.mem.base, tc.mem.limit)
		}
		if tc.pref == empty {
			if pref.Size() != 0 {
				t.Errorf("%s: prefetchable window %#x-%#x should be closed", tc.name, pref.Base, pref.Limit)
			}
		} else if (win{pref.Base, pref.Limit}) != tc.pref {
			t.Errorf("%s: prefetchable window %#x-%#x, want %#x-%#x", tc.name, pref.Base, pref.Limit, tc.pref.base, tc.pref.limit)
		}
	}
	for _, tc := range []struct {
		name string
		fn   int
		id   string
		bars map[int]uint64
	}{
		{"onic0", 0, "03:00.0", map[int]uint64{0: 0xC110_0000, 2: 0x40_0000_0000, 4: 0x44_0000_0000}},
		{"onic1", 0, "04:00.0", map[int]uint64{0: 0xC120_0000, 2: 0x48_0000_0000, 4: 0x4C_0000_0000}},
		{"gpu0", 0, "05:00.0", map[int]uint64{0: 0xC000_0000, 1: 0x50_0000_0000, 3: 0x54_0000_0000}},
		{"gpu0", 1, "05:00.1", map[int]uint64{0: 0xC100_0000}},
		{"nvme0", 0, "06:00.0", map[int]uint64{0: 0xC130_0000}},
	} {
		n := h.Find(tc.name)
		if got := n.ID(tc.fn).String(); got != tc.id {
			t.Errorf("%s.%d at %s, want %s", tc.name, tc.fn, got, tc.id)
		}
		f := n.Funcs[tc.fn]
		for i, want := range tc.bars {
			if got := f.BARAddress(i); got != want {
				t.Errorf("%s.%d BAR%d at %#x, want %#x", tc.name, tc.fn, i, got, want)
			}
		}
		if f.Space.Read16(0x04)&0x6 != 0x6 {
			t.Errorf("%s.%d: memory space and bus master not enabled", tc.name, tc.fn)
		}
	}
	// MPS: the GPU supports 256 bytes, the least in rp0's subtree.
	if h.MPS["rp0"] != 256 {
		t.Errorf("MPS %d, want 256", h.MPS["rp0"])
	}
	walk(h.Find("rp0"), func(n *Node) {
		for _, f := range n.Funcs {
			off := f.capOffset(CapPCIe, false)
			if got := 128 << (f.Space.Read16(off+8) >> 5 & 7); got != 256 {
				t.Errorf("%s: Device Control MPS %d, want 256", f.Name, got)
			}
		}
	})
	// Links train to the lower of port and device: the GPU is Gen4 behind a Gen3 switch.
	gpu := h.Find("gpu0").Funcs[0]
	if ls := gpu.Space.Read16(gpu.capOffset(CapPCIe, false) + 0x12); ls&0xF != 3 || ls>>4&0x3F != 16 {
		t.Errorf("gpu0 link status %#x, want Gen3 x16", ls)
	}
	nvme := h.Find("nvme0").Funcs[0]
	if ls := nvme.Space.Read16(nvme.capOffset(CapPCIe, false) + 0x12); ls&0xF != 3 || ls>>4&0x3F != 4 {
		t.Errorf("nvme0 link status %#x, want Gen3 x4", ls)
	}
}

// TestEnumerateNested builds switches two deep with an I/O endpoint and
// checks depth-first bus numbers and the I/O window.
func TestEnumerateNested(t *testing.T) {
	ep := func(name string) *DeviceConfig {
		return &DeviceConfig{Name: name, Kind: "endpoint", VendorID: 0x1234, DeviceID: 1, Class: 0x058000,
			BARs: []BARConfig{{Index: 0, Kind: "mem32", Size: 4096}, {Index: 1, Kind: "io", Size: 64}}}
	}
	c := TopologyConfig{Name: "h", RootPorts: []PortConfig{
		{Name: "rpA", Device: &DeviceConfig{Name: "swA", Kind: "switch", Ports: []PortConfig{
			{Name: "swA.0", Device: &DeviceConfig{Name: "swB", Kind: "switch", Ports: []PortConfig{
				{Name: "swB.0", Device: ep("e1")},
				{Name: "swB.1"},
			}}},
			{Name: "swA.1", Device: ep("e2")},
		}}},
		{Name: "rpB", Device: ep("e3")},
	}}
	h, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Enumerate(); err != nil {
		t.Fatal(err)
	}
	// rpA 00:01.0 [01-07]; swA 01:00.0 [02-07]; swA.0 02:00.0 [03-06];
	// swB 03:00.0 [04-06]; swB.0 04:00.0 [05]; e1 05:00.0; swB.1 04:01.0 [06];
	// swA.1 02:01.0 [07]; e2 07:00.0; rpB 00:02.0 [08]; e3 08:00.0.
	for _, tc := range []struct {
		name     string
		id       string
		sec, sub uint8
	}{
		{"rpA", "00:01.0", 1, 7}, {"swA", "01:00.0", 2, 7}, {"swA.0", "02:00.0", 3, 6},
		{"swB", "03:00.0", 4, 6}, {"swB.0", "04:00.0", 5, 5}, {"swB.1", "04:01.0", 6, 6},
		{"swA.1", "02:01.0", 7, 7}, {"rpB", "00:02.0", 8, 8},
	} {
		n := h.Find(tc.name)
		sec, sub := n.Bridge().BusRange()
		if n.ID(0).String() != tc.id || sec != tc.sec || sub != tc.sub {
			t.Errorf("%s: %s [%02x-%02x], want %s [%02x-%02x]", tc.name, n.ID(0), sec, sub, tc.id, tc.sec, tc.sub)
		}
	}
	for name, id := range map[string]string{"e1": "05:00.0", "e2": "07:00.0", "e3": "08:00.0"} {
		if got := h.Find(name).ID(0).String(); got != id {
			t.Errorf("%s at %s, want %s", name, got, id)
		}
	}
	// I/O: each endpoint's 64-byte BAR sits in a 4 KiB window of its own.
	io, _, _ := h.Find("swB.0").Bridge().Windows()
	e1 := h.Find("e1").Funcs[0]
	if io.Size() != 4096 || !io.Contains(e1.BARAddress(1)) || e1.Space.Read16(0x04)&1 == 0 {
		t.Errorf("swB.0 I/O window %#x-%#x, e1 I/O BAR %#x", io.Base, io.Limit, e1.BARAddress(1))
	}
	if _, _, pref := h.Find("swB.1").Bridge().Windows(); pref.Size() != 0 {
		t.Error("an empty port's prefetchable window is open")
	}
}

func TestBuildErrors(t *testing.T) {
	bad := func(mod func(*TopologyConfig)) error {
		c := DefaultTopology()
		mod(&c)
		_, err := Build(c)
		return err
	}
	sw := func(c *TopologyConfig) *DeviceConfig { return c.RootPorts[0].Device }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"no root ports", bad(func(c *TopologyConfig) { c.RootPorts = nil }), "root_ports: a root complex needs"},
		{"unknown kind", bad(func(c *TopologyConfig) { sw(c).Ports[2].Device.Kind = "fpga" }), `root_ports[0].device.ports[2].device.kind: "fpga" is not a device kind`},
		{"duplicate name", bad(func(c *TopologyConfig) { sw(c).Ports[1].Device.Name = "onic0" }), `root_ports[0].device.ports[1].device.name: "onic0" is already used at root_ports[0].device.ports[0].device`},
		{"bad width", bad(func(c *TopologyConfig) { sw(c).Ports[0].Width = 3 }), "root_ports[0].device.ports[0].width: x3"},
		{"bad gen", bad(func(c *TopologyConfig) { c.RootPorts[0].Gen = 6 }), "root_ports[0].gen: 6"},
		{"switch without ports", bad(func(c *TopologyConfig) { sw(c).Ports = nil }), "root_ports[0].device.ports: a switch needs 1 to 32"},
		{"ports on an endpoint", bad(func(c *TopologyConfig) { sw(c).Ports[0].Device.Ports = []PortConfig{{}} }), "ports[0].device.ports: only a switch has ports"},
		{"custom fields on onic", bad(func(c *TopologyConfig) { sw(c).Ports[0].Device.VendorID = 5 }), "belong to kind endpoint"},
		{"no name", bad(func(c *TopologyConfig) { sw(c).Ports[3].Device.Name = "" }), "ports[3].device.name: every device needs a name"},
		{"custom without vendor", bad(func(c *TopologyConfig) { sw(c).Ports[3].Device = &DeviceConfig{Name: "x", Kind: "endpoint"} }), "ports[3].device.vendor_id: required"},
		{"custom bad BAR", bad(func(c *TopologyConfig) {
			sw(c).Ports[3].Device = &DeviceConfig{Name: "x", Kind: "endpoint", VendorID: 1, BARs: []BARConfig{{Index: 0, Kind: "mem", Size: 4096}}}
		}), `ports[3].device.bars[0].kind: "mem" is not mem32`},
		{"custom BAR size", bad(func(c *TopologyConfig) {
			sw(c).Ports[3].Device = &DeviceConfig{Name: "x", Kind: "endpoint", VendorID: 1, BARs: []BARConfig{{Index: 0, Kind: "mem32", Size: 5000}}}
		}), "bars[0]: size 0x1388 is not a power of two"},
		{"mmio32 above 4G", bad(func(c *TopologyConfig) { c.MMIO32 = Range{0x1_0000_0000, 0x1_FFFF_FFFF} }), "mmio32: limit"},
		{"inverted range", bad(func(c *TopologyConfig) { c.IO = Range{0x2000, 0x1000} }), "io: limit 0x1000 is below base 0x2000"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	// Apertures too small for what the devices need.
	c := DefaultTopology()
	c.MMIO64 = Range{0x40_0000_0000, 0x40_FFFF_FFFF}
	h, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Enumerate(); err == nil || !strings.Contains(err.Error(), "mmio64: the hierarchy needs 0x1402000000 bytes of prefetchable memory") {
		t.Errorf("small mmio64 aperture: %v", err)
	}
}

func memReq(k tlp.Kind, addr uint64, req tlp.ID) *tlp.TLP {
	f, typ, _ := tlp.FmtType(k, addr >= 1<<32, 0)
	t := &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, Address: addr, RequesterID: req}
	if k.HasData() {
		t.Data = make([]byte, 4)
	}
	return t
}

func names(ns []*Node) string {
	var s []string
	for _, n := range ns {
		s = append(s, n.Name)
	}
	return strings.Join(s, " > ")
}

func TestRoute(t *testing.T) {
	h := defaultHierarchy(t)
	onic0, gpu0, nvme0 := h.Find("onic0"), h.Find("gpu0"), h.Find("nvme0")
	cfg := func(id string, k tlp.Kind) *tlp.TLP {
		x, _ := tlp.ParseID(id)
		f, typ, _ := tlp.FmtType(k, false, 0)
		return &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, CompleterID: x}
	}
	cpl := func(to string) *tlp.TLP {
		x, _ := tlp.ParseID(to)
		return &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0xA, RequesterID: x, ByteCount: 4}
	}
	msg := func(r tlp.Routing) *tlp.TLP {
		f, typ, _ := tlp.FmtType(tlp.Msg, false, r)
		return &tlp.TLP{Fmt: f, Type: typ}
	}
	for _, tc := range []struct {
		name   string
		src    *Node
		t      *tlp.TLP
		path   string
		target string
		fn     int
		host   bool
		status tlp.Status
	}{
		{"host reads O-NIC registers", h.Root, memReq(tlp.MRd, 0xC110_0040, 0), "host0 > rp0 > sw0 > sw0.dp0 > onic0", "onic0", 0, false, tlp.StatusSC},
		{"last byte of a BAR", h.Root, memReq(tlp.MRd, 0xC110_FFFC, 0), "host0 > rp0 > sw0 > sw0.dp0 > onic0", "onic0", 0, false, tlp.StatusSC},
		{"one past the BAR: window but no BAR", h.Root, memReq(tlp.MRd, 0xC111_0000, 0), "host0 > rp0 > sw0 > sw0.dp0", "", 0, false, tlp.StatusUR},
		{"peer to peer turns at the switch", onic0, memReq(tlp.MWr, 0x50_0000_1000, onic0.ID(0)), "onic0 > sw0.dp0 > sw0 > sw0.dp2 > gpu0", "gpu0", 0, false, tlp.StatusSC},
		{"second function by address", onic0, memReq(tlp.MWr, 0xC100_0000, onic0.ID(0)), "onic0 > sw0.dp0 > sw0 > sw0.dp2 > gpu0", "gpu0", 1, false, tlp.StatusSC},
		{"DMA to host memory", nvme0, memReq(tlp.MWr, 0x1000, nvme0.ID(0)), "nvme0 > sw0.dp3 > sw0 > rp0 > host0", "host0", 0, true, tlp.StatusSC},
		{"completion back to a peer", gpu0, cpl("03:00.0"), "gpu0 > sw0.dp2 > sw0 > sw0.dp0 > onic0", "onic0", 0, false, tlp.StatusSC},
		{"completion to the host", onic0, cpl("00:00.0"), "onic0 > sw0.dp0 > sw0 > rp0 > host0", "host0", 0, true, tlp.StatusSC},
		{"config read of a second function", h.Root, cfg("05:00.1", tlp.CfgRd1), "host0 > rp0 > sw0 > sw0.dp2 > gpu0", "gpu0", 1, false, tlp.StatusSC},
		{"config read of a switch port", h.Root, cfg("02:03.0", tlp.CfgRd1), "host0 > rp0 > sw0 > sw0.dp3", "sw0.dp3", 0, false, tlp.StatusSC},
		{"config read of the root port", h.Root, cfg("00:01.0", tlp.CfgRd0), "host0 > rp0", "rp0", 0, false, tlp.StatusSC},
		{"absent function", h.Root, cfg("05:00.2", tlp.CfgRd1), "host0 > rp0 > sw0 > sw0.dp2 > gpu0", "", 0, false, tlp.StatusUR},
		{"bus beyond the hierarchy", h.Root, cfg("09:00.0", tlp.CfgRd1), "host0", "", 0, false, tlp.StatusUR},
		{"message to the root complex", nvme0, msg(tlp.RouteToRC), "nvme0 > sw0.dp3 > sw0 > rp0 > host0", "host0", 0, true, tlp.StatusSC},
		{"local message ends at the link partner", gpu0, msg(tlp.RouteLocal), "gpu0 > sw0.dp2", "sw0.dp2", 0, false, tlp.StatusSC},
	} {
		r, err := h.Route(tc.src, tc.t)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		target := ""
		if r.Target != nil {
			target = r.Target.Name
		}
		if got := names(r.Path); got != tc.path || target != tc.target || r.Func != tc.fn || r.Host != tc.host || r.Status != tc.status {
			t.Errorf("%s:\n got path %s target %q fn %d host %v %s\nwant path %s target %q fn %d host %v %s",
				tc.name, got, target, r.Func, r.Host, r.Status, tc.path, tc.target, tc.fn, tc.host, tc.status)
		}
	}
	r, err := h.Route(h.Root, msg(tlp.RouteBroadcast))
	if err != nil || len(r.Broadcast) != 10 {
		t.Errorf("broadcast reaches %d nodes (%v), want all 10 below the root", len(r.Broadcast), err)
	}
	// Memory decode off: the O-NIC no longer claims its BAR.
	onic0.Funcs[0].Space.Write(0x04, 2, 0)
	if r, _ := h.Route(h.Root, memReq(tlp.MRd, 0xC110_0040, 0)); r.Status != tlp.StatusUR {
		t.Errorf("memory space disabled, still routed to %v", r.Target)
	}
}

func TestTreeGolden(t *testing.T) {
	var b strings.Builder
	if err := defaultHierarchy(t).WriteTree(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "tree-default.txt"), b.String())
}

// TestACSRouting enables ACS controls on a switch downstream port through
// its ACS Control register and checks what they do to routing.
func TestACSRouting(t *testing.T) {
	h := defaultHierarchy(t)
	onic0 := h.Find("onic0")
	dp0 := h.Find("sw0.dp0").Bridge()
	acs := dp0.capOffset(ExtCapACS, true)
	setACS := func(v uint16) { dp0.Space.Write(acs+6, 2, uint32(v)) }

	// P2P request redirect: onic0 -> gpu0 goes up to the root complex.
	setACS(ACSRequestRedirect)
	r, _ := h.Route(onic0, memReq(tlp.MWr, 0x50_0000_1000, onic0.ID(0)))
	if got := names(r.Path); got != "onic0 > sw0.dp0 > sw0 > rp0 > host0 > rp0 > sw0 > sw0.dp2 > gpu0" || !r.Redirected || r.Target.Name != "gpu0" {
		t.Errorf("redirected P2P: %s (redirected %v)", got, r.Redirected)
	}
	// Completions are not redirected by the request control...
	cpl := &tlp.TLP{Fmt: tlp.Fmt3DW, Type: 0xA, RequesterID: tlp.NewID(5, 0, 0), ByteCount: 4}
	if r, _ := h.Route(onic0, cpl); names(r.Path) != "onic0 > sw0.dp0 > sw0 > sw0.dp2 > gpu0" {
		t.Errorf("completion with only request redirect: %s", names(r.Path))
	}
	// ...but by the completion control.
	setACS(ACSCompletionRedirect)
	if r, _ := h.Route(onic0, cpl); !r.Redirected || r.Target.Name != "gpu0" {
		t.Errorf("completion redirect: %s", names(r.Path))
	}
	// DMA to host memory is unaffected.
	setACS(ACSRequestRedirect | ACSCompletionRedirect)
	if r, _ := h.Route(onic0, memReq(tlp.MWr, 0x1000, onic0.ID(0))); !r.Host || r.Redirected {
		t.Errorf("host DMA under redirect: %s", names(r.Path))
	}
	// Source validation: a request whose requester ID is not behind the
	// port is blocked there.
	setACS(ACSSourceValidation)
	r, _ = h.Route(onic0, memReq(tlp.MWr, 0x1000, tlp.NewID(5, 0, 0)))
	if !r.ACSViolation || r.Status != tlp.StatusUR || names(r.Path) != "onic0 > sw0.dp0" {
		t.Errorf("spoofed requester: %s %v %s", names(r.Path), r.ACSViolation, r.Status)
	}
	if r, _ := h.Route(onic0, memReq(tlp.MWr, 0x1000, onic0.ID(0))); r.ACSViolation || !r.Host {
		t.Errorf("genuine requester blocked: %s", names(r.Path))
	}
	// The controls only act where the capability advertises them: a write
	// of bits the port does not have is ignored.
	setACS(0xFFFF)
	if got := dp0.Space.Read16(acs + 6); got != dp0.Space.Read16(acs+4) {
		t.Errorf("ACS Control %#x accepts bits the capability %#x lacks", got, dp0.Space.Read16(acs+4))
	}
}

// TestHierarchyConfig reads and writes configuration space through the
// hierarchy as the host does, including UR for absent functions and CRS.
func TestHierarchyConfig(t *testing.T) {
	h := defaultHierarchy(t)
	cfg := func(k tlp.Kind, id string, reg uint16, data []byte) *tlp.TLP {
		x, _ := tlp.ParseID(id)
		f, typ, _ := tlp.FmtType(k, false, 0)
		return &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, CompleterID: x, Register: reg, Data: data, Tag: 7}
	}
	c, err := h.Config(cfg(tlp.CfgRd1, "05:00.1", 0, nil))
	if err != nil || c.Kind() != tlp.CplD || c.CompleterID != tlp.NewID(5, 0, 1) || c.Data[2] != 0x01 || c.Data[3] != 0x03 {
		t.Fatalf("read of gpu0 audio IDs: %v %v", &c, err)
	}
	c, _ = h.Config(cfg(tlp.CfgRd1, "05:00.2", 0, nil))
	if c.Kind() != tlp.Cpl || c.Status != tlp.StatusUR || c.CompleterID != tlp.NewID(5, 0, 0) {
		t.Errorf("absent function: %v", &c)
	}
	c, _ = h.Config(cfg(tlp.CfgRd1, "09:00.0", 0, nil))
	if c.Status != tlp.StatusUR {
		t.Errorf("absent bus: %v", &c)
	}
	c, _ = h.Config(cfg(tlp.CfgRd0, "00:00.0", 0, nil))
	if c.Kind() != tlp.CplD || c.Data[0] != 0xCE {
		t.Errorf("host bridge: %v", &c)
	}
	// A write through the hierarchy lands in the device.
	if c, _ := h.Config(cfg(tlp.CfgWr1, "06:00.0", 0x3C, []byte{0x2A, 0, 0, 0})); c.Kind() != tlp.Cpl || c.Status != tlp.StatusSC {
		t.Fatalf("write: %v", &c)
	}
	if got := h.Find("nvme0").Funcs[0].Space.Read8(0x3C); got != 0x2A {
		t.Errorf("interrupt line %#x after the write", got)
	}
	h.Find("nvme0").Funcs[0].Ready = false
	if c, _ := h.Config(cfg(tlp.CfgRd1, "06:00.0", 0, nil)); c.Status != tlp.StatusCRS {
		t.Errorf("not ready: %v", &c)
	}
	if _, err := h.Config(memReq(tlp.MRd, 0x1000, 0)); err == nil {
		t.Error("a memory read accepted as a configuration request")
	}
}
