// Package build makes firmware images from a firmware spec: it generates
// the card's RTL and its bundle (the static region), each slot's module
// with its kernel in its task shell, measures each kernel with Yosys, and
// assembles them into an unsigned image (package firmware: the format,
// signing and the loader, light enough for a board-side tool, which does
// not import this package's generators and tool runners).
//
// It is part of onic's own machinery, not its stable Go API (see
// docs/architecture.md, "What users may import").
package build

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"onic/desc"
	"onic/designs/bundle"
	hmgr "onic/designs/manager"
	"onic/designs/onic"
	"onic/firmware"
	"onic/hdlgen/check"
	"onic/hdlgen/verilog"
	"onic/kernels"
)

// Measurer returns what a design takes: top is the module, files its
// Verilog. source names the measurement in the manifest.
type Measurer func(top string, files []verilog.File) (need firmware.Resources, source string, err error)

// Yosys is a Measurer running Yosys's synth_xilinx (hdlgen/check). It
// keeps each result in cacheDir under the SHA-256 of the Verilog, so an
// unchanged kernel is synthesised once (empty cacheDir: no cache).
func Yosys(cacheDir string) Measurer { return YosysTelling(cacheDir, nil) }

// YosysTelling is Yosys, calling starting (when not nil) with the module
// before each synthesis the cache does not answer: a cold build takes
// minutes, and a terminal should say so.
func YosysTelling(cacheDir string, starting func(top string)) Measurer {
	return func(top string, files []verilog.File) (firmware.Resources, string, error) {
		const source = "yosys synth_xilinx"
		h := sha256.New()
		for _, f := range files {
			fmt.Fprintf(h, "%s %d\n", f.Name, len(f.Source))
			h.Write(f.Source)
		}
		key := filepath.Join(cacheDir, top+"-"+hex.EncodeToString(h.Sum(nil))[:32]+".json")
		if cacheDir != "" {
			if b, err := os.ReadFile(key); err == nil {
				var r firmware.Resources
				if json.Unmarshal(b, &r) == nil {
					return r, source, nil
				}
			}
		}
		if starting != nil {
			starting(top)
		}
		dir, err := os.MkdirTemp("", "onic-fw")
		if err != nil {
			return firmware.Resources{}, "", err
		}
		defer os.RemoveAll(dir)
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f.Name), f.Source, 0o644); err != nil {
				return firmware.Resources{}, "", err
			}
		}
		synth := check.Synth
		if cacheDir == "" {
			synth = check.SynthFresh // no cache asked for: none at all
		}
		cr, err := synth(dir, top)
		if err != nil {
			return firmware.Resources{}, "", err
		}
		r := firmware.Resources{LUT: cr.LUT + cr.LUTRAM, FF: cr.FF, BRAM: cr.BRAM, DSP: cr.DSP}
		if cacheDir != "" && os.MkdirAll(cacheDir, 0o755) == nil {
			b, _ := json.Marshal(r)
			_ = os.WriteFile(key, b, 0o644) // a cache that cannot be written is only slower
		}
		return r, source, nil
	}
}

// DefaultCacheDir is where the CLI keeps Yosys results: onic/synth in the
// user's cache directory.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "onic", "synth")
}

// Build makes an unsigned image of a checked spec: the spec; the static
// region, the whole card's generated RTL and vendor files
// (bundle.ImageFiles) with each slot's static logic built for the shape
// the spec gives it (one input or two, egress, translated base); and each
// slot's reconfigurable module, holding its kernel in its task shell (or
// nothing), measured by measure. Bitstream sizes are estimated from the
// part until real bitstreams are attached (Attach). A kernel a card slot
// cannot hold (slot.Supports) is refused. The same spec gives the same
// bytes, and specs whose slots have the same shapes the same static
// region, whatever kernels they hold.
func Build(s firmware.Spec, measure Measurer) (*firmware.Image, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	part, _ := firmware.LookupPart(s.Target.Part) // Check found it
	card, err := desc.FromSpec(s)
	if err != nil {
		return nil, err
	}
	d, err := hmgr.Build(onic.ManagerConfig(card))
	if err != nil {
		return nil, fmt.Errorf("manager: %v", err)
	}
	im := &firmware.Image{Manifest: firmware.Manifest{Format: firmware.FormatVersion, Kind: firmware.KindImage, Name: s.Name, Version: s.Version,
		SecurityVersion: uint32(s.SecurityVersion), Part: s.Target.Part, Family: s.Target.Family, FullBytes: part.FullBytes(), FullEstimated: true,
		ManagerDepth: d.Depth, ClockMHz: s.ClockMHz, DataWidth: d.DataWidth}}
	im.AddPayload("spec.json", firmware.PayloadSpec, -1, s.Canonical())
	o := bundle.Options{Part: s.Target.Part, Source: "firmware spec " + s.Name + " " + s.Version, PCIe4: d.DataWidth == 512, Function: card.Function}
	if !o.PCIe4 {
		// A 256-bit manager has no PCIE4 adapters and no card: it ships
		// alone, and each kernel in its task shell.
		return taskShells(im, s, d, o, part, measure)
	}
	// The static region is the whole card (onic_top: AMD's PCIE4 block's
	// interfaces, the manager's host and port pipelines, an optical link
	// layer per port, the kernel slots' static logic); each slot of the
	// spec is a reconfigurable partition whose payload is its module
	// (onic_slot<N>_kernel: the kernel in its task shell, or nothing).
	o.Kernels, o.Regions = card.Kernels, map[int]bundle.Region{}
	for _, sl := range s.Slots {
		o.Regions[sl.Slot] = bundle.Region{LUT: sl.Region.LUT, FF: sl.Region.FF, BRAM: sl.Region.BRAM, DSP: sl.Region.DSP}
	}
	static, slotFiles, err := bundle.ImageFiles(d, o)
	if err != nil {
		return nil, err
	}
	for _, fl := range static {
		im.AddPayload("static/"+fl.Name, firmware.PayloadRTL, -1, fl.Data)
	}
	// A slot the spec leaves out holds nothing, ever: its empty module is
	// part of the static region.
	inSpec := map[int]bool{}
	for _, sl := range s.Slots {
		inSpec[sl.Slot] = true
	}
	for n, fs := range slotFiles {
		if !inSpec[n] {
			for _, fl := range fs {
				im.AddPayload(fmt.Sprintf("slot%d/%s", n, fl.Name), firmware.PayloadRTL, -1, fl.Data)
			}
		}
	}
	im.Manifest.Static = im.StaticID()
	for i, sl := range s.Slots {
		sm := firmware.SlotManifest{Slot: sl.Slot, Region: sl.Region, Bytes: part.RegionBytes(sl.Region), Estimated: true}
		fs := slotFiles[sl.Slot]
		if sl.Kernel != "" {
			k, _ := kernels.Lookup(sl.Kernel) // Check found it
			sm.Kernel, sm.KernelVersion, sm.KernelID, sm.SecurityVersion = k.Name, k.Version, k.ID(), uint32(sl.SecurityVersion)
			if measure != nil {
				var vs []verilog.File
				for _, fl := range fs {
					if strings.HasSuffix(fl.Name, ".v") {
						vs = append(vs, verilog.File{Module: strings.TrimSuffix(fl.Name, ".v"), Name: fl.Name, Source: fl.Data})
					}
				}
				if err := measureSlot(&sm, fmt.Sprintf("slots[%d]", i), fmt.Sprintf("in slot %d's module", sl.Slot), fmt.Sprintf("onic_slot%d_kernel", sl.Slot), vs, measure); err != nil {
					return nil, err
				}
			}
		}
		for _, fl := range fs {
			im.AddPayload(fmt.Sprintf("slot%d/%s", sl.Slot, fl.Name), firmware.PayloadRTL, sl.Slot, fl.Data)
		}
		im.Manifest.Slots = append(im.Manifest.Slots, sm)
	}
	return finish(im, s), nil
}

// finish adds the tenants and seals the image.
func finish(im *firmware.Image, s firmware.Spec) *firmware.Image {
	for _, t := range s.Tenants {
		im.Manifest.Tenants = append(im.Manifest.Tenants, firmware.TenantGrant{Name: t.Name, Slots: slices.Clone(t.Slots)})
	}
	im.Seal()
	return im
}

// measureSlot measures a slot's kernel (files, top module top) into sm,
// and refuses one bigger than its region, as the loader would; at and
// what say where the kernel is, for errors.
func measureSlot(sm *firmware.SlotManifest, at, what, top string, files []verilog.File, measure Measurer) error {
	var err error
	if sm.Need, sm.NeedSource, err = measure(top, files); err != nil {
		return fmt.Errorf("%s %s: measuring: %v", at, sm.Kernel, err)
	}
	if ok, why := sm.Need.Fits(sm.Region); !ok {
		return fmt.Errorf("%s.region: %s %s %s needs %s (by %s): give the slot a bigger region or a smaller kernel",
			at, sm.Kernel, sm.KernelVersion, what, why, sm.NeedSource)
	}
	return nil
}

// taskShells finishes the image of a 256-bit manager, which has no card:
// its bundle is the static region, and each kernel goes in its task shell.
func taskShells(im *firmware.Image, s firmware.Spec, d *hmgr.Design, o bundle.Options, part firmware.Part, measure Measurer) (*firmware.Image, error) {
	static, err := bundle.Files(d, o)
	if err != nil {
		return nil, fmt.Errorf("manager: %v", err)
	}
	for _, fl := range static {
		im.AddPayload("static/"+fl.Name, firmware.PayloadRTL, -1, fl.Data)
	}
	im.Manifest.Static = im.StaticID()
	for i, sl := range s.Slots {
		sm := firmware.SlotManifest{Slot: sl.Slot, Region: sl.Region, Bytes: part.RegionBytes(sl.Region), Estimated: true}
		if sl.Kernel != "" {
			k, _ := kernels.Lookup(sl.Kernel) // Check found it
			m, err := k.TaskModule()
			if err != nil {
				return nil, fmt.Errorf("slots[%d] %s: %v", i, k.Name, err)
			}
			files, err := verilog.EmitDesign(m)
			if err != nil {
				return nil, fmt.Errorf("slots[%d] %s: %v", i, k.Name, err)
			}
			sm.Kernel, sm.KernelVersion, sm.KernelID, sm.SecurityVersion = k.Name, k.Version, k.ID(), uint32(sl.SecurityVersion)
			if measure != nil {
				if err := measureSlot(&sm, fmt.Sprintf("slots[%d]", i), "in its task shell", m.Name(), files, measure); err != nil {
					return nil, err
				}
			}
			for _, fl := range files {
				im.AddPayload(fmt.Sprintf("slot%d/%s", sl.Slot, fl.Name), firmware.PayloadRTL, sl.Slot, fl.Source)
			}
		}
		im.Manifest.Slots = append(im.Manifest.Slots, sm)
	}
	return finish(im, s), nil
}
