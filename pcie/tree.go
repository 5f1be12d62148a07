package pcie

import (
	"fmt"
	"io"
	"strings"
)

// WriteTree prints an enumerated hierarchy the way `lspci -tv` does: the
// root bus as -[0000:00]-, each function as dd.f, each bridge followed by
// its bus range and the devices behind it, with +-, | and \- connectors;
// a function's IDs and name follow it.
func (h *Hierarchy) WriteTree(w io.Writer) error {
	var out strings.Builder
	line := []byte(fmt.Sprintf("-[0000:%02x]-", 0))
	h.treeBus(&out, line, h.busEntries(h.Root))
	_, err := io.WriteString(w, out.String())
	return err
}

// treeEntry is one function on a bus.
type treeEntry struct {
	n  *Node
	fn int
}

// busEntries lists the functions on the bus below n, in device and
// function order (the root complex's bus holds its host bridge first).
func (h *Hierarchy) busEntries(n *Node) []treeEntry {
	var es []treeEntry
	if n.Kind == RootComplexNode {
		for i := range n.Funcs {
			es = append(es, treeEntry{n, i})
		}
	}
	for _, c := range n.Children {
		for i := range c.Funcs {
			es = append(es, treeEntry{c, i})
		}
	}
	return es
}

// treeBus follows pciutils' ls-tree.c: the line buffer holds the prefix,
// and after a line is printed every character but a vertical connector
// turns into a space, so continuation lines line up.
func (h *Hierarchy) treeBus(out *strings.Builder, line []byte, es []treeEntry) []byte {
	switch len(es) {
	case 0:
		return printIt(out, line)
	case 1:
		return h.treeDev(out, append(line, '-', '-'), es[0])
	}
	base := len(line)
	for i, e := range es {
		line = line[:base]
		if i < len(es)-1 {
			line = append(line, '+', '-')
		} else {
			line = append(line, '\\', '-')
		}
		line = h.treeDev(out, line, e)
	}
	return line
}

func (h *Hierarchy) treeDev(out *strings.Builder, line []byte, e treeEntry) []byte {
	f := e.n.Funcs[e.fn]
	dev := e.n.Dev
	if e.n.Kind == RootComplexNode {
		dev = 0
	}
	line = append(line, fmt.Sprintf("%02x.%x", dev, e.fn)...)
	if f.Bridge && e.fn == 0 {
		sec, sub := f.BusRange()
		if sec == sub {
			line = append(line, fmt.Sprintf("-[%02x]-", sec)...)
		} else {
			line = append(line, fmt.Sprintf("-[%02x-%02x]-", sec, sub)...)
		}
		line = append(line, '-') // as show_tree_bridge does
		return h.treeBus(out, line, h.busEntries(e.n))
	}
	line = append(line, fmt.Sprintf("  [%04x:%04x] %s", f.Space.Read16(0), f.Space.Read16(2), f.Name)...)
	return printIt(out, line)
}

func printIt(out *strings.Builder, line []byte) []byte {
	out.Write(line)
	out.WriteByte('\n')
	for i, c := range line {
		if c == '+' || c == '|' {
			line[i] = '|'
		} else {
			line[i] = ' '
		}
	}
	return line
}
