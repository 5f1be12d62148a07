// Package cli is the onic command line: the toolchain and emulator for
// FPGA optical NICs, one subcommand per area (tlp, pcie, emu, hdl, kernel,
// fw). The onic command (cmd/onic) is Main; a program of your own that
// adds your kernels to the built-in ones is Main with them:
//
//	func main() { os.Exit(cli.Main(mykernel.Kernel())) }
//
// and every onic command then knows them (kernel list/gen/test, emu run
// with them in a slot, fw build with them in a spec).
//
// Every command prints --help, takes --config FILE (YAML) and ONIC_*
// environment overrides, and on bad input prints a single line naming the
// problem to stderr and exits 1.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/internal/readfile"
	"onic/internal/suggest"
	"onic/kernels"
)

// version is set at build time with -ldflags "-X onic/cli.version=..."; without
// it the module version or VCS revision from the build info is used.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel (no build information)"
	}
	return describeBuild(bi)
}

// describeBuild is the version line of a build: the module version ("devel"
// for a build from a checkout), then the VCS revision, its commit time
// and "+modified" for uncommitted changes, from the build information the
// go command stamps (make build asks for it; a go build with
// -buildvcs=false has none, and says so).
func describeBuild(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	rev := set["vcs.revision"]
	if rev == "" {
		return v + " (no VCS revision: built with -buildvcs=false or outside a checkout)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	parts := []string{set["vcs"] + " " + rev}
	if t := set["vcs.time"]; t != "" {
		parts = append(parts, t)
	}
	if set["vcs.modified"] == "true" {
		parts = append(parts, "modified")
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}

// Main runs the onic command line on the process's arguments and
// standard streams, with the kernels ks added to the built-in library
// (kernels.Register: each must be valid and named unlike every other),
// and returns the exit code: 0, or 1 after a one-line error on stderr.
func Main(ks ...*kernels.Kernel) int {
	if err := kernels.Register(ks...); err != nil {
		printError(os.Stderr, err)
		return 1
	}
	return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// run executes the CLI with the given arguments and streams and returns the
// process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// --version on any command, before its arguments are checked (onic fw
	// costs --version has no IMAGE to give): what onic version prints.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--version" {
			fmt.Fprintf(stdout, "onic version %s\n", versionString())
			return 0
		}
	}
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		var ex exitCode
		if errors.As(err, &ex) {
			return int(ex) // the command has said what it had to
		}
		printError(stderr, err)
		return 1
	}
	return 0
}

// exitCode is an error that only sets the exit code: a command that
// printed its result and ends as diff does (1: the inputs differ).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// unknownFlag is pflag's message for a flag the command does not have.
var unknownFlag = regexp.MustCompile(`^unknown flag: --([^\s=]+)`)

// flagValueError is pflag's message for a value it could not parse.
var flagValueError = regexp.MustCompile(`^invalid argument "(.*)" for "(.*?)" flag: (.*)$`)

// flagError rewrites a flag parsing error in onic's words: the flag, the
// value and what it should be, not the parser's text (strconv.ParseInt:
// parsing "abc": invalid syntax).
func flagError(err error) string {
	m := flagValueError.FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	val, flag, why := m[1], m[2], m[3]
	if i := strings.Index(flag, ", "); i >= 0 { // "-n, --count"
		flag = flag[i+2:]
	}
	want := ""
	switch {
	case strings.Contains(why, "ParseInt"), strings.Contains(why, "ParseUint"):
		want = "not a whole number"
		if strings.Contains(why, "out of range") {
			want = "out of range"
		}
	case strings.Contains(why, "ParseFloat"):
		want = "not a number"
	case strings.Contains(why, "ParseBool"):
		want = "not true or false"
	case strings.HasPrefix(why, "time: "):
		want = "not a duration: want a number with a unit (ns, us, ms or s), e.g. 2us"
	default:
		return err.Error()
	}
	return fmt.Sprintf("%s %q: %s", flag, val, want)
}

// printJSON writes v to w as indented JSON, as the --json of every
// listing prints it.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printError writes err to w: one line per error it joins (a kernel
// with three mistakes gets three lines), each starting "onic: ".
func printError(w io.Writer, err error) {
	for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			fmt.Fprintf(w, "onic: %s\n", line)
		}
	}
}

// newRootCmd builds the command tree. Each call gets its own viper instance,
// so tests can run commands side by side.
func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	v := viper.New()
	v.SetEnvPrefix("ONIC")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()

	root := &cobra.Command{
		Use:   "onic",
		Short: "Toolchain and emulator for FPGA optical NICs (O-NICs)",
		Long: `onic is the toolchain and emulator for FPGA optical NICs: PCIe over optical
ports through a MEMS switch, with an FPGA PCIe manager and in-network kernels.

Areas:
  tlp     PCIe Transaction Layer Packets: decode, encode, demo
  pcie    PCIe model: enumerate a topology, tree, configuration-space dumps
  emu     emulator: run cluster scenarios, linkbench (one PCIe link)
  hdl     Verilog generation: the PCIe manager, checks with Verilator/Icarus/Yosys
  kernel  in-network kernels: list, new, test, gen
  fw      firmware images: keygen, build, sign, inspect, verify, diff, pack, costs

Configuration: --config FILE (YAML); environment variables ONIC_<AREA>_<VERB>_<FLAG>
override flags' defaults (for example ONIC_TLP_DECODE_TEXT=true).`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cfg, _ := cmd.Flags().GetString("config"); cfg != "" {
				// A regular file of at most 1 MiB, of the kind its
				// extension says (YAML without one).
				b, err := readfile.Read(cfg, 1<<20)
				if err != nil {
					return fmt.Errorf("config %v", err)
				}
				kind := strings.TrimPrefix(filepath.Ext(cfg), ".")
				if kind == "" || kind == "yml" {
					kind = "yaml"
				}
				v.SetConfigType(kind)
				if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
					return fmt.Errorf("config %s: %v", cfg, err)
				}
				// Every key must be a flag's: a misspelt one would
				// otherwise be ignored without a word.
				only := viper.New()
				only.SetConfigType(kind)
				if err := only.ReadConfig(bytes.NewReader(b)); err != nil {
					return fmt.Errorf("config %s: %v", cfg, err)
				}
				known := settings()
				for _, k := range only.AllKeys() {
					if !known[k] {
						if s := didYouMean(k, known); s != "" {
							return fmt.Errorf("config %s: %s: no such setting; did you mean %s?", cfg, k, s)
						}
						return fmt.Errorf("config %s: %s: no such setting (settings are <area>.<command>.<flag>, as emu.run.scenario)", cfg, k)
					}
				}
			}
			return nil
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().String("config", "", "YAML configuration file")
	root.PersistentFlags().Bool("version", false, "print onic's version (any command; as onic version)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if m := unknownFlag.FindStringSubmatch(err.Error()); m != nil {
			// A misspelt flag: the nearest of the command's.
			known := map[string]bool{}
			c.Flags().VisitAll(func(f *pflagFlag) { known[f.Name] = true })
			if s := didYouMean(m[1], known); s != "" {
				return fmt.Errorf("unknown flag: --%s; did you mean --%s? (see '%s --help')", m[1], s, c.CommandPath())
			}
		}
		return fmt.Errorf("%s (see '%s --help')", flagError(err), c.CommandPath())
	})
	root.AddCommand(newTLPCmd(v), newPCIeCmd(v), newEmuCmd(v), newHDLCmd(v), newKernelCmd(v), newFWCmd(v), newPlanCmd(v), newVersionCmd())
	return root
}

// newVersionCmd is 'onic version': what --version prints.
func newVersionCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "version",
		Short: "Print onic's version (as --version does)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if j, _ := cmd.Flags().GetBool("json"); j {
				return printJSON(cmd.OutOrStdout(), struct {
					Version string `json:"version"`
					Go      string `json:"go"`
				}{versionString(), runtime.Version()})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "onic version %s\n", versionString())
			return nil
		},
	}
	c.Flags().Bool("json", false, "print the version and the Go release it was built with as JSON")
	return c
}

// bindFlags makes each of cmd's local flags readable through v under
// "<prefix>.<flag>", so a config file or ONIC_<PREFIX>_<FLAG> can set it.
func bindFlags(v *viper.Viper, cmd *cobra.Command, prefix string) {
	cmd.LocalFlags().VisitAll(func(f *pflagFlag) {
		_ = v.BindPFlag(prefix+"."+f.Name, f)
		boundKeys.Lock()
		boundKeys.m[strings.ToLower(prefix+"."+f.Name)] = true
		boundKeys.Unlock()
	})
}

// boundKeys are the settings a --config file may give: every command's
// flags, as bindFlags names them. Commands are built concurrently (the
// tests run several onic invocations in parallel), hence the lock.
var boundKeys = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

// settings is a copy of boundKeys' set.
func settings() map[string]bool {
	boundKeys.Lock()
	defer boundKeys.Unlock()
	return maps.Clone(boundKeys.m)
}

// didYouMean is the known key nearest to k (at most a third of its
// length away), or "".
func didYouMean(k string, known map[string]bool) string {
	return suggest.Nearest(k, slices.Collect(maps.Keys(known)))
}

// areaRunE is the RunE of an area command (such as `onic tlp`): with no
// verb it prints help; an unknown verb is an error.
func areaRunE(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2 // (cobra sets it only on its own path)
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return fmt.Errorf("unknown command %q for %q; did you mean %s?", args[0], cmd.CommandPath(), strings.Join(s, " or "))
		}
		return fmt.Errorf("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return cmd.Help()
}

// exactArgs is cobra.ExactArgs(n) with an error that names the arguments
// the command's Use line gives ("onic fw costs: give IMAGE"), not only
// how many.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		var want []string
		words := strings.Fields(cmd.Use)[1:]
		for i := 0; i < len(words); i++ {
			switch w := words[i]; {
			case strings.HasPrefix(w, "-"):
				i++ // a flag's value, not an argument
			case w == strings.ToUpper(w) && !strings.HasPrefix(w, "["):
				want = append(want, w)
			}
		}
		path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
		if len(args) < n {
			return fmt.Errorf("%s: give %s (see '%s --help')", path, strings.Join(want, " and "), cmd.CommandPath())
		}
		return fmt.Errorf("%s: takes %s, and %d more were given (%q)", path, strings.Join(want, " and "), len(args)-n, args[n:])
	}
}
