package main

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/kernels"
)

// kernelName is what a kernel may be called: lower-case words joined by
// dashes.
var kernelName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// newKernelNewCmd is `onic kernel new`: it writes a working elementwise
// kernel, its reference and its test into the kernels package, for the
// author to change.
func newKernelNewCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Scaffold a kernel: its description, Go reference and test, in the kernels package",
		Long: `Writes NAME.go and NAME_test.go (dashes become underscores) into the kernels
package of the onic checkout you are in (or --dir): a working elementwise
kernel over int32 — the absolute value of one stream, or with --inputs 2 the
absolute difference of two, saturating — registered in the library, with an
independent Go reference and a test that runs the three-way check. Rebuild
onic and it passes 'onic kernel test NAME' as written; then change the body
and the reference together (docs/kernel-guide.md walks through it).`,
		Example: "  onic kernel new abs-diff --inputs 2\n  go run ./cmd/onic kernel test abs-diff",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !kernelName.MatchString(name) {
				return fmt.Errorf("kernel name %q: use lower-case letters and digits, words joined by dashes (abs-diff)", name)
			}
			if _, err := kernels.Lookup(name); err == nil {
				return fmt.Errorf("kernel name %q: a built-in kernel has it", name)
			}
			inputs := v.GetInt("kernel.new.inputs")
			if inputs != 1 && inputs != 2 {
				return fmt.Errorf("--inputs %d: a kernel has 1 or 2 input streams", inputs)
			}
			dir := v.GetString("kernel.new.dir")
			if dir == "" {
				root, err := moduleRoot()
				if err != nil {
					return err
				}
				dir = filepath.Join(root, "kernels")
			}
			base := strings.ReplaceAll(name, "-", "_")
			files := map[string]*template.Template{base + ".go": kernelTmpl, base + "_test.go": kernelTestTmpl}
			data := struct {
				Name, Func string
				Inputs     int
			}{name, goName(name), inputs}
			var written []string
			for _, f := range []string{base + ".go", base + "_test.go"} {
				path := filepath.Join(dir, f)
				if _, err := os.Stat(path); err == nil {
					return fmt.Errorf("%s: already exists (not overwritten)", path)
				}
				var b bytes.Buffer
				if err := files[f].Execute(&b, data); err != nil {
					return err
				}
				src, err := format.Source(b.Bytes())
				if err != nil {
					return fmt.Errorf("%s: %v", f, err)
				}
				if err := os.WriteFile(path, src, 0o644); err != nil {
					return fmt.Errorf("--dir: %v", err)
				}
				written = append(written, path)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\nnext: go run ./cmd/onic kernel test %s\n", strings.Join(written, ", "), name)
			return nil
		},
	}
	c.Flags().Int("inputs", 1, "input streams: 1, or 2 to combine the two optical ports")
	c.Flags().String("dir", "", "directory of package kernels to write into (default: kernels/ of the onic checkout you are in)")
	bindFlags(v, c, "kernel.new")
	return c
}

// moduleRoot is the directory of the onic go.mod at or above the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if !regexp.MustCompile(`(?m)^module onic\s*$`).Match(b) {
				return "", fmt.Errorf("%s: not the onic module; run from an onic checkout or give --dir", filepath.Join(dir, "go.mod"))
			}
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod here or above: run from an onic checkout or give --dir")
		}
		dir = up
	}
}

// goName turns a kernel name into an exported Go identifier part:
// "abs-diff" becomes "AbsDiff".
func goName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

var kernelTmpl = template.Must(template.New("kernel").Parse(`package kernels

import "onic/hdlgen/ir"

// The {{.Name}} kernel, scaffolded by onic kernel new: change Lane (the
// hardware, built with the hdlgen IR) and Ref (plain Go, what the kernel
// means) together, then run: go run ./cmd/onic kernel test {{.Name}}
func init() {
	register(&Kernel{
		Name:    "{{.Name}}",
		Version: "0.1.0",
{{- if eq .Inputs 2}}
		Doc:     "elementwise absolute difference of two int32 streams, saturating",
{{- else}}
		Doc:     "elementwise absolute value of an int32 stream, saturating",
{{- end}}
		In:      Int32,
		Lanes:   16, // 16 x 32 bits: the 512-bit data path
		Inputs:  {{.Inputs}},
		Lane:    {{.Func}}Lane,
		Ref:     {{.Func}}Ref,
	})
}

// {{.Func}}Lane builds one output element from one element of each input.
func {{.Func}}Lane(m *ir.Module, in []ir.Value) ir.Value {
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

// {{.Func}}Ref is the reference: the output element's bit pattern for the
// inputs' bit patterns.
func {{.Func}}Ref(in []uint64) uint64 {
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

var kernelTestTmpl = template.Must(template.New("test").Parse(`package kernels

import (
	"testing"

	"onic/kernels/replay"
	"onic/testbenches/tools"
)

// Test{{.Func}}: the simulator equals the reference on random and edge
// values under backpressure, and the Verilog equals the simulator cycle
// by cycle in Icarus.
func Test{{.Func}}(t *testing.T) {
	tools.Require(t, "iverilog")
	k, err := Lookup("{{.Name}}")
	if err != nil {
		t.Fatal(err)
	}
	if v := k.Verify(1, []Tool{replay.Icarus}); !v.OK() {
		t.Fatalf("%+v", v)
	}
}
`))
