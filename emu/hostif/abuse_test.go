package hostif

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"onic/emu/scenario"
	"onic/firmware"
	"onic/pcie"
	"onic/tlp"
)

// The bounded-memory test's sizes: a tenth of the documented soak in
// make test, the full numbers under make soak.
var (
	soakCycles   = flag.Int("cycles", 10_000, "connect/hello/bye cycles in TestBoundedMemory")
	soakAccesses = flag.Int("accesses", 100_000, "register writes in TestBoundedMemory")
)

// healthy checks that a well-behaved client is served: it says hello as
// host, reads its O-NIC's vendor and device IDs and the time, and leaves.
func healthy(t *testing.T, socket, host string) {
	t.Helper()
	c, err := Dial(socket, ClientOptions{Host: host, MemBytes: 4096, MemBase: 1 << 32})
	if err != nil {
		t.Fatalf("a well-behaved client after the abuse: %v", err)
	}
	v, _, err := c.ConfigRead(0, tlp.NewID(1, 0, 0), 0, 4)
	if err != nil || v != uint32(pcie.ONICDeviceID)<<16|uint32(pcie.ONICVendorID) {
		t.Fatalf("a well-behaved client after the abuse: config read %#x %v", v, err)
	}
	if _, err := c.Now(); err != nil {
		t.Fatalf("a well-behaved client after the abuse: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestMemTruncated: a client that shrinks its shared DMA memory after
// hello does not bring the server down: the device write that faults
// ends that client's session with an error, and the others go on.
func TestMemTruncated(t *testing.T) {
	socket, stop := serve(t, Options{})
	a := dial(t, socket, "A", 1<<20)
	b := dial(t, socket, "B", 1<<20)
	findONIC(t, a)
	_, _, winB := findONIC(t, b)
	// A shrinks its file (its own mapping is now unusable too).
	if err := os.Truncate(a.memPath, 0); err != nil {
		t.Fatal(err)
	}
	errA := make(chan error, 1)
	go func() {
		_, err := a.Advance(50 * time.Microsecond)
		errA <- err
	}()
	// B writes through its window into A's memory, then lets time pass.
	if err := b.Write(winB+0x40, []byte("into a shrunken file")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Advance(10 * time.Microsecond); err != nil {
		t.Fatalf("B after A's memory faulted: %v", err)
	}
	if err := <-errA; err == nil || !strings.Contains(err.Error(), "DMA memory faulted") {
		t.Errorf("A's advance: %v, want its session ended by the fault", err)
	}
	a.conn.Close()
	a.unshare()
	if _, err := b.Advance(10 * time.Microsecond); err != nil {
		t.Fatal(err)
	}
	b.Close()
	healthy(t, socket, "A") // A is free again
	rep := stop()
	if rep.Accounting.InFlight != 0 {
		t.Errorf("accounting: %+v", rep.Accounting)
	}
}

// TestHugeDeadline: a wait past the end of simulated time is refused
// with an error reply; it neither wedges the loop nor stops the server
// from stopping.
func TestHugeDeadline(t *testing.T) {
	socket, stop := serve(t, Options{})
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := raw{t, conn}
	if rep := r.req(Request{Seq: 1, Op: OpHello, Version: Version, Host: "A"}); rep.Err != "" {
		t.Fatal(rep.Err)
	}
	for i, ns := range []uint64{1e16, 1 << 63, 1<<64 - 1} {
		for _, op := range []string{OpAdvance, OpWaitIRQ} {
			rep := r.req(Request{Seq: uint64(2 + i), Op: op, Ns: ns})
			if !strings.Contains(rep.Err, "past the end of simulated time") {
				t.Errorf("%s ns=%d: %+v, want it refused", op, ns, rep)
			}
		}
	}
	// The longest wait that fits is served (nothing is scheduled, so the
	// clock jumps there at once).
	left := uint64(scenario.MaxTime)
	if rep := r.req(Request{Seq: 10, Op: OpAdvance, Ns: left}); rep.Err != "" || rep.Now != left {
		t.Errorf("advance to the end of time: %+v", rep)
	}
	if rep := r.req(Request{Seq: 11, Op: OpAdvance, Ns: 1}); !strings.Contains(rep.Err, "past the end") {
		t.Errorf("advance past the end of time: %+v", rep)
	}
	conn.Close()
	healthy(t, socket, "B")
	stop() // within 1 s, or stop fails the test
}

// TestStopWhileBusy: SIGTERM (here, the context) stops a lock-step server
// within 1 s even while its clients wait on a long run with traffic.
func TestStopWhileBusy(t *testing.T) {
	socket, stop, _ := serveConfig(t, scenario.TwoParty(), Options{})
	c, err := Dial(socket, ClientOptions{Host: "A"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.conn.Close()
	go c.Advance(time.Second) // about a minute of wall time
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	stop()
	if d := time.Since(start); d > time.Second {
		t.Errorf("stopping took %v", d)
	}
}

// TestLoadPaths: load reads only regular files no bigger than MaxImage,
// without blocking the loop on a FIFO or a device; mem_path likewise.
func TestLoadPaths(t *testing.T) {
	socket, stop := serve(t, Options{Trust: &firmware.Trust{}, MaxImage: 1024})
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.img")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	a := dial(t, socket, "A", 4096)
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file (a FIFO)"},
		{"/dev/zero", "not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
		{big, "2048 bytes, more than the 1 KiB allowed"},
	} {
		done := make(chan error, 1)
		go func() { _, err := a.Load("", tc.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("load %s: %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("load %s: no answer", tc.path)
		}
	}
	a.Close()
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
	} {
		conn, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		rep := raw{t, conn}.req(Request{Seq: 1, Op: OpHello, Version: Version, Host: "B", MemPath: tc.path})
		if !strings.Contains(rep.Err, tc.want) {
			t.Errorf("hello with mem_path %s: %+v, want %q", tc.path, rep, tc.want)
		}
		conn.Close()
	}
	healthy(t, socket, "B")
	stop()
}

// TestBounds: replies never echo unbounded input or pass the frame
// limit; connections past MaxClients are told so; half-sent frames count
// against MaxInFlight and time out after FrameTimeout.
func TestBounds(t *testing.T) {
	socket, stop := serve(t, Options{MaxClients: 3, MaxInFlight: 1 << 20, FrameTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	r := raw{t, conn}
	long := strings.Repeat("x", 300<<10)
	for _, q := range []Request{
		{Seq: 1, Op: long},
		{Seq: 2, Op: OpHello, Version: Version, Host: long},
		{Seq: 3, Op: OpHello, Version: Version, Host: "A", MemPath: long},
	} {
		rep := r.req(q)
		b, _ := rep.MarshalMsg(nil)
		if rep.Err == "" || rep.Seq != q.Seq || len(b) > 1024 {
			t.Errorf("request %d: a %d-byte reply %.200q", q.Seq, len(b), rep.Err)
		}
	}
	// The connection is still in step: a good request gets its reply.
	if rep := r.req(Request{Seq: 4, Op: OpHello, Version: Version, Host: "A"}); rep.Err != "" || rep.Seq != 4 {
		t.Fatalf("hello after the long requests: %+v", rep)
	}

	// Two clients each send most of a 600 KB frame: the second passes the
	// 1 MiB of frames in flight and is refused.
	half := func() (net.Conn, error) {
		c, err := net.Dial("unix", socket)
		if err != nil {
			return nil, err
		}
		_, err = c.Write(append(binary.BigEndian.AppendUint32(nil, 600<<10), make([]byte, 100<<10)...))
		return c, err
	}
	h1, err := half()
	if err != nil {
		t.Fatal(err)
	}
	defer h1.Close()
	time.Sleep(50 * time.Millisecond) // h1's length is in before h2's
	// The server may refuse h2 and close it before all of its bytes are
	// written (a broken pipe here, under load): its reply is still there
	// to read.
	h2, err := half()
	if h2 == nil || err != nil && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatal(err)
	}
	defer h2.Close()
	if rep, err := ReadReply(h2); err != nil || !strings.Contains(rep.Err, "bytes of frames at most") {
		t.Errorf("second half-sent frame: %+v %v", rep, err)
	}
	// h1 never finishes its frame: dropped after FrameTimeout.
	h1.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rep, err := ReadReply(h1); err != nil || !strings.Contains(rep.Err, "not all there after") {
		t.Errorf("stalled frame: %+v %v", rep, err)
	}

	// Both are closed by the server once released (not merely answered):
	// only then do they leave the count of connections held.
	for _, h := range []net.Conn{h1, h2} {
		h.SetReadDeadline(time.Now().Add(5 * time.Second))
		// (reset, not a clean end, when their unread bytes were dropped)
		if n, err := io.Copy(io.Discard, h); err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("refused connection not closed by the server: %v (%d more bytes)", err, n)
		}
	}

	// MaxClients 3: conn and two more are served, a fourth is refused.
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	time.Sleep(50 * time.Millisecond)
	over, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	if rep, err := ReadReply(over); err != nil || !strings.Contains(rep.Err, "server full") {
		t.Errorf("connection over the cap: %+v %v", rep, err)
	}
	over.Close()
	for _, c := range held {
		c.Close()
	}
	conn.Close()
	time.Sleep(50 * time.Millisecond)
	healthy(t, socket, "B")
	stop()
}

// heapMiB is the live heap after a collection, in MiB.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestBoundedMemory: what a client leaves behind is freed when it goes,
// and register accesses keep no per-access state: the server's heap
// stays flat across -cycles connections and -accesses writes.
// docs/hostif.md states the bound (RSS under 64 MiB at 100 k cycles and
// 1 M accesses, make soak). make check's quick loop (-short) runs a
// fifth of each.
func TestBoundedMemory(t *testing.T) {
	cycles, accesses := *soakCycles, *soakAccesses
	if testing.Short() {
		cycles, accesses = max(cycles/5, 400), max(accesses/5, 2000)
	}
	socket, stop, srv := serveConfig(t, scenario.HostInterface(), Options{})
	cycle := func(n int) {
		for range n {
			c, err := Dial(socket, ClientOptions{Host: "A"})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cycle(200) // warm up
	before := heapMiB()
	t0 := time.Now()
	cycle(cycles / 2)
	first := time.Since(t0)
	t0 = time.Now()
	cycle(cycles - cycles/2)
	second := time.Since(t0)
	after := heapMiB()
	if after-before > 4 {
		t.Errorf("%d connection cycles grew the heap from %.1f to %.1f MiB", cycles, before, after)
	}
	if second > 2*first+time.Second {
		t.Errorf("connection cycles slow down: %v for the first half, %v for the second", first, second)
	}

	c := dial(t, socket, "A", 4096)
	_, bar0, _ := findONIC(t, c)
	write := func(n int) {
		var b [4]byte
		for i := range n {
			binary.LittleEndian.PutUint32(b[:], uint32(i))
			if err := c.Write(bar0+0x100, b[:]); err != nil {
				t.Fatal(err)
			}
			if i%1000 == 999 { // let them drain
				if _, err := c.Advance(20 * time.Microsecond); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	write(2000)
	before = heapMiB()
	write(accesses)
	after = heapMiB()
	if after-before > 4 {
		t.Errorf("%d register writes grew the heap from %.1f to %.1f MiB", accesses, before, after)
	}
	c.Close()
	t.Logf("heap %.1f MiB after %d cycles and %d writes; RSS %d KiB", after, cycles, accesses, rssKiB())
	if kb := rssKiB(); kb > 64<<10 {
		t.Errorf("resident set %d KiB, over the documented 64 MiB", kb)
	}
	rep := stop()
	if n := len(srv.clients); n > 1 {
		t.Errorf("the server held %d clients at the end, after they left", n)
	}
	for _, f := range rep.Flows {
		if f.Name == "A.software" && f.Transfers < accesses {
			t.Errorf("A.software reports %d transfers, want at least %d", f.Transfers, accesses)
		}
	}
}

// rssKiB is the process's resident set in KiB, from /proc (0 if unknown).
func rssKiB() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmRSS:")); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(string(v), "kB")))
			return n
		}
	}
	return 0
}

// TestPostedCredits: posted writes hold credits as at a root port. A
// client that writes without ever letting time pass is held at
// MaxPosted requests in the emulator — in lock-step its held write lets
// time pass — so the server's memory stays bounded; and a client that
// pipelines writes without reading its replies is slowed by its socket,
// never dropped: every write is answered, in order.
func TestPostedCredits(t *testing.T) {
	socket, stop, srv := serveConfig(t, scenario.HostInterface(), Options{MaxPosted: 8})
	c := dial(t, socket, "A", 4096)
	_, bar0, _ := findONIC(t, c)
	t0, err := c.Now()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 400 {
		if err := c.Write32(bar0+0x100, uint32(i)); err != nil {
			t.Fatal(err)
		}
	}
	t1, err := c.Now()
	if err != nil {
		t.Fatal(err)
	}
	if t1 <= t0 {
		t.Errorf("400 writes with 8 credits and no advance: time stood at %v", t1)
	}
	c.Close() // (in lock-step, an idle client would hold time still)
	// Pipelined: 300 writes sent before any reply is read.
	raw, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	send := func(r Request) {
		b, err := r.MarshalMsg(make([]byte, 4))
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		if _, err := raw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() Reply {
		var hdr [4]byte
		if _, err := io.ReadFull(raw, hdr[:]); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(raw, b); err != nil {
			t.Fatal(err)
		}
		var r Reply
		if _, err := r.UnmarshalMsg(b); err != nil {
			t.Fatal(err)
		}
		return r
	}
	send(Request{Seq: 1, Op: OpHello, Version: Version, Host: "B"})
	if r := recv(); r.Err != "" {
		t.Fatal(r.Err)
	}
	const n = 300
	done := make(chan error, 1)
	go func() {
		for i := range n {
			send(Request{Seq: uint64(100 + i), Op: OpMMIOWrite, Addr: bar0 + 0x100, Data: []byte{1, 2, 3, 4}})
		}
		done <- nil
	}()
	for i := range n {
		if r := recv(); r.Err != "" || r.Seq != uint64(100+i) || r.Op != OpMMIOWrite {
			t.Fatalf("reply %d: seq %d op %q err %q", i, r.Seq, r.Op, r.Err)
		}
	}
	<-done
	stop()
	if srv.stats.Dropped != 0 {
		t.Errorf("%d clients dropped for a full reply queue", srv.stats.Dropped)
	}
}
