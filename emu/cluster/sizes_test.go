package cluster

import (
	"testing"

	"onic/emu/scenario"
	"onic/pcie"
)

// TestConfigSpaceSizes: in every built-in scenario, each O-NIC's and its
// root port's Device Control and Link Control say the MPS, MRRS and RCB
// its host's configuration gives, and the host link's model cuts TLPs at
// that MPS: configuration space is what the emulated hardware does.
func TestConfigSpaceSizes(t *testing.T) {
	for _, s := range scenario.Scenarios() {
		cl, err := Build(s.Config())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range cl.onics {
			want := pcie.DeviceSizes{MPS: o.host.cfg.MPS, MRRS: o.host.cfg.MRRS, RCB: o.host.cfg.RCB}
			rp := o.host.hiers[o.seg].Find(o.cfg.Name).Parent.Funcs[0]
			for _, f := range []*pcie.Function{o.fn, rp} {
				if got, ok := f.Sizes(); !ok || got != want {
					t.Fatalf("%s: %s says %+v, the host's configuration %+v", s.Name, f.Name, got, want)
				}
			}
			if o.link.Config().MPS != want.MPS {
				t.Fatalf("%s: %s's host link cuts at %d bytes, Device Control says %d", s.Name, o.cfg.Name, o.link.Config().MPS, want.MPS)
			}
		}
	}
}
