package cli

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"onic/internal/readfile"
	"onic/tlp"
	"onic/tlp/pcap"
)

type pflagFlag = pflag.Flag

func newTLPCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "tlp",
		Short: "PCIe Transaction Layer Packets: decode, encode, demo",
		Long: `Decode, encode and check PCIe Transaction Layer Packets (PCIe Base
Specification 5.0, non-flit mode). JSON field names are documented in
docs/tlp.md; captures use the pcap format of docs/pcap.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: areaRunE,
	}
	c.AddCommand(newTLPDecodeCmd(v), newTLPEncodeCmd(v), newTLPDemoCmd(v))
	return c
}

// recordPrefix is how the pcap reader names a record in its errors.
var recordPrefix = regexp.MustCompile(`^pcap record (\d+): `)

// source names where an input TLP came from, for error messages.
type source struct {
	kind string // "argument", "line" or "pcap record"
	n    int
}

func (s source) String() string { return fmt.Sprintf("%s %d", s.kind, s.n) }

// lineError ties an error to the input that caused it.
type lineError struct {
	src source
	err error
}

func (e *lineError) Error() string { return e.src.String() + ": " + e.err.Error() }
func (e *lineError) Unwrap() error { return e.err }

// errBadInput is returned after --keep-going reported bad inputs.
var errBadInput = errors.New("bad input")

// parseHex reads a TLP written as hex: whitespace anywhere, an optional 0x.
func parseHex(s string) ([]byte, error) {
	s = strings.Join(strings.Fields(s), "")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, errors.New("no hex digits")
	}
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("odd number of hex digits (%d)", len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		var ie hex.InvalidByteError
		if errors.As(err, &ie) {
			return nil, fmt.Errorf("%q is not a hex digit", rune(ie))
		}
		return nil, err
	}
	return b, nil
}

func newTLPDecodeCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "decode [HEX ...]",
		Short: "Decode TLPs from hex or a pcap capture",
		Long: `Decode TLPs given as hex arguments, as hex lines on stdin (spaces allowed,
blank lines and lines starting with # skipped), or from a capture (--pcap).
On the command line a TLP is one argument, or a run of one-DW arguments
(8 hex digits each) that onic frames by the sizes the headers announce.
Each TLP is checked against the specification's rules unless --lax is given.

Output is one JSON object per TLP (JSON Lines); --text prints one readable
line per TLP instead. Records from a capture also carry record, time_ns, tap
and direction.

A bad TLP stops decoding with a one-line error naming its line and the rule
it breaks; with --keep-going each bad TLP is reported and decoding goes on
(the exit code is still 1).`,
		Example: `  onic tlp decode 40000001 0100050f fedc0010 11223344
  echo "4a000001 01000004 00000100 deadbeef" | onic tlp decode --text
  onic tlp decode --pcap bin/demo.pcap --text`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := decodeOpts{
				text:      v.GetBool("tlp.decode.text"),
				keepGoing: v.GetBool("tlp.decode.keep-going"),
				lax:       v.GetBool("tlp.decode.lax"),
				out:       bufio.NewWriter(cmd.OutOrStdout()),
				errw:      cmd.ErrOrStderr(),
			}
			defer opt.out.Flush()
			pcapPath := v.GetString("tlp.decode.pcap")
			switch {
			case pcapPath != "" && len(args) > 0:
				return errors.New("give hex arguments or --pcap, not both")
			case pcapPath != "":
				return opt.decodePcap(pcapPath)
			case len(args) > 0:
				for _, a := range splitArgs(args) {
					if err := opt.decodeOne(source{"argument", a.n}, a.hex); err != nil {
						return err
					}
				}
			default:
				sc := bufio.NewScanner(cmd.InOrStdin())
				sc.Buffer(make([]byte, 64*1024), 1<<20)
				for n := 1; sc.Scan(); n++ {
					line := strings.TrimSpace(sc.Text())
					if line == "" || strings.HasPrefix(line, "#") {
						continue
					}
					if err := opt.decodeOne(source{"line", n}, line); err != nil {
						return err
					}
				}
				if err := sc.Err(); err != nil {
					return fmt.Errorf("reading stdin: %v", err)
				}
			}
			return opt.finish()
		},
	}
	c.Flags().Bool("text", false, "print one readable line per TLP instead of JSON")
	c.Flags().String("pcap", "", "read TLPs from this capture file")
	c.Flags().Bool("keep-going", false, "report each bad TLP and continue")
	c.Flags().Bool("lax", false, "decode without checking the specification's rules")
	bindFlags(v, c, "tlp.decode")
	return c
}

// hexArg is one TLP from the command line and the number of the argument
// it starts at.
type hexArg struct {
	n   int
	hex string
}

// splitArgs groups arguments into TLPs. An argument of exactly one DW (8
// hex digits) cannot be a TLP on its own, so a run of such arguments is
// framed into TLPs by the sizes their headers announce (tlp.Size); any
// other argument is one TLP.
func splitArgs(args []string) []hexArg {
	var out []hexArg
	isDW := func(s string) bool {
		if len(s) != 8 {
			return false
		}
		_, err := hex.DecodeString(s)
		return err == nil
	}
	for i := 0; i < len(args); {
		if !isDW(args[i]) {
			out = append(out, hexArg{i + 1, args[i]})
			i++
			continue
		}
		j := i
		for j < len(args) && isDW(args[j]) {
			j++
		}
		run := args[i:j]
		for k := 0; k < len(run); {
			b, _ := hex.DecodeString(strings.Join(run[k:], ""))
			dws := len(run) - k
			if n, err := tlp.Size(b); err == nil && n%4 == 0 && n/4 <= dws {
				dws = n / 4
			}
			out = append(out, hexArg{i + k + 1, strings.Join(run[k:k+dws], " ")})
			k += dws
		}
		i = j
	}
	return out
}

type decodeOpts struct {
	text, keepGoing, lax bool
	out                  *bufio.Writer
	errw                 io.Writer
	bad                  int
	t                    tlp.TLP
	buf                  []byte
	names                *pcap.Reader // the capture's interface names (--pcap)
}

// fail reports a bad input: it stops the run, or with --keep-going prints
// the error and counts it.
func (o *decodeOpts) fail(src source, err error) error {
	le := &lineError{src, err}
	if !o.keepGoing {
		return le
	}
	o.bad++
	o.out.Flush()
	fmt.Fprintf(o.errw, "onic: %v\n", le)
	return nil
}

func (o *decodeOpts) finish() error {
	if o.bad > 0 {
		return fmt.Errorf("%d bad TLP(s): %w", o.bad, errBadInput)
	}
	return nil
}

func (o *decodeOpts) check() error {
	if o.lax {
		return nil
	}
	return o.t.Validate()
}

func (o *decodeOpts) decodeOne(src source, s string) error {
	b, err := parseHex(s)
	if err != nil {
		return o.fail(src, err)
	}
	decode := o.t.DecodeValidate
	if o.lax {
		decode = o.t.Decode
	}
	if err := decode(b); err != nil {
		return o.fail(src, err)
	}
	o.emit(nil)
	return nil
}

func (o *decodeOpts) emit(rec *pcap.Record) {
	b := o.buf[:0]
	if o.text {
		if rec != nil {
			b = fmt.Appendf(b, "%12.3fus tap %-3d %-4s ", float64(rec.At)/1e3, rec.Tap.Tap, rec.Tap.Direction)
			if o.names != nil {
				// A pcapng capture names its taps (the emulator's do).
				if n := o.names.Interface(rec.Interface); n != "" {
					b = fmt.Appendf(b, "%-14s ", n)
				}
			}
		}
		b = o.t.AppendText(b)
	} else {
		b = o.t.AppendJSON(b)
		if rec != nil {
			b = b[:len(b)-1]
			b = fmt.Appendf(b, `,"time_ns":%d,"tap":%d,"direction":%q}`, rec.At.Nanoseconds(), rec.Tap.Tap, rec.Tap.Direction)
		}
	}
	o.buf = append(b, '\n')
	o.out.Write(o.buf)
}

func (o *decodeOpts) decodePcap(path string) error {
	// A regular file (a device or FIFO is refused by name); it is read as
	// a stream, so any size a disk holds.
	f, _, err := readfile.Open(path, 1<<50)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pcap.NewReader(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	o.names = r
	for {
		rec, err := r.Next(&o.t)
		if err == io.EOF {
			break
		}
		src := source{"pcap record", r.Count()}
		if err != nil {
			// The reader names the record itself (one it could not read
			// is the one after the count): take its number, once.
			msg := err.Error()
			if m := recordPrefix.FindStringSubmatch(msg); m != nil {
				src.n, _ = strconv.Atoi(m[1])
				msg = msg[len(m[0]):]
			}
			if rec.Raw == nil && !errors.As(err, new(*tlp.Error)) {
				return fmt.Errorf("%s: %s: %s", path, src, msg)
			}
			if ferr := o.fail(src, errors.New(msg)); ferr != nil {
				return ferr
			}
			continue
		}
		if err := o.check(); err != nil {
			if ferr := o.fail(src, err); ferr != nil {
				return ferr
			}
			continue
		}
		o.emit(&rec)
	}
	return o.finish()
}

func newTLPEncodeCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "encode",
		Short: "Encode TLPs from JSON Lines on stdin to hex",
		Long: `Read one JSON object per line on stdin (the fields decode prints; see
docs/tlp.md) and print each TLP as hex. fmt and type may be left out: they
follow from kind, the address width and, for messages, routing; length
follows from data. Each TLP is checked against the specification's rules
unless --lax is given (use it to build malformed TLPs on purpose).`,
		Example: `  echo '{"kind":"MWr","requester_id":"01:00.0","tag":5,"first_be":15,"address":"0xfedc0010","data":"11223344"}' | onic tlp encode
  onic tlp decode --pcap in.pcap | onic tlp encode --pcap copy.pcap`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("encode reads JSON from stdin and takes no arguments (got %q)", args[0])
			}
			return encodeStream(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), encodeOpts{
				keepGoing: v.GetBool("tlp.encode.keep-going"),
				lax:       v.GetBool("tlp.encode.lax"),
				dw:        v.GetBool("tlp.encode.dw"),
				pcap:      v.GetString("tlp.encode.pcap"),
			})
		},
	}
	c.Flags().Bool("keep-going", false, "report each bad line and continue")
	c.Flags().Bool("lax", false, "encode without checking the specification's rules")
	c.Flags().Bool("dw", false, "print hex in space-separated DWs")
	c.Flags().String("pcap", "", "also write the TLPs to this capture file (time_ns, tap and direction are taken from the input when present)")
	bindFlags(v, c, "tlp.encode")
	return c
}

type encodeOpts struct {
	keepGoing, lax, dw bool
	pcap               string
}

func encodeStream(in io.Reader, stdout, stderr io.Writer, o encodeOpts) error {
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	var pw *pcap.Writer
	if o.pcap != "" {
		f, err := os.Create(o.pcap)
		if err != nil {
			return err
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		defer bw.Flush()
		if pw, err = pcap.NewWriter(bw); err != nil {
			return err
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	bad := 0
	var buf []byte
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var t tlp.TLP
		err := t.UnmarshalJSON([]byte(line))
		if err == nil && !o.lax {
			err = t.Validate()
		}
		switch {
		case err == nil && t.Snapped && pw == nil:
			err = errors.New("snapped: its payload was not captured, so it cannot be encoded whole (with --pcap it is written snapped, as it was read)")
		case err == nil && t.Snapped:
			buf, err = t.AppendHeader(buf[:0])
		case err == nil:
			buf, err = t.AppendBinary(buf[:0])
		}
		if err == nil && pw != nil {
			var capt captureFields
			if capt, err = parseCaptureFields(line); err == nil && t.Snapped {
				err = pw.WriteSnapped(capt.at, capt.hdr, &t)
			} else if err == nil {
				err = pw.WriteRaw(capt.at, capt.hdr, buf)
			}
		}
		if err != nil {
			le := &lineError{source{"line", n}, err}
			if !o.keepGoing {
				return le
			}
			bad++
			out.Flush()
			fmt.Fprintf(stderr, "onic: %v\n", le)
			continue
		}
		if t.Snapped {
			// Its header, as a comment: a hex reader takes the line for
			// what it is, not for a whole TLP.
			fmt.Fprintf(out, "# %x (snapped: the header only, the payload was not captured)\n", buf)
			continue
		}
		if o.dw {
			for i := 0; i < len(buf); i += 4 {
				if i > 0 {
					out.WriteByte(' ')
				}
				fmt.Fprintf(out, "%x", buf[i:min(i+4, len(buf))])
			}
			out.WriteByte('\n')
		} else {
			fmt.Fprintf(out, "%x\n", buf)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %v", err)
	}
	if bad > 0 {
		return fmt.Errorf("%d bad line(s): %w", bad, errBadInput)
	}
	return nil
}

// captureFields are where and when a TLP was seen, as decode --pcap prints
// them.
type captureFields struct {
	at  time.Duration
	hdr pcap.TapHeader
}

func parseCaptureFields(line string) (captureFields, error) {
	var j struct {
		TimeNS    *int64  `json:"time_ns"`
		Tap       *uint16 `json:"tap"`
		Direction *string `json:"direction"`
	}
	if err := json.Unmarshal([]byte(line), &j); err != nil {
		return captureFields{}, err
	}
	var c captureFields
	if j.TimeNS != nil {
		if *j.TimeNS < 0 {
			return c, fmt.Errorf("field time_ns: %d is negative", *j.TimeNS)
		}
		c.at = time.Duration(*j.TimeNS)
	}
	if j.Tap != nil {
		c.hdr.Tap = *j.Tap
	}
	if j.Direction != nil {
		switch *j.Direction {
		case "down":
		case "up":
			c.hdr.Direction = pcap.Upstream
		default:
			return c, fmt.Errorf("field direction: %q is not up or down", *j.Direction)
		}
	}
	return c, nil
}
