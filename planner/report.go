package planner

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"onic/emu/htmlreport"
	"onic/job"
)

// WriteText prints the plan: where each task runs, each phase's stages,
// circuits and time, and the job's time.
func (p *Plan) WriteText(w io.Writer) {
	fmt.Fprintf(w, "plan for job %s on cluster %s (%s search; objective: %s)\n", p.Job, p.Cluster, p.Method, p.Objective)
	var parts []string // in the job's order
	for _, t := range p.m.j.Tasks {
		parts = append(parts, t.Name+" on "+p.Placement[t.Name])
	}
	fmt.Fprintf(w, "placement: %s\n", strings.Join(parts, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tstages\tcircuits\ttime an iteration\trelays")
	for i, ph := range p.Phases {
		var cs []string // parallel circuits as one, ×n
		for k := 0; k < len(ph.Circuits); {
			n := 1
			for k+n < len(ph.Circuits) && ph.Circuits[k+n] == ph.Circuits[k] {
				n++
			}
			c := ph.Circuits[k][0] + "-" + ph.Circuits[k][1]
			if n > 1 {
				c += fmt.Sprintf("×%d", n)
			}
			cs = append(cs, c)
			k += n
		}
		relay := ""
		if ph.Relays {
			relay = "yes"
		}
		when := secs(ph.Seconds)
		if ph.Once {
			when += " (set-up, once)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, strings.Join(ph.Names, ", "), strings.Join(cs, " "), when, relay)
	}
	tw.Flush()
	for _, k := range p.Kernels {
		if k.Slot >= 0 {
			fmt.Fprintf(w, "kernel %s resident in slot %d of %s's O-NIC for %s: %d uses, saves %s\n", k.Kernel, k.Slot, k.Host, k.Task, k.Uses, secs(k.Saved))
		} else {
			fmt.Fprintf(w, "kernel %s not flashed for %s on %s: %s\n", k.Kernel, k.Task, k.Host, k.Reason)
		}
	}
	if p.LoadSeconds > 0 {
		fmt.Fprintf(w, "kernel loads before the job: %s\n", secs(p.LoadSeconds))
	}
	fmt.Fprintf(w, "reconfigurations an iteration: %d\niteration: %s; %d iterations: %s\n", p.Reconfigurations, secs(p.IterationSeconds), p.Iterations, secs(p.TotalSeconds))
	if p.LateSeconds > 0 {
		fmt.Fprintf(w, "transfers past their deadlines: %s of weighted lateness over the job\n", secs(p.LateSeconds))
	}
}

func secs(s float64) string {
	return time.Duration(s * 1e9).Round(time.Microsecond).String()
}

// Switch is a circuit switch's dark and bring-up time, for Compare.
type Switch struct {
	Name              string
	Reconfig, BringUp time.Duration
}

// Switches are the switching times Compare weighs: FLEET's MEMS, a
// faster optical circuit switch, and microsecond switching.
var Switches = []Switch{
	{"FLEET MEMS (10 ms + 1 ms bring-up)", 10 * time.Millisecond, time.Millisecond},
	{"fast OCS (1 ms + 100 us)", time.Millisecond, 100 * time.Microsecond},
	{"microsecond switching (10 us + 1 us)", 10 * time.Microsecond, time.Microsecond},
}

// Comparison is a job's time each way, for one switch.
type Comparison struct {
	Switch          string  `json:"switch"`
	StaticSeconds   float64 `json:"static_seconds"`    // one topology, relays allowed
	PerPhaseSeconds float64 `json:"per_phase_seconds"` // reconfigure, no relays
	BestSeconds     float64 `json:"best_seconds"`      // reconfigure where it pays, relay elsewhere
	Reconfigs       int     `json:"best_reconfigurations_per_iteration"`
}

// Compare plans j on cl three ways for each of the switches: one static
// topology (relays allowed), reconfiguring with no relays, and the best
// of both; a way no plan exists for is +Inf seconds.
func Compare(cl *Cluster, j *job.Job, o Options, switches []Switch) ([]Comparison, error) {
	var out []Comparison
	for _, s := range switches {
		c := *cl
		c.Reconfig, c.BringUp = s.Reconfig, s.BringUp
		row := Comparison{Switch: s.Name}
		for k, opt := range []Options{{Static: true}, {NoRelay: true}, {}} {
			opt.TimeLimit, opt.Seed, opt.ExactHosts = o.TimeLimit, o.Seed, o.ExactHosts
			p, err := Make(&c, j, opt)
			v := inf
			if err == nil {
				v = p.TotalSeconds
			}
			switch k {
			case 0:
				row.StaticSeconds = v
			case 1:
				row.PerPhaseSeconds = v
			case 2:
				if err != nil {
					return nil, err
				}
				row.BestSeconds, row.Reconfigs = v, p.Reconfigurations
			}
		}
		out = append(out, row)
	}
	return out, nil
}

var inf = 1e308

// WriteComparison prints a Compare table.
func WriteComparison(w io.Writer, rows []Comparison) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "switch\tstatic topology\treconfigure, no relays\tbest\treconfigurations\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t\n", r.Switch, cmpSecs(r.StaticSeconds), cmpSecs(r.PerPhaseSeconds), cmpSecs(r.BestSeconds), r.Reconfigs)
	}
	tw.Flush()
}

func cmpSecs(s float64) string {
	if s >= inf {
		return "no plan"
	}
	return secs(s)
}

// WriteComparisonChart draws a Compare table as an SVG line chart: the
// job's time (ms) for each way against the switch, a way with no plan
// left out of its line's points (drawn at 0).
func WriteComparisonChart(w io.Writer, job string, rows []Comparison) error {
	var ticks []string
	ways := []htmlreport.Series{{Name: "static topology"}, {Name: "reconfigure, no relays"}, {Name: "best"}}
	for _, r := range rows {
		name, _, _ := strings.Cut(r.Switch, " (")
		ticks = append(ticks, name)
		for k, v := range []float64{r.StaticSeconds, r.PerPhaseSeconds, r.BestSeconds} {
			if v >= inf {
				v = 0
			}
			ways[k].Y = append(ways[k].Y, v*1e3)
		}
	}
	return htmlreport.WriteGrid(w, job+": the job's time by switch", "switch", "job time (ms)", ticks, ways)
}
