package cardsim

import (
	"slices"
	"testing"

	"onic/emu/hostif"
	"onic/emu/scenario"
	pmgr "onic/pcie/manager"
)

// TestReadAfterRegisterWrite: host A points LUT entry 1 outside its
// domain's ranges (five register writes, the last the commit) and at once
// reads through the entry, with nothing between. The read must not pass
// the posted writes (PCIe §2.4.1): it is denied by the access check
// (COUNT_DENIED), as the emulator's model decides, not refused as a
// disabled entry by a LUT the commit has not reached. The generated card
// failed this — its reads were translated while the commit was still on
// its way to the registers — until the register fence (designs/internal/
// card, Build).
func TestReadAfterRegisterWrite(t *testing.T) {
	var counts [2][]uint32
	for k, rtl := range []bool{false, true} {
		socket, stop := serve(t, buildOn(t, scenario.HostInterface(), rtl))
		c, err := hostif.Dial(socket, hostif.ClientOptions{Host: "A"})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := c.ONICs(0)
		if err != nil {
			t.Fatal(err)
		}
		regs, _ := c.BAR(0, ids[0], 0)
		lut, _ := c.BAR(0, ids[0], 4)
		for _, w := range [][2]uint64{{pmgr.RegLUTIndex, 1}, {pmgr.RegLUTAddrLo, 0}, {pmgr.RegLUTAddrHi, 2},
			{pmgr.RegLUTCtrl, 1 | 1<<1}, {pmgr.RegLUTCommit, 1}} { // enabled, port A; 8 GiB
			if err := c.Write32(regs+w[0], uint32(w[1])); err != nil {
				t.Fatal(err)
			}
		}
		b, st, err := c.Read(lut+0x10000+0x100, 8)
		if err != nil || st.String() != "UR" || !slices.Equal(b, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) {
			t.Fatalf("rtl %v: the read gives %v % x (%v)", rtl, st, b, err)
		}
		for i := range pmgr.Reasons() {
			v, err := c.Read32(regs + uint64(pmgr.RegCount0) + 4*uint64(i))
			if err != nil {
				t.Fatal(err)
			}
			counts[k] = append(counts[k], v)
		}
		c.Close()
		stop()
	}
	if counts[0][pmgr.Denied] != 1 || !slices.Equal(counts[0], counts[1]) {
		t.Fatalf("COUNT_* by reason %v: the model %v, the card %v", pmgr.Reasons(), counts[0], counts[1])
	}
}
