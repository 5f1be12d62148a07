package ipnet

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/testbenches/tools"
)

// startNet runs cfg's hosts as namespaces for a test, with real tools
// in them; it needs root (as CI runs) and iproute2.
func startNet(t *testing.T, cfg scenario.Config, opt Options) *Net {
	t.Helper()
	tools.Long(t)
	for _, c := range []string{"ip", "ping", "iperf3", "nc"} {
		tools.Require(t, c)
	}
	if os.Geteuid() != 0 {
		if tools.InCI() {
			t.Fatal("emu net's tests need root (network namespaces and TAP devices); CI runs as root")
		}
		t.Skip("needs root: network namespaces and TAP devices")
	}
	cl, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Prefix == "" {
		opt.Prefix = fmt.Sprintf("onict%d-", os.Getpid())
	}
	n, err := Start(cl, cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := n.Close(); err != nil {
			t.Error(err)
		}
		for _, ep := range n.Endpoints() {
			if namespaceExists(ep.Namespace) {
				t.Errorf("namespace %s is left behind", ep.Namespace)
			}
		}
	})
	return n
}

// in runs a command in host i's namespace and returns its output.
func in(t *testing.T, n *Net, i int, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"netns", "exec", n.Endpoints()[i].Namespace}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func addr(ep Endpoint) string { a, _, _ := strings.Cut(ep.IPv4, "/"); return a }

// TestApplicationsAcrossONICs: the two-party cluster's hosts as network
// namespaces, joined only by the emulated fabric: 200 pings each way over
// IPv4 and IPv6 with no loss, iperf3 TCP for 5 s (every byte it counts
// carried in the driver's frames), and a 100 MB file through nc with the
// same SHA-256 at both ends.
func TestApplicationsAcrossONICs(t *testing.T) {
	cfg := scenario.TwoParty()
	cfg.Flows = nil
	n := startNet(t, cfg, Options{})
	a, b := n.Endpoints()[0], n.Endpoints()[1]

	out := in(t, n, 0, "ping", "-c", "200", "-i", "0.005", "-q", addr(b))
	if !strings.Contains(out, " 0% packet loss") {
		t.Fatalf("ping A -> B:\n%s", out)
	}
	rtt := regexp.MustCompile(`= ([0-9.]+)/([0-9.]+)/`).FindStringSubmatch(out)
	v6, _, _ := strings.Cut(a.IPv6, "/")
	if out6 := in(t, n, 1, "ping", "-6", "-c", "50", "-i", "0.005", "-q", v6); !strings.Contains(out6, " 0% packet loss") {
		t.Fatalf("ping B -> A over IPv6:\n%s", out6)
	}
	t.Logf("ping A -> B: 200 packets, no loss, rtt min/avg %s/%s ms", rtt[1], rtt[2])

	srv := exec.Command("ip", "netns", "exec", b.Namespace, "iperf3", "-s", "-1", "-J")
	var srvOut bytes.Buffer
	srv.Stdout = &srvOut
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	before := n.Driver().Hosts[0].Stats.SentBytes
	cli := in(t, n, 0, "iperf3", "-c", addr(b), "-t", "5", "-J")
	srv.Wait()
	var res struct {
		End struct {
			SumReceived struct {
				Bytes         float64 `json:"bytes"`
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(cli), &res); err != nil {
		t.Fatalf("iperf3's JSON: %v\n%s", err, cli)
	}
	got := res.End.SumReceived.Bytes
	carried := float64(n.Driver().Hosts[0].Stats.SentBytes - before)
	if got <= 0 || carried < got || carried > 1.2*got {
		t.Errorf("iperf3 received %.0f bytes; A's driver carried %.0f bytes of frames", got, carried)
	}
	t.Logf("iperf3 TCP A -> B: %.0f MB in 5 s, %.2f Gb/s (driver frames %.0f MB)", got/1e6, res.End.SumReceived.BitsPerSecond/1e9, carried/1e6)

	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	data := make([]byte, 100e6)
	rand.Read(data)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	recv := exec.Command("ip", "netns", "exec", b.Namespace, "sh", "-c", "nc -l 5001 > "+filepath.Join(dir, "out"))
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	in(t, n, 0, "sh", "-c", "nc -N "+addr(b)+" 5001 < "+file)
	if err := recv.Wait(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	outData, err := os.ReadFile(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(outData) != sha256.Sum256(data) {
		t.Fatalf("nc: %d bytes arrived, SHA-256 differs", len(outData))
	}
	t.Logf("nc: 100 MB, same SHA-256, in %v", took.Round(time.Millisecond))
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	acc := r.Cluster.Accounting
	if acc.Dropped != 0 || acc.Denied != 0 {
		t.Errorf("accounting %+v", acc)
	}
	t.Logf("lag at most %.3f ms; %s", r.MaxLagMs, strconv.Quote(fmt.Sprint(acc)))
}
