package kernels_test

import (
	"encoding/binary"
	"fmt"

	"onic/hdlgen/ir"
	"onic/kernels"
)

// A stream kernel of your own: one function per element (Lane, the
// hardware) and its plain-Go meaning (Ref). Register adds it to the
// library every onic command uses; a program of your own passes it to
// cli.Main instead, which registers it.
func ExampleRegister() {
	k := &kernels.Kernel{
		Name: "double-int32", Version: "0.1.0", Doc: "twice each int32, wrapping",
		In: kernels.Int32, Lanes: 16, Inputs: 1,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value { return m.Add(in[0], in[0]) },
		Ref:  func(in []uint64) uint64 { return uint64(uint32(2 * int32(in[0]))) },
	}
	if err := kernels.Register(k); err != nil {
		panic(err)
	}
	got, _ := kernels.Lookup("double-int32")
	in := []byte{1, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF} // 1, -2
	out, _, _ := got.Run([][]byte{in}, kernels.Full)
	fmt.Println(int32(binary.LittleEndian.Uint32(out)), int32(binary.LittleEndian.Uint32(out[4:])))
	// A second kernel of the same name is refused.
	fmt.Println(kernels.Register(k))
	// Output:
	// 2 -4
	// register: kernel double-int32: a registered kernel has that name
}

// A beat-level kernel that keeps registers: a running sum of each lane
// over a packet's beats. Body sees whole beats; s.First() marks a packet's
// first, and the registers move on s.Next(), when a beat is consumed.
func ExampleKernel_Body() {
	const lanes = 4
	k := &kernels.Kernel{
		Name: "running-sum", Version: "0.1.0", In: kernels.Int32, Lanes: lanes, Inputs: 1,
		Body: func(s *kernels.Step) {
			m := s.M
			var outs []ir.Value
			for l := lanes - 1; l >= 0; l-- {
				acc := m.Reg(fmt.Sprintf("acc%d", l), 32, 0)
				x := m.Slice(s.In[0].Data, 32*l, 32)
				sum := m.Add(m.Mux(s.First(), m.Const(32, 0), acc), x)
				m.SetNext(acc, sum)
				m.SetEnable(acc, s.Next())
				outs = append(outs, sum)
			}
			s.Out = kernels.Beat{Data: m.Concat(outs...), Keep: s.In[0].Keep, Last: s.In[0].Last}
		},
		RefPacket: func(in [][]byte) ([]byte, error) {
			out := make([]byte, len(in[0]))
			var acc [lanes]uint32
			for i := 0; i+4 <= len(in[0]); i += 4 {
				l := i / 4 % lanes
				acc[l] += binary.LittleEndian.Uint32(in[0][i:])
				binary.LittleEndian.PutUint32(out[i:], acc[l])
			}
			return out, nil
		},
	}
	var in []byte
	for i := range 12 { // three beats of 1..12
		in = binary.LittleEndian.AppendUint32(in, uint32(i+1))
	}
	out, _, err := k.Run([][]byte{in}, kernels.Full)
	if err != nil {
		panic(err)
	}
	want, _ := k.Reference([][]byte{in})
	fmt.Println(binary.LittleEndian.Uint32(out[32:]), binary.LittleEndian.Uint32(out[44:]), string(out) == string(want))
	// Output:
	// 15 24 true
}

// A two-input kernel: the streams arriving on the two optical ports are
// paired element by element, here into the mean of two bytes, rounded
// down (computed one bit wider so the sum cannot overflow).
func ExampleKernel_Run_twoInputs() {
	k := &kernels.Kernel{
		Name: "mean-u8", Version: "0.1.0", In: kernels.U8, Lanes: 64, Inputs: 2,
		Lane: func(m *ir.Module, in []ir.Value) ir.Value {
			sum := m.Add(m.Zext(in[0], 9), m.Zext(in[1], 9))
			return m.Slice(sum, 1, 8)
		},
		Ref: func(in []uint64) uint64 { return (in[0] + in[1]) / 2 },
	}
	out, _, err := k.Run([][]byte{{200, 3, 255}, {100, 4, 255}}, kernels.Full)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// [150 3 255]
}
