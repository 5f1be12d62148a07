package archtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "onic/"

// layers reads the package list of docs/architecture.md's "Layers"
// section: the first code block after its heading, one package a line
// (its first field), blank lines between groups.
func layers(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Layers")
	if !ok {
		t.Fatal("docs/architecture.md has no Layers section")
	}
	_, block, ok := strings.Cut(sec, "```\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("docs/architecture.md's Layers section has no code block")
	}
	var pkgs []string
	for _, line := range strings.Split(block, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			pkgs = append(pkgs, f[0])
		}
	}
	return pkgs
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
}

// tree lists the module's packages and their imports within the module.
func tree(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		pkgs[name] = nil
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				pkgs[name] = append(pkgs[name], strings.TrimPrefix(imp, module))
			}
		}
	}
	return pkgs
}

// TestLayers: docs/architecture.md lists every package of the module
// once and nothing else, and every import points down the list.
func TestLayers(t *testing.T) {
	list, pkgs := layers(t), tree(t)
	if len(pkgs) < 40 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	rank := map[string]int{}
	for i, p := range list {
		if _, dup := rank[p]; dup {
			t.Errorf("docs/architecture.md lists %s twice", p)
		}
		rank[p] = i
		if _, ok := pkgs[p]; !ok {
			t.Errorf("docs/architecture.md lists %s, which is not a package of the module", p)
		}
	}
	for p, imps := range pkgs {
		r, ok := rank[p]
		if !ok {
			t.Errorf("package %s is missing from docs/architecture.md's Layers", p)
			continue
		}
		for _, imp := range imps {
			if ri, ok := rank[imp]; ok && ri <= r {
				t.Errorf("%s imports %s, which docs/architecture.md lists above it: an import pointing up", p, imp)
			}
		}
	}
}

// TestSmallClosures: the TLP codec imports nothing outside the standard
// library (its gopacket and pcap glue is tlp/pcap), so a program that
// only decodes TLPs pulls in no third-party code; and the scenario schema
// depends on no generator, simulator, kernel library or firmware package
// (it names a part and a board through firmware/board).
func TestSmallClosures(t *testing.T) {
	deps := func(pkg string) []string {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	for _, d := range deps("onic/tlp") {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") {
			t.Errorf("tlp depends on %s, outside the standard library", d)
		}
	}
	for _, d := range deps("onic/emu/scenario") {
		if strings.HasPrefix(d, "onic/hdlgen/") || strings.HasPrefix(d, "onic/designs/") || strings.HasPrefix(d, "onic/kernels") || d == "onic/firmware" || strings.HasPrefix(d, "onic/emu/cluster") {
			t.Errorf("emu/scenario depends on %s", d)
		}
	}
}

// TestToolkitApart: the hardware toolkit (hdlgen/: the IR, the simulator,
// the Verilog printer, the stream and register libraries, the tool
// runners) depends on nothing of onic above tlp, and holds no design: the
// O-NIC's designs (the manager, the card, its slots, optical links, PCIe
// adapters, interrupt controller, board tops, and the bundle writer and
// card simulation that render and run them) are under designs/, which
// the toolkit never imports.
func TestToolkitApart(t *testing.T) {
	pkgs := tree(t)
	n := 0
	for p, imps := range pkgs {
		if !strings.HasPrefix(p, "hdlgen/") {
			continue
		}
		n++
		for _, imp := range imps {
			if !strings.HasPrefix(imp, "hdlgen/") && imp != "tlp" {
				t.Errorf("toolkit package %s imports %s", p, imp)
			}
		}
	}
	if n < 5 {
		t.Fatalf("%d toolkit packages under hdlgen/", n)
	}
	for _, design := range []string{"designs/manager", "designs/bundle", "designs/cardsim", "designs/internal/card"} {
		if _, ok := pkgs[design]; !ok {
			t.Errorf("no package %s: the designs' tree moved", design)
		}
	}
}
