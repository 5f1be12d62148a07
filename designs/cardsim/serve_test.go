package cardsim

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// mailbox is the part of each host's memory at 4 GiB the peer may reach
// in the host-interface scenario; sessionMSI is host A's MSI-X message
// address in a session (host B's is 16 bytes on).
const (
	mailbox    = 64 << 10
	sessionMSI = 0xFEE01000
)

// sessionDark is when a session's circuit goes dark, after the first half
// of the hosts' programs.
const sessionDark = 100 * time.Microsecond

// session is what one run of the random session gave: each host's
// results, an entry per operation (a read's bytes and status, a
// register's value), both mailboxes at the end, and the report.
type session struct {
	results [2][]opResult
	mem     [2][]byte
	irqs    [2]int
	rep     cluster.Report
}

// opResult is what one operation of a host's program gave.
type opResult struct {
	what   string // the operation, for messages
	data   []byte
	status tlp.Status
}

// hostProgram is host k's side of a random session: through its
// O-NIC's window and LUT entries it writes and reads the peer's mailbox,
// reads past it (refused by the peer's O-NIC), points LUT entries at the
// mailbox or outside its domain's ranges (refused by its own O-NIC) and
// uses them, and reads its O-NIC's registers (ID, CAPS, LUT state). It
// only reads what it wrote itself, so the result does not depend on how
// the two hosts' accesses interleave. (Its O-NIC's counters do — they
// count the completions its host returns for the peer's reads — so
// runSession reads them at the end.)
func hostProgram(c *hostif.Client, k int, r *rand.Rand, ops int, barrier, half func() error) ([]opResult, error) {
	var res []opResult
	ids, err := c.ONICs(0)
	if err != nil || len(ids) != 1 {
		return nil, fmt.Errorf("O-NICs %v: %v", ids, err)
	}
	regs, err := c.BAR(0, ids[0], 0)
	if err != nil {
		return nil, err
	}
	config := func(reg, size int) error {
		v, st, err := c.ConfigRead(0, ids[0], reg, size)
		res = append(res, opResult{what: fmt.Sprintf("configuration read of %d bytes at %#x", size, reg), data: binary.LittleEndian.AppendUint32(nil, v), status: st})
		return err
	}
	writes := func(ws [][2]uint64) error {
		for _, w := range ws {
			if err := c.Write32(regs+w[0], uint32(w[1])); err != nil {
				return err
			}
		}
		return nil
	}
	// Interrupts: MSI-X vector 0 (its message msi(k)) and the capability's
	// enable bit; a rule letting the peer write the interrupt page; LUT
	// entry 15 onto the peer's interrupt page.
	msi := func(k int) (uint64, uint32) { return sessionMSI + 0x10*uint64(k), 0x4040 + uint32(k) }
	addr, data := msi(k)
	if err := writes([][2]uint64{{pcie.ONICMSIXTableOffset, addr & 0xFFFFFFFF}, {pcie.ONICMSIXTableOffset + 4, addr >> 32},
		{pcie.ONICMSIXTableOffset + 8, uint64(data)}, {pcie.ONICMSIXTableOffset + 12, 0},
		{pmgr.RegACLIndex, 0}, {pmgr.RegACLBaseLo, addr &^ 0xFFF}, {pmgr.RegACLBaseHi, 0}, {pmgr.RegACLPages, 1},
		{pmgr.RegACLCtrl, 1 | 1<<2 | 1<<16}, {pmgr.RegACLCommit, 1}, // enabled, write, domain 1 (peer)
		{pmgr.RegLUTIndex, 15}, {pmgr.RegLUTAddrLo, sessionMSI &^ 0xFFFF}, {pmgr.RegLUTAddrHi, 0},
		{pmgr.RegLUTCtrl, 1 | 1<<1}, {pmgr.RegLUTCommit, 1}}); err != nil {
		return nil, err
	}
	capAt, _, err := c.ConfigRead(0, ids[0], 0x34, 1)
	for n := 0; err == nil && capAt != 0 && n < 48; n++ {
		id, _, err2 := c.ConfigRead(0, ids[0], int(capAt), 1)
		if err = err2; err == nil && id == 0x11 {
			ctl, _, err2 := c.ConfigRead(0, ids[0], int(capAt)+2, 2)
			if err = err2; err == nil {
				_, err = c.ConfigWrite(0, ids[0], int(capAt)+2, 2, ctl|0x8000)
			}
			break
		}
		if err == nil {
			capAt, _, err = c.ConfigRead(0, ids[0], int(capAt)+1, 1)
		}
	}
	if err != nil {
		return nil, err
	}
	// The rule is in place once a read of its registers comes back (a
	// read does not pass the writes before it, §2.4.1); the peer starts
	// interrupting only when both hosts are set up.
	if _, _, err := c.Read(regs+pmgr.RegACLPages, 4); err != nil {
		return nil, err
	}
	if err := barrier(); err != nil {
		return nil, err
	}
	win, err := c.BAR(0, ids[0], 2)
	if err != nil {
		return nil, err
	}
	lut, err := c.BAR(0, ids[0], 4)
	if err != nil {
		return nil, err
	}
	read := func(what string, addr uint64, n int) error {
		b, st, err := c.Read(addr, n)
		res = append(res, opResult{what: fmt.Sprintf("%s: read %d bytes at %#x", what, n, addr), data: b, status: st})
		return err
	}
	const entry = 64 << 10 // the scenario's LUT entry size
	for i := range ops {
		if i == ops/2 {
			if err := half(); err != nil {
				return nil, err
			}
		}
		n := 1 + r.IntN(64)
		if r.IntN(3) == 0 {
			n = 1 + r.IntN(4096)
		}
		off := uint64(r.IntN(mailbox - n))
		off = min(off, off&^0xFFF+0x1000-uint64(n)) // one page: one CPU access
		e := uint64(r.IntN(4))                      // LUT entries 0-3, each mapped to the mailbox or not
		switch op := r.IntN(12); op {
		case 10:
			// Configuration space: the header and the first capabilities.
			reg := []int{0x00, 0x04, 0x08, 0x0C, 0x10, 0x18, 0x20, 0x2C, 0x34, 0x40, 0x44, 0x48, 0x50, 0x60, 0x70}[r.IntN(15)]
			err = config(reg, 4)
		case 11:
			// Interrupt the peer: its vector 0's message through LUT
			// entry 15, as Linux's ntb_msi does.
			addr, data := msi(1 - k)
			if err := c.Write(lut+15*entry+addr&0xFFFF, binary.LittleEndian.AppendUint32(nil, data)); err != nil {
				return nil, err
			}
		case 0, 1:
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			at := win + off
			if op == 1 {
				at = lut + e*entry + off
			}
			if err := c.Write(at, data); err != nil {
				return nil, err
			}
		case 2, 3:
			err = read("window", win+off, n)
		case 4:
			err = read("LUT entry", lut+e*entry+off, n)
		case 5:
			err = read("window past the mailbox", win+mailbox+uint64(r.IntN(mailbox))&^63, 1+r.IntN(64))
		case 6:
			// Point entry e at the mailbox (4 GiB), outside the domain's
			// ranges (8 GiB), or disable it.
			target, ctl := uint64(1<<32), uint32(1|1<<1) // enabled, port A
			switch r.IntN(3) {
			case 1:
				target = 2 << 32
			case 2:
				ctl = 0
			}
			for _, w := range [][2]uint64{{pmgr.RegLUTIndex, e}, {pmgr.RegLUTAddrLo, target & 0xFFFFFFFF}, {pmgr.RegLUTAddrHi, target >> 32},
				{pmgr.RegLUTCtrl, uint64(ctl)}, {pmgr.RegLUTCommit, 1}} {
				if err := c.Write32(regs+w[0], uint32(w[1])); err != nil {
					return nil, err
				}
			}
		default:
			reg := []uint64{pmgr.RegID, pmgr.RegCaps, pmgr.RegLUTIndex, pmgr.RegLUTCtrl}[r.IntN(4)]
			err = read("register", regs+reg, 4)
		}
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// runSession serves the host-interface scenario, with its O-NICs as their
// generated cards when rtl is set, to two clients in lock-step, each
// sharing its mailbox (filled from seed) and running hostProgram.
func runSession(t *testing.T, rtl bool, seed uint64, ops int, cards ...string) session {
	t.Helper()
	// The circuit between the O-NICs goes dark at sessionDark and is back
	// 1 + 3 + 6 µs later (MEMS reconfiguration and bring-up), while the
	// hosts run the second half of their programs: what they send across
	// it meanwhile waits in the hold buffers. (Both hosts wait for the
	// dark before that half, with nothing in flight: a completion on the
	// fibre as the circuit goes dark is lost, and whether one is depends
	// on timing, which the model and the cards do not share.)
	cfg := scenario.HostInterface()
	cfg.MEMS.Reconfig, cfg.MEMS.BringUp = 3*time.Microsecond, 6*time.Microsecond
	cfg.Phases = []scenario.PhaseConfig{{At: sessionDark}, {At: sessionDark + time.Microsecond, Circuits: cfg.Circuits}}
	cl := buildOn(t, cfg, rtl, cards...)
	socket, stop := serve(t, cl)
	var res session
	var done, ready, half [2]atomic.Bool
	errs := make(chan error, 2)
	for k, host := range []string{"A", "B"} {
		r := rand.New(rand.NewPCG(seed, uint64(k)))
		mem := make([]byte, mailbox)
		for i := range mem {
			mem[i] = byte(r.Uint32())
		}
		go func() {
			errs <- func() error {
				defer done[k].Store(true)
				c, err := hostif.Dial(socket, hostif.ClientOptions{Host: host, MemBytes: mailbox, MemBase: 1 << 32})
				if err != nil {
					return err
				}
				defer c.Close()
				copy(c.Mem(), mem)
				// barrier waits for the other host (and, at half time, for
				// the circuit to have gone dark).
				barrier := func(me, other *atomic.Bool, until time.Duration) func() error {
					return func() error {
						me.Store(true)
						for now := time.Duration(0); !other.Load() || now < until; {
							if now, err = c.Advance(100 * time.Nanosecond); err != nil {
								return err
							}
						}
						return nil
					}
				}
				if res.results[k], err = hostProgram(c, k, r, ops, barrier(&ready[k], &ready[1-k], 0),
					barrier(&half[k], &half[1-k], sessionDark+500*time.Nanosecond)); err != nil {
					return fmt.Errorf("host %s: %v", host, err)
				}
				// Time passes until the other host is done too, and
				// its last writes land.
				done[k].Store(true)
				for !done[1-k].Load() {
					if _, err := c.Advance(time.Microsecond); err != nil {
						return err
					}
				}
				if _, err := c.Advance(20 * time.Microsecond); err != nil {
					return err
				}
				res.mem[k] = bytes.Clone(c.Mem())
				// The interrupts the peer raised, in the order they came.
				irqs, lost, err := c.WaitIRQ(time.Nanosecond)
				if err != nil {
					return err
				}
				var got []byte
				for _, q := range irqs {
					got = binary.LittleEndian.AppendUint64(got, q.Addr)
					got = binary.LittleEndian.AppendUint32(got, q.Data)
				}
				res.results[k] = append(res.results[k], opResult{what: fmt.Sprintf("at the end, %d interrupts (%d lost)", len(irqs), lost), data: got})
				res.irqs[k] = len(irqs)
				// Its O-NIC's counters, once both hosts are done.
				regs, err := c.BAR(0, tlp.NewID(1, 0, 0), 0)
				if err != nil {
					return err
				}
				for i := range pmgr.Reasons() {
					at := regs + uint64(pmgr.RegCount0) + 4*uint64(i)
					b, st, err := c.Read(at, 4)
					if err != nil {
						return err
					}
					res.results[k] = append(res.results[k], opResult{what: "at the end, COUNT_" + pmgr.Reason(i).String(), data: b, status: st})
				}
				return nil
			}()
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	stop()
	var err error
	if res.rep, err = cl.Report(1); err != nil {
		t.Fatal(err)
	}
	return res
}

// sessionSeeds is how many random sessions TestSessionAgainstModel runs
// (make soak raises it).
var sessionSeeds = flag.Int("session-seeds", 4, "random host-interface sessions TestSessionAgainstModel runs on the model and the cards")

// TestSessionAgainstModel: random host-interface sessions (hostProgram
// on both hosts at once: window and LUT writes and reads across the
// fabric, reads the peer's O-NIC refuses, LUT entries pointed at the
// mailbox, outside the ranges or disabled, register, counter and
// configuration reads, MSI-X interrupts raised in the peer through a LUT
// entry and an access rule, and the second half of each program run
// while the circuit between the O-NICs is dark and coming back) served
// once with both O-NICs as the Go model and once as their generated
// cards (onic emu serve --rtl), or with onicB a card and onicA the model
// (a mixed pair). The first operation whose bytes
// or status differ fails the test, naming it; both mailboxes must end the
// same and the accounting agree.
func TestSessionAgainstModel(t *testing.T) {
	const ops = 40
	seeds := *sessionSeeds
	if testing.Short() {
		seeds = min(seeds, 2) // make check's quick loop: one on two cards, one mixed
	}
	for seed := range uint64(seeds) {
		// Both O-NICs cards, and (every other seed) onicB a card and
		// onicA the model: a mixed pair.
		var cards []string
		name := fmt.Sprintf("seed-%d", seed)
		if seed%2 == 1 {
			cards, name = []string{"onicB"}, name+"-mixed"
		}
		t.Run(name, func(t *testing.T) {
			model := runSession(t, false, seed, ops)
			rtl := runSession(t, true, seed, ops, cards...)
			refused := 0
			for k, host := range []string{"A", "B"} {
				m, x := model.results[k], rtl.results[k]
				for i := range min(len(m), len(x)) {
					if m[i].status != x[i].status || !bytes.Equal(m[i].data, x[i].data) {
						t.Fatalf("host %s, operation %d (%s): the model gives %v % x, the cards %v % x",
							host, i, m[i].what, m[i].status, head(m[i].data), x[i].status, head(x[i].data))
					}
					if m[i].status != tlp.StatusSC {
						refused++
					}
				}
				if len(m) != len(x) {
					t.Fatalf("host %s: %d results on the model, %d on the cards", host, len(m), len(x))
				}
				if !bytes.Equal(model.mem[k], rtl.mem[k]) {
					t.Errorf("host %s's mailbox differs between the model's run and the cards'", host)
				}
			}
			if refused == 0 {
				t.Fatal("no operation was refused: the session does not test refusals")
			}
			if rtl.irqs[0]+rtl.irqs[1] == 0 {
				t.Fatal("no interrupt was raised: the session does not test interrupts")
			}
			if rtl.rep.Reconfigurations != 1 || rtl.rep.StallS < 9e-6 { // (going dark is not counted; lighting again is)
				t.Fatalf("the circuit went dark %d times (%g s): the session does not test a port down and up", rtl.rep.Reconfigurations, rtl.rep.StallS)
			}
			h := rtl.rep.RTL
			if h == nil || h.Cycles == 0 || h.Error != "" {
				t.Fatalf("the cards' report: %+v", h)
			}
			// The cards' refusals reach the accounting as completions with
			// an error status (the model names the reason: denied) and
			// writes a card refused stay unseen (the model's denied).
			m, x := model.rep.Accounting, rtl.rep.Accounting
			failed := func(a cluster.Accounting) uint64 { return a.ErrorStatus + a.Denied + a.Unsupported + a.Dropped }
			if m.Injected != x.Injected || m.Delivered != x.Delivered || failed(m) != failed(x)+uint64(h.UnseenWrites) {
				t.Errorf("accounting: the model %+v, the cards %+v (%d writes unseen)", m, x, h.UnseenWrites)
			}
			t.Logf("%d results per host equal (%d refused, %v interrupts); the cards ran %d cycles in %v; %d requests, %d delivered", len(rtl.results[0]), refused, rtl.irqs, h.Cycles, time.Duration(rtl.rep.SimulatedS*1e9), x.Injected, x.Delivered)
		})
	}
}

// head is the first 16 bytes of b, for messages.
func head(b []byte) []byte { return b[:min(len(b), 16)] }
