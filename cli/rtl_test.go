package cli

import (
	"strings"
	"testing"

	"onic/emu/cluster"
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
	// Traffic the RTL backend cannot follow yet is refused in one line,
	// before any card is built.
	for scen, want := range map[string]string{
		"allreduce": "--rtl onicC: slot 0 holds kernel sum-int32",
		"offload":   `--rtl: flows[A tasks]: op "task"`,
	} {
		if code, _, errs := onic(t, "", "emu", "run", "--scenario", scen, "--rtl"); code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s --rtl: exit %d, %q", scen, code, errs)
		}
	}
}
