package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"onic/emu/ipnet"
)

func newEmuNetCmd(v *viper.Viper) *cobra.Command {
	c := &cobra.Command{
		Use:   "net",
		Short: "Give each emulated host a Linux network interface: run ping, iperf3, ssh across the O-NICs",
		Long: `Runs FLEET's IP over PCIe on an emulated cluster: each host of the scenario gets a
network namespace of its own (--netns-prefix + host name) with one interface
(onic0), the addresses its scenario entry gives (ipv4, ipv6) or else
10.77.0.N/24 and fd00:77::N/64 (N the host's place in the scenario), and a
model of the IP-over-PCIe driver behind it. Every frame is PCIe traffic:
written by DMA through the host's O-NIC window into a receive ring in the
peer host's memory — the host link, the manager's access check and
translation, the optical ports and the MEMS switch — announced by an MSI-X
doorbell written through a window to the peer's interrupt range, and the
peer's driver hands it to its interface. Broadcast frames (ARP, neighbour
discovery) go once through a multicast window where the O-NIC has one.
Simulated time follows the wall clock; the report says how far it fell
behind. Programs run in a host with 'ip netns exec'.

Needs root (or CAP_NET_ADMIN) and iproute2. Once every interface is up it
prints one ready line (--json: one JSON object naming each host's namespace,
interface and addresses), runs until SIGINT or SIGTERM, then removes the
namespaces and prints its report. The scenario's traffic generators
(flows) are left out: the hosts' traffic is the applications'. The default
scenario, ip-over-pcie, joins host A to B (out of its O-NIC's port A) and C
(port B); another scenario's windows must lead to the peers' memory at
4 GiB with the peers allowed the rings there (7 MiB for three hosts), and
to their MSI range at 0xFEE00000 for doorbells (without, a host polls).
docs/emu.md, "IP over the fabric", describes the driver.`,
		Example: `  onic emu net &
  ip netns exec onic-A ping -c 3 10.77.0.2
  ip netns exec onic-B iperf3 -s -D; ip netns exec onic-A iperf3 -c 10.77.0.2 -t 5
  kill %1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, _, err := scenarioFlags(cmd, v, "emu.net")
			if err != nil {
				return err
			}
			if len(cfg.Flows) > 0 {
				// The hosts' traffic is the applications' own.
				fmt.Fprintf(cmd.ErrOrStderr(), "onic emu net: leaving out the scenario's %d traffic generators (flows)\n", len(cfg.Flows))
				cfg.Flows = nil
			}
			cl, err := buildCluster(v, "emu.net", cfg)
			if err != nil {
				return err
			}
			if path := v.GetString("emu.net.pcap"); path != "" {
				finish, err := capture(cl, path, v.GetStringSlice("emu.net.tap"))
				if err != nil {
					return err
				}
				defer func() {
					if ferr := finish(); ferr != nil {
						fmt.Fprintf(cmd.ErrOrStderr(), "onic: %v\n", ferr)
					}
				}()
			} else if len(v.GetStringSlice("emu.net.tap")) > 0 {
				return fmt.Errorf("--tap: needs --pcap FILE to write to")
			}
			opt := ipnet.Options{Prefix: v.GetString("emu.net.netns-prefix"), MTU: v.GetInt("emu.net.mtu"), Rate: v.GetFloat64("emu.net.rate"), Live: cmd.ErrOrStderr()}
			if opt.Prefix == "" || strings.ContainsAny(opt.Prefix, "/ \t") {
				return fmt.Errorf("--netns-prefix %q: want a non-empty name without / or spaces", opt.Prefix)
			}
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
			defer stop()
			n, err := ipnet.Start(cl, cfg, opt)
			if err != nil {
				return fmt.Errorf("emu net: %v", err)
			}
			defer n.Close()
			asJSON := v.GetBool("emu.net.json")
			if asJSON {
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"ready": true, "scenario": cfg.Name, "endpoints": n.Endpoints()}); err != nil {
					return err
				}
			} else {
				var parts []string
				for _, ep := range n.Endpoints() {
					parts = append(parts, fmt.Sprintf("%s: ip netns exec %s (%s %s %s)", ep.Host, ep.Namespace, ep.Interface, ep.IPv4, ep.IPv6))
				}
				fmt.Fprintf(cmd.OutOrStdout(), "ready: %s\n", strings.Join(parts, "; "))
			}
			if err := n.Run(ctx); err != nil {
				return err
			}
			rep, err := n.Report()
			if err != nil {
				return err
			}
			if err := n.Close(); err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			rep.WriteText(cmd.OutOrStdout())
			return nil
		},
	}
	c.Flags().String("scenario", "ip-over-pcie", "built-in scenario whose hosts to join ('onic emu scenarios')")
	c.Flags().String("scenario-file", "", "cluster YAML instead of a built-in scenario (the format of emu run --scenario-file)")
	c.Flags().String("netns-prefix", "onic-", "network namespace names: this prefix and the host's name")
	c.Flags().Int("mtu", 1500, fmt.Sprintf("the interfaces' MTU in bytes (68 to %d)", ipnet.MaxMTU))
	c.Flags().Float64("rate", 1, "simulated seconds per wall second (1: real time, as applications expect)")
	c.Flags().Bool("json", false, "print the ready line and the report as JSON")
	c.Flags().String("pcap", "", "write the TLPs seen at the taps to this pcapng file as the network runs, the frames' bytes in them (format: docs/pcap.md)")
	c.Flags().StringSlice("tap", nil, "capture points for --pcap, such as onicB.port-a (default: all)")
	bindFlags(v, c, "emu.net")
	return c
}
