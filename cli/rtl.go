package cli

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/viper"

	"onic/designs/cardsim"
	"onic/emu/cluster"
	"onic/emu/scenario"
)

// rtlNames is --rtl's O-NICs: every O-NIC for "all" (the flag alone),
// else the names given.
func rtlNames(list []string) []string {
	if len(list) == 1 && list[0] == "all" {
		return nil
	}
	return list
}

// useRTL puts the generated cards of cfg's O-NICs named (all when names
// is empty) in cl in place of the Go model, with a waveform window if
// vcd names one ("onicA" or "onicA:FROM-TO", durations with units) into
// vcdOut (default NAME.fst where GTKWave's vcd2fst is on PATH, else
// NAME.vcd; a .fst name is written as VCD and converted at the end). The
// function it returns ends the waveform and says on msgs what it wrote.
func useRTL(cl *cluster.Cluster, cfg scenario.Config, names []string, vcd, vcdOut string, msgs io.Writer) (func() error, error) {
	set, err := cardsim.NewSet(cfg, names)
	if err != nil {
		return nil, err
	}
	if err := cl.UseHardware(set); err != nil {
		return nil, err
	}
	done := func() error { return nil }
	if vcd == "" {
		if vcdOut != "" {
			return nil, fmt.Errorf("--vcd-out: needs --vcd ONIC[:FROM-TO]")
		}
		return done, nil
	}
	name, window, _ := strings.Cut(vcd, ":")
	card := -1
	for i, n := range set.ONICs() {
		if n == name {
			card = i
		}
	}
	if card < 0 {
		return nil, fmt.Errorf("--vcd %s: %q is not one of the RTL O-NICs (%s)", vcd, name, strings.Join(set.ONICs(), ", "))
	}
	from, to := time.Duration(0), time.Duration(1<<62)
	if window != "" {
		a, b, ok := strings.Cut(window, "-")
		if !ok {
			return nil, fmt.Errorf("--vcd %s: the window must be FROM-TO, durations with units (0-20us)", vcd)
		}
		if from, err = duration(a); err == nil {
			to, err = duration(b)
		}
		if err != nil {
			return nil, fmt.Errorf("--vcd %s: %v", vcd, err)
		}
		if to <= from {
			return nil, fmt.Errorf("--vcd %s: the window ends at %v, not after its start %v", vcd, to, from)
		}
	}
	// FST (GTKWave's compressed format) where GTKWave's vcd2fst is on
	// PATH, else VCD; --vcd-out's extension decides when given.
	fst, _ := exec.LookPath("vcd2fst")
	if vcdOut == "" {
		vcdOut = name + ".vcd"
		if fst != "" {
			vcdOut = name + ".fst"
		}
	}
	path := vcdOut
	if strings.HasSuffix(vcdOut, ".fst") {
		if fst == "" {
			return nil, fmt.Errorf("--vcd-out %s: FST needs GTKWave's vcd2fst on PATH (or name a .vcd file)", vcdOut)
		}
		path = vcdOut + ".vcd.tmp" // converted at the end
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--vcd-out: %v", err)
	}
	if err := set.TraceWindow(card, from, to, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--vcd %s: %v", vcd, err)
	}
	return func() error {
		err := set.Close()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil && path != vcdOut {
			if out, cerr := exec.Command(fst, path, vcdOut).CombinedOutput(); cerr != nil {
				err = fmt.Errorf("vcd2fst: %v: %s", cerr, strings.TrimSpace(string(out)))
			}
			os.Remove(path)
		}
		if err != nil {
			return fmt.Errorf("--vcd-out %s: %v", vcdOut, err)
		}
		fmt.Fprintf(msgs, "wrote %s (%s's waveform: GTKWave)\n", vcdOut, name)
		return nil
	}, nil
}

// duration parses a duration that has a unit ("0" alone is allowed).
func duration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q: want a duration with a unit (20us, 1ms)", s)
	}
	return d, nil
}

// landings are the writes one run landed, by host and the O-NIC that
// brought them, in order.
type landings map[[2]string][]cluster.Landing

// record makes cl keep every write it lands in ls.
func (ls landings) record(cl *cluster.Cluster) {
	cl.OnLanded(func(l cluster.Landing) {
		k := [2]string{l.Host, l.From}
		if l.Data != nil {
			l.Data = append([]byte(nil), l.Data...)
		}
		ls[k] = append(ls[k], l)
	})
}

// compareLandings holds the cards' run to the model's: at each host,
// the writes each O-NIC brought must be the same writes in the same
// order (address and length; bytes too where both carry them) as far as
// both runs got. It returns a line per host and O-NIC, and the first
// divergence as an error.
func compareLandings(model, cards landings) ([]string, error) {
	keys := make([][2]string, 0, len(model)+len(cards))
	seen := map[[2]string]bool{}
	for _, ls := range []landings{model, cards} {
		for k := range ls {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	var lines []string
	for _, k := range keys {
		m, c := model[k], cards[k]
		for i := range min(len(m), len(c)) {
			x, y := m[i], c[i]
			if x.Address != y.Address || x.Bytes != y.Bytes || x.Data != nil && y.Data != nil && !bytes.Equal(x.Data, y.Data) {
				return lines, fmt.Errorf("--compare: host %s, write %d from %s: the model landed %d bytes at %#x (at %v), the cards %d bytes at %#x (at %v)",
					k[0], i+1, k[1], x.Bytes, x.Address, x.At, y.Bytes, y.Address, y.At)
			}
		}
		if len(m) > 0 && len(c) == 0 || len(c) > 0 && len(m) == 0 {
			return lines, fmt.Errorf("--compare: host %s: %d writes from %s landed on the model, %d on the cards", k[0], len(m), k[1], len(c))
		}
		lines = append(lines, fmt.Sprintf("compare: host %s from %s: %d writes landed on the model, %d on the cards; the first %d are the same",
			k[0], k[1], len(m), len(c), min(len(m), len(c))))
	}
	return lines, nil
}

// compareRun is --compare's second run: the scenario on the model, its
// landings held to the cards'.
type compareRun struct {
	model        *cluster.Cluster
	models, card landings
}

// startCompare sets up --compare (nil when it is not given): the model's
// cluster of cfg, and both clusters recording their landings.
func startCompare(v *viper.Viper, cfg scenario.Config, cl *cluster.Cluster, rtl bool) (*compareRun, error) {
	if !v.GetBool("emu.run.compare") {
		return nil, nil
	}
	if !rtl {
		return nil, fmt.Errorf("--compare: compares the cards with the model: add --rtl")
	}
	model, err := buildCluster(v, "emu.run", cfg)
	if err != nil {
		return nil, err
	}
	r := &compareRun{model: model, models: landings{}, card: landings{}}
	r.models.record(model)
	r.card.record(cl)
	return r, nil
}

// finish runs the model and compares, a line per host and O-NIC to w; the
// first divergence is the error.
func (r *compareRun) finish(w io.Writer) error {
	if r == nil {
		return nil
	}
	if _, err := r.model.Run(); err != nil {
		return fmt.Errorf("--compare: the model's run: %v", err)
	}
	lines, err := compareLandings(r.models, r.card)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return err
}
