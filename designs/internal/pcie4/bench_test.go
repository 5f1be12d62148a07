package pcie4

import (
	"encoding/binary"
	"testing"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// bench runs one adapter module in the cycle simulator for a test.
type bench struct {
	t testing.TB
	*sim.Sim
}

// newBench simulates m, past one reset edge.
func newBench(t testing.TB, m *ir.Module) *bench {
	s, err := sim.New(m)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	return &bench{t, s}
}

// set drives input name with words v, least significant first.
func (b *bench) set(name string, v ...uint64) {
	if err := b.SetWords(name, v); err != nil {
		b.t.Fatal(err)
	}
}

// get reads signal name as words, least significant first.
func (b *bench) get(name string) []uint64 {
	v, err := b.GetWords(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// bytes reads a 512-bit data bus as its 64 bytes, byte n from bits
// [8n+7:8n].
func (b *bench) bytes(name string) []byte {
	w := b.get(name)
	out := make([]byte, 8*len(w))
	for j := range w {
		binary.LittleEndian.PutUint64(out[8*j:], w[j])
	}
	return out
}

// dws appends the DWs of data whose keep bits are set to p.
func dws(p, data []byte, keep uint64) []byte {
	for d := range len(data) / 4 {
		if keep>>d&1 == 1 {
			p = append(p, data[4*d:4*d+4]...)
		}
	}
	return p
}
