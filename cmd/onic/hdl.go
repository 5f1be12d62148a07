package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/hdlgen/axis"
	"onic/hdlgen/check"
	"onic/hdlgen/ir"
	"onic/hdlgen/verilog"
)

func newHDLCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "hdl",
		Short: "Hardware generation: write example Verilog, check Verilog with Verilator, Icarus and Yosys",
		Long: `Hardware generation (docs/hdl.md). 'onic hdl demo' writes the Verilog of the
AXI-Stream building blocks; 'onic hdl check DIR' runs Verilator's lint, Icarus
and Yosys synthesis for Xilinx 7-series over a directory of Verilog files and
reports each module's resources. The PCIe manager generator ('onic hdl gen')
comes with issue 5.`,
		Args: cobra.ArbitraryArgs,
		RunE: areaRunE,
	}
	c.AddCommand(newHDLDemoCmd(v), newHDLCheckCmd(v))
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
			for _, m := range demoModules() {
				src, err := verilog.Emit(m)
				if err != nil {
					return err
				}
				p := filepath.Join(dir, m.Name()+".v")
				if err := os.WriteFile(p, src, 0o644); err != nil {
					return fmt.Errorf("--out: %v", err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), p)
			}
			return nil
		},
	}
	c.Flags().String("out", "rtl", "directory to write the .v files to")
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
the lint or the compile printed anything.`,
		Example: `  onic hdl check rtl
  onic hdl check rtl --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("check takes one directory (got %d arguments)", len(args))
			}
			r, err := check.Dir(args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if v.GetBool("hdl.check.json") {
				if err := json.NewEncoder(w).Encode(r); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "verilator -Wall: %s\niverilog -g2005: %s\n\n", r.Verilator, r.Icarus)
				fmt.Fprintf(w, "%-20s %6s %6s %6s %6s %6s %6s %6s\n", "module", "LUT", "FF", "LUTRAM", "BRAM", "DSP", "CARRY4", "depth")
				for _, m := range r.Modules {
					fmt.Fprintf(w, "%-20s %6d %6d %6d %6d %6d %6d %6d\n", m.Module, m.LUT, m.FF, m.LUTRAM, m.BRAM, m.DSP, m.Carry, m.Depth)
				}
			}
			if !r.Clean {
				return fmt.Errorf("%s: lint or compile messages (above)", args[0])
			}
			return nil
		},
	}
	c.Flags().Bool("json", false, "print the report as JSON")
	bindFlags(v, c, "hdl.check")
	return c
}
