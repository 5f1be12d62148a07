package desc_test

import (
	"strings"
	"testing"

	"onic/desc"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// TestFromScenario: every built-in scenario's O-NICs resolve, with the
// defaults the docs give filled in and the kernels' names turned into
// values.
func TestFromScenario(t *testing.T) {
	for _, sc := range scenario.Scenarios() {
		c, name := sc.Config(), sc.Name
		for i, o := range c.ONICs {
			d, err := desc.FromScenario(o, "onics[0]")
			if err != nil {
				t.Fatalf("%s: onics[%d]: %v", name, i, err)
			}
			if d.Function == nil || d.BARs[d.Manager.RegisterBAR] == 0 || d.Tables == nil || d.Tables.KernelSlots() != o.Manager.Translation.Slots() {
				t.Errorf("%s: %s: function %v, BARs %v, tables %v", name, o.Name, d.Function, d.BARs, d.Tables)
			}
			if d.ClockMHz == 0 || d.DataWidth == 0 || d.PipelineCycles == 0 || d.HoldTLPs == 0 || d.EgressStallCycles == 0 {
				t.Errorf("%s: %s: defaults left out: %+v", name, o.Name, d)
			}
			if len(d.Kernels) != len(o.Kernels) {
				t.Fatalf("%s: %s: %d kernels resolved of %d", name, o.Name, len(d.Kernels), len(o.Kernels))
			}
			for j, k := range d.Kernels {
				kc := o.Kernels[j]
				if k.Slot != kc.Slot || k.Egress.String() != kc.Egress || k.BufferBeats == 0 || (k.Library == nil) != kc.Opaque {
					t.Errorf("%s: %s: kernel %d resolved as %+v from %+v", name, o.Name, j, k, kc)
				}
			}
		}
	}
}

// TestKernels: each field's rule, one entry at a time, as the emulator
// and the generators all see it.
func TestKernels(t *testing.T) {
	pair := scenario.KernelConfig{Slot: 1, Name: "sum-int32", Egress: "host", Translated: 2 << 32}
	for _, c := range []struct {
		name  string
		edit  func(k *desc.KernelConfig)
		want  string // error; "" resolves
		check func(k desc.Kernel) bool
	}{
		{"two-input defaults", func(k *desc.KernelConfig) {}, "", func(k desc.Kernel) bool {
			return k.Inputs == 2 && k.Sources == [2]manager.Ingress{manager.FromPortA, manager.FromPortB} &&
				k.PairBytes == desc.DefaultPairBytes && k.BufferBeats == desc.DefaultBufferBeats && k.Egress.Kind == ntb.EgressHost
		}},
		{"sources", func(k *desc.KernelConfig) { k.Sources = []string{"port-b", "host"}; k.PairBufferKiB = 64 }, "", func(k desc.Kernel) bool {
			return k.Sources == [2]manager.Ingress{manager.FromPortB, manager.FromHost} && k.PairBytes == 64<<10 &&
				k.Input(manager.FromHost) == 1 && k.Input(manager.FromPortA) == -1
		}},
		{"opaque defaults", func(k *desc.KernelConfig) { k.Name, k.Opaque, k.Egress = "mine", true, "port-b" }, "", func(k desc.Kernel) bool {
			return k.Library == nil && k.Inputs == 1 && k.Cycles == desc.DefaultCycles && k.Gbps == desc.DefaultGbps &&
				k.Egress.Kind == ntb.EgressPortB && k.Input(manager.FromPortA) == 0
		}},
		{"slot", func(k *desc.KernelConfig) { k.Slot = 4 }, "kernels[0].slot: 4 is not a kernel slot of the O-NIC (it has 4)", nil},
		{"unknown", func(k *desc.KernelConfig) { k.Name = "sum-int33" }, "kernels[0].name: ", nil},
		{"opaque library", func(k *desc.KernelConfig) { k.Opaque = true }, `kernels[0].opaque: "sum-int32" is a library kernel`, nil},
		{"opaque nameless", func(k *desc.KernelConfig) { k.Name, k.Opaque = "", true }, "kernels[0].name: an opaque kernel needs a name", nil},
		{"timing on a library kernel", func(k *desc.KernelConfig) { k.Cycles = 3 }, "cycles and gbps are for opaque kernels", nil},
		{"cycles", func(k *desc.KernelConfig) { k.Cycles = -1 }, "kernels[0].cycles: -1 must be 1 to", nil},
		{"gbps", func(k *desc.KernelConfig) { k.Gbps = 1e9 }, "kernels[0].gbps: 1e+09 must be", nil},
		{"buffer", func(k *desc.KernelConfig) { k.BufferBeats = -2 }, "kernels[0].buffer_beats: -2 must be 1 to", nil},
		{"pair buffer", func(k *desc.KernelConfig) { k.PairBufferKiB = 64 << 10 }, "kernels[0].pair_buffer_kib: 65536 must be 1 to 16384", nil},
		{"egress", func(k *desc.KernelConfig) { k.Egress = "nowhere" }, `kernels[0].egress: "nowhere" must be port-a, port-b or host`, nil},
		{"no egress", func(k *desc.KernelConfig) { k.Egress = "" }, "kernels[0].egress: no egress", nil},
		{"one source", func(k *desc.KernelConfig) { k.Sources = []string{"port-a"} }, `kernels[0].sources: kernel "sum-int32" has two inputs; name two sources, not 1`, nil},
		{"bad source", func(k *desc.KernelConfig) { k.Sources = []string{"port-a", "port-c"} }, `kernels[0].sources[1]: "port-c" must be host, port-a or port-b`, nil},
		{"same source", func(k *desc.KernelConfig) { k.Sources = []string{"host", "host"} }, "kernels[0].sources[1]: host feeds input 0 already", nil},
		{"one input", func(k *desc.KernelConfig) { k.Name = "scale-int32"; k.PairBufferKiB = 4 }, `kernels[0]: sources and pair_buffer_kib are for two-input kernels; kernel "scale-int32" has one input`, nil},
		{"nameless", func(k *desc.KernelConfig) { k.Name = "" }, "kernels[0].name: ", nil},
		{"empty slot", func(k *desc.KernelConfig) { k.Name, k.Egress, k.Empty = "", "", true }, "", func(k desc.Kernel) bool {
			return k.Library == nil && k.Inputs == 1 && k.Egress.Kind == ntb.EgressHost
		}},
		{"empty two-input slot", func(k *desc.KernelConfig) { k.Name, k.Empty, k.Sources = "", true, []string{"host", "port-a"} }, "", func(k desc.Kernel) bool {
			return k.Inputs == 2 && k.PairBytes == desc.DefaultPairBytes
		}},
	} {
		kc := desc.KernelConfig{KernelConfig: pair, Where: "kernels[0]"}
		c.edit(&kc)
		ks, err := desc.Kernels([]desc.KernelConfig{kc}, 4)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && !c.check(ks[0]):
			t.Errorf("%s: resolved as %+v", c.name, ks[0])
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	// A slot given twice, by a kernel and by an empty slot.
	twice := []desc.KernelConfig{{KernelConfig: pair, Where: "kernels[0]"}, {KernelConfig: pair, Where: "kernels[1]"}}
	if _, err := desc.Kernels(twice, 4); err == nil || err.Error() != `kernels[1].slot: slot 1 already holds kernel "sum-int32"` {
		t.Errorf("a slot twice: %v", err)
	}
	twice[0].Name, twice[0].Empty = "", true
	if _, err := desc.Kernels(twice, 4); err == nil || err.Error() != "kernels[1].slot: slot 1 is given twice" {
		t.Errorf("an empty slot twice: %v", err)
	}
}

// TestFromScenarioErrors: the O-NIC's own fields and its manager's
// tables are checked, each error naming its field.
func TestFromScenarioErrors(t *testing.T) {
	base := scenario.TwoParty().ONICs[0]
	for _, c := range []struct {
		edit func(o *scenario.ONICConfig)
		want string
	}{
		{func(o *scenario.ONICConfig) { o.ClockMHz = 5000 }, "onics[0].clock_mhz: 5000 must be"},
		{func(o *scenario.ONICConfig) { o.DownPolicy = "drop" }, `onics[0].down_policy: "drop" must be hold or fail`},
		{func(o *scenario.ONICConfig) { o.Manager.Translation.Windows[0].BAR = 3 }, "onics[0].manager.translation.windows[0]"},
		{func(o *scenario.ONICConfig) {
			o.Kernels = []scenario.KernelConfig{{Slot: 0, Name: "nope", Egress: "host"}}
		}, "onics[0].kernels[0].name: "},
	} {
		o := base
		o.Manager.Translation.Windows = append([]ntb.WindowConfig(nil), base.Manager.Translation.Windows...)
		c.edit(&o)
		if _, err := desc.FromScenario(o, "onics[0]"); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	d, err := desc.FromScenario(base, "onics[0]")
	if err != nil || !d.Hold || !d.ReflashHold {
		t.Fatalf("two-party's onicA: %v, hold %v, reflash hold %v", err, d != nil && d.Hold, d != nil && d.ReflashHold)
	}
	base.DownPolicy, base.ReflashPolicy = "fail", "fail"
	if d, err := desc.FromScenario(base, "onics[0]"); err != nil || d.Hold || d.ReflashHold {
		t.Errorf("policies fail: %v, %+v", err, d)
	}
}

// TestFromSpec: a firmware spec's card resolves with its slots, an
// empty slot of the shape it gives among them.
func TestFromSpec(t *testing.T) {
	s, err := firmware.LoadSpecFile("../firmware/testdata/onic-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := desc.FromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "onic-a" || d.DataWidth != 512 || !d.Hold || d.Tables.KernelSlots() != 2 || len(d.Kernels) != 2 {
		t.Fatalf("resolved as %+v", d)
	}
	if k := d.Kernels[0]; k.Library == nil || k.Library.Name != "scale-int32" || k.Egress.Kind != ntb.EgressPortA || k.Translated != 0x1_0000_0000 {
		t.Errorf("slot 0: %+v", k)
	}
	if k := d.Kernels[1]; k.Name != "" || k.Library != nil || k.Egress.Kind != ntb.EgressPortA {
		t.Errorf("slot 1 (empty): %+v", k)
	}
	s.Slots[0].Egress = "port-c"
	if _, err := desc.FromSpec(s); err == nil || err.Error() != `slots[0].egress: "port-c" must be port-a, port-b or host` {
		t.Errorf("a bad egress: %v", err)
	}
}
