package cluster

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/viper"
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
func Load(name string, r io.Reader) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(r); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, flatten(err))
	}
	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, flatten(err))
	}
	return c, nil
}

// LoadFile is Load from the file at path.
func LoadFile(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, err
	}
	defer f.Close()
	return Load(path, f)
}

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

// flatten puts a decoder's multi-line error list on one line.
func flatten(err error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "*")); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
