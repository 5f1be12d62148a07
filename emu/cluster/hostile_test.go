package cluster

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/pcie/acl"
	"onic/tlp"
)

// hostileModelSeqs is how many fault sequences TestHostileModel runs per
// down policy.
var hostileModelSeqs = flag.Int("hostile-model-sequences", 500, "fault sequences TestHostileModel runs per down policy (make soak raises it)")

// A hostile sequence: one fault toward onicA's ports, as its partner or
// the MEMS switch does it.
type hostileFault struct {
	kind string // stall-a, slow-a, stall-b, dark-a, errors-a, none
	from time.Duration
	long time.Duration
	hold time.Duration // slow: per TLP
	ber  float64       // errors: the bit error rate into onicB's port A
}

// hostileSlot is the simulated time each sequence has: its fault (at
// most 100 µs, and a dark circuit's 20 µs reconfiguration and 5 µs
// bring-up), then the liveness bound.
const (
	hostileFaultMax = 100 * time.Microsecond
	hostileBound    = 400 * time.Microsecond
	hostileSlot     = hostileFaultMax + 25*time.Microsecond + hostileBound
)

// hostileCluster is the two-party cluster with both ports joined, host
// A's software allowed to its O-NIC's registers and writing to host B
// through a window out of each port, the MEMS switching in 20 µs (5 µs
// bring-up), and the faults of seqs, one per hostileSlot.
func hostileCluster(policy string, seqs []hostileFault) scenario.Config {
	c := twoPorts(policy, scenario.FaultConfig{})
	c.Flows = nil
	c.Duration = time.Duration(len(seqs)+1) * hostileSlot
	c.MEMS.Reconfig, c.MEMS.BringUp = 20*time.Microsecond, 5*time.Microsecond
	a := &c.ONICs[0].Manager.Access.Domains[0]
	a.Egress = append(a.Egress, "local")
	a.Ranges = append(a.Ranges, acl.RangeConfig{Base: 0, Size: 0x10000, Read: true, Write: true})
	both := c.Circuits
	for _, f := range seqs {
		switch f.kind {
		case "stall-a", "slow-a", "stall-b":
			port := "onicB.a"
			if f.kind == "stall-b" {
				port = "onicB.b"
			}
			kind := "stall"
			if f.kind == "slow-a" {
				kind = "slow"
			}
			c.Faults = append(c.Faults, scenario.FaultConfig{Port: port, Kind: kind, From: f.from, To: f.from + f.long, Hold: f.hold})
		case "errors-a":
			c.Faults = append(c.Faults, scenario.FaultConfig{Port: "onicB.a", Kind: "errors", From: f.from, To: f.from + f.long, BER: f.ber})
		case "dark-a":
			c.Phases = append(c.Phases, scenario.PhaseConfig{At: f.from, Circuits: both[1:]},
				scenario.PhaseConfig{At: f.from + f.long, Circuits: both})
		}
	}
	return c
}

// TestHostileModel is the hostile-peer sequences of the card's tests
// (TestHostileCards) run against the emulator's O-NIC at the level it
// models: random faults toward onicA's ports — a partner that returns no
// credits (port A or B), one that returns them a trickle at a time, bit
// errors (1e-6 to 3e-5) on the fibre into onicB's port A, a circuit
// taken dark and lit again — each 1 to 100 µs, while host A
// writes toward B out of both ports (half the time flooding the faulty
// port with 32 KiB first)
// and reads its O-NIC's ID register as each fault begins. After each, a
// liveness check: within a bound the register read made behind the flood
// has been answered with "ONIC", and a write sent after the fault reaches
// host B's memory out of each port. At the end, under both down
// policies, every write that landed has its own bytes, the accounting
// balances with every drop named, and nothing is denied.
func TestHostileModel(t *testing.T) {
	n := *hostileModelSeqs
	if testing.Short() {
		n = min(n, 50)
	}
	for _, policy := range []string{"hold", "fail"} {
		t.Run(policy, func(t *testing.T) {
			r := rand.New(rand.NewPCG(41, uint64(len(policy))))
			kinds := []string{"stall-a", "slow-a", "stall-b", "dark-a", "errors-a", "none"}
			// A cluster per 1,000 sequences (a scenario's phases and
			// faults are bounded).
			for first := 0; first < n; first += 1000 {
				var seqs []hostileFault
				for i := range min(1000, n-first) {
					f := hostileFault{kind: kinds[r.IntN(len(kinds))], from: time.Duration(i)*hostileSlot + 5*time.Microsecond,
						long: time.Microsecond + time.Duration(r.Int64N(int64(hostileFaultMax-time.Microsecond)))}
					switch f.kind {
					case "slow-a":
						f.hold = 500*time.Nanosecond + time.Duration(r.Int64N(int64(5*time.Microsecond)))
					case "errors-a":
						f.ber = 1e-6 + 29e-6*r.Float64()
					}
					seqs = append(seqs, f)
				}
				hostileRun(t, policy, seqs, r)
			}
		})
	}
}

func hostileRun(t *testing.T, policy string, seqs []hostileFault, r *rand.Rand) {
	cfg := hostileCluster(policy, seqs)
	cl, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := cl.Attach("A", 1<<40, make([]byte, 4096))
	if err != nil {
		t.Fatal(err)
	}
	memB := make([]byte, 32<<20)
	if _, err := cl.Attach("B", 1<<32, memB); err != nil {
		t.Fatal(err)
	}
	fn := a.ONICFunction("onicA")
	regs, win := fn.BARAddress(0), fn.BARAddress(2)
	answered := map[uint64]time.Duration{}
	a.OnRead = func(rr ReadResult) {
		if rr.Status != tlp.StatusSC || !bytes.Equal(rr.Data, []byte("CINO")) {
			t.Errorf("ID read %d: %v % x", rr.ID, rr.Status, rr.Data)
		}
		answered[rr.ID] = cl.Now()
	}
	// Writes: 256 bytes (the hosts' MPS), each at its own offset of B's
	// memory, the first 8 bytes its number.
	type sentWrite struct {
		off  uint64
		data []byte
	}
	var writes []sentWrite
	write := func(port int) int {
		k := len(writes)
		off := uint64(k) * 256
		if off+256 > uint64(len(memB)) {
			t.Fatalf("more than %d writes", len(memB)/256)
		}
		d := make([]byte, 256)
		binary.LittleEndian.PutUint64(d, uint64(k)+1)
		for i := 8; i < 256; i++ {
			d[i] = byte(r.Uint32())
		}
		if err := a.Write(win+uint64(port)<<30+off, d); err != nil {
			t.Fatal(err)
		}
		writes = append(writes, sentWrite{off, d})
		return k
	}
	landed := func(k int) bool {
		w := writes[k]
		return bytes.Equal(memB[w.off:w.off+256], w.data)
	}
	worstRead := time.Duration(0)
	seen := map[string]int{}
	for i, f := range seqs {
		seen[f.kind]++
		cl.Advance(f.from)
		if i%2 == 0 {
			port := 0
			if f.kind == "stall-b" {
				port = 1
			}
			for range 128 { // 32 KiB toward the fault: more than the partner's receive buffer
				write(port)
			}
		}
		id := uint64(i)
		if err := a.Read(id, regs, 4); err != nil {
			t.Fatal(err)
		}
		readAt := cl.Now()
		end := f.from + f.long
		if f.kind == "dark-a" {
			end += cfg.MEMS.Reconfig + cfg.MEMS.BringUp
		}
		for t0 := f.from; t0 < end; t0 += 10 * time.Microsecond {
			cl.Advance(t0)
			write(r.IntN(2))
		}
		cl.Advance(end)
		// Liveness: a write out of each port lands within the bound
		// (sent again every 20 µs while none has: under fail a port that
		// is still draining fails what comes for it).
		last := [2]int{write(0), write(1)}
		ok := false
		for at := end; at < end+hostileBound; at += 20 * time.Microsecond {
			cl.Advance(at)
			ok = true
			for p := range 2 {
				if !landed(last[p]) {
					ok = false
					if at > end {
						last[p] = write(p)
					}
				}
			}
			if _, done := answered[id]; ok && done {
				break
			}
		}
		took, done := answered[id]
		if !ok || !done {
			t.Fatalf("sequence %d (%s for %v): within %v of its end, read answered %v, writes landed %v/%v",
				i, f.kind, f.long, hostileBound, done, landed(last[0]), landed(last[1]))
		}
		if l := took - readAt; l > worstRead {
			worstRead = l
		}
	}
	cl.Advance(time.Duration(len(seqs)+1) * hostileSlot)
	rep, err := cl.Report(0)
	if err != nil {
		t.Fatal(err)
	}
	ac := rep.Accounting
	if ac.InFlight != 0 || ac.Delivered+ac.ErrorStatus+ac.Denied+ac.Unsupported+ac.Dropped != ac.Injected || ac.Denied != 0 || ac.Unsupported != 0 {
		t.Errorf("accounting %+v", ac)
	}
	var named uint64
	for why, k := range ac.Reasons {
		switch why {
		case "hold-buffer-full", "port-down", "link-down":
			named += k
		default:
			t.Errorf("%d TLPs dropped as %q", k, why)
		}
	}
	if named != ac.Dropped+ac.ErrorStatus {
		t.Errorf("dropped %d, failed %d, named %d: %v", ac.Dropped, ac.ErrorStatus, named, ac.Reasons)
	}
	landedN := 0
	for k, w := range writes {
		got := memB[w.off : w.off+256]
		switch {
		case landed(k):
			landedN++
		case !bytes.Equal(got, make([]byte, 256)):
			t.Fatalf("write %d: other bytes landed: % x", k, got)
		}
	}
	if missing := uint64(len(writes) - landedN); missing != ac.Dropped {
		t.Errorf("%d of %d writes never landed; the accounting dropped %d", missing, len(writes), ac.Dropped)
	}
	st := rep.ONICs[0].Stalls
	t.Logf("%s: %d sequences %v; %d writes, %d landed; register reads answered within %v of a fault's start; drops %v; stalls %s",
		policy, len(seqs), seen, len(writes), landedN, worstRead, ac.Reasons, fmt.Sprint(st))
}
