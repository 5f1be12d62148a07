package yamlcfg

import (
	"strings"
	"testing"
	"time"
)

type inner struct {
	Lanes int     `mapstructure:"lanes"`
	Rate  float64 `mapstructure:"rate"`
}

type doc struct {
	Wait  time.Duration `mapstructure:"wait"`
	Size  int           `mapstructure:"size"`
	Items []inner       `mapstructure:"items"`
}

// TestDecode: each strictness rule, as a one-line error naming the file
// and field, and the values it lets through.
func TestDecode(t *testing.T) {
	o := Options{MaxBytes: 1 << 10, Defaulted: map[string]bool{"lanes": true}}
	for _, tc := range []struct{ src, want string }{
		{"wait: 2us\nsize: 4096\nitems: [{lanes: 4, rate: 1.5}]", ""},
		{"wait: 0\nsize: 4096.0", ""},
		{"wait: 2000", "f.yaml:1: wait: 2000 has no unit"},
		{"wait: soon", `f.yaml:1: wait: "soon" is not a duration`},
		{"size: 4096.7", "f.yaml:1: size: 4096.7 is not a whole number"},
		{"size: 1e30", "size: 1e+30 is not a whole number"},
		{"items: [{rate: .nan}]", "items[0].rate: NaN is not a finite number"},
		{"items: [{rate: -.inf}]", "-Inf is not a finite number"},
		{"items: [{lanes: 0}]", "f.yaml:1: items[0].lanes: 0 is not a value here"},
		{"sise: 3", "invalid keys: sise"},
		{"items: [{1: x}]", `f.yaml:1: items[0]: a key that is a number ("1"): field names are words`},
		{"items: [{&0}]", "items[0]: a key that is null:"},
		{"items: [{true: x}]", `items[0]: a key that is a boolean ("true")`},
		{"size: [", "f.yaml: "},
		{"#" + strings.Repeat(" ", 1<<10), "more than the 1 KiB allowed"},
		// The line of the field an error names, however deep.
		{"size: 3\nitems:\n  - lanes: 4\n  - lanes: 2\n    rate: x\n", `f.yaml:5: items[1].rate: "x" is not a number`},
		{"size: 3\nitems:\n  - lanes: 4\n  - lanz: 2\n", "f.yaml:4: items[1]: has invalid keys: lanz; did you mean lanes?"},
		{"\n\nsise: 3", "f.yaml:3: has invalid keys: sise; did you mean size?"},
		{"items: [{xyzzy: 2}]", "items[0]: has invalid keys: xyzzy"}, // nothing near: no suggestion
		{"size: 3\nitems:\n\n  - {lanes: 0}", "f.yaml:4: items[0].lanes: 0 is not a value here"},
	} {
		var d doc
		err := Decode("f.yaml", strings.NewReader(tc.src), &d, o)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.src, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%q: %v, want one line with %q", tc.src, err, tc.want)
		}
	}
}

// TestLocate: a checker's message about a field is led by that field's
// line, or the line of the nearest field above it the document has.
func TestLocate(t *testing.T) {
	src := []byte("name: x\nslots:\n  - slot: 0\n  - slot: 2\n    kernel: k\ntenants:\n  - slots: [1, 3]\n")
	for _, c := range []struct{ msg, want string }{
		{"slots[1].slot 2: the manager has kernel slots 0-1", "f.yaml:4: slots[1].slot 2"},
		{"slots[1].region: want lut > 0", "f.yaml:4: slots[1].region"}, // not in the file: its slot's line
		{"tenants[0].slots[1] 3: no such slot", "f.yaml:7: tenants[0].slots[1] 3"},
		{"name \"x\": bad", "f.yaml:1: name"},
		{"width 128: must be 256 or 512", "f.yaml: width 128"}, // no such field: the file alone
	} {
		if got := Locate("f.yaml", src, c.msg).Error(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want it to begin %q", c.msg, got, c.want)
		}
	}
}
