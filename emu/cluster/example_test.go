package cluster_test

import (
	"fmt"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// Run a built-in scenario for a shorter time and read its report.
func ExampleRun() {
	c := scenario.TwoParty()
	c.Duration = 50 * time.Microsecond
	r, err := cluster.Run(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Flows {
		fmt.Printf("%s: %d transfers, %.0f Gb/s\n", f.Name, f.Transfers, f.Gbps)
	}
	a := r.Accounting
	fmt.Println(a.Injected == a.Delivered+a.InFlight)
	// Output:
	// A->B: 9 transfers, 100 Gb/s
	// B->A: 9 transfers, 100 Gb/s
	// true
}
