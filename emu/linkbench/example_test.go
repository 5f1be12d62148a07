package linkbench_test

import (
	"fmt"

	"onic/emu/linkbench"
	"onic/tlp"
)

// Stream 64 KiB DMA reads over one simulated Gen3 x16 link and compare the
// bandwidth the link delivered with the overhead model's.
func ExampleRun() {
	c := linkbench.Config{Gen: tlp.Gen3, Lanes: 16, MPS: 256, Op: linkbench.Read, Size: 64 << 10}
	r, err := linkbench.Run(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := linkbench.Model(c)
	fmt.Printf("%.2f GB/s simulated, %.2f GB/s modelled\n", r.EffectiveGbps/8, m.EffectiveGbps/8)
	// Output:
	// 13.81 GB/s simulated, 13.82 GB/s modelled
}
