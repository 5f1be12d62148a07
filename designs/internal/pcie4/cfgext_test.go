package pcie4

import (
	"encoding/binary"
	"strings"
	"testing"

	"onic/hdlgen/sim"
	"onic/pcie"
	"onic/pcie/pg213"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// emulatorDW is configuration Dword reg of f as the emulator's host reads
// it: a CfgRd0 answered by f.
func emulatorDW(t *testing.T, f *pcie.Function, reg int) uint32 {
	fm, typ, _ := tlp.FmtType(tlp.CfgRd0, false, 0)
	self := tlp.NewID(1, 0, 0)
	req := tlp.TLP{Fmt: fm, Type: typ, Length: 1, CompleterID: self, Register: uint16(4 * reg), FirstBE: 0xF}
	c := f.HandleConfig(&req, self)
	if c.Status != tlp.StatusSC || len(c.Data) != 4 {
		t.Fatalf("emulator's CfgRd0 of %#x: %v", 4*reg, &c)
	}
	return binary.LittleEndian.Uint32(c.Data)
}

// TestCfgExt: every configuration Dword the block can hand over (all
// 1,024) is read through onic_pcie4_cfg_ext, with reads on back-to-back
// and spaced cycles. Only the user extended space (0x480-0x4FF) is
// answered, one cycle after the read, exactly once; the rest never
// raises cfg_ext_read_data_valid. What the card answers is the O-NIC's
// description capability, byte for byte what the emulator's host reads at
// that capability's place in its configuration space, and software
// walking the chain from 0x480 decodes it to the O-NIC's description.
func TestCfgExt(t *testing.T) {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	words, err := pg213.UserExtended(f)
	if err != nil {
		t.Fatal(err)
	}
	m := CfgExtModule(words)
	verilator.Lint(t, m)
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	drive := func(name string, v uint64) {
		if err := s.Drive(name, []uint64{v}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) uint64 {
		v, err := s.GetWords(name)
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	// A read presented before a clock edge is answered after it: the
	// register the block samples on the next edge.
	got := map[int]uint32{}
	for reg := range 1024 {
		drive("cfg_ext_read_received", 1)
		drive("cfg_ext_register_number", uint64(reg))
		s.Step()
		valid := get("cfg_ext_read_data_valid") == 1
		if valid != pg213.InUserExtended(reg) {
			t.Fatalf("read of Dword %#x: cfg_ext_read_data_valid %v on the next cycle", reg, valid)
		}
		if valid {
			got[reg] = uint32(get("cfg_ext_read_data"))
		}
		if reg%3 == 0 { // a quiet cycle now and then: valid must fall
			drive("cfg_ext_read_received", 0)
			s.Step()
			if get("cfg_ext_read_data_valid") != 0 {
				t.Fatalf("after Dword %#x: valid held with no read", reg)
			}
		}
	}
	if len(got) != pg213.ExtRegs {
		t.Fatalf("%d Dwords answered, want %d", len(got), pg213.ExtRegs)
	}
	// Against the emulator's configuration space.
	off := f.CapOffset(pcie.ExtCapVSEC, true)
	if off == 0 {
		t.Fatal("the O-NIC's function has no VSEC")
	}
	n := int(emulatorDW(t, f, off/4+1) >> 20) // VSEC length in bytes
	for j := range 32 {
		want := uint32(0)
		if 4*j < n {
			want = emulatorDW(t, f, off/4+j)
		}
		if got[pg213.ExtFirstReg+j] != want {
			t.Errorf("Dword %#x: card %#08x, emulator %#08x (at %#x)", 4*(pg213.ExtFirstReg+j), got[pg213.ExtFirstReg+j], want, off+4*j)
		}
	}
	// As software finds it: an extended capability at 0x480, VSEC ID and
	// revision in its second Dword, the body after.
	hdr, vh := got[pg213.ExtFirstReg], got[pg213.ExtFirstReg+1]
	if hdr&0xFFFF != pcie.ExtCapVSEC || hdr>>20 != 0 || vh&0xFFFF != pcie.ONICVSECID || vh>>16&15 != pcie.ONICVSECRev {
		t.Fatalf("capability at 0x480: header %#08x, VSEC header %#08x", hdr, vh)
	}
	body := make([]byte, 0, n-8)
	for j := 2; 4*j < n; j++ {
		body = binary.LittleEndian.AppendUint32(body, got[pg213.ExtFirstReg+j])
	}
	info, err := pcie.DecodeONICInfo(body)
	if err != nil || info != pcie.DefaultONICInfo {
		t.Fatalf("description read from the card: %+v, %v; want %+v", info, err, pcie.DefaultONICInfo)
	}
}

// TestUserExtendedChains: a function with two VSECs gets both, chained
// from 0x480, the second's pointer ending the list; one whose VSECs do
// not fit the 128 bytes is refused.
func TestUserExtendedChains(t *testing.T) {
	f, err := pcie.NewEndpoint(pcie.Config{Name: "two", VendorID: 0x0ACE, DeviceID: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddVSEC(7, 1, make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddAER(false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddVSEC(8, 2, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	w, err := pg213.UserExtended(f)
	if err != nil {
		t.Fatal(err)
	}
	if w[0]>>20 != 0x490 || w[1]&0xFFFF != 7 || w[4]&0xFFFF != pcie.ExtCapVSEC || w[4]>>20 != 0 || w[5]&0xFFFF != 8 || w[6] != 0x04030201 {
		t.Fatalf("chain: %#x", w[:8])
	}
	big, err := pcie.NewEndpoint(pcie.Config{Name: "big", VendorID: 0x0ACE, DeviceID: 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := big.AddVSEC(7, 1, make([]byte, 124)); err != nil {
		t.Fatal(err)
	}
	if _, err := pg213.UserExtended(big); err == nil {
		t.Fatal("132 bytes of VSEC accepted into 128")
	}
}

// TestCfgExtPCIE4C: on the HBM parts' PCIE4C block the user extended
// space is 0xE80-0xFFF (PG213): the responder built for it answers every
// Dword there, exactly those, with the O-NIC's description capability
// moved to 0xE80 (its header and body the emulator's bytes, its next
// pointer in that space or 0) and zeros after it, and lints clean.
func TestCfgExtPCIE4C(t *testing.T) {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := pg213.ExtSpaceAt(0xE80)
	if err != nil {
		t.Fatal(err)
	}
	words, err := pg213.UserExtendedIn(f, sp)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := pg213.UserExtended(f)
	m := CfgExtModuleIn(sp, words)
	verilator.Lint(t, m)
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	for reg := range 1024 {
		s.Drive("cfg_ext_read_received", []uint64{1})
		s.Drive("cfg_ext_register_number", []uint64{uint64(reg)})
		s.Step()
		v, _ := s.Get("cfg_ext_read_data_valid")
		in := reg >= 0x3A0
		if (v == 1) != in {
			t.Fatalf("Dword %#x: valid %d", reg, v)
		}
		if !in {
			continue
		}
		d, _ := s.Get("cfg_ext_read_data")
		want := uint32(0)
		if j := reg - 0x3A0; j < len(old) {
			want = old[j]
			if j == 0 {
				// The capability's header: its next pointer is the
				// block's space's, here none after it.
				want &= 0x000FFFFF
			}
		}
		if uint32(d) != want {
			t.Fatalf("Dword %#x: %#08x, want %#08x", reg, d, want)
		}
	}
	if _, err := pg213.ExtSpaceAt(0x500); err == nil || !strings.Contains(err.Error(), "0x480") {
		t.Errorf("0x500: %v", err)
	}
}
