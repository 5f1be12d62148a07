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
		{"wait: 2000", "f.yaml: wait: 2000 has no unit"},
		{"wait: soon", `f.yaml: wait: "soon" is not a duration`},
		{"size: 4096.7", "f.yaml: size: 4096.7 is not a whole number"},
		{"size: 1e30", "size: 1e+30 is not a whole number"},
		{"items: [{rate: .nan}]", "items[0].rate: NaN is not a finite number"},
		{"items: [{rate: -.inf}]", "-Inf is not a finite number"},
		{"items: [{lanes: 0}]", "f.yaml: items[0].lanes: 0 is not a value here"},
		{"sise: 3", "invalid keys: sise"},
		{"items: [{1: x}]", `f.yaml: items[0]: a key that is a number ("1"): field names are words`},
		{"items: [{&0}]", "items[0]: a key that is null:"},
		{"items: [{true: x}]", `items[0]: a key that is a boolean ("true")`},
		{"size: [", "f.yaml: "},
		{"#" + strings.Repeat(" ", 1<<10), "more than the 1 KiB allowed"},
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
