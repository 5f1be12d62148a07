/*
 * denied — the negative example: a tenant's program on host A touches
 * memory outside its windows and sees the O-NIC refuse, as it would on
 * hardware, while the emulator goes on serving.
 *
 *   1. a read through a LUT entry nobody enabled: Unsupported Request,
 *      all-ones, COUNT_MAPPING_DISABLED + 1;
 *   2. a LUT entry the tenant points outside its domain's ranges: the read
 *      is denied by the security check (UR, all-ones, COUNT_DENIED + 1) and
 *      the write is dropped (COUNT_DENIED + 1, no completion: posted);
 *   3. a read of an address no device decodes: the root complex's master
 *      abort (UR, all-ones), nothing reaches the O-NIC;
 *   4. and then a permitted read through the direct window still passes
 *      the O-NIC (COUNT_OK + 1 for it); it completes with data if host B has a
 *      client, and with UR from B's root complex if not (no memory there).
 *
 * Usage: denied SOCKET
 */
#include "example.h"

static void expect_ur(onic_host *h, uint64_t addr, uint32_t len, const char *what)
{
	unsigned char buf[64];
	int st;
	check(h, onic_mmio_read(h, addr, buf, len, &st, NULL) == 0, "%s: read %#llx", what, (unsigned long long)addr);
	check(h, st == ONIC_STATUS_UR, "%s: read %#llx completed with status %d, want UR", what, (unsigned long long)addr, st);
	for (uint32_t i = 0; i < len; i++)
		check(h, buf[i] == 0xff, "%s: byte %u of the denied read is %#x, want all-ones", what, i, buf[i]);
	printf("%s: read %#llx -> UR, %u bytes of all-ones\n", what, (unsigned long long)addr, len);
}

int main(int argc, char **argv)
{
	example_name = "denied";
	if (argc != 2)
		die(NULL, "usage: denied SOCKET");
	onic_host *h;
	onic_host_opts o = {.host = "A"};
	if (onic_host_open(&h, argv[1], &o) < 0)
		die(h, "open %s", argv[1]);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)], lut = d.bar[REG(LUT_BAR)], win = d.bar[REG(WINDOW_BAR)];
	check(h, rd32(h, bar0 + REG(ID)) == REG(ID_VALUE), "BAR0 at %#llx is not the O-NIC's register block", (unsigned long long)bar0);
	uint32_t caps = rd32(h, bar0 + REG(CAPS));
	unsigned entries = caps >> 8 & 0x3ff;
	check(h, entries >= 2, "CAPS %#x: want at least 2 LUT entries", caps);
	uint64_t entry = lut_entry_bytes(h, &d);
	printf("O-NIC at %04x:%02x:%02x.%x: registers %#llx, windows %#llx, LUT %#llx (%u entries of %llu KiB)\n", d.seg,
	       d.bdf >> 8, d.bdf >> 3 & 31, d.bdf & 7, (unsigned long long)bar0, (unsigned long long)win, (unsigned long long)lut,
	       entries, (unsigned long long)(entry >> 10));

	uint32_t disabled0 = rd32(h, bar0 + REG(COUNT_MAPPING_DISABLED));
	uint32_t denied0 = rd32(h, bar0 + REG(COUNT_DENIED));

	/* 1. An entry nobody enabled. */
	expect_ur(h, lut + 0x40, 16, "LUT entry 0 (disabled)");
	check(h, rd32(h, bar0 + REG(COUNT_MAPPING_DISABLED)) == disabled0 + 1, "COUNT_MAPPING_DISABLED did not count the read");

	/* 2. An entry pointed outside the domain's ranges (its window to the
	 * peer is 4 GiB to 5 GiB; this is 8 GiB). */
	lut_map(h, bar0, 1, 0x200000000ull, REG(EGRESS_PORT_A));
	expect_ur(h, lut + entry + 0x100, 8, "LUT entry 1 (outside the tenant's ranges)");
	check(h, rd32(h, bar0 + REG(COUNT_DENIED)) == denied0 + 1, "COUNT_DENIED did not count the read");
	static const unsigned char secret[8] = "tenant!";
	check(h, onic_mmio_write(h, lut + entry + 0x100, secret, sizeof secret) == 0, "write through LUT entry 1");
	check(h, onic_advance(h, 1000, NULL) == 0, "advance");
	check(h, rd32(h, bar0 + REG(COUNT_DENIED)) == denied0 + 2, "COUNT_DENIED did not count the dropped write");
	printf("LUT entry 1 (outside the tenant's ranges): write dropped, COUNT_DENIED %u -> %u\n", denied0, denied0 + 2);

	/* 3. Nothing decodes this address: the root complex aborts. */
	expect_ur(h, 0x7f0000000000ull, 4, "unclaimed address");

	/* 4. The O-NIC still passes permitted accesses. */
	unsigned char buf[16];
	int st;
	uint32_t ok0 = rd32(h, bar0 + REG(COUNT_OK));
	check(h, onic_mmio_read(h, win + 0x1000, buf, sizeof buf, &st, NULL) == 0 && (st == ONIC_STATUS_SC || st == ONIC_STATUS_UR),
	      "a permitted read through the direct window after the denials: status %d", st);
	uint32_t ok = rd32(h, bar0 + REG(COUNT_OK));
	/* (ok0 + 2: the read through the window, and this read of COUNT_OK,
	 * counted as it passes the manager, before the register block reads
	 * it. COUNT_OK counts the host's TLPs only, as the card's manager
	 * does: the completion coming back from the port is the port
	 * pipeline's to count.) */
	check(h, ok == ok0 + 2, "COUNT_OK %u -> %u: the permitted read did not pass the O-NIC", ok0, ok);
	printf("after the denials: permitted read through the window passes the O-NIC (%s from the far host), COUNT_OK %u\n",
	       st == ONIC_STATUS_SC ? "data" : "UR: no client there", ok);
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	printf("denied: PASS\n");
	return 0;
}
