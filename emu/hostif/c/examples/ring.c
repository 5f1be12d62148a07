/*
 * ring — a bulk transfer over a ring of buffers in host A's memory: host
 * B's producer writes 16 MiB (or the MiB given) through its O-NIC's LUT
 * entries, across optical port A, into A's ring slots, publishes how far
 * it got in A's memory and raises an MSI-X interrupt; A's consumer checks
 * every byte and hands the slots back in its own memory, which B reads
 * across the fabric when the ring is full. This is the shape of an
 * NTB-style transport (Linux's ntb_transport keeps its rings the same
 * way, on the receiver's side).
 *
 * A enumerates, maps its BARs, programs MSI-X vector 0 and three access
 * rules for the peer's domain: write its ring, read and write its control
 * page (B's producer index, A's consumer index), and write its interrupt
 * page. It hands the addresses to B through a pipe (as NTB drivers use
 * scratchpads). B maps LUT entries onto A's pages, out of port A, and
 * then loops: while the ring has room it writes slots of 4 KiB (posted
 * writes, in order with what follows on the same path, PCIe Base §2.4.1),
 * then the producer index and the interrupt message every BATCH slots;
 * when the ring is full it reads A's consumer index across the fabric.
 * A waits for interrupts and checks each slot as it lands.
 *
 * It prints the simulated time the transfer took and the rate, so the
 * same program measures the emulator's model and the RTL cards (onic emu
 * serve --rtl) alike.
 *
 * Lock-step: simulated time passes only while every connected client
 * waits, so A, connected first, waits for B's go through a pipe before it
 * waits for interrupts (its timeout would otherwise run out before B is
 * there); after that A waits in the emulator whenever it has nothing to
 * check, so B's reads across the fabric are answered.
 *
 * Usage: ring SOCKET [MIB]
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>

#include "example.h"

#define BUF_BASE 0x100000000ull /* A's DMA memory: 4 GiB */
#define RING_OFF 0x20000u       /* the ring within it: past the peer's mailbox */
#define SLOT 4096u              /* bytes a slot (one onic_mmio_write) */
#define SLOTS 32u               /* slots in the ring: 128 KiB */
#define BATCH 8u                /* slots between producer updates and interrupts */
#define CTL_OFF (RING_OFF + SLOTS * SLOT) /* control page: producer index, consumer index */
#define PROD 0u
#define CONS 64u
#define MSI_ADDR 0xfee01000ull /* vector 0's message: local APIC 1 */
#define MSI_DATA 0x4041u

/* handover is what A tells B before B starts. */
typedef struct {
	uint64_t ring, ctl, msi_addr;
	uint32_t msi_data;
} handover;

/* fill writes the stream's bytes [off, off+n) into p: each 8-byte word
 * holds its own offset, mixed, so a slot landing in the wrong place or a
 * stale one is caught. */
static void fill(unsigned char *p, uint64_t off, unsigned n)
{
	for (unsigned i = 0; i < n; i += 8) {
		uint64_t v = (off + i) * 0x9e3779b97f4a7c15ull;
		memcpy(p + i, &v, 8);
	}
}

static int producer(const char *sock, int from_a, int to_a, uint64_t total)
{
	example_name = "ring (B)";
	handover ho;
	xread(from_a, &ho, sizeof ho);
	onic_host *h;
	onic_host_opts o = {.host = "B"};
	if (onic_host_open(&h, sock, &o) < 0)
		die(h, "open %s", sock);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)], lut = d.bar[REG(LUT_BAR)];
	uint64_t entry = lut_entry_bytes(h, &d);
	/* LUT entries 0.. onto the pages holding the ring and the control
	 * page, then one onto the interrupt page: all out of port A. */
	uint64_t first = ho.ring & ~(entry - 1);
	unsigned n = (unsigned)((ho.ctl + 4096 - first + entry - 1) / entry);
	for (unsigned i = 0; i < n; i++)
		lut_map(h, bar0, i, first + i * entry, REG(EGRESS_PORT_A));
	uint64_t msipage = ho.msi_addr & ~(entry - 1);
	lut_map(h, bar0, n, msipage, REG(EGRESS_PORT_A));
	uint64_t at = lut - first; /* + an address in A's ring or control page */
	uint64_t msi = lut + n * entry + (ho.msi_addr - msipage);
	unsigned char msg[4] = {ho.msi_data, ho.msi_data >> 8, ho.msi_data >> 16, ho.msi_data >> 24};

	char go = 1;
	if (write(to_a, &go, 1) != 1)
		die(h, "handover pipe");

	unsigned char slot[SLOT];
	uint64_t slots = total / SLOT, prod = 0, cons = 0, reads = 0;
	while (prod < slots) {
		while (prod - cons == SLOTS) { /* full: how far has A got? */
			cons = rd32(h, at + ho.ctl + CONS);
			reads++;
		}
		fill(slot, prod * SLOT, SLOT);
		check(h, onic_mmio_write(h, at + ho.ring + (prod % SLOTS) * SLOT, slot, SLOT) == 0, "write slot %llu",
		      (unsigned long long)prod);
		prod++;
		if (prod % BATCH == 0 || prod == slots) {
			wr32(h, at + ho.ctl + PROD, (uint32_t)prod);
			check(h, onic_mmio_write(h, msi, msg, 4) == 0, "write the interrupt message");
		}
	}
	printf("B: wrote %llu slots of %u bytes; read A's consumer index %llu times\n", (unsigned long long)slots, SLOT,
	       (unsigned long long)reads);
	fflush(stdout);
	uint32_t denied = rd32(h, bar0 + REG(COUNT_DENIED));
	check(h, denied == 0, "B's O-NIC denied %u TLPs", denied);
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	return 0;
}

int main(int argc, char **argv)
{
	example_name = "ring (A)";
	if (argc != 2 && argc != 3)
		die(NULL, "usage: ring SOCKET [MIB]");
	uint64_t mib = 16;
	if (argc == 3) {
		char *end;
		mib = strtoull(argv[2], &end, 10);
		if (*end || mib < 1 || mib > 1024)
			die(NULL, "MIB %s: want 1 to 1024", argv[2]);
	}
	uint64_t total = mib << 20;
	int a2b[2], b2a[2];
	if (pipe(a2b) < 0 || pipe(b2a) < 0)
		die(NULL, "pipe");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die(NULL, "fork");
	if (pid == 0) {
		close(a2b[1]);
		close(b2a[0]);
		return producer(argv[1], a2b[0], b2a[1], total);
	}
	close(a2b[0]);
	close(b2a[1]);

	onic_host *h;
	onic_host_opts o = {.host = "A", .mem_bytes = 1 << 20, .mem_base = BUF_BASE};
	if (onic_host_open(&h, argv[1], &o) < 0)
		die(h, "open %s", argv[1]);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)];
	unsigned char *mem = onic_host_mem(h);
	volatile uint32_t *prodp = (volatile uint32_t *)(mem + CTL_OFF + PROD);
	volatile uint32_t *consp = (volatile uint32_t *)(mem + CTL_OFF + CONS);
	memset(mem + RING_OFF, 0, SLOTS * SLOT + 4096);
	uint32_t denied0 = rd32(h, bar0 + REG(COUNT_DENIED));

	/* MSI-X vector 0, unmasked, and the capability's enable bit. */
	msix_vector0(h, &d, bar0, MSI_ADDR, MSI_DATA);
	/* The peer may write the ring, read and write the control page, and
	 * write the interrupt page. */
	acl_rule(h, bar0, 0, REG(DOMAIN_PEER), BUF_BASE + RING_OFF, SLOTS * SLOT, REG(ACL_CTRL_WRITE));
	acl_rule(h, bar0, 1, REG(DOMAIN_PEER), BUF_BASE + CTL_OFF, 4096, REG(ACL_CTRL_READ) | REG(ACL_CTRL_WRITE));
	acl_rule(h, bar0, 2, REG(DOMAIN_PEER), MSI_ADDR, 4, REG(ACL_CTRL_WRITE));
	handover ho = {.ring = BUF_BASE + RING_OFF, .ctl = BUF_BASE + CTL_OFF, .msi_addr = MSI_ADDR, .msi_data = MSI_DATA};
	if (write(a2b[1], &ho, sizeof ho) != sizeof ho)
		die(h, "handover pipe");
	printf("A: a ring of %u slots of %u bytes at %#llx; %llu MiB to come\n", SLOTS, SLOT,
	       (unsigned long long)ho.ring, (unsigned long long)mib);
	fflush(stdout);
	/* B connects and maps its LUT entries while A waits here, outside the
	 * emulator: simulated time stands still until both wait in it. */
	char go;
	xread(b2a[0], &go, 1);

	uint64_t slots = total / SLOT, cons = 0, irqs = 0, start = 0, end = 0;
	unsigned char want[SLOT];
	onic_irq irq[16];
	while (cons < slots) {
		size_t n;
		uint64_t lost;
		check(h, onic_wait_irq(h, 1000000, irq, 16, &n, &lost) == 0, "wait_irq");
		check(h, n > 0 || *prodp != cons, "no interrupt and no progress in 1 ms at slot %llu", (unsigned long long)cons);
		for (size_t i = 0; i < n; i++)
			check(h, irq[i].addr == MSI_ADDR && irq[i].data == MSI_DATA, "interrupt %#llx/%#x",
			      (unsigned long long)irq[i].addr, irq[i].data);
		if (n > 0 && irqs == 0)
			start = irq[0].at_ns;
		irqs += n;
		uint64_t prod = *prodp;
		check(h, prod <= slots && prod - cons <= SLOTS, "producer index %llu with %llu consumed",
		      (unsigned long long)prod, (unsigned long long)cons);
		for (; cons < prod; cons++) {
			fill(want, cons * SLOT, SLOT);
			unsigned char *got = mem + RING_OFF + (cons % SLOTS) * SLOT;
			if (memcmp(got, want, SLOT) != 0) {
				unsigned i = 0;
				while (got[i] == want[i])
					i++;
				die(h, "slot %llu, byte %u: %#x, want %#x", (unsigned long long)cons, i, got[i], want[i]);
			}
			*consp = (uint32_t)(cons + 1);
		}
		if (n > 0)
			end = irq[n - 1].at_ns;
	}
	/* The rate: from the first interrupt to the last, the slots between
	 * (the first batch's time is before the first interrupt). */
	double secs = (double)(end - start) * 1e-9, bytes = (double)(slots - BATCH) * SLOT;
	printf("A: %llu MiB checked, %llu interrupts; %.1f Gb/s over %.3f ms of simulated time\n",
	       (unsigned long long)mib, (unsigned long long)irqs, secs > 0 ? bytes * 8 / secs * 1e-9 : 0.0, secs * 1e3);
	uint32_t denied = rd32(h, bar0 + REG(COUNT_DENIED)) - denied0;
	check(h, denied == 0, "A's O-NIC denied %u more TLPs", denied);
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die(NULL, "the producer (B) failed");
	printf("ring: PASS\n");
	return 0;
}
