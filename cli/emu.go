package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/emu/cluster"
	"onic/emu/htmlreport"
	"onic/emu/linkbench"
	"onic/emu/scenario"
	"onic/emu/sim"
	"onic/firmware"
	"onic/firmware/plan"
	"onic/internal/readfile"
	"onic/internal/yamlcfg"
	"onic/tlp"
)

func newEmuCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "emu",
		Short: "Emulator: run O-NIC cluster scenarios, benchmark one PCIe link",
		Long: `The cycle-approximate emulator of O-NIC clusters: run a scenario (run,
scenarios) or stream DMA over one simulated PCIe link (linkbench). The timing
model is described in docs/emu.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: areaRunE,
	}
	c.AddCommand(newLinkbenchCmd(v), newEmuRunCmd(v), newEmuScenariosCmd(v), newEmuServeCmd(v), newEmuNetCmd(v), newEmuSweepCmd(v))
	return c
}

func newEmuRunCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "run",
		Short: "Run a scenario on an emulated O-NIC cluster and report",
		Long: `Run a built-in scenario (see 'onic emu scenarios'; default two-party), or one
written in YAML (--scenario-file; emu/scenario/scenarios/two-party.yaml is the default
written out), on the emulated cluster: hosts, their PCIe links, O-NICs with the
PCIe manager, optical links through MEMS circuits. The report gives per-flow throughput and transfer
latency percentiles, the accounting of every injected request, and how fast the
emulator ran (the only line that varies from run to run).`,
		Example: `  onic emu run
  onic emu run --scenario two-party-read --json
  onic emu run --scenario-file my-cluster.yaml
  onic emu run --deploy onicA=onic-a.onicfw@50us --trust trust.yaml
  onic emu run --scenario host-interface --duration 1.4s --deploy onicA=onic-a.onicfw --trust trust.yaml --replay plan.json@1.3s --replay-kernels filter-0.onicfw`,
		Args: rtlArgs(v, "emu.run"),
		RunE: func(cmd *cobra.Command, args []string) error { return runEmuRun(cmd, v, args) },
	}
	rtlFlagSet(c)
	c.Flags().Bool("compare", false, "with --rtl: run the scenario on the model too and stop at the first write that lands differently (address, length, bytes) at a host")
	c.Flags().StringSlice("deploy", nil, "load a firmware image into an O-NIC during the run: ONIC=IMAGE[@TIME] (default time 0; repeatable; docs/firmware.md)")
	c.Flags().String("trust", "", "the loader's trust store for --deploy and --replay (YAML, docs/firmware.md)")
	c.Flags().String("report", "", "write the run as one self-contained HTML page: throughput over time, latency distributions, link utilisation, the reconfiguration and reflash timeline, the accounting")
	c.Flags().Bool("allow-downgrade", false, "let a --deploy or replayed load lower a region's security version (each one is listed in the report; never below the trust store's min_security_version)")
	c.Flags().Bool("allow-refused", false, "exit 0 even if a --deploy was refused or the run ended before its reflash did")
	c.Flags().String("replay", "", "replay a residency plan ('onic fw plan --json' output) from a simulated time: PLAN.json[@TIME]")
	c.Flags().String("replay-policy", "", "the policy whose plan --replay takes, when the file holds several")
	c.Flags().StringSlice("replay-kernels", nil, "kernel images (onic fw build --kernel-slot) the replayed plan loads, one per kernel and slot")
	c.Flags().Int("threads", runtime.NumCPU(), "run the cluster's independent parts (hosts no circuit joins, at any time of the run) on this many cores; the report is the same for any number")
	c.Flags().String("scenario", "two-party", "built-in scenario to run")
	c.Flags().String("scenario-file", "", "cluster and scenario YAML file to run instead of a built-in scenario (format: docs/emu.md)")
	c.Flags().Duration("duration", 0, "simulated time to run (default: the scenario's)")
	c.Flags().String("fidelity", "", "packet (every TLP), auto (TLPs around every transient, steady stretches carried at their measured rates) or transfer (auto with shorter samples); default: the scenario's, else packet (docs/emu.md, \"Fidelity\")")
	c.Flags().Bool("json", false, "print the report as JSON")
	c.Flags().String("pcap", "", "write the TLPs seen at the taps to this pcapng file, an interface per tap (format: docs/pcap.md)")
	c.Flags().String("trace", "", "write a Chrome/Perfetto trace-event JSON file of the run (transfers, throughput, MEMS); - for standard output (the report then goes to standard error)")
	c.Flags().StringSlice("tap", nil, "capture points for --pcap, such as onicA.host,onicB.port-a (default: all)")
	bindFlags(v, c, "emu.run")
	return c
}

// runEmuRun is onic emu run: it builds the scenario's cluster, runs it and reports.
func runEmuRun(cmd *cobra.Command, v *viper.Viper, args []string) error {
	cfg, _, err := scenarioFlags(cmd, v, "emu.run")
	if err != nil {
		return err
	}
	if d := v.GetDuration("emu.run.duration"); d != 0 {
		if d < 0 {
			return fmt.Errorf("--duration %v: must be positive", d)
		}
		cfg.Duration = d
	}
	if f := v.GetString("emu.run.fidelity"); f != "" {
		cfg.Fidelity = f
	}
	cl, err := buildCluster(v, "emu.run", cfg)
	if err != nil {
		return err
	}
	rtl := cmd.Flags().Changed("rtl")
	if rtl && (len(v.GetStringSlice("emu.run.deploy")) > 0 || v.GetString("emu.run.replay") != "") {
		return fmt.Errorf("--rtl: --deploy and --replay load firmware, which the RTL cards (the images onic hdl gen writes) do not take")
	}
	finishRTL, err := rtlFlags(cmd, v, "emu.run", args, cl, cfg)
	if err != nil {
		return err
	}
	cmpRun, err := startCompare(v, cfg, cl, rtl)
	if err != nil {
		return err
	}
	defer func() {
		if ferr := finishRTL(); ferr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "onic: %v\n", ferr)
		}
	}()
	trust, err := deployFlags(cl, v.GetStringSlice("emu.run.deploy"), v.GetString("emu.run.trust"), v.GetString("emu.run.replay") != "")
	if err != nil {
		return err
	}
	if v.GetBool("emu.run.allow-downgrade") {
		if v.GetString("emu.run.trust") == "" {
			return fmt.Errorf("--allow-downgrade: needs --deploy or --replay with --trust")
		}
		cl.AllowDowngrade(true)
	}
	if err := replayFlags(cl, v.GetString("emu.run.replay"), v.GetString("emu.run.replay-policy"), v.GetStringSlice("emu.run.replay-kernels"), trust); err != nil {
		return err
	}
	var finish func() error
	if path := v.GetString("emu.run.pcap"); path != "" {
		if finish, err = capture(cl, path, v.GetStringSlice("emu.run.tap")); err != nil {
			return err
		}
	} else if len(v.GetStringSlice("emu.run.tap")) > 0 {
		return fmt.Errorf("--tap: needs --pcap FILE to write to")
	}
	threads := v.GetInt("emu.run.threads")
	if threads < 1 || threads > 1024 {
		return fmt.Errorf("--threads %d: want 1 to 1024", threads)
	}
	// Parts of the cluster that never exchange a TLP run on their
	// own event queues, in parallel; the report is the same.
	// Captures, traces, charts and firmware loads need the one
	// cluster.
	alone := v.GetString("emu.run.pcap") == "" && v.GetString("emu.run.trace") == "" && v.GetString("emu.run.report") == "" &&
		len(v.GetStringSlice("emu.run.deploy")) == 0 && v.GetString("emu.run.replay") == "" && !rtl && cluster.Parts(cfg) != nil
	var rep cluster.Report
	if alone && threads > 1 {
		rep, err = cluster.RunParallel(cfg, threads)
	} else {
		if isTerminal(cmd.ErrOrStderr()) {
			cl.OnProgress(progressPrinter(cmd.ErrOrStderr()))
		}
		rep, err = cl.Run()
	}
	out := cmd.OutOrStdout()
	// Each file written is said on standard error, one line each.
	wrote := func(path, what string) { fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%s)\n", path, what) }
	if trace := v.GetString("emu.run.trace"); err == nil && trace != "" {
		err = writeTrace(cl, trace, out)
		if trace == "-" {
			out = cmd.ErrOrStderr() // the trace has standard output; the report goes beside it
		} else if err == nil {
			wrote(trace, "trace-event JSON: ui.perfetto.dev")
		}
	}
	if finish != nil {
		if ferr := finish(); err == nil {
			err = ferr
			if err == nil {
				wrote(v.GetString("emu.run.pcap"), "pcapng: onic tlp decode --pcap, Wireshark")
			}
		}
	}
	if err != nil {
		return err
	}
	if err := cmpRun.finish(cmd.ErrOrStderr()); err != nil {
		return err
	}
	if path := v.GetString("emu.run.report"); path != "" {
		if err := writeHTMLReport(path, rep, cl.Charts(0)); err != nil {
			return err
		}
		wrote(path, "HTML report: open it in a browser")
	}
	if v.GetBool("emu.run.json") {
		if err := json.NewEncoder(out).Encode(rep); err != nil {
			return err
		}
	} else {
		rep.WriteText(out)
	}
	if !v.GetBool("emu.run.allow-refused") {
		return deployFailures(rep)
	}
	return nil
}

func newEmuScenariosCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "scenarios",
		Short: "List the built-in scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if name := v.GetString("emu.scenarios.yaml"); name != "" {
				var desc string
				for _, s := range scenario.Scenarios() {
					if s.Name == name {
						desc = s.Description
					}
				}
				c, err := scenario.Lookup(name)
				if err != nil {
					return fmt.Errorf("--yaml: %v", err)
				}
				y, err := scenario.YAML(c)
				if err != nil {
					return fmt.Errorf("--yaml %s: %v", name, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "# The built-in scenario %s (onic emu scenarios --yaml %s), written out:\n# %s\n# Fields left out take their defaults (docs/emu.md).\n%s", name, name, desc, y)
				return nil
			}
			if v.GetBool("emu.scenarios.json") {
				type row struct {
					Name        string `json:"name"`
					Description string `json:"description"`
				}
				var rows []row
				for _, s := range scenario.Scenarios() {
					rows = append(rows, row{s.Name, s.Description})
				}
				return printJSON(cmd.OutOrStdout(), rows)
			}
			for _, s := range scenario.Scenarios() {
				fmt.Fprintf(cmd.OutOrStdout(), "%-16s %s\n", s.Name, s.Description)
			}
			return nil
		},
	}
	c.Flags().Bool("json", false, "print the scenarios as JSON")
	c.Flags().String("yaml", "", "print the built-in scenario NAME as a scenario file to copy and edit (--scenario-file takes it)")
	bindFlags(v, c, "emu.scenarios")
	return c
}

func newLinkbenchCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "linkbench",
		Short: "Stream back-to-back DMA over one simulated PCIe link and measure it",
		Long: `Stream back-to-back DMA transfers of --size bytes over one simulated PCIe link
(device at one end, host memory at the other) until the link is in steady
state, and print the effective payload bandwidth, the TLP rate and the link
utilisation. The bandwidth comes out of the simulated link — framing,
headers, splitting under MPS/MRRS/RCB, Ack and UpdateFC DLLPs, SKP ordered
sets, credits, tags and memory latency — and the analytical accounting of
the same overheads is printed beside it.`,
		Example: `  onic emu linkbench --gen 3 --lanes 16 --mps 256 --op read --size 64KiB
  onic emu linkbench --gen 4 --lanes 16 --mps 512 --op write --size 4KiB --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("linkbench takes no arguments (got %q)", args[0])
			}
			// linkbench.Config reads 0 as "the default"; every flag has a
			// default of its own, so a 0 here was given and is refused.
			for _, f := range []string{"gen", "lanes", "mps", "mrrs", "rcb", "tags"} {
				if v.GetInt("emu.linkbench."+f) <= 0 {
					return fmt.Errorf("--%s %d: must be positive (leave it out for %s)", f, v.GetInt("emu.linkbench."+f), cmd.Flags().Lookup(f).DefValue)
				}
			}
			size, err := byteSize(v.GetString("emu.linkbench.size"), 1, 1<<30)
			if err != nil {
				return fmt.Errorf("--size %v", err)
			}
			c := linkbench.Config{
				Gen:    tlp.Gen(v.GetInt("emu.linkbench.gen")),
				Lanes:  v.GetInt("emu.linkbench.lanes"),
				MPS:    v.GetInt("emu.linkbench.mps"),
				MRRS:   v.GetInt("emu.linkbench.mrrs"),
				RCB:    v.GetInt("emu.linkbench.rcb"),
				Op:     linkbench.Op(v.GetString("emu.linkbench.op")),
				Size:   int(size),
				Tags:   v.GetInt("emu.linkbench.tags"),
				Addr32: v.GetBool("emu.linkbench.addr32"),
				ECRC:   v.GetBool("emu.linkbench.ecrc"),
			}
			mem := v.GetFloat64("emu.linkbench.memory-ns")
			if !(mem >= 0 && mem <= 1e9) {
				return fmt.Errorf("--memory-ns %g: must be 0 to 1e9 (one second)", mem)
			}
			// Config reads 0 as "the default"; the flag's 0 means none.
			c.Memory = max(sim.Time(mem*float64(sim.Nanosecond)), sim.Picosecond)
			out := cmd.OutOrStdout()
			if v.GetBool("emu.linkbench.sweep") || v.GetString("emu.linkbench.plot") != "" {
				return linkbenchSweep(out, c, v.GetBool("emu.linkbench.json"), v.GetString("emu.linkbench.plot"))
			}
			res, err := linkbench.Run(c)
			if err != nil {
				return err
			}
			model, merr := linkbench.Model(c)
			if v.GetBool("emu.linkbench.json") {
				rep := struct {
					linkbench.Result
					Gen       int      `json:"gen"`
					Lanes     int      `json:"lanes"`
					MPS       int      `json:"mps"`
					MRRS      int      `json:"mrrs"`
					RCB       int      `json:"rcb"`
					Op        string   `json:"op"`
					Size      int      `json:"size"`
					ModelGbps *float64 `json:"model_gbps,omitempty"`
				}{Result: res, Gen: int(c.Gen), Lanes: c.Lanes, MPS: c.MPS, MRRS: c.MRRS, RCB: c.RCB, Op: string(c.Op), Size: c.Size}
				if merr == nil {
					rep.ModelGbps = &model.EffectiveGbps
				}
				enc := json.NewEncoder(out)
				return enc.Encode(rep)
			}
			fmt.Fprintf(out, "PCIe Gen%d x%d, MPS %d, MRRS %d, RCB %d: DMA %s of %d bytes\n", c.Gen, c.Lanes, c.MPS, c.MRRS, c.RCB, c.Op, c.Size)
			fmt.Fprintf(out, "  link rate          %8.2f Gb/s per direction after line coding\n", res.RawGbps)
			fmt.Fprintf(out, "  effective payload  %8.2f Gb/s (%.2f GB/s)\n", res.EffectiveGbps, res.EffectiveGbps/8)
			fmt.Fprintf(out, "  TLP rate           %8.2f M TLPs/s\n", res.TLPRate/1e6)
			fmt.Fprintf(out, "  link utilisation   %8.1f %%\n", 100*res.Utilization)
			if merr == nil {
				fmt.Fprintf(out, "  overhead model     %8.2f Gb/s (simulated is %+.2f%%)\n", model.EffectiveGbps, 100*(res.EffectiveGbps/model.EffectiveGbps-1))
			}
			return nil
		},
	}
	f := c.Flags()
	f.Int("gen", 3, "PCIe generation (1-5)")
	f.Int("lanes", 16, "link width (1, 2, 4, 8, 16)")
	f.Int("mps", 256, "Max_Payload_Size in bytes")
	f.Int("mrrs", 512, "Max_Read_Request_Size in bytes")
	f.Int("rcb", 64, "Read Completion Boundary in bytes (64 or 128)")
	f.String("op", "write", "write, read or rdwr (from the device's point of view)")
	f.String("size", "4KiB", "bytes per DMA transfer, with a unit (B, KiB, MiB)")
	f.Int("tags", 256, "outstanding reads")
	f.Float64("memory-ns", 300, "host memory read latency in ns")
	f.Bool("addr32", false, "use 32-bit addresses (3 DW headers)")
	f.Bool("ecrc", false, "add a TLP digest to every TLP")
	f.Bool("json", false, "print a JSON report")
	f.Bool("sweep", false, "run every transfer size from 64 B to 64 KiB (powers of two) instead of --size, and print bandwidth against size")
	f.String("plot", "", "with or without --sweep: draw the sweep's bandwidth against transfer size as an SVG file")
	bindFlags(v, c, "emu.linkbench")
	return c
}

// capture opens path and has cl capture TLPs at taps into it; finish
// flushes and closes the file, and removes it if the run failed.
func capture(cl *cluster.Cluster, path string, taps []string) (finish func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--pcap: %v", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := cl.Capture(w, taps); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("--tap: %v", err)
	}
	return func() error {
		err := w.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--pcap %s: %v", path, err)
		}
		return nil
	}, nil
}

// writeHTMLReport writes the run's HTML page (emu/htmlreport) to path.
func writeHTMLReport(path string, rep cluster.Report, c cluster.Charts) error {
	var b bytes.Buffer
	if err := htmlreport.Write(&b, rep, c); err != nil {
		return fmt.Errorf("--report: %v", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--report: %v", err)
	}
	return nil
}

// writeTrace writes cl's trace to path.
func writeTrace(cl *cluster.Cluster, path string, stdout io.Writer) error {
	if path == "-" {
		if err := cl.WriteTrace(stdout); err != nil {
			return fmt.Errorf("--trace -: %v", err)
		}
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--trace: %v", err)
	}
	err = cl.WriteTrace(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--trace %s: %v", path, err)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal), where
// progress is worth showing; files and pipes stay quiet.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressPrinter returns a progress function that rewrites one line on w
// at most five times a wall-clock second and clears it at the end.
func progressPrinter(w io.Writer) func(done, total time.Duration) {
	start := time.Now()
	var last time.Time
	return func(done, total time.Duration) {
		now := time.Now()
		if done == total {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		if now.Sub(last) < 200*time.Millisecond {
			return
		}
		last = now
		fmt.Fprintf(w, "\r\033[Ksimulated %v of %v (%.0f%%), %.1f s wall", done, total,
			100*float64(done)/float64(total), now.Sub(start).Seconds())
	}
}

// deployFailures is the run's failed deployments as one error (nil when
// every --deploy loaded and finished its reflash within the run): the
// first named, with how many more; the report above has them all.
func deployFailures(rep cluster.Report) error {
	var bad []string
	end := rep.SimulatedS * 1e9
	for _, o := range rep.ONICs {
		for _, d := range o.Deploys {
			switch {
			case d.Outcome != "loaded":
				bad = append(bad, fmt.Sprintf("deploy %s into %s at %v: refused: %s", d.File, o.Name, time.Duration(d.AtNs), d.Error))
			case d.AtNs+d.ReflashNs > end:
				bad = append(bad, fmt.Sprintf("deploy %s into %s at %v: the run ended (at %v) before its %v reflash did",
					d.File, o.Name, time.Duration(d.AtNs), time.Duration(end), time.Duration(d.ReflashNs)))
			}
		}
	}
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s (--allow-refused to exit 0)", bad[0])
	}
	return fmt.Errorf("%s; and %d more (the report has them; --allow-refused to exit 0)", bad[0], len(bad)-1)
}

// deployFlags schedules the --deploy images, checked against --trust,
// and returns the trust store (needed: a replay needs it too).
func deployFlags(cl *cluster.Cluster, deploys []string, trustPath string, needed bool) (firmware.Trust, error) {
	if trustPath == "" {
		switch {
		case len(deploys) > 0:
			return firmware.Trust{}, fmt.Errorf("--deploy: needs --trust FILE, the keys the loader accepts")
		case needed:
			return firmware.Trust{}, fmt.Errorf("--replay: needs --trust FILE, the keys the loader accepts")
		}
		return firmware.Trust{}, nil
	}
	if len(deploys) == 0 && !needed {
		return firmware.Trust{}, fmt.Errorf("--trust: needs --deploy or --replay")
	}
	trust, err := firmware.LoadTrustFile(trustPath)
	if err != nil {
		return firmware.Trust{}, fmt.Errorf("--trust: %v", err)
	}
	for _, d := range deploys {
		onic, rest, ok := strings.Cut(d, "=")
		if !ok || onic == "" || rest == "" {
			return firmware.Trust{}, fmt.Errorf("--deploy %q: want ONIC=IMAGE[@TIME]", d)
		}
		file, at, err := fileAt(rest)
		if err != nil {
			return firmware.Trust{}, fmt.Errorf("--deploy %q: %v", d, err)
		}
		b, err := readfile.Read(file, firmware.MaxImageFile)
		if err != nil {
			return firmware.Trust{}, fmt.Errorf("--deploy: %v", err)
		}
		if err := cl.Deploy(onic, at, filepath.Base(file), b, trust); err != nil {
			return firmware.Trust{}, fmt.Errorf("--deploy: %v", err)
		}
	}
	return trust, nil
}

// fileAt splits FILE[@TIME].
func fileAt(s string) (string, time.Duration, error) {
	i := strings.LastIndex(s, "@")
	if i < 0 {
		return s, 0, nil
	}
	at, err := time.ParseDuration(s[i+1:])
	if err != nil {
		return "", 0, fmt.Errorf("@%s: not a simulated time (a number with a unit, ns, us, ms or s: @50us)", s[i+1:])
	}
	return s[:i], at, nil
}

// replayFlags schedules the plans of --replay (one per O-NIC; policy
// picks one when the file compares several) with the --replay-kernels.
func replayFlags(cl *cluster.Cluster, arg, policy string, kernelFiles []string, trust firmware.Trust) error {
	if arg == "" {
		if len(kernelFiles) > 0 || policy != "" {
			return fmt.Errorf("--replay-kernels and --replay-policy: need --replay PLAN.json")
		}
		return nil
	}
	file, at, err := fileAt(arg)
	if err != nil {
		return fmt.Errorf("--replay %q: %v", arg, err)
	}
	b, err := readfile.Read(file, plan.MaxTraceFile)
	if err != nil {
		return fmt.Errorf("--replay: %v", err)
	}
	var plans []plan.ONICPlan
	if err := json.Unmarshal(b, &plans); err != nil {
		return fmt.Errorf("--replay %s: not 'onic fw plan --json' output: %v", file, err)
	}
	chosen := map[string]plan.ONICPlan{}
	var order []string
	for _, p := range plans {
		if policy != "" && p.Policy != policy {
			continue
		}
		if q, ok := chosen[p.ONIC]; ok {
			return fmt.Errorf("--replay %s: %s has plans by %s and by %s; pick one with --replay-policy", file, p.ONIC, q.Policy, p.Policy)
		}
		chosen[p.ONIC] = p
		order = append(order, p.ONIC)
	}
	if len(order) == 0 {
		return fmt.Errorf("--replay %s: no plan (policy %q)", file, policy)
	}
	var kernels []cluster.KernelFile
	for _, f := range kernelFiles {
		b, err := readfile.Read(f, firmware.MaxImageFile)
		if err != nil {
			return fmt.Errorf("--replay-kernels: %v", err)
		}
		kernels = append(kernels, cluster.KernelFile{Name: filepath.Base(f), Bytes: b})
	}
	for _, o := range order {
		if err := cl.Replay(chosen[o], at, kernels, trust); err != nil {
			return fmt.Errorf("--replay %s: %v", file, err)
		}
	}
	return nil
}

// buildCluster builds the cluster of cfg, the scenario a command's flags
// under prefix named: a value a scenario file gives wrong is an error led
// by the file and the line of the field (yamlcfg.Locate).
func buildCluster(v *viper.Viper, prefix string, cfg scenario.Config) (*cluster.Cluster, error) {
	cl, err := cluster.Build(cfg)
	if err != nil {
		if path := v.GetString(prefix + ".scenario-file"); path != "" {
			if src, rerr := readfile.Read(path, scenario.MaxScenarioBytes); rerr == nil {
				return nil, yamlcfg.Locate(path, src, err.Error())
			}
		}
		return nil, err
	}
	return cl, nil
}

// scenarioFlags is the scenario a command's --scenario NAME (a built-in)
// or --scenario-file FILE names (viper keys <prefix>.scenario and
// <prefix>.scenario-file), and a short name of where it came from.
func scenarioFlags(cmd *cobra.Command, v *viper.Viper, prefix string) (scenario.Config, string, error) {
	if path := v.GetString(prefix + ".scenario-file"); path != "" {
		if cmd.Flags().Changed("scenario") {
			return scenario.Config{}, "", fmt.Errorf("--scenario-file and --scenario: give one or the other")
		}
		cfg, err := scenario.LoadFile(path)
		return cfg, filepath.Base(path), err
	}
	name := v.GetString(prefix + ".scenario")
	cfg, err := scenario.Lookup(name)
	return cfg, "the " + name + " scenario", err
}
