package cluster

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/firmware"
	"onic/firmware/build"
	"onic/pcie/lanes"
	"onic/testbenches/tools"
)

// deployKeys are the test's operator, tenant and stranger keys.
func deployKeys() (ops, alice, mallory ed25519.PrivateKey, trust firmware.Trust) {
	ops = ed25519.NewKeyFromSeed(make([]byte, 32))
	alice = ed25519.NewKeyFromSeed(append(make([]byte, 31), 1))
	mallory = ed25519.NewKeyFromSeed(append(make([]byte, 31), 2))
	trust.Add("ops", firmware.OperatorRole, ops.Public().(ed25519.PublicKey))
	trust.Add("alice", "ml", alice.Public().(ed25519.PublicKey))
	return
}

// onicASpec is onicA of the two-party scenario as a firmware spec.
func onicASpec(t *testing.T, kernel string) firmware.Spec {
	t.Helper()
	s := firmware.Spec{Name: "onic-a", Version: "2.0.0", Target: firmware.Target{Part: "xcvu9p-flga2104-2L-e"},
		Manager: scenario.TwoParty().ONICs[0].Manager,
		Slots: []firmware.SlotSpec{
			{Slot: 0, Region: firmware.Resources{LUT: 40000, FF: 80000, BRAM: 60, DSP: 120}, Kernel: kernel, Egress: "port-a", Translated: 0x100000000},
			{Slot: 1, Region: firmware.Resources{LUT: 40000, FF: 80000, BRAM: 60, DSP: 120}, Egress: "host", Translated: 0x100000000},
		},
		Tenants:  []firmware.TenantSpec{{Name: "ml", Slots: []int{1}}},
		HoldTLPs: 8192} // as runDeploys' O-NIC: the image's policy replaces the O-NIC's
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	return s
}

func imageFile(t *testing.T, im *firmware.Image, keys ...ed25519.PrivateKey) []byte {
	t.Helper()
	c := *im
	c.Signatures = nil
	for _, k := range keys {
		c.Sign(k)
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fastBoard makes a full reflash 20 µs of load and 3 µs of link and
// optics, so it fits in the two-party scenario's 200 µs.
// A partial one of a 40,000-LUT region is 10 µs.
var fastBoard = firmware.Board{ConfigMBps: 76.45e6 / 20, ICAPMBps: 2586936.0 / 10, LinkDown: time.Microsecond, Rescan: time.Microsecond, OpticalBringUp: time.Microsecond}

// runDeploys runs the two-party scenario with deployments into onicA.
func runDeploys(t *testing.T, policy string, trust firmware.Trust, files ...[]byte) Report {
	t.Helper()
	c := scenario.TwoParty()
	c.ONICs[0].Board, c.ONICs[0].ReflashPolicy = fastBoard, policy
	c.ONICs[0].HoldTLPs = 8192 // 23 µs of both directions' traffic
	cl, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if err := cl.Deploy("onicA", time.Duration(50+50*i)*time.Microsecond, "file", f, trust); err != nil {
			t.Fatal(err)
		}
	}
	r, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// comparable is a report without wall-clock figures and deployments.
func comparable(t *testing.T, r Report) string {
	r.Speed = Speed{}
	for i := range r.ONICs {
		r.ONICs[i].Deploys = nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDeployFull: a full reflash in simulated time holds (or fails) the
// traffic through the O-NIC while it is out, then the new image's
// manager carries it on; refused images change nothing at all.
func TestDeployFull(t *testing.T) {
	ops, alice, mallory, trust := deployKeys()
	im, err := build.Build(onicASpec(t, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	base := runDeploys(t, "hold", trust)

	held := runDeploys(t, "hold", trust, imageFile(t, im, ops))
	o := held.ONICs[0]
	if len(o.Deploys) != 1 {
		t.Fatalf("deploys: %+v", o.Deploys)
	}
	d := o.Deploys[0]
	if d.Outcome != "loaded" || d.Kind != "full" || d.Signer != "ops" || d.Image != "onic-a 2.0.0" || d.ReflashNs != 23000 || o.ReflashNs != 23000 {
		t.Fatalf("deploy: %+v (O-NIC reflashing %v ns)", d, o.ReflashNs)
	}
	if d.Held == 0 || d.Failed != 0 {
		t.Errorf("hold policy: %d held, %d failed", d.Held, d.Failed)
	}
	if a, b := held.Flows[0].Gbps, base.Flows[0].Gbps; !(a < b && a > 0.5*b) {
		t.Errorf("A->B through the reflashed O-NIC: %.1f Gb/s, %.1f without the reflash", a, b)
	}
	// The held TLPs went on through the new manager: nothing dropped.
	if held.Accounting.Dropped != 0 {
		t.Errorf("dropped %d: %v", held.Accounting.Dropped, held.Accounting)
	}

	failed := runDeploys(t, "fail", trust, imageFile(t, im, ops))
	if d := failed.ONICs[0].Deploys[0]; d.Failed == 0 || d.Held != 0 || failed.Accounting.Reasons["reflashing"] != d.Failed {
		t.Errorf("fail policy: %+v, accounting %+v", d, failed.Accounting)
	}

	// Refusals: the run is the same as with no deployment at all.
	corrupt := imageFile(t, im, ops)
	corrupt[len(corrupt)-10] ^= 1
	for name, f := range map[string][]byte{
		"untrusted": imageFile(t, im, mallory),
		"tenant":    imageFile(t, im, alice),
		"unsigned":  imageFile(t, im),
		"corrupt":   corrupt,
		"truncated": imageFile(t, im, ops)[:1000],
	} {
		r := runDeploys(t, "hold", trust, f)
		if d := r.ONICs[0].Deploys; len(d) != 1 || d[0].Outcome != "refused" || d[0].Error == "" {
			t.Errorf("%s: %+v", name, d)
		}
		if comparable(t, r) != comparable(t, base) {
			t.Errorf("%s: the refused deployment changed the run", name)
		}
	}
}

// TestDeployPartial: a tenant's kernel goes into its slot by partial
// reconfiguration while the O-NIC keeps carrying traffic; the report
// charges the slot, not the O-NIC.
func TestDeployPartial(t *testing.T) {
	tools.Require(t, "yosys")
	ops, alice, _, trust := deployKeys()
	measure := build.Yosys(build.DefaultCacheDir())
	im, err := build.Build(onicASpec(t, ""), measure)
	if err != nil {
		t.Fatal(err)
	}
	s := onicASpec(t, "")
	s.Slots[1].Kernel = "scale-int32"
	withK, err := build.Build(s, measure)
	if err != nil {
		t.Fatal(err)
	}
	k, err := withK.KernelImage(1)
	if err != nil {
		t.Fatal(err)
	}
	r := runDeploys(t, "hold", trust, imageFile(t, im, ops), imageFile(t, k, alice))
	o := r.ONICs[0]
	if len(o.Deploys) != 2 || o.Deploys[1].Outcome != "loaded" || o.Deploys[1].Kind != "partial" || o.Deploys[1].Slot != 1 {
		t.Fatalf("deploys: %+v", o.Deploys)
	}
	want := firmware.PartialCost(fastBoard, 1, 2586936, true).Total
	if len(o.SlotReflashNs) != 2 || o.SlotReflashNs[1] != float64(want.Nanoseconds()) || o.ReflashNs != 23000 || want < 9*time.Microsecond || want > 11*time.Microsecond {
		t.Errorf("reflash time: O-NIC %v, slots %v", o.ReflashNs, o.SlotReflashNs)
	}
	if len(o.Kernels) != 0 && (len(o.Kernels) != 1 || o.Kernels[0].Name != "scale-int32" || o.Kernels[0].Slot != 1) {
		t.Errorf("kernels: %+v", o.Kernels)
	}
	// A running image that leaves its tenant slot without an egress: the
	// refusal names both images and the field to set.
	s2 := onicASpec(t, "")
	s2.Slots[1].Egress = ""
	noEgress, err := build.Build(s2, measure)
	if err != nil {
		t.Fatal(err)
	}
	r = runDeploys(t, "hold", trust, imageFile(t, noEgress, ops), imageFile(t, k, alice))
	o = r.ONICs[0]
	if len(o.Deploys) != 2 || o.Deploys[1].Outcome != "refused" ||
		!strings.Contains(o.Deploys[1].Error, "kernel image scale-int32 1.0.0 into slot 1: the running image onic-a 2.0.0 gives slot 1 no egress (set slots[1].egress to port-a, port-b or host in its spec)") {
		t.Errorf("deploys: %+v", o.Deploys)
	}
}

// TestDeployDownPolicy: a full reflash brings the image's down policy
// and hold_tlps with it, as its card's RTL has them, whatever the
// scenario said.
func TestDeployDownPolicy(t *testing.T) {
	ops, _, _, trust := deployKeys()
	for _, policy := range []string{"hold", "fail"} {
		s := onicASpec(t, "")
		s.DownPolicy, s.HoldTLPs = policy, 77
		im, err := build.Build(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := scenario.TwoParty()
		c.ONICs[0].Board = fastBoard
		c.ONICs[0].DownPolicy = map[string]string{"hold": "fail", "fail": "hold"}[policy]
		for i := range c.ONICs { // the board's, which a reflash keeps
			c.ONICs[i].LanePlan = "4x28Gbps"
		}
		cl, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.Deploy("onicA", 50*time.Microsecond, "file", imageFile(t, im, ops), trust); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Run(); err != nil {
			t.Fatal(err)
		}
		if d := cl.onics[0].d; d.Hold != (policy == "hold") || d.HoldTLPs != 77 || d.Lanes != (lanes.Plan{Lanes: 4, KbpsPerLane: 28_000_000}) {
			t.Errorf("after deploying a %s image with hold_tlps 77, the O-NIC holds %v, hold_tlps %d, lane plan %v", policy, d.Hold, d.HoldTLPs, d.Lanes)
		}
	}
}
