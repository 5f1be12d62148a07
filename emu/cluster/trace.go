package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"onic/emu/sim"
)

// TraceBuckets is how many intervals a run is cut into for the
// throughput counters of the trace.
const TraceBuckets = 100

// WriteTrace writes what the finished run did as Chrome trace-event JSON,
// which Perfetto (ui.perfetto.dev) and chrome://tracing open: one process
// per host, each flow's transfers as async slices named after the flow
// (from issue to its last request settling; unfinished ones run to the
// end and say so; several in flight at once lie side by side), a counter per flow of the payload it delivered per interval
// (Gb/s), a MEMS process with each circuit's reconfiguration and
// bring-up, and a process per O-NIC with a track per optical port: its
// state over time (down, training, up and to which port) and a counter of
// the bytes of TLPs it sent per interval (Gb/s, headers and payload).
// Times are simulated; the same run writes the same bytes.
func (cl *Cluster) WriteTrace(w io.Writer) error {
	bw := bufio.NewWriter(w)
	first := true
	ev := func(format string, a ...any) {
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		fmt.Fprintf(bw, format, a...)
	}
	var qb bytes.Buffer
	enc := json.NewEncoder(&qb)
	enc.SetEscapeHTML(false) // flow names such as "A->B" stay readable
	q := func(s string) string {
		qb.Reset()
		enc.Encode(s)
		return strings.TrimSuffix(qb.String(), "\n")
	}
	us := func(t sim.Time) string { return fmt.Sprintf("%d.%06d", t/sim.Microsecond, t%sim.Microsecond) }
	end := ps(cl.cfg.Duration)
	bw.WriteString(`{"displayTimeUnit":"ns","traceEvents":[` + "\n")
	for i, h := range cl.hosts {
		ev(`{"ph":"M","name":"process_name","pid":%d,"args":{"name":%s}}`, i+1, q("host "+h.cfg.Name))
	}
	mems := len(cl.hosts) + 1
	ev(`{"ph":"M","name":"process_name","pid":%d,"args":{"name":"MEMS switch"}}`, mems)
	bucket := cl.bucket
	// Each O-NIC a process: a track per optical port with its state
	// (down, training, up and to whom) and a counter of the bytes of TLPs
	// it sent per interval against the link's rate.
	for i, o := range cl.onics {
		pid := mems + 1 + i
		ev(`{"ph":"M","name":"process_name","pid":%d,"args":{"name":%s}}`, pid, q("O-NIC "+o.cfg.Name+" (host "+o.host.cfg.Name+")"))
		for _, pt := range o.ports {
			tid := pt.idx + 1
			ev(`{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":%s}}`, pid, tid, q("port "+string(rune('A'+pt.idx))))
			for k, s := range pt.states {
				stop := end
				if k+1 < len(pt.states) {
					stop = pt.states[k+1].at
				}
				if stop <= s.at {
					continue // replaced at once
				}
				name := [...]string{"down", "training", "up"}[s.state]
				if s.peer != "" {
					name += ": " + s.peer
				}
				ev(`{"ph":"X","cat":"port","name":%s,"pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{"port":%s}}`,
					q(name), pid, tid, us(s.at), us(stop-s.at), q(pt.name()))
			}
			for b, bytes := range pt.wire {
				if sim.Time(b)*bucket >= end {
					break
				}
				gbps := float64(bytes) * 8 / (float64(bucket) / float64(sim.Second)) / 1e9
				ev(`{"ph":"C","name":%s,"pid":%d,"ts":%s,"args":{"Gbps":%.3f}}`, q(pt.name()+" sent Gb/s"), pid, us(sim.Time(b)*bucket), gbps)
			}
		}
	}
	for _, f := range cl.flows {
		pid, tid := f.host.idx+1, f.idx+1
		ev(`{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":%s}}`, pid, tid, q(f.cfg.Name+" ("+f.cfg.Op+")"))
		for _, x := range f.transfers() {
			n := x.n
			stop, state := x.end, "ok"
			switch {
			case x.end == 0:
				stop, state = end, "unfinished"
			case x.failed:
				state = "failed"
			}
			// A transfer overlaps the flow's others (Depth in flight): an
			// async slice of its own, which Perfetto lays out on as many
			// rows as are in flight, where complete slices on one track
			// would have to nest.
			id := uint64(f.idx+1)<<32 | uint64(n)
			ev(`{"ph":"b","cat":"transfer","name":%s,"id":"0x%x","pid":%d,"tid":%d,"ts":%s,"args":{"n":%d,"bytes":%d,"state":%q}}`,
				q(f.cfg.Name), id, pid, tid, us(x.start), n, f.cfg.Size, state)
			ev(`{"ph":"e","cat":"transfer","name":%s,"id":"0x%x","pid":%d,"tid":%d,"ts":%s}`,
				q(f.cfg.Name), id, pid, tid, us(stop))
		}
		for b, bytes := range f.delivered {
			if sim.Time(b)*bucket >= end {
				break
			}
			gbps := float64(bytes) * 8 / (float64(bucket) / float64(sim.Second)) / 1e9
			ev(`{"ph":"C","name":%s,"pid":%d,"ts":%s,"args":{"Gbps":%.3f}}`, q(f.cfg.Name+" Gb/s"), pid, us(sim.Time(b)*bucket), gbps)
		}
	}
	for i, s := range cl.spans { // circuits reconfigure at once: async too
		ev(`{"ph":"b","cat":"mems","name":%s,"id":"0x%x","pid":%d,"tid":1,"ts":%s,"args":{"reconfig_and_bring_up":true}}`,
			q(s.name), i+1, mems, us(s.start))
		ev(`{"ph":"e","cat":"mems","name":%s,"id":"0x%x","pid":%d,"tid":1,"ts":%s}`, q(s.name), i+1, mems, us(s.end))
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
