package cluster

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"onic/internal/readfile"
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
	b, err := io.ReadAll(io.LimitReader(r, MaxScenarioBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %v", name, err)
	}
	if len(b) > MaxScenarioBytes {
		return Config{}, fmt.Errorf("%s: more than the %s a scenario may be", name, readfile.Size(MaxScenarioBytes))
	}
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, flatten(err))
	}
	if err := explicitZeros(v.AllSettings(), ""); err != nil {
		return Config{}, fmt.Errorf("%s: %v", name, err)
	}
	var c Config
	if err := v.UnmarshalExact(&c, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(strictValues, mapstructure.StringToSliceHookFunc(",")))); err != nil {
		return Config{}, fmt.Errorf("%s: %s", name, flatten(err))
	}
	return c, nil
}

// MaxScenarioBytes is the largest scenario file Load reads.
const MaxScenarioBytes = 4 << 20

// LoadFile is Load from the file at path, a regular file.
func LoadFile(path string) (Config, error) {
	b, err := readfile.Read(path, MaxScenarioBytes)
	if err != nil {
		return Config{}, err
	}
	return Load(path, bytes.NewReader(b))
}

var durationType = reflect.TypeFor[time.Duration]()

// strictValues is the decoder's hook for values that would otherwise be
// converted silently: bare numbers as durations, fractions as whole
// numbers, NaN and infinities.
func strictValues(from, to reflect.Type, data any) (any, error) {
	if to == durationType {
		switch d := data.(type) {
		case string:
			t, err := time.ParseDuration(strings.TrimSpace(d))
			if err != nil {
				return nil, fmt.Errorf("%q is not a duration: want a number with a unit (ns, us, ms or s), e.g. 2us", d)
			}
			return t, nil
		case int, int64, uint64, float64:
			if fmt.Sprint(d) == "0" {
				return time.Duration(0), nil
			}
			return nil, fmt.Errorf("%v has no unit: write a duration with one (ns, us, ms or s), e.g. %vns", d, d)
		}
		return data, nil
	}
	f, isFloat := data.(float64)
	if !isFloat {
		return data, nil
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%g is not a finite number", f)
	}
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return nil, fmt.Errorf("%g is not a whole number", f)
		}
	}
	return data, nil
}

// defaultedFields are the fields whose default is not zero, so that an
// explicit 0 there would silently mean the default: Load refuses it.
var defaultedFields = map[string]bool{
	"gen": true, "lanes": true, "mps": true, "mrrs": true, "rcb": true, "onics_per_cpu": true,
	"clock_mhz": true, "pipeline_cycles": true, "data_width": true, "hold_tlps": true,
	"ports": true, "depth": true, "span": true, "buffer_beats": true, "media_gbps": true,
	"cycles": true, "gbps": true, "pair_buffer_kib": true,
}

// explicitZeros finds a defaulted field set to 0 in settings (viper's
// nested maps and lists); path is the field path so far.
func explicitZeros(settings any, path string) error {
	switch v := settings.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if defaultedFields[k] && isZero(v[k]) {
				return fmt.Errorf("%s: 0 is not a value here: leave the field out for its default", p)
			}
			if err := explicitZeros(v[k], p); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := explicitZeros(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func isZero(v any) bool {
	switch n := v.(type) {
	case int:
		return n == 0
	case int64:
		return n == 0
	case uint64:
		return n == 0
	case float64:
		return n == 0
	}
	return false
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

var quotedField = regexp.MustCompile(`^'([^']+)' (.*)$`)

// flatten puts a decoder's multi-line error list on one line.
func flatten(err error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "*"))
		for _, head := range []string{"decoding failed due to the following error(s):", "error(s) decoding:"} {
			l = strings.TrimSpace(strings.TrimPrefix(l, head))
		}
		// The decoder's "'field.path' message" reads as "field.path: message".
		if m := quotedField.FindStringSubmatch(l); m != nil {
			l = m[1] + ": " + m[2]
			if m[1] == "" {
				l = m[2] // the top level
			}
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
