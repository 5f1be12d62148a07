package scenario

import (
	"reflect"
	"testing"
)

// TestOffloadYAML: testdata/offload.yaml, the example other packages'
// tests generate a card with a kernel from, is the built-in offload
// scenario.
func TestOffloadYAML(t *testing.T) {
	got, err := LoadFile("testdata/offload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := Offload()
	for _, c := range []*Config{&got, &want} {
		for i := range c.ONICs {
			c.ONICs[i].Defaults()
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("testdata/offload.yaml is not scenario.Offload:\n got %+v\nwant %+v", got, want)
	}
}
