package ir

import (
	"fmt"
	"slices"
	"strings"
)

// Instance places module sub inside m as an instance named name — a
// level of hierarchy that the Verilog emitter keeps (one module per file,
// instanced by name) and the simulators flatten. sub's inputs are driven
// by inputs (by input name; every one must be given, at its width) and
// its outputs are returned by name. sub must be complete: it is checked
// here, and errors are recorded at the caller's line. An instance shares
// m's clock and resets.
//
// Each output is known to follow, combinationally, only the inputs that
// reach it inside sub without crossing a register or memory port, so a
// loop through an instance is reported only when one really exists.
func (m *Module) Instance(name string, sub *Module, inputs map[string]Value) map[string]Value {
	p := caller()
	outs := map[string]Value{}
	// After an error each output is a poison constant, so what is built
	// from it reports no errors of its own.
	failed := func() map[string]Value {
		if sub != nil {
			for _, port := range sub.ports {
				if port.Output {
					outs[port.Name] = m.poison(p, sub.nodes[port.Node].W)
				}
			}
		}
		return outs
	}
	if sub == nil || sub == m {
		m.errorf(p, "instance %s: a module cannot instance itself or nil", name)
		return failed()
	}
	if err := sub.Check(); err != nil {
		m.errorf(p, "instance %s: module %s has errors: %v", name, sub.name, strings.ReplaceAll(err.Error(), "\n", "; "))
		return failed()
	}
	if sub.contains(m) {
		m.errorf(p, "instance %s: module %s already contains %s", name, sub.name, m.name)
		return failed()
	}
	m.claim(p, name)
	at := m.connect(p, "instance "+name, sub, inputs)
	var args []int
	for _, port := range sub.ports {
		if !port.Output {
			args = append(args, at[port.Node])
		}
	}
	inst := m.add(Node{Op: OpInstance, W: 1, Args: args, Name: name, Sub: sub, Pos: p})
	for k, port := range sub.ports {
		if !port.Output {
			continue
		}
		follow := []int{inst.id}
		for _, in := range sub.combInputs(port.Node) {
			follow = append(follow, at[in])
		}
		outs[port.Name] = m.add(Node{Op: OpInstOut, W: sub.nodes[port.Node].W, Args: follow, Port: k, Pos: p})
	}
	return outs
}

// contains reports whether m is x or instances x at any depth.
func (m *Module) contains(x *Module) bool {
	if m == x {
		return true
	}
	for i := range m.nodes {
		if n := &m.nodes[i]; n.Op == OpInstance && n.Sub.contains(x) {
			return true
		}
	}
	return false
}

// connect matches inputs to sub's input ports by name, for Inline and
// Instance: at[i] is the node of m that drives sub's input node i (a
// poison constant after an error, which is recorded).
func (m *Module) connect(p Pos, what string, sub *Module, inputs map[string]Value) []int {
	at := make([]int, len(sub.nodes))
	given := 0
	for i := range sub.nodes {
		n := &sub.nodes[i]
		if n.Op != OpInput {
			continue
		}
		v, ok := inputs[n.Name]
		switch {
		case !ok:
			m.errorf(p, "%s: input %q of %s is not connected", what, n.Name, sub.name)
			v = m.poison(p, n.W)
		case !m.own(p, what, v):
			v = m.poison(p, n.W)
		case v.Width() != n.W:
			m.errorf(p, "%s: input %q of %s is %d bits, the value %d", what, n.Name, sub.name, n.W, v.Width())
			v = m.poison(p, n.W)
		default:
			given++
		}
		at[i] = v.id
	}
	if given != len(inputs) {
		for name := range sortedKeys(inputs) {
			if sub.inputIndex(name) < 0 {
				m.errorf(p, "%s: %s has no input %q", what, sub.name, name)
			}
		}
	}
	return at
}

// combInputs lists the input nodes that node i follows combinationally:
// those reached from it without crossing a register, a memory read or an
// instance's registered paths. m has passed Check.
func (m *Module) combInputs(i int) []int {
	seen := make([]bool, len(m.nodes))
	var ins []int
	stack := []int{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[j] {
			continue
		}
		seen[j] = true
		n := &m.nodes[j]
		switch n.Op {
		case OpInput:
			ins = append(ins, j)
		case OpReg, OpMemRead, OpMem, OpMemWrite, OpInstance:
		case OpInstOut:
			stack = append(stack, n.Args[1:]...)
		default:
			stack = append(stack, n.Args...)
		}
	}
	slices.Sort(ins)
	return ins
}

// Flatten returns m with every instance, at every depth, replaced by a
// copy of its module's logic, and where each of m's nodes went (-1 for
// an instance, which has no value of its own). The copied signals are
// named after the instance path ("u_fifo_count"); an instanced module's
// inputs become wires driven by what the instance connected, and each
// instance output a wire driven by the module's output. A module without
// instances is returned as it is, with a nil map. This is how the
// simulators see a hierarchy; the Verilog emitter keeps it.
func Flatten(m *Module) (*Module, []int) {
	if !slices.ContainsFunc(m.nodes, func(n Node) bool { return n.Op == OpInstance }) {
		return m, nil
	}
	f := NewModule(m.name)
	at := make([]int, len(m.nodes))
	subs := map[int]*Module{}
	base := map[int]int{}
	next := 0
	for i := range m.nodes {
		if n := &m.nodes[i]; n.Op == OpInstance {
			fs, _ := Flatten(n.Sub)
			subs[i], base[i], at[i] = fs, next, -1
			next += len(fs.nodes)
			continue
		}
		at[i], next = next, next+1
	}
	f.nodes = make([]Node, 0, next)
	for i := range m.nodes {
		n := m.nodes[i]
		switch n.Op {
		case OpInstance:
			fs, b, prefix := subs[i], base[i], n.Name+"_"
			for k := range fs.nodes {
				c := fs.nodes[k]
				c.Args = slices.Clone(c.Args)
				for j, a := range c.Args {
					if a >= 0 {
						c.Args[j] = b + a
					}
				}
				if c.Name != "" {
					c.Name = prefix + c.Name
				}
				if c.Table != nil {
					c.Table = &Table{Index: b + c.Table.Index, Words: c.Table.Words}
				}
				if c.Op == OpInput {
					// Driven by what the instance connected, in port order.
					c.Op, c.Args = OpWire, []int{at[n.Args[fs.inputOrdinal(k)]]}
				}
				f.nodes = append(f.nodes, c)
			}
		case OpInstOut:
			inst := &m.nodes[n.Args[0]]
			port := inst.Sub.ports[n.Port]
			fs := subs[n.Args[0]]
			drv := base[n.Args[0]] + fs.ports[n.Port].Node
			f.nodes = append(f.nodes, Node{Op: OpWire, W: n.W, Args: []int{drv}, Name: inst.Name + "_" + port.Name, Pos: n.Pos, Drive: n.Pos})
		default:
			n.Args = slices.Clone(n.Args)
			for j, a := range n.Args {
				if a >= 0 {
					n.Args[j] = at[a]
				}
			}
			if n.Table != nil {
				n.Table = &Table{Index: at[n.Table.Index], Words: n.Table.Words}
			}
			f.nodes = append(f.nodes, n)
		}
	}
	for _, port := range m.ports {
		port.Node = at[port.Node]
		f.ports = append(f.ports, port)
	}
	return f, at
}

// inputOrdinal is the position of input node i among m's input ports.
func (m *Module) inputOrdinal(i int) int {
	k := 0
	for _, p := range m.ports {
		if p.Output {
			continue
		}
		if p.Node == i {
			return k
		}
		k++
	}
	panic(fmt.Sprintf("ir: node %d of %s is not an input port", i, m.name))
}

// Instances lists the modules m instances directly, each once, in the
// order of their first instance.
func (m *Module) Instances() []*Module {
	var subs []*Module
	for i := range m.nodes {
		if n := &m.nodes[i]; n.Op == OpInstance && !slices.Contains(subs, n.Sub) {
			subs = append(subs, n.Sub)
		}
	}
	return subs
}
