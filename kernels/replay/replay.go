// Package replay gives the kernels package its HDL simulators: Icarus
// Verilog and Verilator as kernels.Tool values, each running a replay
// testbench that the kernels package wrote. It is kept out of kernels so
// that the authoring API and the emulator's kernel timing run no
// external tool; a three-way test (Go reference = cycle simulator = RTL)
// imports it to reach the RTL.
package replay

import (
	"fmt"

	"onic/internal/tbrun"
)

// Tool is one HDL simulator. It satisfies kernels.Tool.
type Tool struct {
	name string
	run  func(dir string, srcs []string) ([]string, error)
}

// Name is the tool's name: "icarus" or "verilator".
func (t Tool) Name() string { return t.name }

// Run builds testbench tb.v with the design's sources srcs (paths relative
// to dir) in dir, runs it, and returns the lines of the out.log it writes.
func (t Tool) Run(dir string, srcs []string) ([]string, error) { return t.run(dir, srcs) }

// The two simulators, found on PATH.
var (
	Icarus = Tool{"icarus", func(dir string, srcs []string) ([]string, error) {
		return tbrun.Icarus(dir, srcs, "iverilog", "vvp")
	}}
	Verilator = Tool{"verilator", func(dir string, srcs []string) ([]string, error) {
		return tbrun.Verilator(dir, srcs, "verilator")
	}}
)

// ByName returns the tool called name ("icarus" or "verilator").
func ByName(name string) (Tool, error) {
	switch name {
	case "icarus":
		return Icarus, nil
	case "verilator":
		return Verilator, nil
	}
	return Tool{}, fmt.Errorf("tool %q: want icarus or verilator", name)
}

// Tools returns the tools named in names, in order.
func Tools(names []string) ([]Tool, error) {
	var ts []Tool
	for _, n := range names {
		t, err := ByName(n)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}
