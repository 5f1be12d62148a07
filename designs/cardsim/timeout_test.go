package cardsim

import (
	"bytes"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// TestCompletionTimeout: host A reads host B's mailbox through its
// window just as the circuit between the O-NICs goes dark for good, so
// the reads' completions can never come (they are lost with the link,
// or wait in a hold buffer for a circuit that does not return) — on the
// model and on the cards. A's root complex gives up after its completion
// timeout (PCIe Base §2.8; 100 µs here): each read ends with
// StatusCompletionTimeout and all-ones, between 1 and 1.25 timeouts after
// it was sent, the accounting ends them, and A's tags are free again: a
// read of its O-NIC's ID register afterwards is answered. (Before, such
// a read hung its host for good: nothing ever ended it.)
func TestCompletionTimeout(t *testing.T) {
	for _, rtl := range []bool{false, true} {
		name := "model"
		if rtl {
			name = "cards"
		}
		t.Run(name, func(t *testing.T) {
			cfg := scenario.HostInterface()
			for i := range cfg.Hosts {
				cfg.Hosts[i].CompletionTimeout = 100 * time.Microsecond
			}
			const dark = 2 * time.Microsecond
			cfg.Phases = []scenario.PhaseConfig{{At: dark}}
			cl := buildOn(t, cfg, rtl)
			a, err := cl.Attach("A", 1<<32, make([]byte, mailbox))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Attach("B", 1<<32, make([]byte, mailbox)); err != nil {
				t.Fatal(err)
			}
			fn := a.ONICFunction("onicA")
			regs, win := fn.BARAddress(0), fn.BARAddress(2)
			got := map[uint64]cluster.ReadResult{}
			a.OnRead = func(rr cluster.ReadResult) { got[rr.ID] = rr }
			const reads = 8
			cl.Advance(dark - 200*time.Nanosecond)
			for i := range uint64(reads) {
				if err := a.Read(i, win+64*i, 64); err != nil {
					t.Fatal(err)
				}
			}
			sent := cl.Now()
			cl.Advance(sent + 130*time.Microsecond)
			for i := range uint64(reads) {
				rr, ok := got[i]
				if !ok || rr.Status != cluster.StatusCompletionTimeout || !bytes.Equal(rr.Data, bytes.Repeat([]byte{0xFF}, 64)) ||
					rr.Latency < 100*time.Microsecond || rr.Latency > 126*time.Microsecond {
					t.Fatalf("read %d: %v %+v", i, ok, rr)
				}
			}
			if err := a.Read(reads, regs+pmgr.RegID, 4); err != nil {
				t.Fatal(err)
			}
			cl.Advance(cl.Now() + 10*time.Microsecond)
			if rr := got[reads]; rr.Status != tlp.StatusSC || string(rr.Data) != "CINO" {
				t.Fatalf("the ID read after the timeouts: %+v", rr)
			}
			rep, err := cl.Report(0)
			if err != nil {
				t.Fatal(err)
			}
			if ac := rep.Accounting; ac.InFlight != 0 || ac.Reasons["completion-timeout"]+ac.Reasons["link-down"] != reads {
				t.Fatalf("accounting %+v", ac)
			}
			t.Logf("reasons %v", rep.Accounting.Reasons)
		})
	}
}
