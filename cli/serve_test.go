package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"onic/emu/hostif"
	"onic/pcie"
	"onic/testbenches/tools"
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

// TestEmuServeRTL: onic emu serve --rtl onicA,onicB serves the
// host-interface cluster with both O-NICs as their generated cards: a
// client reads its O-NIC's ID register from the card, the report has the
// rtl line, and --vcd writes onicA's waveform for the window asked (its
// clock's edges inside it, none after). Bad --rtl and --vcd values get
// one-line errors.
func TestEmuServeRTL(t *testing.T) {
	dir := t.TempDir()
	socket, wave := filepath.Join(dir, "s"), filepath.Join(dir, "a.vcd")
	type result struct {
		code      int
		out, errs string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := onic(t, "", "emu", "serve", "--socket", socket, "--rtl", "onicA,onicB", "--vcd", "onicA:1us-2us", "--vcd-out", wave)
		done <- result{code, out, errs}
	}()
	var c *hostif.Client
	var err error
	for i := 0; ; i++ {
		if c, err = hostif.Dial(socket, hostif.ClientOptions{Host: "A"}); err == nil {
			break
		}
		if i == 1000 {
			t.Fatalf("no server on %s: %v", socket, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	ids, err := c.ONICs(0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("O-NICs: %v %v", ids, err)
	}
	regs, err := c.BAR(0, ids[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := c.Read32(regs); err != nil || id != 0x4F4E4943 {
		t.Errorf("ID register of the card: %#x %v", id, err)
	}
	if _, err := c.Advance(3 * time.Microsecond); err != nil { // past the waveform's window
		t.Fatal(err)
	}
	c.Close()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.code != 0 || !strings.Contains(r.out, "rtl: onicA, onicB as generated cards") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.out, r.errs)
	}
	vcd, err := os.ReadFile(wave)
	if err != nil {
		t.Fatal(err)
	}
	// 4 ns cycles: the window is cycles 250 to 500, each a rising edge.
	edges := regexp.MustCompile(`(?m)^#(\d+)\n1!$`).FindAllStringSubmatch(string(vcd), -1)
	if len(edges) < 200 || edges[0][1] < "1000" || !strings.Contains(string(vcd), "port_a_state") {
		t.Fatalf("the waveform: %d rising edges, the first at %v", len(edges), edges[:min(len(edges), 1)])
	}
	for _, e := range edges {
		if len(e[1]) > 4 || e[1] > "2004" && len(e[1]) == 4 {
			t.Fatalf("a rising edge at %s ns, after the window", e[1])
		}
	}
	if !strings.Contains(r.errs, "wrote "+wave+" (onicA's waveform: GTKWave)") {
		t.Errorf("the waveform was not announced: %s", r.errs)
	}
	// FST through GTKWave's vcd2fst, back to VCD by fst2vcd: the same
	// signals.
	if _, err := exec.LookPath("vcd2fst"); err == nil || tools.InCI() {
		fst := filepath.Join(dir, "a.fst")
		code, _, errs := onic(t, "", "emu", "run", "--rtl", "--duration", "2us", "--vcd", "onicA:1us-2us", "--vcd-out", fst)
		if code != 0 {
			t.Fatalf("emu run --vcd-out %s: exit %d, %s", fst, code, errs)
		}
		back, err := exec.Command(tools.Require(t, "fst2vcd"), fst).Output()
		if err != nil || !strings.Contains(string(back), "port_a_state") {
			t.Errorf("fst2vcd %s: %v, %d bytes", fst, err, len(back))
		}
		if _, err := os.Stat(fst + ".vcd.tmp"); err == nil {
			t.Error("the VCD the FST was made from is left")
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"emu", "serve", "--socket", socket, "--rtl", "onicC"}, "--rtl onicC: the scenario has no such O-NIC"},
		{[]string{"emu", "serve", "--socket", socket, "--vcd", "onicA"}, "--vcd: a waveform is of an RTL O-NIC: add --rtl"},
		{[]string{"emu", "serve", "--socket", socket, "--rtl", "--vcd", "onicC"}, `"onicC" is not one of the RTL O-NICs`},
		{[]string{"emu", "serve", "--socket", socket, "--rtl", "--vcd", "onicA:5-6us"}, `"5": want a duration with a unit`},
		{[]string{"emu", "serve", "--socket", socket, "--rtl", "--vcd", "onicA:6us-5us"}, "not after its start"},
	} {
		code, _, errs := onic(t, "", tc.args...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("onic %s: exit %d, %q; want one line with %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}
