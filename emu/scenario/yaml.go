package scenario

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// YAML writes c as a scenario file that Load reads back to the same
// configuration: every field under its mapstructure name, fields at their
// zero value left out (they take their defaults, and Load refuses an
// explicit 0 where the default is not zero), durations with their unit,
// structs of scalars and lists of scalars on one line. It is how the
// built-in scenarios written in Go become examples to copy (`onic emu
// scenarios --yaml NAME`).
func YAML(c Config) ([]byte, error) {
	var b strings.Builder
	if err := writeFields(&b, reflect.ValueOf(c), 0, ""); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

var durationType = reflect.TypeOf(time.Duration(0))

// writeFields writes struct v's non-zero fields, one a line, at indent;
// the first line gets first in front of its key instead of the indent
// (a list item's "- ").
func writeFields(b *strings.Builder, v reflect.Value, indent int, first string) error {
	t := v.Type()
	pad := strings.Repeat(" ", indent)
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if key == "" || key == "-" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if fv.IsZero() {
			continue
		}
		lead := pad
		if first != "" {
			lead, first = first, ""
		}
		if s, ok, err := inline(fv); err != nil {
			return fmt.Errorf("%s: %v", key, err)
		} else if ok {
			fmt.Fprintf(b, "%s%s: %s\n", lead, key, s)
			continue
		}
		fmt.Fprintf(b, "%s%s:\n", lead, key)
		if err := writeBlock(b, fv, indent+2); err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
	}
	return nil
}

// writeBlock writes a struct, slice or map that does not fit on a line.
func writeBlock(b *strings.Builder, v reflect.Value, indent int) error {
	pad := strings.Repeat(" ", indent)
	switch v.Kind() {
	case reflect.Pointer:
		return writeBlock(b, v.Elem(), indent)
	case reflect.Struct:
		return writeFields(b, v, indent, "")
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			e := v.Index(i)
			if s, ok, err := inline(e); err != nil {
				return err
			} else if ok {
				fmt.Fprintf(b, "%s- %s\n", pad, s)
				continue
			}
			if e.Kind() == reflect.Pointer {
				e = e.Elem()
			}
			if e.Kind() != reflect.Struct {
				return fmt.Errorf("a list of %s", e.Type())
			}
			if err := writeFields(b, e, indent+2, pad+"- "); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		keys := v.MapKeys()
		ks := make([]string, len(keys))
		for i, k := range keys {
			if k.Kind() != reflect.String {
				return fmt.Errorf("a map keyed by %s", k.Type())
			}
			ks[i] = k.String()
		}
		slices.Sort(ks)
		for _, k := range ks {
			e := v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key()))
			if s, ok, err := inline(e); err != nil {
				return err
			} else if ok {
				fmt.Fprintf(b, "%s%s: %s\n", pad, quoteKey(k), s)
				continue
			}
			fmt.Fprintf(b, "%s%s:\n", pad, quoteKey(k))
			if err := writeBlock(b, e, indent+2); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("cannot write a %s", v.Type())
}

// inline gives v on one line: a scalar, a list of scalars ([a, b]), or a
// struct of scalars ({k: v, ...}); ok is false for what needs a block.
func inline(v reflect.Value) (s string, ok bool, err error) {
	if v.Type() == durationType {
		return strings.ReplaceAll(time.Duration(v.Int()).String(), "µs", "us"), true, nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "null", true, nil
		}
		return inline(v.Elem())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n := v.Uint(); n >= 1<<16 {
			return "0x" + strconv.FormatUint(n, 16), true, nil // addresses and sizes read better in hex
		}
		return strconv.FormatUint(v.Uint(), 10), true, nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true, nil
	case reflect.String:
		return yamlString(v.String()), true, nil
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			p, ok, err := inline(v.Index(i))
			if err != nil || !ok || strings.HasPrefix(p, "{") {
				return "", false, err
			}
			parts[i] = p
		}
		return "[" + strings.Join(parts, ", ") + "]", true, nil
	case reflect.Struct:
		var parts []string
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if key == "" || key == "-" || !f.IsExported() || v.Field(i).IsZero() {
				continue
			}
			p, ok, err := inline(v.Field(i))
			if err != nil || !ok || strings.HasPrefix(p, "[") || strings.HasPrefix(p, "{") {
				return "", false, err
			}
			parts = append(parts, key+": "+p)
		}
		if len(parts) > 6 {
			return "", false, nil
		}
		return "{" + strings.Join(parts, ", ") + "}", true, nil
	}
	return "", false, nil
}

// plain is a string YAML reads as itself without quotes.
var plain = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.>/-]*$`)

// yamlString is s as a YAML scalar: plain where YAML reads that as the
// string s, quoted otherwise (numbers, IDs, booleans, special characters).
func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~":
		return strconv.Quote(s)
	}
	if plain.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// quoteKey quotes a map key that YAML would not read as that string.
func quoteKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return strconv.Quote(k)
		}
	}
	if k == "" || strings.ContainsAny(k[:1], "0123456789-.") {
		return strconv.Quote(k)
	}
	return k
}
