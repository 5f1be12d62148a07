package card

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"onic/desc"
	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/emu/scenario"
	"onic/hdlgen/ir"
	"onic/kernels"
	"onic/pcie"
	"onic/testbenches/replay"
	"onic/testbenches/tools"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// slotCard builds the card of O-NIC o of a scenario with its kernel
// slots inside, o's kernels loaded.
func slotCard(t testing.TB, o scenario.ONICConfig, link *ir.Module) *ir.Module {
	o.Defaults()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := manager.Build(manager.Config{Manager: o.Manager, BARs: f.MemorySizes(), Hold: o.DownPolicy == "hold", HoldTLPs: o.HoldTLPs})
	if err != nil {
		t.Fatal(err)
	}
	parts, err := PartsOf(d, link, onicFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	if parts.Slots, err = SlotsOf(d, kernelsOf(t, o)); err != nil {
		t.Fatal(err)
	}
	top := Build("onic_card_"+o.Name, parts)
	if err := top.Check(); err != nil {
		t.Fatal(err)
	}
	return top
}

// kernelsOf is o's kernels, resolved.
func kernelsOf(t testing.TB, o scenario.ONICConfig) []desc.Kernel {
	t.Helper()
	d, err := desc.FromScenario(o, "onics["+o.Name+"]")
	if err != nil {
		t.Fatal(err)
	}
	return d.Kernels
}

// offloadReplayFlag is how many cycles of TestOffloadAgainstEmulator
// are replayed in Icarus and Verilator (make soak replays the whole
// task).
var offloadReplayFlag = flag.Int("offload-replay", 1500, "cycles of TestOffloadAgainstEmulator replayed in the HDL simulators")

func offloadONIC(t testing.TB) scenario.ONICConfig {
	c, err := scenario.Lookup("offload")
	if err != nil {
		t.Fatal(err)
	}
	return c.ONICs[0]
}

func TestSlotsLint(t *testing.T) {
	verilator.Lint(t, slotCard(t, offloadONIC(t), testLink(t)))
}

// TestOffloadAgainstEmulator: FLEET's offload scenario (host A runs 256
// KiB fp32-to-bf16 tasks on the kernel in slot 1 of its O-NIC: ARG0 and
// a doorbell to the slot's task shell, the data through a window into
// the slot, the result written back into A's memory, then the shell's
// completion record and an MSI-X message) on a generated card with its
// kernel slots inside. The host's first task as the emulator captured it
// goes in on CQ, with the register values and payloads the emulator's
// traffic does not carry (after the writes that enable the shell, give it
// the record's address and set the slot's MSI-X table entry to the
// message's address and data, with MSI-X enabled in the function, which
// the emulator's task flow takes as configured). The message leaves
// through the PCIe block's MSI-X interface (pg213.MSIX in the harness),
// after the record has left RQ. What the card sends on RQ is
// what reached host A in the emulator, header for header and in order:
// every output write, then the record, then the message; each write's
// bytes are the kernel's reference output for its input, and the record
// reports the task.
func TestOffloadAgainstEmulator(t *testing.T) {
	tools.Long(t)
	sent, got := emulatorRun(t, "offload")
	o := offloadONIC(t)
	top := slotCard(t, o, testLink(t))
	p := newNetRecorded(t, []*ir.Module{top}, nil, *offloadReplayFlag)
	rec := p.rec
	slot := o.Kernels[0].Slot
	k, err := kernels.Lookup(o.Kernels[0].Name)
	if err != nil {
		t.Fatal(err)
	}

	// The first task's requests: up to the second ARG0 write.
	var task []tlp.TLP
	page := uint64(0)
	for i, c := range sent[0] {
		x := c.t
		if i == 0 {
			page = x.Address - kernels.TaskArg0
		} else if x.Address == page+kernels.TaskArg0 {
			break
		}
		task = append(task, x)
	}
	if len(task) < 3 || task[1].Address != page+kernels.TaskDoorbell {
		t.Fatalf("the emulator's host A did not start with ARG0, the doorbell and data: %d requests", len(task))
	}
	data := task[2:]
	// What reached host A for it: a write per data write, the record and
	// the message.
	if len(got[0]) < len(data)+2 {
		t.Fatalf("host A got %d TLPs in the emulator, want at least %d", len(got[0]), len(data)+2)
	}
	want := got[0][:len(data)+2]
	record, msg := want[len(data)].t, want[len(data)+1].t
	bar0 := page - kernels.TaskPage(slot)
	le := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	regWrite := func(off uint64, v uint32) tlp.TLP {
		return tlp.TLP{Fmt: tlp.Fmt3DWData, Length: 1, FirstBE: 0xF, RequesterID: task[0].RequesterID, Address: page + off, Data: le(v)}
	}
	entry := pcie.ONICMSIXTableOffset + 16*uint64(slot) - kernels.TaskPage(slot) // (from the page)
	const tag = 0x2a
	size := uint32(0)
	for _, x := range data {
		size += 4 * uint32(x.Length)
	}
	setup := []tlp.TLP{
		regWrite(kernels.TaskCtrl, 3), // enable, interrupts
		regWrite(kernels.TaskCplLo, uint32(record.Address)), regWrite(kernels.TaskCplHi, uint32(record.Address>>32)),
		regWrite(entry, uint32(msg.Address)), regWrite(entry+4, uint32(msg.Address>>32)),
		regWrite(entry+8, 0x41), regWrite(entry+12, 0), // data; Vector Control: unmasked
	}
	_ = bar0
	p.setMSIX(0, true, false)
	r := rand.New(rand.NewPCG(31, 32))
	var in [][]byte
	for i := range task {
		x := &task[i]
		x.Tag &= 0xFF // PG213's CQ descriptor has 8 tag bits; the emulator's host uses 10
		switch i {
		case 0:
			x.Data = le(size)
		case 1:
			x.Data = le(tag)
		default:
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
			in = append(in, x.Data)
		}
	}
	rang := -1
	for i, x := range append(setup, task...) {
		bar := pcie.ONICWindowBAR
		if x.Address >= page-kernels.TaskPage(slot) && x.Address < page-kernels.TaskPage(slot)+0x10000 {
			bar = pcie.ONICRegBAR
		}
		if i == len(setup)+1 {
			p.requestAt(0, &x, bar, func(c int) { rang = c })
			continue
		}
		p.request(0, &x, bar)
	}
	p.run("the task's writes, record and message reach RQ", 40*len(data)+20000, func() bool { return len(p.rq[0]) >= len(want) })

	for i, c := range want {
		have, w := p.rq[0][i], c.t
		switch {
		case i < len(data):
			ref, err := k.Reference([][]byte{in[i]})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(have.Data, ref) {
				t.Fatalf("output write %d: %d bytes, not the kernel's reference for its input (%d bytes)", i, len(have.Data), len(ref))
			}
		case i == len(data):
			rec, err := kernels.ParseTaskRecord(have.Data)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Tag != tag || rec.BytesIn != size || rec.BytesOut != size/2 || int(rec.Packets) != len(data) || rec.Count != 1 {
				t.Errorf("the record says %+v; want tag %#x, %d bytes in, %d out, %d packets, task 1", rec, tag, size, size/2, len(data))
			}
		default:
			if binary.LittleEndian.Uint32(have.Data) != 0x41 {
				t.Errorf("the message's data is %x, want 41000000", have.Data)
			}
		}
		have.Data, w.Snapped = nil, false
		w.Tag &= 0xFF
		if i >= len(data) {
			// The shell's own writes carry tag 0, the emulator's a count
			// of its own: a posted write's tag identifies nothing.
			w.Tag = have.Tag
		}
		if have.String() != w.String() {
			t.Fatalf("TLP %d to host A:\n %s\nin the emulator\n %s", i, have.String(), w.String())
		}
	}
	for _, pt := range top.Ports() {
		if pt.Output && strings.HasPrefix(pt.Name, "slot") && p.cards[0].get(pt.Name)[0] != 0 {
			t.Errorf("%s: %d, want 0", pt.Name, p.cards[0].get(pt.Name)[0])
		}
	}
	// The task's time, from the doorbell entering the O-NIC to the
	// message leaving it (the emulator's from the doorbell leaving the
	// host to the message reaching it: its host link both ways).
	emu := want[len(want)-1].at - sent[0][1].at
	rtl := time.Duration(4*(p.rqCycle[0][len(want)-1]-rang)) * time.Nanosecond
	t.Logf("%d data writes of %d bytes in, %d TLPs to the host; doorbell to message: emulator %v, RTL %v", len(data), 4*task[2].Length, len(want), emu, rtl)
	// The card's Verilog, replayed with every input it saw, does what the
	// IR simulation did, cycle for cycle, in Icarus and in Verilator.
	replay.Verify(t, rec)
	t.Logf("replayed in Icarus and Verilator: %d cycles alike", rec.Cycles())
	if rtl > emu*3/2 || rtl < emu/2 {
		t.Errorf("the RTL's task takes %v, the emulator's %v: not within half to one and a half times", rtl, emu)
	}
}

// TestPipelineKernelAgainstEmulator: the last stage of FLEET's pipeline
// scenario, host A sending on through a window into slot 1 of its O-NIC
// (onicA3), whose fp32-to-bf16 kernel streams the result out of port A to
// C's O-NIC. Two generated cards, onicA3 with its slots inside and onicC,
// joined over their port A lanes by the scenario's fibre: the first
// writes host A sent onicA3 in the emulator go in on its CQ with bytes
// of the test's; what C's card sends its host on RQ is what reached host
// C in the emulator, header for header and in order (the kernel's output
// carrying A's proxy ID, checked by C's port pipeline), each write the
// kernel's reference output for its input. No task shell is enabled: the
// kernel streams freely, as in the emulator.
func TestPipelineKernelAgainstEmulator(t *testing.T) {
	const n = 40
	sent, got := emulatorRun(t, "pipeline")
	c, err := scenario.Lookup("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	from, to := -1, -1
	for i, o := range c.ONICs {
		switch o.Name {
		case "onicA3":
			from = i
		case "onicC":
			to = i
		}
	}
	if from < 0 || to < 0 || len(sent[from]) < n || len(got[to]) < n {
		t.Fatalf("the pipeline scenario: onicA3 at %d, onicC at %d; want %d writes through them", from, to, n)
	}
	kc := c.ONICs[from].Kernels[0]
	k, err := kernels.Lookup(kc.Name)
	if err != nil {
		t.Fatal(err)
	}
	link := testLink(t)
	p := newPair(t, [2]*ir.Module{slotCard(t, c.ONICs[from], link), scenarioCard(t, c.ONICs[to], link)})
	p.setDelay(24) // 10 m of fibre each side of the MEMS, as in the emulator
	p.run("the link comes up", 5000, func() bool { return p.up(0) && p.up(1) })
	r := rand.New(rand.NewPCG(51, 52))
	var in [][]byte
	for i, cp := range sent[from][:n] {
		x := cp.t
		if x.Kind() != tlp.MWr {
			t.Fatalf("host A's request %d to onicA3 is %s: the test feeds writes", i, x.Kind())
		}
		x.Tag &= 0xFF
		x.Data = make([]byte, 4*int(x.Length))
		for j := range x.Data {
			x.Data[j] = byte(r.Uint32())
		}
		in = append(in, x.Data)
		p.request(0, &x, pcie.ONICWindowBAR)
	}
	p.run("the kernel's writes reach C", 40*n+20000, func() bool { return len(p.rq[1]) >= n })
	for i := range n {
		have, want := p.rq[1][i], got[to][i].t
		ref, err := k.Reference([][]byte{in[i]})
		if err != nil {
			t.Fatal(err)
		}
		sameWrite(t, fmt.Sprintf("write %d at C", i), have, want, ref)
	}
	noSlotDrops(t, p, 0, "onicA3")
	if ok := p.cards[1].get("port_in_count_ok_total")[0]; ok != n {
		t.Errorf("onicC's port pipeline passed %d writes, want %d", ok, n)
	}
	t.Logf("%d writes of %d bytes through %s in slot %d out of port A, %d of %d bytes at C", n, len(in[0]), kc.Name, kc.Slot, n, len(p.rq[1][0].Data))
}

// TestAllreduceAgainstEmulator: FLEET's allreduce step. Hosts A and B
// write 64 KiB blocks of int32 gradients to C; A's arrive on port A of
// C's O-NIC, B's on port B, into its kernel_in ranges, where the two-input
// sum-int32 kernel in slot 0 pairs them and writes each sum into C's
// memory. Three generated cards (onicA and onicB plain, onicC with its
// slots inside) joined as the scenario's circuits join them, over its
// fibre: the first writes each host sent its O-NIC in the emulator go in
// on their CQs with bytes of the test's; what C's card sends its host on
// RQ is what reached host C in the emulator, header for header and in
// order, each sum the kernel's reference for the pair (A's k-th write
// with B's k-th), and nothing is dropped.
func TestAllreduceAgainstEmulator(t *testing.T) {
	const n = 128
	sent, got := emulatorRun(t, "allreduce")
	c, err := scenario.Lookup("allreduce")
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for i, o := range c.ONICs {
		idx[o.Name] = i
	}
	ia, ib, ic := idx["onicA"], idx["onicB"], idx["onicC"]
	if len(sent[ia]) < n || len(sent[ib]) < n || len(got[ic]) < n {
		t.Fatalf("the emulator's allreduce: %d and %d writes sent, %d sums at C; want %d", len(sent[ia]), len(sent[ib]), len(got[ic]), n)
	}
	kc := c.ONICs[ic].Kernels[0]
	k, err := kernels.Lookup(kc.Name)
	if err != nil {
		t.Fatal(err)
	}
	link := testLink(t)
	p := newNet(t, []*ir.Module{scenarioCard(t, c.ONICs[ia], link), scenarioCard(t, c.ONICs[ib], link), slotCard(t, c.ONICs[ic], link)},
		[]fibre{{a: end{0, "port_a"}, b: end{2, "port_a"}}, {a: end{1, "port_a"}, b: end{2, "port_b"}}})
	// Each host's O-NIC is bus 1 of its own hierarchy, as in the
	// emulator: C's card writes the sums as 01:00.0.
	for k := range p.cards {
		p.ids[k] = tlp.NewID(1, 0, 0)
		p.cards[k].drive("cfg_bus_number", 1)
	}
	p.setDelay(24)
	upC := func(port string) bool { return p.cards[2].get(port + "_state")[0] == optlink.StateUp }
	p.run("the links come up", 5000, func() bool { return p.up(0) && p.up(1) && upC("port_a") && upC("port_b") })
	r := rand.New(rand.NewPCG(61, 62))
	var in [2][][]byte
	var entered [2][n]int // the cycle each write's first beat went into its card
	for h, from := range []int{ia, ib} {
		for i, cp := range sent[from][:n] {
			x := cp.t
			if x.Kind() != tlp.MWr {
				t.Fatalf("host %d's request %d is %s: the test feeds writes", h, i, x.Kind())
			}
			x.Tag &= 0xFF
			x.Data = make([]byte, 4*int(x.Length))
			for j := range x.Data {
				x.Data[j] = byte(r.Uint32())
			}
			in[h] = append(in[h], x.Data)
			p.requestAt(h, &x, pcie.ONICWindowBAR, func(c int) { entered[h][i] = c })
		}
	}
	for i := 0; i < 100*n+20000 && len(p.rq[2]) < n; i++ {
		p.cycle()
	}
	if len(p.rq[2]) < n {
		var b strings.Builder
		for k := range p.cards {
			for _, pt := range p.top[k].Ports() {
				if pt.Output && (strings.HasPrefix(pt.Name, "slot") || strings.HasPrefix(pt.Name, "port_in_count") || strings.HasSuffix(pt.Name, "_state")) {
					if v := p.cards[k].get(pt.Name)[0]; v != 0 {
						fmt.Fprintf(&b, " card%d.%s=%d", k, pt.Name, v)
					}
				}
			}
		}
		t.Fatalf("the sums reach C: %d of %d after %d cycles; CQ left %d %d; RQ %d %d %d;%s", len(p.rq[2]), n, p.cycles, len(p.cq[0]), len(p.cq[1]), len(p.rq[0]), len(p.rq[1]), len(p.rq[2]), b.String())
	}
	for i := range n {
		have, want := p.rq[2][i], got[ic][i].t
		ref, err := k.Reference([][]byte{in[0][i], in[1][i]})
		if err != nil {
			t.Fatal(err)
		}
		sameWrite(t, fmt.Sprintf("sum %d at C", i), have, want, ref)
	}
	noSlotDrops(t, p, 2, "onicC")
	// Latency of a sum: from the later of its two writes entering its
	// O-NIC to the sum leaving C's (the emulator's from the later write
	// leaving its host to the sum reaching C's).
	var emu, rtl []float64
	for i := range n {
		emu = append(emu, float64(got[ic][i].at-max(sent[ia][i].at, sent[ib][i].at))/float64(time.Nanosecond))
		rtl = append(rtl, float64(4*(p.rqCycle[2][i]-max(entered[0][i], entered[1][i]))))
	}
	slices.Sort(emu)
	slices.Sort(rtl)
	t.Logf("%d pairs of %d-byte writes summed by %s in slot %d; median latency: emulator %.0f ns, RTL %.0f ns", n, len(in[0][0]), kc.Name, kc.Slot, emu[n/2], rtl[n/2])
	// The slot adds stages the emulator's kernel timing does not have
	// (its input slice, the pair buffer's read slice, the output held
	// until its length is known, the write's header made): docs/hdl.md.
	if rtl[n/2] > 2*emu[n/2] || rtl[n/2] < emu[n/2]/2 {
		t.Errorf("the RTL's median latency is not within half to twice the emulator's")
	}
}

// sameWrite fails the test unless the write a card sent (have) carries
// the kernel's reference bytes ref and is, header for header, the one
// the emulator delivered (want, whose capture has no payload; tags
// compared in the 8 bits PG213's descriptors carry).
func sameWrite(t *testing.T, what string, have, want tlp.TLP, ref []byte) {
	t.Helper()
	if !bytes.Equal(have.Data, ref) {
		t.Fatalf("%s: not the kernel's reference output for its input", what)
	}
	have.Data, want.Snapped = nil, false
	want.Tag &= 0xFF
	if have.String() != want.String() {
		t.Fatalf("%s:\n %s\nin the emulator\n %s", what, have.String(), want.String())
	}
}

// noSlotDrops fails the test if card k (O-NIC name) counted anything in
// its slots' drop counters.
func noSlotDrops(t *testing.T, p *pair, k int, name string) {
	t.Helper()
	for _, pt := range p.top[k].Ports() {
		if pt.Output && strings.HasPrefix(pt.Name, "slot") && p.cards[k].get(pt.Name)[0] != 0 {
			t.Errorf("%s's %s: %d, want 0", name, pt.Name, p.cards[k].get(pt.Name)[0])
		}
	}
}
