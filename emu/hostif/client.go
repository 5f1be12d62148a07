package hostif

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"onic/pcie"
	"onic/tlp"
)

// Client is a program's connection to an emulator serving the host
// interface: it plays the software of one host. Its calls block until
// the server answers; a Client is for one goroutine at a time.
type Client struct {
	conn    net.Conn
	seq     uint64
	mem     []byte
	memPath string
	buf     []byte
	// Mode and Segments are what the server said at hello.
	Mode     string
	Segments int
}

// ClientOptions say which host to play and what DMA memory to share.
type ClientOptions struct {
	Host string
	// MemBytes of DMA memory at physical address MemBase (0 bytes: none).
	// The memory is a file in MemDir (default /dev/shm if it exists, else
	// the temporary directory), mapped by the client and the server.
	MemBytes int
	MemBase  uint64
	MemDir   string
}

// ErrServer is wrapped by every error the server answered with.
var ErrServer = errors.New("server")

// Dial connects to the server at socket and says hello.
func Dial(socket string, o ClientOptions) (*Client, error) {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn}
	req := Request{Op: OpHello, Version: Version, Host: o.Host, MemBase: o.MemBase}
	if o.MemBytes > 0 {
		if err := c.share(o); err != nil {
			conn.Close()
			return nil, err
		}
		req.MemPath = c.memPath
	}
	r, err := c.call(req)
	if err != nil {
		c.unshare()
		conn.Close()
		return nil, err
	}
	c.Mode, c.Segments = r.Mode, int(r.Segments)
	return c, nil
}

// share makes and maps the DMA memory file.
func (c *Client) share(o ClientOptions) error {
	dir := o.MemDir
	if dir == "" {
		dir = os.TempDir()
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			dir = "/dev/shm"
		}
	}
	f, err := os.CreateTemp(dir, "onic-host-"+o.Host+"-*.mem")
	if err != nil {
		return err
	}
	defer f.Close()
	c.memPath = f.Name()
	if err := f.Truncate(int64(o.MemBytes)); err != nil {
		c.unshare()
		return err
	}
	if c.mem, err = syscall.Mmap(int(f.Fd()), 0, o.MemBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED); err != nil {
		c.unshare()
		return err
	}
	return nil
}

func (c *Client) unshare() {
	if c.mem != nil {
		syscall.Munmap(c.mem)
		c.mem = nil
	}
	if c.memPath != "" {
		os.Remove(filepath.Clean(c.memPath))
		c.memPath = ""
	}
}

// Mem is the DMA memory, shared with the emulator: what devices write
// appears here, and what the program writes here devices read.
func (c *Client) Mem() []byte { return c.mem }

// Close says goodbye and releases the host and the memory.
func (c *Client) Close() error {
	_, err := c.call(Request{Op: OpBye})
	c.conn.Close()
	c.unshare()
	return err
}

// call sends req and reads its reply.
func (c *Client) call(req Request) (Reply, error) {
	c.seq++
	req.Seq = c.seq
	b, err := req.MarshalMsg(append(c.buf[:0], 0, 0, 0, 0))
	if err != nil {
		return Reply{}, err
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.buf = b
	if _, err := c.conn.Write(b); err != nil {
		return Reply{}, err
	}
	r, err := ReadReply(c.conn)
	if err != nil {
		return Reply{}, err
	}
	if r.Seq != req.Seq {
		return r, fmt.Errorf("reply %d to request %d", r.Seq, req.Seq)
	}
	if r.Err != "" {
		return r, fmt.Errorf("%w: %s", ErrServer, r.Err)
	}
	return r, nil
}

// ReadReply reads one framed reply from r.
func ReadReply(r io.Reader) (Reply, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Reply{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return Reply{}, fmt.Errorf("reply of %d bytes: more than %d", n, MaxFrame)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return Reply{}, err
	}
	var rep Reply
	_, err := rep.UnmarshalMsg(b)
	return rep, err
}

// ConfigRead reads size bytes of configuration register reg of function
// id in segment seg; an absent function reads all-ones with status UR.
func (c *Client) ConfigRead(seg int, id tlp.ID, reg, size int) (uint32, tlp.Status, error) {
	r, err := c.call(Request{Op: OpConfigRd, Segment: uint16(seg), BDF: uint16(id), Reg: uint16(reg), Size: uint8(size)})
	return r.Value, tlp.Status(r.Status), err
}

// ConfigWrite writes size bytes of v to configuration register reg.
func (c *Client) ConfigWrite(seg int, id tlp.ID, reg, size int, v uint32) (tlp.Status, error) {
	r, err := c.call(Request{Op: OpConfigWr, Segment: uint16(seg), BDF: uint16(id), Reg: uint16(reg), Size: uint8(size), Value: v})
	return tlp.Status(r.Status), err
}

// BAR returns the address enumeration gave BAR n (0 to 5) of function
// id in segment seg, from its configuration space as a driver finds it
// (PCIe Base, Base Address Registers: a 64-bit memory BAR takes the next
// register for its upper half). It fails for an absent function, an I/O
// BAR, the upper half of a 64-bit BAR, or a BAR that was not assigned.
func (c *Client) BAR(seg int, id tlp.ID, n int) (uint64, error) {
	if n < 0 || n > 5 {
		return 0, fmt.Errorf("BAR %d: a function has BARs 0 to 5", n)
	}
	reg := func(i int) (uint32, error) {
		v, st, err := c.ConfigRead(seg, id, 0x10+4*i, 4)
		if err == nil && st != tlp.StatusSC {
			err = fmt.Errorf("%s: configuration read of BAR %d: %v (no such function)", id, i, st)
		}
		return v, err
	}
	lo, err := reg(n)
	if err != nil {
		return 0, err
	}
	if lo&1 != 0 {
		return 0, fmt.Errorf("%s: BAR %d is an I/O BAR", id, n)
	}
	if n > 0 {
		if prev, err := reg(n - 1); err == nil && prev&1 == 0 && prev>>1&3 == 2 {
			return 0, fmt.Errorf("%s: BAR %d is the upper half of 64-bit BAR %d", id, n, n-1)
		}
	}
	addr := uint64(lo &^ 0xF)
	if lo>>1&3 == 2 { // 64-bit
		if n == 5 {
			return 0, fmt.Errorf("%s: BAR 5 says it is 64-bit, with no register after it", id)
		}
		hi, err := reg(n + 1)
		if err != nil {
			return 0, err
		}
		addr |= uint64(hi) << 32
	}
	if addr == 0 {
		return 0, fmt.Errorf("%s: BAR %d is not assigned", id, n)
	}
	return addr, nil
}

// ONICs scans segment seg's configuration space as an operating system
// does (function 0 of every device on every bus) and returns the
// functions whose vendor and device IDs are the O-NIC's
// (pcie.ONICVendorID, pcie.ONICDeviceID), in bus order: what a driver's
// probe finds. Pass one to BAR for its register BAR (0), window BAR (2)
// or LUT BAR (4).
func (c *Client) ONICs(seg int) ([]tlp.ID, error) {
	var ids []tlp.ID
	for bus := range 256 {
		for dev := range 32 {
			id := tlp.NewID(uint8(bus), uint8(dev), 0)
			v, st, err := c.ConfigRead(seg, id, 0, 4)
			if err != nil {
				return nil, err
			}
			if st == tlp.StatusSC && v == uint32(pcie.ONICDeviceID)<<16|uint32(pcie.ONICVendorID) {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}

// Read reads n bytes of device memory at addr and waits for them: the
// data (all-ones unless the status is successful) and the status.
func (c *Client) Read(addr uint64, n int) ([]byte, tlp.Status, error) {
	r, err := c.call(Request{Op: OpMMIORead, Addr: addr, Len: uint32(n)})
	return r.Data, tlp.Status(r.Status), err
}

// Read32 reads a 32-bit register.
func (c *Client) Read32(addr uint64) (uint32, error) {
	b, _, err := c.Read(addr, 4)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("read of 4 bytes returned %d", len(b))
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Write writes data to device memory at addr (posted: it returns once
// the write is on its way).
func (c *Client) Write(addr uint64, data []byte) error {
	_, err := c.call(Request{Op: OpMMIOWrite, Addr: addr, Data: data})
	return err
}

// Write32 writes a 32-bit register.
func (c *Client) Write32(addr uint64, v uint32) error {
	return c.Write(addr, binary.LittleEndian.AppendUint32(nil, v))
}

// Advance lets d of simulated time pass and returns the time reached.
func (c *Client) Advance(d time.Duration) (time.Duration, error) {
	r, err := c.call(Request{Op: OpAdvance, Ns: uint64(d)})
	return time.Duration(r.Now), err
}

// WaitIRQ waits up to timeout of simulated time (0: the server's
// longest) for interrupts and returns them (none: it timed out) and how
// many were lost to a full queue.
func (c *Client) WaitIRQ(timeout time.Duration) ([]IRQ, uint64, error) {
	r, err := c.call(Request{Op: OpWaitIRQ, Ns: uint64(timeout)})
	return r.IRQs, r.Lost, err
}

// Now reads simulated time.
func (c *Client) Now() (time.Duration, error) {
	r, err := c.call(Request{Op: OpTime})
	return time.Duration(r.Now), err
}

// Load hands the firmware image file at path (a path the server can read)
// to the loader of O-NIC onic of the client's host (empty: its first) and
// waits, in simulated time, until the reflash is over. The reply says
// what was loaded (Kind, Slot, Image, Signer, ReflashNs); a refused image
// is an error naming the rule.
func (c *Client) Load(onic, path string) (Reply, error) {
	return c.call(Request{Op: OpLoad, ONIC: onic, Path: path})
}
