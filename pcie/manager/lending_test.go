package manager

import (
	"encoding/binary"
	"strings"
	"testing"

	"onic/pcie"
	"onic/pcie/ntb"
	"onic/tlp"
)

// lentNVMe is a manager with a stand-in for an NVMe drive whose MSI-X
// table (33 vectors) sits at 0x2008 of its 64-bit BAR0, 8 bytes off a
// 16-byte boundary; the host put the stand-in's BAR0 at 0x60_0000_0000
// and the lender the drive's at 0x9000_0000 (which the host domain may
// reach). With window set, the loan rewrites through it.
func lentNVMe(t *testing.T, window *MSIWindow) (*Manager, *pcie.Function) {
	t.Helper()
	f, self := onic0(t)
	c := testConfig()
	m, err := New(c, f, self)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := pcie.NewEndpoint(pcie.Config{Name: "nvme", VendorID: 0x144d, DeviceID: 0xa808, Class: 0x010802,
		BARs: [6]pcie.BAR{0: {Kind: pcie.BARMem64, Size: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.AddMSIX(pcie.MSIXConfig{Vectors: 33, TableBAR: 0, TableOffset: 0x2008, PBABAR: 0, PBAOffset: 0x3000}); err != nil {
		t.Fatal(err)
	}
	si := dev.StandIn("nvme (lent)")
	si.Space.Write(0x10, 4, 0)
	si.Space.Write(0x14, 4, 0x60)
	si.Space.Write(0x04, 2, 0x6) // memory space, bus master
	if err := m.AddStandIn(StandIn{Function: si, RemoteBARs: [6]uint64{0: 0x9000_0000}, Port: ntb.Egress{Kind: ntb.EgressPortB}, MSI: window}); err != nil {
		t.Fatal(err)
	}
	return m, si
}

// TestMSIXRewrite: writes into a lent device's MSI-X table leave with
// their message address mapped through the loan's MSI window, an address
// DW at a time; what the window cannot carry is dropped as msix-address;
// everything else passes as it is.
func TestMSIXRewrite(t *testing.T) {
	w := &MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x4_0010_0000}
	m, _ := lentNVMe(t, w)
	const bar = 0x60_0000_0000
	entry := func(i int) uint64 { return bar + 0x2008 + 16*uint64(i) }
	for _, c := range []struct {
		name     string
		kind     tlp.Kind
		addr     uint64
		first    uint8
		last     uint8
		dws      []uint32
		reason   Reason
		mask     uint8
		rewrites [2]uint32
	}{
		{"address low", tlp.MWr, entry(3), 0xF, 0, []uint32{0xFEE0_2000}, OK, 1, [2]uint32{0x0010_2000}},
		{"address, both halves", tlp.MWr, entry(32), 0xF, 0xF, []uint32{0xFEE0_4010, 0}, OK, 3, [2]uint32{0x0010_4010, 4}},
		{"whole entry", tlp.MWr, entry(0), 0xF, 0xF, []uint32{0xFEE0_0000, 0, 0x41, 1}, OK, 3, [2]uint32{0x0010_0000, 4}},
		{"address high", tlp.MWr, entry(5) + 4, 0xF, 0, []uint32{0}, OK, 1, [2]uint32{4}},
		{"high, data and control", tlp.MWr, entry(5) + 4, 0xF, 0xF, []uint32{0, 0x41, 0}, OK, 1, [2]uint32{4}},
		{"data", tlp.MWr, entry(5) + 8, 0xF, 0, []uint32{0x41}, OK, 0, [2]uint32{}},
		{"vector control", tlp.MWr, entry(5) + 12, 0xF, 0, []uint32{1}, OK, 0, [2]uint32{}},
		{"the PBA", tlp.MWr, bar + 0x3000, 0xF, 0, []uint32{0xFEE0_0000}, OK, 0, [2]uint32{}},
		{"a read of the table", tlp.MRd, entry(3), 0xF, 0, nil, OK, 0, [2]uint32{}},
		{"low outside the window", tlp.MWr, entry(3), 0xF, 0, []uint32{0xFED0_0000}, MSIXAddress, 0, [2]uint32{}},
		{"high outside the window", tlp.MWr, entry(3) + 4, 0xF, 0, []uint32{1}, MSIXAddress, 0, [2]uint32{}},
		{"high outside, after a good low", tlp.MWr, entry(3), 0xF, 0xF, []uint32{0xFEE0_0000, 1}, MSIXAddress, 0, [2]uint32{}},
		{"low written in part", tlp.MWr, entry(3), 0x3, 0, []uint32{0xFEE0_2000}, MSIXAddress, 0, [2]uint32{}},
		{"high written in part", tlp.MWr, entry(3), 0xF, 0x1, []uint32{0xFEE0_2000, 0}, MSIXAddress, 0, [2]uint32{}},
		{"across two entries", tlp.MWr, entry(3) + 8, 0xF, 0xF, []uint32{0x41, 0, 0xFEE0_0000}, MSIXAddress, 0, [2]uint32{}},
		{"from before the table into it", tlp.MWr, bar + 0x2000, 0xF, 0xF, []uint32{0, 0, 0xFEE0_0000, 0}, MSIXAddress, 0, [2]uint32{}},
		{"just before the table", tlp.MWr, bar + 0x2000, 0xF, 0xF, []uint32{0, 0}, OK, 0, [2]uint32{}},
	} {
		f, typ, _ := tlp.FmtType(c.kind, true, 0)
		tl := &tlp.TLP{Fmt: f, Type: typ, Length: uint16(max(len(c.dws), 1)), FirstBE: c.first, LastBE: c.last, Address: c.addr, RequesterID: tlp.NewID(0, 0, 0)}
		if c.kind == tlp.MWr {
			for _, v := range c.dws {
				tl.Data = binary.LittleEndian.AppendUint32(tl.Data, v)
			}
		}
		payload := append([]byte(nil), tl.Data...)
		var o Outcome
		m.Process(tl, FromHost, &o)
		if o.Reason != c.reason || o.Rewrite.Mask != c.mask || o.Rewrite.Mask != 0 && o.Rewrite.DW != c.rewrites {
			t.Errorf("%s: %s, rewrite %+v; want %s, mask %d, %#x", c.name, o.Reason, o.Rewrite, c.reason, c.mask, c.rewrites)
			continue
		}
		if c.reason == OK && (o.Egress.Kind != ntb.EgressPortB || o.Address != 0x9000_0000+(c.addr-bar)) {
			t.Errorf("%s: forwarded to %s at %#x", c.name, o.Egress, o.Address)
		}
		out := o.RewritePayload(tl.Data)
		if string(tl.Data) != string(payload) {
			t.Errorf("%s: the TLP's own payload changed", c.name)
		}
		for i := 0; 4*i < len(out); i++ {
			want := binary.LittleEndian.Uint32(payload[4*i:])
			if i < 2 && c.mask>>i&1 != 0 {
				want = c.rewrites[i]
			}
			if got := binary.LittleEndian.Uint32(out[4*i:]); got != want {
				t.Errorf("%s: payload DW %d leaves as %#x, want %#x", c.name, i, got, want)
			}
		}
	}
	if n := m.Count(MSIXAddress); n != 7 {
		t.Errorf("msix-address counted %d, want 7", n)
	}

	// Without a window, table writes pass as they are.
	m, _ = lentNVMe(t, nil)
	f, typ, _ := tlp.FmtType(tlp.MWr, true, 0)
	tl := &tlp.TLP{Fmt: f, Type: typ, Length: 1, FirstBE: 0xF, Address: entry(3), RequesterID: tlp.NewID(0, 0, 0), Data: []byte{0, 0, 0xd0, 0xfe}}
	var o Outcome
	m.Process(tl, FromHost, &o)
	if o.Reason != OK || o.Rewrite.Mask != 0 {
		t.Errorf("no window: %s, rewrite %+v", o.Reason, o.Rewrite)
	}
}

// TestMSIWindowCheck: a window the manager cannot carry a DW at a time is
// refused, and one needs the device's MSI-X capability.
func TestMSIWindowCheck(t *testing.T) {
	for _, c := range []struct {
		w    MSIWindow
		want string
	}{
		{MSIWindow{HostBase: 0xFEE0_0000, Size: 0, RemoteBase: 0}, "size 0x0 must be 1 byte to 4 GiB"},
		{MSIWindow{HostBase: 0xFEE0_0002, Size: 1 << 20, RemoteBase: 0}, "must be DW-aligned"},
		{MSIWindow{HostBase: 0xFFF8_0000, Size: 1 << 20, RemoteBase: 0}, "host region 0xfff80000+0x100000 crosses a 4 GiB boundary"},
		{MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x1_FFF8_0000}, "remote region 0x1fff80000+0x100000 crosses a 4 GiB boundary"},
	} {
		if err := c.w.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.w, err, c.want)
		}
	}
	if err := (MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x1_0000_0000}).Check(); err != nil {
		t.Errorf("x86's interrupt region: %v", err)
	}
	f, self := onic0(t)
	m, err := New(testConfig(), f, self)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := pcie.NewEndpoint(pcie.Config{Name: "dev", VendorID: 1, DeviceID: 2, BARs: [6]pcie.BAR{0: {Kind: pcie.BARMem32, Size: 1 << 20}}})
	if err != nil {
		t.Fatal(err)
	}
	err = m.AddStandIn(StandIn{Function: dev.StandIn("dev (lent)"), Port: ntb.Egress{Kind: ntb.EgressPortA}, MSI: &MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20}})
	if err == nil || !strings.Contains(err.Error(), "needs the device's MSI-X capability") {
		t.Errorf("a window without MSI-X: %v", err)
	}
}
