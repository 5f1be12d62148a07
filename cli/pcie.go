package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/internal/yamlcfg"
	"onic/pcie"
	"onic/tlp"
)

func newPCIeCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "pcie",
		Short: "PCIe model: enumerate a topology, print its tree, dump configuration space",
		Long: `The PCIe model: a topology (a root complex, switches, O-NICs and other
endpoints) enumerated the way Linux does it. Without --topology the embedded
default is used: a host whose root port holds a switch with two O-NICs, a
GPU-like and an NVMe-like endpoint. The topology format is in docs/pcie.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: areaRunE,
	}
	c.AddCommand(newPCIeTreeCmd(v), newPCIeDumpCmd(v))
	return c
}

// maxTopologyFile is the largest topology file onic reads.
const maxTopologyFile = 4 << 20

// loadHierarchy reads the topology file (or takes the default), builds and
// enumerates it.
func loadHierarchy(path string) (*pcie.Hierarchy, error) {
	cfg := pcie.DefaultTopology()
	if path != "" {
		cfg = pcie.TopologyConfig{}
		if err := yamlcfg.DecodeFile(path, &cfg, yamlcfg.Options{MaxBytes: maxTopologyFile}); err != nil {
			return nil, fmt.Errorf("topology %v", err)
		}
	}
	h, err := pcie.Build(cfg)
	if err != nil {
		return nil, fmt.Errorf("topology %s: %v", topologyName(path), err)
	}
	if err := h.Enumerate(); err != nil {
		return nil, fmt.Errorf("topology %s: %v", topologyName(path), err)
	}
	return h, nil
}

func topologyName(path string) string {
	if path == "" {
		return "(default)"
	}
	return path
}

func newPCIeTreeCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "tree",
		Short: "Print the enumerated hierarchy like lspci -tv",
		Example: `  onic pcie tree
  onic pcie tree --topology my-rack.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("tree takes no arguments (got %q)", args[0])
			}
			h, err := loadHierarchy(v.GetString("pcie.tree.topology"))
			if err != nil {
				return err
			}
			if v.GetBool("pcie.tree.json") {
				return printJSON(cmd.OutOrStdout(), treeJSON(h.Root))
			}
			return h.WriteTree(cmd.OutOrStdout())
		},
	}
	c.Flags().String("topology", "", "topology YAML file (default: the embedded topology)")
	c.Flags().Bool("json", false, "print the hierarchy as JSON: each device with its functions (ID, vendor, device, class) and the devices below it")
	bindFlags(v, c, "pcie.tree")
	return c
}

func newPCIeDumpCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "dump [NAME|BB:DD.F ...]",
		Short: "Dump configuration space in the format of lspci -xxxx",
		Long: `Write the configuration space of the enumerated topology's functions in the
text format of 'lspci -xxxx', which 'lspci -F FILE -vvv' decodes. With no
arguments every function is dumped; a device name selects all its functions,
an ID (bb:dd.f) one function. Lines starting with '#' give each BAR's size,
which a dump cannot carry (lspci ignores them).`,
		Example: `  onic pcie dump onic0 > onic0.txt && lspci -F onic0.txt -vvv
  onic pcie dump 02:00.0 --topology my-rack.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := loadHierarchy(v.GetString("pcie.dump.topology"))
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if path := v.GetString("pcie.dump.out"); path != "" {
				f, err := os.Create(path)
				if err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			return dumpFunctions(out, h, args)
		},
	}
	c.Flags().String("topology", "", "topology YAML file (default: the embedded topology)")
	c.Flags().String("out", "", "write to this file instead of stdout")
	bindFlags(v, c, "pcie.dump")
	return c
}

func dumpFunctions(w io.Writer, h *pcie.Hierarchy, sel []string) error {
	type fn struct {
		n *pcie.Node
		i int
	}
	var all []fn
	h.Walk(func(n *pcie.Node) {
		for i := range n.Funcs {
			all = append(all, fn{n, i})
		}
	})
	var chosen []fn
	if len(sel) == 0 {
		chosen = all
	}
	for _, s := range sel {
		found := false
		if id, err := tlp.ParseID(s); err == nil {
			for _, f := range all {
				if f.n.ID(f.i) == id {
					chosen, found = append(chosen, f), true
				}
			}
		} else {
			for _, f := range all {
				if f.n.Name == s {
					chosen, found = append(chosen, f), true
				}
			}
		}
		if !found {
			var names []string
			h.Walk(func(n *pcie.Node) { names = append(names, n.Name) })
			return fmt.Errorf("no function %q in the topology (devices: %s; or give an ID such as 03:00.0)", s, strings.Join(names, ", "))
		}
	}
	bw := bufio.NewWriter(w)
	for _, f := range chosen {
		if err := pcie.WriteLspci(bw, f.n.ID(f.i), f.n.Funcs[f.i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// treeNode is one device of `pcie tree --json`.
type treeNode struct {
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Bus       int            `json:"bus"`
	Device    int            `json:"device"`
	Link      string         `json:"link,omitempty"` // the upstream link: Gen3 x16
	Functions []treeFunction `json:"functions"`
	Children  []treeNode     `json:"children,omitempty"`
}

// treeFunction is one function of a device.
type treeFunction struct {
	ID       string `json:"id"` // bb:dd.f
	Name     string `json:"name"`
	VendorID string `json:"vendor_id"`
	DeviceID string `json:"device_id"`
	Class    string `json:"class"` // base, sub-class, programming interface
	Bridge   bool   `json:"bridge"`
}

var nodeKinds = map[pcie.NodeKind]string{pcie.RootComplexNode: "root-complex", pcie.RootPortNode: "root-port",
	pcie.SwitchUpNode: "switch-upstream", pcie.SwitchDownNode: "switch-downstream", pcie.EndpointNode: "endpoint"}

// treeJSON is the enumerated hierarchy below n.
func treeJSON(n *pcie.Node) treeNode {
	t := treeNode{Name: n.Name, Kind: nodeKinds[n.Kind], Bus: int(n.Bus), Device: int(n.Dev), Functions: []treeFunction{}}
	if n.Width > 0 {
		t.Link = fmt.Sprintf("Gen%d x%d", n.Gen, n.Width)
	}
	for i, f := range n.Funcs {
		sp := f.Space
		t.Functions = append(t.Functions, treeFunction{ID: n.ID(i).String(), Name: f.Name, Bridge: f.Bridge,
			VendorID: fmt.Sprintf("%04x", sp.Read16(0)), DeviceID: fmt.Sprintf("%04x", sp.Read16(2)),
			Class: fmt.Sprintf("%06x", sp.Read32(8)>>8)})
	}
	for _, c := range n.Children {
		t.Children = append(t.Children, treeJSON(c))
	}
	return t
}
