package scenario

import (
	"reflect"
	"testing"
)

// TestScenarioYAML: testdata's YAML files, the examples other packages'
// tests generate cards with kernels from, are the built-in scenarios of
// their names.
func TestScenarioYAML(t *testing.T) {
	for name, want := range map[string]Config{"offload": Offload(), "allreduce": Allreduce()} {
		got, err := LoadFile("testdata/" + name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*Config{&got, &want} {
			for i := range c.ONICs {
				c.ONICs[i].Defaults()
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("testdata/%s.yaml is not the built-in scenario:\n got %+v\nwant %+v", name, got, want)
		}
	}
}
