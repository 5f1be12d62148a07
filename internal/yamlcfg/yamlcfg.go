// Package yamlcfg decodes onic's YAML files — scenarios, firmware specs,
// trust stores, kernel traces — into their Go types strictly, the same
// way for every file:
//
//   - an unknown field is an error (a misspelt field is not silently left
//     at its default);
//   - a duration needs a unit ("2us", not 2000: a bare number would
//     otherwise be read as nanoseconds);
//   - a whole-number field refuses a fraction (4096.7 is not 4096);
//   - NaN and infinities are refused;
//   - a field whose default is not zero refuses an explicit 0 (leave it
//     out for the default), for the field names the caller lists;
//   - the input is at most a size the caller documents.
//
// Errors are one line, led by the file's name, the line of the field in
// it where there is one ("f.yaml:12: hosts[1].mps: ..."), and the field's
// path.
package yamlcfg

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"go.yaml.in/yaml/v3"

	"onic/internal/readfile"
	"onic/internal/suggest"
)

// Options say what a file may hold besides its type's fields.
type Options struct {
	// MaxBytes bounds the input (required: every file has a limit).
	MaxBytes int64
	// Defaulted names the fields (by key, at any depth) whose default is
	// not zero, so that an explicit 0 there is refused.
	Defaulted map[string]bool
}

// Decode reads YAML from r into out (a pointer to a struct with
// mapstructure tags); name labels the errors.
func Decode(name string, r io.Reader, out any, o Options) error {
	b, err := io.ReadAll(io.LimitReader(r, o.MaxBytes+1))
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	if int64(len(b)) > o.MaxBytes {
		return fmt.Errorf("%s: more than the %s allowed", name, readfile.Size(o.MaxBytes))
	}
	var tree map[string]any
	if err := yaml.Unmarshal(b, &tree); err != nil {
		return fmt.Errorf("%s: %s", name, OneLine(err))
	}
	// Where each field is, for the errors (the document parsed again as
	// nodes: it parsed once, so it does again).
	var root yaml.Node
	_ = yaml.Unmarshal(b, &root)
	at := Lines(&root)
	if err := stringKeys(tree, ""); err != nil {
		return located(name, at, err.Error())
	}
	if err := explicitZeros(tree, "", o.Defaulted); err != nil {
		return located(name, at, err.Error())
	}
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook:       mapstructure.ComposeDecodeHookFunc(strictValues, mapstructure.StringToSliceHookFunc(",")),
		ErrorUnused:      true, // unknown fields are errors
		WeaklyTypedInput: true, // "0x100" for a number, as YAML users write addresses
		Result:           out,
	})
	if err != nil {
		return fmt.Errorf("%s: %v", name, err) // out is not a pointer: a bug in the caller
	}
	if err := d.Decode(tree); err != nil {
		msg := OneLine(err)
		if m := invalidKeys.FindStringSubmatch(msg); m != nil {
			// A misspelt field: the nearest the struct there has.
			if s := suggest.Nearest(m[2], fieldsAt(reflect.TypeOf(out), m[1])); s != "" {
				msg += "; did you mean " + s + "?"
			}
		}
		return located(name, at, msg)
	}
	return nil
}

// Lines maps each field path of a YAML document ("hosts[1].mps", in the
// form errors name fields) to the line it starts on.
func Lines(doc *yaml.Node) map[string]int {
	at := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if _, seen := at[p]; !seen {
					at[p] = k.Line
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				at[p] = c.Line
				walk(c, p)
			}
		}
	}
	walk(doc, "")
	return at
}

// leadingPath is a field path at the start of a message.
var leadingPath = regexp.MustCompile(`^[A-Za-z0-9_]+(?:\[\d+\])*(?:\.[A-Za-z0-9_]+(?:\[\d+\])*)*`)

// Locate is msg, a message about document src that starts with a field
// path ("slots[1].slot 2: the manager has kernel slots 0-1", as a
// checker's error says it), as an error led by name and the line of that
// field, or of the nearest field above it that src has; just name when
// src has none.
func Locate(name string, src []byte, msg string) error {
	var root yaml.Node
	if yaml.Unmarshal(src, &root) == nil {
		at := Lines(&root)
		for p := leadingPath.FindString(msg); p != ""; {
			if line, ok := at[p]; ok {
				return fmt.Errorf("%s:%d: %s", name, line, msg)
			}
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return fmt.Errorf("%s: %s", name, msg)
}

// fieldsAt is the YAML field names of the struct at path ("hosts[0].nvme",
// as the decoder names fields; "" for the top) in a value of type t, or
// nil when path leads to no struct.
func fieldsAt(t reflect.Type, path string) []string {
	deref := func(t reflect.Type) reflect.Type {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		return t
	}
	t = deref(t)
	if path != "" {
		for _, seg := range strings.Split(path, ".") {
			seg, _, _ = strings.Cut(seg, "[")
			if t == nil || t.Kind() != reflect.Struct {
				return nil
			}
			f, ok := fieldNamed(t, seg)
			if !ok {
				return nil
			}
			t = deref(f.Type)
		}
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if n := yamlName(f); n != "" && f.IsExported() && !f.Anonymous {
			names = append(names, n)
		}
	}
	return names
}

// fieldNamed is t's field that the YAML field name reads into.
func fieldNamed(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if f.IsExported() && strings.EqualFold(yamlName(f), name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlName is the name a field has in YAML: its mapstructure tag's, else
// its Go name (matched without regard to case); "" for "-".
func yamlName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
	switch n {
	case "-":
		return ""
	case "":
		return strings.ToLower(f.Name)
	}
	return n
}

// invalidKeys is the decoder's message for unknown fields.
var invalidKeys = regexp.MustCompile(`^(?:(.*): )?has invalid keys: ([^,; ]+)`)

// located is msg ("path: message", perhaps several joined by "; ") as an
// error led by the file's name and the line of the first field it names,
// when the document has that field.
func located(name string, at map[string]int, msg string) error {
	path, _, _ := strings.Cut(msg, ": ")
	if m := invalidKeys.FindStringSubmatch(msg); m != nil {
		path = m[2] // the unknown field itself
		if m[1] != "" {
			path = m[1] + "." + m[2]
		}
	}
	if line, ok := at[path]; ok {
		return fmt.Errorf("%s:%d: %s", name, line, msg)
	}
	return fmt.Errorf("%s: %s", name, msg)
}

// DecodeFile is Decode from the file at path, a regular file of at most
// o.MaxBytes.
func DecodeFile(path string, out any, o Options) error {
	b, err := readfile.Read(path, o.MaxBytes)
	if err != nil {
		return err
	}
	return Decode(path, bytes.NewReader(b), out, o)
}

var (
	quotedField = regexp.MustCompile(`^'([^']*)' (.*)$`)
	decoderHead = []string{"decoding failed due to the following error(s):", "error(s) decoding:"}
)

// unconvertible is the decoder's message for a value of the wrong shape.
var unconvertible = regexp.MustCompile(`expected type '([^']+)', got unconvertible type '([^']+)'(, value: '[^']*')?`)

// goKind names a Go type as a YAML writer thinks of it.
func goKind(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "a map (key: value)"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "a " + t
}

// OneLine puts a YAML or decoder error, often a multi-line list, on one
// line, each item as "field.path: message".
func OneLine(err error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "*"))
		for _, head := range decoderHead {
			l = strings.TrimSpace(strings.TrimPrefix(l, head))
		}
		if m := quotedField.FindStringSubmatch(l); m != nil {
			l = m[1] + ": " + m[2]
			if m[1] == "" {
				l = m[2] // the top level
			}
		}
		l = unconvertible.ReplaceAllStringFunc(l, func(m string) string {
			g := unconvertible.FindStringSubmatch(m)
			return "want " + goKind(g[1]) + ", not " + goKind(g[2])
		})
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
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
	if str, ok := data.(string); ok {
		// A string where a number goes: the decoder's own message would
		// be strconv's; say what the value is not, once.
		t := strings.TrimSpace(str)
		switch to.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if _, err := strconv.ParseInt(t, 0, to.Bits()); err != nil {
				return nil, fmt.Errorf("%q is not a whole number (or is out of range)", str)
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if _, err := strconv.ParseUint(t, 0, to.Bits()); err != nil {
				return nil, fmt.Errorf("%q is not a whole number at least 0 (or is out of range)", str)
			}
		case reflect.Float32, reflect.Float64:
			if _, err := strconv.ParseFloat(t, 64); err != nil {
				return nil, fmt.Errorf("%q is not a number", str)
			}
		case reflect.Bool:
			if _, err := strconv.ParseBool(t); err != nil {
				return nil, fmt.Errorf("%q is not true or false", str)
			}
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

// stringKeys checks that every mapping in the tree (a YAML document as
// yaml.v3 decodes it) has only string keys, as every onic file's fields
// are named: a key that is a number, a boolean or null (`{1: x}`,
// `{true: x}`, `{&0}`) is an error naming where it is, never handed to
// the struct decoder.
func stringKeys(v any, path string) error {
	at := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := stringKeys(v[k], at(k)); err != nil {
				return err
			}
		}
	case map[any]any:
		for k := range v {
			if _, ok := k.(string); !ok {
				where := path
				if where == "" {
					where = "the top level"
				}
				what := keyKind(k)
				if k != nil {
					what += " (" + clipKey(k) + ")"
				}
				return fmt.Errorf("%s: a key that is %s: field names are words", where, what)
			}
		}
		// All strings after all (yaml.v3 makes map[any]any only when one
		// is not, but a caller's tree may): check below them.
		for k, e := range v {
			if err := stringKeys(e, at(k.(string))); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := stringKeys(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyKind names what a non-string key is.
func keyKind(k any) string {
	switch k.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", k)
}

// clipKey shows a bad key, short and on one line.
func clipKey(k any) string {
	s := strconv.Quote(fmt.Sprint(k))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// explicitZeros finds a defaulted field set to 0 in settings (viper's
// nested maps and lists); path is the field path so far.
func explicitZeros(settings any, path string, defaulted map[string]bool) error {
	switch v := settings.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if defaulted[k] && isZero(v[k]) {
				return fmt.Errorf("%s: 0 is not a value here: leave the field out for its default", p)
			}
			if err := explicitZeros(v[k], p, defaulted); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := explicitZeros(e, fmt.Sprintf("%s[%d]", path, i), defaulted); err != nil {
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
