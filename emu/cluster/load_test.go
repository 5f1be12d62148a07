package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"onic/emu/scenario"
)

// TestLoadErrors: a YAML file with a misspelt field, a value of the wrong
// type, bad syntax or a bad value is refused with one line naming the
// file and the field.
func TestLoadErrors(t *testing.T) {
	base, err := os.ReadFile(filepath.Join("..", "scenario", "scenarios", "two-party.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"misspelt field", "duration: 200us", "duraton: 200us", "duraton"},
		{"misspelt nested field", "fibre_m: [10, 10]           #", "fiber_m: [10, 10] #", "fiber_m"},
		{"bad duration", "duration: 200us", "duration: soon", "duration"},
		{"wrong type", "size: 65536}\n  - {name: B->A", "size: big}\n  - {name: B->A", "size"},
		{"bad syntax", "circuits:\n", "circuits: [\n", "x.yaml"},
		{"bad value", "{a: onicA.a, b: onicB.a}", "{a: onicA.a, b: onicQ.a}", `circuits[0].b: "onicQ.a" is not an O-NIC port`},
		{"port wired twice", "{a: onicA.a, b: onicB.a}", "{a: onicA.a, b: onicB.a}\n  - {a: onicA.a, b: onicB.b}", "circuits[1].a: port onicA.a is already wired"},
		{"zero rate", "- name: A  ", "- name: A\n    lanes: 3\n   ", "lanes"},
		// Values that used to be read as something else.
		{"bare duration", "duration: 200us", "duration: 2000", "duration: 2000 has no unit: write a duration with one (ns, us, ms or s)"},
		{"bare fraction duration", "duration: 200us", "duration: 2.5", "2.5 has no unit"},
		{"bare reconfig", "duration: 200us", "duration: 200us\nmems: {reconfig: 500}", "500 has no unit"},
		{"fraction size", "size: 65536}\n  - {name: B->A", "size: 4096.7}\n  - {name: B->A", "4096.7 is not a whole number"},
		{"zero lanes", "- name: A  ", "- name: A\n    lanes: 0\n   ", "hosts[0].lanes: 0 is not a value here: leave the field out for its default"},
		{"NaN rate", "size: 65536}\n  - {name: B->A", "size: 65536, rate_gbps: .nan}\n  - {name: B->A", "NaN is not a finite number"},
		{"infinite fibre", "fibre_m: [10, 10]           #", "fibre_m: [.inf, 10] #", "+Inf is not a finite number"},
		{"huge fibre", "fibre_m: [10, 10]           #", "fibre_m: [1e30, 10] #", "fibre_m[0]: 1e+30 metres must be 0 to 100000"},
		{"tiny rate", "size: 65536}\n  - {name: B->A", "size: 65536, rate_gbps: 1e-300}\n  - {name: B->A", "rate_gbps: 1e-300 must be"},
	} {
		src := strings.Replace(string(base), tc.from, tc.to, 1)
		if src == string(base) {
			t.Fatalf("%s: the edit did not apply", tc.name)
		}
		c, err := scenario.Load("x.yaml", strings.NewReader(src))
		if err == nil {
			_, err = Build(c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.name, err, tc.want)
		}
	}
}

// TestTwoPartyYAML: the embedded default is complete and loads to the
// configuration its comments describe.
func TestTwoPartyYAML(t *testing.T) {
	c := scenario.TwoParty()
	if c.Name != "two-party" || c.Duration.String() != "200µs" || len(c.Hosts) != 2 || len(c.ONICs) != 2 ||
		len(c.Flows) != 2 || c.Flows[0].Size != 64<<10 || c.ONICs[1].FibreM != [2]float64{10, 10} ||
		c.ONICs[0].Manager.Translation.Windows[0].Translated != 1<<32 ||
		c.ONICs[1].Manager.Access.Domains[1].Requesters[0] != "10:00.0-10:00.7" {
		t.Fatalf("%+v", c)
	}
	if _, err := Build(c); err != nil {
		t.Fatal(err)
	}
	if _, err := scenario.LoadFile(filepath.Join("..", "scenario", "scenarios", "missing.yaml")); err == nil {
		t.Error("a missing file loaded")
	}
	for path, want := range map[string]string{"/dev/zero": "not a regular file", filepath.Join("..", "scenario", "scenarios"): "not a regular file"} {
		if _, err := scenario.LoadFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadFile(%s): %v, want %q", path, err, want)
		}
	}
	if _, err := scenario.Load("big.yaml", strings.NewReader("#"+strings.Repeat(" ", scenario.MaxScenarioBytes))); err == nil || !strings.Contains(err.Error(), "more than the 4 MiB") {
		t.Errorf("a 4 MiB scenario: %v", err)
	}
}

// FuzzLoadBuild: whatever YAML comes in, loading and building either
// succeed or return one-line errors; they never panic.
func FuzzLoadBuild(f *testing.F) {
	base, err := os.ReadFile(filepath.Join("..", "scenario", "scenarios", "two-party.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(base)
	f.Add([]byte("duration: 1us\nhosts: [{name: A}]\nonics: [{name: o, host: A, kernels: [{slot: 9, egress: port-a}]}]\n"))
	f.Add([]byte("duration: 1us\nhosts: [{name: A, kind: nvme}]\nflows: [{name: f, from: A, op: nvme-read, size: 4096}]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		c, err := scenario.Load("fuzz.yaml", bytes.NewReader(src))
		if err == nil {
			_, err = Build(c)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error: %q", err)
		}
	})
}
