package manager

import (
	"fmt"

	"onic/pcie/acl"
	pmgr "onic/pcie/manager"
	"onic/pcie/ntb"
)

// Large is the sizing configuration of docs/hdl.md: every table at the
// size of the Switchtec-class NTB the defaults follow (shared/REFERENCE.md)
// — 64 direct windows (to both ports, the kernel slots and local
// registers, some with failover or multicast), a 512-entry LUT with every
// entry mapped, 64 requester IDs, and 64 access ranges in 8 domains. It
// fits the default O-NIC function (BAR2 16 GiB, BAR4 32 MiB).
func Large() pmgr.Config {
	var c pmgr.Config
	t := &c.Translation
	t.MaxWindows, t.KernelSlots = ntb.MaxWindowsLimit, 4
	egress := []string{"port-a", "port-b", "kernel:0", "kernel:1", "kernel:2", "kernel:3", "local", "port-a"}
	for i := range ntb.MaxWindowsLimit {
		w := ntb.WindowConfig{Name: fmt.Sprintf("w%02d", i), BAR: 2, Offset: uint64(i) << 28, Size: 1 << 28,
			Egress: egress[i%len(egress)], Translated: uint64(i+1) << 32}
		switch i % 16 {
		case 0:
			w.FailoverEgress, w.FailoverTranslated = "port-b", uint64(i+1)<<32|1<<31
		case 9:
			w.Egress, w.FailoverEgress, w.FailoverTranslated, w.Multicast = "port-b", "port-a", uint64(i+1)<<32|1<<30, true
		}
		t.Windows = append(t.Windows, w)
	}
	t.LUT = ntb.LUTConfig{BAR: 4, Entries: ntb.MaxLUTEntries, EntrySize: 64 << 10}
	for i := range ntb.MaxLUTEntries {
		t.LUT.Map = append(t.LUT.Map, ntb.LUTEntryConfig{Index: i, Egress: egress[i%len(egress)], Translated: uint64(i) << 24})
	}
	t.RID.ProxyBase = "80:00.0"
	for i := range 64 {
		t.RID.Map = append(t.RID.Map, fmt.Sprintf("%02x:00.%d", i/8, i%8))
	}
	for d := range 8 {
		dc := acl.DomainConfig{Name: fmt.Sprintf("d%d", d), Requesters: []string{fmt.Sprintf("%02x:00.0-%02x:1f.7", d, d)}, Ingress: []string{"host"},
			Egress: []string{"port-a", "port-b", "kernel:0", "kernel:1", "local"}}
		for r := range 8 {
			k := d*8 + r
			dc.Ranges = append(dc.Ranges, acl.RangeConfig{Base: uint64(k+1) << 32, Size: 1 << 28, Read: r%3 != 2, Write: r%3 != 1})
		}
		c.Access.Domains = append(c.Access.Domains, dc)
	}
	return c
}
