package slot

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"onic/designs/internal/tlpstim"
	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
	"onic/hdlgen/verilog"
	"onic/kernels"
	"onic/testbenches/verilator"
	"onic/tlp"
)

// bench drives a slot's static module on its own: TLPs in on s_tlp_*
// with their ingress, the writes it sends collected off m_tlp_*.
type bench struct {
	t   *testing.T
	s   *sim.Sim
	out []tlp.TLP
	hdr []uint64
	pay []byte
}

func newBench(t *testing.T, c Config) *bench {
	rm, err := RM(c)
	if err != nil {
		t.Fatal(err)
	}
	m := Assemble(c, rm)
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{t: t, s: s}
	b.set("self_id", uint64(tlp.NewID(3, 0, 0)))
	b.set("m_tlp_ready", 1)
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	return b
}

func (b *bench) set(name string, v ...uint64) {
	if err := b.s.Drive(name, v); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bench) get(name string) uint64 {
	v, err := b.s.Get(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// cycle settles, collects an output beat, and steps.
func (b *bench) cycle() {
	b.s.Settle()
	if b.get("m_tlp_valid") == 1 {
		h, _ := b.s.GetWords("m_tlp_hdr")
		d, _ := b.s.GetWords("m_tlp_data")
		keep := b.get("m_tlp_keep")
		if b.get("m_tlp_sop") == 1 {
			b.hdr, b.pay = append([]uint64(nil), h...), nil
		}
		for i := range 16 {
			if keep>>i&1 == 1 {
				b.pay = binary.LittleEndian.AppendUint32(b.pay, uint32(d[i/2]>>(32*(i%2))))
			}
		}
		if b.get("m_tlp_eop") == 1 {
			x, err := tlpstim.TLP(b.hdr, b.pay)
			if err != nil {
				b.t.Fatal(err)
			}
			b.out = append(b.out, x)
		}
	}
	b.s.Step()
}

// send offers x from ingress in until its last beat is taken (or the
// slot has not taken it after limit cycles: it returns false).
func (b *bench) send(x tlp.TLP, in Ingress, limit int) bool {
	beats, err := tlpstim.Beats(&x)
	if err != nil {
		b.t.Fatal(err)
	}
	pre := "s_" + ingressNames[in] + "_tlp_"
	for i := 0; len(beats) > 0; i++ {
		if i == limit {
			b.set(pre+"valid", 0)
			return false
		}
		bt := beats[0]
		b.set(pre+"hdr", bt.Hdr...)
		b.set(pre+"data", bt.Data...)
		b.set(pre+"keep", bt.Keep)
		b.set(pre+"sop", b2u(bt.SOP))
		b.set(pre+"eop", b2u(bt.EOP))
		b.set(pre+"valid", 1)
		b.s.Settle()
		if b.get(pre+"ready") == 1 {
			beats = beats[1:]
		}
		b.cycle()
	}
	b.set(pre+"valid", 0)
	return true
}

func (b *bench) idle(n int) {
	for range n {
		b.cycle()
	}
}

func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// write is a posted write of n bytes at addr from req, its payload
// bytes seed, seed+1, ...
func write(addr uint64, n int, req tlp.ID, seed byte) tlp.TLP {
	x := tlp.TLP{Fmt: tlp.Fmt3DWData, Length: uint16(n / 4), FirstBE: 0xF, LastBE: 0xF, RequesterID: req, Address: addr, Data: make([]byte, n)}
	if n == 4 {
		x.LastBE = 0
	}
	for i := range x.Data {
		x.Data[i] = seed + byte(i*7)
	}
	return x
}

// TestTwoInputs: a two-input kernel's slot (sum-int32, inputs port A
// then port B, 1 KiB of pair buffer each) pairs the inputs' writes in
// order and sends each sum to the host at input 0's address plus
// Translated, as the card's own ID; it drops, and counts, a write from
// an ingress that is no input (drop_not_input), both writes of a pair
// whose lengths differ (drop_pair_length counts 2), and a write that
// would take its input past 1 KiB while the other input has nothing
// waiting (drop_pair_full).
func TestTwoInputs(t *testing.T) {
	k, err := kernels.Lookup("sum-int32")
	if err != nil {
		t.Fatal(err)
	}
	const translated = 2 << 32
	b := newBench(t, Config{Slot: 0, Kernel: k, Egress: Host, Translated: translated, Sources: [2]Ingress{FromPortA, FromPortB}, PairBytes: 1024})
	a, bb := tlp.NewID(0x10, 0, 0), tlp.NewID(0x20, 0, 0)

	b.send(write(0x1000, 64, a, 1), FromHost, 50)
	b.idle(5)
	if got := b.get("drop_not_input"); got != 1 {
		t.Fatalf("a write from the host: drop_not_input %d, want 1", got)
	}

	b.send(write(0x2000, 256, a, 2), FromPortA, 50)
	b.send(write(0x3000, 128, bb, 3), FromPortB, 50)
	b.idle(20)
	if got := b.get("drop_pair_length"); got != 2 || len(b.out) != 0 {
		t.Fatalf("a pair of 256 and 128 bytes: drop_pair_length %d (want 2), %d writes out (want 0)", got, len(b.out))
	}

	// Five from port A (1,280 bytes) with nothing from B waiting: the
	// fifth does not fit.
	var as, bs []tlp.TLP
	for i := range 5 {
		as = append(as, write(0x10000+uint64(i)*256, 256, a, byte(10+i)))
		b.send(as[i], FromPortA, 50)
	}
	b.idle(5)
	if got := b.get("drop_pair_full"); got != 1 {
		t.Fatalf("1,280 bytes from port A with 1 KiB of buffer: drop_pair_full %d, want 1", got)
	}
	for i := range 4 {
		bs = append(bs, write(0x90000+uint64(i)*256, 256, bb, byte(50+i)))
		b.send(bs[i], FromPortB, 50)
	}
	// B first this time: its write waits for A's.
	bs = append(bs, write(0x99000, 64, bb, 90))
	b.send(bs[4], FromPortB, 50)
	as[4] = write(0x18000, 64, a, 91)
	b.send(as[4], FromPortA, 50)
	b.idle(60)
	if len(b.out) != 5 {
		t.Fatalf("%d sums out, want 5", len(b.out))
	}
	for i, x := range b.out {
		want, err := k.Reference([][]byte{as[i].Data, bs[i].Data})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Data, want) {
			t.Errorf("sum %d: not the reference sum of the pair", i)
		}
		if x.Address != translated+as[i].Address || x.RequesterID != tlp.NewID(3, 0, 0) || x.Kind() != tlp.MWr || int(x.Length)*4 != len(want) {
			t.Errorf("sum %d: %s; want a write of %d bytes to %#x from 03:00.0", i, x.String(), len(want), translated+as[i].Address)
		}
	}
	for _, c := range []string{"drop_not_write", "drop_closed", "drop_no_proxy", "out_malformed"} {
		if got := b.get(c); got != 0 {
			t.Errorf("%s: %d, want 0", c, got)
		}
	}
}

// TestOneInput: a one-input kernel's slot (scale-int32 out of port A)
// sends each write's output as one write at Translated plus its address:
// with the proxy ID of a host requester (one with none is dropped and
// counted in drop_no_proxy), with its own requester from the other port.
// A read is dropped (drop_not_write). Once software enables the task
// shell, a write with no task running is dropped (drop_closed) — but
// only after no register write is on its way to the shells (local_busy
// held waits).
func TestOneInput(t *testing.T) {
	k, err := kernels.Lookup("scale-int32")
	if err != nil {
		t.Fatal(err)
	}
	host, stranger, peer := tlp.NewID(0, 0, 0), tlp.NewID(0, 3, 0), tlp.NewID(0x20, 0, 1)
	b := newBench(t, Config{Slot: 2, Kernel: k, Egress: PortA, Translated: 0x4000_0000, ProxyBase: uint16(tlp.NewID(0x10, 0, 0)), Locals: []uint16{uint16(host)}})
	ins := []tlp.TLP{write(0x100, 256, host, 1), write(0x200, 64, peer, 2)}
	b.send(ins[0], FromHost, 50)
	b.send(write(0x300, 64, stranger, 3), FromHost, 50)
	b.send(ins[1], FromPortB, 50)
	rd := tlp.TLP{Fmt: tlp.Fmt3DW, Length: 1, FirstBE: 0xF, RequesterID: host, Address: 0x100}
	b.send(rd, FromHost, 50)
	b.idle(40)
	if b.get("drop_no_proxy") != 1 || b.get("drop_not_write") != 1 || len(b.out) != 2 {
		t.Fatalf("drop_no_proxy %d, drop_not_write %d (want 1 each), %d writes out (want 2)", b.get("drop_no_proxy"), b.get("drop_not_write"), len(b.out))
	}
	for i, want := range []tlp.ID{tlp.NewID(0x10, 0, 0), peer} {
		x := b.out[i]
		ref, err := k.Reference([][]byte{ins[i].Data})
		if err != nil {
			t.Fatal(err)
		}
		if x.RequesterID != want || x.Address != 0x4000_0000+ins[i].Address || !bytes.Equal(x.Data, ref) {
			t.Errorf("output %d: %s; want from %s at %#x with the kernel's output", i, x.String(), want, 0x4000_0000+ins[i].Address)
		}
	}

	// Enable the shell (CTRL at 0x08 of its page).
	b.set("s_axil_awaddr", kernels.TaskCtrl)
	b.set("s_axil_wdata", 1)
	b.set("s_axil_wstrb", 0xF)
	b.set("s_axil_awvalid", 1)
	b.set("s_axil_wvalid", 1)
	b.set("s_axil_bready", 1)
	b.idle(1)
	b.set("s_axil_awvalid", 0)
	b.set("s_axil_wvalid", 0)
	b.idle(3)
	b.set("local_busy", 1)
	b.send(write(0x500, 64, host, 4), FromHost, 20) // into the slot's input slice
	b.idle(20)
	if got := b.get("drop_closed"); got != 0 {
		t.Fatal("a write for a closed shell was dropped while a register write was on its way")
	}
	b.set("local_busy", 0)
	b.idle(5)
	if got := b.get("drop_closed"); got != 1 || len(b.out) != 2 {
		t.Errorf("a write with no task: drop_closed %d (want 1), %d writes out (want 2)", got, len(b.out))
	}
}

// TestSlotLint: the static and reconfigurable modules of a one-input,
// a two-input and an empty slot are clean under Verilator -Wall.
func TestSlotLint(t *testing.T) {
	for _, name := range []string{"fp32-to-bf16", "sum-int32", ""} {
		c, rm := withKernel(t, Config{Slot: 1, Egress: Host, Sources: [2]Ingress{FromPortA, FromPortB}, PairBytes: 4096}, name)
		for _, m := range []*ir.Module{rm, Build(c, "onic_slot"), Assemble(c, rm)} {
			verilator.Lint(t, m)
		}
	}
}

// TestSupports: the kernels a card slot refuses, each with its reason.
func TestSupports(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"fp32-to-bf16", true}, {"sum-int32", true}, {"histogram", true}, {"scale-int32", true},
		{"bf16-to-fp32", false}, {"crc32c-append", false}, {"quantize-mxint8", false}, {"filter", false},
	} {
		k, err := kernels.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if err := Supports(k); (err == nil) != c.ok {
			t.Errorf("%s: Supports says %v", c.name, err)
		}
	}
}

// TestOneInterface: every kernel a slot takes, and the empty slot, give
// the slot's reconfigurable module the same ports in the same order, and
// kernels of the slot's shape the same static module: what lets one fill
// the partition another was built around. A kernel of the other number
// of inputs is refused.
func TestOneInterface(t *testing.T) {
	type port struct {
		name   string
		output bool
		width  int
	}
	ports := func(m *ir.Module) []port {
		var ps []port
		for _, p := range m.Ports() {
			ps = append(ps, port{p.Name, p.Output, m.Node(p.Node).W})
		}
		return ps
	}
	for _, two := range []bool{false, true} {
		base := Config{Slot: 1, Egress: PortA, Translated: 0x1000, Sources: [2]Ingress{FromPortA, FromPortB}, PairBytes: 4096, Inputs: 1}
		names := []string{"", "fp32-to-bf16", "histogram", "scale-int32"}
		if two {
			base.Inputs = 2
			names = []string{"", "sum-int32", "max-int32", "sum-int8-sat"}
		}
		var wantPorts []port
		var wantStatic []byte
		for _, name := range names {
			c, rm := withKernel(t, base, name)
			st := Build(c, "onic_slot")
			files, err := verilog.EmitDesign(st)
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			for _, f := range files {
				src = append(src, f.Source...)
			}
			if wantPorts == nil {
				wantPorts, wantStatic = ports(rm), src
				continue
			}
			if got := ports(rm); !slices.Equal(got, wantPorts) {
				t.Errorf("inputs %v, %q: the module's ports differ from the empty slot's:\n%v\n%v", base.Inputs, name, got, wantPorts)
			}
			if !bytes.Equal(src, wantStatic) {
				t.Errorf("inputs %v, %q: the static module differs from the empty slot's", base.Inputs, name)
			}
		}
	}
	k, _ := kernels.Lookup("sum-int32")
	if _, err := RM(Config{Kernel: k, Inputs: 1}); err == nil || !strings.Contains(err.Error(), "kernel sum-int32 has 2 inputs; the slot is built for kernels of 1") {
		t.Errorf("a two-input kernel in a one-input slot: %v", err)
	}
}

// withKernel is c with the library kernel name in it ("": empty) and its
// reconfigurable module.
func withKernel(t *testing.T, c Config, name string) (Config, *ir.Module) {
	t.Helper()
	if name != "" {
		k, err := kernels.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Kernel = k
	}
	rm, err := RM(c)
	if err != nil {
		t.Fatalf("%q: %v", name, err)
	}
	return c, rm
}
