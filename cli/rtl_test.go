package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// TestCompareLandings: compareLandings passes runs that landed the same
// writes in the same order (the cards' run may have got less far) and
// names the first write that differs — by address, length or bytes — or
// an O-NIC whose writes reached a host in one run only.
func TestCompareLandings(t *testing.T) {
	w := func(addr uint64, n int, data ...byte) cluster.Landing {
		return cluster.Landing{Host: "B", From: "onicB", Address: addr, Bytes: n, Data: data}
	}
	for _, tc := range []struct {
		name        string
		model, rtl  []cluster.Landing
		wantErr     string
		wantSummary string
	}{
		{"same, cards behind", []cluster.Landing{w(0x1000, 256), w(0x1100, 256), w(0x1200, 256)}, []cluster.Landing{w(0x1000, 256), w(0x1100, 256, 1, 2)}, "",
			"3 writes landed on the model, 2 on the cards; the first 2 are the same"},
		{"address", []cluster.Landing{w(0x1000, 256), w(0x1100, 256)}, []cluster.Landing{w(0x1000, 256), w(0x1180, 256)}, "write 2 from onicB: the model landed 256 bytes at 0x1100", ""},
		{"length", []cluster.Landing{w(0x1000, 256)}, []cluster.Landing{w(0x1000, 128)}, "the cards 128 bytes at 0x1000", ""},
		{"bytes", []cluster.Landing{w(0x1000, 4, 1, 2, 3, 4)}, []cluster.Landing{w(0x1000, 4, 1, 2, 3, 5)}, "write 1 from onicB", ""},
		{"one run only", []cluster.Landing{w(0x1000, 4)}, nil, "1 writes from onicB landed on the model, 0 on the cards", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, c := landings{}, landings{}
			for _, l := range tc.model {
				m[[2]string{l.Host, l.From}] = append(m[[2]string{l.Host, l.From}], l)
			}
			for _, l := range tc.rtl {
				c[[2]string{l.Host, l.From}] = append(c[[2]string{l.Host, l.From}], l)
			}
			lines, err := compareLandings(m, c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(lines) != 1 || !strings.Contains(lines[0], tc.wantSummary) {
				t.Fatalf("%v %q", err, lines)
			}
		})
	}
}

// TestEmuRunRTL: onic emu run --rtl --compare runs the two-party
// scenario's writes for 10 µs on the cards and on the model, and says for
// each host that the writes landed the same; --compare wants --rtl.
func TestEmuRunRTL(t *testing.T) {
	code, out, errs := onic(t, "", "emu", "run", "--rtl", "--compare", "--duration", "10us")
	if code != 0 || !strings.Contains(out, "rtl: onicA, onicB as generated cards") || strings.Count(errs, "are the same") != 2 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if code, _, errs := onic(t, "", "emu", "run", "--compare"); code != 1 || !strings.Contains(errs, "--compare: compares the cards with the model: add --rtl") {
		t.Errorf("--compare alone: exit %d, %q", code, errs)
	}
	// A two-input kernel on a card (C's, beside the Go models of A and B:
	// one card to compile): its sums land as the model's do.
	code, _, errs = onic(t, "", "emu", "run", "--scenario", "allreduce", "--rtl", "onicC", "--compare", "--duration", "20us")
	if code != 0 || !regexp.MustCompile(`compare: host C from onicC: \d+ writes landed on the model, \d+ on the cards; the first \d+ are the same`).MatchString(errs) {
		t.Errorf("allreduce --rtl --compare: exit %d, %q", code, errs)
	}
	// A kernel the RTL backend cannot follow (opaque: no reference for
	// its bytes) is refused in one line, before any card is built.
	c := scenario.Allreduce()
	c.ONICs[2].Kernels[0].Name, c.ONICs[2].Kernels[0].Opaque = "my-kernel", true
	b, err := scenario.YAML(c)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "opaque.yaml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	want := "--rtl onicC: slot 0 holds kernel my-kernel"
	if code, _, errs := onic(t, "", "emu", "run", "--scenario-file", file, "--rtl"); code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Errorf("an opaque kernel --rtl: exit %d, %q", code, errs)
	}
}
