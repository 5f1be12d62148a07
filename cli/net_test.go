package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"onic/testbenches/tools"
	"onic/tlp"
	"onic/tlp/pcap"
)

// TestEmuNet: onic emu net as a user runs it — the ready line as JSON
// naming each host's namespace and addresses, a ping across the
// emulated O-NICs from one namespace to the other, SIGTERM, then the
// report as JSON (the ping's frames counted) and no namespace left.
func TestEmuNet(t *testing.T) {
	tools.Long(t)
	tools.Require(t, "ip")
	tools.Require(t, "ping")
	tools.RequireRoot(t, "onic emu net (network namespaces, TAP devices)")
	prefix := fmt.Sprintf("onicc%d-", os.Getpid())
	pcapPath := filepath.Join(t.TempDir(), "net.pcapng")
	done := make(chan string, 1)
	go func() {
		_, out, errs := onic(t, "", "emu", "net", "--json", "--netns-prefix", prefix, "--pcap", pcapPath, "--tap", "onicB.port-a")
		done <- out + "\n" + errs
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat("/run/netns/" + prefix + "B"); err == nil {
			break
		}
		if i == 500 {
			t.Fatal("no namespace after 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var out []byte
	var err error
	for i := 0; i < 50; i++ { // (the namespace exists before its interface is up)
		if out, err = exec.Command("ip", "netns", "exec", prefix+"A", "ping", "-c", "3", "-i", "0.05", "-q", "10.77.0.2").CombinedOutput(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || !strings.Contains(string(out), " 0% packet loss") {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var res string
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not stop onic emu net")
	}
	dec := json.NewDecoder(strings.NewReader(res))
	var ready struct {
		Ready     bool
		Endpoints []struct{ Host, Namespace, IPv4, Doorbells string }
	}
	var rep struct {
		Hosts []struct {
			Name                       string
			SentFrames, ReceivedFrames uint64
		}
	}
	if err := dec.Decode(&ready); err != nil || !ready.Ready || len(ready.Endpoints) != 3 || ready.Endpoints[1].Namespace != prefix+"B" ||
		ready.Endpoints[1].IPv4 != "10.77.0.2/24" || ready.Endpoints[1].Doorbells != "msi-x" {
		t.Fatalf("ready line: %+v %v\n%s", ready, err, res)
	}
	if err := dec.Decode(&rep); err != nil || len(rep.Hosts) != 3 || rep.Hosts[0].SentFrames < 3 || rep.Hosts[1].ReceivedFrames < 3 {
		t.Fatalf("report: %+v %v\n%s", rep, err, res)
	}
	// The pings' frames at onicB's optical port: writes carrying their bytes.
	f, err := os.Open(pcapPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var x tlp.TLP
	writes := 0
	for {
		if _, err := r.Next(&x); err != nil {
			break
		}
		if x.Kind() == tlp.MWr && len(x.Data) > 0 {
			writes++
		}
	}
	if writes < 6 {
		t.Errorf("the capture at onicB.port-a has %d writes with data; the pings' frames should be there", writes)
	}
	for _, h := range []string{"A", "B"} {
		if _, err := os.Stat("/run/netns/" + prefix + h); err == nil {
			t.Errorf("namespace %s%s left behind", prefix, h)
		}
	}
}
