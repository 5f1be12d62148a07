package cli

import "text/template"

// The templates of a kernel module of the user's own (onic kernel new
// --dir). Every file is Go a user reads and changes, so each says what
// it is for.

var goModTmpl = template.Must(template.New("go.mod").Parse(`module {{.Module}}

go {{.GoVersion}}

require onic v0.0.0

// onic has no module path a go command can fetch yet: this module builds
// against the onic checkout below (onic kernel new --onic). Move the
// checkout and change the path here.
replace onic => {{.Onic}}

// What onic itself requires, so the module builds without resolving.
require (
{{- range .Requires}}
	{{.}} // indirect
{{- end}}
)
`))

var mainTmpl = template.Must(template.New("main").Parse(`// Command {{.Pkg}} is onic with the {{.Name}} kernel added to the built-in
// ones: every onic command knows it (kernel list, kernel gen, kernel test,
// emu run with it in a slot, fw build with it in a spec).
//
//	go run . kernel test {{.Name}}
package main

import (
	"os"

	"onic/cli"

	"{{.Module}}/{{.Pkg}}"
)

func main() { os.Exit(cli.Main({{.Pkg}}.Kernel())) }
`))

var userKernelTmpl = template.Must(template.New("kernel").Parse(`// Package {{.Pkg}} is the {{.Name}} in-network kernel, scaffolded by onic
// kernel new: change Lane (the hardware, built with onic's IR) and Ref
// (plain Go, what the kernel means) together, then run
//
//	go test ./... && go run . kernel test {{.Name}}
package {{.Pkg}}

import (
	"onic/hdlgen/ir"
	"onic/kernels"
)

// Kernel is the {{.Name}} kernel's description: main.go hands it to onic.
func Kernel() *kernels.Kernel {
	return &kernels.Kernel{
		Name:    "{{.Name}}",
		Version: "0.1.0",
{{- if eq .Inputs 2}}
		Doc:     "elementwise absolute difference of two int32 streams, saturating",
{{- else}}
		Doc:     "elementwise absolute value of an int32 stream, saturating",
{{- end}}
		In:      kernels.Int32,
		Lanes:   16, // 16 x 32 bits: the 512-bit data path
		Inputs:  {{.Inputs}},
		Lane:    Lane,
		Ref:     Ref,
	}
}

// Lane builds one output element from one element of each input.
func Lane(m *ir.Module, in []ir.Value) ir.Value {
{{- if eq .Inputs 2}}
	// a - b in 33 bits cannot overflow; its magnitude may not fit int32.
	d := m.Sub(m.Sext(in[0], 33), m.Sext(in[1], 33))
{{- else}}
	d := m.Sext(in[0], 33)
{{- end}}
	neg := m.Slice(d, 32, 1)
	abs := m.Mux(neg, m.Sub(m.Const(33, 0), d), d)
	// Saturate: above 2^31-1 (bit 31 set) becomes 2^31-1.
	return m.Mux(m.Slice(abs, 31, 1), m.Const(32, 1<<31-1), m.Slice(abs, 0, 32))
}

// Ref is the reference: the output element's bit pattern for the inputs'
// bit patterns.
func Ref(in []uint64) uint64 {
{{- if eq .Inputs 2}}
	d := int64(int32(in[0])) - int64(int32(in[1]))
{{- else}}
	d := int64(int32(in[0]))
{{- end}}
	if d < 0 {
		d = -d
	}
	return uint64(uint32(min(d, 1<<31-1)))
}
`))

var userKernelTestTmpl = template.Must(template.New("test").Parse(`package {{.Pkg}}

import (
	"testing"

	"onic/kernels/kerneltest"
)

// TestKernel is the three-way proof: the cycle simulator equals Ref on
// random and edge values under backpressure, and the Verilog equals the
// simulator cycle by cycle in Icarus (and Verilator, where installed).
func TestKernel(t *testing.T) {
	kerneltest.Verify(t, Kernel())
}
`))

var userReadmeTmpl = template.Must(template.New("readme").Parse(`# {{.Name}}

An in-network kernel for onic's O-NICs, scaffolded by
` + "`onic kernel new {{.Name}} --dir`" + `.

- ` + "`{{.Pkg}}/{{.Pkg}}.go`" + `: the kernel — its hardware (` + "`Lane`" + `) and its
  Go reference (` + "`Ref`" + `).
- ` + "`{{.Pkg}}/{{.Pkg}}_test.go`" + `: the three-way proof (reference, cycle
  simulator, Icarus/Verilator).
- ` + "`main.go`" + `: onic with this kernel added; every onic command works.

` + "```sh" + `
go test ./...                          # the three-way proof
go run . kernel test {{.Name}}         # the same, with timing and resources
go run . kernel gen {{.Name}} --out rtl # its Verilog in the task shell
` + "```" + `

The module builds against the onic checkout ` + "`go.mod`" + ` replaces ` + "`onic`" + `
with; onic's docs/kernel-guide.md is the walk-through.
`))
