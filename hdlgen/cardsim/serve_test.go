package cardsim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
	"onic/tlp"
)

// mailbox is the part of each host's memory at 4 GiB the peer may reach
// in the host-interface scenario.
const mailbox = 64 << 10

// session is what one run of sessionProgram gave: every read's bytes and
// status, host B's memory at the end, and the report.
type session struct {
	reads  [][]byte
	status []tlp.Status
	memB   []byte
	rep    cluster.Report
}

// runSession serves the host-interface scenario, with its O-NICs as their
// generated cards when rtl is set, to two clients in lock-step: host B's
// shares its mailbox (filled from seed) and lets time pass; host A's
// reads its O-NIC's ID register, then makes ops random accesses through
// its window to host B's memory — writes and reads of 1 byte to 4 KiB
// inside the mailbox, and reads past it that the far O-NIC's access
// check refuses.
func runSession(t *testing.T, rtl bool, seed uint64, ops int) session {
	t.Helper()
	cfg := scenario.HostInterface()
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rtl {
		set, err := NewSet(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.UseHardware(set); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := hostif.New(cl, hostif.Options{})
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	r := rand.New(rand.NewPCG(seed, 3))
	memB := make([]byte, mailbox)
	for i := range memB {
		memB[i] = byte(r.Uint32())
	}
	var done atomic.Bool
	var res session
	errB := make(chan error, 1)
	go func() {
		errB <- func() error {
			c, err := hostif.Dial(socket, hostif.ClientOptions{Host: "B", MemBytes: mailbox, MemBase: 1 << 32})
			if err != nil {
				return err
			}
			defer c.Close()
			copy(c.Mem(), memB)
			for !done.Load() {
				if _, err := c.Advance(time.Microsecond); err != nil {
					return err
				}
			}
			if _, err := c.Advance(20 * time.Microsecond); err != nil { // the last writes land
				return err
			}
			res.memB = bytes.Clone(c.Mem())
			return nil
		}()
	}()
	errA := func() error {
		defer done.Store(true)
		c, err := hostif.Dial(socket, hostif.ClientOptions{Host: "A", MemBytes: mailbox, MemBase: 1 << 32})
		if err != nil {
			return err
		}
		defer c.Close()
		ids, err := c.ONICs(0)
		if err != nil || len(ids) != 1 {
			return fmt.Errorf("host A finds O-NICs %v: %v", ids, err)
		}
		regs, err := c.BAR(0, ids[0], 0)
		if err != nil {
			return err
		}
		win, err := c.BAR(0, ids[0], 2)
		if err != nil {
			return err
		}
		if id, err := c.Read32(regs); err != nil || id != 0x4F4E4943 {
			return fmt.Errorf("host A reads its O-NIC's ID register as %#x (%v)", id, err)
		}
		for range ops {
			n := 1 + r.IntN(64)
			if r.IntN(3) == 0 {
				n = 1 + r.IntN(4096)
			}
			off := uint64(r.IntN(mailbox - n))
			off = min(off, off&^0xFFF+0x1000-uint64(n)) // one page: one CPU access
			switch r.IntN(4) {
			case 0:
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				if err := c.Write(win+off, data); err != nil {
					return err
				}
			case 3:
				off = mailbox + uint64(r.IntN(mailbox))&^63
				n = 1 + r.IntN(64)
				fallthrough
			default:
				b, st, err := c.Read(win+off, n)
				if err != nil {
					return err
				}
				res.reads, res.status = append(res.reads, b), append(res.status, st)
			}
		}
		return nil
	}()
	if err := <-errB; err != nil {
		t.Fatal(err)
	}
	if errA != nil {
		t.Fatal(errA)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if res.rep, err = cl.Report(1); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSessionAgainstModel: the same host-interface session — an ID
// register read, then writes and reads through host A's window into host
// B's mailbox, and reads past it that host B's O-NIC refuses — served
// once with both O-NICs as the Go model and once as their generated
// cards (onic emu serve --rtl). Every read returns the same bytes and
// status, host B's memory ends the same, every write the cards took is
// seen landing, and the accounting of the software's requests is the
// same.
func TestSessionAgainstModel(t *testing.T) {
	const ops = 40
	model := runSession(t, false, 1, ops)
	rtl := runSession(t, true, 1, ops)
	if len(model.reads) != len(rtl.reads) {
		t.Fatalf("%d reads on the model, %d on the cards", len(model.reads), len(rtl.reads))
	}
	refused := 0
	for i := range model.reads {
		if model.status[i] != rtl.status[i] || !bytes.Equal(model.reads[i], rtl.reads[i]) {
			t.Errorf("read %d: the model gives %v % x, the cards %v % x", i, model.status[i], head(model.reads[i]), rtl.status[i], head(rtl.reads[i]))
		}
		if model.status[i] != tlp.StatusSC {
			refused++
		}
	}
	if refused == 0 || refused == len(model.reads) {
		t.Fatalf("%d of %d reads refused: the session does not test both", refused, len(model.reads))
	}
	if !bytes.Equal(model.memB, rtl.memB) {
		t.Error("host B's memory differs between the model's run and the cards'")
	}
	h := rtl.rep.RTL
	if h == nil || h.Cycles == 0 || h.UnseenWrites != 0 || h.Error != "" {
		t.Fatalf("the cards' report: %+v", h)
	}
	// The cards' refusals reach the accounting as completions with an
	// error status: the model names the reason (denied), the cards only
	// the status.
	m, x := model.rep.Accounting, rtl.rep.Accounting
	failed := func(a cluster.Accounting) uint64 { return a.ErrorStatus + a.Denied + a.Unsupported }
	if m.Injected != x.Injected || m.Delivered != x.Delivered || m.InFlight != x.InFlight || m.Dropped != x.Dropped || failed(m) != failed(x) {
		t.Errorf("accounting: the model %+v, the cards %+v", m, x)
	}
	t.Logf("%d reads (%d refused by the far O-NIC) equal; the cards ran %d cycles; %d requests, %d delivered", len(model.reads), refused, h.Cycles, x.Injected, x.Delivered)
}

// head is the first 16 bytes of b, for messages.
func head(b []byte) []byte { return b[:min(len(b), 16)] }
