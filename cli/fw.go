package cli

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/firmware"
	"onic/firmware/build"
	"onic/firmware/plan"
	"onic/internal/readfile"
)

func newFWCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "fw",
		Short: "Firmware images: keys, build, sign, inspect, verify, diff, pack, costs, plan, extract",
		Long: `A firmware image is what is deployed to an O-NIC: the PCIe manager (the static
region) and the kernels in its reconfigurable slots, built from a firmware spec
(YAML), described by an msgp manifest listing every payload with its SHA-256,
and signed with ed25519 developer keys (docs/firmware.md). The loader checks
all of it against a trust store before touching a running O-NIC.`,
		Example: `  onic fw keygen --out ops
  onic fw build spec.yaml --key ops.key --out onic-a.onicfw
  onic fw inspect onic-a.onicfw
  onic fw verify onic-a.onicfw --trust trust.yaml`,
		RunE: areaRunE,
	}
	c.AddCommand(newFWKeygenCmd(v), newFWBuildCmd(v), newFWSignCmd(v), newFWInspectCmd(v), newFWVerifyCmd(v),
		newFWDiffCmd(v), newFWPackCmd(v), newFWCostsCmd(v), newFWPlanCmd(v), newFWExtractCmd(v))
	return c
}

func newFWKeygenCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "keygen",
		Short: "Make an ed25519 developer key pair: NAME.key (private, mode 0600) and NAME.pub",
		Long: `Writes NAME.key (PKCS #8 PEM, readable only by you) and NAME.pub (PKIX PEM), the
forms 'openssl genpkey -algorithm ed25519' and 'openssl pkey -pubout' write.
Existing files are never overwritten.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name := v.GetString("fw.keygen.out")
			if name == "" {
				return errors.New("--out: name the key files")
			}
			if base := filepath.Base(name); strings.HasSuffix(name, "/") || base == "." || base == ".." || strings.HasPrefix(base, ".") {
				return fmt.Errorf("--out %q: give a base name for the key files (ops writes ops.key and ops.pub), not a directory or a hidden name", name)
			}
			pub, priv, err := firmware.GenerateKey(rand.Reader)
			if err != nil {
				return err
			}
			for _, f := range []struct {
				path string
				data []byte
				mode os.FileMode
			}{{name + ".key", firmware.MarshalPrivateKey(priv), 0o600}, {name + ".pub", firmware.MarshalPublicKey(pub), 0o644}} {
				fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
				if err != nil {
					return fmt.Errorf("--out: %v", err)
				}
				_, err = fh.Write(f.data)
				if cerr := fh.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return fmt.Errorf("--out: %v", err)
				}
				if !v.GetBool("fw.keygen.json") {
					fmt.Fprintln(cmd.OutOrStdout(), f.path)
				}
			}
			if v.GetBool("fw.keygen.json") {
				return printJSON(cmd.OutOrStdout(), map[string]string{"key": name + ".key", "pub": name + ".pub", "key_id": firmware.KeyID(pub)})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key id %s\n", firmware.KeyID(pub))
			return nil
		},
	}
	c.Flags().String("out", "", "base name of the key files")
	c.Flags().Bool("json", false, "print the files and the key ID as JSON")
	bindFlags(v, c, "fw.keygen")
	return c
}

// signWith signs im with each key file in paths.
func signWith(im *firmware.Image, paths []string) error {
	for _, p := range paths {
		k, err := firmware.ReadPrivateKey(p)
		if err != nil {
			return fmt.Errorf("--key: %v", err)
		}
		im.Sign(k)
	}
	return nil
}

// writeImage writes an image file.
func writeImage(cmd *cobra.Command, im *firmware.Image, path string) error {
	if path == "" {
		return errors.New("--out: name the image file")
	}
	b, err := im.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("--out: %v", err)
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		m := &im.Manifest
		return printJSON(cmd.OutOrStdout(), struct {
			File            string `json:"file"`
			Kind            string `json:"kind"`
			Name            string `json:"name"`
			Version         string `json:"version"`
			SecurityVersion uint32 `json:"security_version"`
			Static          string `json:"static"`
			Payloads        int    `json:"payloads"`
			Bytes           int    `json:"bytes"`
			Signatures      int    `json:"signatures"`
		}{path, m.Kind, m.Name, m.Version, m.SecurityVersion, m.Static, len(im.Payloads), len(b), len(im.Signatures)})
	}
	sig := "unsigned (sign it with onic fw sign)"
	if n := len(im.Signatures); n > 0 {
		sig = fmt.Sprintf("%d signature(s)", n)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %s %s %s, %d payloads, %d bytes, %s\n", path, im.Manifest.Kind, im.Manifest.Name, im.Manifest.Version, len(im.Payloads), len(b), sig)
	return nil
}

func newFWBuildCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "build SPEC.yaml",
		Short: "Build a firmware image from a spec: manager RTL, kernels in their task shells, measured by Yosys",
		Long: `Builds the image of a firmware spec (docs/firmware.md): the spec itself, the PCIe
manager's Verilog and vendor files (the static region), and each slot's kernel
in its task shell, whose resources Yosys synth_xilinx measures (results are
kept in the user's cache directory, keyed by the Verilog's SHA-256). Bitstream
sizes are estimated from the part until 'onic fw pack' attaches real ones.
--key signs it (repeat for several keys); --kernel-slot N writes the kernel
image of slot N instead, for loading into a running image by partial
reconfiguration. The same spec gives the same bytes.`,
		Example: "  onic fw build spec.yaml --key ops.key --out onic-a.onicfw\n  onic fw build spec.yaml --kernel-slot 1 --key alice.key --out filter.onicfw",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := v.GetInt("fw.build.kernel-slot"); cmd.Flags().Changed("kernel-slot") && n < 0 {
				return fmt.Errorf("--kernel-slot %d: a slot number is 0 or more (leave it out for the whole image)", n)
			}
			s, err := firmware.LoadSpecFile(args[0])
			if err != nil {
				return err
			}
			cache := build.DefaultCacheDir()
			if v.GetBool("fw.build.no-cache") {
				cache = ""
			}
			var starting func(string)
			if e := cmd.ErrOrStderr(); isTerminal(e) {
				start := time.Now()
				starting = func(top string) {
					fmt.Fprintf(e, "onic fw build: synthesising %s with Yosys, not in the cache (%v so far; a minute or so each)\n", top, time.Since(start).Round(time.Second))
				}
			}
			im, err := build.Build(s, build.YosysTelling(cache, starting))
			if err != nil {
				return fmt.Errorf("%s: %v", args[0], err)
			}
			if n := v.GetInt("fw.build.kernel-slot"); n >= 0 {
				if im, err = im.KernelImage(n); err != nil {
					return fmt.Errorf("--kernel-slot: %v", err)
				}
			}
			if err := signWith(im, v.GetStringSlice("fw.build.key")); err != nil {
				return err
			}
			return writeImage(cmd, im, v.GetString("fw.build.out"))
		},
	}
	c.Flags().String("out", "", "image file to write")
	c.Flags().StringSlice("key", nil, "private key file to sign with (repeatable)")
	c.Flags().Int("kernel-slot", -1, "write the kernel image of this slot instead of the whole image")
	c.Flags().Bool("no-cache", false, "synthesise every kernel again instead of using cached results")
	c.Flags().Bool("json", false, "print what was written as JSON")
	bindFlags(v, c, "fw.build")
	return c
}

func newFWSignCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "sign IMAGE",
		Short: "Add signatures to an image (an operator countersigning a developer's image)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			if _, err := im.Signers(); err != nil {
				return fmt.Errorf("%s: %v", args[0], err)
			}
			keys := v.GetStringSlice("fw.sign.key")
			if len(keys) == 0 {
				return errors.New("--key: give a private key file")
			}
			if err := signWith(im, keys); err != nil {
				return err
			}
			out := v.GetString("fw.sign.out")
			if out == "" {
				out = args[0]
			}
			return writeImage(cmd, im, out)
		},
	}
	c.Flags().String("out", "", "image file to write (default: IMAGE, in place)")
	c.Flags().StringSlice("key", nil, "private key file to sign with (repeatable)")
	c.Flags().Bool("json", false, "print what was written as JSON")
	bindFlags(v, c, "fw.sign")
	return c
}

func newFWInspectCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "inspect IMAGE",
		Short: "Print an image's manifest, payloads and signatures (--json for the manifest as JSON)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			if v.GetBool("fw.inspect.json") {
				out := struct {
					Manifest   firmware.Manifest    `json:"manifest"`
					Signatures []firmware.Signature `json:"signatures"`
				}{im.Manifest, im.Signatures}
				return printJSON(cmd.OutOrStdout(), out)
			}
			im.Describe(cmd.OutOrStdout())
			return nil
		},
	}
	c.Flags().Bool("json", false, "print JSON")
	bindFlags(v, c, "fw.inspect")
	return c
}

func newFWExtractCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "extract IMAGE --out DIR",
		Short: "Write an image's payloads into a new directory: static/ (build.tcl there builds the card with DFX), slot<N>/, spec.json",
		Long: `Writes every payload of the image under its name in DIR, which must be new or
empty: static/ holds the card (onic_top and everything the static region
needs, files.f, the XDC, build.tcl, the register header), slot<N>/ each
slot's reconfigurable module with its files.f, spec.json the spec the image
was built from. build.tcl in static/ reads the slots from ../slot<N>/
(docs/firmware.md). The image is parsed (hashes checked) and its signatures
verified first: build.tcl is code its author wrote, so say whose signature
you accept — --trust FILE (a signer the loader's trust store lets load it)
or --pub KEY (that key signed it). --no-verify looks inside an image
without that; never run what it extracts.`,
		Example: "  onic fw extract onic-a.onicfw --trust trust.yaml --out onic-a\n  cd onic-a/static && vivado -mode batch -source build.tcl",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := v.GetString("fw.extract.out")
			if dir == "" {
				return errors.New("--out: name the directory to write")
			}
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			if err := extractTrusted(cmd, im, args[0], v.GetString("fw.extract.trust"), v.GetString("fw.extract.pub"), v.GetBool("fw.extract.no-verify")); err != nil {
				return err
			}
			paths, err := im.Extract(dir)
			if err != nil {
				return fmt.Errorf("--out: %v", err)
			}
			if v.GetBool("fw.extract.json") {
				return printJSON(cmd.OutOrStdout(), struct {
					Dir     string   `json:"dir"`
					Kind    string   `json:"kind"`
					Name    string   `json:"name"`
					Version string   `json:"version"`
					Files   []string `json:"files"`
				}{dir, im.Manifest.Kind, im.Manifest.Name, im.Manifest.Version, paths})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d files from %s %s %s\n", dir, len(paths), im.Manifest.Kind, im.Manifest.Name, im.Manifest.Version)
			return nil
		},
	}
	c.Flags().String("out", "", "directory to write (new or empty)")
	c.Flags().String("trust", "", "extract only if a signer this trust store (YAML) lets load the image signed it")
	c.Flags().String("pub", "", "extract only if this public key signed the image")
	c.Flags().Bool("no-verify", false, "extract without checking who signed the image (look, never build)")
	c.Flags().Bool("json", false, "print the files written as JSON")
	bindFlags(v, c, "fw.extract")
	return c
}

// extractTrusted checks, before fw extract writes anything, that the
// image is signed by whom the user accepts (--trust, --pub), or that they
// chose to look without (--no-verify, which says so on stderr).
func extractTrusted(cmd *cobra.Command, im *firmware.Image, file, trustPath, pubPath string, noVerify bool) error {
	if noVerify {
		if trustPath != "" || pubPath != "" {
			return errors.New("--no-verify: not with --trust or --pub")
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: signatures not verified (--no-verify): do not build or run what it holds\n", file)
		return nil
	}
	if trustPath == "" && pubPath == "" {
		return fmt.Errorf("%s: say whose signature you accept: --trust FILE or --pub KEY (or --no-verify to look without building)", file)
	}
	signers, err := im.Signers()
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if pubPath != "" {
		pub, err := firmware.ReadPublicKey(pubPath)
		if err != nil {
			return fmt.Errorf("--pub: %v", err)
		}
		found := false
		for _, s := range signers {
			found = found || s.Equal(pub)
		}
		if !found {
			return fmt.Errorf("--pub: key %s did not sign %s", firmware.KeyID(pub), file)
		}
	}
	if trustPath != "" {
		t, err := firmware.LoadTrustFile(trustPath)
		if err != nil {
			return fmt.Errorf("--trust: %v", err)
		}
		ok, lines, err := im.MayLoad(t)
		if err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
		if !ok {
			return fmt.Errorf("%s: no signer that %s trusts may load it (%s)", file, trustPath, strings.Join(lines, "; "))
		}
	}
	return nil
}

func newFWVerifyCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "verify IMAGE",
		Short: "Check an image's structure, payload hashes and signatures, and who may load it",
		Long: `Checks that IMAGE parses, every payload matches its size and SHA-256, every
signature verifies, and each kernel fits its slot's region. With --trust (the
loader's trust store) it also says, for each trusted key that signed it, what
the loader will let that key do with it (an operator: load it; a tenant: load
a kernel image into a slot the running image grants, never a whole image);
with --pub, that the key signed it. Exits 1 on any failure, including an
image no trusted signer may load.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			signers, err := im.Signers()
			if err != nil {
				return fmt.Errorf("%s: %v", args[0], err)
			}
			if len(signers) == 0 {
				return fmt.Errorf("%s: unsigned", args[0])
			}
			type verdict struct {
				File       string   `json:"file"`
				Kind       string   `json:"kind"`
				Name       string   `json:"name"`
				Version    string   `json:"version"`
				Payloads   int      `json:"payloads"`   // each matches its size and SHA-256
				Signatures int      `json:"signatures"` // each verifies
				SignedBy   string   `json:"signed_by,omitempty"`
				Signers    []string `json:"trusted_signers,omitempty"` // what each may do, with --trust
			}
			vd := verdict{File: args[0], Kind: im.Manifest.Kind, Name: im.Manifest.Name, Version: im.Manifest.Version,
				Payloads: len(im.Payloads), Signatures: len(signers)}
			if p := v.GetString("fw.verify.pub"); p != "" {
				pub, err := firmware.ReadPublicKey(p)
				if err != nil {
					return fmt.Errorf("--pub: %v", err)
				}
				found := false
				for _, s := range signers {
					found = found || s.Equal(pub)
				}
				if !found {
					return fmt.Errorf("--pub: key %s did not sign %s", firmware.KeyID(pub), args[0])
				}
				vd.SignedBy = fmt.Sprintf("%s (%s)", firmware.KeyID(pub), p)
			}
			if err := im.CheckFit(); err != nil {
				return fmt.Errorf("%s: the loader will refuse it: %v", args[0], err)
			}
			if p := v.GetString("fw.verify.trust"); p != "" {
				t, err := firmware.LoadTrustFile(p)
				if err != nil {
					return fmt.Errorf("--trust: %v", err)
				}
				ok, lines, err := im.MayLoad(t)
				if err != nil {
					return fmt.Errorf("%s: %v", args[0], err)
				}
				if !ok {
					return fmt.Errorf("%s: no signer that %s trusts may load it (%s)", args[0], p, strings.Join(lines, "; "))
				}
				vd.Signers = lines
			}
			w := cmd.OutOrStdout()
			if v.GetBool("fw.verify.json") {
				return printJSON(w, vd)
			}
			fmt.Fprintf(w, "%s: %s %s %s: %d payloads match their hashes; %d signature(s) verify\n", vd.File, vd.Kind, vd.Name, vd.Version, vd.Payloads, vd.Signatures)
			if vd.SignedBy != "" {
				fmt.Fprintf(w, "signed by %s\n", vd.SignedBy)
			}
			for _, l := range vd.Signers {
				fmt.Fprintf(w, "signer %s\n", l)
			}
			return nil
		},
	}
	c.Flags().String("trust", "", "the loader's trust store (YAML)")
	c.Flags().String("pub", "", "a public key that must have signed the image")
	c.Flags().Bool("json", false, "print the verdict as JSON")
	bindFlags(v, c, "fw.verify")
	return c
}

func newFWDiffCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "diff A B",
		Short: "Show what changed between two images: manifest lines, - for A and + for B",
		Long: `Prints the manifest lines that differ, - for A and + for B. Exits 0 when the
images are the same, 1 when they differ (as diff does), and 1 with an error
line when one cannot be read.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			b, err := firmware.ReadFile(args[1])
			if err != nil {
				return err
			}
			d := firmware.Diff(a, b)
			if v.GetBool("fw.diff.json") {
				// The manifest lines only A has, and only B.
				res := struct {
					Same bool     `json:"same"`
					A    []string `json:"only_a"`
					B    []string `json:"only_b"`
				}{Same: d == "", A: []string{}, B: []string{}}
				for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
					switch {
					case strings.HasPrefix(l, "-"):
						res.A = append(res.A, strings.TrimSpace(l[1:]))
					case strings.HasPrefix(l, "+"):
						res.B = append(res.B, strings.TrimSpace(l[1:]))
					}
				}
				if err := printJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
				if !res.Same {
					return exitCode(1)
				}
				return nil
			}
			if d == "" {
				fmt.Fprint(cmd.OutOrStdout(), "the images are the same\n")
				return nil
			}
			fmt.Fprint(cmd.OutOrStdout(), d)
			return exitCode(1) // as diff(1): the images differ
		},
	}
	c.Flags().Bool("json", false, "print the lines only A has and only B has as JSON (the exit code as without)")
	bindFlags(v, c, "fw.diff")
	return c
}

func newFWPackCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "pack IMAGE --bitstream FILE --slot N|full",
		Short: "Attach a vendor bitstream to an image (a slot's partial one, or the full one)",
		Long: `Adds a bitstream from the vendor tools to IMAGE as a payload (replacing one
attached before); the manifest's bitstream size becomes the file's, so reflash
costs use it instead of the estimate. The manifest changes, so the old
signatures are dropped: sign again with --key.`,
		Example: "  onic fw pack onic-a.onicfw --bitstream slot0_filter_partial.bit --slot 0 --key ops.key --out onic-a-packed.onicfw",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			slot := -1
			switch s := v.GetString("fw.pack.slot"); s {
			case "full":
			case "":
				return errors.New("--slot: give a slot number or 'full'")
			default:
				if slot, err = strconv.Atoi(s); err != nil || slot < 0 {
					return fmt.Errorf("--slot %q: a slot number or 'full'", s)
				}
			}
			path := v.GetString("fw.pack.bitstream")
			if path == "" {
				return errors.New("--bitstream: name the bitstream file")
			}
			bit, err := readfile.Read(path, firmware.MaxImageFile)
			if err != nil {
				return fmt.Errorf("--bitstream: %v", err)
			}
			if err := im.Attach(slot, bit); err != nil {
				if errors.As(err, new(*firmware.BitstreamError)) {
					return fmt.Errorf("--bitstream %s: %v", path, err)
				}
				return fmt.Errorf("--slot: %v", err)
			}
			if err := signWith(im, v.GetStringSlice("fw.pack.key")); err != nil {
				return err
			}
			out := v.GetString("fw.pack.out")
			if out == "" {
				out = args[0]
			}
			return writeImage(cmd, im, out)
		},
	}
	c.Flags().String("bitstream", "", "bitstream file (.bit or .bin)")
	c.Flags().String("slot", "", "slot number, or 'full' for the full bitstream")
	c.Flags().StringSlice("key", nil, "private key file to sign with (repeatable)")
	c.Flags().String("out", "", "image file to write (default: IMAGE, in place)")
	c.Flags().Bool("json", false, "print what was written as JSON")
	bindFlags(v, c, "fw.pack")
	return c
}

func newFWCostsCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "costs IMAGE",
		Short: "The reflash cost of an image and of each kernel in it, for planners (--json)",
		Long: `Prints what deploying IMAGE costs on a board: the full reconfiguration (load over
the configuration port, PCIe link down and retrain, rescan, optical bring-up)
and each slot's partial reconfiguration over ICAP. Board figures default to
docs/firmware.md's and are overridden with --config (fw.costs.board.*) or
the flags.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im, err := firmware.ReadFile(args[0])
			if err != nil {
				return err
			}
			var b firmware.Board
			if err := v.UnmarshalKey("fw.costs.board", &b); err != nil {
				return fmt.Errorf("fw.costs.board: %v", err)
			}
			for _, r := range []struct {
				flag string
				to   *float64
			}{{"icap-mbps", &b.ICAPMBps}, {"config-mbps", &b.ConfigMBps}} {
				x := v.GetFloat64("fw.costs." + r.flag)
				if cmd.Flags().Changed(r.flag) && !(x >= firmware.MinMBps && x <= firmware.MaxMBps) {
					return fmt.Errorf("--%s %g: must be %g to %g MB/s", r.flag, x, float64(firmware.MinMBps), float64(firmware.MaxMBps))
				}
				if x != 0 {
					*r.to = x
				}
			}
			t, err := firmware.CostTableOf(im, b)
			if err != nil {
				return err
			}
			if v.GetBool("fw.costs.json") {
				return printJSON(cmd.OutOrStdout(), t)
			}
			t.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	c.Flags().Bool("json", false, "print JSON")
	c.Flags().Float64("icap-mbps", 0, "partial reconfiguration port, MB/s (default 800; 500 on multi-die parts)")
	c.Flags().Float64("config-mbps", 0, "full configuration port, MB/s (default 500)")
	bindFlags(v, c, "fw.costs")
	return c
}

func newFWPlanCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "plan TRACE.yaml",
		Short: "Plan which kernels each O-NIC keeps in its slots for a task trace, and the reflash time",
		Long: `Reads a task trace (docs/firmware.md: per O-NIC a slot count and a sequence of
tasks, each needing one kernel, with optional start times and durations; and
each kernel's load time) and prints a load/evict plan and its total reflash
time. Policies: optimal (offline minimum total reflash time, by min-cost flow),
lru, cost-aware (Landlord, online); 'all' (default) compares the three.
--costs takes the load times from 'onic fw costs --json' output instead.`,
		Example: "  onic fw plan trace.yaml\n  onic fw plan trace.yaml --policy optimal --json",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := plan.LoadTraceFile(args[0])
			if err != nil {
				return err
			}
			loads := t.Loads()
			if p := v.GetString("fw.plan.costs"); p != "" {
				b, err := readfile.Read(p, plan.MaxTraceFile)
				if err != nil {
					return fmt.Errorf("--costs: %v", err)
				}
				var ct firmware.CostTable
				if err := json.Unmarshal(b, &ct); err != nil {
					return fmt.Errorf("--costs %s: %v", p, err)
				}
				for _, k := range ct.Kernels {
					if k.Kernel != "" {
						loads[k.Kernel] = k.Cost.Total
					}
				}
			}
			policies := []string{v.GetString("fw.plan.policy")}
			if policies[0] == "all" {
				policies = plan.Policies
			}
			var all []plan.ONICPlan
			for _, p := range policies {
				r, err := plan.PlanTrace(t, p, loads)
				if err != nil {
					return fmt.Errorf("%s: %v", args[0], err)
				}
				all = append(all, r...)
			}
			w := cmd.OutOrStdout()
			if v.GetBool("fw.plan.json") {
				return printJSON(w, all)
			}
			fmt.Fprintf(w, "%-12s %-10s %6s %6s %6s %14s %14s %14s\n", "onic", "policy", "tasks", "slots", "loads", "reflash", "stall", "end")
			for _, r := range all {
				fmt.Fprintf(w, "%-12s %-10s %6d %6d %6d %14v %14v %14v\n", r.ONIC, r.Policy, len(r.Steps), r.Slots, r.Loads, r.Reflash, r.Stall, r.End)
			}
			if v.GetBool("fw.plan.steps") {
				for _, r := range all {
					fmt.Fprintf(w, "\n%s, %s:\n", r.ONIC, r.Policy)
					for _, s := range r.Steps {
						what := "hit"
						if !s.Hit {
							what = "load"
							if s.Evict != "" {
								what += ", evicting " + s.Evict
							}
						}
						fmt.Fprintf(w, "  task %-5d %-16s slot %d  %-28s ready %v stall %v\n", s.Task, s.Kernel, s.Slot, what, s.Ready, s.Stall)
					}
				}
			}
			return nil
		},
	}
	c.Flags().String("policy", "all", "optimal, lru, cost-aware or all")
	c.Flags().Bool("json", false, "print the plans as JSON (steps, per-task stall, totals)")
	c.Flags().Bool("steps", false, "print every task's step too")
	c.Flags().String("costs", "", "load times from 'onic fw costs --json' output")
	bindFlags(v, c, "fw.plan")
	return c
}
