package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/emu/htmlreport"
	"onic/emu/sweep"
	"onic/internal/readfile"
)

func newEmuSweepCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "sweep SPEC",
		Short: "Run a grid of scenario variations (any field, with units) and tabulate, chart or schedule them",
		Long: `Runs every combination of the field values a sweep spec gives (YAML,
docs/emu.md "Sweeps"): a base scenario (scenario: NAME or scenario_file: FILE)
and the fields to vary by their path in the scenario's YAML, such as
mems.reconfig, onics[onicA].down_policy or flows[0].size, each with its values
as the YAML would give them. Each point is built through the scenario's strict
loader and run; the results (each flow's throughput and latency, each O-NIC's
counters, the accounting) come out as a table, as JSON (--json) and as a chart
(--chart FILE.svg), in point order and byte-identical whatever --jobs is.

For a cluster larger than one machine, --slurm DIR writes a Slurm job array
(DIR/sweep.sbatch: one task per point, each running --point N --out DIR), a
collect step (DIR/collect.sbatch: --collect DIR writes DIR/results.json and
DIR/results.txt) and DIR/submit.sh, which submits both, the collect step after
every point. The collected results are the local run's, byte for byte.`,
		Example: `  onic emu sweep reconfig.yaml --chart reconfig.svg
  onic emu sweep reconfig.yaml --slurm sweep-out && sh sweep-out/submit.sh`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := sweep.Load(args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			asJSON := v.GetBool("emu.sweep.json")
			switch {
			case v.GetString("emu.sweep.slurm") != "":
				return writeSlurm(out, args[0], v.GetString("emu.sweep.slurm"), spec)
			case cmd.Flags().Changed("point"):
				i, dir := v.GetInt("emu.sweep.point"), v.GetString("emu.sweep.out")
				if i < 0 || i >= spec.Points() {
					return fmt.Errorf("--point %d: the spec has points 0 to %d", i, spec.Points()-1)
				}
				if dir == "" {
					return fmt.Errorf("--point: needs --out DIR for the point's result file")
				}
				b, err := sweep.Marshal(spec.Run(i))
				if err != nil {
					return err
				}
				return os.WriteFile(filepath.Join(dir, fmt.Sprintf("point-%d.json", i)), b, 0o644)
			case v.GetString("emu.sweep.collect") != "":
				dir := v.GetString("emu.sweep.collect")
				var res []sweep.Result
				for i := range spec.Points() {
					b, err := readfile.Read(filepath.Join(dir, fmt.Sprintf("point-%d.json", i)), maxPointFile)
					if err != nil {
						return fmt.Errorf("--collect: point %d of %d: %v", i, spec.Points(), err)
					}
					var r sweep.Result
					if err := json.Unmarshal(b, &r); err != nil || r.Point != i {
						return fmt.Errorf("--collect: %s: not point %d's result (%v)", filepath.Join(dir, fmt.Sprintf("point-%d.json", i)), i, err)
					}
					res = append(res, r)
				}
				var js, txt bytes.Buffer
				if err := writeSweepResults(&js, spec, res, true); err != nil {
					return err
				}
				if err := writeSweepResults(&txt, spec, res, false); err != nil {
					return err
				}
				for name, b := range map[string][]byte{"results.json": js.Bytes(), "results.txt": txt.Bytes()} {
					if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", filepath.Join(dir, name))
				}
				return nil
			}
			jobs := v.GetInt("emu.sweep.jobs")
			if jobs < 1 || jobs > 1024 {
				return fmt.Errorf("--jobs %d: want 1 to 1024", jobs)
			}
			res := spec.RunAll(jobs)
			if path := v.GetString("emu.sweep.chart"); path != "" {
				if err := writeSweepChart(path, spec, res); err != nil {
					return fmt.Errorf("--chart: %v", err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", path)
			}
			return writeSweepResults(out, spec, res, asJSON)
		},
	}
	c.Flags().Int("jobs", runtime.NumCPU(), "points run at once on this machine")
	c.Flags().Bool("json", false, "print the results as JSON")
	c.Flags().String("chart", "", "draw each flow's throughput against the first field's values into this SVG file")
	c.Flags().String("slurm", "", "write a Slurm job array for the sweep into this directory instead of running it")
	c.Flags().Int("point", 0, "run only this point (0-based) and write its result to --out DIR (a Slurm task)")
	c.Flags().String("out", "", "the directory --point writes its result file to")
	c.Flags().String("collect", "", "gather the point files in this directory into results.json and results.txt (the collect step)")
	bindFlags(v, c, "emu.sweep")
	return c
}

// maxPointFile is the largest point result --collect reads (a point's
// report is kilobytes; a cluster of thousands of O-NICs, megabytes).
const maxPointFile = 256 << 20

// sweepJSON is the JSON results of a sweep.
type sweepJSON struct {
	Scenario string         `json:"scenario"`
	Fields   []string       `json:"fields"`
	Points   []sweep.Result `json:"points"`
}

// writeSweepResults prints the results as a table, or as JSON.
func writeSweepResults(w io.Writer, spec sweep.Spec, res []sweep.Result, asJSON bool) error {
	var fields []string
	for _, a := range spec.Axes {
		fields = append(fields, a.Field)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sweepJSON{Scenario: spec.BaseName, Fields: fields, Points: res})
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append([]string{"point"}, fields...)
	var flows []string
	if len(res) > 0 {
		for _, f := range res[0].Flows {
			flows = append(flows, f.Name)
			head = append(head, f.Name+" Gb/s", f.Name+" p99 µs")
		}
	}
	head = append(head, "dropped", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range res {
		row := []string{fmt.Sprint(r.Point)}
		for _, f := range fields {
			row = append(row, r.Values[f])
		}
		if r.Error != "" {
			row = append(row, "error: "+r.Error)
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			continue
		}
		for k := range flows {
			if k < len(r.Flows) {
				row = append(row, fmt.Sprintf("%.2f", r.Flows[k].Gbps), fmt.Sprintf("%.2f", r.Flows[k].P99Ns/1e3))
			}
		}
		row = append(row, fmt.Sprint(r.Acct.Dropped), "")
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// writeSweepChart draws each flow's throughput against the first
// field's values, a line per flow and combination of the other fields.
func writeSweepChart(path string, spec sweep.Spec, res []sweep.Result) error {
	first := spec.Axes[0]
	var ticks []string
	for _, v := range first.Values {
		ticks = append(ticks, v.Value)
	}
	lines := map[string][]float64{}
	for _, r := range res {
		var rest []string
		for _, a := range spec.Axes[1:] {
			rest = append(rest, a.Field+"="+r.Values[a.Field])
		}
		x := 0
		for i, v := range first.Values {
			if v.Value == r.Values[first.Field] {
				x = i
			}
		}
		for _, f := range r.Flows {
			name := f.Name
			if len(rest) > 0 {
				name += " (" + strings.Join(rest, ", ") + ")"
			}
			if lines[name] == nil {
				lines[name] = make([]float64, len(ticks))
			}
			lines[name][x] = f.Gbps
		}
	}
	names := make([]string, 0, len(lines))
	for n := range lines {
		names = append(names, n)
	}
	sort.Strings(names)
	var series []htmlreport.Series
	for _, n := range names {
		series = append(series, htmlreport.Series{Name: n, Y: lines[n]})
	}
	var b bytes.Buffer
	if err := htmlreport.WriteGrid(&b, spec.BaseName+": throughput by "+first.Field, first.Field, "throughput (Gb/s)", ticks, series); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// writeSlurm writes the sweep's Slurm job array, collect step and submit
// script into dir.
func writeSlurm(w io.Writer, specPath, dir string, spec sweep.Spec) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	absSpec, err := filepath.Abs(specPath)
	if err != nil {
		return err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(absDir, 0o755); err != nil {
		return fmt.Errorf("--slurm: %v", err)
	}
	q := func(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
	files := map[string]string{
		"sweep.sbatch": fmt.Sprintf(`#!/bin/sh
# Generated by onic emu sweep --slurm: one task per point of %s.
#SBATCH --job-name=onic-sweep
#SBATCH --array=0-%d
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output=%s/point-%%a.log
exec %s emu sweep %s --point "$SLURM_ARRAY_TASK_ID" --out %s
`, filepath.Base(specPath), spec.Points()-1, absDir, q(exe), q(absSpec), q(absDir)),
		"collect.sbatch": fmt.Sprintf(`#!/bin/sh
# Generated by onic emu sweep --slurm: gathers the points into results.json and results.txt.
#SBATCH --job-name=onic-sweep-collect
#SBATCH --ntasks=1
#SBATCH --output=%s/collect.log
exec %s emu sweep %s --collect %s
`, absDir, q(exe), q(absSpec), q(absDir)),
		"submit.sh": fmt.Sprintf(`#!/bin/sh
# Generated by onic emu sweep --slurm: submits the job array, then the
# collect step to run once every point has succeeded. Prints both job IDs.
set -e
array=$(sbatch --parsable %s/sweep.sbatch)
collect=$(sbatch --parsable --dependency=afterok:"$array" %s/collect.sbatch)
echo "$array $collect"
`, q(absDir), q(absDir)),
	}
	for _, name := range []string{"sweep.sbatch", "collect.sbatch", "submit.sh"} {
		if err := os.WriteFile(filepath.Join(absDir, name), []byte(files[name]), 0o755); err != nil {
			return fmt.Errorf("--slurm: %v", err)
		}
		fmt.Fprintf(w, "wrote %s\n", filepath.Join(absDir, name))
	}
	fmt.Fprintf(w, "%d points: sh %s submits them (sbatch), results in %s/results.json and results.txt\n",
		spec.Points(), filepath.Join(absDir, "submit.sh"), absDir)
	return nil
}
