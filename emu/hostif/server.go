// Package hostif is the emulator's external host interface: a server
// that lets programs outside the emulator — drivers, firmware test
// programs — play the software of hosts in an emulated O-NIC cluster,
// over length-prefixed MessagePack messages on a Unix socket
// (docs/hostif.md is the protocol). Each client drives one host: it
// reads and writes configuration space through the host's enumerated
// hierarchy, reads and writes device memory with TLPs that take the
// emulated path, shares a file of DMA memory that devices write into
// directly, hears interrupts, and lets simulated time pass.
package hostif

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/internal/readfile"
	"onic/tlp"
)

// Modes.
const (
	// LockStep: simulated time passes only while every client is waiting
	// (for data, an interrupt or time); the run is a function of the
	// configuration and the message sequence.
	LockStep = "lockstep"
	// FreeRunning: simulated time passes with the wall clock, at Rate;
	// clients act whenever they like, at the time they find.
	FreeRunning = "free"
)

// Options configure a Server.
type Options struct {
	Mode string // LockStep (default) or FreeRunning
	// Rate is simulated seconds per wall second when free-running
	// (default 0.001: a simulated millisecond per wall second).
	Rate float64
	// IRQQueue is how many interrupts a client's queue holds before it
	// drops the oldest (default 256).
	IRQQueue int
	// WriteTimeout is how long a reply may take to reach a client before
	// the client is dropped as stuck (default 5 s).
	WriteTimeout time.Duration
	// MaxWait is the longest simulated time a wait without a timeout
	// lasts (default 1 s).
	MaxWait time.Duration
	// MaxMemory is the largest DMA memory file a client may share
	// (default 1 GiB).
	MaxMemory int64
	// MaxClients is how many connections the server holds at once
	// (default 64); one more is told so and closed.
	MaxClients int
	// MaxInFlight is how many bytes of partly received frames the server
	// holds across all clients (default 64 MiB); a frame that would pass
	// it ends its connection with an error.
	MaxInFlight int64
	// FrameTimeout is how long a frame's body may take to arrive once its
	// length has (default 10 s); a slower client is dropped.
	FrameTimeout time.Duration
	// MaxImage is the largest image file a load may name (default
	// DefaultMaxImage).
	MaxImage int64
	// StallTimeout is how long, in lock-step, a client may wait on
	// simulated time while another client, not waiting, sends nothing
	// (default 10 s of wall time): then the wait is answered with an
	// error naming the client that holds time still (a program playing
	// two hosts whose threads block each other would otherwise hang).
	StallTimeout time.Duration
	// Trust is the loader's trust store for load requests; without one
	// every load is refused.
	Trust *firmware.Trust
	// MaxPosted is how many of a client's requests may be in the
	// emulator at once (default DefaultMaxPosted): posted writes hold
	// credits as at a root port, so an mmio_write past it is answered only
	// once simulated time has carried earlier ones on — a client that
	// writes without end holds a bounded amount of memory, and in
	// lock-step its wait lets time pass.
	MaxPosted int
}

// DefaultMaxPosted is Options.MaxPosted's default: a root port's posted
// header credits are of this order (PCIe advertises up to 127 in the
// 8-bit field's normal scale).
const DefaultMaxPosted = 64

func (o *Options) defaults() error {
	switch o.Mode {
	case "":
		o.Mode = LockStep
	case LockStep, FreeRunning:
	default:
		return fmt.Errorf("mode %q: want %s or %s", o.Mode, LockStep, FreeRunning)
	}
	if o.Rate != 0 && !(o.Rate >= 1e-9 && o.Rate <= 1e3) {
		return fmt.Errorf("rate %g: must be 1e-9 to 1000 simulated seconds per wall second", o.Rate)
	}
	if o.Rate == 0 {
		o.Rate = 1e-3
	}
	if o.IRQQueue <= 0 {
		o.IRQQueue = 256
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = time.Second
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 10 * time.Second
	}
	if o.MaxMemory <= 0 {
		o.MaxMemory = 1 << 30
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 64
	}
	if o.MaxPosted <= 0 {
		o.MaxPosted = DefaultMaxPosted
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 64 << 20
	}
	if o.FrameTimeout <= 0 {
		o.FrameTimeout = 10 * time.Second
	}
	if o.MaxImage <= 0 {
		o.MaxImage = DefaultMaxImage
	}
	return nil
}

// DefaultMaxImage is the default cap on a loaded image file, the
// loader's own (firmware.MaxImageFile).
const DefaultMaxImage = firmware.MaxImageFile

// Bounds on what a reply echoes of a request: an error message, and the
// op name, are cut to these lengths, so no reply grows with bad input.
const (
	maxErrText = 512
	maxOpText  = 32
)

// sliceEvents is how many emulator events the server runs before it looks
// for a stop signal again.
const sliceEvents = 1 << 14

// Stats count what the server saw.
type Stats struct {
	Connections uint64 `json:"connections"`
	Requests    uint64 `json:"requests"`
	Errors      uint64 `json:"errors"`  // requests answered with an error
	Dropped     uint64 `json:"dropped"` // clients dropped as stuck, slow, or for a bad frame or memory
	Refused     uint64 `json:"refused"` // connections refused at MaxClients
	Stalls      uint64 `json:"stalls"`  // lock-step waits ended by StallTimeout
}

// Server serves one cluster to clients.
type Server struct {
	cl      *cluster.Cluster
	opt     Options
	in      chan event
	done    chan struct{} // closed when Serve returns
	clients []*client     // in connection order
	stats   Stats
	nextID  int
	mu      sync.Mutex // guards conns, for Close
	conns   map[net.Conn]bool
	refused atomic.Uint64 // connections refused at MaxClients (the accept goroutine's)
	swept   bool          // no client in clients is gone
	// inFlight counts the bytes of frames being received or waiting for
	// the loop, across all clients (at most MaxInFlight).
	inFlight atomic.Int64
}

// event is what a connection's reader hands the server's loop.
type event struct {
	c      *client
	req    Request
	err    error // a frame that would not decode
	eof    bool  // the connection ended
	charge int64 // bytes of inFlight the event holds
	image  *imageRead
}

// imageRead is a load's image file, read off the loop.
type imageRead struct {
	req Request
	b   []byte
	err error
}

// client is one connection.
type client struct {
	id    int
	conn  net.Conn
	out   chan []byte
	hello bool
	soft  *cluster.Software
	mem   []byte // mapped DMA memory
	// wait is the request the client is waiting on, if any.
	wait *Request
	// held are requests that arrived behind a posted write waiting for
	// credits, in order (PCIe ordering: nothing passes a posted write).
	held []Request
	// credit has a token for each request read whose reply is not yet
	// written: the reader stops reading at MaxPosted of them, so a
	// client that pipelines requests is held back by its socket, never
	// dropped for a full reply queue.
	credit   chan struct{}
	closed   chan struct{} // closed when the client is released
	deadline time.Duration // simulated; for advance and wait_irq
	irqs     []IRQ
	lost     uint64
	gone     bool
	loaded   Reply // a load's reply, sent when its reflash ends
	reading  bool  // a load's image file is being read: time must not pass
	fault    error // the DMA memory faulted: the session ends
	// lastSeen is when the client's last request arrived, and waitSince
	// when its wait began (wall clock): a lock-step stall is told by them.
	lastSeen, waitSince time.Time
}

// New makes a server for cl, a built cluster.
func New(cl *cluster.Cluster, opt Options) (*Server, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	cl.SoftwareOnly(true) // each host is its client: none, nothing takes its writes
	return &Server{cl: cl, opt: opt, in: make(chan event, 64), done: make(chan struct{}), conns: map[net.Conn]bool{}}, nil
}

// Stats returns the server's counters (call after Serve returns).
func (s *Server) Stats() Stats { return s.stats }

// Serve accepts clients on ln and serves them until ctx is done, then
// releases every client and returns. The cluster is the caller's again
// after (for its report).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	// A client's DMA memory is a file it shares: if it shrinks, a device
	// write into it faults. That must end the client's session, not the
	// server (cluster.Software.OnMemFault).
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	s.cl.Start()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			full := len(s.conns) >= s.opt.MaxClients
			if !full {
				s.conns[conn] = true
			}
			s.mu.Unlock()
			if full {
				s.refused.Add(1)
				go s.refuse(conn)
				continue
			}
			c := &client{conn: conn, out: make(chan []byte, s.opt.MaxPosted+16),
				credit: make(chan struct{}, s.opt.MaxPosted), closed: make(chan struct{})}
			go s.write(c)
			go s.read(c)
		}
	}()
	defer func() {
		close(s.done)
		ln.Close()
		s.mu.Lock()
		for conn := range s.conns {
			conn.Close()
		}
		s.mu.Unlock()
		for _, c := range s.clients {
			s.release(c)
		}
		s.stats.Refused = s.refused.Load()
	}()
	var tick, stallTick <-chan time.Time
	var wallStart time.Time
	var simStart time.Duration
	if s.opt.Mode == FreeRunning {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		tick, wallStart, simStart = t.C, time.Now(), s.cl.Now()
	} else {
		t := time.NewTicker(max(s.opt.StallTimeout/10, time.Millisecond))
		defer t.Stop()
		stallTick = t.C
	}
	for {
		s.sweep()
		if s.opt.Mode == LockStep && s.allWaiting() {
			// Only a stop is looked for while time passes: a request
			// arriving now waits, so the session stays reproducible.
			select {
			case <-ctx.Done():
				return nil
			default:
			}
			s.run()
			s.faults()
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case e := <-s.in:
			s.handle(e)
			s.inFlight.Add(-e.charge)
		case now := <-stallTick:
			s.stalls(now)
		case now := <-tick:
			target := simStart + time.Duration(float64(now.Sub(wallStart))*s.opt.Rate)
			if target > s.cl.Now() {
				s.cl.AdvanceLimit(target, sliceEvents) // (saturates at the end of time)
			}
			s.post()
			s.expire()
			s.faults()
		}
	}
}

// refuse tells a connection over MaxClients so, and closes it.
func (s *Server) refuse(conn net.Conn) {
	defer conn.Close()
	conn.SetWriteDeadline(time.Now().Add(time.Second))
	conn.Write(frame(Reply{Err: fmt.Sprintf("server full: it serves at most %d connections (onic emu serve --max-clients)", s.opt.MaxClients)}))
}

// read decodes c's frames into events.
func (s *Server) read(c *client) {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(c.conn, hdr[:]); err != nil {
			s.send(event{c: c, eof: true})
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > MaxFrame {
			// The stream cannot be trusted past a bad length: say so and
			// end the connection.
			s.send(event{c: c, err: fmt.Errorf("frame of %d bytes: more than %d", n, MaxFrame)})
			s.send(event{c: c, eof: true})
			return
		}
		// The frame's bytes count against MaxInFlight from now until the
		// loop has handled it, and must come within FrameTimeout.
		charge := int64(n)
		if s.inFlight.Add(charge) > s.opt.MaxInFlight {
			s.inFlight.Add(-charge)
			s.send(event{c: c, err: fmt.Errorf("frame of %d bytes: the server holds %d bytes of frames at most (onic emu serve --max-inflight)", n, s.opt.MaxInFlight)})
			s.send(event{c: c, eof: true})
			return
		}
		c.conn.SetReadDeadline(time.Now().Add(s.opt.FrameTimeout))
		b := make([]byte, n)
		if _, err := io.ReadFull(c.conn, b); err != nil {
			s.inFlight.Add(-charge)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				s.send(event{c: c, err: fmt.Errorf("frame of %d bytes: not all there after %v", n, s.opt.FrameTimeout)})
			}
			s.send(event{c: c, eof: true})
			return
		}
		c.conn.SetReadDeadline(time.Time{})
		ev := event{c: c, charge: charge}
		ev.req, ev.err = decodeRequest(b)
		select { // one token per request until it is answered (reply)
		case c.credit <- struct{}{}:
		case <-c.closed:
			s.inFlight.Add(-charge)
			return
		case <-s.done:
			s.inFlight.Add(-charge)
			return
		}
		if !s.send(ev) {
			s.inFlight.Add(-charge)
			return
		}
	}
}

// decodeRequest decodes one frame's body: exactly one request message.
func decodeRequest(b []byte) (Request, error) {
	var req Request
	rest, err := req.UnmarshalMsg(b)
	switch {
	case err != nil:
		return Request{}, fmt.Errorf("malformed message: %v", err)
	case len(rest) != 0:
		return Request{}, fmt.Errorf("malformed message: %d bytes after it", len(rest))
	}
	return req, nil
}

// send hands the loop an event, unless the server has stopped.
func (s *Server) send(e event) bool {
	select {
	case s.in <- e:
		return true
	case <-s.done:
		return false
	}
}

// write sends c's replies, dropping c if one takes too long.
func (s *Server) write(c *client) {
	for b := range c.out {
		c.conn.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
		if _, err := c.conn.Write(b); err != nil {
			c.conn.Close()
			for range c.out { // drain until the loop releases c
			}
			return
		}
		select { // the request it answers is done with: read another
		case <-c.credit:
		default:
		}
	}
	c.conn.Close()
}

// reply queues r for c; a client whose queue is full is dropped.
func (s *Server) reply(c *client, r Reply) {
	if c.gone {
		return
	}
	r.Now = uint64(s.cl.Now())
	r.Op = clip(r.Op, maxOpText)
	if r.Err != "" {
		s.stats.Errors++
		r.Err = clip(r.Err, maxErrText)
	}
	b := frame(r)
	if len(b)-4 > MaxFrame {
		// Nothing a client asks for is this big; refuse rather than send
		// a frame the client must reject.
		s.stats.Errors++
		b = frame(Reply{Seq: r.Seq, Op: r.Op, Now: r.Now, Err: fmt.Sprintf("reply of %d bytes: more than the %d-byte frame limit", len(b)-4, MaxFrame)})
	}
	select {
	case c.out <- b:
	default:
		s.stats.Dropped++
		s.release(c)
	}
}

// frame encodes r with its 4-byte length in front.
func frame(r Reply) []byte {
	b, _ := r.MarshalMsg(make([]byte, 4, 64+len(r.Data))) // only unencodable values fail; a Reply has none
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func errReply(req Request, f string, a ...any) Reply {
	return Reply{Seq: req.Seq, Op: req.Op, Err: fmt.Sprintf(f, a...)}
}

// clip cuts s to at most n bytes (marking the cut), so a reply never
// echoes unbounded input.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d bytes)", strings.ToValidUTF8(s[:n], ""), len(s))
}

// handle acts on one event.
func (s *Server) handle(e event) {
	c := e.c
	if c.gone {
		return
	}
	if c.id == 0 {
		s.nextID++
		c.id = s.nextID
		s.clients = append(s.clients, c)
		s.stats.Connections++
	}
	c.lastSeen = time.Now()
	switch {
	case e.eof:
		s.release(c)
		return
	case e.image != nil:
		s.loadImage(c, e.image)
		return
	case e.err != nil:
		s.stats.Requests++
		s.reply(c, Reply{Err: e.err.Error()})
		return
	}
	req := e.req
	s.stats.Requests++
	switch {
	case c.wait != nil:
		s.reply(c, errReply(req, "request %d (%s) is still being answered: one request at a time", c.wait.Seq, c.wait.Op))
		return
	case !c.hello && req.Op != OpHello:
		s.reply(c, errReply(req, "%s before hello: the first message says which host the client plays", req.Op))
		return
	case len(c.held) > 0:
		c.held = append(c.held, req) // behind a write waiting for credits
		return
	}
	s.dispatch(c, req)
}

// dispatch carries out one request of a client that may make it now.
func (s *Server) dispatch(c *client, req Request) {
	switch req.Op {
	case OpHello:
		s.hello(c, req)
	case OpConfigRd, OpConfigWr:
		s.config(c, req)
	case OpMMIOWrite:
		if c.soft.InFlight() >= s.opt.MaxPosted {
			// Out of credits: the write, and whatever follows it, waits
			// for time to carry earlier requests on (post).
			c.held = append(c.held, req)
			return
		}
		s.mmioWrite(c, req)
	case OpMMIORead:
		c.wait, c.waitSince = &req, time.Now()
		if err := c.soft.Read(req.Seq, req.Addr, int(req.Len)); err != nil {
			c.wait = nil
			s.reply(c, errReply(req, "mmio_read: %v", err))
		}
	case OpAdvance, OpWaitIRQ:
		wait := req.Ns
		if wait == 0 && req.Op == OpWaitIRQ {
			wait = uint64(s.opt.MaxWait)
		}
		if left := scenario.MaxTime - s.cl.Now(); wait > uint64(left) {
			s.reply(c, errReply(req, "%s: ns %d: past the end of simulated time (%d ns from now)", req.Op, req.Ns, int64(left)))
			return
		}
		c.wait, c.deadline = &req, s.cl.Now()+time.Duration(wait)
		if req.Op == OpAdvance {
			s.expire()
		} else {
			s.irqReady(c)
		}
	case OpLoad:
		s.load(c, req)
	case OpTime:
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
	case OpBye:
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
		s.release(c)
	default:
		s.reply(c, errReply(req, "unknown op %q", clip(req.Op, maxOpText)))
	}
}

// hello attaches c to its host and maps its DMA memory.
func (s *Server) hello(c *client, req Request) {
	if c.hello {
		s.reply(c, errReply(req, "hello: already said (host %s)", c.soft.Host()))
		return
	}
	if req.Version != Version {
		s.reply(c, errReply(req, "hello: protocol version %d, the server speaks %d", req.Version, Version))
		return
	}
	var mem []byte
	if req.MemPath != "" {
		var err error
		if mem, err = s.mapFile(req.MemPath); err != nil {
			s.reply(c, errReply(req, "hello: mem_path: %v", err))
			return
		}
	}
	soft, err := s.cl.Attach(req.Host, req.MemBase, mem)
	if err != nil {
		if mem != nil {
			syscall.Munmap(mem)
		}
		s.reply(c, errReply(req, "hello: %v", err))
		return
	}
	c.hello, c.soft, c.mem = true, soft, mem
	soft.OnRead = func(r cluster.ReadResult) {
		if c.wait == nil || c.wait.Op != OpMMIORead || c.wait.Seq != r.ID {
			return
		}
		w := c.wait
		c.wait = nil
		s.reply(c, Reply{Seq: w.Seq, Op: w.Op, Status: uint8(r.Status), Data: r.Data, LatencyNs: uint64(r.Latency)})
		s.cl.Stop()
	}
	soft.OnMemFault = func(err error) {
		c.fault = err
		s.cl.Stop()
	}
	soft.OnSettle = func() {
		if len(c.held) > 0 && soft.InFlight() < s.opt.MaxPosted {
			s.cl.Stop() // a credit: the held write may go (post)
		}
	}
	soft.OnInterrupt = func(i cluster.Interrupt) {
		if len(c.irqs) == s.opt.IRQQueue {
			c.irqs = c.irqs[1:]
			c.lost++
		}
		c.irqs = append(c.irqs, IRQ{At: uint64(i.At), Addr: i.Address, Data: i.Data})
		if s.irqReady(c) {
			s.cl.Stop()
		}
	}
	s.reply(c, Reply{Seq: req.Seq, Op: req.Op, Version: Version, Mode: s.opt.Mode, Segments: uint16(soft.Segments())})
}

// mapFile maps a client's shared-memory file.
func (s *Server) mapFile(path string) ([]byte, error) {
	// O_NONBLOCK: a FIFO is refused below, not waited on.
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	case st.Size() == 0:
		return nil, fmt.Errorf("%s: empty", path)
	case st.Size() > s.opt.MaxMemory:
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", path, st.Size(), s.opt.MaxMemory)
	}
	return syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

// config answers cfg_read and cfg_write.
func (s *Server) config(c *client, req Request) {
	id := tlp.ID(req.BDF)
	if req.Op == OpConfigRd {
		v, st, err := c.soft.ConfigRead(int(req.Segment), id, int(req.Reg), int(req.Size))
		if err != nil {
			s.reply(c, errReply(req, "cfg_read: %v", err))
			return
		}
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op, Value: v, Status: uint8(st)})
		return
	}
	st, err := c.soft.ConfigWrite(int(req.Segment), id, int(req.Reg), int(req.Size), req.Value)
	if err != nil {
		s.reply(c, errReply(req, "cfg_write: %v", err))
		return
	}
	s.reply(c, Reply{Seq: req.Seq, Op: req.Op, Status: uint8(st)})
}

// load runs the loader for c's host's O-NIC; the reply waits for the
// reflash to end, in simulated time.
func (s *Server) load(c *client, req Request) {
	if s.opt.Trust == nil {
		s.reply(c, errReply(req, "load: the server has no trust store (onic emu serve --trust FILE)"))
		return
	}
	if req.Path == "" {
		s.reply(c, errReply(req, "load: no path: name the image file"))
		return
	}
	// The file is read off the loop (a slow disk stalls only this
	// client); until it is, the client counts as busy, not waiting, so
	// simulated time does not pass.
	c.wait, c.reading = &req, true
	max := s.opt.MaxImage
	go func() {
		b, err := readfile.Read(req.Path, max)
		s.send(event{c: c, image: &imageRead{req: req, b: b, err: err}})
	}()
}

// loadImage hands a load's image, now read, to the loader.
func (s *Server) loadImage(c *client, im *imageRead) {
	c.reading, c.wait = false, nil
	req := im.req
	if im.err != nil {
		s.reply(c, errReply(req, "load: %v", im.err))
		return
	}
	rep, until, err := c.soft.Load(req.ONIC, filepath.Base(req.Path), im.b, *s.opt.Trust)
	if err != nil {
		s.reply(c, errReply(req, "%v", err))
		return
	}
	c.loaded = Reply{Seq: req.Seq, Op: req.Op, Kind: rep.Kind, Slot: rep.Slot, Image: rep.Image, Signer: rep.Signer, ReflashNs: uint64(rep.ReflashNs)}
	c.wait, c.deadline = &req, until
	s.expire()
}

// faults ends the sessions of clients whose DMA memory faulted: the
// request they wait on (or, if none, an unasked reply with sequence 0)
// gets the error, and the others go on.
func (s *Server) faults() {
	for _, c := range s.clients {
		if c.fault == nil || c.gone {
			continue
		}
		r := Reply{Err: fmt.Sprintf("session ended: %v", c.fault)}
		if w := c.wait; w != nil {
			r.Seq, r.Op = w.Seq, w.Op
			c.wait = nil
		}
		s.reply(c, r)
		s.stats.Dropped++
		s.release(c)
	}
}

// irqReady answers c's wait_irq if it has interrupts queued.
func (s *Server) irqReady(c *client) bool {
	if c.wait == nil || c.wait.Op != OpWaitIRQ || len(c.irqs) == 0 {
		return false
	}
	w := c.wait
	c.wait = nil
	s.reply(c, Reply{Seq: w.Seq, Op: w.Op, IRQs: c.irqs, Lost: c.lost})
	c.irqs, c.lost = nil, 0
	return true
}

// expire answers the waits whose time has come: advance done, wait_irq
// timed out (no interrupts: an empty list).
func (s *Server) expire() {
	now := s.cl.Now()
	for _, c := range s.clients {
		if w := c.wait; w != nil && !c.reading && (w.Op == OpAdvance || w.Op == OpWaitIRQ || w.Op == OpLoad) && now >= c.deadline {
			c.wait = nil
			if w.Op == OpLoad {
				s.reply(c, c.loaded)
				continue
			}
			s.reply(c, Reply{Seq: w.Seq, Op: w.Op})
		}
	}
}

// stalls answers, with an error, the lock-step waits that have lasted
// StallTimeout while a client that is not waiting has sent nothing for as
// long: time cannot pass until it does, and it may never (a program
// whose two host threads block each other). The error names that client.
func (s *Server) stalls(now time.Time) {
	var holder *client
	for _, c := range s.clients {
		if c.hello && !c.gone && c.wait == nil && len(c.held) == 0 && now.Sub(c.lastSeen) >= s.opt.StallTimeout {
			holder = c
			break
		}
	}
	if holder == nil {
		return
	}
	for _, c := range s.clients {
		if w := c.wait; w != nil && !c.gone && now.Sub(c.waitSince) >= s.opt.StallTimeout {
			c.wait = nil
			s.stats.Stalls++
			s.reply(c, errReply(*w, "%s: lock-step stall: host %s's client has sent nothing for %v and is not waiting, so simulated time cannot pass "+
				"(every client must be waiting for time to move; a program playing two hosts must not block one host's thread on the other's: docs/hostif.md, Timing modes)",
				w.Op, holder.soft.Host(), now.Sub(holder.lastSeen).Round(time.Second)))
		}
	}
}

// allWaiting reports whether every client that has said hello is
// waiting on the emulator (and there is one).
func (s *Server) allWaiting() bool {
	n := 0
	for _, c := range s.clients {
		if c.hello && !c.gone {
			if (c.wait == nil && len(c.held) == 0) || c.reading {
				return false
			}
			n++
		}
	}
	return n > 0
}

// mmioWrite issues a client's write and answers it.
func (s *Server) mmioWrite(c *client, req Request) {
	if err := c.soft.Write(req.Addr, req.Data); err != nil {
		s.reply(c, errReply(req, "mmio_write: %v", err))
		return
	}
	s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
}

// post issues the writes that waited for credits, now that time has
// carried earlier requests on.
func (s *Server) post() {
	for _, c := range s.clients {
		for len(c.held) > 0 && c.wait == nil && !c.gone {
			r := c.held[0]
			if r.Op == OpMMIOWrite && c.soft.InFlight() >= s.opt.MaxPosted {
				break
			}
			c.held = c.held[1:]
			s.dispatch(c, r)
		}
	}
}

// run lets simulated time pass in lock-step, up to the earliest deadline
// of the waiting clients, or until an event answers one of them.
func (s *Server) run() {
	target := time.Duration(-1)
	for _, c := range s.clients {
		if c.hello && !c.gone && c.wait != nil && c.wait.Op != OpMMIORead && (target < 0 || c.deadline < target) {
			target = c.deadline
		}
	}
	if target < 0 {
		// Only reads and writes out of credits are waiting: their
		// completions and credits are coming; give them at most MaxWait.
		target = s.cl.Now() + s.opt.MaxWait // (saturates at the end of time)
	}
	before := s.cl.Now()
	more := !s.cl.AdvanceLimit(target, sliceEvents)
	s.post()
	if more {
		return // more to run: the loop looks for a stop first
	}
	s.expire()
	if s.cl.Now() == before && s.allWaiting() && s.cl.Idle() {
		// Nothing can answer them: fail the reads (they cannot happen).
		for _, c := range s.clients {
			if c.wait != nil && c.wait.Op == OpMMIORead {
				w := c.wait
				c.wait = nil
				s.reply(c, errReply(*w, "mmio_read: no completion can come: nothing is left to happen in the emulator"))
			}
		}
	}
}

// release ends c: its host is free again, its memory unmapped.
func (s *Server) release(c *client) {
	if c.gone {
		return
	}
	c.gone = true
	if c.soft != nil {
		c.soft.Detach()
	}
	if c.mem != nil {
		syscall.Munmap(c.mem)
		c.mem = nil
	}
	// Out of the count before the writer can close the connection, so a
	// client that sees its connection end may connect again at once.
	s.mu.Lock()
	delete(s.conns, c.conn)
	s.mu.Unlock()
	close(c.out)
	close(c.closed)
	s.swept = false
}

// sweep forgets the clients that are gone (what must be reported of
// them, their accesses, is the cluster's). The loop calls it between
// events, never while it walks the clients.
func (s *Server) sweep() {
	if !s.swept {
		s.clients = slices.DeleteFunc(s.clients, func(c *client) bool { return c.gone })
		s.swept = true
	}
}
