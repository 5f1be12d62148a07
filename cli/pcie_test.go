package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"onic/testbenches/tools"
)

const rackYAML = `name: rack1
root_ports:
  - name: rp0
    gen: 4
    device:
      name: nic
      kind: onic
  - name: rp1
    device:
      name: acc
      kind: endpoint
      vendor_id: 0x10ee
      device_id: 0x903f
      class: 0x120000
      bars:
        - {index: 0, kind: mem64, prefetchable: true, size: 0x10000000}
`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPCIeTree(t *testing.T) {
	code, out, errs := onic(t, "", "pcie", "tree")
	if code != 0 || !strings.Contains(out, "\\-01.0-[01-06]----00.0-[02-06]--+-00.0-[03]----00.0  [0ace:0001] onic0") {
		t.Fatalf("default tree: exit %d %s\n%s", code, errs, out)
	}
	code, out, errs = onic(t, "", "pcie", "tree", "--topology", writeFile(t, "rack.yaml", rackYAML))
	want := "-[0000:00]-+-00.0  [0ace:0200] rack1 host bridge\n" +
		"           +-01.0-[01]----00.0  [0ace:0001] nic\n" +
		"           \\-02.0-[02]----00.0  [10ee:903f] acc\n"
	if code != 0 || out != want {
		t.Fatalf("YAML tree: exit %d %s\n%s", code, errs, out)
	}
}

func TestPCIeBadTopology(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"type", "root_ports:\n  - name: rp0\n    gen: three\n", "root_ports[0].gen: "},
		{"unknown key", "root_ports:\n  - name: rp0\n    colour: red\n", "invalid keys: colour"},
		{"unknown kind", "root_ports:\n  - device: {name: x, kind: fpga}\n", `root_ports[0].device.kind: "fpga" is not a device kind`},
		{"no ports", "name: h\n", "root_ports: a root complex needs at least one root port"},
		{"not YAML", "root_ports: [\n", "topology"},
	} {
		code, _, errs := onic(t, "", "pcie", "tree", "--topology", writeFile(t, "t.yaml", tc.yaml))
		if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want one line containing %q", tc.name, code, errs, tc.want)
		}
	}
	if code, _, errs := onic(t, "", "pcie", "tree", "--topology", "/nonexistent.yaml"); code != 1 || !strings.Contains(errs, "/nonexistent.yaml") {
		t.Errorf("missing file: %d %q", code, errs)
	}
	if code, _, errs := onic(t, "", "pcie", "dump", "gpu9"); code != 1 || !strings.Contains(errs, `no function "gpu9"`) {
		t.Errorf("unknown device: %d %q", code, errs)
	}
}

// TestPCIeDumpLspci dumps the enumerated default hierarchy and has the
// real lspci decode it: bus numbers, windows and BAR addresses assigned by
// enumeration, and MPS negotiated to 256, must show.
func TestPCIeDumpLspci(t *testing.T) {
	lspci := tools.Require(t, "lspci")
	path := filepath.Join(t.TempDir(), "all.txt")
	if code, _, errs := onic(t, "", "pcie", "dump", "--out", path); code != 0 {
		t.Fatal(errs)
	}
	out, err := exec.Command(lspci, "-F", path, "-vvv").Output()
	if err != nil {
		t.Fatalf("lspci: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"00:00.0 Host bridge: Device 0ace:0200",
		"00:01.0 PCI bridge: Device 0ace:0104",
		"Bus: primary=00, secondary=01, subordinate=06",
		"01:00.0 PCI bridge: Device 0ace:0105",
		"Express (v2) Upstream Port",
		"02:02.0 PCI bridge",
		"Memory behind bridge: c0000000-c10fffff [size=17M]",
		"Prefetchable memory behind bridge: 0000005000000000-0000005401ffffff [size=16416M]",
		"03:00.0 Network controller: Device 0ace:0001",
		"Region 0: Memory at c1100000 (64-bit, non-prefetchable)",
		"05:00.0 3D controller: Device 0ace:0300",
		"Region 1: Memory at 5000000000 (64-bit, prefetchable)",
		"05:00.1 Audio device: Device 0ace:0301",
		"06:00.0 Non-Volatile memory controller: Device 0ace:0108",
		"MaxPayload 256 bytes, MaxReadReq 512 bytes",
		"LnkSta:\tSpeed 8GT/s, Width x4",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("lspci output lacks %q", want)
		}
	}
	if strings.Contains(text, "MaxPayload 128 bytes, MaxReadReq") {
		t.Error("a function kept the reset MPS of 128 bytes")
	}
	if t.Failed() {
		t.Logf("lspci printed:\n%s", text)
	}
	// The sizes a dump cannot carry are on '#' lines next to it.
	dump, _ := os.ReadFile(path)
	for _, want := range []string{
		"# BAR0 mem64 size 0x10000 at 0xc1100000",
		"# BAR2 mem64 prefetchable size 0x400000000 at 0x4000000000",
		"# BAR4 mem64 prefetchable size 0x2000000 at 0x4400000000",
		"# BAR1 mem64 prefetchable size 0x400000000 at 0x5000000000",
	} {
		if !strings.Contains(string(dump), want) {
			t.Errorf("dump lacks %q", want)
		}
	}
	// Selecting by name and by ID.
	code, out2, _ := onic(t, "", "pcie", "dump", "gpu0")
	if code != 0 || !strings.HasPrefix(out2, "05:00.0 ") || !strings.Contains(out2, "\n05:00.1 ") {
		t.Errorf("dump gpu0 did not give both functions")
	}
	code, out2, _ = onic(t, "", "pcie", "dump", "06:00.0")
	if code != 0 || !strings.HasPrefix(out2, "06:00.0 ") || strings.Count(out2, "\n\n") != 1 {
		t.Errorf("dump 06:00.0 gave %q", out2[:min(len(out2), 80)])
	}
}
