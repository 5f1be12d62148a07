package bundle_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"onic/desc"
	"onic/designs/bundle"
	"onic/designs/internal/card"
	"onic/designs/internal/optlink"
	"onic/designs/manager"
	"onic/designs/onic"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/pcie"
	pmgr "onic/pcie/manager"
	"onic/testbenches/golden"
	"onic/testbenches/tools"
)

func design(t testing.TB, c pmgr.Config) *manager.Design {
	t.Helper()
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, 16<<30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := manager.Build(manager.Config{Manager: c, BARs: f.MemorySizes()})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGolden: every file generated for the default scenario's O-NIC
// matches its golden copy (go test -update rewrites them), and a second
// generation is byte-identical.
func TestGolden(t *testing.T) {
	d := design(t, scenario.TwoParty().ONICs[0].Manager)
	o := bundle.Options{Part: firmware.DefaultPart, Source: "the default scenario (two-party), O-NIC onicA"}
	fs, err := bundle.Files(d, o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bundle.Files(design(t, scenario.TwoParty().ONICs[0].Manager), o)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		golden.Check(t, filepath.Join("testdata", "default", f.Name), string(f.Data))
		if string(again[i].Data) != string(f.Data) {
			t.Errorf("%s differs between two generations", f.Name)
		}
		if strings.Contains(string(f.Data), "/work/") || strings.Contains(string(f.Data), os.Getenv("HOME")+"/") {
			t.Errorf("%s names a path of this machine", f.Name)
		}
	}
}

// TestGoldenCard: every file onic hdl gen writes for the default
// scenario's O-NIC as the whole card (onic_top and every module under it,
// build.tcl, the constraints, the register map) matches its golden copy
// in testdata/card, and a second generation is byte-identical: a change to
// any generated module shows in review as a diff of the Verilog.
func TestGoldenCard(t *testing.T) {
	gen := func() []bundle.File { return defaultCardFiles(t, func(*bundle.Options) {}) }
	fs, again := gen(), gen()
	if len(fs) < 30 || len(fs) != len(again) {
		t.Fatalf("%d files, then %d", len(fs), len(again))
	}
	for i, f := range fs {
		golden.Check(t, filepath.Join("testdata", "card", f.Name), string(f.Data))
		if string(again[i].Data) != string(f.Data) {
			t.Errorf("%s differs between two generations", f.Name)
		}
	}
}

// defaultCardFiles are the files onic hdl gen writes for the default
// scenario's O-NIC as the whole card, with the options more sets.
func defaultCardFiles(t *testing.T, more func(*bundle.Options)) []bundle.File {
	t.Helper()
	o, err := desc.FromScenario(scenario.TwoParty().ONICs[0], "onics[0]")
	if err != nil {
		t.Fatal(err)
	}
	d, err := manager.Build(onic.ManagerConfig(o))
	if err != nil {
		t.Fatal(err)
	}
	opts := bundle.Options{Part: firmware.DefaultPart, Source: "the default scenario (two-party), O-NIC onicA",
		PCIe4: true, Function: o.Function, Kernels: o.Kernels}
	more(&opts)
	fs, err := bundle.Files(d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestGoldenRuleSlots: the register header and register document of an
// O-NIC with access rule slots (the host-interface scenario's onicA)
// carry the ACL registers, their fields and the domains' indices.
func TestGoldenRuleSlots(t *testing.T) {
	c := scenario.HostInterface().ONICs[0].Manager
	if c.Access.RuleSlots == 0 {
		t.Fatal("the host-interface scenario's O-NIC has no rule slots")
	}
	fs, err := bundle.Files(design(t, c), bundle.Options{Part: firmware.DefaultPart, Source: "the host-interface scenario, O-NIC onicA"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fs {
		if strings.HasSuffix(f.Name, ".h") || f.Name == "registers.md" {
			golden.Check(t, filepath.Join("testdata", "rule-slots", f.Name), string(f.Data))
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d of the files are the header and the register document, want 2", n)
	}
}

// TestTools: the generated Verilog of the default and the large
// configuration, and of one with access rule slots, passes Verilator -Wall
// and Icarus without a message, and the C header compiles.
func TestTools(t *testing.T) {
	verilator := tools.Require(t, "verilator")
	iverilog := tools.Require(t, "iverilog")
	for name, c := range map[string]pmgr.Config{"default": scenario.TwoParty().ONICs[0].Manager, "large": manager.Large(),
		"rule-slots": scenario.HostInterface().ONICs[0].Manager} {
		dir := t.TempDir()
		paths, err := bundle.Write(dir, design(t, c), bundle.Options{Part: firmware.DefaultPart})
		if err != nil {
			t.Fatal(err)
		}
		var vs []string
		for _, p := range paths {
			if isSource(p) {
				vs = append(vs, p)
			}
		}
		if len(vs) < 4 {
			t.Fatalf("%s: %d Verilog files; want the top, windows, access and skid modules", name, len(vs))
		}
		lint := append([]string{"--lint-only", "-Wall", "--top-module", "onic_pcie_manager"}, vs...)
		if out, err := exec.Command(verilator, lint...).CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s: verilator: %v\n%s", name, err, out)
		}
		if out, err := exec.Command(iverilog, append([]string{"-g2005", "-Wall", "-o", filepath.Join(dir, "a.out")}, vs...)...).CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s: iverilog: %v\n%s", name, err, out)
		}
		if cc, err := exec.LookPath("cc"); err == nil {
			src := filepath.Join(dir, "use.c")
			os.WriteFile(src, []byte("#include \"onic_pcie_manager_regs.h\"\nint main(void) { return ONIC_PCIE_MANAGER_COUNT_OK == 0x100u ? 0 : 1; }\n"), 0o644)
			if out, err := exec.Command(cc, "-Wall", "-Werror", "-I", dir, "-o", filepath.Join(dir, "use"), src).CombinedOutput(); err != nil {
				t.Errorf("%s: the register header does not compile: %v\n%s", name, err, out)
			} else if err := exec.Command(filepath.Join(dir, "use")).Run(); err != nil {
				t.Errorf("%s: COUNT_OK is not at 0x100", name)
			}
		}
	}
}

// TestGoldenLarge keeps the large preset's Verilog (64 windows, a
// 1024-entry LUT, eight domains) as golden files, so a change to the
// emitter or the generator shows in review as a diff of what an FPGA
// engineer reads. Run with -update to rewrite them.
func TestGoldenLarge(t *testing.T) {
	fs, err := bundle.Files(design(t, manager.Large()), bundle.Options{Part: firmware.DefaultPart, Source: "the large preset"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fs {
		if strings.HasSuffix(f.Name, ".v") {
			golden.Check(t, filepath.Join("testdata", "large", f.Name), string(f.Data))
			n++
		}
	}
	if n < 4 {
		t.Fatalf("%d Verilog files", n)
	}
}

// TestXDCDirections: every port of the design but the clock is
// constrained once, as an input delay if it is an input and an output
// delay if it is an output, by its own name (no wildcard that could catch
// a port of the other direction).
func TestXDCDirections(t *testing.T) {
	for name, c := range map[string]pmgr.Config{"default": scenario.TwoParty().ONICs[0].Manager, "large": manager.Large(),
		"rule-slots": scenario.HostInterface().ONICs[0].Manager, "pcie4": scenario.TwoParty().ONICs[0].Manager} {
		d := design(t, c)
		fs, err := bundle.Files(d, bundle.Options{Part: firmware.DefaultPart, PCIe4: name == "pcie4", Function: onicFunction(t)})
		if err != nil {
			t.Fatal(err)
		}
		top := d.Module
		if name == "pcie4" {
			link, err := optlink.Module(optlink.Config{})
			if err != nil {
				t.Fatal(err)
			}
			parts, err := card.PartsOf(d, link, onicFunction(t))
			if err != nil {
				t.Fatal(err)
			}
			if parts.Slots, err = card.SlotsOf(d, nil); err != nil {
				t.Fatal(err)
			}
			top = card.Build("onic_card", parts)
		}
		var xdc string
		for _, f := range fs {
			if strings.HasSuffix(f.Name, ".xdc") {
				xdc = string(f.Data)
			}
		}
		got := map[string]string{}
		for _, line := range strings.Split(xdc, "\n") {
			dir := ""
			switch {
			case strings.HasPrefix(line, "set_input_delay"):
				dir = "in"
			case strings.HasPrefix(line, "set_output_delay"):
				dir = "out"
			default:
				continue
			}
			list := line[strings.Index(line, "{")+1 : strings.Index(line, "}")]
			for _, p := range strings.Fields(list) {
				p = strings.TrimSuffix(p, "[*]")
				if strings.Contains(p, "*") {
					t.Errorf("%s: wildcard %q", name, p)
				}
				if prev, dup := got[p]; dup {
					t.Errorf("%s: %s constrained twice (%s and %s)", name, p, prev, dir)
				}
				got[p] = dir
			}
		}
		for _, p := range top.Ports() {
			want := "in"
			if p.Output {
				want = "out"
			}
			if got[p.Name] != want {
				t.Errorf("%s: port %s (%s) has a %q delay", name, p.Name, want, got[p.Name])
			}
		}
		rst := "rst"
		extra := 1 // the reset
		if name == "pcie4" {
			rst = "user_reset" // onic_top's, by the PCIe block's name
			// onic_top's own: each port's receive crossing's overflow
			// flag (the lane clocks are clocks, not delays).
			for _, pt := range card.Ports {
				if got[pt.Prefix+"_rx_overflow"] != "out" {
					t.Errorf("%s: %s_rx_overflow has a %q delay", name, pt.Prefix, got[pt.Prefix+"_rx_overflow"])
				}
				extra++
			}
		}
		if got[rst] != "in" || len(got) != len(top.Ports())+extra {
			t.Errorf("%s: %d constrained ports for %d ports and %d of the top's own", name, len(got), len(top.Ports()), extra)
		}
	}
}

// TestPCIe4Bundle: with PCIe4 set, the bundle's top is onic_top, the
// manager behind AMD's PCIE4 completer adapters with an optical link
// layer on each port — its Verilog, the adapters', the links' and the
// manager's, a constraints file and a build script for that top which
// creates the PCIE4 IP as the O-NIC's function describes it — and the
// whole passes Verilator -Wall and Icarus without a message.
func TestPCIe4Bundle(t *testing.T) {
	dir := t.TempDir()
	paths, err := bundle.Write(dir, design(t, scenario.TwoParty().ONICs[0].Manager), bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: onicFunction(t)})
	if err != nil {
		t.Fatal(err)
	}
	var vs, names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
		if isSource(p) {
			vs = append(vs, p)
		}
	}
	for _, want := range []string{"onic_top.v", "onic_card.v", "onic_pcie_manager_port_in.v", "onic_pcie4_cq.v", "onic_pcie_manager.v", "onic_pcie4_cc.v",
		"onic_pcie4_rq.v", "onic_pcie4_rc.v", "onic_pcie_manager_regbar.v",
		"onic_optlink.v", "onic_optlink_framer.v", "onic_optlink_deframer.v", "onic_top.xdc"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s in %v", want, names)
		}
	}
	if filepath.Base(vs[0]) != "onic_top.v" {
		t.Errorf("the first file is %s, not the top", vs[0])
	}
	// The card's counters are in the register map it documents.
	h, err := os.ReadFile(filepath.Join(dir, "onic_pcie_manager_regs.h"))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "registers.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#define ONIC_PCIE_MANAGER_CARD_PORT_IN_COUNT_OK_TOTAL 0xD000u", "#define ONIC_PCIE_MANAGER_CARD_PORT_A_CRC_ERRORS 0xD"} {
		if !strings.Contains(string(h), want) {
			t.Errorf("the C header has no %q", want)
		}
	}
	if !strings.Contains(string(md), "| 0xD000 | port_in_count_ok_total |") || !strings.Contains(string(md), "| port_b_naks |") {
		t.Errorf("registers.md does not list the card's counters:\n%s", md)
	}
	// The README and the XDC describe the card, not the manager alone.
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# onic_top\n", "`user_clk` (250 MHz", "`port_<x>_tx_clk`", "`pcie_tfc_nph_av`", "## In Vivado", "- `port_a_crc_errors`"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("the card's README has no %q", want)
		}
	}
	if strings.Contains(string(readme), "one clock (clk)") {
		t.Error("the card's README describes the manager's one clock")
	}
	if x, err := os.ReadFile(filepath.Join(dir, "onic_top.xdc")); err != nil || !strings.HasPrefix(string(x), "# Constraints template for onic_top,") {
		t.Errorf("onic_top.xdc names another top: %v %.80s", err, x)
	}
	tcl, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
	if err != nil || !strings.Contains(string(tcl), "synth_design -top onic_top ") {
		t.Errorf("build.tcl does not build the top: %v\n%s", err, tcl)
	}
	// The IP as the default O-NIC's function gives it: Gen3 x16, 512 bits,
	// client tags, its IDs and three 64-bit BARs (64 KiB registers, the
	// 16 GiB prefetchable window BAR, the 32 MiB prefetchable LUT BAR).
	for _, want := range []string{"create_ip -name pcie4_uscale_plus", "CONFIG.PL_LINK_CAP_MAX_LINK_WIDTH {X16}",
		"CONFIG.axisten_if_width {512_bit}", "CONFIG.axisten_if_enable_client_tag {true}", "CONFIG.vendor_id {0ace}",
		"CONFIG.PF0_DEVICE_ID {0001}", "CONFIG.PF0_CLASS_CODE {028000}",
		"CONFIG.pf0_bar0_64bit {true}", "CONFIG.pf0_bar0_prefetchable {false}", "CONFIG.pf0_bar0_scale {Kilobytes}", "CONFIG.pf0_bar0_size {64}",
		"CONFIG.pf0_bar2_prefetchable {true}", "CONFIG.pf0_bar2_scale {Gigabytes}", "CONFIG.pf0_bar2_size {16}",
		"CONFIG.pf0_bar4_scale {Megabytes}", "CONFIG.pf0_bar4_size {32}", "synth_ip [get_ips onic_pcie4]",
		// MSI-X External: 64 vectors, the table and PBA in BAR0 (a 64-bit
		// BAR) where the register block keeps them.
		"CONFIG.MSI_X_OPTIONS {MSI-X_External}", "CONFIG.PF0_MSIX_CAP_TABLE_SIZE {03F}", "CONFIG.PF0_MSIX_CAP_TABLE_BIR {BAR_1:0}",
		"CONFIG.PF0_MSIX_CAP_TABLE_OFFSET {00008000}", "CONFIG.PF0_MSIX_CAP_PBA_OFFSET {0000C000}",
		// The optical ports' transceivers: 16 GTY channels a port at
		// 8.25 Gb/s with the asynchronous 64B/66B gearbox on the 4-byte
		// interface (the generated wrapper's, gty/), on placeholder
		// channels.
		"create_ip -name gtwizard_ultrascale", "set gt_channels(port_b) {X0Y16 ", "CONFIG.GT_TYPE {GTY}",
		"CONFIG.TX_LINE_RATE {8.25}", "CONFIG.RX_DATA_DECODING {64B66B_ASYNC}", "CONFIG.TX_USER_DATA_WIDTH {32}",
		"CONFIG.RX_INT_DATA_WIDTH {32}", "GTY wrapper between each IP and onic_top's"} {
		if !strings.Contains(string(tcl), want) {
			t.Errorf("build.tcl has no %q", want)
		}
	}
	lintTop(t, dir, vs)
	// The GTY wrapper for the lane plan (16 lanes: 32 bits a lane, 512
	// a cycle), for the user's board top.
	for _, name := range []string{"onic_gty_tx.v", "onic_gty_rx.v"} {
		v, err := os.ReadFile(filepath.Join(dir, bundle.GTYDir, name))
		if err != nil || !strings.Contains(string(v), "[511:0] gt_") {
			t.Errorf("%s/%s: %v, or not 16 lanes of 32 bits", bundle.GTYDir, name, err)
		}
	}
	// It runs on the block's user_clk and active-high user_reset.
	top, err := os.ReadFile(filepath.Join(dir, "onic_top.v"))
	if err != nil || !strings.Contains(string(top), "input  wire user_clk,") || !strings.Contains(string(top), ".rst(user_reset)") {
		t.Errorf("onic_top does not run on user_clk and user_reset: %v\n%s", err, top)
	}
	// Its bus number comes from the block, not from a port of its own.
	if !strings.Contains(string(top), "input  wire [7:0] cfg_bus_number,") || strings.Contains(string(top), "self_id") {
		t.Errorf("onic_top does not take its ID from the block's cfg_bus_number:\n%s", top)
	}
	x, err := os.ReadFile(filepath.Join(dir, "onic_top.xdc"))
	if err != nil || !strings.Contains(string(x), "[get_ports user_clk]") {
		t.Errorf("onic_top.xdc has no user_clk clock: %v", err)
	}
}

// onicFunction is the default O-NIC's host-facing function.
func onicFunction(t testing.TB) *pcie.Function {
	f, err := pcie.NewONIC("onic", pcie.DefaultONICInfo, pcie.DefaultONICWindowBytes)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPortRanges: relay and kernel_in ranges act on TLPs from the optical
// ports, so the manager alone refuses them (naming both) and the whole
// card, which has the port pipeline, takes them and lints clean.
func TestPortRanges(t *testing.T) {
	c := scenario.TwoParty().ONICs[0].Manager
	c.Relay = []pmgr.RelayConfig{{From: "port-a", Base: 0x100000000, Size: 0x100000}}
	c.KernelIn = []pmgr.KernelInConfig{{From: "port-b", Base: 0x100200000, Size: 0x100000, Slot: 1}}
	d := design(t, c)
	if _, err := bundle.Files(d, bundle.Options{Part: firmware.DefaultPart}); err == nil || !strings.Contains(err.Error(), "relay, kernel_in") {
		t.Fatalf("the manager alone with relay and kernel_in: %v", err)
	}
	fs, err := bundle.Files(d, bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: onicFunction(t)})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fs {
		found = found || f.Name == "onic_pcie_manager_port_in.v" && strings.Contains(string(f.Data), "pin_relay")
	}
	if !found {
		t.Fatal("the card has no port pipeline with the relay range")
	}
}

// TestPCIe4Configurations: the whole card builds, and Verilator -Wall and
// Icarus pass it without a message, for the host-interface scenario's
// O-NIC (with run-time access rule slots, which the port pipeline takes
// as inputs) and for the large preset, as for the default one.
func TestPCIe4Configurations(t *testing.T) {
	for name, c := range map[string]pmgr.Config{"host-interface": scenario.HostInterface().ONICs[0].Manager, "large": manager.Large()} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			paths, err := bundle.Write(dir, design(t, c), bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: onicFunction(t)})
			if err != nil {
				t.Fatal(err)
			}
			var vs []string
			for _, p := range paths {
				if isSource(p) {
					vs = append(vs, p)
				}
			}
			lintTop(t, dir, vs)
		})
	}
}

// isSource says whether a generated file is Verilog a simulator reads:
// not the black boxes under dfx/ that the Vivado build uses for the
// reconfigurable partitions (each module's own file is there too).
func isSource(p string) bool {
	dir := filepath.Base(filepath.Dir(filepath.FromSlash(p)))
	return strings.HasSuffix(p, ".v") && dir != bundle.DFXDir && dir != bundle.GTYDir
}

// TestStandIns: a card presenting a lent GPU as the block's physical
// function 1 configures the IP with that function's IDs, class and BARs
// (build.tcl), carries the CQ's target function to the manager, and is
// clean under Verilator -Wall and Icarus.
func TestStandIns(t *testing.T) {
	gpu, err := pcie.NewEndpoint(pcie.Config{Name: "gpu", VendorID: 0x10de, DeviceID: 0x1db4, Revision: 0xa1, Class: 0x030200,
		SubsystemVendorID: 0x10de, SubsystemID: 0x1212, BARs: [6]pcie.BAR{
			0: {Kind: pcie.BARMem32, Size: 16 << 20},
			1: {Kind: pcie.BARMem64, Size: 16 << 30, Prefetchable: true}}})
	if err != nil {
		t.Fatal(err)
	}
	plain := gpu.StandIn("gpu-without-msix")
	if _, err := gpu.AddMSIX(pcie.MSIXConfig{Vectors: 32, TableBAR: 0, TableOffset: 0x1_0000, PBABAR: 0, PBAOffset: 0x1_1000}); err != nil {
		t.Fatal(err)
	}
	f := onicFunction(t)
	msi := &pmgr.MSIWindow{HostBase: 0xFEE0_0000, Size: 1 << 20, RemoteBase: 0x38_4000_0000}
	si := manager.StandIn{Port: "port-b", Function: gpu.StandIn("gpu-stand-in"), Remote: [6]uint64{0: 0xE000_0000, 1: 0x38_0000_0000}, MSI: msi}
	d, err := manager.Build(manager.Config{Manager: scenario.TwoParty().ONICs[0].Manager, BARs: f.MemorySizes(), StandIns: []manager.StandIn{si}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := bundle.Write(dir, d, bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: f})
	if err != nil {
		t.Fatal(err)
	}
	tcl, err := os.ReadFile(filepath.Join(dir, "build.tcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CONFIG.TL_PF_ENABLE_REG {2}", "CONFIG.pf1_vendor_id {10de}", "CONFIG.PF1_DEVICE_ID {1db4}",
		"CONFIG.PF1_REVISION_ID {a1}", "CONFIG.PF1_CLASS_CODE {030200}", "CONFIG.PF1_SUBSYSTEM_ID {1212}",
		"CONFIG.pf1_bar0_64bit {false}", "CONFIG.pf1_bar0_scale {Megabytes}", "CONFIG.pf1_bar0_size {16}",
		"CONFIG.pf1_bar1_64bit {true}", "CONFIG.pf1_bar1_prefetchable {true}", "CONFIG.pf1_bar1_scale {Gigabytes}", "CONFIG.pf1_bar1_size {16}",
		"CONFIG.pf0_bar2_size {16}",
		// MSI-X external, where the device keeps its table (the loan has
		// an MSI window).
		"CONFIG.pf1_msix_enabled {true}", "CONFIG.PF1_MSIX_CAP_TABLE_SIZE {01F}", "CONFIG.PF1_MSIX_CAP_TABLE_BIR {BAR_0}",
		"CONFIG.PF1_MSIX_CAP_TABLE_OFFSET {00010000}", "CONFIG.PF1_MSIX_CAP_PBA_BIR {BAR_0}", "CONFIG.PF1_MSIX_CAP_PBA_OFFSET {00011000}"} {
		if !strings.Contains(string(tcl), want) {
			t.Errorf("build.tcl has no %q", want)
		}
	}
	card, err := os.ReadFile(filepath.Join(dir, "onic_card.v"))
	if err != nil || !strings.Contains(string(card), ".s_host_tlp_func(") {
		t.Errorf("the card does not give the manager the function the block matched: %v", err)
	}
	var vs []string
	for _, p := range paths {
		if isSource(p) {
			vs = append(vs, p)
		}
	}
	lintTop(t, dir, vs)
	// Refused: more stand-ins than the block has functions, a port that is
	// not one, a BAR not aligned to its size, a device with no memory BAR.
	none, _ := pcie.NewEndpoint(pcie.Config{Name: "none", VendorID: 1, DeviceID: 1})
	for _, c := range []struct {
		sis  []manager.StandIn
		want string
	}{
		{[]manager.StandIn{si, si, si, si}, "stand_ins: 4; the card's PCIe block has functions for 3"},
		{[]manager.StandIn{{Port: "host", Function: si.Function, Remote: si.Remote}}, `stand_ins[0].port: "host" must be port-a or port-b`},
		{[]manager.StandIn{{Port: "port-a", Function: si.Function, Remote: [6]uint64{0: 0xE000_1000}}}, "stand_ins[0].remote[0]: 0xe0001000 is not aligned"},
		{[]manager.StandIn{{Port: "port-a", Function: none}}, "stand_ins[0].bars: the device has no memory BAR"},
		{[]manager.StandIn{{Port: "port-a"}}, "stand_ins[0].function"},
		{[]manager.StandIn{{Port: "port-a", Function: plain, Remote: si.Remote, MSI: msi}}, "stand_ins[0].msi: the device has no MSI-X capability"},
		{[]manager.StandIn{{Port: "port-a", Function: si.Function, Remote: si.Remote, MSI: &pmgr.MSIWindow{HostBase: 0xFFFF_0000, Size: 1 << 20, RemoteBase: 0}}},
			"stand_ins[0].msi: MSI window: host region 0xffff0000+0x100000 crosses a 4 GiB boundary"},
	} {
		_, err := manager.Build(manager.Config{Manager: scenario.TwoParty().ONICs[0].Manager, BARs: f.MemorySizes(), StandIns: c.sis})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// lintTop runs Verilator -Wall and Icarus over vs, onic_top's sources
// in dir: both must print nothing.
func lintTop(t *testing.T, dir string, vs []string) {
	t.Helper()
	verilator, iverilog := tools.Require(t, "verilator"), tools.Require(t, "iverilog")
	lint := append([]string{"--lint-only", "-Wall", "--top-module", "onic_top"}, vs...)
	if out, err := exec.Command(verilator, lint...).CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("verilator: %v\n%s", err, out)
	}
	if out, err := exec.Command(iverilog, append([]string{"-g2005", "-Wall", "-o", filepath.Join(dir, "a.out")}, vs...)...).CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("iverilog: %v\n%s", err, out)
	}
}

// TestGoRegisters: the Go register map written beside the C header
// type-checks as a package of its own, and its constants are the
// register map's: the manager's offsets (pcie/manager.RegisterMap), the
// ID and VERSION values, and, for the card, each counter's offset in the
// register BAR in card order.
func TestGoRegisters(t *testing.T) {
	d := design(t, scenario.TwoParty().ONICs[0].Manager)
	fs, err := bundle.Files(d, bundle.Options{Part: firmware.DefaultPart, PCIe4: true, Function: onicFunction(t)})
	if err != nil {
		t.Fatal(err)
	}
	var src []byte
	for _, f := range fs {
		if f.Name == "onic_pcie_manager_regs.go" {
			src = f.Data
		}
	}
	if src == nil {
		t.Fatal("no onic_pcie_manager_regs.go")
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "onic_pcie_manager_regs.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check(bundle.RegsPackage, fset, []*ast.File{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	val := func(name string) int64 {
		o, ok := pkg.Scope().Lookup(name).(*types.Const)
		if !ok {
			t.Fatalf("no constant %s", name)
		}
		v, _ := constant.Int64Val(o.Val())
		return v
	}
	for _, c := range []struct {
		name string
		want int64
	}{
		{"ID", pmgr.RegID}, {"Version", pmgr.RegVersion}, {"LUTCommit", pmgr.RegLUTCommit},
		{"CountOK", pmgr.RegCount0 + 4*int64(pmgr.OK)}, {"CountBusMasterDisabled", pmgr.RegCount0 + 4*int64(pmgr.BusMasterDisabled)},
		{"IDValue", pmgr.IDValue}, {"VersionValue", pmgr.VersionValue},
		{"CardPortInCountOKTotal", pcie.ONICCountersOffset}, {"CardPortInCountDeniedTotal", pcie.ONICCountersOffset + 4*int64(pmgr.Denied)},
		{"CardPortACRCErrors", -1}, {"CardCounters", 54}, {"CardMSIXSent", -1}, // -1: somewhere in the counter region
	} {
		if got := val(c.name); c.want >= 0 && got != c.want || c.want < 0 && (got < pcie.ONICCountersOffset || got >= pcie.ONICCountersEnd) {
			t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
		}
	}
	if n := len(pkg.Scope().Names()); n < 60 {
		t.Errorf("only %d constants", n)
	}
}
