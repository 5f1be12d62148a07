package card

import (
	"encoding/binary"
	"testing"

	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// onicFunction is the tests' O-NIC function, as the emulator builds it.
func onicFunction(t testing.TB) *pcie.Function {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// config is the generator's input for O-NIC i of the two-party scenario.
func config(t testing.TB, i int) manager.Config {
	return manager.Config{Manager: scenario.TwoParty().ONICs[i].Manager, BARs: onicFunction(t).MemorySizes()}
}

// design builds O-NIC i of the two-party scenario's manager.
func design(t testing.TB, i int) *manager.Design {
	d, err := manager.Build(config(t, i))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testLink trains in tens of cycles.
func testLink(t testing.TB) *ir.Module {
	l, err := optlink.Module(optlink.Config{TrainCycles: 32, ReplayCycles: 400, LostCycles: 2000})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// dut is one simulated module with helpers that fail the test.
type dut struct {
	t testing.TB
	*sim.Sim
}

func newDUT(t testing.TB, m *ir.Module) *dut {
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	d := &dut{t, s}
	if m.HasInput("cfg_function_status") {
		d.drive("cfg_function_status", 0x6) // PF0: Memory Space and Bus Master Enable set
	}
	if m.HasInput("pcie_tfc_nph_av") {
		d.drive("pcie_tfc_nph_av", 15) // the block has credit: 15 or more
		d.drive("pcie_tfc_npd_av", 15)
	}
	if m.HasInput("cfg_max_payload") {
		d.drive("cfg_max_payload", 1) // MPS 256, as the scenarios' hosts set it
	}
	return d
}

func (d *dut) drive(name string, v ...uint64) {
	if err := d.Drive(name, v); err != nil {
		d.t.Fatal(err)
	}
}

func (d *dut) get(name string) []uint64 {
	v, err := d.GetWords(name)
	if err != nil {
		d.t.Fatal(err)
	}
	return v
}

func (d *dut) bit(name string) bool { return d.get(name)[0]&1 == 1 }

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// words packs bytes into n bits of little-endian words.
func words(b []byte, n int) []uint64 {
	w := make([]uint64, n/64)
	var buf [64]byte
	copy(buf[:], b)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(buf[8*i:])
	}
	return w
}

// bases are where the tests' hosts enumerated the O-NIC's BARs:
// size-aligned addresses (the RTL needs only the BAR index the block
// reports and the address's offset bits).
var bases = [6]uint64{0: 0x2_0000_0000, 2: 0x4_0000_0000, 4: 0x3_0000_0000}

// modelOf is the emulator's manager for c with ID self, its function's
// BARs at bases.
func modelOf(t testing.TB, c manager.Config, self tlp.ID) (*pmgr.Manager, *pcie.Function) {
	f := onicFunction(t)
	for i, b := range f.BARs {
		if b.Kind == pcie.BARMem64 {
			f.Space.Write(0x10+4*i, 4, uint32(bases[i]))
			f.Space.Write(0x14+4*i, 4, uint32(bases[i]>>32))
		}
	}
	f.Space.Write(0x04, 2, 0x0006) // memory space and bus master enabled, as enumeration leaves them
	mdl, err := pmgr.New(c.Manager, f, self)
	if err != nil {
		t.Fatal(err)
	}
	return mdl, f
}

// readCompletion is the successful answer of the register BAR to read x:
// a CplD with data, its Byte Count and Lower Address from the byte
// enables (PCIe §2.2.9), as the emulator's O-NIC answers.
func readCompletion(x *tlp.TLP, self tlp.ID, data []byte) tlp.TLP {
	c := pcie.Completion(x, self, tlp.StatusSC, data)
	bc, la := tlp.ReadByteCount(x.Address, x.Length, x.FirstBE, x.LastBE)
	c.ByteCount, c.LowerAddress = uint16(bc&0xFFF), la
	return c
}
