// Package sweep runs a grid of variations of an emulator scenario: a
// spec names a base scenario and the fields to vary, each with its
// values (any scenario field, by its path in the YAML, values as the
// YAML would give them, units and all); every combination is a point,
// built through the scenario's strict loader and run. Points run in
// parallel on local cores or one at a time as the tasks of a Slurm job
// array; either way the results, in point order, are byte-identical.
package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"onic/emu/cluster"
	"onic/emu/scenario"
	"onic/internal/readfile"
)

// Limits on a spec.
const (
	MaxSpecBytes = 1 << 20
	MaxAxes      = 8
	MaxPoints    = 10_000
)

// Axis is one field varied: its path in the scenario's YAML and the
// values it takes, as YAML scalars.
type Axis struct {
	Field  string
	Values []*yaml.Node
}

// Spec is a sweep.
type Spec struct {
	// Base is the scenario the points vary, as YAML, and its name.
	Base     []byte
	BaseName string
	Axes     []Axis
}

// Load reads a spec file:
//
//	scenario: two-party               # a built-in, or:
//	scenario_file: my-cluster.yaml    # relative to the spec
//	vary:
//	  - field: mems.reconfig
//	    values: [1ms, 5ms, 10ms]
//	  - field: onics[onicA].down_policy
//	    values: [hold, fail]
func Load(path string) (Spec, error) {
	src, err := readfile.Read(path, MaxSpecBytes)
	if err != nil {
		return Spec{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return Spec{}, fmt.Errorf("%s: %v", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Spec{}, fmt.Errorf("%s: want a mapping with scenario or scenario_file, and vary", path)
	}
	var s Spec
	m := doc.Content[0]
	for i := 0; i < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		where := fmt.Sprintf("%s:%d: %s", path, k.Line, k.Value)
		switch k.Value {
		case "scenario":
			c, err := scenario.Lookup(v.Value)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: %v", where, err)
			}
			if s.Base, err = scenario.YAML(c); err != nil {
				return Spec{}, fmt.Errorf("%s: %v", where, err)
			}
			s.BaseName = v.Value
		case "scenario_file":
			f := v.Value
			if !filepath.IsAbs(f) {
				f = filepath.Join(filepath.Dir(path), f)
			}
			b, err := readfile.Read(f, scenario.MaxScenarioBytes)
			if err != nil {
				return Spec{}, fmt.Errorf("%s: %v", where, err)
			}
			if _, err := scenario.Load(f, bytes.NewReader(b)); err != nil {
				return Spec{}, fmt.Errorf("%s: %v", where, err)
			}
			s.Base, s.BaseName = b, filepath.Base(f)
		case "vary":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 || len(v.Content) > MaxAxes {
				return Spec{}, fmt.Errorf("%s: want a list of 1 to %d fields, each {field: PATH, values: [...]}", where, MaxAxes)
			}
			for _, a := range v.Content {
				ax, err := axis(path, a)
				if err != nil {
					return Spec{}, err
				}
				s.Axes = append(s.Axes, ax)
			}
		default:
			return Spec{}, fmt.Errorf("%s: unknown field (want scenario, scenario_file or vary)", where)
		}
	}
	if s.Base == nil || len(s.Axes) == 0 {
		return Spec{}, fmt.Errorf("%s: needs a scenario (or scenario_file) and vary", path)
	}
	if n := s.Points(); n > MaxPoints {
		return Spec{}, fmt.Errorf("%s: %d points; at most %d", path, n, MaxPoints)
	}
	// Every value must make a scenario the loader and the emulator take:
	// check each on its own against the base, so an error names the one
	// at fault.
	for _, a := range s.Axes {
		for _, v := range a.Values {
			cfg, err := s.apply([]string{a.Field}, []*yaml.Node{v})
			if err == nil {
				_, err = cluster.Build(cfg)
			}
			if err != nil {
				return Spec{}, fmt.Errorf("%s:%d: %s = %s: %v", path, v.Line, a.Field, v.Value, err)
			}
		}
	}
	return s, nil
}

func axis(path string, a *yaml.Node) (Axis, error) {
	if a.Kind != yaml.MappingNode {
		return Axis{}, fmt.Errorf("%s:%d: want {field: PATH, values: [...]}", path, a.Line)
	}
	var ax Axis
	for i := 0; i < len(a.Content); i += 2 {
		k, v := a.Content[i], a.Content[i+1]
		switch k.Value {
		case "field":
			ax.Field = v.Value
		case "values":
			if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
				return Axis{}, fmt.Errorf("%s:%d: values: want a list of at least one value", path, v.Line)
			}
			for _, x := range v.Content {
				if x.Kind != yaml.ScalarNode {
					return Axis{}, fmt.Errorf("%s:%d: values: want scalars (numbers with units, names)", path, x.Line)
				}
			}
			ax.Values = v.Content
		default:
			return Axis{}, fmt.Errorf("%s:%d: %s: unknown field (want field or values)", path, k.Line, k.Value)
		}
	}
	if ax.Field == "" || ax.Values == nil {
		return Axis{}, fmt.Errorf("%s:%d: an axis needs field and values", path, a.Line)
	}
	if _, err := parsePath(ax.Field); err != nil {
		return Axis{}, fmt.Errorf("%s:%d: field %q: %v", path, a.Line, ax.Field, err)
	}
	return ax, nil
}

// Points is how many points the grid has.
func (s *Spec) Points() int {
	n := 1
	for _, a := range s.Axes {
		n *= len(a.Values)
		if n > MaxPoints {
			return n
		}
	}
	return n
}

// values is point i's value of each axis, the first axis varying
// slowest.
func (s *Spec) values(i int) []*yaml.Node {
	vs := make([]*yaml.Node, len(s.Axes))
	for k := len(s.Axes) - 1; k >= 0; k-- {
		n := len(s.Axes[k].Values)
		vs[k] = s.Axes[k].Values[i%n]
		i /= n
	}
	return vs
}

// Scenario is point i's scenario.
func (s *Spec) Scenario(i int) (scenario.Config, error) {
	var fields []string
	for _, a := range s.Axes {
		fields = append(fields, a.Field)
	}
	return s.apply(fields, s.values(i))
}

// apply sets each field to its value in a copy of the base and loads it.
func (s *Spec) apply(fields []string, values []*yaml.Node) (scenario.Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(s.Base, &doc); err != nil {
		return scenario.Config{}, err
	}
	for k, f := range fields {
		segs, _ := parsePath(f)
		if err := set(doc.Content[0], segs, values[k]); err != nil {
			return scenario.Config{}, fmt.Errorf("%s: %v", f, err)
		}
	}
	b, err := yaml.Marshal(&doc)
	if err != nil {
		return scenario.Config{}, err
	}
	return scenario.Load(s.BaseName, bytes.NewReader(b))
}

// seg is one step of a field path: a key, and then an index into its
// list (by position, by an item's name, or * for every item).
type seg struct {
	key   string
	index string // "" none; a number or a name
}

func parsePath(p string) ([]seg, error) {
	var segs []seg
	for _, part := range strings.Split(p, ".") {
		s := seg{key: part}
		if i := strings.IndexByte(part, '['); i >= 0 {
			if !strings.HasSuffix(part, "]") || i == 0 {
				return nil, fmt.Errorf("%q: want key or key[N] or key[name]", part)
			}
			s.key, s.index = part[:i], part[i+1:len(part)-1]
			if s.index == "" {
				return nil, fmt.Errorf("%q: an empty index", part)
			}
		}
		if s.key == "" {
			return nil, fmt.Errorf("an empty key")
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// set puts value at segs under mapping m, adding keys a default left out.
func set(m *yaml.Node, segs []seg, value *yaml.Node) error {
	s := segs[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not inside a mapping", s.key)
	}
	var v *yaml.Node
	for i := 0; i < len(m.Content); i += 2 {
		if m.Content[i].Value == s.key {
			v = m.Content[i+1]
		}
	}
	last := len(segs) == 1
	if v == nil {
		if s.index != "" {
			return fmt.Errorf("%s: no such list in the scenario", s.key)
		}
		v = &yaml.Node{Kind: yaml.MappingNode}
		if last {
			v = value
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: s.key}, v)
		if last {
			return nil
		}
		return set(v, segs[1:], value)
	}
	if s.index == "*" {
		// Every item of the list (the O-NICs of a circuit must share a
		// lane plan, say).
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("%s[*]: not a list with items", s.key)
		}
		for _, item := range v.Content {
			if last {
				*item = *value
			} else if err := set(item, segs[1:], value); err != nil {
				return err
			}
		}
		return nil
	}
	if s.index != "" {
		if v.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s: not a list", s.key)
		}
		item, err := pick(v, s.index)
		if err != nil {
			return fmt.Errorf("%s[%s]: %v", s.key, s.index, err)
		}
		if last {
			*item = *value
			return nil
		}
		return set(item, segs[1:], value)
	}
	if last {
		for i := 0; i < len(m.Content); i += 2 {
			if m.Content[i].Value == s.key {
				m.Content[i+1] = value
			}
		}
		return nil
	}
	return set(v, segs[1:], value)
}

// pick is list item idx: by position, or the item whose name is idx.
func pick(list *yaml.Node, idx string) (*yaml.Node, error) {
	if n, err := strconv.Atoi(idx); err == nil {
		if n < 0 || n >= len(list.Content) {
			return nil, fmt.Errorf("the list has %d items", len(list.Content))
		}
		return list.Content[n], nil
	}
	for _, it := range list.Content {
		if it.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i < len(it.Content); i += 2 {
			if it.Content[i].Value == "name" && it.Content[i+1].Value == idx {
				return it, nil
			}
		}
	}
	return nil, fmt.Errorf("no item named %q", idx)
}

// Result is one point's outcome: what the report says, without the
// wall-clock speed (so that results do not depend on the machine).
type Result struct {
	Point  int                  `json:"point"`
	Values map[string]string    `json:"values"`
	Flows  []cluster.FlowReport `json:"flows"`
	Groups []cluster.FlowReport `json:"groups,omitempty"`
	ONICs  []cluster.ONICReport `json:"onics"`
	Acct   cluster.Accounting   `json:"accounting"`
	Reconf int                  `json:"reconfigurations"`
	StallS float64              `json:"reconfiguration_stall_seconds"`
	Error  string               `json:"error,omitempty"`
}

// Run runs point i.
func (s *Spec) Run(i int) Result {
	r := Result{Point: i, Values: map[string]string{}}
	for k, v := range s.values(i) {
		r.Values[s.Axes[k].Field] = v.Value
	}
	cfg, err := s.Scenario(i)
	if err == nil {
		var rep cluster.Report
		if rep, err = cluster.Run(cfg); err == nil {
			r.Flows, r.Groups, r.ONICs, r.Acct, r.Reconf, r.StallS = rep.Flows, rep.Groups, rep.ONICs, rep.Accounting, rep.Reconfigurations, rep.StallS
		}
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

// RunAll runs every point on jobs goroutines and returns the results in
// point order.
func (s *Spec) RunAll(jobs int) []Result {
	n := s.Points()
	res := make([]Result, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(jobs, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res[i] = s.Run(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return res
}

// Marshal is a result as its point file holds it (and the JSON output's
// element): indented JSON, a newline at the end.
func Marshal(r Result) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err := enc.Encode(r)
	return b.Bytes(), err
}
