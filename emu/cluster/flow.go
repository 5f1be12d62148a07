package cluster

import (
	"maps"
	"math/bits"
	"slices"

	"onic/emu/link"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/kernels"
	"onic/tlp"
)

// flowState is a flow running: a host's DMA engine issuing transfers
// through its O-NIC's direct windows.
type flowState struct {
	c        *Cluster
	idx      int
	cfg      scenario.FlowConfig
	host     *hostNode
	onic     *onicNode // the O-NIC it goes through
	base     uint64    // host address of the flow's first transfer
	issued   int
	inflight int
	reqs     int32 // requests issued
	// xfers are the transfers in flight, by slot; a finished transfer's
	// slot is reused (free), so a flow's state does not grow with the
	// run. What outlives a transfer is bounded too: its latency goes into
	// a histogram (hist) and, sampled, into the log traces and charts
	// show (done).
	xfers   []xfer
	free    []int32
	hist    latencyHist
	done    transferLog
	lastEnd sim.Time // when the last transfer finished (the scenario's clock)
	lastGap sim.Time // how long after the one before it
	// sample is what the transfer level measures of the flow (fidelity.go).
	sample flowSample
	bytes  uint64 // payload delivered
	// delivered is the payload delivered in each of the run's
	// TraceBuckets intervals (Cluster.bucket), counted as each TLP lands:
	// what the charts and the trace show as the flow's throughput, which
	// the links' rates bound (a transfer's bytes counted when it finished
	// made a 126 Gb/s link show 131 Gb/s and a phase a single spike).
	delivered []uint64
	ok, bad   int // transfers finished whole / with a failed request
	tag       uint16
	// Pacing (RateGbps): the earliest time of the next transfer, the gap
	// between transfers, and whether a feed event is waiting for it.
	next    sim.Time
	gap     sim.Time
	waiting bool
	// starved says a forwarding flow is waiting for data to arrive.
	starved bool
	// soft: the requests of software outside the emulator (software.go),
	// not a traffic generator.
	soft bool
}

type xfer struct {
	start  sim.Time
	end    sim.Time // when its last request settled (0 while in flight)
	left   int      // requests not yet settled
	n      int32    // the flow's transfer number, in issue order
	failed bool
}

// begin starts the flow's next transfer in a free slot and returns the
// slot.
func (f *flowState) begin() int32 {
	x := xfer{start: f.c.s.Now(), n: int32(f.issued)}
	f.issued++
	f.inflight++
	return reuse(&f.xfers, &f.free, x)
}

// transferLog keeps finished transfers for traces and charts in bounded
// memory: every one until it holds maxLogged, then every second one by
// transfer number, then every fourth, and so on — a sample spread evenly
// over the whole run, the same whatever the order transfers finish in.
type transferLog struct {
	xs     []xfer
	stride int32 // transfers kept: those whose number is a multiple of it
}

// maxLogged is how many finished transfers a flow's log holds at most.
const maxLogged = 4096

func (l *transferLog) add(x xfer) {
	if l.stride == 0 {
		l.stride = 1
	}
	if x.n%l.stride != 0 {
		return
	}
	if len(l.xs) == maxLogged {
		l.stride *= 2
		kept := l.xs[:0]
		for _, y := range l.xs {
			if y.n%l.stride == 0 {
				kept = append(kept, y)
			}
		}
		l.xs = kept
		if x.n%l.stride != 0 {
			return
		}
	}
	l.xs = append(l.xs, x)
}

// transfers returns the logged finished transfers and those still in
// flight, in transfer number order.
func (f *flowState) transfers() []xfer {
	xs := slices.Clone(f.done.xs)
	for _, x := range f.xfers {
		if x.end == 0 { // (a free slot's transfer has finished)
			x.start += f.c.offset
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b xfer) int { return int(a.n - b.n) })
	return xs
}

// feed issues transfers while fewer than Depth are in flight, between the
// flow's start and stop times.
func (f *flowState) feed() {
	c := f.c
	if now := c.scn(); now < ps(f.cfg.Start) || f.cfg.Stop != 0 && now >= ps(f.cfg.Stop) {
		return
	}
	for f.inflight < f.cfg.Depth && (f.cfg.Transfers == 0 || f.issued < f.cfg.Transfers) {
		if f.gap > 0 {
			now := c.s.Now()
			if now < f.next {
				if !f.waiting {
					f.waiting = true
					c.s.At(f.next, f, 0)
				}
				return
			}
			f.waiting = false
			f.next = max(f.next, now) + f.gap
		}
		if f.cfg.Forward {
			// Send on only what has arrived: the next transfer's bytes
			// must be in memory already.
			if f.host.dataIn < uint64(f.issued+1)*uint64(f.cfg.Size) {
				f.starved = true
				return
			}
			f.starved = false
		}
		step := uint64((f.cfg.Size + 4095) &^ 4095)
		addr := f.base + uint64(f.issued)*step%f.cfg.Span
		xi := f.begin()
		switch f.cfg.Op {
		case "write":
			f.inject(xi, tlp.MWr, addr, f.cfg.Size, f.host.cfg.MPS, stPlain, f.onic.link, f.host)
		case "read":
			f.inject(xi, tlp.MRd, addr, f.cfg.Size, f.host.cfg.MRRS, stPlain, f.onic.link, f.host)
		case "task":
			// ARG0 (the task's length) and the doorbell, then the data:
			// posted writes in order on the host link, so the task shell
			// has its task before the first byte.
			page := f.onic.fn.BARAddress(0) + kernels.TaskPage(f.cfg.Task.Slot)
			f.inject(xi, tlp.MWr, page+kernels.TaskArg0, 4, f.host.cfg.MPS, stTaskReg, f.onic.link, f.host)
			f.inject(xi, tlp.MWr, page+kernels.TaskDoorbell, 4, f.host.cfg.MPS, stTaskReg, f.onic.link, f.host)
			f.inject(xi, tlp.MWr, addr, f.cfg.Size, f.host.cfg.MPS, stPlain, f.onic.link, f.host)
		case "nvme-read":
			// The driver has put the command in its submission queue (its
			// own memory); ringing the doorbell is the one TLP it sends.
			f.inject(xi, tlp.MWr, f.base, 4, f.host.cfg.MPS, stDoorbell, f.onic.link, f.host)
		}
	}
}

// inject sends the requests of size bytes at addr (split at max and 4 KB)
// for transfer xi from host h's root complex over l, recording each.
func (f *flowState) inject(xi int32, kind tlp.Kind, addr uint64, size, max int, st stage, l *link.Link, h *hostNode) {
	f.send(xi, reqs{kind: kind, addr: addr, size: size, max: max, st: st, l: l, id: h.id, host: h})
}

// reqs describes the requests of one access of a flow: a kind of
// request for size bytes at addr, split at max bytes (and at 4 KB), for
// stage st, sent over link l from its end side (0: the host's, 1: the
// O-NIC's) as requester id, not before ready; data, if not nil, gives
// each request its payload (told the request's record). A non-posted
// request from host's root complex (host not nil) waits for one of its
// tags (hostTags).
type reqs struct {
	kind      tlp.Kind
	addr      uint64
	size, max int
	st        stage
	l         *link.Link
	side      int
	id        tlp.ID
	host      *hostNode
	ready     sim.Time
	data      func(r int32, ch tlp.Chunk) []byte
}

// send issues q's requests for transfer xi, recording each.
func (f *flowState) send(xi int32, q reqs) {
	c := f.c
	x := &f.xfers[xi]
	for ch := range tlp.Chunks(q.addr, q.size, q.max) {
		r := c.newRec(record{flow: int32(f.idx), transfer: xi, n: f.reqs, left: int32(ch.Size), stage: q.st})
		f.reqs++
		x.left++
		m := c.newMsg()
		c.attach(m, r)
		fm, typ, _ := tlp.FmtType(q.kind, ch.Addr >= 1<<32, 0)
		// (A posted request's tag means nothing to its completer; it
		// counts on, in 8 bits: T9 and T8 are 00b from a requester that
		// does not use 10-bit tags, §2.2.6.2.)
		m.t = tlp.TLP{Fmt: fm, Type: typ, RequesterID: q.id, Tag: uint16(uint8(f.tag)), Length: ch.LengthDW,
			FirstBE: ch.FirstBE, LastBE: ch.LastBE, Address: ch.Addr &^ 3}
		if q.data != nil {
			m.t.Data = q.data(r, ch)
		}
		f.tag++
		if q.host != nil && q.kind.IsNonPosted() {
			c.sendTagged(q.host, m, q.l, q.side, q.ready)
			continue
		}
		sendAt(q.l, q.side, m, q.ready)
	}
}

// settled notes that one request of transfer xi has ended.
func (f *flowState) settled(xi int32, ok bool) {
	x := &f.xfers[xi]
	if !ok {
		x.failed = true
	}
	x.left--
	if x.left > 0 {
		return
	}
	f.inflight--
	x.end = f.c.s.Now()
	f.lastGap = x.end + f.c.offset - f.lastEnd
	f.lastEnd = x.end + f.c.offset
	f.sample.settled(x)
	if fd := f.c.fid; fd != nil {
		fd.settles++
		fd.settled = f.idx
	}
	if x.failed {
		f.bad++
	} else {
		f.ok++
		f.hist.add(x.end - x.start)
	}
	f.done.add(xfer{start: x.end + f.c.offset - (x.end - x.start), end: x.end + f.c.offset, n: x.n, failed: x.failed})
	f.free = append(f.free, xi)
	if f.soft {
		if sw := f.host.soft; sw != nil && sw.OnSettle != nil {
			sw.OnSettle()
		}
	}
	f.c.s.After(0, f, 0)
}

func (f *flowState) bytesIn(n int) {
	f.bytes += uint64(n)
	if b := int(f.c.scn() / f.c.bucket); b < len(f.delivered) {
		f.delivered[b] += uint64(n)
	}
}

// percentiles returns p50, p99, p999 and max of the transfer latencies.
func (f *flowState) percentiles() [4]sim.Time { return f.hist.percentiles() }

// percentiles returns p50, p99, p999 and max of latencies.
func percentiles(latencies []sim.Time) [4]sim.Time {
	if len(latencies) == 0 {
		return [4]sim.Time{}
	}
	l := slices.Clone(latencies)
	slices.Sort(l)
	at := func(q float64) sim.Time { return l[min(len(l)-1, int(q*float64(len(l))))] }
	return [4]sim.Time{at(0.50), at(0.99), at(0.999), l[len(l)-1]}
}

// latencyHist holds latencies in bounded memory: the first
// exactLatencies exactly, then in log-linear buckets, exact below 128 ps
// and 64 per power of two above (within 1/64 of the value; the maximum
// stays exact). It holds at most a few thousand buckets whatever the
// count.
type latencyHist struct {
	exact  []sim.Time
	counts map[uint32]uint64
	n      uint64
	max    sim.Time
}

// exactLatencies is how many latencies a latencyHist keeps exactly.
const exactLatencies = 4096

func histKey(t sim.Time) uint32 {
	v := uint64(max(t, 0))
	shift := max(0, bits.Len64(v)-7)
	return uint32(shift)<<7 | uint32(v>>shift)
}

// histValue is the middle of key's bucket.
func histValue(k uint32) sim.Time {
	shift, m := k>>7, uint64(k&127)
	return sim.Time(m<<shift + (uint64(1)<<shift)/2)
}

func (h *latencyHist) add(t sim.Time) {
	h.n++
	h.max = max(h.max, t)
	if h.counts == nil {
		if len(h.exact) < exactLatencies {
			h.exact = append(h.exact, t)
			return
		}
		h.counts = map[uint32]uint64{}
		for _, e := range h.exact {
			h.counts[histKey(e)]++
		}
		h.exact = nil
	}
	h.counts[histKey(t)]++
}

// addN adds n latencies of t.
func (h *latencyHist) addN(t sim.Time, n uint64) {
	for ; n > 0 && h.counts == nil; n-- {
		h.add(t)
	}
	if n == 0 {
		return
	}
	h.n += n
	h.max = max(h.max, t)
	h.counts[histKey(t)] += n
}

// merge adds o's latencies to h (a group's flows reported together).
func (h *latencyHist) merge(o *latencyHist) {
	if o.counts == nil {
		for _, t := range o.exact {
			h.add(t)
		}
		return
	}
	if h.counts == nil {
		h.counts = map[uint32]uint64{}
		for _, e := range h.exact {
			h.counts[histKey(e)]++
		}
		h.exact = nil
	}
	for k, n := range o.counts {
		h.counts[k] += n
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// percentiles returns p50, p99, p999 and max, as percentiles does for
// the latencies themselves.
func (h *latencyHist) percentiles() [4]sim.Time {
	if h.counts == nil {
		return percentiles(h.exact)
	}
	keys := slices.Sorted(maps.Keys(h.counts))
	at := func(q float64) sim.Time {
		rank := min(h.n-1, uint64(q*float64(h.n)))
		var seen uint64
		for _, k := range keys {
			if seen += h.counts[k]; seen > rank {
				return min(histValue(k), h.max)
			}
		}
		return h.max
	}
	return [4]sim.Time{at(0.50), at(0.99), at(0.999), h.max}
}
