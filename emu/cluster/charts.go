package cluster

import (
	"strconv"
	"strings"

	"onic/emu/link"
	"onic/emu/sim"
)

// Charts is what a finished run's pictures are drawn from (onic emu run
// --report): each flow's throughput over time and its transfers'
// latencies, how busy each link direction was, and when the MEMS switch
// reconfigured and O-NICs reflashed. Times are simulated nanoseconds.
type Charts struct {
	DurationNs float64
	BucketNs   float64 // the width of one throughput interval
	Flows      []FlowSeries
	Links      []LinkUse
	Spans      []TimeSpan
}

// FlowSeries is one flow over the run.
type FlowSeries struct {
	Name string
	// Gbps is the payload it delivered per interval, in Gb/s, each TLP
	// counted when it landed (the trace's counters).
	Gbps []float64
	// LatencyNs are its finished transfers' latencies, in issue order.
	LatencyNs []float64
}

// LinkUse is how busy one direction of a link was: the fraction of the
// run its transmitter spent sending symbols (TLPs, DLLPs, SKPs).
type LinkUse struct {
	Name        string // "A -> onicA" (PCIe), "onicA.a -> onicB.a" (optical; "onicB.a, then onicC.a" when a reconfiguration moved it)
	Utilisation float64
}

// TimeSpan is something that took the hardware out for a while.
type TimeSpan struct {
	Kind           string // "mems" (a circuit's reconfiguration and bring-up) or "reflash"
	Name           string
	StartNs, EndNs float64
}

// Charts returns the run's chart data, its throughput cut into buckets
// intervals (TraceBuckets if 0; at most TraceBuckets, and a divisor of
// it, the intervals the run counted in). Call it after Run.
func (cl *Cluster) Charts(buckets int) Charts {
	if buckets <= 0 || buckets > TraceBuckets || TraceBuckets%buckets != 0 {
		buckets = TraceBuckets
	}
	end := ps(cl.cfg.Duration)
	per := TraceBuckets / buckets // counted intervals to a chart's
	bucket := cl.bucket * sim.Time(per)
	c := Charts{DurationNs: ns(end), BucketNs: ns(bucket)}
	for _, f := range cl.flows {
		fs := FlowSeries{Name: f.cfg.Name, Gbps: make([]float64, buckets)}
		for b, n := range f.delivered[:TraceBuckets] {
			fs.Gbps[b/per] += float64(n) * 8 / (float64(bucket) / float64(sim.Second)) / 1e9
		}
		for _, x := range f.transfers() {
			if x.end == 0 || x.failed {
				continue
			}
			fs.LatencyNs = append(fs.LatencyNs, ns(x.end-x.start))
		}
		c.Flows = append(c.Flows, fs)
	}
	use := func(name string, l *link.Link, side int) {
		busy := l.SymbolTime(l.Stats(side).BusySymbols)
		c.Links = append(c.Links, LinkUse{Name: name, Utilisation: min(float64(busy)/float64(end), 1)})
	}
	for _, o := range cl.onics {
		host := o.host.cfg.Name
		use(host+" -> "+o.cfg.Name, o.link, 0)
		use(o.cfg.Name+" -> "+host, o.link, 1)
		for _, pt := range o.ports {
			if pt.l != nil && pt.peer != nil {
				use(pt.name()+" -> "+pt.peers(), pt.l, pt.side)
			}
		}
	}
	for _, s := range cl.spans {
		c.Spans = append(c.Spans, TimeSpan{Kind: "mems", Name: s.name, StartNs: ns(s.start), EndNs: ns(s.end)})
	}
	for _, o := range cl.onics {
		for _, d := range o.deploys {
			if d.Outcome != "loaded" {
				continue
			}
			name := o.cfg.Name + " (whole O-NIC)"
			if d.Kind == "partial" {
				name = o.cfg.Name + " slot " + strconv.Itoa(d.Slot)
			}
			c.Spans = append(c.Spans, TimeSpan{Kind: "reflash", Name: name + ": " + d.Image, StartNs: d.AtNs, EndNs: min(d.AtNs+d.ReflashNs, ns(end))})
		}
	}
	return c
}

// peers names the ports this one was up to over the run, in order: one
// name, or "onicB.a, then onicC.a" when a reconfiguration moved it (its
// link's figures are the whole run's, every phase's).
func (pt *port) peers() string {
	var names []string
	for _, ch := range pt.states {
		if ch.state == portUp && ch.peer != "" && (len(names) == 0 || names[len(names)-1] != ch.peer) {
			names = append(names, ch.peer)
		}
	}
	if len(names) == 0 {
		return pt.peer.name()
	}
	return strings.Join(names, ", then ")
}
