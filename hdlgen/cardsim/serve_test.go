package cardsim

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// mailbox is the part of each host's memory at 4 GiB the peer may reach
// in the host-interface scenario.
const mailbox = 64 << 10

// session is what one run of the random session gave: each host's
// results, an entry per operation (a read's bytes and status, a
// register's value), both mailboxes at the end, and the report.
type session struct {
	results [2][]opResult
	mem     [2][]byte
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
func hostProgram(c *hostif.Client, r *rand.Rand, ops int) ([]opResult, error) {
	var res []opResult
	ids, err := c.ONICs(0)
	if err != nil || len(ids) != 1 {
		return nil, fmt.Errorf("O-NICs %v: %v", ids, err)
	}
	regs, err := c.BAR(0, ids[0], 0)
	if err != nil {
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
	for range ops {
		n := 1 + r.IntN(64)
		if r.IntN(3) == 0 {
			n = 1 + r.IntN(4096)
		}
		off := uint64(r.IntN(mailbox - n))
		off = min(off, off&^0xFFF+0x1000-uint64(n)) // one page: one CPU access
		e := uint64(r.IntN(4))                      // LUT entries 0-3, each mapped to the mailbox or not
		switch op := r.IntN(10); op {
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
	cl := buildOn(t, scenario.HostInterface(), rtl, cards...)
	socket, stop := serve(t, cl)
	var res session
	var done [2]atomic.Bool
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
				if res.results[k], err = hostProgram(c, r, ops); err != nil {
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
// mailbox, outside the ranges or disabled, register and counter reads)
// served once with both O-NICs as the Go model and once as their
// generated cards (onic emu serve --rtl), or with onicB a card and onicA
// the model (a mixed pair). The first operation whose bytes
// or status differ fails the test, naming it; both mailboxes must end the
// same and the accounting agree.
func TestSessionAgainstModel(t *testing.T) {
	const ops = 40
	for seed := range uint64(*sessionSeeds) {
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
			t.Logf("%d results per host equal (%d refused); the cards ran %d cycles; %d requests, %d delivered", len(rtl.results[0]), refused, h.Cycles, x.Injected, x.Delivered)
		})
	}
}

// head is the first 16 bytes of b, for messages.
func head(b []byte) []byte { return b[:min(len(b), 16)] }
