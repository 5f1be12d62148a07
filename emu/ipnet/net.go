package ipnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
)

// Options configure a network.
type Options struct {
	// Prefix names each host's network namespace: Prefix + host name
	// (default "onic-").
	Prefix string
	// Interface is the name of each host's interface in its namespace
	// (default "onic0").
	Interface string
	// MTU is the interfaces' IP MTU (default 1500; 68 to MaxMTU).
	MTU int
	// Rate is simulated seconds per wall second (default 1: the network
	// runs in real time, as applications expect).
	Rate float64
	// Live, if set, hears as it happens when simulated time falls
	// LiveLag or more behind the wall clock and when it catches up.
	Live io.Writer
}

func (o *Options) defaults() error {
	if o.Prefix == "" {
		o.Prefix = "onic-"
	}
	if o.Interface == "" {
		o.Interface = "onic0"
	}
	if o.MTU == 0 {
		o.MTU = 1500
	}
	if o.Rate == 0 {
		o.Rate = 1
	}
	switch {
	case o.MTU < 68 || o.MTU > MaxMTU:
		return fmt.Errorf("mtu %d: must be 68 to %d bytes (a ring slot carries %d)", o.MTU, MaxMTU, SlotBytes)
	case !(o.Rate >= 1e-3 && o.Rate <= 1):
		return fmt.Errorf("rate %g: must be 0.001 to 1 simulated seconds per wall second", o.Rate)
	case len(o.Interface) > 15:
		return fmt.Errorf("interface %q: longer than Linux's 15 characters", o.Interface)
	}
	return nil
}

// Endpoint is one host's interface: its namespace, name and addresses.
type Endpoint struct {
	Host      string   `json:"host"`
	Namespace string   `json:"namespace"`
	Interface string   `json:"interface"`
	MAC       string   `json:"mac"`
	IPv4      string   `json:"ipv4"` // with its prefix length
	IPv6      string   `json:"ipv6"`
	Peers     []string `json:"peers"`     // hosts its O-NICs' windows reach
	Doorbells string   `json:"doorbells"` // "msi-x", or "polled" when a peer has no doorbell window to it
}

// addresses are host h's addresses: the scenario's, or the documented
// defaults — host i (in scenario order) is 10.77.0.(i+1)/24 and
// fd00:77::(i+1)/64.
func addresses(i int, h scenario.HostConfig) (v4, v6 string) {
	v4, v6 = h.IPv4, h.IPv6
	if v4 == "" {
		v4 = fmt.Sprintf("10.77.0.%d/24", i+1)
	}
	if v6 == "" {
		v6 = fmt.Sprintf("fd00:77::%x/64", i+1)
	}
	return v4, v6
}

// checkAddresses refuses a scenario whose addresses (set or default)
// repeat: a default one can meet one the scenario sets.
func checkAddresses(hosts []scenario.HostConfig) error {
	seen := map[netip.Addr]string{}
	for i, h := range hosts {
		v4, v6 := addresses(i, h)
		for _, a := range []string{v4, v6} {
			pf, err := netip.ParsePrefix(a)
			if err != nil {
				return fmt.Errorf("hosts[%d]: %v", i, err)
			}
			if o, dup := seen[pf.Addr()]; dup {
				return fmt.Errorf("hosts[%d] (%s): address %s is host %s's already (set ipv4 and ipv6 for every host, or for none)", i, h.Name, pf.Addr(), o)
			}
			seen[pf.Addr()] = h.Name
		}
	}
	return nil
}

// Net is IP over an emulated cluster: a network namespace and interface
// per host, joined by the driver over the emulated fabric, with
// simulated time paced to the wall clock.
type Net struct {
	cfg      scenario.Config
	cl       *cluster.Cluster
	d        *Driver
	opt      Options
	eps      []Endpoint
	taps     []*os.File
	made     []string // namespaces it created
	in       chan frameIn
	pace     pace
	conns    *conns
	start    time.Time
	tapDrops []uint64
}

// pace follows how far simulated time falls behind the wall clock (times
// Rate): at the most, and the wall time spent more than a millisecond
// behind; with a live writer it says so as it happens — when the lag
// passes LiveLag (at most once a second) and when it has caught up.
type pace struct {
	maxLag, behind time.Duration
	last, noted    time.Time
	lagging        bool
	live           io.Writer
}

// LiveLag is the lag at which a running network says it is behind.
const LiveLag = 10 * time.Millisecond

// step takes the lag after a step that ended at now.
func (p *pace) step(now time.Time, lag time.Duration) {
	p.maxLag = max(p.maxLag, lag)
	if lag > time.Millisecond && !p.last.IsZero() {
		p.behind += now.Sub(p.last)
	}
	p.last = now
	if p.live == nil {
		return
	}
	switch {
	case lag >= LiveLag && (!p.lagging || now.Sub(p.noted) >= time.Second):
		fmt.Fprintf(p.live, "onic emu net: simulated time is %.1f ms behind the wall clock: the emulator cannot keep up\n", float64(lag)/1e6)
		p.noted, p.lagging = now, true
	case lag < time.Millisecond && p.lagging:
		fmt.Fprintf(p.live, "onic emu net: simulated time has caught up with the wall clock\n")
		p.lagging = false
	}
}

type frameIn struct {
	host int
	b    []byte
}

// Start builds the driver on cl (the cluster of cfg, with no traffic
// generators of its own), then gives each host a namespace, a TAP
// interface carrying its frames, and its addresses. On an error it
// removes what it made.
func Start(cl *cluster.Cluster, cfg scenario.Config, opt Options) (*Net, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if len(cfg.Flows) > 0 {
		return nil, fmt.Errorf("scenario %s has traffic generators (flows); emu net carries the hosts' own traffic: remove them", cfg.Name)
	}
	if err := checkAddresses(cfg.Hosts); err != nil {
		return nil, err
	}
	d, err := New(cl, cfg)
	if err != nil {
		return nil, err
	}
	n := &Net{cfg: cfg, pace: pace{live: opt.Live}, conns: newConns(), cl: cl, d: d, opt: opt, in: make(chan frameIn, 4096), tapDrops: make([]uint64, len(d.Hosts))}
	for _, h := range d.Hosts {
		if ns := opt.Prefix + h.Name; namespaceExists(ns) {
			return nil, fmt.Errorf("network namespace %s exists already: remove it (ip netns del %s) or choose another --netns-prefix", ns, ns)
		}
	}
	for i, h := range d.Hosts {
		if err := n.addHost(i, h); err != nil {
			n.Close()
			return nil, err
		}
	}
	return n, nil
}

// addHost makes host h's namespace and interface.
func (n *Net) addHost(i int, h *Host) error {
	ns := n.opt.Prefix + h.Name
	if err := ip("netns", "add", ns); err != nil {
		return err
	}
	n.made = append(n.made, ns)
	tmp := fmt.Sprintf("onicnet%d", i)
	f, err := openTAP(tmp)
	if err != nil {
		return err
	}
	n.taps = append(n.taps, f)
	mac := fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", h.MAC[0], h.MAC[1], h.MAC[2], h.MAC[3], h.MAC[4], h.MAC[5])
	v4, v6 := addresses(i, n.cfg.Hosts[i])
	for _, args := range [][]string{
		{"link", "set", "dev", tmp, "netns", ns},
		{"-n", ns, "link", "set", "dev", tmp, "name", n.opt.Interface},
		{"-n", ns, "link", "set", "dev", n.opt.Interface, "address", mac, "mtu", fmt.Sprint(n.opt.MTU)},
		{"-n", ns, "addr", "add", v4, "dev", n.opt.Interface},
		{"-n", ns, "addr", "add", v6, "dev", n.opt.Interface, "nodad"},
		{"-n", ns, "link", "set", "dev", n.opt.Interface, "up"},
		{"-n", ns, "link", "set", "dev", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			return err
		}
	}
	bells := "polled"
	if n.d.Doorbells(i) {
		bells = "msi-x"
	}
	n.eps = append(n.eps, Endpoint{Host: h.Name, Namespace: ns, Interface: n.opt.Interface, MAC: mac, IPv4: v4, IPv6: v6, Peers: n.d.Peers(i), Doorbells: bells})
	return nil
}

// Endpoints are the hosts' interfaces.
func (n *Net) Endpoints() []Endpoint { return n.eps }

// Driver is the hosts' driver, for its statistics.
func (n *Net) Driver() *Driver { return n.d }

// Run carries frames until ctx is done: each host's frames from its
// interface into the emulator, and frames that arrive in its rings out
// of its interface, with simulated time following the wall clock.
func (n *Net) Run(ctx context.Context) error {
	for i, f := range n.taps {
		go n.read(i, f)
	}
	n.start = time.Now()
	base := n.cl.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return nil
		}
	intake:
		for {
			select {
			case f := <-n.in:
				n.d.Send(f.host, f.b)
			default:
				break intake
			}
		}
		n.d.Ring()
		target := base + time.Duration(float64(time.Since(n.start))*n.opt.Rate)
		n.cl.Advance(target)
		now := time.Now()
		n.pace.step(now, max(0, time.Duration(float64(now.Sub(n.start))*n.opt.Rate)-(target-base)))
		for i, f := range n.taps {
			n.d.Service(i, func(b []byte) {
				if _, err := f.Write(b); err != nil {
					n.tapDrops[i]++
					return
				}
				n.conns.add(b)
			})
		}
		n.d.Ring()
		if err := n.d.Err(); err != nil {
			return err
		}
		if n.cl.Idle() && !n.d.Pending() {
			// Nothing under way: wait for a frame (simulated time then
			// jumps to the wall clock's).
			timer.Reset(5 * time.Millisecond)
			select {
			case f := <-n.in:
				n.d.Send(f.host, f.b)
			case <-ctx.Done():
				return nil
			case <-timer.C:
			}
		}
	}
}

// read hands host i's outgoing frames to the loop until the interface
// is closed.
func (n *Net) read(i int, f *os.File) {
	buf := make([]byte, 1<<16)
	for {
		k, err := f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF) {
				return
			}
			continue
		}
		n.in <- frameIn{i, append([]byte(nil), buf[:k]...)}
	}
}

// Close removes the interfaces and the namespaces Start made.
func (n *Net) Close() error {
	var first error
	for _, f := range n.taps {
		f.Close()
	}
	n.taps = nil
	for _, ns := range n.made {
		if err := ip("netns", "del", ns); err != nil && first == nil {
			first = err
		}
	}
	n.made = nil
	return first
}

// Report is what the network carried.
type Report struct {
	Endpoints []Endpoint   `json:"endpoints"`
	Hosts     []HostReport `json:"hosts"`
	WallS     float64      `json:"wall_seconds"`
	MaxLagMs  float64      `json:"max_lag_ms"`     // simulated time behind the wall clock, at the most
	BehindS   float64      `json:"behind_seconds"` // wall time spent more than 1 ms behind
	// Connections are what each TCP or UDP connection delivered to its
	// receiver's interface (the MaxConns first seen), the most first.
	Connections []Conn         `json:"connections"`
	Cluster     cluster.Report `json:"cluster"`
}

// HostReport is one host's driver counts.
type HostReport struct {
	Name string `json:"name"`
	Stats
	TapDrops uint64 `json:"tap_drops"` // frames its interface refused
}

// Report reports the run so far.
func (n *Net) Report() (Report, error) {
	wall := time.Since(n.start).Seconds()
	cr, err := n.cl.Report(wall)
	if err != nil {
		return Report{}, err
	}
	r := Report{Endpoints: n.eps, WallS: wall, MaxLagMs: float64(n.pace.maxLag) / 1e6, BehindS: n.pace.behind.Seconds(), Connections: n.conns.list(), Cluster: cr}
	for i, h := range n.d.Hosts {
		r.Hosts = append(r.Hosts, HostReport{Name: h.Name, Stats: h.Stats, TapDrops: n.tapDrops[i]})
	}
	return r, nil
}

// WriteText prints the report: each host's frames, the lag, then the
// cluster's report.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%-10s %12s %14s %12s %14s %8s %8s %8s %8s %10s %10s\n", "host", "frames out", "bytes out", "frames in", "bytes in",
		"queued", "dropped", "lost", "corrupt", "doorbells", "interrupts")
	for _, h := range r.Hosts {
		fmt.Fprintf(w, "%-10s %12d %14d %12d %14d %8d %8d %8d %8d %10d %10d\n", h.Name, h.SentFrames, h.SentBytes, h.ReceivedFrames, h.ReceivedBytes,
			h.Queued, h.Dropped+h.TapDrops, h.Lost, h.Corrupt, h.Doorbells, h.Interrupts)
	}
	if len(r.Connections) > 0 {
		fmt.Fprintf(w, "\n%-5s %-45s %-45s %10s %14s\n", "conn", "from", "to", "frames", "bytes")
		for i, c := range r.Connections {
			if i == 8 && len(r.Connections) > 9 {
				fmt.Fprintf(w, "(%d more in the JSON report)\n", len(r.Connections)-8)
				break
			}
			fmt.Fprintf(w, "%-5s %-45s %-45s %10d %14d\n", c.Proto, c.From, c.To, c.Frames, c.Bytes)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "time: %.3f s of wall time; simulated time behind the wall clock by at most %.3f ms (%.3f s spent over 1 ms behind)\n\n",
		r.WallS, r.MaxLagMs, r.BehindS)
	r.Cluster.WriteText(w)
}
