package kernels_test

import (
	"fmt"

	"onic/kernels"
)

// A two-input kernel summing int8 elements with saturation: the Go
// reference and the simulated hardware give the same bytes.
func ExampleKernel_Run() {
	k, err := kernels.Lookup("sum-int8-sat")
	if err != nil {
		panic(err)
	}
	a := []byte{100, 0x80, 5}  // 100, -128, 5
	b := []byte{100, 0xFF, 10} // 100, -1, 10
	ref, _ := k.Reference([][]byte{a, b})
	hw, st, _ := k.Run([][]byte{a, b}, kernels.Full)
	fmt.Printf("reference %d\nsimulated %d\nlatency %d cycle\n", ref, hw, st.Latency())
	// Output:
	// reference [127 128 15]
	// simulated [127 128 15]
	// latency 1 cycle
}
