package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPackageMap: docs/README.md's package map names every package in the
// tree, and every package it names exists.
func TestPackageMap(t *testing.T) {
	out, err := exec.Command("go", "list", "onic/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range regexp.MustCompile("`([a-z0-9/]+)`").FindAllStringSubmatch(first, -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	tree := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, "onic/")
		tree[p] = true
		if !named[p] {
			t.Errorf("docs/README.md's package map does not name %s", p)
		}
	}
	for p := range named {
		if !tree[p] {
			t.Errorf("docs/README.md's package map names %s, which is not in the tree", p)
		}
	}
}
