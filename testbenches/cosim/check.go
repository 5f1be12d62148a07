package cosim

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"

	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
	"onic/tlp"
)

// packet is one TLP as it left (or should leave) an output.
type packet struct {
	hdr     []byte // 12 or 16 bytes
	payload []byte
	slot    int // kernel output only
	op      int // the stimulus step that sent it (expected packets)
}

// Result is what a check found.
type Result struct {
	TLPs    int            // TLPs sent
	Packets map[string]int // packets out of each output
	Reads   int            // register reads compared
}

// Expect runs st's steps through the model and returns the packets each
// output must carry, in order, and the register reads' values.
func (b *Bench) Expect(st *Stimulus) (map[string][]packet, []uint32, error) {
	want := map[string][]packet{}
	reads, err := b.walk(st, func(i int, op *Op, o *pmgr.Outcome) error { return b.expectTLP(want, op, i, o) })
	if err != nil {
		return nil, nil, err
	}
	return want, reads, nil
}

// walk runs st's steps through a fresh model (port states, register
// writes and reads), calling visit with each TLP's outcome, and returns
// the register reads' values. Under hold, a TLP the O-NIC holds for its
// down port is forwarded there, as the emulator does (Outcome.Holdable).
func (b *Bench) walk(st *Stimulus, visit func(i int, op *Op, o *pmgr.Outcome) error) ([]uint32, error) {
	mdl := b.model()
	var reads []uint32
	regs := pmgr.NewRegs(mdl, b.Design.DataWidth)
	var o pmgr.Outcome
	for i := range st.Ops {
		op := &st.Ops[i]
		switch op.Kind {
		case OpTLP:
			mdl.Process(op.TLP, pmgr.FromHost, &o)
			if b.holds(&o) {
				o.Action = pmgr.Forward
			}
			if err := visit(i, op, &o); err != nil {
				return nil, err
			}
		case OpPortDown:
			mdl.PortDown = [2]bool{op.Data&1 != 0, op.Data&2 != 0}
		case OpWriteReg:
			var mask uint32
			for k := range 4 {
				if op.Strb>>k&1 != 0 {
					mask |= 0xFF << (8 * k)
				}
			}
			regs.Write(op.Addr, op.Data, mask)
		case OpReadReg:
			reads = append(reads, regs.Read(op.Addr))
		}
	}
	return reads, nil
}

// holds says whether o is a TLP the O-NIC holds for its down port rather
// than failing it (emu/cluster: hold policy, Outcome.Holdable).
func (b *Bench) holds(o *pmgr.Outcome) bool {
	return b.Config.Hold && o.Reason == pmgr.PortDown && o.Holdable && o.Egress.IsPort()
}

// held is how many of st's TLPs the model holds for a down port.
func (b *Bench) held(st *Stimulus) int {
	n := 0
	b.walk(st, func(_ int, _ *Op, o *pmgr.Outcome) error {
		if o.Reason == pmgr.PortDown && o.Action == pmgr.Forward {
			n++
		}
		return nil
	})
	return n
}

// expectTLP adds what the model's outcome o for op sends out.
func (b *Bench) expectTLP(want map[string][]packet, op *Op, i int, o *pmgr.Outcome) error {
	hl := tlp.Header(op.Raw).HeaderLen()
	t := op.TLP
	c := t.Kind().Class()
	mem := c == tlp.ClassMemory || c == tlp.ClassAtomic
	out := func(e ntb.Egress, addr uint64) error {
		p := packet{hdr: op.Raw[:hl], payload: o.RewritePayload(op.Raw[hl:]), op: i}
		if mem {
			u := *t
			u.Address, u.RequesterID = addr, o.Requester
			f, typ, _ := tlp.FmtType(t.Kind(), addr >= 1<<32, 0)
			u.Fmt, u.Type = f, typ
			raw, err := u.MarshalBinary()
			if err != nil {
				return fmt.Errorf("step %d: re-encoding the model's %s: %v", i, t.Kind(), err)
			}
			p.hdr = raw[:u.HeaderLen()]
		}
		name := map[ntb.EgressKind]string{ntb.EgressPortA: "A", ntb.EgressPortB: "B", ntb.EgressKernel: "K", ntb.EgressLocal: "L"}[e.Kind]
		if name == "" {
			return fmt.Errorf("step %d: the model sends a host TLP to %s", i, e)
		}
		if name == "K" {
			p.slot = int(e.Slot)
		}
		want[name] = append(want[name], p)
		return nil
	}
	switch o.Action {
	case pmgr.Forward:
		if err := out(o.Egress, o.Address); err != nil {
			return err
		}
		if o.Second.Kind != ntb.EgressNone {
			return out(o.Second, o.SecondAddress)
		}
	case pmgr.Complete:
		cpl := pcie.Completion(t, Self, o.Status, nil)
		raw, err := cpl.MarshalBinary()
		if err != nil {
			return fmt.Errorf("step %d: encoding the model's completion: %v", i, err)
		}
		want["C"] = append(want["C"], packet{hdr: raw, op: i})
	}
	return nil
}

// parse turns a trace's log into the packets of each output and the
// register reads.
func (b *Bench) parse(log []string) (map[string][]packet, []uint32, error) {
	W := b.Design.DataWidth
	K := W / 32
	got := map[string][]packet{}
	open := map[string]*packet{}
	var reads []uint32
	for _, line := range log {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("log line %q: want cycle, output, value", line)
		}
		v, ok := new(big.Int).SetString(f[2], 16)
		if !ok {
			return nil, nil, fmt.Errorf("log line %q: bad hex", line)
		}
		field := func(lo, w int) *big.Int {
			x := new(big.Int).Rsh(v, uint(lo))
			return x.And(x, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(w)), big.NewInt(1)))
		}
		name := f[1]
		switch name {
		case "R":
			reads = append(reads, uint32(v.Uint64()))
			continue
		case "C":
			h := field(0, 96).FillBytes(make([]byte, 12))
			got["C"] = append(got["C"], packet{hdr: h})
			continue
		}
		eop := field(0, 1).Sign() != 0
		sop := field(1, 1).Sign() != 0
		keep := field(2, K).Uint64()
		data := field(2+K, W).FillBytes(make([]byte, W/8)) // big-endian: byte 0 is the top
		hdr := field(2+K+W, 128).FillBytes(make([]byte, 16))
		slot := 0
		if name == "K" {
			slot = int(field(2+K+W+128, 8).Int64())
		}
		if sop {
			if open[name] != nil {
				return nil, nil, fmt.Errorf("cycle %s: output %s starts a packet inside another", f[0], name)
			}
			hl := tlp.Header(hdr).HeaderLen()
			if hl == 12 && !bytes.Equal(hdr[12:], make([]byte, 4)) {
				return nil, nil, fmt.Errorf("cycle %s: output %s: 3-DW header with a non-zero DW3 %x", f[0], name, hdr[12:])
			}
			open[name] = &packet{hdr: hdr[:hl], slot: slot}
		}
		p := open[name]
		if p == nil {
			return nil, nil, fmt.Errorf("cycle %s: output %s: a beat outside any packet", f[0], name)
		}
		for dw := range K {
			if keep>>dw&1 == 0 {
				continue
			}
			for k := range 4 {
				p.payload = append(p.payload, data[W/8-1-(4*dw+k)])
			}
		}
		if eop {
			got[name] = append(got[name], *p)
			open[name] = nil
		}
	}
	for name, p := range open {
		if p != nil {
			return nil, nil, fmt.Errorf("output %s: a packet never ended", name)
		}
	}
	return got, reads, nil
}

// Check compares a trace's outputs with the model, TLP by TLP.
func (b *Bench) Check(st *Stimulus, tr *Trace) (Result, error) {
	want, wantReads, err := b.Expect(st)
	if err != nil {
		return Result{}, err
	}
	got, reads, err := b.parse(tr.Log)
	if err != nil {
		return Result{}, fmt.Errorf("seed %d: %v", st.Seed, err)
	}
	r := Result{Packets: map[string]int{}}
	for _, op := range st.Ops {
		if op.Kind == OpTLP {
			r.TLPs++
		}
	}
	for _, rt := range routes {
		n := rt.name
		w, g := want[n], got[n]
		for i := range min(len(w), len(g)) {
			if err := same(w[i], g[i]); err != nil {
				return r, fmt.Errorf("seed %d: output %s, packet %d (step %d, %s): %v", st.Seed, n, i, w[i].op, st.Ops[w[i].op].TLP, err)
			}
		}
		if len(w) != len(g) {
			return r, fmt.Errorf("seed %d: output %s carried %d packets, the model %d", st.Seed, n, len(g), len(w))
		}
		r.Packets[n] = len(g)
	}
	if len(reads) != len(wantReads) {
		return r, fmt.Errorf("seed %d: %d register reads answered, want %d", st.Seed, len(reads), len(wantReads))
	}
	for i := range reads {
		if reads[i] != wantReads[i] {
			reg := b.Design.Registers[i]
			return r, fmt.Errorf("seed %d: register %s (%#x) reads %#x, the model %#x", st.Seed, reg.Name, reg.Offset, reads[i], wantReads[i])
		}
	}
	r.Reads = len(reads)
	return r, nil
}

// same compares a packet with the expected one.
func same(w, g packet) error {
	if !bytes.Equal(w.hdr, g.hdr) {
		return fmt.Errorf("header %x, want %x", g.hdr, w.hdr)
	}
	if !bytes.Equal(w.payload, g.payload) {
		return fmt.Errorf("payload of %d bytes differs from the %d sent", len(g.payload), len(w.payload))
	}
	if w.slot != g.slot {
		return fmt.Errorf("kernel slot %d, want %d", g.slot, w.slot)
	}
	return nil
}
