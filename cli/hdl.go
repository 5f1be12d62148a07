package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/desc"
	"onic/designs/bundle"
	"onic/designs/manager"
	onicdesign "onic/designs/onic"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/hdlgen/axis"
	"onic/hdlgen/check"
	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
	"onic/internal/fpgapart"
	"onic/internal/readfile"
	"onic/pcie"
	"onic/pcie/lanes"
)

func newHDLGenCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "gen",
		Short: "Generate an O-NIC's RTL for Vivado: the whole card (onic_top), or the PCIe manager alone",
		Long: `Generates an O-NIC's RTL (docs/hdl.md) from the same configuration the
emulator runs: the manager section of an O-NIC in a scenario (the default
scenario's first O-NIC unless --scenario-file and --onic say otherwise), or the
'large' sizing preset (64 windows, a 512-entry LUT, 64 access ranges).

By default it writes the whole card: onic_top, on the user clock of AMD's
PCIE4 block (PG213), with the adapters to the block's CQ, CC, RQ and RC
interfaces, the PCIe manager both ways, the register block, the description
capability and both optical ports' link layers. --manager-only writes the
PCIe manager alone, on its generic TLP streams, as earlier versions did.

Into --out go the Verilog (one file per module), files.f, an XDC
constraints template, build.tcl (Vivado non-project; it creates the PCIE4
IP for the card), the register map as a C header and Markdown, and a README.
The output is the same byte for byte every time for the same input.
('onic emu run' takes the same YAML with the same --scenario-file flag; the
root --config flag is the CLI's own defaults file.)`,
		Example: `  onic hdl gen --out rtl
  onic hdl gen --scenario-file my-cluster.yaml --onic onicB --out rtl-b
  onic hdl gen --preset large --out rtl-large
  onic hdl gen --manager-only --out rtl-manager
  onic hdl check rtl-manager`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("gen takes no arguments (got %q); choose the directory with --out", args[0])
			}
			g, err := genConfig(cmd, v)
			if err != nil {
				return err
			}
			d, err := manager.Build(g.cfg)
			if err != nil {
				return err
			}
			managerOnly := v.GetBool("hdl.gen.manager-only")
			if cmd.Flags().Changed("pcie4") {
				if managerOnly {
					return fmt.Errorf("--manager-only and --pcie4: give one (--pcie4, the whole card, is the default)")
				}
				// (cobra keeps pflag's own deprecation notice to itself.)
				fmt.Fprintln(cmd.ErrOrStderr(), "onic hdl gen: --pcie4 is deprecated: the whole card is the default now; --manager-only gives the manager alone")
			}
			o := bundle.Options{Part: v.GetString("hdl.gen.part"), Source: g.source, PCIe4: !managerOnly, Function: g.fn, Kernels: g.kernels, Lanes: g.lanes}
			if err := genBoard(cmd, v, &o, g, managerOnly); err != nil {
				return err
			}
			if o.Link.ReplayCycles, o.Link.LostCycles, o.Link.CreditCycles, o.EgressStallCycles, err = linkTimeouts(v); err != nil {
				return err
			}
			if managerOnly && o.Link.ReplayCycles+o.Link.LostCycles+o.Link.CreditCycles+o.EgressStallCycles > 0 {
				return fmt.Errorf("--link-*-timeout, --egress-stall-timeout: the manager alone (--manager-only) has no optical ports")
			}
			if o.PCIe4 && d.DataWidth != 512 {
				return fmt.Errorf("the whole card takes AMD's PCIE4 512-bit interface (Gen3 x16 at 250 MHz), and this manager is %d bits wide: give --width 512 for the card, or --manager-only for the manager alone", d.DataWidth)
			}
			fs, err := bundle.Files(d, o)
			if err != nil {
				return fmt.Errorf("%s: %v", g.source, err)
			}
			out := v.GetString("hdl.gen.out")
			paths, err := bundle.WriteFiles(out, fs)
			if err != nil {
				return fmt.Errorf("--out: %v", err)
			}
			w := cmd.OutOrStdout()
			if err := staleVerilog(cmd, out, paths, v.GetBool("hdl.gen.clean")); err != nil {
				return err
			}
			if v.GetBool("hdl.gen.json") {
				board, top, plan := "", "", ""
				if o.Board != nil {
					board, top, plan = o.Board.Name, o.Board.TopName(), o.Lanes.String()
				}
				return printJSON(w, struct {
					Files         []string `json:"files"`
					Module        string   `json:"module"`
					Card          bool     `json:"card"`
					DataWidth     int      `json:"data_width"`
					ClockMHz      float64  `json:"clock_mhz"`
					LatencyCycles int      `json:"latency_cycles"`
					Windows       int      `json:"windows"`
					LUTEntries    int      `json:"lut_entries"`
					Board         string   `json:"board,omitempty"`
					BoardTop      string   `json:"board_top,omitempty"`
					LanePlan      string   `json:"lane_plan,omitempty"`
				}{paths, d.Module.Name(), o.PCIe4, d.DataWidth, d.ClockMHz, d.Depth, len(d.Windows), len(d.LUT.Entries), board, top, plan})
			}
			printGen(w, paths, out, o, d)
			return nil
		},
	}
	c.Flags().String("out", "rtl", "directory to write the files to")
	c.Flags().Bool("clean", false, "remove .v files in --out that this run did not write (left from an earlier design, hdl check would lint them)")
	c.Flags().String("scenario", "two-party", "built-in scenario whose O-NIC to generate ('onic emu scenarios')")
	c.Flags().String("scenario-file", "", "scenario YAML whose O-NIC to generate instead of a built-in scenario (format: docs/emu.md)")
	c.Flags().String("onic", "", "which O-NIC of the scenario (default: the first)")
	c.Flags().String("preset", "", "generate a built-in configuration instead: 'large' (64 windows, 512 LUT entries, 64 access ranges)")
	c.Flags().Int("width", 0, "TLP data path width in bits, 256 or 512 (default: the O-NIC's data_width, else 512)")
	c.Flags().Float64("clock", 0, "clock in MHz (default: the O-NIC's clock_mhz, else 250)")
	c.Flags().String("part", firmware.DefaultPart, "FPGA part for build.tcl")
	c.Flags().String("board", "", "also write a board top for this board, with its XDC, GTY wrappers and a build.tcl that builds it: "+strings.Join(bundle.BoardNames(), ", ")+" (docs/hdl.md, \"Board tops\")")
	c.Flags().String("lane-plan", "", "the optical ports' lane plan build.tcl configures the transceivers for, LANESxRATE as 4x25.78125Gbps (default: the O-NIC's lane_plan, else 16x8.25Gbps; docs/hdl.md, \"Lane plans\")")
	c.Flags().String("name", "onic_pcie_manager", "Verilog module name")
	c.Flags().Bool("manager-only", false, "generate the PCIe manager alone on its generic TLP streams, not the whole card (onic_top with the adapters to AMD's PCIE4 block, the manager both ways, the register block and both optical ports' link layers; docs/hdl.md, \"The card\")")
	c.Flags().Bool("pcie4", false, "the whole card, now the default")
	c.Flags().MarkDeprecated("pcie4", "the whole card is the default now; --manager-only gives the manager alone")
	c.Flags().Bool("json", false, "print the files written and the design's figures as JSON")
	c.Flags().String("link-replay-timeout", "", "the optical links' replay timer, a duration such as 8.2us (default 2048 cycles of the 250 MHz user clock, 8.192us)")
	c.Flags().String("link-lost-timeout", "", "how long an up link may hear no good control word before it goes down (default 4096 cycles, 16.384us)")
	c.Flags().String("link-credit-timeout", "", "how long a TLP may wait for credits its partner never returns before the link goes down (default 16384 cycles, 65.536us)")
	c.Flags().String("egress-stall-timeout", "", "how long a TLP may wait at an up optical port that takes nothing before the card treats the port as down for admission (default 4096 cycles, 16.384us)")
	bindFlags(v, c, "hdl.gen")
	return c
}

// printGen tells what onic hdl gen wrote: the paths, then a line each for
// the card, the board top and the manager.
func printGen(w io.Writer, paths []string, out string, o bundle.Options, d *manager.Design) {
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	if o.PCIe4 {
		n := 0
		for _, p := range paths {
			if strings.HasSuffix(p, ".v") && filepath.Dir(p) == filepath.Clean(out) {
				n++
			}
		}
		fmt.Fprintf(w, "onic_top: the whole card on the PCIE4 block's user_clk, %d Verilog files (files.f)\n", n)
	}
	if b := o.Board; b != nil {
		fmt.Fprintf(w, "%s: onic_top on the %s (%s), ports on %s and %s at %v, in %s (build.tcl builds it)\n",
			b.TopName(), b.Title, b.Part, b.Cages[0].Name, b.Cages[1].Name, o.Lanes, filepath.Join(out, "board"))
	}
	fmt.Fprintf(w, "%s: %d-bit data path at %g MHz, latency %d cycles (%g ns), II %d; %d windows, %d LUT entries\n",
		d.Module.Name(), d.DataWidth, d.ClockMHz, d.Depth, float64(d.Depth)*1000/d.ClockMHz, d.II, len(d.Windows), len(d.LUT.Entries))
}

// genBoard applies --board to o: the board preset, its part (--part, if
// given, must be it) and, unless a lane plan was given, the board's.
func genBoard(cmd *cobra.Command, v *viper.Viper, o *bundle.Options, g genInput, managerOnly bool) error {
	name := v.GetString("hdl.gen.board")
	if name == "" {
		return nil
	}
	b, err := bundle.LookupBoard(name)
	if err != nil {
		return fmt.Errorf("--board: %v", err)
	}
	if managerOnly {
		return fmt.Errorf("--board %s: a board top holds the whole card; --manager-only writes the manager alone", b.Name)
	}
	if cmd.Flags().Changed("part") && o.Part != b.Part {
		return fmt.Errorf("--part %s: the %s has %s (leave --part out with --board)", o.Part, b.Title, b.Part)
	}
	o.Part = b.Part
	if !g.planSet {
		o.Lanes = bundle.BoardPlan
	}
	if err := b.Check(o.Lanes); err != nil {
		return fmt.Errorf("--board: %v", err)
	}
	o.Board = &b
	return nil
}

// genInput is what onic hdl gen generates from: the manager's
// configuration, where it came from (for the README), the O-NIC's
// function, its kernels and its ports' lane plan.
type genInput struct {
	cfg     manager.Config
	source  string
	fn      *pcie.Function
	kernels []desc.Kernel
	lanes   lanes.Plan
	// planSet: the lane plan was given (--lane-plan or the O-NIC's
	// lane_plan), not FLEET's by default.
	planSet bool
}

// genConfig is the generator's input as the flags choose it, a
// description of where it came from, and the O-NIC's host-facing function
// (its IDs and BARs, for the PCIe block's configuration).
func genConfig(cmd *cobra.Command, v *viper.Viper) (genInput, error) {
	f, err := desc.Function()
	if err != nil {
		return genInput{}, err
	}
	g := genInput{fn: f, lanes: lanes.Default}
	if s := v.GetString("hdl.gen.lane-plan"); s != "" {
		if g.lanes, err = lanes.Parse(s); err != nil {
			return g, fmt.Errorf("--lane-plan: %v", err)
		}
		g.planSet = true
	}
	c := manager.Config{Name: v.GetString("hdl.gen.name"), BARs: f.MemorySizes(), DataWidth: v.GetInt("hdl.gen.width"),
		ClockMHz: v.GetFloat64("hdl.gen.clock")}
	if c.DataWidth != 0 && c.DataWidth != 256 && c.DataWidth != 512 {
		return g, fmt.Errorf("--width %d: must be 256 or 512", c.DataWidth)
	}
	if c.ClockMHz != 0 && !(c.ClockMHz >= 1 && c.ClockMHz <= 1000) {
		return g, fmt.Errorf("--clock %g: must be 1 to 1000 MHz", c.ClockMHz)
	}
	switch p := v.GetString("hdl.gen.preset"); p {
	case "":
	case "large":
		if v.GetString("hdl.gen.scenario-file") != "" || v.GetString("hdl.gen.onic") != "" || cmd.Flags().Changed("scenario") {
			return g, fmt.Errorf("--preset: give either a preset or --scenario/--scenario-file/--onic")
		}
		c.Manager = manager.Large()
		g.cfg, g.source = c, "the 'large' sizing preset (64 windows, 512 LUT entries, 64 access ranges)"
		return g, nil
	default:
		return g, fmt.Errorf("--preset %q: the only preset is 'large'", p)
	}
	cfg, source, err := scenarioFlags(cmd, v, "hdl.gen")
	if err != nil {
		return g, err
	}
	if len(cfg.ONICs) == 0 {
		return g, fmt.Errorf("%s: the scenario has no O-NICs", source)
	}
	i := 0
	if name := v.GetString("hdl.gen.onic"); name != "" {
		i = slices.IndexFunc(cfg.ONICs, func(o scenario.ONICConfig) bool { return o.Name == name })
		if i < 0 {
			return g, fmt.Errorf("--onic %q: %s has no such O-NIC", name, source)
		}
	}
	o := cfg.ONICs[i]
	d, err := desc.FromScenario(o, fmt.Sprintf("%s: onics[%d]", source, i))
	if err != nil {
		return g, err
	}
	// --clock and --width override the O-NIC's own.
	sc := onicdesign.ManagerConfig(d)
	sc.Name, sc.ClockMHz, sc.DataWidth = c.Name, cmp.Or(c.ClockMHz, sc.ClockMHz), cmp.Or(c.DataWidth, sc.DataWidth)
	g.cfg, g.source, g.fn, g.kernels = sc, fmt.Sprintf("%s (%s), O-NIC %s", source, cfg.Name, o.Name), d.Function, d.Kernels
	if !cmd.Flags().Changed("lane-plan") {
		g.lanes, g.planSet = d.Lanes, o.LanePlan != ""
	}
	return g, nil
}

func newHDLCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "hdl",
		Short: "Hardware generation: write example Verilog, check Verilog with Verilator, Icarus and Yosys",
		Long: `Hardware generation (docs/hdl.md). 'onic hdl demo' writes the Verilog of the
AXI-Stream building blocks; 'onic hdl check DIR' runs Verilator's lint, Icarus
and Yosys synthesis for Xilinx 7-series over a directory of Verilog files and
reports each module's resources. 'onic hdl gen' writes the O-NIC's PCIe manager
for an O-NIC of a scenario, with its constraints, Vivado script and register map.`,
		Args: cobra.ArbitraryArgs,
		RunE: areaRunE,
	}
	c.AddCommand(newHDLGenCmd(v), newHDLDemoCmd(v), newHDLCheckCmd(v))
	return c
}

// demoModules are the modules 'onic hdl demo' writes.
func demoModules() []*ir.Module {
	skid := ir.NewModule("axis_skid")
	axis.Output(skid, "m", axis.Skid(skid, "slice", axis.Input(skid, "s", 64)))
	fifo := ir.NewModule("axis_fifo")
	axis.Output(fifo, "m", axis.FIFO(fifo, "q", axis.Input(fifo, "s", 64), 512))
	return []*ir.Module{skid, fifo}
}

func newHDLDemoCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Write the Verilog of a 64-bit AXI-Stream skid buffer and a 512-deep FIFO",
		Example: `  onic hdl demo --out rtl
  onic hdl check rtl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("demo takes no arguments (got %q); choose the directory with --out", args[0])
			}
			dir := v.GetString("hdl.demo.out")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--out: %v", err)
			}
			var paths []string
			for _, m := range demoModules() {
				src, err := verilog.Emit(m)
				if err != nil {
					return err
				}
				p := filepath.Join(dir, m.Name()+".v")
				if err := os.WriteFile(p, src, 0o644); err != nil {
					return fmt.Errorf("--out: %v", err)
				}
				paths = append(paths, p)
			}
			if v.GetBool("hdl.demo.json") {
				return printJSON(cmd.OutOrStdout(), struct {
					Files []string `json:"files"`
				}{paths})
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	c.Flags().String("out", "rtl", "directory to write the .v files to")
	c.Flags().Bool("json", false, "print the files written as JSON")
	bindFlags(v, c, "hdl.demo")
	return c
}

func newHDLCheckCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "check DIR",
		Short: "Lint, compile and synthesise the Verilog in DIR; report resources per module",
		Long: `Runs 'verilator --lint-only -Wall' (no waivers) and 'iverilog -g2005 -Wall' over
every .v file in DIR (one module per file, named after it), then Yosys
'synth_xilinx -noiopad' on each module, reporting LUTs, flip-flops, LUT RAMs,
block RAMs, DSPs, carry chains and Yosys's longest path ('ltp -noff'). Exits 1 if
the lint or the compile printed anything. --lint-only stops before Yosys: seconds
where the whole card's synthesis takes minutes.`,
		Example: `  onic hdl check rtl
  onic hdl check rtl --json
  onic hdl check rtl --lint-only`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("check takes one directory (got %d arguments)", len(args))
			}
			var progress check.Progress
			if e := cmd.ErrOrStderr(); isTerminal(e) {
				// On a terminal: what is running, and each module as its
				// synthesis ends (the whole card takes minutes).
				start := time.Now()
				progress = func(step, module string, done, total int) {
					el := time.Since(start).Round(time.Second)
					switch {
					case module == "":
						fmt.Fprintf(e, "onic hdl check: %s of %d files (%v)\n", step, total, el)
					default:
						fmt.Fprintf(e, "onic hdl check: synthesised %s, %d of %d (%v)\n", module, done, total, el)
					}
				}
			}
			o := check.Options{UltraRAM: v.GetBool("hdl.check.uram")}
			family := ""
			if part := v.GetString("hdl.check.part"); part != "" {
				if err := fpgapart.Check(part); err != nil {
					return fmt.Errorf("--part %v", err)
				}
				switch family = fpgapart.Family(part); family {
				case "xcup":
					o.UltraRAM = true
				case "xcu":
					if o.UltraRAM {
						return fmt.Errorf("--uram: %s is an UltraScale part, which has no UltraRAM", part)
					}
					o.UltraScale = true
				case "xc7":
					if o.UltraRAM {
						return fmt.Errorf("--uram: %s is a 7-series part, which has no UltraRAM", part)
					}
				default:
					return fmt.Errorf("--part %s: not a part whose family onic knows (UltraScale+, UltraScale or 7 series)", part)
				}
			}
			run := func(dir string, p check.Progress) (check.Report, error) { return check.DirOptions(dir, o, p) }
			lintOnly := v.GetBool("hdl.check.lint-only")
			if lintOnly {
				run = check.LintDir
			}
			r, err := run(args[0], progress)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case v.GetBool("hdl.check.json"):
				if err := json.NewEncoder(w).Encode(r); err != nil {
					return err
				}
			case lintOnly:
				fmt.Fprintf(w, "verilator -Wall: %s\niverilog -g2005: %s\n(%d files; no synthesis: --lint-only)\n", r.Verilator, r.Icarus, len(r.Files))
			default:
				fmt.Fprintf(w, "verilator -Wall: %s\niverilog -g2005: %s\n\n", r.Verilator, r.Icarus)
				nw := len("module")
				for _, m := range r.Modules {
					nw = max(nw, len(m.Module))
				}
				fmt.Fprintf(w, "%-*s %6s %6s %6s %6s %6s %6s %6s %6s %8s\n", nw, "module", "LUT", "FF", "LUTRAM", "BRAM", "URAM", "DSP", "CARRY4", "depth", "est MHz")
				for _, m := range r.Modules {
					fmt.Fprintf(w, "%-*s %6d %6d %6d %6d %6d %6d %6d %6d %8.0f\n", nw, m.Module, m.LUT, m.FF, m.LUTRAM, m.BRAM, m.URAM, m.DSP, m.Carry, m.Depth, m.Timing.EstMHz)
				}
				switch {
				case o.UltraRAM:
					fmt.Fprintf(w, "\n(UltraScale+ cells, UltraRAM included)")
				case o.UltraScale:
					fmt.Fprintf(w, "\n(UltraScale cells)")
				default:
					fmt.Fprintf(w, "\n(7-series cells, which have no UltraRAM: --part NAME maps for the part's family, --uram for UltraScale+)")
					if p := tclPart(args[0]); family == "" && fpgapart.Family(p) == "xcup" {
						fmt.Fprintf(w, "\n(build.tcl builds for %s, an UltraScale+ part: --part %s estimates for it)", p, p)
					}
				}
				fmt.Fprintf(w, "\n(est MHz: the critical path by onic's delay model for UltraScale+ -2, docs/kernels.md, \"Resources and timing\"; Vivado's timing report is the authority)\n")
			}
			if !r.Clean {
				return fmt.Errorf("%s: lint or compile messages (above)", args[0])
			}
			if v.GetBool("hdl.check.json") {
				w = io.Discard // (the report is the JSON; a failure is still an error)
			}
			if err := checkWrappers(w, args[0]); err != nil {
				return err
			}
			return checkBoard(w, args[0], r.Files)
		},
	}
	c.Flags().Bool("json", false, "print the report as JSON")
	c.Flags().Bool("lint-only", false, "run Verilator and Icarus only, not Yosys")
	c.Flags().Bool("uram", false, "synthesise for UltraScale+ (synth_xilinx -family xcup -uram), mapping large memories to UltraRAM")
	c.Flags().String("part", "", "synthesise for this FPGA part's family: UltraScale+ (as --uram), UltraScale or 7 series (the default)")
	bindFlags(v, c, "hdl.check")
	return c
}

// checkBoard lints the board top in dir/board, if onic hdl gen --board
// wrote one: Verilator -Wall and Icarus over it, its GTY wrapper, the
// stand-ins for AMD's IP and the card's files.
func checkBoard(w io.Writer, dir string, card []string) error {
	tops, _ := filepath.Glob(filepath.Join(dir, "board", "onic_board_*.v"))
	if len(tops) == 0 {
		return nil
	}
	top := strings.TrimSuffix(filepath.Base(tops[0]), ".v")
	files := slices.Clone(card)
	for _, pat := range []string{"board/*.v", "board/standin/*.v"} {
		more, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, more...)
	}
	vl, ic, err := check.LintTop(files, top)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nboard top %s (with board/standin/ for AMD's IP): verilator -Wall: %s; iverilog -g2005: %s\n", top, vl, ic)
	if vl != "clean" || ic != "clean" {
		return fmt.Errorf("%s: the board top has lint or compile messages (above)", dir)
	}
	return nil
}

// checkWrappers lints the GTY wrapper in dir/gty, if onic hdl gen wrote
// one (a whole card without --board): Verilator -Wall and Icarus over
// each of its two modules.
func checkWrappers(w io.Writer, dir string) error {
	for _, top := range []string{"onic_gty_tx", "onic_gty_rx"} {
		f := filepath.Join(dir, bundle.GTYDir, top+".v")
		if _, err := os.Stat(f); err != nil {
			continue
		}
		vl, ic, err := check.LintTop([]string{f}, top)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "GTY wrapper %s/%s: verilator -Wall: %s; iverilog -g2005: %s\n", bundle.GTYDir, top, vl, ic)
		if vl != "clean" || ic != "clean" {
			return fmt.Errorf("%s: the GTY wrapper has lint or compile messages (above)", dir)
		}
	}
	return nil
}

// tclPart is the part a generated build.tcl in dir builds for ("" when
// there is none).
func tclPart(dir string) string {
	b, err := readfile.Read(filepath.Join(dir, "build.tcl"), 1<<20)
	if err != nil {
		return ""
	}
	if m := regexp.MustCompile(`(?m)^set part (\S+)$`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// staleVerilog finds the .v files directly in dir that this run did not
// write (wrote lists what it did): left from an earlier design, they would
// be linted and synthesised with it by hdl check. With clean it removes
// them, saying so; without, it warns on one line.
func staleVerilog(cmd *cobra.Command, dir string, wrote []string, clean bool) error {
	written := map[string]bool{}
	for _, p := range wrote {
		written[filepath.Clean(p)] = true
	}
	all, err := filepath.Glob(filepath.Join(dir, "*.v"))
	if err != nil {
		return err
	}
	var stale []string
	for _, p := range all {
		if !written[filepath.Clean(p)] {
			stale = append(stale, p)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	if !clean {
		fmt.Fprintf(cmd.ErrOrStderr(), "onic hdl gen: %s: %d .v files this run did not write (%s): hdl check would take them too; --clean removes them\n",
			dir, len(stale), strings.Join(stale[:min(3, len(stale))], ", ")+map[bool]string{true: ", ...", false: ""}[len(stale) > 3])
		return nil
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("--clean: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "removed %s\n", p)
	}
	return nil
}

// linkUserClockMHz is the clock the card's link layers count their
// timers in: the PCIE4 block's user clock (Gen3 x16, 512 bits).
const linkUserClockMHz = 250

// linkTimeouts reads hdl gen's --link-*-timeout and
// --egress-stall-timeout flags in cycles of the user clock: durations
// with their unit, each a whole number of 1 to 65535 cycles (the link
// layer's 16-bit timers); 0 for a flag not given, which keeps the
// default (docs/hdl.md).
func linkTimeouts(v *viper.Viper) (replay, lost, credit, stall int, err error) {
	for _, f := range []struct {
		flag string
		to   *int
	}{{"link-replay-timeout", &replay}, {"link-lost-timeout", &lost}, {"link-credit-timeout", &credit}, {"egress-stall-timeout", &stall}} {
		s := v.GetString("hdl.gen." + f.flag)
		if s == "" {
			continue
		}
		cycle := time.Second / linkUserClockMHz / 1e6
		max := 0xffff * cycle
		d, perr := time.ParseDuration(s)
		if perr != nil {
			return 0, 0, 0, 0, fmt.Errorf("--%s %q: give a duration with its unit, such as 10us (%v)", f.flag, s, perr)
		}
		if d < cycle || d > max || d%cycle != 0 {
			return 0, 0, 0, 0, fmt.Errorf("--%s %s: must be a whole number of %v cycles of the %d MHz user clock, from %v to %v", f.flag, s, cycle, linkUserClockMHz, cycle, max)
		}
		*f.to = int(d / cycle)
	}
	return replay, lost, credit, stall, nil
}
