package pcie

import (
	"fmt"
	"strings"

	"onic/tlp"
)

// Range is an inclusive address range.
type Range struct {
	Base  uint64 `mapstructure:"base"`
	Limit uint64 `mapstructure:"limit"`
}

// Size returns the number of addresses in r (0 if r is empty).
func (r Range) Size() uint64 {
	if r.Limit < r.Base {
		return 0
	}
	return r.Limit - r.Base + 1
}

// IsZero reports whether r is the zero Range, which configs use for "not
// set, use the default".
func (r Range) IsZero() bool { return r == Range{} }

// Contains reports whether a lies in r.
func (r Range) Contains(a uint64) bool { return a >= r.Base && a <= r.Limit && r.Limit >= r.Base }

// TopologyConfig describes a PCIe hierarchy: one root complex, its root
// ports, and what is plugged into each. It is what a topology YAML file
// holds (docs/pcie.md); every field has a default.
type TopologyConfig struct {
	Name      string       `mapstructure:"name"`
	MMIO32    Range        `mapstructure:"mmio32"` // aperture for non-prefetchable memory
	MMIO64    Range        `mapstructure:"mmio64"` // aperture for 64-bit prefetchable memory
	IO        Range        `mapstructure:"io"`
	RootPorts []PortConfig `mapstructure:"root_ports"`
}

// PortConfig is a downstream-facing port (a root port or a switch
// downstream port) and the device on its link.
type PortConfig struct {
	Name   string        `mapstructure:"name"`
	Gen    int           `mapstructure:"gen"`
	Width  int           `mapstructure:"width"`
	Device *DeviceConfig `mapstructure:"device"`
}

// DeviceConfig is a device on a link: a switch, or an endpoint of a
// built-in kind (onic, gpu, nvme) or a custom one (endpoint).
type DeviceConfig struct {
	Name  string       `mapstructure:"name"`
	Kind  string       `mapstructure:"kind"` // switch, onic, gpu, nvme, endpoint
	Gen   int          `mapstructure:"gen"`
	Width int          `mapstructure:"width"`
	Ports []PortConfig `mapstructure:"ports"` // switch: downstream ports

	// Custom endpoints (kind: endpoint).
	VendorID   uint16      `mapstructure:"vendor_id"`
	DeviceID   uint16      `mapstructure:"device_id"`
	Class      uint32      `mapstructure:"class"`
	BARs       []BARConfig `mapstructure:"bars"`
	MaxPayload int         `mapstructure:"max_payload"`
}

// BARConfig is one BAR of a custom endpoint.
type BARConfig struct {
	Index        int    `mapstructure:"index"`
	Kind         string `mapstructure:"kind"` // mem32, mem64, io
	Prefetchable bool   `mapstructure:"prefetchable"`
	Size         uint64 `mapstructure:"size"`
}

// DefaultTopology is the embedded default: a host whose root port holds a
// Gen3 x16 switch with two O-NICs, a GPU-like and an NVMe-like endpoint.
func DefaultTopology() TopologyConfig {
	return TopologyConfig{
		Name: "host0",
		RootPorts: []PortConfig{{
			Name: "rp0", Gen: 3, Width: 16,
			Device: &DeviceConfig{Name: "sw0", Kind: "switch", Gen: 3, Width: 16, Ports: []PortConfig{
				{Name: "sw0.dp0", Device: &DeviceConfig{Name: "onic0", Kind: "onic"}},
				{Name: "sw0.dp1", Device: &DeviceConfig{Name: "onic1", Kind: "onic"}},
				{Name: "sw0.dp2", Device: &DeviceConfig{Name: "gpu0", Kind: "gpu"}},
				{Name: "sw0.dp3", Width: 4, Device: &DeviceConfig{Name: "nvme0", Kind: "nvme"}},
			}},
		}},
	}
}

// NodeKind is the role of a node in the hierarchy.
type NodeKind uint8

// Node kinds.
const (
	RootComplexNode NodeKind = iota // bus 0: host bridge and root ports
	RootPortNode
	SwitchUpNode
	SwitchDownNode
	EndpointNode
)

// Node is one device of the hierarchy: one or more functions (function 0
// first) and, for a bridge, the devices on its secondary bus.
type Node struct {
	Name     string
	Kind     NodeKind
	Funcs    []*Function
	Parent   *Node
	Children []*Node
	Dev      uint8 // device number on the parent's secondary bus
	Bus      uint8 // bus the node sits on (assigned by enumeration)
	// Link parameters of the node's upstream link.
	Gen   tlp.Gen
	Width int
}

// ID returns the routing ID of function fn of the node.
func (n *Node) ID(fn int) tlp.ID { return tlp.NewID(n.Bus, n.Dev, uint8(fn)) }

// Bridge returns the node's type 1 function, or nil for an endpoint.
func (n *Node) Bridge() *Function {
	if len(n.Funcs) > 0 && n.Funcs[0].Bridge {
		return n.Funcs[0]
	}
	return nil
}

// Build creates the hierarchy a topology describes, not yet enumerated.
// Errors name the field path, such as root_ports[0].device.ports[2].device.kind.
func Build(c TopologyConfig) (*Hierarchy, error) {
	if c.Name == "" {
		c.Name = "host"
	}
	if len(c.RootPorts) == 0 {
		return nil, fmt.Errorf("root_ports: a root complex needs at least one root port")
	}
	if len(c.RootPorts) > 31 {
		return nil, fmt.Errorf("root_ports: %d root ports do not fit on bus 0 (at most 31)", len(c.RootPorts))
	}
	def := DefaultApertures()
	if c.MMIO32.IsZero() {
		c.MMIO32 = def.MMIO32
	}
	if c.MMIO64.IsZero() {
		c.MMIO64 = def.MMIO64
	}
	if c.IO.IsZero() {
		c.IO = def.IO
	}
	for _, a := range []struct {
		name string
		r    Range
	}{{"mmio32", c.MMIO32}, {"mmio64", c.MMIO64}, {"io", c.IO}} {
		if a.r.Size() == 0 {
			return nil, fmt.Errorf("%s: limit %#x is below base %#x", a.name, a.r.Limit, a.r.Base)
		}
	}
	if c.MMIO32.Limit > 0xFFFFFFFF {
		return nil, fmt.Errorf("mmio32: limit %#x is above 4 GiB", c.MMIO32.Limit)
	}
	host, err := NewEndpoint(Config{Name: c.Name + " host bridge", VendorID: ONICVendorID, DeviceID: 0x0200, Class: 0x060000})
	if err != nil {
		return nil, err
	}
	if _, err := host.AddPCIe(PCIeConfig{Type: PortRCiEP, MaxPayload: 256, MaxSpeed: tlp.Gen5, MaxWidth: 16, Speed: tlp.Gen5, Width: 16}); err != nil {
		return nil, err
	}
	root := &Node{Name: c.Name, Kind: RootComplexNode, Funcs: []*Function{host}}
	h := &Hierarchy{Name: c.Name, Root: root, MMIO32: c.MMIO32, MMIO64: c.MMIO64, IO: c.IO}
	names := map[string]string{}
	for i, pc := range c.RootPorts {
		path := fmt.Sprintf("root_ports[%d]", i)
		if pc.Name == "" {
			pc.Name = fmt.Sprintf("%s.rp%d", c.Name, i)
		}
		n, err := buildPort(pc, RootPortNode, uint8(i+1), path, 3, 16, names)
		if err != nil {
			return nil, err
		}
		n.Parent, n.Dev = root, uint8(i+1)
		root.Children = append(root.Children, n)
	}
	return h, nil
}

func checkLink(path string, gen, width, defGen, defWidth int) (tlp.Gen, int, error) {
	if gen == 0 {
		gen = defGen
	}
	if width == 0 {
		width = defWidth
	}
	if !tlp.Gen(gen).Valid() {
		return 0, 0, fmt.Errorf("%s.gen: %d is not a PCIe generation (1-5)", path, gen)
	}
	switch width {
	case 1, 2, 4, 8, 16:
	default:
		return 0, 0, fmt.Errorf("%s.width: x%d is not a link width (1, 2, 4, 8, 16)", path, width)
	}
	return tlp.Gen(gen), width, nil
}

func claimName(names map[string]string, name, path string) error {
	if prev, ok := names[name]; ok {
		return fmt.Errorf("%s.name: %q is already used at %s", path, name, prev)
	}
	names[name] = path
	return nil
}

// buildPort builds a downstream-facing port and the device below it.
func buildPort(pc PortConfig, kind NodeKind, portNum uint8, path string, defGen, defWidth int, names map[string]string) (*Node, error) {
	gen, width, err := checkLink(path, pc.Gen, pc.Width, defGen, defWidth)
	if err != nil {
		return nil, err
	}
	if err := claimName(names, pc.Name, path); err != nil {
		return nil, err
	}
	pt := PortRootPort
	if kind == SwitchDownNode {
		pt = PortDownstream
	}
	f, err := NewSwitchPort(pc.Name, pt, portNum, gen, width)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	n := &Node{Name: pc.Name, Kind: kind, Funcs: []*Function{f}, Gen: gen, Width: width}
	if pc.Device != nil {
		child, err := buildDevice(*pc.Device, path+".device", int(gen), width, names)
		if err != nil {
			return nil, err
		}
		child.Parent, child.Dev = n, 0
		n.Children = []*Node{child}
	}
	return n, nil
}

// builtinKinds lists the device kinds a topology may name.
const builtinKinds = "switch, onic, gpu, nvme, endpoint"

func buildDevice(dc DeviceConfig, path string, portGen, portWidth int, names map[string]string) (*Node, error) {
	if dc.Name == "" {
		return nil, fmt.Errorf("%s.name: every device needs a name", path)
	}
	if err := claimName(names, dc.Name, path); err != nil {
		return nil, err
	}
	// A device trains to the lower of its own and its port's capabilities.
	defGen, defWidth := portGen, portWidth
	switch dc.Kind {
	case "gpu":
		defGen, defWidth = 4, 16
	case "nvme":
		defGen, defWidth = 3, 4
	}
	gen, width, err := checkLink(path, dc.Gen, dc.Width, defGen, defWidth)
	if err != nil {
		return nil, err
	}
	linkGen, linkWidth := min(gen, tlp.Gen(portGen)), min(width, portWidth)
	if dc.Kind != "switch" && len(dc.Ports) > 0 {
		return nil, fmt.Errorf("%s.ports: only a switch has ports", path)
	}
	if dc.Kind != "endpoint" && (dc.VendorID != 0 || dc.DeviceID != 0 || dc.Class != 0 || len(dc.BARs) > 0 || dc.MaxPayload != 0) {
		return nil, fmt.Errorf("%s: vendor_id, device_id, class, bars and max_payload belong to kind endpoint, not %q", path, dc.Kind)
	}
	n := &Node{Name: dc.Name, Kind: EndpointNode, Gen: linkGen, Width: linkWidth}
	switch dc.Kind {
	case "switch":
		n.Kind = SwitchUpNode
		up, err := NewSwitchPort(dc.Name, PortUpstream, 0, gen, width)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		n.Funcs = []*Function{up}
		if len(dc.Ports) == 0 || len(dc.Ports) > 32 {
			return nil, fmt.Errorf("%s.ports: a switch needs 1 to 32 downstream ports, have %d", path, len(dc.Ports))
		}
		for i, pc := range dc.Ports {
			ppath := fmt.Sprintf("%s.ports[%d]", path, i)
			if pc.Name == "" {
				pc.Name = fmt.Sprintf("%s.dp%d", dc.Name, i)
			}
			dp, err := buildPort(pc, SwitchDownNode, uint8(i+1), ppath, int(gen), width, names)
			if err != nil {
				return nil, err
			}
			dp.Parent, dp.Dev = n, uint8(i)
			n.Children = append(n.Children, dp)
		}
	case "onic":
		f, err := NewONIC(dc.Name, DefaultONICInfo, DefaultONICWindowBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		n.Funcs = []*Function{f}
	case "gpu":
		fs, err := newGPU(dc.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		n.Funcs = fs
	case "nvme":
		f, err := newNVMe(dc.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		n.Funcs = []*Function{f}
	case "endpoint":
		f, err := newCustom(dc, path)
		if err != nil {
			return nil, err
		}
		n.Funcs = []*Function{f}
	default:
		return nil, fmt.Errorf("%s.kind: %q is not a device kind (want %s)", path, dc.Kind, builtinKinds)
	}
	// Record the trained link in each function's Link Status.
	for _, f := range n.Funcs {
		f.setLinkStatus(linkGen, linkWidth)
	}
	return n, nil
}

// setLinkStatus sets the negotiated speed and width in Link Status.
func (f *Function) setLinkStatus(g tlp.Gen, width int) {
	off := f.capOffset(CapPCIe, false)
	if off == 0 {
		return
	}
	ls := f.Space.Read16(off + 0x12)
	f.Space.Set16(off+0x12, ls&^0x3FF|uint16(g)|uint16(width)<<4)
}

// capOffset returns the offset of the first capability with the given ID,
// or 0.
func (f *Function) capOffset(id uint16, extended bool) int {
	for _, c := range f.Space.capNames {
		if c.ID == id && c.Extended == extended {
			return c.Offset
		}
	}
	return 0
}

// newGPU builds a GPU-like two-function device: a 3D controller with
// register, frame-buffer and doorbell BARs, and its HD-audio function.
func newGPU(name string) ([]*Function, error) {
	g, err := NewEndpoint(Config{Name: name, VendorID: ONICVendorID, DeviceID: 0x0300, Class: 0x030200,
		InterruptPin: 1, MultiFunction: true, BARs: [6]BAR{
			0: {Kind: BARMem32, Size: 16 << 20},
			1: {Kind: BARMem64, Prefetchable: true, Size: 16 << 30},
			3: {Kind: BARMem64, Prefetchable: true, Size: 32 << 20},
		}})
	if err != nil {
		return nil, err
	}
	a, err := NewEndpoint(Config{Name: name + " audio", VendorID: ONICVendorID, DeviceID: 0x0301, Class: 0x040300,
		InterruptPin: 2, MultiFunction: true, BARs: [6]BAR{0: {Kind: BARMem32, Size: 16 << 10}}})
	if err != nil {
		return nil, err
	}
	for _, f := range []*Function{g, a} {
		if _, err := f.AddPM(); err != nil {
			return nil, err
		}
		if _, err := f.AddMSI(MSIConfig{Vectors: 1, Addr64: true}); err != nil {
			return nil, err
		}
		if _, err := f.AddPCIe(PCIeConfig{Type: PortLegacyEndpoint, MaxPayload: 256, MaxSpeed: tlp.Gen4, MaxWidth: 16,
			Speed: tlp.Gen4, Width: 16, ExtTag10: true}); err != nil {
			return nil, err
		}
	}
	return []*Function{g, a}, nil
}

// newNVMe builds an NVMe-like controller: one 64-bit register BAR holding
// the doorbells and the MSI-X table.
func newNVMe(name string) (*Function, error) {
	f, err := NewEndpoint(Config{Name: name, VendorID: ONICVendorID, DeviceID: 0x0108, Class: 0x010802,
		InterruptPin: 1, BARs: [6]BAR{0: {Kind: BARMem64, Size: 16 << 10}}})
	if err != nil {
		return nil, err
	}
	if _, err := f.AddPM(); err != nil {
		return nil, err
	}
	if _, err := f.AddMSIX(MSIXConfig{Vectors: 32, TableBAR: 0, TableOffset: 0x2000, PBABAR: 0, PBAOffset: 0x3000}); err != nil {
		return nil, err
	}
	if _, err := f.AddPCIe(PCIeConfig{Type: PortEndpoint, MaxPayload: 512, MaxSpeed: tlp.Gen3, MaxWidth: 4, Speed: tlp.Gen3, Width: 4}); err != nil {
		return nil, err
	}
	if _, err := f.AddAER(false); err != nil {
		return nil, err
	}
	return f, nil
}

func newCustom(dc DeviceConfig, path string) (*Function, error) {
	if dc.VendorID == 0 {
		return nil, fmt.Errorf("%s.vendor_id: required for kind endpoint", path)
	}
	c := Config{Name: dc.Name, VendorID: dc.VendorID, DeviceID: dc.DeviceID, Class: dc.Class, InterruptPin: 1}
	for i, b := range dc.BARs {
		bpath := fmt.Sprintf("%s.bars[%d]", path, i)
		if b.Index < 0 || b.Index > 5 {
			return nil, fmt.Errorf("%s.index: %d is not a BAR index (0-5)", bpath, b.Index)
		}
		if c.BARs[b.Index].Kind != BARNone {
			return nil, fmt.Errorf("%s.index: BAR %d is given twice", bpath, b.Index)
		}
		var k BARKind
		switch strings.ToLower(b.Kind) {
		case "mem32":
			k = BARMem32
		case "mem64":
			k = BARMem64
		case "io":
			k = BARIO
		default:
			return nil, fmt.Errorf("%s.kind: %q is not mem32, mem64 or io", bpath, b.Kind)
		}
		c.BARs[b.Index] = BAR{Kind: k, Prefetchable: b.Prefetchable, Size: b.Size}
	}
	f, err := NewEndpoint(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	mps := dc.MaxPayload
	if mps == 0 {
		mps = 256
	}
	if _, err := f.AddPCIe(PCIeConfig{Type: PortEndpoint, MaxPayload: mps, MaxSpeed: tlp.Gen(5), MaxWidth: 16, Speed: tlp.Gen5, Width: 16}); err != nil {
		return nil, fmt.Errorf("%s.max_payload: %v", path, err)
	}
	return f, nil
}
