package card

import (
	"regexp"
	"slices"
	"strings"

	"onic/designs/internal/optlink"
	"onic/hdlgen/ir"
)

// counterName matches the card's counter outputs other than the links':
// the port pipelines' counts and denials added up (port_in_count_*,
// port_in_deny_*), the TLPs dropped whole before a port's link
// (<port>_down_drops, <port>_hold_drops), the times a port's egress
// stalled (<port>_egress_stalls), the ports' non-posted requests toward
// the host dropped with the host tag table's park full
// (host_np_overflows), each kernel slot's drops (slot<k>_drop_*,
// slot<k>_out_malformed) and the MSI-X messages sent and failed
// (msix_sent, msix_failed).
var counterName = regexp.MustCompile(`^(port_in_(count|deny)_[a-z0-9_]+|port_[ab]_((down|hold)_drops|egress_stalls)|host_np_overflows|slot[0-9]+_(drop_[a-z0-9_]+|out_malformed)|msix_(sent|failed))$`)

// IsCounter says whether an output of the card (Build's module) is one of
// its counters: the ones above and each port's link counters
// (<port>_<optlink.Counters>). Every counter is 32 bits and saturates at
// all ones rather than wrapping, so that software never reads a count
// that overflowed as a small one.
func IsCounter(name string) bool {
	if counterName.MatchString(name) {
		return true
	}
	for _, pt := range Ports {
		if c, ok := strings.CutPrefix(name, pt.Prefix+"_"); ok && slices.Contains(optlink.Counters, c) {
			return true
		}
	}
	return false
}

// Counters returns the names of top's counter outputs in port order: the
// order of the register BAR's counter region (manager.RegBARCounters,
// 4 bytes each), as the card's registers.md and C header list them.
func Counters(top *ir.Module) []string {
	var names []string
	for _, p := range top.Ports() {
		if p.Output && IsCounter(p.Name) {
			names = append(names, p.Name)
		}
	}
	return names
}
