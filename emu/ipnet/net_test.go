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
	"sync"
	"syscall"
	"testing"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/testbenches/tools"
)

// startNet runs cfg's hosts as namespaces for a test, with real tools
// in them; it needs root (as CI runs) and iproute2. The network stops at
// the test's end.
func startNet(t *testing.T, cfg scenario.Config, opt Options) *Net {
	t.Helper()
	tools.Long(t)
	n, stop := startNetTB(t, cfg, opt)
	t.Cleanup(stop)
	return n
}

// startNetTB starts the network and returns it with the function that
// stops it and checks that nothing is left behind (once).
func startNetTB(t testing.TB, cfg scenario.Config, opt Options) (*Net, func()) {
	t.Helper()
	for _, c := range []string{"ip", "ping", "iperf3", "nc"} {
		tools.Require(t, c)
	}
	tools.RequireRoot(t, "emu net's tests (network namespaces, TAP devices)")
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
	var once sync.Once
	return n, func() {
		once.Do(func() {
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
	}
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
	// Beside it, what the emulator modelled: a frame's write from a host's
	// driver into the other's memory (the flows A.software and B.software
	// are the drivers' accesses); a ping crosses twice, plus the kernels'
	// and the loop's own time.
	pr, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	var oneWay float64
	for _, f := range pr.Cluster.Flows {
		if f.Name == "A.software" || f.Name == "B.software" {
			oneWay = max(oneWay, f.P50Ns)
		}
	}
	rttMin, _ := strconv.ParseFloat(rtt[1], 64)
	if oneWay <= 0 || rttMin*1e6 < 2*oneWay {
		t.Errorf("ping's shortest round trip %s ms is shorter than twice the modelled one-way write latency %.0f ns", rtt[1], oneWay)
	}
	t.Logf("ping A -> B: 200 packets, no loss, rtt min/avg %s/%s ms; the emulator's modelled one-way write latency p50 %.2f µs", rtt[1], rtt[2], oneWay/1e3)

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
			SumSent struct {
				Bytes float64 `json:"bytes"`
			} `json:"sum_sent"`
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
	// The report's connections: the biggest one into B is iperf3's data
	// stream. iperf3's receiver stops counting at the test's end, its
	// sender counts what it handed its socket, so what the emulator
	// delivered to B's interface lies between the two (the nc transfer
	// below holds the count exactly).
	rep, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	data := rep.Connections[0]
	if sent := res.End.SumSent.Bytes; data.Proto != "tcp" || !strings.HasSuffix(data.To, addr(b)+":5201") || float64(data.Bytes) < got || float64(data.Bytes) > sent {
		t.Errorf("the report's biggest connection %v; iperf3 received %.0f bytes to port 5201, sent %.0f", data, got, sent)
	}
	t.Logf("iperf3 TCP A -> B: %.0f MB in 5 s, %.2f Gb/s; the report: %v (driver frames %.0f MB)", got/1e6, res.End.SumReceived.BitsPerSecond/1e9, data, carried/1e6)

	dir := t.TempDir()
	file := filepath.Join(dir, "in")
	blob := make([]byte, 100e6)
	rand.Read(blob)
	if err := os.WriteFile(file, blob, 0o644); err != nil {
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
	if sha256.Sum256(outData) != sha256.Sum256(blob) {
		t.Fatalf("nc: %d bytes arrived, SHA-256 differs", len(outData))
	}
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	var ncConn Conn
	for _, c := range r.Connections {
		if c.Proto == "tcp" && c.To == addr(b)+":5001" {
			ncConn = c
		}
	}
	if ncConn.Bytes != uint64(len(blob)) {
		t.Errorf("the report's connection to port 5001 (nc) %v; nc sent %d bytes", ncConn, len(blob))
	}
	t.Logf("nc: 100 MB, same SHA-256, in %v; the report: %v", took.Round(time.Millisecond), ncConn)
	acc := r.Cluster.Accounting
	if acc.Dropped != 0 || acc.Denied != 0 {
		t.Errorf("accounting %+v", acc)
	}
	t.Logf("lag at most %.3f ms; %s", r.MaxLagMs, strconv.Quote(fmt.Sprint(acc)))
}

// outageAt1s is the two-party cluster whose MEMS switch takes the
// circuit between A and B away 1 s into the run and gives it back 1 ms
// later: dark for that millisecond and the switch's reconfiguration and
// bring-up time (10 ms + 1 ms).
func outageAt1s() (scenario.Config, time.Duration) {
	cfg := scenario.TwoParty()
	cfg.Flows = nil
	ab := cfg.Circuits
	cfg.Phases = []scenario.PhaseConfig{{At: time.Second}, {At: time.Second + time.Millisecond, Circuits: ab}}
	return cfg, time.Millisecond + scenario.DefaultReconfig + scenario.DefaultBringUp
}

// TestReconfigurationStall: pings sent every millisecond through a
// circuit that goes dark are held by the O-NIC while its port is down
// (down_policy hold): every one comes back, and the longest round trip
// is the outage, within 10%. The pings are real and timed by the wall
// clock, so the bound allows what this machine adds away from the outage
// too: how far simulated time fell behind (either way: behind, it then
// catches up faster than the wall clock), and the run's own worst
// round trip well clear of the outage. Scheduling hiccups on this shared
// machine (round trips of 5 to 10 ms away from the outage, and a ping
// sent a few ms late around it) still put one run in three or four
// outside that, so the measurement has three tries; every try must bring
// every ping back across exactly one reconfiguration, and one must time
// the outage.
func TestReconfigurationStall(t *testing.T) {
	var misses []string
	for try := range 3 {
		miss := stallOnce(t)
		if miss == "" {
			return
		}
		t.Logf("try %d: %s", try+1, miss)
		misses = append(misses, miss)
	}
	t.Errorf("three tries timed the outage wrong: %s", strings.Join(misses, "; "))
}

// stallOnce runs TestReconfigurationStall's pings once on a network of
// its own, failing the test for what must hold every time, and returns
// why the longest round trip missed the outage ("" when it did not).
func stallOnce(t *testing.T) string {
	cfg, outage := outageAt1s()
	n, stop := startNetTB(t, cfg, Options{})
	defer stop()
	out := in(t, n, 0, "ping", "-c", "2000", "-i", "0.001", addr(n.Endpoints()[1]))
	m := regexp.MustCompile(`(\d+) received`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("ping:\n%s", out)
	}
	rtt := map[int]float64{} // by icmp_seq, in ms
	held, maxRTT := 0, 0.0
	for _, x := range regexp.MustCompile(`icmp_seq=(\d+) .*time=([0-9.]+) ms`).FindAllStringSubmatch(out, -1) {
		seq, _ := strconv.Atoi(x[1])
		v, _ := strconv.ParseFloat(x[2], 64)
		rtt[seq] = v
		if seq >= 50 && v > maxRTT { // (past start-up: the outage is at 1 s)
			held, maxRTT = seq, v
		}
	}
	noise := 0.0 // the worst round trip away from the outage (and start-up)
	for seq, v := range rtt {
		if seq >= 50 && (seq < held-5 || seq > held+int(outage/time.Millisecond)+5) {
			noise = max(noise, v)
		}
	}
	t.Logf("ping through the reconfiguration: %s of 2000 back, max %.2f ms (icmp_seq %d), %.2f ms at most away from it; the outage %v", m[1], maxRTT, held, noise, outage)
	if m[1] != "2000" {
		t.Errorf("%s of 2000 pings came back", m[1])
	}
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster.Reconfigurations != 1 {
		t.Errorf("%d reconfigurations, want 1", r.Cluster.Reconfigurations)
	}
	// Simulated time follows the wall clock only as closely as the
	// machine lets it: a run that fell behind says by how much. Behind,
	// it catches up faster than the wall clock, so the outage's simulated
	// 12 ms may take up to that lag less wall time too.
	lag := time.Duration(r.MaxLagMs * float64(time.Millisecond))
	slack := lag + time.Duration(noise*float64(time.Millisecond))
	if got := time.Duration(maxRTT * float64(time.Millisecond)); got < outage*9/10-lag || got > outage*11/10+slack {
		return fmt.Sprintf("longest round trip %v, want the outage %v within 10%% (simulated time fell behind by up to %v; %.2f ms the worst round trip away from the outage)", got, outage, lag, noise)
	}
	return ""
}

// TestTCPAcrossReconfiguration: a 100 MB TCP stream through nc, started
// at once, crosses the outage at 1 s: it stalls and resumes, its bytes
// unchanged. A frame the outage cut — its data on the link when it went
// dark (lost, link-down) or dropped by the O-NIC's full hold buffer
// (hold-buffer-full, which keeps a small TLP after dropping a big one,
// as the card does), its header kept — is caught by its CRC and dropped,
// never handed to the interface: such frames are few (at most a ring's
// worth) and only where TLPs were lost.
func TestTCPAcrossReconfiguration(t *testing.T) {
	cfg, outage := outageAt1s()
	dir := t.TempDir()
	data := make([]byte, 100e6)
	rand.Read(data)
	if err := os.WriteFile(filepath.Join(dir, "in"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	n := startNet(t, cfg, Options{})
	recv := exec.Command("ip", "netns", "exec", n.Endpoints()[1].Namespace, "sh", "-c", "nc -l 5002 > "+filepath.Join(dir, "out"))
	if err := recv.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	from := time.Since(n.start)
	in(t, n, 0, "sh", "-c", "nc -N "+addr(n.Endpoints()[1])+" 5002 < "+filepath.Join(dir, "in"))
	if err := recv.Wait(); err != nil {
		t.Fatal(err)
	}
	to := time.Since(n.start)
	if got, err := os.ReadFile(filepath.Join(dir, "out")); err != nil || sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("nc across the reconfiguration: %d bytes arrived, not the same SHA-256 (%v)", len(got), err)
	}
	t.Logf("100 MB through nc from %v to %v of the run, across the outage at 1 s: same SHA-256", from.Round(time.Millisecond), to.Round(time.Millisecond))
	if from > time.Second || to < time.Second+outage {
		t.Errorf("the stream ran from %v to %v, not across the outage at 1 s", from, to)
	}
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	why := r.Cluster.Accounting.Reasons
	for _, h := range r.Hosts {
		if h.Corrupt > Slots || h.Corrupt > 0 && why["link-down"]+why["hold-buffer-full"] == 0 {
			t.Errorf("host %s: %d frames arrived cut, with no TLP lost: %v", h.Name, h.Corrupt, why)
		}
	}
	t.Logf("A's driver: %+v; B's: %+v; TLPs lost in the outage: %v", r.Hosts[0].Stats, r.Hosts[1].Stats, why)
}

// TestThreeHosts: on the ip-over-pcie cluster, host A reaches B through
// its O-NIC's port A and C through port B, by ARP and IP like any
// network, with addresses from the scenario, taking MSI-X doorbells; B
// and C, with no circuit between them, do not reach each other.
func TestThreeHosts(t *testing.T) {
	cfg := scenario.IPOverPCIe()
	cfg.Hosts[2].IPv4, cfg.Hosts[2].IPv6 = "10.77.0.33/24", "fd00:77::33/64"
	n := startNet(t, cfg, Options{})
	eps := n.Endpoints()
	if fmt.Sprint(eps[0].Peers) != "[B C]" || fmt.Sprint(eps[1].Peers) != "[A]" || fmt.Sprint(eps[2].Peers) != "[A]" {
		t.Fatalf("peers: A %v, B %v, C %v", eps[0].Peers, eps[1].Peers, eps[2].Peers)
	}
	if eps[2].IPv4 != "10.77.0.33/24" || eps[2].IPv6 != "fd00:77::33/64" || eps[1].IPv4 != "10.77.0.2/24" {
		t.Fatalf("addresses %+v: want the scenario's", eps)
	}
	for _, ep := range eps {
		if ep.Doorbells != "msi-x" {
			t.Fatalf("host %s: doorbells %q, want msi-x", ep.Host, ep.Doorbells)
		}
	}
	for _, to := range []int{1, 2} {
		if out := in(t, n, 0, "ping", "-c", "20", "-i", "0.01", "-q", addr(eps[to])); !strings.Contains(out, " 0% packet loss") {
			t.Fatalf("ping A -> %s:\n%s", eps[to].Host, out)
		}
		if out := in(t, n, 0, "ping", "-6", "-c", "5", "-i", "0.01", "-q", strings.Split(eps[to].IPv6, "/")[0]); !strings.Contains(out, " 0% packet loss") {
			t.Fatalf("ping -6 A -> %s:\n%s", eps[to].Host, out)
		}
	}
	out, err := exec.Command("ip", "netns", "exec", eps[1].Namespace, "ping", "-c", "2", "-W", "0.2", "-q", addr(eps[2])).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "100% packet loss") {
		t.Fatalf("ping B -> C, which no circuit joins: %v\n%s", err, out)
	}
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster.ONICs[0].PortTLPs[0] == 0 || r.Cluster.ONICs[0].PortTLPs[1] == 0 {
		t.Errorf("onicA's ports sent %v TLPs: both should carry frames", r.Cluster.ONICs[0].PortTLPs)
	}
	a := r.Hosts[0]
	if a.Multicast == 0 || a.Interrupts == 0 || r.Hosts[1].Interrupts == 0 || r.Hosts[2].Interrupts == 0 {
		t.Errorf("A's driver %+v, B's interrupts %d, C's %d: want ARP and neighbour discovery through the multicast window, doorbells taken everywhere",
			a.Stats, r.Hosts[1].Interrupts, r.Hosts[2].Interrupts)
	}
	for i, h := range r.Hosts {
		if h.Interrupts != r.Cluster.Hosts[i].Interrupts {
			t.Errorf("host %s: %d MSIs raised, %d taken by the driver", h.Name, r.Cluster.Hosts[i].Interrupts, h.Interrupts)
		}
	}
}

// TestAddressesRepeat: a scenario address equal to another host's
// default address is refused before anything is made.
func TestAddressesRepeat(t *testing.T) {
	hosts := []scenario.HostConfig{{Name: "A"}, {Name: "B", IPv4: "10.77.0.1/24"}}
	err := checkAddresses(hosts)
	if err == nil || !strings.Contains(err.Error(), "10.77.0.1 is host A's already") {
		t.Fatalf("got %v", err)
	}
	hosts[1].IPv4 = "10.77.0.9/24"
	if err := checkAddresses(hosts); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkTCP runs iperf3 TCP from A to B for 5 s across the
// ip-over-pcie cluster's emulated O-NICs (emu net's default, doorbells) at MTU 1500 and at the largest MTU the
// driver's slots carry, and reports the goodput (Gb/s) and the CPU time
// onic used per wall second (its share of the machine: the emulator, the
// driver and the interfaces' I/O).
func BenchmarkTCP(b *testing.B) {
	for _, mtu := range []int{1500, MaxMTU} {
		b.Run(fmt.Sprintf("mtu-%d", mtu), func(b *testing.B) {
			cfg := scenario.IPOverPCIe()
			for range b.N {
				n, stop := startNetTB(b, cfg, Options{MTU: mtu})
				eps := n.Endpoints()
				srv := exec.Command("ip", "netns", "exec", eps[1].Namespace, "iperf3", "-s", "-1")
				if err := srv.Start(); err != nil {
					b.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond)
				var before, after syscall.Rusage
				syscall.Getrusage(syscall.RUSAGE_SELF, &before)
				out, err := exec.Command("ip", "netns", "exec", eps[0].Namespace, "iperf3", "-c", addr(eps[1]), "-t", "5", "-J").Output()
				syscall.Getrusage(syscall.RUSAGE_SELF, &after)
				srv.Wait()
				if err != nil {
					b.Fatalf("iperf3: %v\n%s", err, out)
				}
				var res struct {
					End struct {
						SumReceived struct {
							BitsPerSecond float64 `json:"bits_per_second"`
						} `json:"sum_received"`
					} `json:"end"`
				}
				if err := json.Unmarshal(out, &res); err != nil {
					b.Fatal(err)
				}
				cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
				b.ReportMetric(res.End.SumReceived.BitsPerSecond/1e9, "Gb/s")
				b.ReportMetric(cpu.Seconds()/5, "onic-cpu-s/s")
				stop()
			}
		})
	}
}

// TestDarkCircuitFail: with down_policy fail, what comes for the dark
// port is dropped, as on a broken path: the pings sent during the outage
// are lost (at most one per millisecond of it), the ones after it come back,
// and nothing arrives corrupted.
func TestDarkCircuitFail(t *testing.T) {
	cfg, outage := outageAt1s()
	for i := range cfg.ONICs {
		cfg.ONICs[i].DownPolicy = "fail"
	}
	n := startNet(t, cfg, Options{})
	out, _ := exec.Command("ip", "netns", "exec", n.Endpoints()[0].Namespace, "ping", "-c", "2000", "-i", "0.001", "-q", addr(n.Endpoints()[1])).CombinedOutput()
	m := regexp.MustCompile(`(\d+) received`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("ping:\n%s", out)
	}
	got, _ := strconv.Atoi(m[1])
	lost := 2000 - got
	t.Logf("ping through a dark circuit under fail: %d of 2000 lost (the outage %v)", lost, outage)
	if lost < 1 || lost > 60 {
		t.Errorf("%d pings lost, want some, at most about %d (one per millisecond of the outage)", lost, outage/time.Millisecond)
	}
	r, err := n.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster.Accounting.Reasons["port-down"] == 0 {
		t.Errorf("no TLP accounted port-down: %v", r.Cluster.Accounting.Reasons)
	}
	for _, h := range r.Hosts {
		if h.Corrupt != 0 {
			t.Errorf("host %s: %d frames arrived corrupted", h.Name, h.Corrupt)
		}
	}
}
