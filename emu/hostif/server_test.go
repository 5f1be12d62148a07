package hostif

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/tlp"
)

// serve starts a server on the host-interface cluster; stop ends it and
// returns the cluster's report.
func serve(t *testing.T, opt Options) (socket string, stop func() cluster.Report) {
	t.Helper()
	socket, stop, _ = serveConfig(t, scenario.HostInterface(), opt)
	return socket, stop
}

// serveConfig is serve for a cluster configuration; it also returns the
// server, for tests that look at its state.
func serveConfig(t *testing.T, cfg scenario.Config, opt Options) (socket string, stop func() cluster.Report, srv *Server) {
	t.Helper()
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cl, opt)
	if err != nil {
		t.Fatal(err)
	}
	srv = s
	dir, err := os.MkdirTemp("", "hostif")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket = filepath.Join(dir, "s")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	stopped := false
	stop = func() cluster.Report {
		if !stopped {
			stopped = true
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Second):
				t.Errorf("the server took more than 1 s to stop")
				err = <-done
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		r, err := cl.Report(0)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Cleanup(func() { stop() })
	return socket, stop, srv
}

func dial(t *testing.T, socket, host string, mem int) *Client {
	t.Helper()
	c, err := Dial(socket, ClientOptions{Host: host, MemBytes: mem, MemBase: 1 << 32})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// findONIC scans segment 0 as an OS does and returns the O-NIC's ID and
// BAR0 and BAR2 addresses.
func findONIC(t *testing.T, c *Client) (tlp.ID, uint64, uint64) {
	t.Helper()
	ids, err := c.ONICs(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) == 0 {
		t.Fatal("no O-NIC on segment 0")
	}
	bar := func(i int) uint64 {
		a, err := c.BAR(0, ids[0], i)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return ids[0], bar(0), bar(2)
}

// exchange is a lock-step session of two clients, each a sequential
// program in its own goroutine: A reads its O-NIC's ID register and lets
// 10 µs pass; B lets 2 µs pass, writes a message through its window into
// A's memory and reads it back. It returns what each saw, with times.
func exchange(t *testing.T, socket string) string {
	a := dial(t, socket, "A", 1<<20)
	b := dial(t, socket, "B", 1<<20)
	_, barA, _ := findONIC(t, a)
	_, _, winB := findONIC(t, b)
	msg := []byte("sixteen bytes!!!")
	logs := make(chan string, 2)
	go func() {
		id, err := a.Read32(barA + pmgr.RegID)
		t1, _ := a.Now()
		if _, err2 := a.Advance(10 * time.Microsecond); err == nil {
			err = err2
		}
		t2, _ := a.Now()
		logs <- fmt.Sprintf("A: id %#x at %v (%v); at %v its memory has %q", id, t1, err, t2, a.Mem()[0x40:0x50])
		a.Close() // in lock-step, a client that is done must leave or it holds time
	}()
	go func() {
		t0, err := b.Advance(2 * time.Microsecond)
		if err == nil {
			err = b.Write(winB+0x40, msg)
		}
		data, st, err2 := b.Read(winB+0x40, 16)
		t1, _ := b.Now()
		logs <- fmt.Sprintf("B: wrote at %v, read back %q status %v at %v (%v %v)", t0, data, st, t1, err, err2)
		b.Close()
	}()
	out := []string{<-logs, <-logs}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// TestLockStep: two clients enumerate, program and move data; the
// session gives the same times and data every run.
func TestLockStep(t *testing.T) {
	var runs []string
	var reports []string
	for range 2 {
		socket, stop := serve(t, Options{})
		runs = append(runs, exchange(t, socket))
		r := stop()
		if r.Accounting.InFlight != 0 || r.Accounting.Delivered != r.Accounting.Injected || r.Accounting.Injected == 0 {
			t.Errorf("accounting: %+v", r.Accounting)
		}
		r.Speed = cluster.Speed{}
		js, err := json.Marshal(r) // by value: the report holds pointers
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, string(js))
	}
	if runs[0] != runs[1] || reports[0] != reports[1] {
		t.Errorf("two lock-step runs differ:\n%s\n%s", runs[0], runs[1])
	}
	if want := []string{`read back "sixteen bytes!!!" status SC`, "(<nil> <nil>)", `its memory has "sixteen bytes!!!"`, "id 0x4f4e4943"}; !containsAll(runs[0], want) {
		t.Errorf("session:\n%s", runs[0])
	}
}

func containsAll(s string, subs []string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// raw is a connection that speaks frames directly.
type raw struct {
	t *testing.T
	c net.Conn
}

func (r raw) send(b []byte) Reply {
	r.t.Helper()
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	if _, err := r.c.Write(append(frame, b...)); err != nil {
		r.t.Fatal(err)
	}
	rep, err := ReadReply(r.c)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

func (r raw) req(q Request) Reply {
	r.t.Helper()
	b, err := q.MarshalMsg(nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.send(b)
}

// TestRobustness: malformed and out-of-order messages get an error reply
// and the connection stays usable; a client that dies mid-read releases
// its host and the server carries on.
func TestRobustness(t *testing.T) {
	socket, stop := serve(t, Options{})
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	r := raw{t, conn}
	for _, tc := range []struct {
		name string
		msg  []byte
		q    *Request
		want string
	}{
		{"garbage", []byte{0xc1, 0x00, 0x13}, nil, "malformed message"},
		{"trailing bytes", append(marshal(Request{Seq: 1, Op: OpTime}), 0x00), nil, "bytes after it"},
		{"before hello", nil, &Request{Seq: 2, Op: OpTime}, "time before hello"},
		{"wrong version", nil, &Request{Seq: 3, Op: OpHello, Version: 99, Host: "A"}, "protocol version 99"},
		{"no such host", nil, &Request{Seq: 4, Op: OpHello, Version: Version, Host: "Z"}, `host "Z": not in the topology`},
		{"no such memory", nil, &Request{Seq: 5, Op: OpHello, Version: Version, Host: "A", MemPath: "/nonexistent"}, "mem_path"},
	} {
		var rep Reply
		if tc.q != nil {
			rep = r.req(*tc.q)
		} else {
			rep = r.send(tc.msg)
		}
		if !strings.Contains(rep.Err, tc.want) {
			t.Errorf("%s: reply %+v, want an error with %q", tc.name, rep, tc.want)
		}
	}
	if rep := r.req(Request{Seq: 6, Op: OpHello, Version: Version, Host: "A"}); rep.Err != "" || rep.Mode != LockStep || rep.Segments != 1 {
		t.Fatalf("hello after the errors: %+v", rep)
	}
	for _, tc := range []struct {
		q    Request
		want string
	}{
		{Request{Seq: 7, Op: OpHello, Version: Version, Host: "A"}, "already said"},
		{Request{Seq: 8, Op: "frobnicate"}, `unknown op "frobnicate"`},
		{Request{Seq: 9, Op: OpConfigRd, Size: 3}, "want 1, 2 or 4 bytes"},
		{Request{Seq: 10, Op: OpMMIOWrite, Addr: 0xFFF, Data: []byte{1, 2}}, "within one 4 KB page"},
		{Request{Seq: 11, Op: OpMMIORead, Addr: 0x1000, Len: 0}, "want 1 to 4096 bytes"},
	} {
		if rep := r.req(tc.q); !strings.Contains(rep.Err, tc.want) || rep.Seq != tc.q.Seq {
			t.Errorf("%s: reply %+v, want an error with %q", tc.q.Op, rep, tc.want)
		}
	}
	// A second client for host A is refused; one for B is not.
	if _, err := Dial(socket, ClientOptions{Host: "A"}); err == nil || !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "already driven") {
		t.Errorf("second client on A: %v", err)
	}
	b := dial(t, socket, "B", 4096)
	_, _, winB := findONIC(t, b)
	// A (raw) starts a 4 KB read across the optical link and dies.
	_, _, winA := findONICRaw(t, r)
	q := marshal(Request{Seq: 13, Op: OpMMIORead, Addr: winA, Len: 4096})
	if _, err := conn.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(q))), q...)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// B carries on, and A is free for a new client.
	if _, err := b.Advance(20 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(winB, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	a := dial(t, socket, "A", 4096)
	a.Close() // (in lock-step a client that stays holds time)
	if _, err := b.Advance(20 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	b.Close()
	rep := stop()
	// B's write reached A while A had no client: dropped and named,
	// never delivered into memory no one holds.
	if a := rep.Accounting; a.InFlight != 0 || a.Delivered != a.Injected-1 || a.Dropped != 1 || a.Reasons["host-without-software"] != 1 {
		t.Errorf("accounting after a client died mid-read: %+v", rep.Accounting)
	}
}

// findONICRaw is findONIC over a raw connection.
func findONICRaw(t *testing.T, r raw) (tlp.ID, uint64, uint64) {
	t.Helper()
	seq := uint64(100)
	cfg := func(id tlp.ID, reg int) uint32 {
		seq++
		rep := r.req(Request{Seq: seq, Op: OpConfigRd, BDF: uint16(id), Reg: uint16(reg), Size: 4})
		if rep.Err != "" {
			t.Fatal(rep.Err)
		}
		return rep.Value
	}
	for bus := range 256 {
		for dev := range 32 {
			id := tlp.NewID(uint8(bus), uint8(dev), 0)
			if cfg(id, 0) == uint32(pcie.ONICDeviceID)<<16|uint32(pcie.ONICVendorID) {
				bar := func(i int) uint64 { return uint64(cfg(id, 0x14+4*i))<<32 | uint64(cfg(id, 0x10+4*i)&^0xF) }
				return id, bar(0), bar(2)
			}
		}
	}
	t.Fatal("no O-NIC")
	return 0, 0, 0
}

func marshal(q Request) []byte {
	b, err := q.MarshalMsg(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// TestFreeRunning: simulated time passes on its own; waits end on time.
func TestFreeRunning(t *testing.T) {
	socket, _ := serve(t, Options{Mode: FreeRunning, Rate: 0.01})
	a := dial(t, socket, "A", 4096)
	defer a.Close()
	if a.Mode != FreeRunning {
		t.Fatalf("mode %q", a.Mode)
	}
	t0, err := a.Now()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	t1, _ := a.Now()
	if t1-t0 < 100*time.Microsecond { // 50 ms of wall at 0.01
		t.Errorf("free-running: %v then %v", t0, t1)
	}
	irqs, _, err := a.WaitIRQ(50 * time.Microsecond)
	t2, _ := a.Now()
	if err != nil || len(irqs) != 0 || t2-t1 < 50*time.Microsecond {
		t.Errorf("wait_irq timing out: %v %v, at %v after %v", irqs, err, t2, t1)
	}
}

// TestLockStepStall: in lock-step, host A's client waits on simulated time
// while host B's, connected, sends nothing (a program whose two host
// threads block each other): after StallTimeout the wait ends with an
// error that names host B and the cause, instead of hanging; once B is
// waiting too, time passes again.
func TestLockStepStall(t *testing.T) {
	socket, stop, srv := serveConfig(t, scenario.HostInterface(), Options{StallTimeout: 200 * time.Millisecond})
	a, err := Dial(socket, ClientOptions{Host: "A"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Dial(socket, ClientOptions{Host: "B"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	start := time.Now()
	_, err = a.Advance(time.Microsecond)
	if err == nil || !strings.Contains(err.Error(), "lock-step stall: host B's client has sent nothing") {
		t.Fatalf("A's advance while B holds time: %v", err)
	}
	if el := time.Since(start); el < 200*time.Millisecond || el > 5*time.Second {
		t.Errorf("the stall was told after %v, want about 200ms", el)
	}
	// Both waiting: time passes.
	done := make(chan error, 1)
	go func() { _, err := b.Advance(time.Microsecond); done <- err }()
	if _, err := a.Advance(time.Microsecond); err != nil {
		t.Errorf("A's advance with B waiting: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("B's advance: %v", err)
	}
	stop()
	if st := srv.Stats(); st.Stalls != 1 {
		t.Errorf("stats: %+v, want 1 stall", st)
	}
}

// TestBAR: Client.BAR finds the O-NIC's 64-bit BARs where enumeration put
// them, and refuses an upper half, a BAR past 5 and an absent function.
func TestBAR(t *testing.T) {
	socket, stop := serve(t, Options{})
	defer stop()
	c := dial(t, socket, "A", 1<<20)
	defer c.Close()
	id, bar0, bar2 := findONIC(t, c)
	for _, n := range []int{0, 2, 4} {
		lo, _, _ := c.ConfigRead(0, id, 0x10+4*n, 4)
		hi, _, _ := c.ConfigRead(0, id, 0x14+4*n, 4)
		want := uint64(hi)<<32 | uint64(lo&^0xF)
		if got, err := c.BAR(0, id, n); err != nil || got != want || want == 0 {
			t.Errorf("BAR %d: %#x %v, the registers say %#x", n, got, err, want)
		}
	}
	if bar0 == bar2 {
		t.Errorf("BAR 0 and BAR 2 both at %#x", bar0)
	}
	for _, c2 := range []struct {
		id   tlp.ID
		n    int
		want string
	}{{id, 1, "upper half of 64-bit BAR 0"}, {id, 6, "BARs 0 to 5"}, {tlp.NewID(0x42, 0, 0), 0, "no such function"}} {
		if _, err := c.BAR(0, c2.id, c2.n); err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("BAR %d of %s: %v, want %q", c2.n, c2.id, err, c2.want)
		}
	}
}
