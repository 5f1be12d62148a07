// Package kerneltest holds an in-network kernel to its reference inside a
// Go test: the three-way proof that `onic kernel test` runs, for the
// tests of kernels written outside onic as much as for the library's.
package kerneltest

import (
	"testing"

	"onic/kernels"
	"onic/kernels/replay"
	"onic/testbenches/tools"
)

// Verify fails t unless k's cycle simulation equals its reference (random
// and edge-value packets under backpressure) and its Verilog equals the
// simulation cycle by cycle in Icarus, and in Verilator where it is
// installed. Icarus is required: without it the test is skipped, or fails
// when the environment variable CI is true. The failure message is the
// verdict: which check, which input, and what differed.
func Verify(t testing.TB, k *kernels.Kernel) kernels.Verdict {
	t.Helper()
	tools.Require(t, "iverilog")
	rtl := []kernels.Tool{replay.Icarus}
	if tools.Have("verilator") {
		rtl = append(rtl, replay.Verilator)
	}
	v := k.Verify(1, rtl)
	if !v.OK() {
		t.Fatalf("kernel %s: %s", k.Name, v)
	}
	return v
}
