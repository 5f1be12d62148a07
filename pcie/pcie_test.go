package pcie

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
	"onic/tlp"
)

func mustONIC(t *testing.T) *Function {
	t.Helper()
	f, err := NewONIC("O-NIC 0", DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustPort(t *testing.T, pt PortType) *Function {
	t.Helper()
	f, err := NewSwitchPort("port", pt, 3, tlp.Gen4, 8)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRegisterSemantics writes all ones, then zeros, to registers of each
// access type and checks what reads back.
func TestRegisterSemantics(t *testing.T) {
	f := mustONIC(t)
	s := f.Space
	for _, tc := range []struct {
		name     string
		off, n   int
		setHW    uint32 // hardware value before the writes
		afterOne uint32 // after software writes all ones
		afterZ   uint32 // after software then writes zeros
	}{
		{"vendor ID (RO)", 0x00, 2, ONICVendorID, ONICVendorID, ONICVendorID},
		{"command (RW bits 0x0547)", 0x04, 2, 0, 0x0547, 0},
		{"status (RW1C bits, Cap List RO)", 0x06, 2, 0xF910, 0x0010, 0x0010},
		{"class (RO)", 0x09, 1, 0, 0, 0},
		{"cache line size (RW)", 0x0C, 1, 0, 0xFF, 0},
		{"header type (RO)", 0x0E, 1, 0, 0, 0},
		{"interrupt line (RW)", 0x3C, 1, 0, 0xFF, 0},
		{"interrupt pin (RO)", 0x3D, 1, 1, 1, 1},
		{"capabilities pointer (RO)", 0x34, 1, 0x40, 0x40, 0x40},
	} {
		s.Write(tc.off, tc.n, 0) // clear what software can
		if tc.setHW != 0 {
			switch tc.n {
			case 1:
				s.Set8(tc.off, uint8(tc.setHW))
			case 2:
				s.Set16(tc.off, uint16(tc.setHW))
			}
		}
		s.Write(tc.off, tc.n, 0xFFFFFFFF)
		if got := s.Read(tc.off, tc.n); got != tc.afterOne {
			t.Errorf("%s: after writing ones read %#x, want %#x", tc.name, got, tc.afterOne)
		}
		s.Write(tc.off, tc.n, 0)
		if got := s.Read(tc.off, tc.n); got != tc.afterZ {
			t.Errorf("%s: after writing zeros read %#x, want %#x", tc.name, got, tc.afterZ)
		}
	}
	// Byte-enabled DW write touches only enabled bytes.
	s.Write(0x3C, 1, 0x11)
	s.WriteDW(0x0C, [4]byte{0xAA, 0xBB, 0xCC, 0xDD}, 0b0001)
	if s.Read8(0x0C) != 0xAA || s.Read8(0x0E) != 0 {
		t.Errorf("byte-enabled write: %#x %#x", s.Read8(0x0C), s.Read8(0x0E))
	}
	// Reads outside the space return all ones.
	if s.Read(4095, 4) != 0xFFFFFFFF || s.Read(-1, 2) != 0xFFFF {
		t.Error("out-of-range reads must return all ones")
	}
	if s.AccessOf(0x04, 1) != RW || s.AccessOf(0x07, 7) != RW1C || s.AccessOf(0x00, 0) != RO {
		t.Error("AccessOf disagrees with the Command/Status/Vendor ID attributes")
	}
}

func TestBARSizing(t *testing.T) {
	f, err := NewEndpoint(Config{Name: "dev", VendorID: 0x1234, DeviceID: 1, BARs: [6]BAR{
		0: {Kind: BARMem32, Size: 4096},
		1: {Kind: BARMem32, Prefetchable: true, Size: 1 << 20},
		2: {Kind: BARMem64, Prefetchable: true, Size: 64 << 30},
		4: {Kind: BARIO, Size: 32},
		5: {Kind: BARMem32, Size: 16}, // the minimum size
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := f.Space
	for _, tc := range []struct {
		bar      int
		size     uint64
		readback uint32 // low DW after writing all ones
	}{
		{0, 4096, 0xFFFFF000},
		{1, 1 << 20, 0xFFF00008},
		{2, 64 << 30, 0x0000000C},
		{4, 32, 0xFFFFFFE1},
		{5, 16, 0xFFFFFFF0},
	} {
		if got := f.SizeBAR(tc.bar); got != tc.size {
			t.Errorf("BAR%d: sized %#x, want %#x", tc.bar, got, tc.size)
		}
		off := 0x10 + 4*tc.bar
		s.Write(off, 4, 0xFFFFFFFF)
		if got := s.Read32(off); got != tc.readback {
			t.Errorf("BAR%d: all ones reads back %#08x, want %#08x", tc.bar, got, tc.readback)
		}
		s.Write(off, 4, 0)
	}
	// Upper half of the 64 GiB BAR: bits below 64 GiB >> 32 are read-only.
	s.Write(0x1C, 4, 0xFFFFFFFF)
	if got := s.Read32(0x1C); got != 0xFFFFFFF0 {
		t.Errorf("BAR3 (upper half): %#08x, want 0xfffffff0", got)
	}
	// Programming an address: bits below the size are dropped.
	s.Write(0x18, 4, 0x12345678)
	s.Write(0x1C, 4, 0x20)
	if got := f.BARAddress(2); got != 0x20_0000_0000 {
		t.Errorf("BAR2 address %#x, want 0x2000000000", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{VendorID: 0xFFFF}, "vendor_id"},
		{Config{VendorID: 1, Class: 1 << 24}, "class"},
		{Config{VendorID: 1, InterruptPin: 5}, "interrupt_pin"},
		{Config{VendorID: 1, BARs: [6]BAR{{Kind: BARMem32, Size: 3000}}}, "bars[0]: size 0xbb8 is not a power of two"},
		{Config{VendorID: 1, BARs: [6]BAR{{Kind: BARIO, Size: 512}}}, "bars[0]: I/O BAR size 512"},
		{Config{VendorID: 1, BARs: [6]BAR{{Kind: BARIO, Size: 16, Prefetchable: true}}}, "cannot be prefetchable"},
		{Config{VendorID: 1, BARs: [6]BAR{5: {Kind: BARMem64, Size: 4096}}}, "bars[5]: a 64-bit BAR needs the next BAR"},
		{Config{VendorID: 1, BARs: [6]BAR{{Kind: BARMem64, Size: 4096}, {Kind: BARMem32, Size: 4096}}}, "bars[1]: holds the upper half"},
		{Config{VendorID: 1, BARs: [6]BAR{{Kind: BARMem32, Size: 8}}}, "16 bytes to 2 GiB"},
	} {
		_, err := NewEndpoint(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
	if _, err := NewBridge(Config{VendorID: 1, BARs: [6]BAR{2: {Kind: BARMem32, Size: 4096}}}); err == nil || !strings.Contains(err.Error(), "only BARs 0 and 1") {
		t.Errorf("bridge with BAR2: %v", err)
	}
	f := mustONIC(t)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"msi vectors", errOf(f.AddMSI(MSIConfig{Vectors: 3})), "msi.vectors 3"},
		{"msix bar", errOf(f.AddMSIX(MSIXConfig{Vectors: 8, TableBAR: 1})), "msix.table_bar 1"},
		{"msix fit", errOf(f.AddMSIX(MSIXConfig{Vectors: 8, TableOffset: 0xFFF8})), "do not fit BAR 0"},
		{"msix align", errOf(f.AddMSIX(MSIXConfig{Vectors: 8, TableOffset: 4})), "8-byte aligned"},
		{"msix overlap", errOf(f.AddMSIX(MSIXConfig{Vectors: 8, TableOffset: 0, PBAOffset: 0x40})), "overlap"},
		{"pcie mps", errOf(f.AddPCIe(PCIeConfig{MaxPayload: 100, MaxSpeed: 3, Speed: 3, MaxWidth: 16, Width: 16})), "pcie.max_payload 100"},
		{"pcie speed", errOf(f.AddPCIe(PCIeConfig{MaxPayload: 128, MaxSpeed: 2, Speed: 3, MaxWidth: 16, Width: 16})), "pcie.speed"},
		{"pcie width", errOf(f.AddPCIe(PCIeConfig{MaxPayload: 128, MaxSpeed: 3, Speed: 3, MaxWidth: 12, Width: 8})), "pcie.width"},
		{"pcie slot", errOf(f.AddPCIe(PCIeConfig{MaxPayload: 128, MaxSpeed: 3, Speed: 3, MaxWidth: 16, Width: 16, Slot: true})), "pcie.slot"},
		{"acs", errOf(f.AddACS(0x80)), "acs controls"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

func errOf(_ int, err error) error { return err }

// walkCaps follows the standard and extended capability lists as system
// software does and returns the IDs found in order.
func walkCaps(t *testing.T, s *Space) (std []uint8, ext []uint16) {
	t.Helper()
	if s.Read16(0x06)&0x10 == 0 {
		t.Fatal("Status: Capabilities List bit clear")
	}
	for p, n := int(s.Read8(0x34)), 0; p != 0; p, n = int(s.Read8(p+1)), n+1 {
		if p < 0x40 || p&3 != 0 || n > 48 {
			t.Fatalf("bad capability pointer %#x", p)
		}
		std = append(std, s.Read8(p))
	}
	for p, n := 0x100, 0; p != 0; n++ {
		h := s.Read32(p)
		if h == 0 || n > 64 {
			break
		}
		ext = append(ext, uint16(h))
		p = int(h >> 20)
	}
	return std, ext
}

func TestCapabilityLists(t *testing.T) {
	std, ext := walkCaps(t, mustONIC(t).Space)
	if string(std) != string([]uint8{CapPM, CapMSI, CapMSIX, CapPCIe}) {
		t.Errorf("O-NIC capabilities %x", std)
	}
	if len(ext) != 3 || ext[0] != ExtCapAER || ext[1] != ExtCapACS || ext[2] != ExtCapVSEC {
		t.Errorf("O-NIC extended capabilities %x", ext)
	}
	std, ext = walkCaps(t, mustPort(t, PortDownstream).Space)
	if string(std) != string([]uint8{CapPM, CapMSI, CapPCIe}) || len(ext) != 2 || ext[1] != ExtCapACS {
		t.Errorf("downstream port capabilities %x %x", std, ext)
	}
	// The O-NIC describes itself in its VSEC.
	f := mustONIC(t)
	for _, c := range f.Space.Caps() {
		if c.Extended && c.ID == ExtCapVSEC {
			hdr := f.Space.Read32(c.Offset + 4)
			if uint16(hdr) != ONICVSECID || hdr>>20 != 24 {
				t.Fatalf("VSEC header %#x", hdr)
			}
			b := f.Space.Bytes()
			info, err := DecodeONICInfo(b[c.Offset+8 : c.Offset+24])
			if err != nil || info != DefaultONICInfo {
				t.Fatalf("VSEC body decodes to %+v, %v", info, err)
			}
		}
	}
}

func TestPCIeCapabilityRegisters(t *testing.T) {
	f := mustONIC(t)
	var off int
	for _, c := range f.Space.Caps() {
		if !c.Extended && c.ID == CapPCIe {
			off = c.Offset
		}
	}
	s := f.Space
	if got := s.Read16(off+8) >> 5 & 7; got != 0 {
		t.Errorf("MPS after reset %d, want 0 (128 bytes)", got)
	}
	if got := s.Read16(off+8) >> 12 & 7; got != 2 {
		t.Errorf("MRRS after reset %d, want 2 (512 bytes)", got)
	}
	s.Write(off+8, 2, uint32(s.Read16(off+8))&^0x00E0|2<<5) // MPS 512
	if got := s.Read16(off+8) >> 5 & 7; got != 2 {
		t.Errorf("MPS not writable: %d", got)
	}
	if got := s.Read32(off+4) & 7; got != 3 {
		t.Errorf("MPS supported %d, want 3 (1024)", got)
	}
	ls := s.Read16(off + 0x12)
	if ls&0xF != 3 || ls>>4&0x3F != 16 {
		t.Errorf("link status %#x: want Gen3 x16", ls)
	}
	s.Write(off+0x12, 2, 0xFFFF) // link status is read-only apart from W1C bits
	if s.Read16(off+0x12) != ls {
		t.Error("link status changed under a software write")
	}
	s.Set16(off+0x0A, 0x000F) // device status: errors detected
	s.Write(off+0x0A, 2, 0x0005)
	if got := s.Read16(off + 0x0A); got != 0x000A {
		t.Errorf("device status W1C: %#x, want 0xa", got)
	}
}

func cfgReq(t *testing.T, k tlp.Kind, reg uint16, be uint8, data []byte) *tlp.TLP {
	t.Helper()
	f, typ, _ := tlp.FmtType(k, false, 0)
	r := &tlp.TLP{Fmt: f, Type: typ, Length: 1, RequesterID: tlp.NewID(0, 0, 0), Tag: 9,
		CompleterID: tlp.NewID(1, 0, 0), Register: reg, FirstBE: be, Data: data}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestHandleConfig(t *testing.T) {
	f := mustONIC(t)
	self := tlp.NewID(1, 0, 0)
	c := f.HandleConfig(cfgReq(t, tlp.CfgRd0, 0x00, 0xF, nil), self)
	if c.Kind() != tlp.CplD || c.Status != tlp.StatusSC || c.Tag != 9 || c.CompleterID != self ||
		!bytes.Equal(c.Data, []byte{0xCE, 0x0A, 0x01, 0x00}) || c.ByteCount != 4 {
		t.Fatalf("CfgRd0 of IDs: %v", &c)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("completion does not validate: %v", err)
	}
	// Write the cache line size byte only.
	c = f.HandleConfig(cfgReq(t, tlp.CfgWr0, 0x0C, 0b0001, []byte{0x10, 0xFF, 0xFF, 0xFF}), self)
	if c.Kind() != tlp.Cpl || c.Status != tlp.StatusSC {
		t.Fatalf("CfgWr0: %v", &c)
	}
	if f.Space.Read32(0x0C) != 0x00000010 {
		t.Fatalf("CfgWr0 wrote %#x", f.Space.Read32(0x0C))
	}
	// Extended register space is reachable.
	c = f.HandleConfig(cfgReq(t, tlp.CfgRd0, 0x100, 0xF, nil), self)
	if uint16(c.Data[0])|uint16(c.Data[1])<<8 != ExtCapAER {
		t.Fatalf("register 0x100: %x", c.Data)
	}
	// Not ready: CRS.
	f.Ready = false
	c = f.HandleConfig(cfgReq(t, tlp.CfgRd0, 0, 0xF, nil), self)
	if c.Kind() != tlp.Cpl || c.Status != tlp.StatusCRS {
		t.Fatalf("not ready: %v", &c)
	}
	f.Ready = true
	// A memory read sent to the config handler: UR.
	mr := tlp.TLP{Fmt: tlp.Fmt3DW, Length: 1, FirstBE: 0xF, Address: 0x1000, Tag: 3}
	c = f.HandleConfig(&mr, self)
	if c.Status != tlp.StatusUR || c.Kind() != tlp.Cpl || c.ByteCount != 4 {
		t.Fatalf("MRd to config handler: %v", &c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func writeDumps(t *testing.T) (string, []*Function) {
	t.Helper()
	onic := mustONIC(t)
	// Program the BARs and enable decoding as an OS would.
	s := onic.Space
	s.Write(0x10, 4, 0xF0000000)
	s.Write(0x18, 4, 0x0)
	s.Write(0x1C, 4, 0x4)
	s.Write(0x20, 4, 0xE0000000)
	s.Write(0x04, 2, 0x0006)
	port := mustPort(t, PortDownstream)
	port.Space.Write(0x18, 3, 0x050402) // primary 2, secondary 4, subordinate 5
	port.Space.Write(0x20, 4, 0xF0F0F000)
	var buf bytes.Buffer
	if err := WriteLspci(&buf, tlp.NewID(1, 0, 0), onic); err != nil {
		t.Fatal(err)
	}
	if err := WriteLspci(&buf, tlp.NewID(2, 1, 0), port); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.txt")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, []*Function{onic, port}
}

func TestReadLspciRoundTrip(t *testing.T) {
	path, fs := writeDumps(t)
	f, _ := os.Open(path)
	defer f.Close()
	ds, err := ReadLspci(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].ID != tlp.NewID(1, 0, 0) || ds[1].ID != tlp.NewID(2, 1, 0) {
		t.Fatalf("read %d functions", len(ds))
	}
	for i, d := range ds {
		if d.Len != SpaceSize || d.Bytes != fs[i].Space.Bytes() {
			t.Errorf("function %d: dump does not reproduce the space (len %d)", i, d.Len)
		}
	}
	if _, err := ReadLspci(strings.NewReader("01:00.0 x\n00: zz\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad hex accepted: %v", err)
	}
	if _, err := ReadLspci(strings.NewReader("garbage\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("garbage accepted: %v", err)
	}
}

// TestLspciDecodesDumps runs the real lspci on the dumps of the default
// O-NIC and of a switch downstream port and checks what it decodes.
func TestLspciDecodesDumps(t *testing.T) {
	lspci := tools.Require(t, "lspci")
	path, _ := writeDumps(t)
	out, err := exec.Command(lspci, "-F", path, "-vvv", "-nn").Output()
	if err != nil {
		t.Fatalf("lspci: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"01:00.0 Network controller [0280]: Device [0ace:0001] (rev 01)",
		"Subsystem: Device [0ace:0001]",
		"Control: I/O- Mem+ BusMaster+",
		"Interrupt: pin A",
		"Region 0: Memory at f0000000 (64-bit, non-prefetchable)",
		"Region 2: Memory at 400000000 (64-bit, prefetchable)",
		"Region 4: Memory at e0000000 (64-bit, prefetchable)",
		"Capabilities: [40] Power Management version 3",
		"MSI: Enable- Count=1/32 Maskable+ 64bit+",
		"MSI-X: Enable- Count=64 Masked-",
		"Vector table: BAR=0 offset=00008000",
		"PBA: BAR=0 offset=0000c000",
		"Express (v2) Endpoint",
		"MaxPayload 1024 bytes",
		"MaxPayload 128 bytes, MaxReadReq 512 bytes",
		"LnkCap:\tPort #0, Speed 8GT/s, Width x16",
		"LnkSta:\tSpeed 8GT/s, Width x16",
		"10BitTagComp- 10BitTagReq-", // PG213's 8-bit tags
		"AtomicOpsCap: 32bit+ 64bit+ 128bitCAS+",
		"Advanced Error Reporting",
		"ECRCGenCap+ ECRCGenEn- ECRCChkCap+ ECRCChkEn-",
		"Access Control Services",
		"ACSCap:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans-",
		"Vendor Specific Information: ID=0001 Rev=1 Len=018",
		"02:01.0 PCI bridge [0604]: Device [0ace:0106]",
		"Bus: primary=02, secondary=04, subordinate=05",
		"Memory behind bridge: f0000000-f0ffffff [size=16M]",
		"Prefetchable memory behind bridge",
		"[64-bit]",
		"Express (v2) Downstream Port (Slot+)",
		"LnkCap:\tPort #3, Speed 16GT/s, Width x8",
		"LLActRep+ BwNot+",
		"DLActive+",
		"SltCap:",
		"ACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+",
		"10BitTagComp+ 10BitTagReq+", // the Gen4 switch port's (§2.2.6.2: 16 GT/s must)
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lspci output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("lspci printed:\n%s", text)
	}
}
