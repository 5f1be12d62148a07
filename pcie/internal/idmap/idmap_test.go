package idmap

import (
	"math/rand/v2"
	"testing"

	"onic/tlp"
)

// TestAgainstFlat: random sets and gets agree with a flat table of every
// ID, and only the buses written to hold entries.
func TestAgainstFlat(t *testing.T) {
	var m Map[uint16]
	var flat [1 << 16]uint16
	buses := map[uint8]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		id := tlp.ID(rng.IntN(1 << 16))
		if rng.IntN(4) == 0 {
			id = tlp.ID(rng.IntN(3))<<8 | tlp.ID(rng.IntN(256)) // mostly a few buses
		}
		v := uint16(rng.IntN(4))
		m.Set(id, v)
		flat[id] = v
		if v != 0 {
			buses[uint8(id>>8)] = true
		}
		probe := tlp.ID(rng.IntN(1 << 16))
		if m.Get(probe) != flat[probe] || m.Get(id) != v {
			t.Fatalf("Get(%s) = %d, want %d", probe, m.Get(probe), flat[probe])
		}
	}
	if m.Buses() != len(buses) {
		t.Errorf("%d buses allocated, %d written with a non-zero value", m.Buses(), len(buses))
	}
	var z Map[uint8]
	z.Set(0x1234, 0)
	if z.Buses() != 0 || z.Get(0x1234) != 0 {
		t.Error("setting zero on an empty bus allocated it")
	}
}

func TestAllocs(t *testing.T) {
	var m Map[uint8]
	m.Set(0x0100, 1)
	if n := testing.AllocsPerRun(100, func() { m.Set(0x0105, 2); _ = m.Get(0x0105) + m.Get(0x7700) }); n != 0 {
		t.Errorf("%.1f allocs per Set and Get on an allocated bus", n)
	}
}

func BenchmarkGet(b *testing.B) {
	var m Map[uint16]
	for i := range 256 {
		m.Set(tlp.ID(i), uint16(i))
	}
	var s uint16
	i := 0
	for b.Loop() {
		s += m.Get(tlp.ID(i & 0x1FF))
		i++
	}
	_ = s
}
