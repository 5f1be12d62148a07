package cardsim

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/tlp"
	"onic/tlp/pcap"
)

// TestFlowsOnCards: the two-party scenario's write flows and its read
// variant run for 40 µs with both O-NICs as their generated cards (onic
// emu run --rtl), and with one a card and the other the Go model (a mixed
// pair: the card's port joined to a Partner, whose TLPs cross to the
// model's port): every transfer that ends is delivered whole — nothing
// refused, dropped or failed, the reads under the hosts' 8-bit tags
// (PG213's CQ carries 8) — and each flow's throughput is within 1.5% of
// the model's and its median transfer within 2% with both O-NICs cards
// (2.5% for a mixed pair), whose optical links are timed in the link
// layer's whole words on the O-NICs' lane plan as the cards' are
// (emu/link's Config.Plan), an Ack and the credits due sharing one
// control word as on the cards (with two, the model was 1.6% slower on
// writes and 2.2% on reads, its p50s 2.2% and 2.5% longer; before the
// model had the words, the cards lost a tenth of its rate on writes and
// a fifth on reads) — also on a lane plan slower than the host links
// (4 x 25.78125 Gb/s: the cards' ports take words at the plan's rate,
// through designs/cardsim's pacer), and over 50 m of fibre a side, where
// the links' buffers no longer cover the round trip and the exchange
// falls to about 83 Gb/s on both (within 2.5%: 82.1 on the cards, 83.6
// on the model over these 40 µs; the optical links' 16 KiB of posted
// credits the model had before the card's 256-word buffer carried 96).
func TestFlowsOnCards(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cards []string // the O-NICs that are cards (all when empty)
		plan  string   // the O-NICs' lane plan (default when empty)
		fibre float64  // each port's fibre, metres (default when 0)
	}{{"two-party", nil, "", 0}, {"two-party-read", nil, "", 0}, {"two-party", []string{"onicA"}, "", 0}, {"two-party-read", []string{"onicB"}, "", 0},
		{"two-party", nil, "4x25.78125Gbps", 0}, {"two-party", nil, "", 50}} {
		name := tc.name
		if tc.cards != nil {
			name += "/mixed-" + tc.cards[0]
		}
		if tc.plan != "" {
			name += "/" + tc.plan
		}
		if tc.fibre != 0 {
			name += fmt.Sprintf("/%gm", tc.fibre)
		}
		t.Run(name, func(t *testing.T) {
			run := func(rtl bool) cluster.Report {
				cfg, err := scenario.Lookup(tc.name)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Duration = 40 * time.Microsecond
				for i := range cfg.ONICs {
					cfg.ONICs[i].LanePlan = tc.plan
					if tc.fibre != 0 {
						cfg.ONICs[i].FibreM = [2]float64{tc.fibre, tc.fibre}
					}
				}
				cl := buildOn(t, cfg, rtl, tc.cards...)
				rep, err := cl.Run()
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			model, rtl := run(false), run(true)
			a := rtl.Accounting
			if a.Delivered == 0 || a.Dropped+a.Denied+a.Unsupported+a.ErrorStatus != 0 || rtl.RTL == nil || rtl.RTL.Error != "" || rtl.RTL.Refused != "" {
				t.Fatalf("on the cards: %+v, %+v", a, rtl.RTL)
			}
			for k, o := range rtl.ONICs {
				// Each TLP a card's port sent once, however often its link
				// sent it again: no fewer than its peer's host received.
				card := tc.cards == nil || o.Name == tc.cards[0]
				if o.Card != card || o.PortTLPs[0] == 0 || o.PortTLPs[1] != 0 || card && o.PortTLPs[0] > model.ONICs[k].PortTLPs[0] {
					t.Errorf("%s on the cards: %+v; on the model it sent %v", o.Name, o, model.ONICs[k].PortTLPs)
				}
			}
			tol := 0.015
			if tc.cards != nil || tc.fibre != 0 {
				tol = 0.025
			}
			off := func(a, b float64) float64 { return math.Abs(a-b) / b }
			for i, f := range rtl.Flows {
				m := model.Flows[i]
				if f.Failed != 0 || f.Transfers == 0 || off(f.Gbps, m.Gbps) > tol || tc.cards == nil && off(f.P50Ns, m.P50Ns) > 0.02 {
					t.Errorf("flow %s: %d transfers (%d failed) at %.2f Gb/s on the cards, %.2f on the model; p50 %.0f ns and %.0f ns",
						f.Name, f.Transfers, f.Failed, f.Gbps, m.Gbps, f.P50Ns, m.P50Ns)
				}
				t.Logf("flow %s: %.2f Gb/s on the cards, %.2f on the model; p50 %.0f ns and %.0f ns", f.Name, f.Gbps, m.Gbps, f.P50Ns, m.P50Ns)
			}
		})
	}
}

// TestPhasedOnCards: the phased scenario, compressed (A's flow to B
// stops at 10 µs; the switch moves A's circuit from B to C at 40 µs,
// dark for 35 µs — longer than the
// cards stay quiet before their clock stops; A's flow to C starts then),
// on three cards and on the model: A's writes reach B, then — once the
// cards' links to C have trained, from what A's card held while its port
// was dark — C. Nothing is dropped on either: the first transfer to C
// waits the dark time out whole, in A's hold buffer, on both, and lands
// at C within half a microsecond or so of the model's (it once
// was ended as rtl-not-delivered: a link that had just come up counted
// as quiet, and the writes still held for it were settled as dropped a
// few cycles before they left; and the cards' links trained only after
// the MEMS bring-up time, which includes training, had passed).
func TestPhasedOnCards(t *testing.T) {
	cfg, err := scenario.Lookup("phased")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Phases[0].At = 40 * time.Microsecond
	cfg.MEMS.Reconfig, cfg.MEMS.BringUp = 25*time.Microsecond, 10*time.Microsecond
	cfg.Flows[0].Stop = 10 * time.Microsecond
	cfg.Flows[1].Start = 40 * time.Microsecond
	cfg.Duration = 140 * time.Microsecond
	reps := [2]cluster.Report{}
	for i, rtl := range []bool{false, true} {
		rep, err := buildOn(t, cfg, rtl).Run()
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = rep
	}
	model, rep := reps[0], reps[1]
	for i, r := range reps {
		a := r.Accounting
		if a.Dropped+a.Denied+a.ErrorStatus+a.Unsupported != 0 || len(a.Reasons) != 0 {
			t.Errorf("run %d: accounting %+v", i, a)
		}
	}
	dark := float64(cfg.MEMS.Reconfig + cfg.MEMS.BringUp)
	if rep.Reconfigurations != 1 || rep.Flows[0].Transfers == 0 || rep.Flows[1].Transfers == 0 || rep.Flows[1].Failed != 0 || rep.Hosts[2].ReceivedBytes == 0 {
		t.Fatalf("flows %+v, hosts %+v", rep.Flows, rep.Hosts)
	}
	// The first transfer to C waits out the dark time, and lands within
	// what the cards' framing costs 64 KiB (about half a microsecond) of
	// the model's: a card's link trains within the MEMS bring-up time, as
	// the model's circuit comes up at its end.
	card, mod := rep.Flows[1].MaxNs, model.Flows[1].MaxNs
	if card < dark || mod < dark || card > mod+1500 || card < mod-1500 {
		t.Errorf("A->C's first transfer took %.0f ns on the cards, %.0f on the model; the circuit was dark for %.0f", card, mod, dark)
	}
	t.Logf("A->B %d transfers, A->C %d (max %.0f ns); on the model %d and %d (max %.0f ns)", rep.Flows[0].Transfers, rep.Flows[1].Transfers,
		rep.Flows[1].MaxNs, model.Flows[0].Transfers, model.Flows[1].Transfers, model.Flows[1].MaxNs)
}

// TestCaptureOnCards: a capture of the two-party scenario on cards has
// each card's port taps (the TLPs its port received, decoded from the
// frames on its lanes) beside its host taps: onicB's port A took every
// write host A's card sent — as many as onicA's port A counted — each
// one a write into B's memory with A's proxy requester ID and its bytes.
func TestCaptureOnCards(t *testing.T) {
	cfg := scenario.TwoParty()
	cfg.Duration = 5 * time.Microsecond
	cl := buildOn(t, cfg, true)
	var buf bytes.Buffer
	if err := cl.Capture(&buf, []string{"onicB.port-a"}); err != nil {
		t.Fatal(err)
	}
	rep, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	r, err := pcap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		var x tlp.TLP
		rec, err := r.Next(&x)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Interface(int(rec.Tap.Tap)) != "onicB.port-a" || x.Kind() != tlp.MWr || x.RequesterID.Bus() != 0x10 || x.Address>>32 != 1 || len(x.Data) != 256 {
			t.Fatalf("record %d at %s: %v from %v at %#x, %d bytes", n, r.Interface(int(rec.Tap.Tap)), x.Kind(), x.RequesterID, x.Address, len(x.Data))
		}
		n++
	}
	if sent := rep.ONICs[0].PortTLPs[0]; n == 0 || uint64(n) > sent || sent-uint64(n) > 32 {
		t.Fatalf("onicB's port A tap has %d TLPs; onicA's port A sent %d", n, sent)
	}
	t.Logf("%d writes at onicB.port-a; onicA's port A sent %d", n, rep.ONICs[0].PortTLPs[0])
}

// TestSlowPeerOnCards: the slow-peer scenario (host A writing to B out of
// both ports; onicB's port A returns no flow-control credits from 20 to
// 150 µs) with both O-NICs as cards, the stall acted out on the lanes
// (onicB's port A advertises the credit limit it had when the fault
// began): card A's port A counts as stalled once a TLP has waited at it
// for EgressStallCycles, drops what its full hold buffer cannot take,
// and A's writes out of port B go on — no transfer of that flow takes
// longer than the stall's 16 µs, the hold buffer's filling and a
// transfer's own time (the model's take 40 µs at most). (A TLP used to
// start into the full hold buffer while the port still admitted, and its
// rest then waited for room only the link could make, holding the host
// path — and port B's flow — until the link's credit timeout, 112 µs.)
// make check's quick loop (-short) ends the run at 170 µs, after the
// stall.
func TestSlowPeerOnCards(t *testing.T) {
	cfg := scenario.SlowPeer()
	if testing.Short() {
		cfg.Duration = 170 * time.Microsecond
	}
	model, err := buildOn(t, cfg, false).Run()
	if err != nil {
		t.Fatal(err)
	}
	cl, set := buildSet(t, cfg)
	rep, err := cl.Run()
	if err != nil {
		t.Fatal(err)
	}
	viaB, modelB := rep.Flows[1], model.Flows[1]
	if viaB.Transfers < modelB.Transfers*3/4 || viaB.Failed != 0 || viaB.MaxNs > 70_000 {
		t.Errorf("A->B via b on the cards: %+v; on the model %+v", viaB, modelB)
	}
	stalls, err := set.Card(0).Counter("port_a_egress_stalls")
	if err != nil || stalls != 1 {
		t.Errorf("card A's port A stalled %d times (%v), want once", stalls, err)
	}
	drops, err := set.Card(0).Counter("port_a_hold_drops")
	if err != nil || drops == 0 {
		t.Errorf("card A's port A dropped %d TLPs (%v): its hold buffer was never full", drops, err)
	}
	t.Logf("via b: %d transfers, max %.1f µs on the cards; %d, max %.1f µs on the model; card A's port A stalled once, dropped %d",
		viaB.Transfers, viaB.MaxNs/1000, modelB.Transfers, modelB.MaxNs/1000, drops)
}

// TestNVMeOnCards: the NVMe gathering scenario (server A reads 128 KiB
// blocks from two NVMe RAIDs, each behind its own O-NIC) with all four
// O-NICs as their cards, and with A's alone (mixed pairs): the driver's
// doorbells cross A's cards to the drives, the drive fetches each command from A's
// memory back through both O-NICs and writes its data and completion
// entries into A's memory — every command the model finishes finishes on
// the cards too, nothing refused or lost, the same bytes at A. (Each
// doorbell is four bytes, and a card's write is matched to its host
// write by its bytes: they carry the low half of the write's number, so
// that no two doorbells look alike.)
func TestNVMeOnCards(t *testing.T) {
	for _, cards := range [][]string{nil, {"onicA0", "onicA1"}} {
		name := "both"
		if cards != nil {
			name = "mixed-" + cards[0]
		}
		t.Run(name, func(t *testing.T) {
			cfg := scenario.NVMeGathering(2, 100)
			cfg.Duration = 160 * time.Microsecond
			cfg.Hosts[2].NVMe.MediaGbps = 25 // nvme1: a slower drive, so that a doorbell taken for the other's shows
			model, rtl := bothWays(t, cfg, cards...)
			for i, f := range rtl.Flows {
				m := model.Flows[i]
				if f.Transfers == 0 || f.Failed != 0 || f.Transfers < m.Transfers-1 || f.Transfers > m.Transfers {
					t.Fatalf("%s: %d commands finished on the cards (%d failed), %d on the model", f.Name, f.Transfers, f.Failed, m.Transfers)
				}
				t.Logf("%s: %d commands on the cards, %d on the model; p50 %.0f ns and %.0f ns", f.Name, f.Transfers, m.Transfers, f.P50Ns, m.P50Ns)
			}
		})
	}
}

// TestPipelineOnCards: FLEET's NVMe -> GPU -> server A -> server C
// pipeline with all six O-NICs as their cards, against the model: the
// drive's blocks reach the GPU, the GPU sends them on to A, and A sends
// them on to C through its O-NIC's fp32-to-bf16 kernel — on the cards
// the generated kernel in the card's slot, whose output is matched to the
// write it came from by the bytes the kernel's Go reference makes of the
// write's. Every stage finishes the transfers the model does (within
// one), nothing refused or lost, and C receives half the bytes A sends it.
func TestPipelineOnCards(t *testing.T) {
	cfg := scenario.Pipeline()
	cfg.Duration = 200 * time.Microsecond
	model, rtl := bothWays(t, cfg)
	for i, f := range rtl.Flows {
		m := model.Flows[i]
		if f.Transfers == 0 || f.Failed != 0 || f.Transfers < m.Transfers-1 || f.Transfers > m.Transfers+1 {
			t.Errorf("%s: %d transfers on the cards (%d failed), %d on the model", f.Name, f.Transfers, f.Failed, m.Transfers)
		}
		t.Logf("%s: %d transfers on the cards, %d on the model; %.1f and %.1f Gb/s", f.Name, f.Transfers, m.Transfers, f.Gbps, m.Gbps)
	}
	for i, h := range rtl.Hosts {
		t.Logf("host %s received %d bytes on the cards, %d on the model", h.Name, h.ReceivedBytes, model.Hosts[i].ReceivedBytes)
	}
	// C has half of each block A finished sending, and at most half of
	// the four in flight besides.
	done := uint64(rtl.Flows[2].Transfers) * 128 << 10
	if c := rtl.Hosts[1].ReceivedBytes; c < done/2 || c > done/2+2*128<<10 {
		t.Errorf("C received %d bytes on the cards; A finished %d bytes to it", c, done)
	}
	t.Logf("%d writes in flight or unmatched at the end, %d requests in flight", rtl.RTL.UnseenWrites, rtl.Accounting.InFlight)
}

// bothWays runs cfg on the model and with the O-NICs named in cards (all
// when none) as their cards, and fails unless the cards' run delivered
// something and dropped, denied, failed and refused nothing.
func bothWays(t *testing.T, cfg scenario.Config, cards ...string) (model, rtl cluster.Report) {
	t.Helper()
	run := func(hw bool) cluster.Report {
		rep, err := buildOn(t, cfg, hw, cards...).Run()
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	model, rtl = run(false), run(true)
	a := rtl.Accounting
	if a.Delivered == 0 || a.Dropped+a.Denied+a.Unsupported+a.ErrorStatus != 0 || rtl.RTL == nil || rtl.RTL.Error != "" || rtl.RTL.Refused != "" {
		t.Fatalf("on the cards: %+v, %+v", a, rtl.RTL)
	}
	return model, rtl
}

// TestOffloadOnCards: the offload scenario — host A runs tasks on its
// O-NIC's fp32-to-bf16 kernel: ARG0 and the doorbell, 256 KiB of data
// in, the converted data back into its memory, a completion record and
// an MSI-X interrupt per task — on the generated card against the model.
// The emulator registers the kernel as a driver would (TASK_CTRL, the
// record's address, the slot's MSI-X table entry); each task ends when
// the card's record and interrupt have landed, and the card finishes the
// tasks the model does, an interrupt each.
func TestOffloadOnCards(t *testing.T) {
	cfg := scenario.Offload()
	cfg.Duration = 150 * time.Microsecond
	model, rtl := bothWays(t, cfg)
	f, m := rtl.Flows[0], model.Flows[0]
	if f.Transfers == 0 || f.Failed != 0 || f.Transfers < m.Transfers-1 || f.Transfers > m.Transfers+1 {
		t.Fatalf("%d tasks on the card (%d failed), %d on the model", f.Transfers, f.Failed, m.Transfers)
	}
	if got, want := rtl.Hosts[0].Interrupts, model.Hosts[0].Interrupts; got < want-1 || got > want+1 || got == 0 {
		t.Fatalf("%d interrupts on the card, %d on the model", got, want)
	}
	t.Logf("%d tasks on the card, %d on the model; p50 %.0f ns and %.0f ns; %d and %d interrupts", f.Transfers, m.Transfers,
		f.P50Ns, m.P50Ns, rtl.Hosts[0].Interrupts, model.Hosts[0].Interrupts)
}

// TestAllreduceOnCards: the allreduce step — A's and B's int32 gradients
// meet in C's O-NIC, whose sum-int32 kernel pairs a write from each port
// and writes the sum into C's memory — with all three O-NICs as their
// cards and with C's alone (its ports joined to the Go models' through
// Partners), against the model. A pair's sum is matched to its two writes
// by the bytes the kernel's Go reference makes of them, in the order each
// port's writes arrive: both flows finish the transfers the model's do,
// nothing is lost, and C receives one sum for every pair of writes.
func TestAllreduceOnCards(t *testing.T) {
	for _, cards := range [][]string{nil, {"onicC"}} {
		name := "all"
		if cards != nil {
			name = "mixed-" + cards[0]
		}
		t.Run(name, func(t *testing.T) {
			cfg := scenario.Allreduce()
			cfg.Duration = 40 * time.Microsecond
			model, rtl := bothWays(t, cfg, cards...)
			for i, f := range rtl.Flows {
				m := model.Flows[i]
				if f.Transfers == 0 || f.Failed != 0 || f.Transfers < m.Transfers-1 || f.Transfers > m.Transfers+1 {
					t.Errorf("%s: %d transfers on the cards (%d failed), %d on the model", f.Name, f.Transfers, f.Failed, m.Transfers)
				}
				t.Logf("%s: %d transfers on the cards, %d on the model; %.1f and %.1f Gb/s", f.Name, f.Transfers, m.Transfers, f.Gbps, m.Gbps)
			}
			done := uint64(min(rtl.Flows[0].Transfers, rtl.Flows[1].Transfers)) * 64 << 10
			if c := rtl.Hosts[2].ReceivedBytes; c < done || c > done+4*64<<10 {
				t.Errorf("C received %d bytes of sums; the pairs of finished transfers make %d", c, done)
			}
		})
	}
}
