package yamlcfg_test

import (
	"bytes"
	"strings"
	"testing"

	"onic/emu/scenario"
	"onic/firmware"
	"onic/firmware/plan"
	"onic/internal/yamlcfg"
	"onic/pcie"
)

// entryPoints are every YAML file onic reads, each as its loader takes it.
var entryPoints = []struct {
	name string
	load func(src []byte) error
}{
	{"scenario", func(b []byte) error { _, err := scenario.Load("f.yaml", bytes.NewReader(b)); return err }},
	{"firmware spec", func(b []byte) error { _, err := firmware.LoadSpec("f.yaml", bytes.NewReader(b)); return err }},
	{"trust store", func(b []byte) error { _, err := firmware.LoadTrust("f.yaml", bytes.NewReader(b), "."); return err }},
	{"residency trace", func(b []byte) error { _, err := plan.LoadTrace("f.yaml", bytes.NewReader(b)); return err }},
	{"topology", func(b []byte) error {
		var c pcie.TopologyConfig
		return yamlcfg.Decode("f.yaml", bytes.NewReader(b), &c, yamlcfg.Options{MaxBytes: 1 << 20})
	}},
}

// crashers are inputs that once panicked the struct decoder: mapping keys
// that are not strings, inside nested maps.
var crashers = []string{
	"hosts: [{1: x}]",
	"hosts: [{&0}]",
	"keys: [{true: x}]",
	"onics: [{manager: {access: {domains: [{1.5: x}]}}}]",
	"slots: [{region: {~: 1}}]",
	"onics: [{name: x, 7: [1]}]",
	"switches: [{0: a}]",
}

// TestNonStringKeys: every entry point answers each crasher with one line
// that says where the bad key is.
func TestNonStringKeys(t *testing.T) {
	for _, e := range entryPoints {
		for _, src := range crashers {
			err := e.load([]byte(src))
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "field names are words") {
				t.Errorf("%s: %q: %v, want one line about the key", e.name, src, err)
			}
		}
	}
}

// FuzzEntryPoints: no YAML makes any of onic's file loaders panic; each
// loads it or returns a one-line error.
func FuzzEntryPoints(f *testing.F) {
	for _, c := range crashers {
		f.Add([]byte(c))
	}
	f.Add([]byte("duration: 1us\nhosts: [{name: A}]\n"))
	f.Add([]byte("name: x\nversion: 1.0.0\ntarget: {part: xcvu9p-flga2104-2L-e}\n"))
	f.Add([]byte("keys: [{name: ops, role: operator, key: x}]\nrevoked: [ops]\nmin_security_version: 3\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, e := range entryPoints {
			if err := e.load(src); err != nil && strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: a multi-line error: %q", e.name, err)
			}
		}
	})
}
