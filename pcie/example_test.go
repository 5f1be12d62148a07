package pcie_test

import (
	"fmt"

	"onic/pcie"
)

// Build the default topology, enumerate it the way Linux does, and find
// where an O-NIC landed.
func ExampleBuild() {
	h, err := pcie.Build(pcie.DefaultTopology())
	if err == nil {
		err = h.Enumerate()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	n := h.Find("onic0")
	fmt.Printf("%s BAR2 %#x\n", n.ID(0), n.Funcs[0].BARAddress(2))
	// Output:
	// 03:00.0 BAR2 0x4000000000
}
