package job

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteYAML writes j in the format Load reads: what Megatron and
// ImportASTRA make, as a file to read and edit.
func (j *Job) WriteYAML(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\niterations: %d\ntasks:\n", j.Name, j.Iterations)
	for _, t := range j.Tasks {
		if t.Kind != "" {
			fmt.Fprintf(&b, "  - {name: %s, kind: %s}\n", t.Name, t.Kind)
		} else {
			fmt.Fprintf(&b, "  - {name: %s}\n", t.Name)
		}
	}
	b.WriteString("stages:\n")
	for _, s := range j.Stages {
		fmt.Fprintf(&b, "  - name: %s\n", s.Name)
		if s.Once {
			b.WriteString("    once: true\n")
		}
		if len(s.Compute) > 0 {
			b.WriteString("    compute:\n")
			for _, c := range s.Compute {
				kernel := ""
				if c.Kernel != "" {
					kernel = fmt.Sprintf(", kernel: %s, bytes: %s", c.Kernel, c.Bytes)
				}
				if len(c.Cost) > 0 {
					kinds := make([]string, 0, len(c.Cost))
					for k := range c.Cost {
						kinds = append(kinds, k)
					}
					slices.Sort(kinds)
					var parts []string
					for _, k := range kinds {
						parts = append(parts, k+": "+dur(c.Cost[k]))
					}
					fmt.Fprintf(&b, "      - {task: %s, cost: {%s}%s}\n", c.Task, strings.Join(parts, ", "), kernel)
				} else {
					fmt.Fprintf(&b, "      - {task: %s, time: %s%s}\n", c.Task, dur(c.Time), kernel)
				}
			}
		}
		if len(s.Sends) > 0 {
			b.WriteString("    sends:\n")
			for _, x := range s.Sends {
				fmt.Fprintf(&b, "      - {from: %s, to: %s, bytes: %s%s}\n", x.From, x.To, x.Bytes, deadline(x.Deadline, x.Weight))
			}
		}
		if len(s.Collectives) > 0 {
			b.WriteString("    collectives:\n")
			for _, c := range s.Collectives {
				fmt.Fprintf(&b, "      - {op: %s, group: [%s], bytes: %s%s}\n", c.Op, strings.Join(c.Group, ", "), c.Bytes, deadline(c.Deadline, c.Weight))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// dur writes a duration with its unit, in nanoseconds (exact).
func dur(d time.Duration) string { return fmt.Sprintf("%dns", int64(d)) }

// deadline writes a transfer's deadline and weight fields, if any.
func deadline(d time.Duration, w float64) string {
	out := ""
	if d > 0 {
		out += ", deadline: " + dur(d)
	}
	if w != 0 {
		out += fmt.Sprintf(", weight: %g", w)
	}
	return out
}
