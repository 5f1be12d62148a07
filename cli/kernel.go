package cli

import (
	"fmt"
	"onic/hdlgen/check"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/hdlgen/verilog"
	"onic/kernels"
	"onic/kernels/replay"
)

func newKernelCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "kernel",
		Short: "In-network kernels: list the built-in library, test kernels three ways, generate their Verilog",
		Long: `In-network kernels are written once in Go (package onic/kernels, docs/kernels.md):
the same description gives the module the emulator simulates and the Verilog
for the FPGA, and an independent Go reference function says what it must
compute. 'onic kernel test' holds the simulator to the reference and the
Verilog (Icarus, Verilator) to the simulator, cycle by cycle.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown kernel command %q (see onic kernel --help)", args[0])
			}
			return cmd.Help()
		},
	}
	c.AddCommand(newKernelListCmd(v), newKernelNewCmd(v), newKernelGenCmd(v), newKernelTestCmd(v))
	return c
}

func newKernelListCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "list",
		Short: "List the kernels: the built-in ones and, in a program of your own, yours",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if v.GetBool("kernel.list.json") {
				type row struct {
					Name     string            `json:"name"`
					Version  string            `json:"version"`
					Doc      string            `json:"doc"`
					Inputs   int               `json:"inputs"`
					In       string            `json:"in"`
					Out      string            `json:"out"`
					Lanes    int               `json:"lanes"`
					BeatBits int               `json:"beat_bits"`
					ID       string            `json:"id"` // the task shell's TaskKernelID
					Params   map[string]string `json:"params,omitempty"`
				}
				rows := []row{}
				for _, k := range kernels.Library() {
					out := k.Out.Name
					if out == "" {
						out = k.In.Name
					}
					r := row{Name: k.Name, Version: k.Version, Doc: k.Doc, Inputs: k.Inputs, In: k.In.Name, Out: out,
						Lanes: k.Lanes, BeatBits: k.InBits(), ID: fmt.Sprintf("0x%08x", k.ID())}
					for _, p := range k.Params {
						if r.Params == nil {
							r.Params = map[string]string{}
						}
						r.Params[p.Name] = p.Value
					}
					rows = append(rows, r)
				}
				return printJSON(cmd.OutOrStdout(), rows)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
			fmt.Fprintln(w, "kernel\tversion\tinputs\telements\tlanes\tbeat bits\twhat it does")
			for _, k := range kernels.Library() {
				types := k.In.Name
				if k.Out.Name != "" && k.Out != k.In {
					types += "->" + k.Out.Name
				}
				doc := k.Doc
				if len(k.Params) > 0 {
					var ps []string
					for _, p := range k.Params {
						ps = append(ps, p.Name+"="+p.Value)
					}
					doc += " [" + strings.Join(ps, " ") + "]"
				}
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", k.Name, k.Version, k.Inputs, types, k.Lanes, k.InBits(), doc)
			}
			return w.Flush()
		},
	}
	c.Flags().Bool("json", false, "print the kernels as JSON")
	bindFlags(v, c, "kernel.list")
	return c
}

func newKernelGenCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "gen NAME",
		Short: "Write a kernel's Verilog in its task shell (one file per module) and a file list",
		Long: `Writes the kernel in its task shell, onic_task_<name> (the host's register
interface: identity, enable, doorbell with arguments, completion record and
MSI-X request ports, per-task counters; docs/kernels.md), with the kernel
itself, onic_kernel_<name>, as a submodule; --bare writes the kernel alone.`,
		Example: "  onic kernel gen sum-int32 --out rtl-sum\n  onic hdl check rtl-sum",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := kernels.Lookup(args[0])
			if err != nil {
				return err
			}
			build := k.TaskModule
			if v.GetBool("kernel.gen.bare") {
				build = k.Module
			}
			m, err := build()
			if err != nil {
				return err
			}
			files, err := verilog.EmitDesign(m)
			if err != nil {
				return err
			}
			dir := v.GetString("kernel.gen.out")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("--out: %v", err)
			}
			var names, paths []string
			for _, f := range files {
				p := filepath.Join(dir, f.Name)
				if err := os.WriteFile(p, f.Source, 0o644); err != nil {
					return fmt.Errorf("--out: %v", err)
				}
				names, paths = append(names, f.Name), append(paths, p)
			}
			list := filepath.Join(dir, "files.f")
			if err := os.WriteFile(list, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
				return fmt.Errorf("--out: %v", err)
			}
			paths = append(paths, list)
			if v.GetBool("kernel.gen.json") {
				return printJSON(cmd.OutOrStdout(), struct {
					Kernel string   `json:"kernel"`
					Top    string   `json:"top"`
					Files  []string `json:"files"`
				}{k.Name, m.Name(), paths})
			}
			for _, p := range paths {
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	c.Flags().String("out", "rtl", "directory to write the Verilog to")
	c.Flags().Bool("bare", false, "write the kernel without its task shell")
	c.Flags().Bool("json", false, "print the top module and the files written as JSON")
	bindFlags(v, c, "kernel.gen")
	return c
}

// kernelVerdict is one kernel's line of `kernel test`: the three-way
// verdict and, when it passed and Yosys ran, the kernel's resources and
// clock estimate (resources.timing).
type kernelVerdict struct {
	kernels.Verdict
	Resources *check.Resources `json:"resources,omitempty"`
}

func newKernelTestCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "test NAME... | --all",
		Short: "Test kernels: reference vs simulator vs RTL (Icarus and Verilator), with latency and throughput",
		Long: `For each kernel: packets of random and edge-value elements (empty, one element,
partial last beats, many beats) go through the simulator under random
backpressure and must give exactly what the Go reference gives; then one run's
inputs are replayed cycle by cycle into the kernel's Verilog under each RTL
tool, which must show the same ready, valid and output beats on every cycle.
Then, with --timing (the default) and Yosys installed, the kernel alone is
synthesised (synth_xilinx) and its critical path estimated by onic's delay
model for UltraScale+ -2 (docs/kernels.md, "Resources and timing"; cached per Verilog): the
est MHz column, with a warning naming the path when it is below --clock-mhz.
Exits 1 if any check fails; a clock warning alone does not fail.`,
		Example: "  onic kernel test sum-int32\n  onic kernel test --all --rtl icarus --json",
		RunE:    func(cmd *cobra.Command, args []string) error { return runKernelTest(cmd, v, args) },
	}
	c.Flags().Bool("all", false, "test every built-in kernel")
	c.Flags().String("vcd", "", "write each kernel's waveform (a simulator run of a packet under backpressure) into this directory as <kernel>.vcd")
	c.Flags().String("rtl", "icarus,verilator", "RTL simulators to replay into (comma-separated; empty for none)")
	c.Flags().Uint64("seed", 1, "random seed (the same seed repeats the same test)")
	c.Flags().Bool("json", false, "print the verdicts as JSON")
	c.Flags().Bool("timing", true, "estimate each kernel's clock with Yosys (cached; --timing=false to skip)")
	c.Flags().Float64("clock-mhz", 250, "the clock a kernel must reach: the O-NIC's (MHz)")
	bindFlags(v, c, "kernel.test")
	return c
}

// runKernelTest is onic kernel test: each kernel's three-way proof.
//
// Long: a command's steps in the order it runs and prints them, each a
// few lines.
func runKernelTest(cmd *cobra.Command, v *viper.Viper, args []string) error {
	all := v.GetBool("kernel.test.all")
	var ks []*kernels.Kernel
	switch {
	case all && len(args) > 0:
		return fmt.Errorf("give kernel names or --all, not both")
	case all:
		ks = kernels.Library()
	case len(args) == 0:
		return fmt.Errorf("name a kernel (onic kernel list shows them) or give --all")
	}
	for _, a := range args {
		k, err := kernels.Lookup(a)
		if err != nil {
			return err
		}
		ks = append(ks, k)
	}
	var rtl []kernels.Tool
	for _, t := range strings.Split(v.GetString("kernel.test.rtl"), ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		tool, err := replay.ByName(t)
		if err != nil {
			return fmt.Errorf("--rtl %q: want icarus, verilator or both, comma-separated", t)
		}
		rtl = append(rtl, tool)
	}
	seed := v.GetUint64("kernel.test.seed")
	var verdicts []kernelVerdict
	failed := 0
	w := cmd.OutOrStdout()
	asJSON := v.GetBool("kernel.test.json")
	nw := len("kernel") // rows are printed as each kernel finishes: size the name column first
	for _, k := range ks {
		nw = max(nw, len(k.Name))
	}
	timing, clock := v.GetBool("kernel.test.timing"), v.GetFloat64("kernel.test.clock-mhz")
	if !(clock >= 1 && clock <= 1000) {
		return fmt.Errorf("--clock-mhz %g: want 1 to 1000", clock)
	}
	if !asJSON {
		fmt.Fprintf(w, "%-*s %5s %-10s %-10s %-10s %7s %8s %10s %8s\n", nw, "kernel", "cases", "simulator", "icarus", "verilator", "latency", "interval", "bytes/cyc", "est MHz")
	}
	// On a terminal, what is running: a kernel takes from seconds
	// to a minute or more (its RTL runs, then Yosys for the clock
	// estimate when that is not cached).
	progress := func(string, ...any) {}
	if e := cmd.ErrOrStderr(); isTerminal(e) {
		start := time.Now()
		progress = func(f string, a ...any) {
			fmt.Fprintf(e, "onic kernel test: "+f+" (%v)\n", append(a, time.Since(start).Round(time.Second))...)
		}
	}
	vcdDir := v.GetString("kernel.test.vcd")
	if vcdDir != "" {
		if err := os.MkdirAll(vcdDir, 0o755); err != nil {
			return fmt.Errorf("--vcd: %v", err)
		}
	}
	for i, k := range ks {
		if vcdDir != "" {
			path, err := k.WriteWaveform(vcdDir, seed)
			if err != nil {
				return fmt.Errorf("--vcd: %v", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (VCD: GTKWave)\n", path)
		}
		under := ""
		if len(rtl) > 0 {
			names := make([]string, len(rtl))
			for j, r := range rtl {
				names[j] = r.Name()
			}
			under = ", then under " + strings.Join(names, " and ")
		}
		progress("%s, %d of %d: against its reference in the simulator%s", k.Name, i+1, len(ks), under)
		vd := kernelVerdict{Verdict: k.Verify(seed, rtl)}
		est, note := "-", ""
		if timing && vd.OK() {
			progress("%s: synthesising for the clock estimate (Yosys; cached per Verilog)", k.Name)
			r, err := kernelTiming(k, timingCacheDir())
			switch {
			case err != nil:
				note = "timing: no estimate: " + err.Error()
			default:
				vd.Resources = &r
				est = fmt.Sprintf("%.0f", r.Timing.EstMHz)
				if r.Timing.EstMHz < clock {
					note = fmt.Sprintf("timing: WARNING: est %.0f MHz is below the %g MHz clock: %.2f ns from %s to %s (%d LUT levels, %d carry cells); split the logic with Step.Stage (docs/kernels.md, \"Resources and timing\")",
						r.Timing.EstMHz, clock, r.Timing.PathNs, r.Timing.From, r.Timing.To, r.Timing.LUTLevels, r.Timing.Carries)
				}
			}
		}
		verdicts = append(verdicts, vd)
		if !vd.OK() {
			failed++
		}
		if asJSON {
			continue
		}
		col := func(s string) string {
			switch s {
			case "":
				return "-"
			case "ok":
				return "ok"
			}
			return "FAIL"
		}
		fmt.Fprintf(w, "%-*s %5d %-10s %-10s %-10s %7d %8.2f %10.1f %8s\n", nw, k.Name, vd.Cases, col(vd.Sim), col(vd.RTL["icarus"]), col(vd.RTL["verilator"]), vd.Latency, vd.Interval, vd.BytesPerCycle, est)
		if note != "" {
			fmt.Fprintf(w, "  %s\n", note)
		}
		for _, t := range []string{"simulator", "icarus", "verilator"} {
			msg := vd.Sim
			if t != "simulator" {
				msg = vd.RTL[t]
			}
			if msg != "" && msg != "ok" {
				fmt.Fprintf(w, "  %s: %s\n", t, msg)
			}
		}
	}
	if asJSON {
		if err := printJSON(w, verdicts); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d kernels failed (seed %d)", failed, len(ks), seed)
	}
	return nil
}
