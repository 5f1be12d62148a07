/*
 * example.h — what the example programs share: failing loudly, finding
 * the O-NIC as an operating system would (walking the buses through
 * configuration space), sizing its BARs, and register access through the
 * generated register map (onic_pcie_manager_regs.h, from onic hdl gen).
 */
#ifndef ONIC_EXAMPLE_H
#define ONIC_EXAMPLE_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onic_host.h"
#include "onic_pcie_manager_regs.h"

#define REG(name) ONIC_PCIE_MANAGER_##name

static const char *example_name = "example";

/* die ends the program with a one-line message (and the client's error). */
static inline void die(onic_host *h, const char *f, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", example_name);
	va_start(ap, f);
	vfprintf(stderr, f, ap);
	va_end(ap);
	if (h && onic_host_error(h)[0])
		fprintf(stderr, ": %s", onic_host_error(h));
	fprintf(stderr, "\n");
	exit(1);
}

/* check dies unless ok. */
#define check(h, ok, ...) \
	do { \
		if (!(ok)) \
			die(h, __VA_ARGS__); \
	} while (0)

/* onic_dev is an O-NIC function found on the bus. */
typedef struct {
	int seg;
	uint16_t bdf;
	uint64_t bar[6], size[6]; /* 64-bit BARs at their even index */
} onic_dev;

static inline uint32_t cfg_rd(onic_host *h, int seg, uint16_t bdf, int reg, int size)
{
	uint32_t v;
	check(h, onic_cfg_read(h, seg, bdf, reg, size, &v, NULL) == 0, "cfg_read %02x:%02x.%x +%#x", bdf >> 8, bdf >> 3 & 31, bdf & 7, reg);
	return v;
}

static inline void cfg_wr(onic_host *h, int seg, uint16_t bdf, int reg, int size, uint32_t v)
{
	check(h, onic_cfg_write(h, seg, bdf, reg, size, v, NULL) == 0, "cfg_write %02x:%02x.%x +%#x", bdf >> 8, bdf >> 3 & 31, bdf & 7, reg);
}

/* size_bars sizes the 64-bit memory BARs of d the way Linux does: memory
 * decoding off, all-ones written, the mask read back, the address put
 * back, decoding on again. */
static inline void size_bars(onic_host *h, onic_dev *d)
{
	uint32_t cmd = cfg_rd(h, d->seg, d->bdf, 0x04, 2);
	cfg_wr(h, d->seg, d->bdf, 0x04, 2, cmd & ~2u);
	for (int i = 0; i < 6; i++) {
		int reg = 0x10 + 4 * i;
		uint32_t lo = cfg_rd(h, d->seg, d->bdf, reg, 4);
		if (lo == 0 || (lo & 1) || (lo & 6) != 4)
			continue; /* absent, I/O or 32-bit: the O-NIC has none */
		uint32_t hi = cfg_rd(h, d->seg, d->bdf, reg + 4, 4);
		cfg_wr(h, d->seg, d->bdf, reg, 4, 0xffffffffu);
		cfg_wr(h, d->seg, d->bdf, reg + 4, 4, 0xffffffffu);
		uint64_t mask = (uint64_t)cfg_rd(h, d->seg, d->bdf, reg + 4, 4) << 32 | (cfg_rd(h, d->seg, d->bdf, reg, 4) & ~0xfu);
		cfg_wr(h, d->seg, d->bdf, reg, 4, lo);
		cfg_wr(h, d->seg, d->bdf, reg + 4, 4, hi);
		d->bar[i] = (uint64_t)hi << 32 | (lo & ~0xfu);
		d->size[i] = ~mask + 1;
		i++;
	}
	cfg_wr(h, d->seg, d->bdf, 0x04, 2, cmd | 2u | 4u); /* memory space, bus master */
}

/* scan walks bus bus of segment seg and the buses behind its bridges,
 * looking for the O-NIC by vendor and device ID. */
static inline int scan(onic_host *h, int seg, int bus, onic_dev *d, int depth)
{
	for (int dev = 0; dev < 32; dev++) {
		for (int fn = 0; fn < 8; fn++) {
			uint16_t bdf = onic_bdf(bus, dev, fn);
			uint32_t id = cfg_rd(h, seg, bdf, 0x00, 4);
			if ((id & 0xffff) == 0xffff) {
				if (fn == 0)
					break;
				continue;
			}
			uint32_t type = cfg_rd(h, seg, bdf, 0x0e, 1);
			if ((id & 0xffff) == REG(VENDOR_ID) && id >> 16 == REG(DEVICE_ID)) {
				d->seg = seg;
				d->bdf = bdf;
				return 1;
			}
			if ((type & 0x7f) == 1 && depth < 16) {
				int sec = (int)cfg_rd(h, seg, bdf, 0x19, 1);
				if (sec > bus && scan(h, seg, sec, d, depth + 1))
					return 1;
			}
			if (fn == 0 && !(type & 0x80))
				break; /* not multi-function */
		}
	}
	return 0;
}

/* find_onic enumerates every segment of the host and returns its first
 * O-NIC with its BARs sized. */
static inline onic_dev find_onic(onic_host *h)
{
	onic_dev d = {0};
	for (int seg = 0; seg < onic_host_segments(h); seg++) {
		if (scan(h, seg, 0, &d, 0)) {
			size_bars(h, &d);
			return d;
		}
	}
	die(h, "no O-NIC (%04x:%04x) on any bus", REG(VENDOR_ID), REG(DEVICE_ID));
	return d;
}

/* find_cap returns the offset of d's capability id in its standard
 * capability list (from the Capabilities Pointer at 0x34), 0 if absent. */
static inline int find_cap(onic_host *h, const onic_dev *d, int id)
{
	int off = (int)cfg_rd(h, d->seg, d->bdf, 0x34, 1) & 0xfc;
	for (int n = 0; off >= 0x40 && n < 48; n++) {
		if ((int)cfg_rd(h, d->seg, d->bdf, off, 1) == id)
			return off;
		off = (int)cfg_rd(h, d->seg, d->bdf, off + 1, 1) & 0xfc;
	}
	return 0;
}

/* msix_control sets the MSI-X Enable and Function Mask bits of d's MSI-X
 * capability (ID 0x11; Message Control at +2, bits 15 and 14). */
static inline void msix_control(onic_host *h, const onic_dev *d, int enable, int mask)
{
	int cap = find_cap(h, d, 0x11);
	check(h, cap != 0, "the O-NIC has no MSI-X capability");
	uint32_t mc = cfg_rd(h, d->seg, d->bdf, cap + 2, 2) & ~0xc000u;
	cfg_wr(h, d->seg, d->bdf, cap + 2, 2, mc | (enable ? 0x8000u : 0) | (mask ? 0x4000u : 0));
}

/* lut_entry_bytes reads the size of a LUT entry from the O-NIC's
 * description capability (a vendor-specific extended capability, ID
 * 0x000B, VSEC ID 1; body layout in docs/pcie.md), found by walking the
 * extended capability list from 0x100. */
static inline uint64_t lut_entry_bytes(onic_host *h, const onic_dev *d)
{
	for (int off = 0x100, n = 0; off >= 0x100 && n < 64; n++) {
		uint32_t hdr = cfg_rd(h, d->seg, d->bdf, off, 4);
		if ((hdr & 0xffff) == 0x000b && (cfg_rd(h, d->seg, d->bdf, off + 4, 4) & 0xffff) == 1)
			return (uint64_t)cfg_rd(h, d->seg, d->bdf, off + 8 + 8, 2) << 10;
		off = (int)(hdr >> 20);
	}
	die(h, "the O-NIC has no description capability (VSEC 1)");
	return 0;
}

static inline uint32_t rd32(onic_host *h, uint64_t addr)
{
	uint32_t v;
	int st;
	check(h, onic_read32(h, addr, &v, &st) == 0, "read %#llx", (unsigned long long)addr);
	check(h, st == ONIC_STATUS_SC, "read %#llx: completion status %d", (unsigned long long)addr, st);
	return v;
}

static inline void wr32(onic_host *h, uint64_t addr, uint32_t v)
{
	check(h, onic_write32(h, addr, v) == 0, "write %#llx", (unsigned long long)addr);
}

/* lut_map points LUT entry i at translated address addr through egress
 * (REG(EGRESS_*)), through the register map's LUT programming registers. */
static inline void lut_map(onic_host *h, uint64_t bar0, unsigned i, uint64_t addr, unsigned egress)
{
	wr32(h, bar0 + REG(LUT_INDEX), i);
	wr32(h, bar0 + REG(LUT_ADDR_LO), (uint32_t)addr);
	wr32(h, bar0 + REG(LUT_ADDR_HI), (uint32_t)(addr >> 32));
	wr32(h, bar0 + REG(LUT_CTRL), REG(LUT_CTRL_ENABLED) | egress << REG(LUT_CTRL_EGRESS_SHIFT));
	wr32(h, bar0 + REG(LUT_COMMIT), 1);
}

/* xread reads n bytes from a pipe between the example's processes (the
 * addresses one host hands the other, as NTB drivers use scratchpads). */
static inline void xread(int fd, void *p, size_t n)
{
	if (read(fd, p, n) != (ssize_t)n)
		die(NULL, "handover pipe closed");
}

/* msix_vector0 programs vector 0 of the MSI-X table in BAR0 (bar0) with
 * message addr/data, unmasked, then sets the MSI-X capability's enable
 * bit, found by walking d's capability list. */
static inline void msix_vector0(onic_host *h, const onic_dev *d, uint64_t bar0, uint64_t addr, uint32_t data)
{
	uint64_t vec = bar0 + REG(MSIX_TABLE);
	wr32(h, vec + 0, (uint32_t)addr);
	wr32(h, vec + 4, (uint32_t)(addr >> 32));
	wr32(h, vec + 8, data);
	wr32(h, vec + 12, 0);
	for (int off = cfg_rd(h, d->seg, d->bdf, 0x34, 1); off; off = cfg_rd(h, d->seg, d->bdf, off + 1, 1)) {
		if (cfg_rd(h, d->seg, d->bdf, off, 1) == 0x11) {
			cfg_wr(h, d->seg, d->bdf, off + 2, 2, cfg_rd(h, d->seg, d->bdf, off + 2, 2) | 0x8000);
			return;
		}
	}
	die(h, "the O-NIC has no MSI-X capability");
}

#ifdef ONIC_PCIE_MANAGER_ACL_COMMIT
/* acl_rule writes access rule slot i of the O-NIC whose registers are at
 * bar0: requesters of domain (REG(DOMAIN_*)) get rights (REG(ACL_CTRL_READ)
 * and/or REG(ACL_CTRL_WRITE)) on the pages holding [addr, addr+len); rights
 * 0 revokes the slot. */
static inline void acl_rule(onic_host *h, uint64_t bar0, unsigned i, unsigned domain, uint64_t addr, uint64_t len,
			    uint32_t rights)
{
	uint64_t page = REG(ACL_PAGE), base = addr & ~(page - 1);
	wr32(h, bar0 + REG(ACL_INDEX), i);
	wr32(h, bar0 + REG(ACL_BASE_LO), (uint32_t)base);
	wr32(h, bar0 + REG(ACL_BASE_HI), (uint32_t)(base >> 32));
	wr32(h, bar0 + REG(ACL_PAGES), (uint32_t)((addr + len - base + page - 1) / page));
	wr32(h, bar0 + REG(ACL_CTRL), (rights ? REG(ACL_CTRL_ENABLED) | rights : 0) | domain << REG(ACL_CTRL_DOMAIN_SHIFT));
	wr32(h, bar0 + REG(ACL_COMMIT), 1);
}
#endif

/* msix_vector writes vector v's MSI-X table entry in the register BAR
 * (bar0): its message address and data, and its Vector Control Mask Bit. */
static inline void msix_vector(onic_host *h, uint64_t bar0, unsigned v, uint64_t addr, uint32_t data, int masked)
{
	uint64_t e = bar0 + REG(MSIX_TABLE) + 16u * v;
	wr32(h, e, (uint32_t)addr);
	wr32(h, e + 4, (uint32_t)(addr >> 32));
	wr32(h, e + 8, data);
	wr32(h, e + 12, masked ? 1u : 0u);
}

/* msix_pending is vector v's Pending Bit in the PBA (bar0). */
static inline int msix_pending(onic_host *h, uint64_t bar0, unsigned v)
{
	return (int)(rd32(h, bar0 + REG(MSIX_PBA) + 4u * (v / 32)) >> (v % 32) & 1u);
}

#endif
