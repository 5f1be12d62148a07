package firmware

//go:generate go tool msgp -file manifest.go -o manifest_gen.go -tests=false

// Decoding refuses arrays and maps longer than these before allocating
// them, so a corrupt length cannot make the loader allocate gigabytes.
//msgp:limit arrays:4096 maps:64

// The image format (docs/firmware.md): a file is one MessagePack map, the
// envelope, holding the manifest's own MessagePack bytes, the signatures
// over them, and the payloads in the manifest's order. The manifest lists
// every payload with its size and SHA-256, so a signature over the
// manifest covers the payloads too.

// FormatVersion is the manifest format this onic writes (it reads 2 and
// 3). Format 2 added data_width; a format 1 image does not say its
// manager's data path, so it is refused (rebuild it). Format 3's static
// identity covers the hardware payloads only (StaticID).
const FormatVersion = 3

// Magic is the envelope's first field, naming the format.
const Magic = "onic-firmware"

// Manifest kinds.
const (
	KindImage  = "image"  // a whole image: static region and every slot
	KindKernel = "kernel" // one slot's kernel, for partial reconfiguration
)

// Resources are FPGA resources: what a region holds or a kernel needs.
type Resources struct {
	LUT  int `mapstructure:"lut" json:"lut" msg:"lut"`
	FF   int `mapstructure:"ff" json:"ff" msg:"ff"`
	BRAM int `mapstructure:"bram" json:"bram" msg:"bram"` // 36 Kb block RAMs
	DSP  int `mapstructure:"dsp" json:"dsp" msg:"dsp"`
}

// Manifest describes an image: what it is, what it is for, and every
// payload it carries.
type Manifest struct {
	Format  int    `msg:"format" json:"format"`
	Kind    string `msg:"kind" json:"kind"`
	Name    string `msg:"name" json:"name"`
	Version string `msg:"version" json:"version"`
	// SecurityVersion is the static region's anti-rollback number
	// (Spec.SecurityVersion; 0 in images made before it existed). A
	// kernel image carries its kernel's in Slots[0].
	SecurityVersion uint32 `msg:"security_version" json:"security_version,omitempty"`
	Part            string `msg:"part" json:"part"`
	Family          string `msg:"family" json:"family"`
	// Static is the static region's identity: the hex SHA-256 of the
	// target part and the PCIe manager's generated RTL. A kernel image
	// names the static region it was built against and loads only onto
	// an image with the same one.
	Static string `msg:"static" json:"static"`
	// FullBytes is the full bitstream's size: the attached one's, or the
	// part's (FullEstimated).
	FullBytes     int64 `msg:"full_bytes" json:"full_bytes"`
	FullEstimated bool  `msg:"full_estimated" json:"full_estimated"`
	// ManagerDepth is the generated manager's pipeline latency in cycles
	// at ClockMHz, and DataWidth its TLP data path in bits (256 or 512):
	// it takes one beat of that width per cycle.
	ManagerDepth int             `msg:"manager_depth" json:"manager_depth"`
	ClockMHz     float64         `msg:"clock_mhz" json:"clock_mhz"`
	DataWidth    int             `msg:"data_width" json:"data_width"`
	Slots        []SlotManifest  `msg:"slots" json:"slots"`
	Tenants      []TenantGrant   `msg:"tenants" json:"tenants"`
	Payloads     []PayloadRecord `msg:"payloads" json:"payloads"`
}

// SlotManifest is one reconfigurable slot of an image.
type SlotManifest struct {
	Slot   int       `msg:"slot" json:"slot"`
	Region Resources `msg:"region" json:"region"`
	// Kernel, KernelVersion and KernelID (kernels.Kernel.ID) name the
	// kernel bound to the slot; empty for an empty slot.
	Kernel        string `msg:"kernel" json:"kernel,omitempty"`
	KernelVersion string `msg:"kernel_version" json:"kernel_version,omitempty"`
	KernelID      uint32 `msg:"kernel_id" json:"kernel_id,omitempty"`
	// SecurityVersion is the kernel's anti-rollback number
	// (SlotSpec.SecurityVersion).
	SecurityVersion uint32 `msg:"security_version" json:"security_version,omitempty"`
	// Need is what the kernel in its task shell takes, as NeedSource
	// measured it (Yosys synth_xilinx).
	Need       Resources `msg:"need" json:"need"`
	NeedSource string    `msg:"need_source" json:"need_source,omitempty"`
	// Bytes is the slot's partial bitstream: the attached one's size, or
	// the region estimate (Estimated).
	Bytes     int64 `msg:"bytes" json:"bytes"`
	Estimated bool  `msg:"estimated" json:"estimated"`
}

// TenantGrant is a tenant and the slots it may load.
type TenantGrant struct {
	Name  string `msg:"name" json:"name"`
	Slots []int  `msg:"slots" json:"slots"`
}

// Payload kinds.
const (
	PayloadSpec      = "spec"      // the firmware spec, canonical JSON
	PayloadRTL       = "rtl"       // a generated Verilog or vendor file
	PayloadBitstream = "bitstream" // a vendor bitstream attached with onic fw pack
)

// PayloadRecord is one payload as the manifest lists it.
type PayloadRecord struct {
	Name string `msg:"name" json:"name"` // static/onic_pcie_manager.v, slot0/..., slot0.bit
	Kind string `msg:"kind" json:"kind"`
	// Slot is the slot the payload belongs to; -1 for the static region.
	Slot   int    `msg:"slot" json:"slot"`
	Size   int64  `msg:"size" json:"size"`
	SHA256 []byte `msg:"sha256" json:"sha256"`
}

// Signature is an ed25519 signature over the manifest's bytes (prefixed
// with SignContext) and the public key that made it.
type Signature struct {
	Key []byte `msg:"key" json:"key"`
	Sig []byte `msg:"sig" json:"sig"`
}
