package verilog_test

import (
	"fmt"
	"strings"

	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
)

// Print a module as Verilog-2005.
func ExampleEmit() {
	m := ir.NewModule("and2")
	m.Output("y", m.And(m.Input("a", 1), m.Input("b", 1)))
	v, err := verilog.Emit(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(string(v), "\n") {
		if strings.HasPrefix(line, "module") || strings.Contains(line, "assign") {
			fmt.Println(line)
		}
	}
	// Output:
	// module and2 (
	//     assign y = a & b;
}
