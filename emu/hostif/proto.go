package hostif

//go:generate go tool msgp -file proto.go -o proto_gen.go -tests=false
//msgp:limit arrays:8192 maps:32

// Version is the protocol version a hello carries; the server refuses
// any other.
const Version = 1

// MaxFrame is the largest message either side sends: a 4-byte
// big-endian length, then that many bytes of MessagePack.
const MaxFrame = 1 << 20

// Ops, the Op of a Request (docs/hostif.md has the table).
const (
	OpHello     = "hello"      // first message: protocol version, host, DMA memory
	OpConfigRd  = "cfg_read"   // configuration read
	OpConfigWr  = "cfg_write"  // configuration write
	OpMMIORead  = "mmio_read"  // memory read of device space: waits for the data
	OpMMIOWrite = "mmio_write" // posted memory write of device space
	OpAdvance   = "advance"    // let simulated time pass
	OpWaitIRQ   = "wait_irq"   // wait for an interrupt, up to a timeout
	OpTime      = "time"       // read simulated time
	OpLoad      = "load"       // the loader: deploy a firmware image to the host's O-NIC
	OpBye       = "bye"        // release the host
)

// Request is a message from a client. Op says which fields count.
type Request struct {
	Seq uint64 `msg:"seq"` // echoed in the reply
	Op  string `msg:"op"`
	// hello
	Version uint32 `msg:"version,omitempty"`
	Host    string `msg:"host,omitempty"`
	MemPath string `msg:"mem_path,omitempty"` // the shared-memory file
	MemBase uint64 `msg:"mem_base,omitempty"` // its physical address
	// cfg_read, cfg_write
	Segment uint16 `msg:"segment,omitempty"`
	BDF     uint16 `msg:"bdf,omitempty"` // bus << 8 | device << 3 | function
	Reg     uint16 `msg:"reg,omitempty"`
	Size    uint8  `msg:"size,omitempty"`  // 1, 2 or 4
	Value   uint32 `msg:"value,omitempty"` // cfg_write
	// mmio_read, mmio_write
	Addr uint64 `msg:"addr,omitempty"`
	Len  uint32 `msg:"len,omitempty"`  // mmio_read
	Data []byte `msg:"data,omitempty"` // mmio_write
	// advance, wait_irq: simulated nanoseconds
	Ns uint64 `msg:"ns,omitempty"`
	// load: the image file (a path the server can read) and which of the
	// host's O-NICs (empty: its first)
	Path string `msg:"path,omitempty"`
	ONIC string `msg:"onic,omitempty"`
}

// Reply answers one Request. Err is empty on success.
type Reply struct {
	Seq uint64 `msg:"seq"`
	Op  string `msg:"op"`
	Err string `msg:"err,omitempty"`
	// Now is the simulated time in nanoseconds when the reply was made.
	Now uint64 `msg:"now"`
	// hello
	Version  uint32 `msg:"version,omitempty"`
	Mode     string `msg:"mode,omitempty"`
	Segments uint16 `msg:"segments,omitempty"`
	// cfg_read, mmio_read: the value or data; Status is the completion
	// status (0 successful, 1 UR, 2 CRS, 4 CA) and the data all-ones when
	// it is not 0.
	Value     uint32 `msg:"value,omitempty"`
	Status    uint8  `msg:"status,omitempty"`
	Data      []byte `msg:"data,omitempty"`
	LatencyNs uint64 `msg:"latency_ns,omitempty"`
	// wait_irq: the interrupts, oldest first; Lost counts those dropped
	// because the queue was full.
	IRQs []IRQ  `msg:"irqs,omitempty"`
	Lost uint64 `msg:"lost,omitempty"`
	// load: what the loader did — "full" or "kernel", the kernel slot
	// (-1 for a full image), the image's name and version, the signer's
	// key, and how long the O-NIC or slot was out.
	Kind      string `msg:"kind,omitempty"`
	Slot      int    `msg:"slot,omitempty"`
	Image     string `msg:"image,omitempty"`
	Signer    string `msg:"signer,omitempty"`
	ReflashNs uint64 `msg:"reflash_ns,omitempty"`
}

// IRQ is an MSI or MSI-X message the host received.
type IRQ struct {
	At   uint64 `msg:"at"` // simulated ns
	Addr uint64 `msg:"addr"`
	Data uint32 `msg:"data"`
}
