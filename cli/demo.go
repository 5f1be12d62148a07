package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/tlp"
	"onic/tlp/pcap"
)

func newTLPDemoCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "demo",
		Short: "Show the codec at work: a DMA as TLPs, through a capture and back",
		Long: `A short demonstration of the TLP codec. A device (01:00.0) DMA-writes
a buffer to host memory and DMA-reads another; onic splits both into TLPs
under MPS and MRRS, answers the reads with completions under RCB, times the
TLPs back to back on one link direction (wire bytes at the generation's rate
and line code), writes them to a capture, reads the capture back, checks
every TLP against the specification and prints it.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("demo takes no arguments (got %q)", args[0])
			}
			cfg := demoConfig{
				pcap:      v.GetString("tlp.demo.pcap"),
				gen:       tlp.Gen(v.GetInt("tlp.demo.gen")),
				lanes:     v.GetInt("tlp.demo.lanes"),
				mps:       v.GetInt("tlp.demo.mps"),
				mrrs:      v.GetInt("tlp.demo.mrrs"),
				rcb:       v.GetInt("tlp.demo.rcb"),
				writeSize: v.GetInt("tlp.demo.write-size"),
				readSize:  v.GetInt("tlp.demo.read-size"),
				json:      v.GetBool("tlp.demo.json"),
			}
			return runDemo(cmd.OutOrStdout(), cfg)
		},
	}
	c.Flags().String("pcap", "", "capture file to write (default: a temporary file, removed afterwards)")
	c.Flags().Int("gen", 3, "PCIe generation of the link (1-5)")
	c.Flags().Int("lanes", 16, "link width (1, 2, 4, 8, 16)")
	c.Flags().Int("mps", 256, "Max_Payload_Size in bytes")
	c.Flags().Int("mrrs", 512, "Max_Read_Request_Size in bytes")
	c.Flags().Int("rcb", 64, "Read Completion Boundary in bytes (64 or 128)")
	c.Flags().Int("write-size", 1500, "bytes the device writes to host memory")
	c.Flags().Int("read-size", 600, "bytes the device reads from host memory")
	c.Flags().Bool("json", false, "print the TLPs read back (as tlp decode does) and the totals as one JSON object")
	bindFlags(v, c, "tlp.demo")
	return c
}

type demoConfig struct {
	json                  bool
	pcap                  string
	gen                   tlp.Gen
	lanes, mps, mrrs, rcb int
	writeSize, readSize   int
}

func (c demoConfig) check() error {
	if !c.gen.Valid() {
		return fmt.Errorf("--gen %d: must be 1 to 5", c.gen)
	}
	switch c.lanes {
	case 1, 2, 4, 8, 16:
	default:
		return fmt.Errorf("--lanes %d: must be 1, 2, 4, 8 or 16", c.lanes)
	}
	if err := tlp.CheckSize("--mps", c.mps); err != nil {
		return err
	}
	if err := tlp.CheckSize("--mrrs", c.mrrs); err != nil {
		return err
	}
	if c.rcb != 64 && c.rcb != 128 {
		return fmt.Errorf("--rcb %d: must be 64 or 128", c.rcb)
	}
	if c.writeSize < 0 || c.writeSize > 1<<20 || c.readSize < 0 || c.readSize > 1<<20 {
		return fmt.Errorf("--write-size and --read-size must be 0 to 1048576 bytes")
	}
	return nil
}

// wireTime is the time n wire bytes take on a link: bytes are striped over
// the lanes, each lane carrying one symbol per byte at the generation's
// transfer rate and line code.
func wireTime(g tlp.Gen, lanes, n int) time.Duration {
	perLane := (n + lanes - 1) / lanes
	payload, coded := g.Encoding()
	// bits on the lane = perLane*8*coded/payload; time = bits / rate.
	ps := int64(perLane) * 8 * int64(coded) * 1_000_000 / (int64(payload) * int64(g.TransferRate()))
	return time.Duration(ps / 1000)
}

// runDemo is onic tlp demo: a DMA write and read as TLPs, encoded,
// decoded, captured and printed.
//
// Long: a command's steps in the order it runs and prints them, each a
// few lines.
func runDemo(w io.Writer, c demoConfig) error {
	if err := c.check(); err != nil {
		return err
	}
	final := w
	if c.json {
		w = io.Discard // the text goes nowhere; the JSON says it all
	}
	dev, host := tlp.NewID(1, 0, 0), tlp.NewID(0, 0, 0)
	const writeAddr, readAddr = 0x1_2345_6F00, 0x8000_0F80

	// The payload holds its own byte offset as big-endian 32-bit words,
	// so each TLP's data shows where in the buffer it came from.
	payload := make([]byte, c.writeSize)
	for i := range payload {
		payload[i] = byte(uint32(i&^3) >> (24 - 8*(i&3)))
	}
	writes, err := tlp.AppendWrites(nil, dev, 0, writeAddr, payload, c.mps)
	if err != nil {
		return err
	}
	reads, err := tlp.AppendReads(nil, dev, 1, readAddr, c.readSize, c.mrrs)
	if err != nil {
		return err
	}
	var cpls []tlp.TLP
	for i := range reads {
		mem := make([]byte, int(reads[i].Length)*4)
		for j := range mem {
			mem[j] = byte(0xA0 + j)
		}
		if cpls, err = tlp.AppendCompletions(cpls, &reads[i], host, mem, c.rcb, c.mps); err != nil {
			return err
		}
	}

	fmt.Fprintf(w, "onic TLP codec demonstration (PCIe Gen%d x%d, MPS %d, MRRS %d, RCB %d)\n", c.gen, c.lanes, c.mps, c.mrrs, c.rcb)
	fmt.Fprintf(w, "  DMA write: %d bytes from %s to %#x -> %d MWr\n", c.writeSize, dev, uint64(writeAddr), len(writes))
	fmt.Fprintf(w, "  DMA read:  %d bytes by %s at %#x -> %d MRd, answered by %d CplD\n", c.readSize, dev, uint64(readAddr), len(reads), len(cpls))

	path := c.pcap
	if path == "" {
		f, err := os.CreateTemp("", "onic-demo-*.pcap")
		if err != nil {
			return err
		}
		path = f.Name()
		f.Close()
		defer os.Remove(path)
	}
	// The device's requests go upstream on tap 1 back to back; the host's
	// completions come downstream on tap 1, each after its read arrives.
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	pw, err := pcap.NewWriter(bw)
	if err != nil {
		f.Close()
		return err
	}
	// Collect the records, then write them in time order (upstream and
	// downstream traffic overlap).
	type record struct {
		at  time.Duration
		dir pcap.Direction
		t   *tlp.TLP
	}
	var recs []record
	var up, down time.Duration
	var wireBytes, dataBytes int
	add := func(t *tlp.TLP, dir pcap.Direction, clock *time.Duration) error {
		n, err := t.WireSize(c.gen)
		if err != nil {
			return err
		}
		wireBytes += n
		dataBytes += len(t.Data)
		*clock += wireTime(c.gen, c.lanes, n)
		recs = append(recs, record{*clock, dir, t})
		return nil
	}
	for i := range writes {
		if err := add(&writes[i], pcap.Upstream, &up); err != nil {
			return err
		}
	}
	ci := 0
	for i := range reads {
		if err := add(&reads[i], pcap.Upstream, &up); err != nil {
			return err
		}
		down = max(down, up)
		for ; ci < len(cpls) && cpls[ci].Tag == reads[i].Tag; ci++ {
			if err := add(&cpls[ci], pcap.Downstream, &down); err != nil {
				return err
			}
		}
	}
	slices.SortStableFunc(recs, func(a, b record) int { return cmp.Compare(a.at, b.at) })
	for _, r := range recs {
		if err := pw.WriteTLP(r.at, pcap.TapHeader{Direction: r.dir, Tap: 1}, r.t); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}

	n := len(writes) + len(reads) + len(cpls)
	if c.pcap != "" {
		fmt.Fprintf(w, "wrote %d TLPs to %s; reading them back:\n", n, path)
	} else {
		fmt.Fprintf(w, "wrote %d TLPs to a capture; reading them back:\n", n)
	}
	// Read the capture back with the decoder `onic tlp decode --pcap
	// --text` uses: every TLP is decoded and checked against the rules.
	var records bytes.Buffer
	out := bufio.NewWriter(w)
	if c.json {
		out = bufio.NewWriter(&records)
	}
	dec := decodeOpts{text: !c.json, out: out, errw: w}
	err = dec.decodePcap(path)
	out.Flush()
	if err != nil {
		return fmt.Errorf("demo capture: %v", err)
	}
	if c.json {
		res := struct {
			Gen          int               `json:"gen"`
			Lanes        int               `json:"lanes"`
			MPS          int               `json:"mps"`
			MRRS         int               `json:"mrrs"`
			RCB          int               `json:"rcb"`
			Pcap         string            `json:"pcap,omitempty"`
			TLPs         int               `json:"tlps"`
			PayloadBytes int               `json:"payload_bytes"`
			WireBytes    int               `json:"wire_bytes"`
			LineCode     string            `json:"line_code"`
			Records      []json.RawMessage `json:"records"`
		}{Gen: int(c.gen), Lanes: c.lanes, MPS: c.mps, MRRS: c.mrrs, RCB: c.rcb, Pcap: c.pcap, TLPs: n,
			PayloadBytes: dataBytes, WireBytes: wireBytes, LineCode: lineCode(c.gen)}
		for _, l := range bytes.Split(bytes.TrimSpace(records.Bytes()), []byte("\n")) {
			res.Records = append(res.Records, json.RawMessage(l))
		}
		return printJSON(final, res)
	}
	fmt.Fprintf(w, "%d TLPs read back and checked: %d payload bytes in %d wire bytes (%.1f%% before %s line coding)\n",
		n, dataBytes, wireBytes, 100*float64(dataBytes)/float64(max(wireBytes, 1)), lineCode(c.gen))
	return nil
}

func lineCode(g tlp.Gen) string {
	p, c := g.Encoding()
	if p == 8 {
		return "8b/10b"
	}
	return fmt.Sprintf("%db/%db", p, c)
}
