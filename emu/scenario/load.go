package scenario

import (
	"bytes"
	"embed"
	"io"

	"onic/internal/yamlcfg"
)

// scenarioFiles holds the scenarios written as YAML, the default among
// them, so that `onic emu run` needs no file.
//
//go:embed scenarios/*.yaml
var scenarioFiles embed.FS

// Load reads a cluster configuration written in YAML (the format is in
// docs/emu.md). Unknown fields are errors, so a misspelt field is not
// silently left at its default; name labels the errors. Load checks the
// syntax and field names only: Build checks the values.
//
// Values are read strictly: a duration needs a unit ("2us", not 2000), a
// whole-number field refuses a fraction, a number must be finite, and a
// field whose default is not zero refuses an explicit 0 (leave it out for
// the default). A scenario is at most MaxScenarioBytes.
func Load(name string, r io.Reader) (Config, error) {
	var c Config
	if err := yamlcfg.Decode(name, r, &c, loadOptions); err != nil {
		return Config{}, err
	}
	return c, nil
}

// MaxScenarioBytes is the largest scenario file Load reads.
const MaxScenarioBytes = 4 << 20

// LoadFile is Load from the file at path, a regular file.
func LoadFile(path string) (Config, error) {
	var c Config
	if err := yamlcfg.DecodeFile(path, &c, loadOptions); err != nil {
		return Config{}, err
	}
	return c, nil
}

// loadOptions is how scenarios are read: at most MaxScenarioBytes, and
// an explicit 0 refused in every field whose default is not zero (it
// would silently mean the default).
var loadOptions = yamlcfg.Options{MaxBytes: MaxScenarioBytes, Defaulted: map[string]bool{
	"gen": true, "lanes": true, "mps": true, "mrrs": true, "rcb": true, "onics_per_cpu": true,
	"clock_mhz": true, "pipeline_cycles": true, "data_width": true, "hold_tlps": true,
	"egress_stall_cycles": true, "credit_timeout_cycles": true, "completion_timeout": true,
	"ports": true, "depth": true, "span": true, "buffer_beats": true, "media_gbps": true,
	"cycles": true, "gbps": true, "pair_buffer_kib": true,
}}

// embedded loads a built-in scenario file; they are tested, so an error
// here is a bug in onic.
func embedded(file string) Config {
	b, err := scenarioFiles.ReadFile("scenarios/" + file)
	if err != nil {
		panic(err)
	}
	c, err := Load(file, bytes.NewReader(b))
	if err != nil {
		panic(err)
	}
	return c
}
