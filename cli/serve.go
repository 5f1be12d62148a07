package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/designs/cardsim"
	"onic/emu/cluster"
	"onic/emu/hostif"
	"onic/emu/scenario"
	"onic/firmware"
	"onic/internal/readfile"
)

func newEmuServeCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "serve --socket PATH",
		Short: "Serve an emulated cluster to external host software (drivers, firmware tests) over a Unix socket",
		Long: `Runs the emulator as a server: each client that connects to --socket plays
the software of one host of the cluster (docs/hostif.md has the protocol;
emu/hostif has the Go client, emu/hostif/c the C one). Clients enumerate
through configuration space, access device memory with TLPs that take the
emulated path, share a file of DMA memory with the devices, and wait for
interrupts and simulated time. With --trust, clients may also hand the
loader of their host's O-NIC firmware images (load), checked against it.

The cluster is a built-in scenario (--scenario NAME; 'onic emu scenarios'
lists them) or one in YAML (--scenario-file FILE, docs/emu.md); by default
the host-interface scenario: hosts A and B with peered O-NICs and no
traffic generators. In lock-step mode (the default) simulated time passes only while
every client waits, so a session is reproducible; --mode free lets it pass
with the wall clock at --rate. On SIGINT or SIGTERM the server stops and
prints the cluster's report (--json for JSON).`,
		Example: `  onic emu serve --socket /tmp/onic.sock
  onic emu serve --scenario-file my-cluster.yaml --socket /tmp/onic.sock --mode free --rate 0.01`,
		Args: rtlArgs(v, "emu.serve"),
		RunE: func(cmd *cobra.Command, args []string) error { return runEmuServe(cmd, v, args) },
	}
	rtlFlagSet(c)
	c.Flags().String("socket", "", "Unix socket to serve on (required)")
	c.Flags().String("pcap", "", "write the TLPs seen at the taps to this pcapng file as the session goes, an interface per tap (format: docs/pcap.md); the clients' writes carry their bytes")
	c.Flags().StringSlice("tap", nil, "capture points for --pcap, such as onicA.host (default: all)")
	c.Flags().String("scenario", "host-interface", "built-in scenario to serve ('onic emu scenarios')")
	c.Flags().String("scenario-file", "", "cluster and scenario YAML to serve instead of a built-in scenario (the format of emu run --scenario-file)")
	c.Flags().String("mode", hostif.LockStep, "lockstep or free")
	c.Flags().Float64("rate", 0.001, "free mode: simulated seconds per wall second")
	c.Flags().Bool("json", false, "print the report at the end as JSON")
	c.Flags().Int("max-posted", hostif.DefaultMaxPosted, "a client's requests in the emulator at once (posted-write credits) and read but not yet answered")
	c.Flags().Int("max-clients", 64, "most connections served at once; one more is told the server is full")
	c.Flags().String("max-inflight", "64MiB", "most bytes of partly received frames held across all clients")
	c.Flags().Duration("frame-timeout", 10*time.Second, "how long a frame's body may take to arrive after its length")
	c.Flags().Duration("stall-timeout", 10*time.Second, "lock-step: how long a wait may last while a client that is not waiting sends nothing, before the wait ends with an error naming it")
	c.Flags().String("max-image", "256MiB", "largest image file a client's load may name")
	c.Flags().String("max-memory", "1GiB", "largest DMA memory file a client may share")
	c.Flags().String("trust", "", "the loader's trust store (YAML, docs/firmware.md) for clients' load requests; without it loads are refused")
	c.Flags().Bool("allow-downgrade", false, "let clients' loads lower a region's security version (each one is listed in the report; never below the trust store's min_security_version)")
	bindFlags(v, c, "emu.serve")
	return c
}

// runEmuServe is onic emu serve: it serves the scenario's cluster to host programs until stopped.
func runEmuServe(cmd *cobra.Command, v *viper.Viper, args []string) error {
	socket := v.GetString("emu.serve.socket")
	if socket == "" {
		return fmt.Errorf("--socket: required: the Unix socket path to serve on")
	}
	cfg, _, err := scenarioFlags(cmd, v, "emu.serve")
	if err != nil {
		return err
	}
	cl, err := buildCluster(v, "emu.serve", cfg)
	if err != nil {
		return err
	}
	finishRTL, err := rtlFlags(cmd, v, "emu.serve", args, cl, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if ferr := finishRTL(); ferr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "onic: %v\n", ferr)
		}
	}()
	if path := v.GetString("emu.serve.pcap"); path != "" {
		finish, err := capture(cl, path, v.GetStringSlice("emu.serve.tap"))
		if err != nil {
			return err
		}
		defer func() {
			if ferr := finish(); ferr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "onic: %v\n", ferr)
			}
		}()
	} else if len(v.GetStringSlice("emu.serve.tap")) > 0 {
		return fmt.Errorf("--tap: needs --pcap FILE to write to")
	}
	opt := hostif.Options{Mode: v.GetString("emu.serve.mode"), Rate: v.GetFloat64("emu.serve.rate"),
		MaxClients: v.GetInt("emu.serve.max-clients"), FrameTimeout: v.GetDuration("emu.serve.frame-timeout"),
		StallTimeout: v.GetDuration("emu.serve.stall-timeout"), MaxPosted: v.GetInt("emu.serve.max-posted")}
	if opt.MaxClients < 1 || opt.MaxClients > 4096 {
		return fmt.Errorf("--max-clients %d: want 1 to 4096", opt.MaxClients)
	}
	if opt.MaxPosted < 1 || opt.MaxPosted > 4096 {
		return fmt.Errorf("--max-posted %d: want 1 to 4096", opt.MaxPosted)
	}
	if opt.StallTimeout < 10*time.Millisecond || opt.StallTimeout > time.Hour {
		return fmt.Errorf("--stall-timeout %v: want 10ms to 1h", opt.StallTimeout)
	}
	if opt.FrameTimeout < time.Millisecond || opt.FrameTimeout > time.Hour {
		return fmt.Errorf("--frame-timeout %v: want 1ms to 1h", opt.FrameTimeout)
	}
	if opt.MaxInFlight, err = byteSize(v.GetString("emu.serve.max-inflight"), 1<<10, 1<<34); err != nil {
		return fmt.Errorf("--max-inflight: %v", err)
	}
	if opt.MaxImage, err = byteSize(v.GetString("emu.serve.max-image"), 1<<10, 1<<34); err != nil {
		return fmt.Errorf("--max-image: %v", err)
	}
	if opt.MaxMemory, err = byteSize(v.GetString("emu.serve.max-memory"), 4<<10, 1<<40); err != nil {
		return fmt.Errorf("--max-memory: %v", err)
	}
	if path := v.GetString("emu.serve.trust"); path != "" {
		tr, err := firmware.LoadTrustFile(path)
		if err != nil {
			return fmt.Errorf("--trust: %v", err)
		}
		opt.Trust = &tr
	}
	if v.GetBool("emu.serve.allow-downgrade") {
		if opt.Trust == nil {
			return fmt.Errorf("--allow-downgrade: needs --trust")
		}
		cl.AllowDowngrade(true)
	}
	srv, err := hostif.New(cl, opt)
	if err != nil {
		return fmt.Errorf("--%v", err)
	}
	if st, err := os.Stat(socket); err == nil && st.Mode()&os.ModeSocket != 0 {
		// A socket file is left by a server that is gone, or in use
		// by one that is not: only the first may be replaced.
		if conn, err := net.DialTimeout("unix", socket, time.Second); err == nil {
			conn.Close()
			return fmt.Errorf("--socket %s: a server is listening there already", socket)
		}
		os.Remove(socket)
	}
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return fmt.Errorf("--socket: %v", err)
	}
	defer os.Remove(socket)
	parent := cmd.Context()
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(cmd.ErrOrStderr(), "onic emu serve: %s on %s (%s mode)\n", cfg.Name, socket, v.GetString("emu.serve.mode"))
	start := time.Now()
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	rep, err := cl.Report(time.Since(start).Seconds())
	if err != nil {
		return err
	}
	st := srv.Stats()
	fmt.Fprintf(cmd.ErrOrStderr(), "onic emu serve: %d connections, %d requests (%d answered with an error), %d clients dropped\n",
		st.Connections, st.Requests, st.Errors, st.Dropped)
	if v.GetBool("emu.serve.json") {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
	}
	rep.WriteText(cmd.OutOrStdout())
	return nil
}

// rtlFlags puts the O-NICs the --rtl flag of a command (viper keys under
// prefix) names as their generated cards into cl, with --vcd's waveform
// (args holds the list when it follows the bare flag); the function it
// returns ends the waveform.
func rtlFlags(cmd *cobra.Command, v *viper.Viper, prefix string, args []string, cl *cluster.Cluster, cfg scenario.Config) (func() error, error) {
	if !cmd.Flags().Changed("rtl") {
		if v.GetString(prefix+".vcd") != "" || v.GetString(prefix+".vcd-out") != "" {
			return nil, fmt.Errorf("--vcd: a waveform is of an RTL O-NIC: add --rtl")
		}
		return func() error { return nil }, nil
	}
	names := rtlNames(v.GetStringSlice(prefix + ".rtl"))
	if len(args) == 1 {
		names = strings.Split(args[0], ",")
	}
	if err := cluster.CheckHardware(cfg, names); err != nil {
		return nil, err // (before minutes of compiling)
	}
	if !v.GetBool(prefix + ".rtl-interpret") {
		compiledRTL(cmd, cfg, names)
	}
	return useRTL(cl, cfg, names, v.GetString(prefix+".vcd"), v.GetString(prefix+".vcd-out"), cmd.ErrOrStderr())
}

// compiledRTL runs this command again in an onic whose cards are
// compiled (cardsim.CompiledONIC: built once into the user's cache), when
// this one is onic's own command from a checkout and its cards are not;
// it returns only when it does not (the cards then run interpreted, and
// a line on standard error says why when something failed).
func compiledRTL(cmd *cobra.Command, cfg scenario.Config, names []string) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Path != "onic/cmd/onic" || os.Getenv("ONIC_RTL_COMPILED") != "" {
		return // a test, a user's own onic (its kernels would be lost), or the compiled one
	}
	warn := func(err error) {
		fmt.Fprintf(cmd.ErrOrStderr(), "onic: --rtl: the cards run interpreted (slower): %v\n", err)
	}
	self, err := os.Executable()
	if err != nil {
		warn(err)
		return
	}
	from := filepath.Dir(self) // bin/onic of a checkout, as make builds it
	if dir := os.Getenv("ONIC_CHECKOUT"); dir != "" {
		from = dir
	}
	checkout, err := moduleRoot(from)
	if err != nil {
		warn(err)
		return
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		warn(err)
		return
	}
	bin, err := cardsim.CompiledONIC(cfg, names, checkout, filepath.Join(cache, "onic"), self, cmd.ErrOrStderr())
	if err != nil {
		warn(err)
		return
	}
	if bin == "" {
		return
	}
	warn(syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), append(os.Environ(), "ONIC_RTL_COMPILED=1")))
}

// rtlArgs is the Args of a command with --rtl: none, or the list of
// O-NICs after a bare --rtl ("--rtl onicA,onicB": the flag alone means
// every O-NIC, so the list arrives as an argument).
func rtlArgs(v *viper.Viper, prefix string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 1 && cmd.Flags().Changed("rtl") && strings.Join(v.GetStringSlice(prefix+".rtl"), ",") == "all" {
			return nil
		}
		if len(args) > 0 {
			return fmt.Errorf("%s takes no arguments (got %q); the O-NICs --rtl runs as cards follow it (--rtl onicA,onicB)", cmd.Name(), args[0])
		}
		return nil
	}
}

// rtlFlagSet declares --rtl, --vcd and --vcd-out.
func rtlFlagSet(c *cobra.Command) {
	c.Flags().StringSlice("rtl", nil, "run these O-NICs (all with --rtl alone) as their generated cards, cycle-simulated, instead of the Go model (docs/hostif.md, \"The RTL backend\")")
	c.Flags().Lookup("rtl").NoOptDefVal = "all"
	c.Flags().String("vcd", "", "with --rtl: write an RTL O-NIC's waveform, ONIC or ONIC:FROM-TO in simulated time (onicA:0-20us)")
	c.Flags().String("vcd-out", "", "the waveform's file: .fst (GTKWave's vcd2fst converts it) or .vcd (default ONIC.fst where vcd2fst is on PATH, else ONIC.vcd)")
	c.Flags().Bool("rtl-interpret", false, "run the cards on the interpreter instead of compiling them (onic builds them once with go into its cache)")
}

// byteSize parses a byte count with a unit between lo and hi bytes.
func byteSize(s string, lo, hi int64) (int64, error) { return readfile.ParseSize(s, lo, hi) }
