package cli

import (
	"golang.org/x/mod/module"

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

// maxKernelName bounds a new kernel's name: it becomes a package, file
// and Verilog module name (onic_kernel_<name>), checked before anything
// is written.
const maxKernelName = 48

// newKernelNewCmd is `onic kernel new`: a working elementwise kernel,
// its reference and its test, either as a Go module of its own (--dir) or
// into onic's own library (in an onic checkout, without --dir).
func newKernelNewCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "new NAME",
		Short: "Scaffold a kernel: a Go module of your own (--dir), or one more in onic's library",
		Long: `Writes a working elementwise kernel over int32 — the absolute value of one
stream, or with --inputs 2 the absolute difference of two, saturating — with
an independent Go reference and a test that runs the three-way check
(reference, cycle simulator, Icarus).

With --dir DIR (a new or empty directory) it is a Go module of its own:
go.mod (requiring onic, replaced by the local onic checkout, --onic), the
kernel in package NAME (dashes dropped), its test, and main.go: your own
onic binary, every command of onic's with your kernel added to the built-in
ones. In DIR, 'go test ./...' and 'go run . kernel test NAME' pass as
written. Without --dir it writes NAME.go and NAME_test.go into the kernels
package of the onic checkout you are in, for a kernel of the library.
Change the body and the reference together (docs/kernel-guide.md walks
through it).`,
		Example: "  onic kernel new abs-diff --inputs 2 --dir ~/abs-diff\n  cd ~/abs-diff && go run . kernel test abs-diff",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !kernelName.MatchString(name) || len(name) > maxKernelName {
				return fmt.Errorf("kernel name %.80q: use up to %d lower-case letters and digits, words joined by dashes (abs-diff)", name, maxKernelName)
			}
			if _, err := kernels.Lookup(name); err == nil {
				return fmt.Errorf("kernel name %q: a built-in kernel has it", name)
			}
			inputs := v.GetInt("kernel.new.inputs")
			if inputs != 1 && inputs != 2 {
				return fmt.Errorf("--inputs %d: a kernel has 1 or 2 input streams", inputs)
			}
			data := scaffold{Name: name, Func: goName(name), Pkg: strings.ReplaceAll(name, "-", ""), Inputs: inputs, Prefix: goName(name)}
			var files []scaffoldFile
			dir := v.GetString("kernel.new.dir")
			if dir == "" {
				root, err := moduleRoot(".")
				if err != nil {
					return fmt.Errorf("%v (or give --dir for a module of your own)", err)
				}
				dir = filepath.Join(root, "kernels")
				base := strings.ReplaceAll(name, "-", "_")
				files = []scaffoldFile{{base + ".go", libKernelTmpl}, {base + "_test.go", libKernelTestTmpl}}
			} else {
				if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
					return fmt.Errorf("--dir %s: not empty (a new module needs a directory of its own)", dir)
				}
				root, err := onicCheckout(v.GetString("kernel.new.onic"))
				if err != nil {
					return fmt.Errorf("--onic: %v", err)
				}
				mod, err := readOnicMod(root)
				if err != nil {
					return fmt.Errorf("--onic: %v", err)
				}
				data.Module = v.GetString("kernel.new.module")
				if data.Module == "" {
					data.Module = name
				}
				if err := module.CheckImportPath(data.Module); err != nil {
					return fmt.Errorf("--module %q: not a Go module path: %v", data.Module, err)
				}
				data.Onic, data.GoVersion, data.Requires, data.Prefix = root, mod.goVersion, mod.requires, ""
				files = []scaffoldFile{{"go.mod", goModTmpl}, {"main.go", mainTmpl},
					{filepath.Join(data.Pkg, data.Pkg+".go"), userKernelTmpl},
					{filepath.Join(data.Pkg, data.Pkg+"_test.go"), userKernelTestTmpl},
					{"README.md", userReadmeTmpl}}
				if err := os.MkdirAll(filepath.Join(dir, data.Pkg), 0o755); err != nil {
					return fmt.Errorf("--dir: %v", err)
				}
				if err := os.WriteFile(filepath.Join(dir, "go.sum"), mod.sum, 0o644); err != nil {
					return fmt.Errorf("--dir: %v", err)
				}
			}
			var written []string
			for _, f := range files {
				path := filepath.Join(dir, f.name)
				if _, err := os.Stat(path); err == nil {
					return fmt.Errorf("%s: already exists (not overwritten)", path)
				}
				var b bytes.Buffer
				if err := f.tmpl.Execute(&b, data); err != nil {
					return err
				}
				src := b.Bytes()
				if strings.HasSuffix(f.name, ".go") {
					var err error
					if src, err = format.Source(src); err != nil {
						return fmt.Errorf("%s: %v", f.name, err)
					}
				}
				if err := os.WriteFile(path, src, 0o644); err != nil {
					return fmt.Errorf("--dir: %v", err)
				}
				written = append(written, path)
			}
			next := "go run ./cmd/onic kernel test " + name
			if v.GetString("kernel.new.dir") != "" {
				next = fmt.Sprintf("cd %s && go test ./... && go run . kernel test %s", dir, name)
			}
			if v.GetBool("kernel.new.json") {
				return printJSON(cmd.OutOrStdout(), struct {
					Kernel string   `json:"kernel"`
					Files  []string `json:"files"`
					Next   string   `json:"next"`
				}{name, written, next})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\nnext: %s\n", strings.Join(written, ", "), next)
			return nil
		},
	}
	c.Flags().Int("inputs", 1, "input streams: 1, or 2 to combine the two optical ports")
	c.Flags().Bool("json", false, "print the files written and the next step as JSON")
	c.Flags().String("dir", "", "a new or empty directory for a Go module of your own (default: onic's kernels/ of the checkout you are in)")
	c.Flags().String("module", "", "with --dir: the new module's path (default: NAME)")
	c.Flags().String("onic", "", "with --dir: the onic checkout the module builds against (default: the one you are in, else the one this binary was built in)")
	bindFlags(v, c, "kernel.new")
	return c
}

// laneFuncs is the scaffolded kernel's body and reference, the same for a
// module of the user's own (Prefix "": Lane, Ref) and for the library
// (Prefix the Go name: AbsDiffLane, AbsDiffRef).
const laneFuncs = `{{define "funcs"}}// {{.Prefix}}Lane builds one output element from one element of each input.
func {{.Prefix}}Lane(m *ir.Module, in []ir.Value) ir.Value {
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

// {{.Prefix}}Ref is the reference: the output element's bit pattern for the
// inputs' bit patterns.
func {{.Prefix}}Ref(in []uint64) uint64 {
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
{{end}}`

// withFuncs parses a scaffold template that uses laneFuncs.
func withFuncs(name, text string) *template.Template {
	return template.Must(template.Must(template.New(name).Parse(laneFuncs)).Parse(text))
}

// scaffold is what the templates fill in.
type scaffold struct {
	Name, Func, Pkg string
	Prefix          string // of the Lane and Ref functions' names
	Inputs          int
	// A module of its own.
	Module, Onic, GoVersion string
	Requires                []string // "path version" of every module onic requires
}

type scaffoldFile struct {
	name string
	tmpl *template.Template
}

// onicMod is what a new module takes from onic's go.mod and go.sum.
type onicMod struct {
	goVersion string
	requires  []string
	sum       []byte
}

// readOnicMod reads the go directive and the requirements of the onic
// module at root (the new module requires them too, as indirect
// dependencies, so it builds without resolving anything) and its go.sum.
func readOnicMod(root string) (onicMod, error) {
	var m onicMod
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return m, err
	}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(strings.SplitN(line, "//", 2)[0])
		switch {
		case len(f) == 2 && f[0] == "go":
			m.goVersion = f[1]
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case block && len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			m.requires = append(m.requires, f[0]+" "+f[1])
		case !block && len(f) == 3 && f[0] == "require":
			m.requires = append(m.requires, f[1]+" "+f[2])
		}
	}
	if m.goVersion == "" {
		return m, fmt.Errorf("%s: no go directive", filepath.Join(root, "go.mod"))
	}
	if m.sum, err = os.ReadFile(filepath.Join(root, "go.sum")); err != nil {
		return m, err
	}
	return m, nil
}

// onicCheckout is the onic checkout a new module builds against: flag's
// (when given), else the one the working directory is in, else the one
// this onic binary was built into (bin/onic of a checkout, as make
// builds it).
func onicCheckout(flag string) (string, error) {
	if flag != "" {
		return moduleRoot(flag)
	}
	if root, err := moduleRoot("."); err == nil {
		return root, nil
	}
	if exe, err := os.Executable(); err == nil {
		if root, err := moduleRoot(filepath.Dir(exe)); err == nil {
			return root, nil
		}
	}
	return "", fmt.Errorf("no onic checkout here or around this onic binary: give the checkout's directory")
}

// moduleRoot is the directory of the onic go.mod at or above from.
func moduleRoot(from string) (string, error) {
	dir, err := filepath.Abs(from)
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if !regexp.MustCompile(`(?m)^module onic\s*$`).Match(b) {
				return "", fmt.Errorf("%s: not the onic module (run from an onic checkout)", filepath.Join(dir, "go.mod"))
			}
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no onic go.mod at or above %s (run from an onic checkout)", from)
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

var libKernelTmpl = withFuncs("kernel", `package kernels

import "onic/hdlgen/ir"

// The {{.Name}} kernel, scaffolded by onic kernel new: change Lane (the
// hardware, built with the hdlgen IR) and Ref (plain Go, what the kernel
// means) together, then run: go run ./cmd/onic kernel test {{.Name}}
func init() {
	MustRegister(&Kernel{
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
		Lane:    {{.Prefix}}Lane,
		Ref:     {{.Prefix}}Ref,
	})
}

{{template "funcs" .}}`)

var libKernelTestTmpl = template.Must(template.New("test").Parse(`package kernels_test

import (
	"testing"

	"onic/kernels"
	"onic/kernels/kerneltest"
)

// Test{{.Func}}: the simulator equals the reference on random and edge
// values under backpressure, and the Verilog equals the simulator cycle
// by cycle in Icarus (and Verilator, where installed).
func Test{{.Func}}(t *testing.T) {
	k, err := kernels.Lookup("{{.Name}}")
	if err != nil {
		t.Fatal(err)
	}
	kerneltest.Verify(t, k)
}
`))
