/*
 * peer_dma — a peer's write across optical port A lands in host A's DMA
 * buffer, and an MSI-X interrupt tells A.
 *
 * The program plays both hosts: it forks, the parent is A (the receiver)
 * and the child B (the peer), each with its own connection. A enumerates,
 * finds its O-NIC, sizes and maps its BARs, allocates its DMA buffer (in
 * the shared memory at 4 GiB, past the 64 KiB mailbox the firmware lets
 * the peer use), programs vector 0 of its O-NIC's MSI-X table, and grants
 * the peer's domain write access to the buffer and to its interrupt page
 * through two of its O-NIC's access rule slots (ACL_* registers) — without
 * them its O-NIC would deny B's writes. It hands the buffer's address and
 * the vector's message to B, as NTB drivers publish them through
 * scratchpads. B enumerates its own
 * O-NIC and programs two LUT entries through the register map —
 * translation windows out of port A onto A's buffer and onto A's interrupt
 * page — then writes 4 KiB of data and the interrupt message through
 * them (Linux's ntb_msi triggers peer interrupts the same way). A waits
 * for the interrupt and checks every byte.
 *
 * Lock-step: simulated time passes only while every connected client is
 * waiting, so the two processes hand over with pipes and B connects only
 * once A is set up; the run is the same every time.
 *
 * Usage: peer_dma SOCKET
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>

#include "example.h"

#define BUF_BASE 0x100000000ull /* A's DMA memory: 4 GiB, where B's window leads */
#define BUF_OFF 0x20000u        /* the buffer within it: past the peer's mailbox */
#define BUF_LEN 4096u
#define MSI_ADDR 0xfee01000ull /* vector 0's message: local APIC 1 */
#define MSI_DATA 0x4041u

/* handover is what A tells B before B starts. */
typedef struct {
	uint64_t buf, msi_addr;
	uint32_t msi_data;
} handover;

static unsigned char pattern(unsigned i) { return (unsigned char)(i * 7 + 3); }

static int peer(const char *sock, int from_a, int to_a)
{
	example_name = "peer_dma (B)";
	handover ho;
	xread(from_a, &ho, sizeof ho);
	onic_host *h;
	onic_host_opts o = {.host = "B"};
	if (onic_host_open(&h, sock, &o) < 0)
		die(h, "open %s", sock);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)], lut = d.bar[REG(LUT_BAR)];
	uint64_t entry = lut_entry_bytes(h, &d);
	/* Translation windows: LUT entry 0 onto A's buffer, entry 1 onto A's
	 * interrupt page, both out of port A. */
	uint64_t bufpage = ho.buf & ~(entry - 1), msipage = ho.msi_addr & ~(entry - 1);
	lut_map(h, bar0, 0, bufpage, REG(EGRESS_PORT_A));
	lut_map(h, bar0, 1, msipage, REG(EGRESS_PORT_A));
	unsigned char data[BUF_LEN];
	for (unsigned i = 0; i < BUF_LEN; i++)
		data[i] = pattern(i);
	check(h, onic_mmio_write(h, lut + (ho.buf - bufpage), data, BUF_LEN) == 0, "write the data");
	unsigned char msg[4] = {ho.msi_data, ho.msi_data >> 8, ho.msi_data >> 16, ho.msi_data >> 24};
	check(h, onic_mmio_write(h, lut + entry + (ho.msi_addr - msipage), msg, 4) == 0, "write the interrupt message");
	printf("B: wrote %u bytes and the MSI-X message through LUT entries 0 and 1\n", BUF_LEN);
	fflush(stdout);
	char go = 1;
	if (write(to_a, &go, 1) != 1)
		die(h, "handover pipe");
	uint64_t now;
	check(h, onic_advance(h, 100000, &now) == 0, "advance");
	/* B cannot read a baseline first: an MMIO read waits on simulated
	 * time, which in lock-step passes only once A waits too, and A waits
	 * for B's go. B's O-NIC sees only peer_dma's own traffic here. */
	uint32_t ok = rd32(h, bar0 + REG(COUNT_OK)), denied = rd32(h, bar0 + REG(COUNT_DENIED));
	printf("B: at %llu ns its O-NIC counts %u TLPs ok, %u denied\n", (unsigned long long)now, ok, denied);
	check(h, denied == 0, "B's O-NIC denied %u TLPs", denied);
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	return 0;
}

int main(int argc, char **argv)
{
	example_name = "peer_dma (A)";
	if (argc != 2)
		die(NULL, "usage: peer_dma SOCKET");
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
		return peer(argv[1], a2b[0], b2a[1]);
	}
	close(a2b[0]);
	close(b2a[1]);

	onic_host *h;
	onic_host_opts o = {.host = "A", .mem_bytes = 1 << 20, .mem_base = BUF_BASE};
	if (onic_host_open(&h, argv[1], &o) < 0)
		die(h, "open %s", argv[1]);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)];
	printf("A: O-NIC %04x:%02x:%02x.%x, registers at %#llx\n", d.seg, d.bdf >> 8, d.bdf >> 3 & 31, d.bdf & 7,
	       (unsigned long long)bar0);
	unsigned char *buf = (unsigned char *)onic_host_mem(h) + BUF_OFF;
	memset(buf, 0, BUF_LEN);
	uint32_t denied0 = rd32(h, bar0 + REG(COUNT_DENIED)); /* since the O-NIC started: compare changes */

	/* MSI-X: vector 0's address and data in the table (BAR0), unmasked,
	 * then the capability's enable bit. */
	msix_vector0(h, &d, bar0, MSI_ADDR, MSI_DATA);
	/* Access rules: the peer may write the buffer and the interrupt page. */
	acl_rule(h, bar0, 0, REG(DOMAIN_PEER), BUF_BASE + BUF_OFF, BUF_LEN, REG(ACL_CTRL_WRITE));
	acl_rule(h, bar0, 1, REG(DOMAIN_PEER), MSI_ADDR, 4, REG(ACL_CTRL_WRITE));
	check(h, rd32(h, bar0 + REG(ACL_PAGES)) == 1, "ACL_PAGES reads %u, want 1", rd32(h, bar0 + REG(ACL_PAGES)));
	printf("A: rule slots 0 and 1 let the peer write its buffer at %#llx and its interrupt page\n",
	       (unsigned long long)(BUF_BASE + BUF_OFF));
	handover ho = {.buf = BUF_BASE + BUF_OFF, .msi_addr = MSI_ADDR, .msi_data = MSI_DATA};
	if (write(a2b[1], &ho, sizeof ho) != sizeof ho)
		die(h, "handover pipe");
	char go;
	xread(b2a[0], &go, 1);

	onic_irq irq[4];
	size_t n;
	check(h, onic_wait_irq(h, 1000000, irq, 4, &n, NULL) == 0, "wait_irq");
	check(h, n == 1, "%zu interrupts within 1 ms, want 1", n);
	check(h, irq[0].addr == MSI_ADDR && irq[0].data == MSI_DATA, "interrupt %#llx/%#x, want vector 0's %#llx/%#x",
	      (unsigned long long)irq[0].addr, irq[0].data, MSI_ADDR, MSI_DATA);
	printf("A: MSI-X vector 0 (%#llx, data %#x) at %llu ns\n", (unsigned long long)irq[0].addr, irq[0].data,
	       (unsigned long long)irq[0].at_ns);
	for (unsigned i = 0; i < BUF_LEN; i++)
		check(h, buf[i] == pattern(i), "byte %u of the buffer is %#x, want %#x", i, buf[i], pattern(i));
	printf("A: all %u bytes arrived\n", BUF_LEN);
	uint32_t denied = rd32(h, bar0 + REG(COUNT_DENIED)) - denied0;
	check(h, denied == 0, "A's O-NIC denied %u more TLPs", denied);
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die(NULL, "the peer (B) failed");
	printf("peer_dma: PASS\n");
	return 0;
}
