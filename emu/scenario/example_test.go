package scenario_test

import (
	"fmt"
	"strings"

	"onic/emu/scenario"
)

// Load a cluster written in YAML: hosts take their defaults (Gen3 x16,
// MPS 256), and a misspelt field is an error naming it.
func ExampleLoad() {
	c, err := scenario.Load("mine.yaml", strings.NewReader(`
name: mine
duration: 10us
hosts: [{name: A}, {name: B, memory_latency: 500ns}]
`))
	fmt.Println(c.Name, c.Duration, len(c.Hosts), c.Hosts[1].Memory, err)
	_, err = scenario.Load("typo.yaml", strings.NewReader("duraton: 10us\n"))
	fmt.Println(err != nil && strings.Contains(err.Error(), "duraton"))
	// Output:
	// mine 10µs 2 500ns <nil>
	// true
}
