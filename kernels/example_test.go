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

// A host's task on fp32-to-bf16 through the kernel's task shell: the
// doorbell launches it, and the completion record the shell writes counts
// what went in and out.
func ExampleKernel_RunTask() {
	k, err := kernels.Lookup("fp32-to-bf16")
	if err != nil {
		panic(err)
	}
	one := []byte{0x00, 0x00, 0x80, 0x3F} // 1.0 in fp32
	var packet []byte
	for range 40 {
		packet = append(packet, one...)
	}
	task := kernels.Task{Tag: 7, Packets: [][][]byte{{packet}, {packet[:12]}}}
	run, err := k.RunTask([]kernels.Task{task}, kernels.Full)
	if err != nil {
		panic(err)
	}
	r := run.Records[0]
	fmt.Printf("tag %d: %d bytes in, %d out, %d packets\n", r.Tag, r.BytesIn, r.BytesOut, r.Packets)
	fmt.Printf("first bf16 %#04x, interrupt after the record: %v\n", uint16(run.Out[0])|uint16(run.Out[1])<<8, run.Late[0])
	// Output:
	// tag 7: 172 bytes in, 86 out, 2 packets
	// first bf16 0x3f80, interrupt after the record: true
}
