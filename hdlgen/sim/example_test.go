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
