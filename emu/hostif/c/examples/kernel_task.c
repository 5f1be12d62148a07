/*
 * kernel_task — host A's software deploys firmware through its O-NIC's
 * loader, launches an in-network kernel task through the task shell, and
 * reads the task's profiling counters.
 *
 *   1. load the O-NIC image (operator-signed; a full reflash) and then a
 *      tenant's kernel image into slot 1 (a partial reflash);
 *   2. enable MSI-X in the function's capability, with slot 1's vector
 *      (TASK_VECTOR(1)) in the table but masked; through slot 1's task
 *      shell (BAR0 + TASK_PAGE(1)): read the kernel's identity, enable it
 *      with interrupts, set where the completion record goes, the task's
 *      length (ARG0), and ring the doorbell with a tag;
 *   3. write the task's data into the direct window that feeds slot 1;
 *   4. find the completion record in host memory with no interrupt: the
 *      vector is masked, so its Pending Bit is set (PCIe Base §6.1.4.5);
 *      unmask it and the MSI-X message comes, the bit clear; read the
 *      profiling counters, which must agree with the record.
 *
 * Usage: kernel_task SOCKET IMAGE KERNEL-IMAGE
 */
#include "example.h"

#define MEM_BASE 0x80000000ull /* A's DMA memory */
#define RECORD_OFF 0x1000u     /* the completion record in it */
#define MSI_ADDR 0xfee02000ull
#define MSI_DATA 0x51u
#define SLOT 1
#define TASK_WINDOW 0x40000000ull /* BAR2 offset of the window onto slot 1 (kernel_task.yaml) */
#define TASK_BYTES 4096u
#define TAG 0x77u

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int main(int argc, char **argv)
{
	example_name = "kernel_task";
	if (argc != 4)
		die(NULL, "usage: kernel_task SOCKET IMAGE KERNEL-IMAGE");
	onic_host *h;
	onic_host_opts o = {.host = "A", .mem_bytes = 1 << 20, .mem_base = MEM_BASE};
	if (onic_host_open(&h, argv[1], &o) < 0)
		die(h, "open %s", argv[1]);
	onic_dev d = find_onic(h);
	uint64_t bar0 = d.bar[REG(REG_BAR)], win = d.bar[REG(WINDOW_BAR)];

	/* 1. Firmware through the loader. */
	int slot;
	uint64_t ns, t0, t1;
	check(h, onic_now(h, &t0) == 0, "time");
	check(h, onic_load(h, NULL, argv[2], &slot, &ns) == 0, "load %s", argv[2]);
	check(h, slot == -1, "the O-NIC image went to slot %d", slot);
	printf("loaded the O-NIC image: full reflash, %llu ns\n", (unsigned long long)ns);
	check(h, rd32(h, bar0 + REG(ID)) == REG(ID_VALUE), "no register block after the full reflash");
	check(h, onic_load(h, NULL, argv[3], &slot, &ns) == 0, "load %s", argv[3]);
	check(h, slot == SLOT, "the kernel image went to slot %d, want %d", slot, SLOT);
	check(h, onic_now(h, &t1) == 0, "time");
	printf("loaded the kernel image into slot %d: partial reflash, %llu ns\n", slot, (unsigned long long)ns);

	/* 2. The task shell. */
	uint64_t page = bar0 + REG(TASK_PAGE(SLOT));
	uint32_t id = rd32(h, page + REG(TASK_KERNEL_ID)), info = rd32(h, page + REG(TASK_INFO));
	check(h, id != 0 && (info & 0xf) == 1, "slot %d: kernel id %#x, info %#x: no one-input kernel", SLOT, id, info);
	printf("slot %d: kernel id %#010x, %u input, %u-byte beats, latency %u cycles\n", SLOT, id, info & 0xf, info >> 8 & 0xff,
	       info >> 24);
	unsigned char *mem = onic_host_mem(h);
	memset(mem + RECORD_OFF, 0, REG(TASK_RECORD_BYTES));
	unsigned vec = REG(TASK_VECTOR(SLOT));
	msix_vector(h, bar0, vec, MSI_ADDR, MSI_DATA, 1);
	msix_control(h, &d, 1, 0);
	wr32(h, page + REG(TASK_CTRL), 3); /* enabled, interrupt on completion */
	wr32(h, page + REG(TASK_CPL_LO), (uint32_t)(MEM_BASE + RECORD_OFF));
	wr32(h, page + REG(TASK_CPL_HI), (uint32_t)((MEM_BASE + RECORD_OFF) >> 32));
	wr32(h, page + REG(TASK_ARG0), TASK_BYTES);
	wr32(h, page + REG(TASK_DOORBELL), TAG);
	uint32_t st = rd32(h, page + REG(TASK_STATUS));
	check(h, (st & 1) && st >> 16 == TAG, "after the doorbell STATUS is %#x: want busy with tag %#x", st, TAG);

	/* 3. The task's data: int32 elements for the kernel (scale-int32). */
	unsigned char data[TASK_BYTES];
	for (unsigned i = 0; i < TASK_BYTES; i++)
		data[i] = (unsigned char)(i * 13 + 5);
	check(h, onic_mmio_write(h, win + TASK_WINDOW, data, TASK_BYTES) == 0, "write the task's data");

	/* 4. Completion: the record, the vector pending while masked, then
	 * the message once unmasked. */
	onic_irq irq[2];
	size_t n;
	const unsigned char *rec = mem + RECORD_OFF;
	for (int i = 0; i < 100 && !(le32(rec) & REG(TASK_DONE)); i++)
		check(h, onic_advance(h, 10000, NULL) == 0, "advance");
	check(h, le32(rec) & REG(TASK_DONE), "no completion record after 1 ms");
	check(h, onic_wait_irq(h, 20000, irq, 2, &n, NULL) == 0 && n == 0, "%zu interrupts while the vector is masked", n);
	check(h, msix_pending(h, bar0, vec), "vector %u is not pending while masked", vec);
	printf("record written; vector %u pending while masked\n", vec);
	wr32(h, bar0 + REG(MSIX_TABLE) + 16u * vec + 12u, 0); /* unmask */
	check(h, onic_wait_irq(h, 1000000, irq, 2, &n, NULL) == 0, "wait_irq");
	check(h, n == 1 && irq[0].addr == MSI_ADDR && irq[0].data == MSI_DATA, "%zu interrupts (want the task's MSI-X %#llx/%#x)", n,
	      MSI_ADDR, MSI_DATA);
	check(h, !msix_pending(h, bar0, vec), "vector %u still pending after its message", vec);
	uint32_t w0 = le32(rec), in = le32(rec + 4), out = le32(rec + 8), pkts = le32(rec + 12), cyc = le32(rec + 16),
		 count = le32(rec + 28);
	check(h, w0 == (REG(TASK_DONE) | TAG), "completion record word 0 is %#x, want done with tag %#x", w0, TAG);
	check(h, in == TASK_BYTES && pkts > 0 && cyc > 0 && count == 1, "completion record: %u bytes in, %u packets, %u cycles, count %u", in,
	      pkts, cyc, count);
	printf("task %#x done at %llu ns: record says %u bytes in, %u out, %u packets, %u cycles, task %u\n", TAG,
	       (unsigned long long)irq[0].at_ns, in, out, pkts, cyc, count);
	struct {
		const char *name;
		uint32_t off, want;
	} prof[] = {{"BYTES_IN", REG(TASK_BYTES_IN), in}, {"BYTES_OUT", REG(TASK_BYTES_OUT), out}, {"PACKETS", REG(TASK_PACKETS), pkts},
		    {"CYCLES", REG(TASK_CYCLES), cyc},       {"COUNT", REG(TASK_COUNT), count}};
	for (size_t i = 0; i < sizeof prof / sizeof prof[0]; i++) {
		uint32_t v = rd32(h, page + prof[i].off);
		check(h, v == prof[i].want, "profiling counter %s reads %u, the record says %u", prof[i].name, v, prof[i].want);
		printf("profiling: %-9s %u\n", prof[i].name, v);
	}
	st = rd32(h, page + REG(TASK_STATUS));
	check(h, st == (2u | TAG << 16), "STATUS after the task is %#x: want done, tag %#x", st, TAG);
	printf("loads took %llu ns of simulated time\n", (unsigned long long)(t1 - t0));
	if (onic_host_close(h) < 0)
		die(NULL, "bye");
	printf("kernel_task: PASS\n");
	return 0;
}
