package scenario

import (
	"bytes"
	"reflect"
	"testing"
)

// TestYAMLRoundTrip: every built-in scenario written by YAML loads back,
// strictly, to the configuration it was written from, and writing that
// again gives the same bytes.
func TestYAMLRoundTrip(t *testing.T) {
	for _, s := range Scenarios() {
		c := s.Config()
		y, err := YAML(c)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		back, err := Load(s.Name+".yaml", bytes.NewReader(y))
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.Name, err, y)
		}
		if !reflect.DeepEqual(normalize(reflect.ValueOf(c)).Interface(), normalize(reflect.ValueOf(back)).Interface()) {
			t.Fatalf("%s: loads back as another configuration:\n%s", s.Name, y)
		}
		again, err := YAML(back)
		if err != nil || !bytes.Equal(again, y) {
			t.Fatalf("%s: written again, it differs (%v)", s.Name, err)
		}
	}
}

// normalize returns a copy of v with every empty slice and map nil, as
// Load leaves a list or map that is not there.
func normalize(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(normalize(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return reflect.Zero(v.Type())
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for _, k := range v.MapKeys() {
			out.SetMapIndex(k, normalize(v.MapIndex(k)))
		}
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(normalize(v.Elem()))
		return p
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(normalize(v.Field(i)))
			}
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(normalize(v.Index(i)))
		}
		return out
	}
	return v
}
