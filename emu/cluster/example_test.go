package cluster_test

import (
	"fmt"
	"strings"
	"time"

	"onic/emu/cluster"
)

// Run a built-in scenario for a shorter time and read its report.
func ExampleRun() {
	c := cluster.TwoParty()
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
	// A->B: 10 transfers, 110 Gb/s
	// B->A: 10 transfers, 110 Gb/s
	// true
}

// Load a cluster written in YAML: hosts take their defaults (Gen3 x16,
// MPS 256), and a misspelt field is an error naming it.
func ExampleLoad() {
	c, err := cluster.Load("mine.yaml", strings.NewReader(`
name: mine
duration: 10us
hosts: [{name: A}, {name: B, memory_latency: 500ns}]
`))
	fmt.Println(c.Name, c.Duration, len(c.Hosts), c.Hosts[1].Memory, err)
	_, err = cluster.Load("typo.yaml", strings.NewReader("duraton: 10us\n"))
	fmt.Println(err != nil && strings.Contains(err.Error(), "duraton"))
	// Output:
	// mine 10µs 2 500ns <nil>
	// true
}
