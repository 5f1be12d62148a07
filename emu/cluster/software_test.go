package cluster

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/pcie"
	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
	"onic/tlp/pcap"
)

// softConfig is the two-party cluster without traffic generators, each
// host's root complex allowed to its O-NIC's registers, and onicA with a
// four-entry LUT in BAR4 (all entries off).
func softConfig() scenario.Config {
	c := scenario.TwoParty()
	c.Flows = nil
	for i := range c.ONICs {
		d := &c.ONICs[i].Manager.Access.Domains[0]
		d.Egress = append(d.Egress, "local")
		d.Ranges = append(d.Ranges, acl.RangeConfig{Base: 0, Size: 64 << 10, Read: true, Write: true})
	}
	c.ONICs[0].Manager.Translation.LUT = ntb.LUTConfig{BAR: 4, Entries: 4, EntrySize: 64 << 10}
	return c
}

// softRig is a cluster with software on both hosts; reads land in done.
type softRig struct {
	t    *testing.T
	cl   *Cluster
	a, b *Software
	done map[uint64]ReadResult
	irqs []Interrupt
}

func newSoftRig(t *testing.T) *softRig { return newSoftRigWith(t, nil) }

// newSoftRigWith is newSoftRig, with setup (if not nil) run on the cluster
// before the software attaches (to capture, say).
func newSoftRigWith(t *testing.T, setup func(*Cluster)) *softRig {
	t.Helper()
	cl, err := Build(softConfig())
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(cl)
	}
	r := &softRig{t: t, cl: cl, done: map[uint64]ReadResult{}}
	if r.a, err = cl.Attach("A", 1<<32, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if r.b, err = cl.Attach("B", 1<<32, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Software{r.a, r.b} {
		s.OnRead = func(rr ReadResult) { r.done[rr.ID] = rr }
		s.OnInterrupt = func(i Interrupt) { r.irqs = append(r.irqs, i) }
	}
	cl.Start()
	return r
}

// read reads n bytes at addr from s and runs the emulator until the data
// is back.
func (r *softRig) read(s *Software, addr uint64, n int) ReadResult {
	r.t.Helper()
	id := uint64(len(r.done) + 1000)
	if err := s.Read(id, addr, n); err != nil {
		r.t.Fatal(err)
	}
	for step := 0; step < 1000; step++ {
		if rr, ok := r.done[id]; ok {
			return rr
		}
		r.cl.Advance(r.cl.Now() + time.Microsecond)
	}
	r.t.Fatalf("read of %d bytes at %#x never finished", n, addr)
	return ReadResult{}
}

func (r *softRig) reg(s *Software, bar0, off uint64) uint32 {
	r.t.Helper()
	rr := r.read(s, bar0+off, 4)
	return binary.LittleEndian.Uint32(rr.Data)
}

func (r *softRig) write(s *Software, addr uint64, data []byte) {
	r.t.Helper()
	if err := s.Write(addr, data); err != nil {
		r.t.Fatal(err)
	}
	r.cl.Advance(r.cl.Now() + 5*time.Microsecond)
}

// TestSoftwareEnumerates: software finds the O-NIC by scanning
// configuration space as an OS does and sizes its BARs the standard way.
func TestSoftwareEnumerates(t *testing.T) {
	r := newSoftRig(t)
	var found tlp.ID
	n := 0
	for bus := range 256 {
		for dev := range 32 {
			id := tlp.NewID(uint8(bus), uint8(dev), 0)
			v, _, err := r.a.ConfigRead(0, id, 0, 4)
			if err != nil {
				t.Fatal(err)
			}
			if v == 0xFFFFFFFF {
				continue
			}
			n++
			if v == uint32(pcie.ONICDeviceID)<<16|uint32(pcie.ONICVendorID) {
				found = id
			}
		}
	}
	fn := r.a.ONICFunction("onicA")
	if found == 0 || n < 2 {
		t.Fatalf("scan found %d functions, the O-NIC at %v", n, found)
	}
	// Size BAR0 (64-bit): write all ones, read back, restore.
	lo, _, _ := r.a.ConfigRead(0, found, 0x10, 4)
	hi, _, _ := r.a.ConfigRead(0, found, 0x14, 4)
	if uint64(hi)<<32|uint64(lo&^0xF) != fn.BARAddress(0) {
		t.Fatalf("BAR0 reads %#x %#x, the function has it at %#x", hi, lo, fn.BARAddress(0))
	}
	if _, err := r.a.ConfigWrite(0, found, 0x10, 4, 0xFFFFFFFF); err != nil {
		t.Fatal(err)
	}
	sz, _, _ := r.a.ConfigRead(0, found, 0x10, 4)
	if size := ^(sz &^ 0xF) + 1; size != 64<<10 {
		t.Errorf("BAR0 sizes to %#x", size)
	}
	if _, err := r.a.ConfigWrite(0, found, 0x10, 4, lo); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.a.ConfigWrite(0, found, 0x10, 3, 0); st != 0 {
		t.Error("a 3-byte config write was taken")
	}
	if _, err := r.a.ConfigWrite(0, found, 0x10, 3, 0); err == nil {
		t.Error("a 3-byte config write is not an error")
	}
	if _, _, err := r.a.ConfigRead(3, found, 0, 4); err == nil {
		t.Error("segment 3 of a one-segment host is not an error")
	}
}

// TestSoftwareMMIO: register reads come back with the register map's
// values, a peer's writes through the window land in the other host's
// DMA memory byte for byte, reads through the window return that memory,
// and failures look as on hardware: a master abort and a window miss
// read all-ones, a denied access is counted.
func TestSoftwareMMIO(t *testing.T) {
	r := newSoftRig(t)
	barA := r.a.ONICFunction("onicA").BARAddress(0)
	barB2 := r.b.ONICFunction("onicB").BARAddress(2)
	if id := r.reg(r.a, barA, pmgr.RegID); id != pmgr.IDValue {
		t.Fatalf("ID register reads %#x", id)
	}
	if caps := r.reg(r.a, barA, pmgr.RegCaps); caps != 1|4<<8|16<<24 {
		t.Errorf("CAPS reads %#x", caps)
	}
	// B writes 100 bytes at an odd offset through its window; they land
	// in A's memory at 4 GiB + the offset, and nothing else changes.
	msg := bytes.Repeat([]byte("onic!"), 20)
	r.write(r.b, barB2+0x1003, msg)
	memA := r.a.mem
	if !bytes.Equal(memA[0x1003:0x1003+100], msg) || memA[0x1002] != 0 || memA[0x1003+100] != 0 {
		t.Fatalf("A's memory after B's write: % x", memA[0x1000:0x1070])
	}
	// B reads it back through the window, 2 KB across RCB boundaries.
	copy(memA[0x2000:], bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 300))
	rr := r.read(r.b, barB2+0x2001, 2047)
	if rr.Status != tlp.StatusSC || !bytes.Equal(rr.Data, memA[0x2001:0x2001+2047]) {
		t.Fatalf("read back through the window: status %v, % x...", rr.Status, rr.Data[:16])
	}
	if rr.Latency < 500*time.Nanosecond { // 300 ns of memory and 40 m of fibre at least
		t.Errorf("a remote read took %v", rr.Latency)
	}
	// A master abort: nothing claims the address.
	if err := r.a.Read(1, 0x10, 4); err != nil {
		t.Fatal(err)
	}
	if d := r.done[1]; d.Status != tlp.StatusUR || binary.LittleEndian.Uint32(d.Data) != 0xFFFFFFFF || r.a.MasterAborts != 1 {
		t.Errorf("master abort: %+v, %d counted", d, r.a.MasterAborts)
	}
	// A LUT entry that is off: UR, all-ones, counted as mapping-disabled.
	barA4 := r.a.ONICFunction("onicA").BARAddress(4)
	if rr := r.read(r.a, barA4+0x10, 8); rr.Status != tlp.StatusUR || !bytes.Equal(rr.Data, bytes.Repeat([]byte{0xFF}, 8)) {
		t.Errorf("read through a disabled LUT entry: %+v", rr)
	}
	if n := r.reg(r.a, barA, pmgr.RegCount0+4*uint64(3)); n != 1 {
		t.Errorf("COUNT_MAPPING_DISABLED reads %d", n)
	}
	// Program LUT entry 1 to port A at 8 GiB, outside the domain's
	// ranges: the access is then denied by the security check.
	for _, w := range [][2]uint64{{pmgr.RegLUTIndex, 1}, {pmgr.RegLUTAddrLo, 0}, {pmgr.RegLUTAddrHi, 2}, {pmgr.RegLUTCtrl, 1 | uint64(ntb.EgressPortA)<<1}, {pmgr.RegLUTCommit, 1}} {
		r.write(r.a, barA+w[0], binary.LittleEndian.AppendUint32(nil, uint32(w[1])))
	}
	if e := r.cl.onics[0].mgr.Tables().LUT().Entries[1]; !e.Enabled || e.Egress.Kind != ntb.EgressPortA || e.Translated != 2<<32 {
		t.Fatalf("LUT entry 1 after programming: %+v", e)
	}
	if rr := r.read(r.a, barA4+64<<10+8, 4); rr.Status != tlp.StatusUR {
		t.Errorf("denied read: %+v", rr)
	}
	if n := r.reg(r.a, barA, pmgr.RegCount0+4*uint64(5)); n != 1 {
		t.Errorf("COUNT_DENIED reads %d", n)
	}
	// Window enables: turn window 0 off through WIN_EN_LO; B's write
	// then misses, the write is dropped and nothing lands.
	barB := r.b.ONICFunction("onicB").BARAddress(0)
	r.write(r.b, barB+pmgr.RegWinEnLo, []byte{0, 0, 0, 0})
	if v := r.reg(r.b, barB, pmgr.RegWinEnLo); v != 0 {
		t.Errorf("WIN_EN_LO reads %#x after clearing it", v)
	}
	r.write(r.b, barB2+0x3000, []byte{9, 9, 9, 9})
	if memA[0x3000] != 0 {
		t.Error("a write through a disabled window landed")
	}
	rep, err := r.cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	var soft *FlowReport
	for i := range rep.Flows {
		if rep.Flows[i].Name == "B.software" {
			soft = &rep.Flows[i]
		}
	}
	if soft == nil || soft.Op != "software" || soft.Transfers == 0 || rep.Accounting.InFlight != 0 {
		t.Errorf("report: %+v, accounting %+v", soft, rep.Accounting)
	}
}

// TestSoftwareDetach: a host's software detaching mid-read releases the
// host (another may attach), the read still ends and is accounted, and
// nothing touches the old memory after.
func TestSoftwareDetach(t *testing.T) {
	r := newSoftRig(t)
	barB2 := r.b.ONICFunction("onicB").BARAddress(2)
	if err := r.b.Read(7, barB2, 4096); err != nil {
		t.Fatal(err)
	}
	old := r.b.mem
	r.b.Detach()
	if err := r.b.Write(barB2, []byte{1}); err == nil {
		t.Error("a detached software could still write")
	}
	r.write(r.a, r.a.ONICFunction("onicA").BARAddress(2), []byte{1, 2, 3, 4})
	r.cl.Advance(r.cl.Now() + 20*time.Microsecond)
	if _, ok := r.done[7]; ok {
		t.Error("a detached software heard its read finish")
	}
	if old[0] != 0 {
		t.Error("a write landed in a detached software's memory")
	}
	b2, err := r.cl.Attach("B", 0, make([]byte, 4096))
	if err != nil {
		t.Fatal(err)
	}
	_ = b2
	if _, err := r.cl.Attach("B", 0, nil); err == nil {
		t.Error("two softwares on one host")
	}
	rep, err := r.cl.Report(0)
	if err != nil || rep.Accounting.InFlight != 0 || rep.Accounting.Delivered != rep.Accounting.Injected {
		t.Errorf("accounting after detaching: %+v %v", rep.Accounting, err)
	}
}

// TestCaptureCarriesSoftwareBytes: a host program's writes are captured
// with the bytes it wrote (a window write to the peer, as it leaves the
// far port), not zeros.
func TestCaptureCarriesSoftwareBytes(t *testing.T) {
	var pc bytes.Buffer
	r := newSoftRigWith(t, func(cl *Cluster) {
		if err := cl.Capture(&pc, []string{"onicB.host", "onicA.port-a"}); err != nil {
			t.Fatal(err)
		}
	})
	msg := bytes.Repeat([]byte("onic!"), 20)
	r.write(r.b, r.b.ONICFunction("onicB").BARAddress(2)+0x1004, msg)
	if _, err := r.cl.Report(0); err != nil {
		t.Fatal(err)
	}
	rd, err := pcap.NewReader(&pc)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	var got tlp.TLP
	for {
		rec, err := rd.Next(&got)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind() == tlp.MWr {
			seen = append(seen, fmt.Sprintf("tap %d %q", rec.Tap.Tap, got.Data))
		}
	}
	// On B's host link and again as it reaches A's port A.
	if len(seen) != 2 || !strings.Contains(seen[0], string(msg)) || !strings.Contains(seen[1], string(msg)) {
		t.Errorf("writes captured: %v", seen)
	}
}

// TestDMAOutsideMemory: with software attached with 1 MiB of memory, that
// is all of the host a device can reach. A peer's write past its end,
// though inside the peer's grant, is an Unsupported Request at the host's
// root complex — dropped, counted, not "delivered" — and a read there
// completes with UR (all ones), not zeros. Memory over the MSI window is refused at Attach.
func TestDMAOutsideMemory(t *testing.T) {
	r := newSoftRig(t)
	barB2 := r.b.ONICFunction("onicB").BARAddress(2)
	r.write(r.b, barB2+2<<20, []byte{1, 2, 3, 4})
	r.write(r.b, barB2+3<<20, []byte{5, 6, 7, 8})
	if rr := r.read(r.b, barB2+4<<20, 8); rr.Status != tlp.StatusUR || !bytes.Equal(rr.Data, bytes.Repeat([]byte{0xFF}, 8)) {
		t.Errorf("read outside A's memory: %+v", rr)
	}
	if rr := r.read(r.b, barB2+0x100, 4); rr.Status != tlp.StatusSC {
		t.Errorf("read inside A's memory after the aborts: %+v", rr)
	}
	rep, err := r.cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	var a HostReport
	for _, h := range rep.Hosts {
		if h.Name == "A" {
			a = h
		}
	}
	if a.OutsideMemory != 3 || a.ReceivedBytes != 0 {
		t.Errorf("host A: %d outside its memory, %d bytes received; want 3 and 0", a.OutsideMemory, a.ReceivedBytes)
	}
	if rep.Accounting.Dropped < 2 {
		t.Errorf("the two lost writes are not dropped in the accounting: %+v", rep.Accounting)
	}
	cl, err := Build(softConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Attach("A", 0xFEF0_0000-4096, make([]byte, 8192)); err == nil || !strings.Contains(err.Error(), "overlaps the MSI window") {
		t.Errorf("memory over the MSI window: %v", err)
	}
}

// TestBusMasterEnable: with Bus Master Enable clear in the O-NIC's
// Command register the O-NIC issues nothing upstream: a peer's write into
// the host is dropped (counted bus-master-disabled) and its read completes with
// UR; set again, they go through.
func TestBusMasterEnable(t *testing.T) {
	r := newSoftRig(t)
	var id tlp.ID
	for _, o := range r.cl.onics {
		if o.cfg.Name == "onicA" {
			id = o.self
		}
	}
	barB2 := r.b.ONICFunction("onicB").BARAddress(2)
	setCmd := func(v uint32) {
		if st, err := r.a.ConfigWrite(0, id, 0x04, 2, v); err != nil || st != tlp.StatusSC {
			t.Fatalf("Command write %#x: %v %v", v, st, err)
		}
	}
	setCmd(0x0002) // memory space only
	r.write(r.b, barB2+0x40, []byte{1, 2, 3, 4})
	if rr := r.read(r.b, barB2+0x40, 4); rr.Status != tlp.StatusUR {
		t.Errorf("read with bus mastering off: %+v", rr)
	}
	if m := r.a.mem; !bytes.Equal(m[0x40:0x44], make([]byte, 4)) {
		t.Errorf("the write landed with bus mastering off: % x", m[0x40:0x44])
	}
	setCmd(0x0006)
	r.write(r.b, barB2+0x40, []byte{1, 2, 3, 4})
	if m := r.a.mem; !bytes.Equal(m[0x40:0x44], []byte{1, 2, 3, 4}) {
		t.Errorf("the write with bus mastering on: % x", m[0x40:0x44])
	}
	rep, err := r.cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.ONICs[0].Manager["bus-master-disabled"]; rep.ONICs[0].Name != "onicA" || n != 2 {
		t.Errorf("%s counts %d bus-master-disabled, want 2", rep.ONICs[0].Name, n)
	}
}
