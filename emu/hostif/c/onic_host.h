/*
 * onic_host.h — C client of onic's external host interface.
 *
 * A program links onic_host.c (and -lmsgpackc) and plays the software of
 * one host of a cluster that `onic emu serve` emulates: configuration
 * reads and writes through the host's enumerated hierarchy, MMIO reads and
 * writes that travel as TLPs through the emulated O-NICs, a DMA memory
 * shared with the emulator, MSI/MSI-X interrupts, and simulated time.
 * docs/hostif.md describes the protocol this speaks; the calls mirror the
 * Go client (onic/emu/hostif).
 *
 * Every call returns 0 on success and -1 on failure; onic_host_error()
 * then says why in one line (the server's message, or the system's). A
 * handle is for one thread at a time; a program that plays two hosts
 * opens two handles and, in lock-step mode, drives each from its own
 * thread or process.
 */
#ifndef ONIC_HOST_H
#define ONIC_HOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ONIC_HOST_PROTOCOL is the protocol version hello carries. */
#define ONIC_HOST_PROTOCOL 1

/* Completion statuses of cfg and MMIO reads (PCIe completion status). */
enum {
	ONIC_STATUS_SC = 0,  /* successful */
	ONIC_STATUS_UR = 1,  /* unsupported request: the data is all-ones */
	ONIC_STATUS_CRS = 2, /* configuration request retry */
	ONIC_STATUS_CA = 4,  /* completer abort: the data is all-ones */
	ONIC_STATUS_TIMEOUT = 8 /* no completion within the host's completion timeout (PCIe §2.8): all-ones */
};

/* onic_host is one connection; it plays one host. */
typedef struct onic_host onic_host;

/* onic_host_opts say which host to play and what DMA memory to share. */
typedef struct {
	const char *host;   /* the host's name in the topology, e.g. "A" */
	size_t mem_bytes;   /* DMA memory to share (0: none) */
	uint64_t mem_base;  /* its physical address */
	const char *mem_dir; /* where the shared file goes (NULL: /dev/shm, else /tmp) */
} onic_host_opts;

/* onic_irq is an MSI or MSI-X message the host received. */
typedef struct {
	uint64_t at_ns; /* simulated time it arrived */
	uint64_t addr;  /* message address */
	uint32_t data;  /* message data */
} onic_irq;

/* onic_bdf packs bus, device and function as the protocol's bdf. */
static inline uint16_t onic_bdf(unsigned bus, unsigned dev, unsigned fn)
{
	return (uint16_t)((bus & 0xff) << 8 | (dev & 0x1f) << 3 | (fn & 7));
}

/*
 * onic_host_open connects to the server at socket and says hello. On
 * failure *h is still set (unless allocation failed, then it is NULL) so
 * onic_host_error can say why; free it with onic_host_close.
 */
int onic_host_open(onic_host **h, const char *socket, const onic_host_opts *o);

/* onic_host_close says bye (if connected), unmaps and removes the shared
 * memory and frees h. It returns -1 if bye was not answered. */
int onic_host_close(onic_host *h);

/* onic_host_error is the last failure's one-line message ("" if none). */
const char *onic_host_error(const onic_host *h);

/* onic_host_mem is the shared DMA memory (NULL if none): what devices
 * write appears here; what the program writes here devices read. */
void *onic_host_mem(onic_host *h);

/* onic_host_mem_base is the physical address of onic_host_mem(h)[0]. */
uint64_t onic_host_mem_base(const onic_host *h);

/* onic_host_mode is "lockstep" or "free", as the server said at hello;
 * onic_host_segments the PCI segments the host has. */
const char *onic_host_mode(const onic_host *h);
int onic_host_segments(const onic_host *h);

/* Configuration space: size is 1, 2 or 4 bytes at register reg of
 * function bdf in segment seg. An absent function reads all-ones with
 * status UR. status may be NULL. */
int onic_cfg_read(onic_host *h, int seg, uint16_t bdf, int reg, int size, uint32_t *value, int *status);
int onic_cfg_write(onic_host *h, int seg, uint16_t bdf, int reg, int size, uint32_t value, int *status);

/* MMIO: len is 1 to 4096 bytes within one 4 KiB page. A read waits for
 * its completions; buf is all-ones unless *status is ONIC_STATUS_SC.
 * latency_ns (may be NULL) is the read's simulated round trip. A write is
 * posted: it returns once the write is on its way. */
int onic_mmio_read(onic_host *h, uint64_t addr, void *buf, uint32_t len, int *status, uint64_t *latency_ns);
int onic_mmio_write(onic_host *h, uint64_t addr, const void *buf, uint32_t len);

/* 32-bit register accessors: a read that completes with an error status
 * gives all-ones in *value (and 0: the access itself worked); status may
 * be NULL. */
int onic_read32(onic_host *h, uint64_t addr, uint32_t *value, int *status);
int onic_write32(onic_host *h, uint64_t addr, uint32_t value);

/* onic_advance lets ns of simulated time pass; now_ns (may be NULL) is
 * the time reached. */
int onic_advance(onic_host *h, uint64_t ns, uint64_t *now_ns);

/* onic_wait_irq waits up to timeout_ns of simulated time (0: the
 * server's longest, one second) for interrupts. Up to max of them go to
 * irqs and *n says how many (0: it timed out); more than max are lost and
 * counted in *lost with those the server's queue dropped. lost may be
 * NULL. */
int onic_wait_irq(onic_host *h, uint64_t timeout_ns, onic_irq *irqs, size_t max, size_t *n, uint64_t *lost);

/* onic_now reads simulated time in nanoseconds. */
int onic_now(onic_host *h, uint64_t *now_ns);

/* onic_load hands the firmware image file at path (one `onic fw build`
 * wrote; a path the server can read) to the loader of the host's O-NIC
 * onic (NULL: the host's first). The server must have a trust store
 * (onic emu serve --trust). The reply comes when the loader has decided
 * and, if it took the image, the reflash is over in simulated time: *slot
 * is the kernel slot it went to (-1: a full image) and *reflash_ns how
 * long the O-NIC or slot was out. A refused image is an error naming the
 * rule. slot and reflash_ns may be NULL. */
int onic_load(onic_host *h, const char *onic, const char *path, int *slot, uint64_t *reflash_ns);

#ifdef __cplusplus
}
#endif

#endif /* ONIC_HOST_H */
