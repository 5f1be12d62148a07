package ir_test

import (
	"fmt"
	"strings"

	"onic/hdlgen/ir"
)

// Build an 8-bit counter with an enable.
func ExampleModule() {
	m := ir.NewModule("counter")
	en := m.Input("en", 1)
	cnt := m.Reg("cnt", 8, 0)
	m.SetNext(cnt, m.Add(cnt, m.Const(8, 1)))
	m.SetEnable(cnt, en)
	m.Output("count", cnt)
	fmt.Println(m.Check())
	// Output: <nil>
}

// Mistakes are reported at the caller's line, all at once.
func ExampleModule_Check() {
	m := ir.NewModule("bad")
	a, b := m.Input("a", 8), m.Input("b", 4)
	m.Output("y", m.Add(a, b))
	for _, line := range strings.Split(m.Check().Error(), "\n") {
		fmt.Println(line[strings.Index(line, ": ")+2:])
	}
	// Output: add: operands are 8 and 4 bits; widths must be equal (extend or slice explicitly)
}
