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
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"onic/emu/cluster"
	"onic/firmware"
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
	// Trust is the loader's trust store for load requests; without one
	// every load is refused.
	Trust *firmware.Trust
}

func (o *Options) defaults() error {
	switch o.Mode {
	case "":
		o.Mode = LockStep
	case LockStep, FreeRunning:
	default:
		return fmt.Errorf("mode %q: want %s or %s", o.Mode, LockStep, FreeRunning)
	}
	if o.Rate < 0 {
		return fmt.Errorf("rate %g: must be positive", o.Rate)
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
	if o.MaxMemory <= 0 {
		o.MaxMemory = 1 << 30
	}
	return nil
}

// Stats count what the server saw.
type Stats struct {
	Connections uint64 `json:"connections"`
	Requests    uint64 `json:"requests"`
	Errors      uint64 `json:"errors"`  // requests answered with an error
	Dropped     uint64 `json:"dropped"` // clients dropped as stuck or for a bad frame
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
}

// event is what a connection's reader hands the server's loop.
type event struct {
	c   *client
	req Request
	err error // a frame that would not decode
	eof bool  // the connection ended
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
	wait     *Request
	deadline time.Duration // simulated; for advance and wait_irq
	irqs     []IRQ
	lost     uint64
	gone     bool
	loaded   Reply // a load's reply, sent when its reflash ends
}

// New makes a server for cl, a built cluster.
func New(cl *cluster.Cluster, opt Options) (*Server, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	return &Server{cl: cl, opt: opt, in: make(chan event, 64), done: make(chan struct{}), conns: map[net.Conn]bool{}}, nil
}

// Stats returns the server's counters (call after Serve returns).
func (s *Server) Stats() Stats { return s.stats }

// Serve accepts clients on ln and serves them until ctx is done, then
// releases every client and returns. The cluster is the caller's again
// after (for its report).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.cl.Start()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[conn] = true
			s.mu.Unlock()
			c := &client{conn: conn, out: make(chan []byte, 16)}
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
	}()
	var tick <-chan time.Time
	var wallStart time.Time
	var simStart time.Duration
	if s.opt.Mode == FreeRunning {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		tick, wallStart, simStart = t.C, time.Now(), s.cl.Now()
	}
	for {
		if s.opt.Mode == LockStep && s.allWaiting() {
			s.run()
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case e := <-s.in:
			s.handle(e)
		case now := <-tick:
			target := simStart + time.Duration(float64(now.Sub(wallStart))*s.opt.Rate)
			if target > s.cl.Now() {
				s.cl.Advance(target)
			}
			s.expire()
		}
	}
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
		b := make([]byte, n)
		if _, err := io.ReadFull(c.conn, b); err != nil {
			s.send(event{c: c, eof: true})
			return
		}
		var req Request
		ev := event{c: c, req: req}
		if rest, err := req.UnmarshalMsg(b); err != nil {
			ev.err = fmt.Errorf("malformed message: %v", err)
		} else if len(rest) != 0 {
			ev.err = fmt.Errorf("malformed message: %d bytes after it", len(rest))
		} else {
			ev.req = req
		}
		if !s.send(ev) {
			return
		}
	}
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
	}
	c.conn.Close()
}

// reply queues r for c; a client whose queue is full is dropped.
func (s *Server) reply(c *client, r Reply) {
	if c.gone {
		return
	}
	r.Now = uint64(s.cl.Now())
	if r.Err != "" {
		s.stats.Errors++
	}
	b, _ := r.MarshalMsg(make([]byte, 4, 64+len(r.Data)))
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	select {
	case c.out <- b:
	default:
		s.stats.Dropped++
		s.release(c)
	}
}

func errReply(req Request, f string, a ...any) Reply {
	return Reply{Seq: req.Seq, Op: req.Op, Err: fmt.Sprintf(f, a...)}
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
	switch {
	case e.eof:
		s.release(c)
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
	}
	switch req.Op {
	case OpHello:
		s.hello(c, req)
	case OpConfigRd, OpConfigWr:
		s.config(c, req)
	case OpMMIOWrite:
		if err := c.soft.Write(req.Addr, req.Data); err != nil {
			s.reply(c, errReply(req, "mmio_write: %v", err))
			return
		}
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
	case OpMMIORead:
		c.wait = &req
		if err := c.soft.Read(req.Seq, req.Addr, int(req.Len)); err != nil {
			c.wait = nil
			s.reply(c, errReply(req, "mmio_read: %v", err))
		}
	case OpAdvance:
		c.wait, c.deadline = &req, s.cl.Now()+time.Duration(req.Ns)
		s.expire()
	case OpWaitIRQ:
		wait := time.Duration(req.Ns)
		if wait == 0 {
			wait = s.opt.MaxWait
		}
		c.wait, c.deadline = &req, s.cl.Now()+wait
		s.irqReady(c)
	case OpLoad:
		s.load(c, req)
	case OpTime:
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
	case OpBye:
		s.reply(c, Reply{Seq: req.Seq, Op: req.Op})
		s.release(c)
	default:
		s.reply(c, errReply(req, "unknown op %q", req.Op))
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
	f, err := os.OpenFile(path, os.O_RDWR, 0)
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
	b, err := os.ReadFile(req.Path)
	if err != nil {
		s.reply(c, errReply(req, "load: %v", err))
		return
	}
	rep, until, err := c.soft.Load(req.ONIC, filepath.Base(req.Path), b, *s.opt.Trust)
	if err != nil {
		s.reply(c, errReply(req, "%v", err))
		return
	}
	c.loaded = Reply{Seq: req.Seq, Op: req.Op, Kind: rep.Kind, Slot: rep.Slot, Image: rep.Image, Signer: rep.Signer, ReflashNs: uint64(rep.ReflashNs)}
	c.wait, c.deadline = &req, until
	s.expire()
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
		if w := c.wait; w != nil && (w.Op == OpAdvance || w.Op == OpWaitIRQ || w.Op == OpLoad) && now >= c.deadline {
			c.wait = nil
			if w.Op == OpLoad {
				s.reply(c, c.loaded)
				continue
			}
			s.reply(c, Reply{Seq: w.Seq, Op: w.Op})
		}
	}
}

// allWaiting reports whether every client that has said hello is
// waiting on the emulator (and there is one).
func (s *Server) allWaiting() bool {
	n := 0
	for _, c := range s.clients {
		if c.hello && !c.gone {
			if c.wait == nil {
				return false
			}
			n++
		}
	}
	return n > 0
}

// run lets simulated time pass in lock-step, up to the earliest deadline
// of the waiting clients, or until an event answers one of them.
func (s *Server) run() {
	target := time.Duration(-1)
	for _, c := range s.clients {
		if c.hello && !c.gone && c.wait.Op != OpMMIORead && (target < 0 || c.deadline < target) {
			target = c.deadline
		}
	}
	if target < 0 {
		// Only reads are waiting: their completions are coming; give them
		// at most MaxWait.
		target = s.cl.Now() + s.opt.MaxWait
	}
	before := s.cl.Now()
	s.cl.Advance(target)
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
	close(c.out)
	s.mu.Lock()
	delete(s.conns, c.conn)
	s.mu.Unlock()
}
