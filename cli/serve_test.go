package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"onic/emu/hostif"
	"onic/pcie"
	"onic/tlp"
)

// TestEmuServe: onic emu serve serves the host-interface cluster to a
// client, stops on SIGINT and reports what the client did.
func TestEmuServe(t *testing.T) {
	dir, err := os.MkdirTemp("", "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	socket := filepath.Join(dir, "s")
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := onic(t, "", "emu", "serve", "--socket", socket)
		done <- result{code, out, errs}
	}()
	var c *hostif.Client
	for i := 0; ; i++ {
		if c, err = hostif.Dial(socket, hostif.ClientOptions{Host: "A", MemBytes: 4096, MemBase: 1 << 32}); err == nil {
			break
		}
		if i == 500 {
			t.Fatalf("no server on %s: %v", socket, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A second server on the same path is refused (its probe is the
	// first server's second connection, counted if the first has
	// accepted it before it stops) and leaves the first's
	// socket alone.
	if code, _, errs := onic(t, "", "emu", "serve", "--socket", socket); code == 0 || !strings.Contains(errs, "a server is listening there already") {
		t.Errorf("a second server on %s: exit %d, %s", socket, code, errs)
	}
	v, _, err := c.ConfigRead(0, tlp.NewID(1, 0, 0), 0, 4)
	if err != nil || v != uint32(pcie.ONICDeviceID)<<16|uint32(pcie.ONICVendorID) {
		t.Errorf("config read of 01:00.0: %#x %v", v, err)
	}
	lo, _, _ := c.ConfigRead(0, tlp.NewID(1, 0, 0), 0x10, 4)
	hi, _, _ := c.ConfigRead(0, tlp.NewID(1, 0, 0), 0x14, 4)
	if id, err := c.Read32(uint64(hi)<<32 | uint64(lo&^0xF)); err != nil || id != 0x4F4E4943 {
		t.Errorf("ID register: %#x %v", id, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 || !regexp.MustCompile(`[12] connections`).MatchString(r.errs) || !strings.Contains(r.out, "A.software") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
	}
	if _, err := os.Stat(socket); err == nil {
		t.Error("the socket outlived the server")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"emu", "serve"}, "--socket: required"},
		{[]string{"emu", "serve", "--socket", socket, "--max-clients", "0"}, "--max-clients 0: want 1 to 4096"},
		{[]string{"emu", "serve", "--socket", socket, "--max-inflight", "5"}, "a size needs a unit"},
		{[]string{"emu", "serve", "--socket", socket, "--max-image", "1TiB"}, "--max-image"},
		{[]string{"emu", "serve", "--socket", socket, "--frame-timeout", "0s"}, "--frame-timeout 0s: want 1ms to 1h"},
		{[]string{"emu", "serve", "--socket", socket, "--mode", "fast"}, `mode "fast": want lockstep or free`},
		{[]string{"emu", "serve", "--socket", socket, "--rate", "NaN"}, "--rate NaN: must be 1e-9 to 1000"},
		{[]string{"emu", "serve", "--socket", socket, "--rate", "1e300"}, "--rate 1e+300: must be 1e-9 to 1000"},
		{[]string{"emu", "serve", "--socket", socket, "--scenario-file", filepath.Join(dir, "none.yaml")}, "none.yaml"},
	} {
		code, _, errs := onic(t, "", tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("onic %s: exit %d, %q; want one line with %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}

// TestEmuServeSIGTERM: SIGTERM stops a lock-step server within a second
// while its client waits on a long run of a busy cluster (the two-party
// scenario's traffic), and the report still comes out.
func TestEmuServeSIGTERM(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "s")
	done := make(chan string, 1)
	go func() {
		_, out, errs := onic(t, "", "emu", "serve", "--socket", socket, "--scenario-file", filepath.Join("..", "emu", "scenario", "scenarios", "two-party.yaml"))
		done <- out + errs
	}()
	var c *hostif.Client
	var err error
	for i := 0; ; i++ {
		if c, err = hostif.Dial(socket, hostif.ClientOptions{Host: "A"}); err == nil {
			break
		}
		if i == 500 {
			t.Fatalf("no server on %s: %v", socket, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	go c.Advance(time.Second) // a simulated second of traffic: minutes of wall time
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if d := time.Since(start); d > time.Second {
			t.Errorf("the server took %v to stop", d)
		}
		if !strings.Contains(out, "A->B") || !strings.Contains(out, "accounting:") {
			t.Errorf("no report after SIGTERM:\n%s", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not stop the server")
	}
}
