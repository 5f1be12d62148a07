package sim_test

import (
	"fmt"

	"onic/hdlgen/ir"
	"onic/hdlgen/sim"
)

// Simulate a counter for 300 enabled clock edges.
func ExampleSim() {
	m := ir.NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)

	s, err := sim.New(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.SetReset(true)
	s.Step()
	s.SetReset(false)
	s.Set("en", 1)
	for range 300 {
		s.Step()
	}
	count, _ := s.Get("count")
	fmt.Println(count)
	// Output: 44
}

// A linear map over GF(2) through its byte tables, as generated code
// computes a CRC: bit i of the result is the parity of the 16-bit input
// under masks[i]; here bit 0 is the parity of the low byte, bit 1 of the
// high byte, and bit 2 of the whole input.
func ExampleParityTable() {
	masks := [][]uint64{{0x00ff}, {0xff00}, {0xffff}}
	rows := []int{0, 1} // the input's two bytes
	t := make([][256]uint32, len(rows))
	sim.ParityTable(t, rows, masks)
	for _, x := range []uint64{0x0001, 0x0100, 0x0101, 0x0703} {
		r := t[0][uint8(x)] ^ t[1][uint8(x>>8)]
		fmt.Printf("0x%04x -> %03b\n", x, r)
	}
	// Output:
	// 0x0001 -> 101
	// 0x0100 -> 110
	// 0x0101 -> 011
	// 0x0703 -> 110
}
