package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/emu/scenario"
	"onic/job"
	"onic/planner"
)

func newPlanCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "plan JOB.yaml",
		Short: "Plan a distributed job onto O-NICs and MEMS circuits: placement, circuits per phase, reconfigurations",
		Long: `FLEET's planner: maps a job (docs/plan.md: tasks, and stages of compute, sends and
collectives) onto a cluster's hosts and chooses the MEMS circuits of each stage —
where to reconfigure the switch and where instead to keep a topology and relay
through O-NICs' second ports — minimising the job's time under a fluid cost
model (an O-NIC's host side at 102.4 Gb/s and circuits at 100.16 Gb/s each way,
as the emulator carries them). Clusters of up to --exact-hosts hosts are searched exactly (every
placement, every set of circuits, every sequence); larger ones by a heuristic
within --time-limit.

The cluster is --cluster (a built-in scenario's hosts with O-NICs and its
switch), --cluster-file, or by default as many single-O-NIC GPU hosts as the
job has tasks. --validate runs the plan in the emulator and prints each step's
predicted and emulated time; --scenario-out writes that scenario; --compare
tabulates the job's time with one static topology, reconfiguring without relays
and the best of both, for FLEET's MEMS, a faster optical switch and microsecond
switching.`,
		Example: `  onic plan megatron --dp 4 --tp 2 --pp 1 --out job.yaml
  onic plan job.yaml
  onic plan job.yaml --validate
  onic plan job.yaml --compare --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlan(cmd, v, args[0]) },
	}
	c.Flags().String("cluster", "", "plan onto this built-in scenario's hosts with O-NICs ('onic emu scenarios')")
	c.Flags().String("cluster-file", "", "plan onto the hosts of this scenario YAML")
	c.Flags().Bool("json", false, "print the plan (and the validation or comparison) as JSON")
	c.Flags().Bool("static", false, "keep one topology for the whole job")
	c.Flags().Bool("no-relay", false, "every transfer needs a direct circuit (no relays through O-NICs)")
	c.Flags().String("objective", "time", "what to minimise: time (the job's), or deadlines (the weighted lateness of transfers with deadlines, CadentFlow's, then time)")
	c.Flags().Duration("time-limit", 10*time.Second, "how long the heuristic may improve the plan")
	c.Flags().Uint64("seed", 1, "the heuristic's seed")
	c.Flags().Int("exact-hosts", 4, "search exactly on clusters of up to this many hosts (1 to 8; eight hosts of one O-NIC take about 2 s a plan)")
	c.Flags().Bool("validate", false, "run the plan in the emulator and compare each step's time")
	c.Flags().String("scenario-out", "", "write the plan as a scenario YAML the emulator runs")
	c.Flags().Bool("compare", false, "compare static, per-phase and best plans across switching times")
	c.Flags().String("chart", "", "draw the plan's circuit schedule over one iteration (with --compare: the job's time by switch) into this SVG file")
	bindFlags(v, c, "plan")
	c.AddCommand(newPlanMegatronCmd(v), newPlanASTRACmd(v))
	return c
}

// runPlan is onic plan: it loads the job and the cluster, plans, and
// prints the plan, its validation or the comparison.
func runPlan(cmd *cobra.Command, v *viper.Viper, path string) error {
	j, err := job.LoadFile(path)
	if err != nil {
		return err
	}
	var cl *planner.Cluster
	switch name, file := v.GetString("plan.cluster"), v.GetString("plan.cluster-file"); {
	case name != "" && file != "":
		return fmt.Errorf("--cluster and --cluster-file: give one or the other")
	case name != "" || file != "":
		var sc scenario.Config
		if file != "" {
			sc, err = scenario.LoadFile(file)
		} else if sc, err = scenario.Lookup(name); err != nil {
			err = fmt.Errorf("--cluster: %v", err)
		}
		if err != nil {
			return err
		}
		if cl, err = planner.FromScenario(sc); err != nil {
			return err
		}
	default:
		cl = planner.Uniform(len(j.Tasks), "gpu")
	}
	opt := planner.Options{Static: v.GetBool("plan.static"), NoRelay: v.GetBool("plan.no-relay"), TimeLimit: v.GetDuration("plan.time-limit"), Objective: v.GetString("plan.objective"),
		Seed: v.GetUint64("plan.seed"), ExactHosts: v.GetInt("plan.exact-hosts")}
	if opt.Objective != "time" && opt.Objective != "deadlines" {
		return fmt.Errorf("--objective %q: time or deadlines", opt.Objective)
	}
	if opt.TimeLimit <= 0 || opt.TimeLimit > time.Hour {
		return fmt.Errorf("--time-limit %v: want above 0 and at most 1h", opt.TimeLimit)
	}
	if opt.ExactHosts < 1 || opt.ExactHosts > 8 {
		return fmt.Errorf("--exact-hosts %d: want 1 to 8 (the exact search grows as hosts' circuit sets do)", opt.ExactHosts)
	}
	asJSON := v.GetBool("plan.json")
	out := cmd.OutOrStdout()
	if v.GetBool("plan.compare") {
		rows, err := planner.Compare(cl, j, opt, planner.Switches)
		if err != nil {
			return err
		}
		if f := v.GetString("plan.chart"); f != "" {
			if err := createFile(cmd, f, func(w io.Writer) error { return planner.WriteComparisonChart(w, j.Name, rows) }); err != nil {
				return err
			}
		}
		if asJSON {
			return json.NewEncoder(out).Encode(rows)
		}
		planner.WriteComparison(out, rows)
		return nil
	}
	p, err := planner.Make(cl, j, opt)
	if err != nil {
		return err
	}
	if f := v.GetString("plan.scenario-out"); f != "" {
		sc, _, err := p.Scenario()
		if err != nil {
			return err
		}
		y, err := scenario.YAML(sc)
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, y, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", f)
	}
	if f := v.GetString("plan.chart"); f != "" {
		if err := createFile(cmd, f, p.WriteChart); err != nil {
			return err
		}
	}
	var val *planner.Validation
	if v.GetBool("plan.validate") {
		if val, err = p.Validate(); err != nil {
			return err
		}
	}
	if asJSON {
		return json.NewEncoder(out).Encode(map[string]any{"plan": p, "validation": val})
	}
	p.WriteText(out)
	if val != nil {
		fmt.Fprintf(out, "validated in the emulator: %d steps, the worst %.1f%% from its prediction; %d TLPs, all delivered\n",
			len(val.Steps), 100*val.WorstError, val.Accounting.Delivered)
	}
	return nil
}

func newPlanMegatronCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "megatron --out JOB.yaml",
		Short: "Write a Megatron-style training job (data, tensor and pipeline parallel) as a job file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mc := job.MegatronConfig{DP: v.GetInt("plan.megatron.dp"), TP: v.GetInt("plan.megatron.tp"), PP: v.GetInt("plan.megatron.pp"),
				Layers: v.GetInt("plan.megatron.layers"), Hidden: v.GetInt("plan.megatron.hidden"), Seq: v.GetInt("plan.megatron.seq"),
				MicroBatch: v.GetInt("plan.megatron.micro-batch"), MicroBatches: v.GetInt("plan.megatron.micro-batches"),
				BytesPer: v.GetInt("plan.megatron.bytes-per-value"), LayerTime: v.GetDuration("plan.megatron.layer-time"),
				Iterations: v.GetInt("plan.megatron.iterations")}
			j, err := job.Megatron(mc)
			if err != nil {
				return err
			}
			return writeJob(cmd, j, v.GetString("plan.megatron.out"), v.GetBool("plan.megatron.json"))
		},
	}
	c.Flags().Int("dp", 2, "data-parallel degree")
	c.Flags().Int("tp", 1, "tensor-parallel degree")
	c.Flags().Int("pp", 1, "pipeline-parallel degree")
	c.Flags().Int("layers", 24, "transformer layers (a multiple of --pp)")
	c.Flags().Int("hidden", 2048, "hidden size")
	c.Flags().Int("seq", 2048, "sequence length")
	c.Flags().Int("micro-batch", 1, "sequences per micro-batch")
	c.Flags().Int("micro-batches", 4, "micro-batches per iteration")
	c.Flags().Int("bytes-per-value", 2, "bytes per value (2: bf16)")
	c.Flags().Duration("layer-time", 500*time.Microsecond, "one layer's forward pass of a micro-batch on one GPU")
	c.Flags().Int("iterations", 1, "iterations")
	c.Flags().String("out", "", "the job file to write (- or empty: standard output)")
	c.Flags().Bool("json", false, "print what was written as JSON (needs --out)")
	bindFlags(v, c, "plan.megatron")
	return c
}

func newPlanASTRACmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "astra WORKLOAD.txt --workers N",
		Short: "Import an ASTRA-sim 1.0 text workload (DATA or MICRO) as a job file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
				return fmt.Errorf("%s: not a regular file", args[0])
			}
			j, err := job.ImportASTRA(args[0], f, v.GetInt("plan.astra.workers"), v.GetDuration("plan.astra.cycle"))
			if err != nil {
				return err
			}
			return writeJob(cmd, j, v.GetString("plan.astra.out"), v.GetBool("plan.astra.json"))
		},
	}
	c.Flags().Int("workers", 8, "data-parallel workers (NPUs)")
	c.Flags().Duration("cycle", time.Nanosecond, "how long one of the workload's compute cycles lasts")
	c.Flags().String("out", "", "the job file to write (- or empty: standard output)")
	c.Flags().Bool("json", false, "print what was written as JSON (needs --out)")
	bindFlags(v, c, "plan.astra")
	return c
}

// writeJob writes j to path (standard output for "" or -); asJSON
// prints what it wrote as JSON.
func writeJob(cmd *cobra.Command, j *job.Job, path string, asJSON bool) error {
	if path == "" || path == "-" {
		if asJSON {
			return fmt.Errorf("--json: needs --out FILE (the job itself is YAML)")
		}
		return j.WriteYAML(cmd.OutOrStdout())
	}
	if err := createFile(cmd, path, j.WriteYAML); err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"wrote": path, "job": j.Name, "tasks": len(j.Tasks), "stages": len(j.Stages), "iterations": j.Iterations})
	}
	return nil
}

// createFile writes path through write and says so on standard error.
func createFile(cmd *cobra.Command, path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", path)
	return nil
}
