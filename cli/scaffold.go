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

var userKernelTmpl = withFuncs("kernel", `// Package {{.Pkg}} is the {{.Name}} in-network kernel, scaffolded by onic
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

{{template "funcs" .}}`)

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
