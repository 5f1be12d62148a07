package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"onic/internal/suggest"
	"onic/pcie/acl"
	"onic/pcie/manager"
	"onic/pcie/ntb"
)

// peerONIC is an O-NIC whose 1 GiB window on port A leads to the memory
// of whichever host is at the far end, with proxy ID proxy for its host
// and remote requesters allowed into its host's memory.
func peerONIC(name, host, proxy string, remote ...string) ONICConfig {
	return ONICConfig{Name: name, Host: host, FibreM: [2]float64{10, 10}, Manager: manager.Config{
		Translation: ntb.Config{
			Windows: []ntb.WindowConfig{{Name: "peer-memory", BAR: 2, Size: 1 << 30, Egress: "port-a", Translated: 1 << 32}},
			RID:     ntb.RIDConfig{ProxyBase: proxy, Map: []string{"00:00.0"}},
		},
		Access: acl.Config{Domains: []acl.DomainConfig{
			{Name: "host", Requesters: []string{"00:00.0"}, Ingress: []string{"host"}, Egress: []string{"port-a"},
				Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}},
			{Name: "peer", Requesters: remote, Ingress: []string{"port-a"}, Egress: []string{"host"},
				Ranges: []acl.RangeConfig{{Base: 1 << 32, Size: 1 << 30, Read: true, Write: true}}},
		}},
	}}
}

// Phased is FLEET's phased exchange: host A writes to B, the software
// quiesces the flow, the MEMS switches A's circuit from B to C, and A
// writes to C — its first transfer (64 KiB, as much as the O-NIC's hold
// buffer keeps) held while the new circuit is dark and training.
func Phased() Config {
	return Config{
		Name:     "phased",
		Duration: 100*time.Microsecond + DefaultReconfig + DefaultBringUp + 200*time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}},
		ONICs: []ONICConfig{
			peerONIC("onicA", "A", "10:00.0", "20:00.0-20:00.7", "30:00.0-30:00.7"),
			peerONIC("onicB", "B", "20:00.0", "10:00.0-10:00.7"),
			peerONIC("onicC", "C", "30:00.0", "10:00.0-10:00.7"),
		},
		Circuits: []CircuitConfig{{A: "onicA.a", B: "onicB.a"}},
		Phases:   []PhaseConfig{{At: 100 * time.Microsecond, Circuits: []CircuitConfig{{A: "onicA.a", B: "onicC.a"}}}},
		Flows: []FlowConfig{
			{Name: "A->B", From: "A", Op: "write", Size: 64 << 10, Stop: 80 * time.Microsecond},
			// One transfer in flight: its 64 KiB is what the card's hold
			// buffer keeps for a dark port (HoldBeats).
			{Name: "A->C", From: "A", Op: "write", Size: 64 << 10, Depth: 1, Start: 100 * time.Microsecond},
		},
	}
}

// TwoParty is FLEET's two-party exchange, the default scenario: hosts A
// and B, each with an O-NIC, port A of each joined by a MEMS circuit over
// 10 m of fibre a side, each host writing 64 KiB transfers into the
// other's memory through a 1 GiB window. It is written in YAML
// (scenarios/two-party.yaml, embedded) as a model for writing scenarios.
func TwoParty() Config { return embedded("two-party.yaml") }

// SlowPeer is a link partner that stops returning credits for 130 µs:
// the two-party cluster with both ports joined, host A writing to B out
// of each, onicB's port A holding every TLP it receives
// (scenarios/slow-peer.yaml).
func SlowPeer() Config { return embedded("slow-peer.yaml") }

// HostInterface is the cluster onic emu serve gives its clients by
// default: the two-party cluster without traffic generators, each host's
// software allowed to its O-NIC's registers, each O-NIC with a 16-entry
// LUT (scenarios/host-interface.yaml).
func HostInterface() Config { return embedded("host-interface.yaml") }

// FLEETCluster is one FLEET cluster as the overview paper describes it:
// four servers, each with eight CPUs of three O-NICs (24 O-NICs, one
// root complex a CPU), and six device chassis of eight GPUs with an
// O-NIC each (the paper's chassis hold GPUs or NVMe RAIDs; these hold
// GPUs) — 144 O-NICs, 288 of the 384-port switch's ports, the other 96
// left for inter-cluster fibres. Each O-NIC's port A has a 1 GiB window
// to whatever host its circuit reaches, and admits every host of the
// cluster. In the first phase servers exchange in pairs (S0 with S1, S2
// with S3) over twelve O-NIC pairs each, and every GPU streams into a
// server (GPU k into server k mod 4); at 100 us the switch moves the
// servers' circuits to the other pairing (S0 with S2, S1 with S3) and
// each GPU to the next server, and once the new circuits are lit (the
// switch's 10 ms and 1 ms bring-up) the same traffic runs again.
func FLEETCluster() Config { return fleet(1) }

// FLEETClusters is n FLEET clusters (FLEETCluster each, names prefixed
// c0-, c1-, ...), each around its own 384-port switch, joined in a chain
// (a ring from three) by trunks of 24 inter-cluster fibres of 100 m —
// FLEET Gen1's 3 Tb/s of system-to-system throughput in O-NIC circuits of
// 126 Gb/s; the fibres' length is an assumption. In the first phase each
// cluster runs as FLEETCluster's does; in the second, each cluster's S0
// exchanges with the next cluster's S0 and its S2 with the previous
// cluster's S2, each over twelve circuits across a trunk (the 24 fibres
// between two clusters), while S1 and S3 pair within their cluster and
// the GPUs move on as in FLEETCluster.
func FLEETClusters(n int) Config { return fleet(n) }

// fleet is n FLEET clusters: FLEETCluster for n == 1, FLEETClusters for
// more.
//
// Long: one loop builds each cluster's hosts, O-NICs and per-phase flows
// and circuits, the trunks and the name prefixes alike for one cluster or
// many.
func fleet(n int) Config {
	c := Config{Name: "fleet-cluster", MEMS: MEMSConfig{Reconfig: DefaultReconfig, BringUp: DefaultBringUp}}
	pre := func(k int) string { return "" }
	if n > 1 {
		c.Name = "fleet-clusters"
		pre = func(k int) string { return fmt.Sprintf("c%d-", k) }
		for k := range n {
			c.MEMS.Switches = append(c.MEMS.Switches, SwitchConfig{Name: fmt.Sprintf("c%d", k)})
			if k+1 < n || n > 2 {
				c.MEMS.Trunks = append(c.MEMS.Trunks, TrunkConfig{A: fmt.Sprintf("c%d", k), B: fmt.Sprintf("c%d", (k+1)%n), Fibres: 24, FibreM: 100})
			}
		}
	}
	const hostsEach = 4 + 48
	bus := func(h int) string { return fmt.Sprintf("%02x", 0x10+h) }
	all := bus(0) + ":00.0-" + bus(n*hostsEach-1) + ":1f.7"
	for k := range n {
		for s := range 4 {
			host := fmt.Sprintf("%sS%d", pre(k), s)
			c.Hosts = append(c.Hosts, HostConfig{Name: host})
			for j := range 24 {
				o := peerONIC(fmt.Sprintf("%ss%d-%d", pre(k), s, j), host, bus(k*hostsEach+s)+":00.0", all)
				if n > 1 {
					o.Switch = fmt.Sprintf("c%d", k)
				}
				c.ONICs = append(c.ONICs, o)
			}
		}
		for g := range 48 {
			host := fmt.Sprintf("%sgpu%d", pre(k), g)
			c.Hosts = append(c.Hosts, HostConfig{Name: host, Kind: "gpu"})
			o := peerONIC(pre(k)+"g"+strconv.Itoa(g), host, bus(k*hostsEach+4+g)+":00.0", all)
			if n > 1 {
				o.Switch = fmt.Sprintf("c%d", k)
			}
			c.ONICs = append(c.ONICs, o)
		}
	}
	lit := 100*time.Microsecond + DefaultReconfig + DefaultBringUp
	// pair adds twelve circuits between server s of cluster k and server
	// p of cluster q, and their flows both ways, in group.
	pair := func(cs *[]CircuitConfig, ph, k, s, q, p int, group string, start, stop time.Duration) {
		for j := range 12 {
			a, b := fmt.Sprintf("%ss%d-%d", pre(k), s, j), fmt.Sprintf("%ss%d-%d", pre(q), p, j)
			*cs = append(*cs, CircuitConfig{A: a + ".a", B: b + ".a"})
			c.Flows = append(c.Flows,
				FlowConfig{Name: fmt.Sprintf("%s->%s#%d", a, b, ph), Group: group, From: fmt.Sprintf("%sS%d", pre(k), s), Via: a, Op: "write", Size: 64 << 10, Start: start, Stop: stop},
				FlowConfig{Name: fmt.Sprintf("%s->%s#%d", b, a, ph), Group: group, From: fmt.Sprintf("%sS%d", pre(q), p), Via: b, Op: "write", Size: 64 << 10, Start: start, Stop: stop})
		}
	}
	phase := func(ph int, start, stop time.Duration) []CircuitConfig {
		var cs []CircuitConfig
		for k := range n {
			switch {
			case ph == 0: // S0 with S1, S2 with S3
				pair(&cs, ph, k, 0, k, 1, fmt.Sprintf("%sS0<->S1", pre(k)), start, stop)
				pair(&cs, ph, k, 2, k, 3, fmt.Sprintf("%sS2<->S3", pre(k)), start, stop)
			case n == 1: // S0 with S2, S1 with S3
				pair(&cs, ph, k, 0, k, 2, "S0<->S2", start, stop)
				pair(&cs, ph, k, 1, k, 3, "S1<->S3", start, stop)
			default: // S0 with the next cluster's, S2 with the previous one's
				if next := (k + 1) % n; k+1 < n || n > 2 {
					pair(&cs, ph, k, 0, next, 0, fmt.Sprintf("%sS0<->%sS0", pre(k), pre(next)), start, stop)
				}
				if n == 2 && k == 0 {
					pair(&cs, ph, k, 2, 1, 2, fmt.Sprintf("%sS2<->%sS2", pre(k), pre(1)), start, stop)
				} else if n > 2 {
					prev := (k + n - 1) % n
					pair(&cs, ph, k, 2, prev, 2, fmt.Sprintf("%sS2<->%sS2", pre(k), pre(prev)), start, stop)
				}
				pair(&cs, ph, k, 1, k, 3, fmt.Sprintf("%sS1<->S3", pre(k)), start, stop)
			}
			for g := range 48 {
				s := (g + ph) % 4
				port := fmt.Sprintf("%ss%d-%d", pre(k), s, 12+g/4)
				cs = append(cs, CircuitConfig{A: pre(k) + "g" + strconv.Itoa(g) + ".a", B: port + ".a"})
				group := pre(k) + "GPUs->servers"
				if ph > 0 {
					group = pre(k) + "GPUs->next servers"
				}
				c.Flows = append(c.Flows, FlowConfig{Name: fmt.Sprintf("%sgpu%d->S%d", pre(k), g, s), Group: group,
					From: fmt.Sprintf("%sgpu%d", pre(k), g), Op: "write", Size: 64 << 10, Start: start, Stop: stop})
			}
		}
		return cs
	}
	// Each phase's flows stop 25 us before its circuits change or the run
	// ends: a 64 KiB write takes about 20 us, so none is on a circuit
	// that goes dark.
	c.Circuits = phase(0, 0, 75*time.Microsecond)
	c.Phases = []PhaseConfig{{At: 100 * time.Microsecond, Circuits: phase(1, lit, lit+75*time.Microsecond)}}
	c.Duration = lit + 100*time.Microsecond
	return c
}

// IPOverPCIe is the cluster onic emu net joins by default: host A's
// O-NIC reaches B's out of port A and C's out of port B, each O-NIC with
// windows to its peers' memory (the IP driver's rings), to their MSI
// address range (its doorbells) and, A's, a multicast window out of both
// ports (broadcast frames); the hosts' IP addresses are set
// (scenarios/ip-over-pcie.yaml).
func IPOverPCIe() Config { return embedded("ip-over-pcie.yaml") }

// RingMulticast is FLEET's ring multicast to three receivers: sender S's
// O-NIC sends out of port B to R1; R1's and R2's O-NICs keep a copy for
// their host and relay each write out of their port B to the next; R3
// only keeps it. (R3's port B closes the ring back to S's port A, unused:
// a relay on every hop would send writes round forever.) A write is
// delivered when all three hosts have it.
func RingMulticast() Config {
	sender := peerONIC("onicS", "S", "10:00.0", "40:00.0-40:00.7")
	sender.Manager.Translation.Windows[0].Egress = "port-b"
	sender.Manager.Access.Domains[0].Egress = []string{"port-b"}
	relayer := func(name, host, proxy string) ONICConfig {
		o := peerONIC(name, host, proxy, "10:00.0-10:00.7")
		o.Manager.Relay = []manager.RelayConfig{{From: "port-a", Base: 1 << 32, Size: 1 << 30}}
		o.Manager.Access.Domains[1].Egress = []string{"host", "port-b"}
		return o
	}
	return Config{
		Name:     "ring-multicast",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "S"}, {Name: "R1"}, {Name: "R2"}, {Name: "R3"}},
		ONICs: []ONICConfig{sender, relayer("onic1", "R1", "20:00.0"), relayer("onic2", "R2", "30:00.0"),
			peerONIC("onic3", "R3", "40:00.0", "10:00.0-10:00.7")},
		Circuits: []CircuitConfig{{A: "onicS.b", B: "onic1.a"}, {A: "onic1.b", B: "onic2.a"},
			{A: "onic2.b", B: "onic3.a"}, {A: "onic3.b", B: "onicS.a"}},
		Flows: []FlowConfig{{Name: "S->R1,R2,R3", From: "S", Op: "write", Size: 64 << 10}},
	}
}

// Pairs is n independent two-party exchanges at full load: hosts P<i>a
// and P<i>b, each with an O-NIC, port A of each pair joined by a MEMS
// circuit, both writing 64 KiB transfers, four in flight, into each
// other's memory. Each O-NIC has two optical ports, so Pairs(96) fills
// FLEET's 384-port switch; beyond it the switch is given the ports the
// O-NICs need (Pairs(192): 384 O-NICs, 768 ports). It is the emulator's
// scaling workload (docs/emu.md), not a listed scenario.
func Pairs(n int) Config {
	c := Config{Name: fmt.Sprintf("pairs-%d", n), Duration: 100 * time.Microsecond}
	if 4*n > DefaultMEMSPorts {
		c.MEMS.Ports = 4 * n
	}
	for i := range n {
		a, b := fmt.Sprintf("P%da", i), fmt.Sprintf("P%db", i)
		c.Hosts = append(c.Hosts, HostConfig{Name: a}, HostConfig{Name: b})
		c.ONICs = append(c.ONICs, peerONIC("onic"+a, a, "10:00.0", "20:00.0-20:00.7"), peerONIC("onic"+b, b, "20:00.0", "10:00.0-10:00.7"))
		c.Circuits = append(c.Circuits, CircuitConfig{A: "onic" + a + ".a", B: "onic" + b + ".a"})
		c.Flows = append(c.Flows, FlowConfig{Name: a + "->" + b, From: a, Op: "write", Size: 64 << 10},
			FlowConfig{Name: b + "->" + a, From: b, Op: "write", Size: 64 << 10})
	}
	return c
}

// ThreeParty is FLEET's three-party exchange in units of one O-NIC
// (126 Gb/s): server A exchanges data with B over units O-NIC pairs and
// with C over unitsC pairs, each pair one MEMS circuit, both directions
// writing 64 KiB transfers. FLEET's example, 2 Tb/s with B and 10 Tb/s
// with C, is ThreeParty(16, 80): 192 O-NICs filling the 384-port switch.
func ThreeParty(unitsB, unitsC int) Config {
	c := Config{Name: "three-party", Duration: 100 * time.Microsecond,
		Hosts: []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}}}
	// party adds units O-NIC pairs between A and peer, whose O-NICs show
	// its requesters to A as proxy (bus:00.x).
	party := func(peer string, units int, bus string) {
		for k := range units {
			near, far := fmt.Sprintf("a%s%d", peer, k), fmt.Sprintf("%s%d", strings.ToLower(peer), k)
			c.ONICs = append(c.ONICs, peerONIC(near, "A", "10:00.0", bus+":00.0-"+bus+":00.7"),
				peerONIC(far, peer, bus+":00.0", "10:00.0-10:00.7"))
			c.Circuits = append(c.Circuits, CircuitConfig{A: near + ".a", B: far + ".a"})
			c.Flows = append(c.Flows,
				FlowConfig{Name: fmt.Sprintf("A->%s#%d", peer, k), Group: "A->" + peer, From: "A", Via: near, Op: "write", Size: 64 << 10},
				FlowConfig{Name: fmt.Sprintf("%s->A#%d", peer, k), Group: peer + "->A", From: peer, Via: far, Op: "write", Size: 64 << 10})
		}
	}
	party("B", unitsB, "20")
	party("C", unitsC, "30")
	return c
}

// DirectGathering is FLEET's direct data gathering: n radar
// data-acquisition cards in a device chassis, each with its own O-NIC,
// stream 64 KiB blocks of samples at rateGbps each straight into server
// A's memory, one MEMS circuit per card to one of A's O-NICs.
func DirectGathering(n int, rateGbps float64) Config {
	c := Config{Name: "direct-gathering", Duration: 200 * time.Microsecond, Hosts: []HostConfig{{Name: "A"}}}
	for k := range n {
		card, sensor, near := fmt.Sprintf("radar%d", k), fmt.Sprintf("onicR%d", k), fmt.Sprintf("onicA%d", k)
		buf := uint64(1)<<32 + uint64(k)<<30 // the card's 1 GiB buffer in A's memory
		c.Hosts = append(c.Hosts, HostConfig{Name: card, Kind: "sensor"})
		so := peerONIC(sensor, card, "20:00.0", "10:00.0-10:00.7")
		so.Manager.Translation.Windows[0].Translated = buf
		so.Manager.Access.Domains[0].Ranges[0].Base = buf
		ao := peerONIC(near, "A", "10:00.0", "20:00.0-20:00.7")
		ao.Manager.Access.Domains[1].Ranges[0].Base = buf
		c.ONICs = append(c.ONICs, ao, so)
		c.Circuits = append(c.Circuits, CircuitConfig{A: sensor + ".a", B: near + ".a"})
		c.Flows = append(c.Flows, FlowConfig{Name: card + "->A", Group: "radar->A", From: card, Op: "write",
			Size: 64 << 10, RateGbps: rateGbps})
	}
	return c
}

// NVMeGathering is FLEET's direct data gathering from stored data: server
// A reads from n NVMe RAIDs in a device chassis, each behind its own
// O-NIC with media delivering mediaGbps. A's driver keeps 32 commands of
// 128 KiB in flight per RAID, its queues and buffers in its own memory;
// each command is a doorbell write from A, a command fetch and the data
// and completion-entry writes from the device.
func NVMeGathering(n int, mediaGbps float64) Config {
	c := Config{Name: "nvme-gathering", Duration: 600 * time.Microsecond, Hosts: []HostConfig{{Name: "A"}}}
	for k := range n {
		raid, near, far := fmt.Sprintf("nvme%d", k), fmt.Sprintf("onicA%d", k), fmt.Sprintf("onicN%d", k)
		c.Hosts = append(c.Hosts, HostConfig{Name: raid, Kind: "nvme", NVMe: NVMeConfig{MediaGbps: mediaGbps}})
		c.ONICs = append(c.ONICs, peerONIC(near, "A", "10:00.0", "20:00.0-20:00.7"), peerONIC(far, raid, "20:00.0", "10:00.0-10:00.7"))
		c.Circuits = append(c.Circuits, CircuitConfig{A: near + ".a", B: far + ".a"})
		c.Flows = append(c.Flows, FlowConfig{Name: raid + "->A", Group: "nvme->A", From: "A", Via: near, Op: "nvme-read",
			Size: 128 << 10, Depth: 32, NVMe: NVMeQueues{SQ: 0, CQ: 1 << 20, Data: 16 << 20}})
	}
	return c
}

// Pipeline is FLEET's NVMe -> GPU -> server A -> server C pipeline with an
// in-flight FPGA transform. A's driver has the NVMe RAID read 128 KiB
// blocks straight into the GPU's memory (the RAID's O-NIC: queues through
// port A to A, data through port B to the GPU); the GPU sends on what it
// receives to A; A sends on what it receives to C through a window into a
// kernel slot of its O-NIC, whose kernel converts it from fp32 to bf16
// (activations sent on at half the bytes) and streams it out to C.
// Every stage is a separate O-NIC hop through the MEMS.
func Pipeline() Config {
	nvmeONIC := peerONIC("onicN", "nvme", "20:00.0", "10:00.0-10:00.7")
	nvmeONIC.Manager.Translation.Windows = append(nvmeONIC.Manager.Translation.Windows,
		ntb.WindowConfig{Name: "gpu-memory", BAR: 2, Offset: 1 << 30, Size: 1 << 30, Egress: "port-b", Translated: 1 << 32})
	nvmeONIC.Manager.Access.Domains[0].Egress = []string{"port-a", "port-b"}
	gpuONIC := peerONIC("onicG", "gpu", "30:00.0", "20:00.0-20:00.7")
	gpuONIC.Manager.Translation.Windows[0].Egress = "port-b"
	gpuONIC.Manager.Access.Domains[0].Egress = []string{"port-b"}
	fromGPU := peerONIC("onicA2", "A", "10:00.0", "30:00.0-30:00.7")
	toC := peerONIC("onicA3", "A", "10:00.0", "40:00.0-40:00.7")
	toC.Manager.Translation.Windows[0] = ntb.WindowConfig{Name: "transform", BAR: 2, Size: 1 << 30, Egress: "kernel:1"}
	toC.Manager.Access.Domains[0].Egress = []string{"kernel:1"}
	toC.Manager.Access.Domains[0].Ranges[0].Base = 0
	toC.Kernels = []KernelConfig{{Slot: 1, Name: "fp32-to-bf16", Egress: "port-a", Translated: 1 << 32}}
	return Config{
		Name:     "pipeline",
		Duration: 600 * time.Microsecond,
		Hosts: []HostConfig{{Name: "A"}, {Name: "C"}, {Name: "nvme", Kind: "nvme", NVMe: NVMeConfig{MediaGbps: 100}},
			{Name: "gpu", Kind: "gpu"}},
		ONICs: []ONICConfig{peerONIC("onicA1", "A", "10:00.0", "20:00.0-20:00.7"), fromGPU, toC,
			peerONIC("onicC", "C", "40:00.0", "10:00.0-10:00.7"), nvmeONIC, gpuONIC},
		Circuits: []CircuitConfig{{A: "onicA1.a", B: "onicN.a"}, {A: "onicN.b", B: "onicG.a"},
			{A: "onicG.b", B: "onicA2.a"}, {A: "onicA3.a", B: "onicC.a"}},
		Flows: []FlowConfig{
			{Name: "nvme->gpu", From: "A", Via: "onicA1", Op: "nvme-read", Size: 128 << 10, Depth: 32,
				NVMe: NVMeQueues{SQ: 0, CQ: 1 << 20, Data: 1 << 30}},
			{Name: "gpu->A", From: "gpu", Op: "write", Size: 128 << 10, Forward: true},
			{Name: "A->C", From: "A", Via: "onicA3", Op: "write", Size: 128 << 10, Forward: true},
		},
	}
}

// Allreduce is one step of an allreduce across an O-NIC's two ports (as
// SwitchML and ATP aggregate gradients in the network, here in FLEET's
// O-NIC): hosts A and B each write 64 KiB blocks of int32 gradients to C;
// A's arrive on port A of C's O-NIC, B's on port B, both into its
// kernel_in range, where the sum-int32 kernel in slot 0 adds them element
// by element and writes the sums into C's memory. Each write ends when
// the sum it went into is in C's memory, so the faster sender waits for
// the slower one, as in any synchronous allreduce.
func Allreduce() Config {
	// A's O-NIC is behind port A, B's behind port B: each peer's IDs are
	// trusted only on its own port.
	onicC := peerONIC("onicC", "C", "30:00.0", "10:00.0-10:00.7")
	peerB := onicC.Manager.Access.Domains[1]
	peerB.Name, peerB.Requesters, peerB.Ingress = "peer-b", []string{"20:00.0-20:00.7"}, []string{"port-b"}
	onicC.Manager.Access.Domains = append(onicC.Manager.Access.Domains, peerB)
	onicC.Manager.Access.Domains[1].Name = "peer-a"
	for i := 1; i <= 2; i++ {
		onicC.Manager.Access.Domains[i].Egress = []string{"kernel:0"}
	}
	onicC.Manager.KernelIn = []manager.KernelInConfig{
		{From: "port-a", Base: 1 << 32, Size: 1 << 30, Slot: 0},
		{From: "port-b", Base: 1 << 32, Size: 1 << 30, Slot: 0},
	}
	onicC.Kernels = []KernelConfig{{Slot: 0, Name: "sum-int32", Egress: "host", Translated: 2 << 32}}
	return Config{
		Name:     "allreduce",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}, {Name: "B"}, {Name: "C"}},
		ONICs: []ONICConfig{peerONIC("onicA", "A", "10:00.0", "30:00.0-30:00.7"),
			peerONIC("onicB", "B", "20:00.0", "30:00.0-30:00.7"), onicC},
		Circuits: []CircuitConfig{{A: "onicA.a", B: "onicC.a"}, {A: "onicB.a", B: "onicC.b"}},
		Flows: []FlowConfig{
			{Name: "A->C", From: "A", Op: "write", Size: 64 << 10},
			{Name: "B->C", From: "B", Op: "write", Size: 64 << 10},
		},
	}
}

// Offload is a host using its O-NIC's FPGA as an accelerator, the way
// FLEET's runtime drives an FPGA processor: A's driver runs tasks of 256
// KiB on the fp32-to-bf16 kernel in slot 1 — ARG0 and a doorbell written
// to the slot's task shell, the fp32 data written through a window into
// the slot, the bf16 result written back into A's memory, then the
// shell's completion record and an MSI-X interrupt. One task at a time.
func Offload() Config {
	o := peerONIC("onicA", "A", "10:00.0")
	o.Manager.Translation.Windows[0] = ntb.WindowConfig{Name: "offload", BAR: 2, Size: 1 << 30, Egress: "kernel:1"}
	o.Manager.Access.Domains = o.Manager.Access.Domains[:1]
	o.Manager.Access.Domains[0].Egress = []string{"kernel:1", "local"}
	o.Manager.Access.Domains[0].Ranges = []acl.RangeConfig{{Base: 0, Size: 1 << 30, Read: true, Write: true}}
	o.Kernels = []KernelConfig{{Slot: 1, Name: "fp32-to-bf16", Egress: "host", Translated: 2 << 32}}
	return Config{
		Name:     "offload",
		Duration: 200 * time.Microsecond,
		Hosts:    []HostConfig{{Name: "A"}},
		ONICs:    []ONICConfig{o},
		Flows:    []FlowConfig{{Name: "A tasks", From: "A", Op: "task", Size: 256 << 10, Task: TaskFlowConfig{Slot: 1}}},
	}
}

// Scenario is a built-in scenario.
type Scenario struct {
	Name, Description string
	Config            func() Config
}

// Scenarios lists the built-in scenarios, the default first.
func Scenarios() []Scenario {
	return []Scenario{
		{"two-party", "FLEET's two-party exchange: hosts A and B write 64 KiB transfers into each other's memory through their O-NICs and one MEMS circuit", TwoParty},
		{"phased", "FLEET's phased exchange: A writes to B, the MEMS moves A's circuit to C (10 ms dark, 1 ms bring-up), A writes to C", Phased},
		{"three-party", "FLEET's three-party exchange: A exchanges 2 Tb/s with B and 10 Tb/s with C over 16 and 80 O-NIC pairs (192 O-NICs, 384 MEMS ports)", func() Config { return ThreeParty(16, 80) }},
		{"direct-gathering", "FLEET's direct data gathering: 8 radar acquisition cards, each with an O-NIC, stream 100 Gb/s each into server A's memory", func() Config { return DirectGathering(8, 100) }},
		{"nvme-gathering", "FLEET's direct data gathering from storage: server A reads 128 KiB blocks from two NVMe RAIDs (100 Gb/s media each, 80 us latency), each behind its own O-NIC", func() Config { return NVMeGathering(2, 100) }},
		{"pipeline", "FLEET's NVMe -> GPU -> server A -> server C pipeline: an NVMe RAID reads into the GPU, which sends on to A, which sends on to C through its O-NIC's fp32-to-bf16 kernel", Pipeline},
		{"allreduce", "an allreduce step across an O-NIC's two ports: A's and B's int32 gradients meet in C's O-NIC, whose sum-int32 kernel writes their sum into C's memory", Allreduce},
		{"offload", "a host drives its O-NIC's fp32-to-bf16 kernel as an accelerator: tasks launched by doorbell, data in and out over the host link, a completion record and an MSI-X interrupt per task", Offload},
		{"ring-multicast", "FLEET's ring multicast: S writes 64 KiB transfers that O-NICs R1 and R2 keep and relay, so R1, R2 and R3 each receive every byte", RingMulticast},
		{"slow-peer", "a link partner that stops returning credits: onicA's port A stalls, retrains and resumes while the flow out of its port B goes on", SlowPeer},
		{"fleet-cluster", "one FLEET cluster: 4 servers of 24 O-NICs and 48 GPUs with an O-NIC each on the 384-port MEMS; servers exchange in pairs and GPUs stream to servers, then the switch re-pairs them all", FLEETCluster},
		{"fleet-clusters", "two FLEET clusters, each on its own 384-port MEMS, joined by 24 inter-cluster fibres (Gen1's 3 Tb/s): after the first phase each cluster's S0 and S2 exchange with the other cluster's over the fibres", func() Config { return FLEETClusters(2) }},
		{"ip-over-pcie", "the cluster onic emu net joins: A reaches B out of its O-NIC's port A and C out of port B, with windows for the IP driver's rings, MSI-X doorbells and broadcast", IPOverPCIe},
		{"host-interface", "the two-party cluster with no traffic generators, for onic emu serve: the hosts' software is its clients", HostInterface},
		{"two-party-read", "the two-party exchange with DMA reads instead of writes", func() Config {
			c := TwoParty()
			c.Name = "two-party-read"
			for i := range c.Flows {
				c.Flows[i].Op = "read"
			}
			return c
		}},
	}
}

// Lookup returns the built-in scenario name.
func Lookup(name string) (Config, error) {
	var names []string
	for _, s := range Scenarios() {
		if s.Name == name {
			return s.Config(), nil
		}
		names = append(names, s.Name)
	}
	if s := suggest.Nearest(name, names); s != "" {
		return Config{}, fmt.Errorf("no scenario %q; did you mean %s? (built in: %s)", name, s, strings.Join(names, ", "))
	}
	return Config{}, fmt.Errorf("no scenario %q (built in: %s)", name, strings.Join(names, ", "))
}
