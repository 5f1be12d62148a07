/*
 * onic_host.c — the C client of onic's host interface (see onic_host.h and
 * docs/hostif.md). Messages are MessagePack maps (msgpack-c), each framed
 * by a 4-byte big-endian length, over a Unix stream socket.
 */
#define _GNU_SOURCE
#include "onic_host.h"

#include <errno.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The largest frame either side sends (hostif.MaxFrame). */
#define MAX_FRAME (1u << 20)

struct onic_host {
	int fd;
	uint64_t seq;
	char err[512];
	char mode[16];
	int segments;
	void *mem;
	size_t mem_bytes;
	uint64_t mem_base;
	char mem_path[256];
	char *frame; /* the last reply's bytes */
	size_t frame_cap;
	msgpack_sbuffer sbuf;
	msgpack_packer pk;
	msgpack_unpacked reply;
	int have_reply;
};

static int fail(onic_host *h, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	vsnprintf(h->err, sizeof h->err, f, ap);
	va_end(ap);
	return -1;
}

/* A request is built as: begin(op, n) then n more key/value pairs. */
static void key(onic_host *h, const char *k)
{
	size_t n = strlen(k);
	msgpack_pack_str(&h->pk, n);
	msgpack_pack_str_body(&h->pk, k, n);
}

static void kv_u64(onic_host *h, const char *k, uint64_t v)
{
	key(h, k);
	msgpack_pack_uint64(&h->pk, v);
}

static void kv_str(onic_host *h, const char *k, const char *v)
{
	size_t n = strlen(v);
	key(h, k);
	msgpack_pack_str(&h->pk, n);
	msgpack_pack_str_body(&h->pk, v, n);
}

static void kv_bin(onic_host *h, const char *k, const void *v, size_t n)
{
	key(h, k);
	msgpack_pack_bin(&h->pk, n);
	msgpack_pack_bin_body(&h->pk, v, n);
}

static void begin(onic_host *h, const char *op, int more)
{
	msgpack_sbuffer_clear(&h->sbuf);
	/* room for the length, filled in by call */
	msgpack_sbuffer_write(&h->sbuf, "\0\0\0\0", 4);
	msgpack_pack_map(&h->pk, 2 + more);
	kv_u64(h, "seq", ++h->seq);
	kv_str(h, "op", op);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n > 0) {
		ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *b = p;
	while (n > 0) {
		ssize_t r = read(fd, b, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/* field finds key k in the reply map (NULL: absent, meaning zero). */
static const msgpack_object *field(onic_host *h, const char *k)
{
	const msgpack_object *o = &h->reply.data;
	size_t n = strlen(k);
	for (uint32_t i = 0; i < o->via.map.size; i++) {
		const msgpack_object *key = &o->via.map.ptr[i].key;
		if (key->type == MSGPACK_OBJECT_STR && key->via.str.size == n && memcmp(key->via.str.ptr, k, n) == 0)
			return &o->via.map.ptr[i].val;
	}
	return NULL;
}

static uint64_t u64(const msgpack_object *o)
{
	if (o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		return o->via.u64;
	return 0;
}

static uint64_t field_u64(onic_host *h, const char *k) { return u64(field(h, k)); }

/* call sends the request begun with begin and reads its reply: 0 if the
 * server answered it without err. */
static int call(onic_host *h)
{
	uint32_t n = (uint32_t)h->sbuf.size - 4;
	unsigned char hdr[4] = {n >> 24, n >> 16, n >> 8, n};
	memcpy(h->sbuf.data, hdr, 4);
	if (h->fd < 0)
		return fail(h, "not connected");
	if (write_all(h->fd, h->sbuf.data, h->sbuf.size) < 0)
		return fail(h, "sending a request: %s", errno ? strerror(errno) : "connection closed");
	if (read_all(h->fd, hdr, 4) < 0)
		return fail(h, "reading a reply: %s", errno ? strerror(errno) : "connection closed");
	n = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
	if (n > MAX_FRAME)
		return fail(h, "reply of %u bytes: more than %u", n, MAX_FRAME);
	if (n > h->frame_cap) {
		char *f = realloc(h->frame, n);
		if (!f)
			return fail(h, "reply of %u bytes: out of memory", n);
		h->frame = f;
		h->frame_cap = n;
	}
	if (read_all(h->fd, h->frame, n) < 0)
		return fail(h, "reading a reply: %s", errno ? strerror(errno) : "connection closed");
	size_t off = 0;
	if (h->have_reply)
		msgpack_unpacked_destroy(&h->reply);
	msgpack_unpacked_init(&h->reply);
	h->have_reply = 1;
	if (msgpack_unpack_next(&h->reply, h->frame, n, &off) != MSGPACK_UNPACK_SUCCESS || h->reply.data.type != MSGPACK_OBJECT_MAP)
		return fail(h, "reply is not a MessagePack map");
	const msgpack_object *e = field(h, "err");
	if (e && e->type == MSGPACK_OBJECT_STR && e->via.str.size > 0)
		return fail(h, "server: %.*s", (int)e->via.str.size, e->via.str.ptr);
	if (field_u64(h, "seq") != h->seq)
		return fail(h, "reply %llu to request %llu", (unsigned long long)field_u64(h, "seq"), (unsigned long long)h->seq);
	h->err[0] = 0;
	return 0;
}

static int share(onic_host *h, const onic_host_opts *o)
{
	const char *dir = o->mem_dir;
	struct stat st;
	if (!dir)
		dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(h->mem_path, sizeof h->mem_path, "%s/onic-host-%s-XXXXXX", dir, o->host);
	int fd = mkstemp(h->mem_path);
	if (fd < 0) {
		fail(h, "shared memory %s: %s", h->mem_path, strerror(errno));
		h->mem_path[0] = 0;
		return -1;
	}
	if (ftruncate(fd, (off_t)o->mem_bytes) < 0) {
		close(fd);
		return fail(h, "shared memory %s: %s", h->mem_path, strerror(errno));
	}
	void *m = mmap(NULL, o->mem_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return fail(h, "shared memory %s: %s", h->mem_path, strerror(errno));
	h->mem = m;
	h->mem_bytes = o->mem_bytes;
	h->mem_base = o->mem_base;
	return 0;
}

int onic_host_open(onic_host **hp, const char *socket_path, const onic_host_opts *o)
{
	onic_host *h = calloc(1, sizeof *h);
	*hp = h;
	if (!h)
		return -1;
	h->fd = -1;
	msgpack_sbuffer_init(&h->sbuf);
	msgpack_packer_init(&h->pk, &h->sbuf, msgpack_sbuffer_write);
	if (!o || !o->host || !o->host[0])
		return fail(h, "open: no host named");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(socket_path) >= sizeof sa.sun_path)
		return fail(h, "socket %s: path too long", socket_path);
	strcpy(sa.sun_path, socket_path);
	h->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0 || connect(h->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		fail(h, "socket %s: %s", socket_path, strerror(errno));
		if (h->fd >= 0)
			close(h->fd);
		h->fd = -1;
		return -1;
	}
	if (o->mem_bytes > 0 && share(h, o) < 0)
		return -1;
	begin(h, "hello", h->mem ? 4 : 2);
	kv_u64(h, "version", ONIC_HOST_PROTOCOL);
	kv_str(h, "host", o->host);
	if (h->mem) {
		kv_str(h, "mem_path", h->mem_path);
		kv_u64(h, "mem_base", h->mem_base);
	}
	if (call(h) < 0)
		return -1;
	const msgpack_object *m = field(h, "mode");
	if (m && m->type == MSGPACK_OBJECT_STR)
		snprintf(h->mode, sizeof h->mode, "%.*s", (int)m->via.str.size, m->via.str.ptr);
	h->segments = (int)field_u64(h, "segments");
	return 0;
}

int onic_host_close(onic_host *h)
{
	if (!h)
		return 0;
	int rc = 0;
	if (h->fd >= 0) {
		begin(h, "bye", 0);
		rc = call(h);
		close(h->fd);
	}
	if (h->mem)
		munmap(h->mem, h->mem_bytes);
	if (h->mem_path[0])
		unlink(h->mem_path);
	if (h->have_reply)
		msgpack_unpacked_destroy(&h->reply);
	msgpack_sbuffer_destroy(&h->sbuf);
	free(h->frame);
	free(h);
	return rc;
}

const char *onic_host_error(const onic_host *h) { return h ? h->err : "out of memory"; }
void *onic_host_mem(onic_host *h) { return h->mem; }
uint64_t onic_host_mem_base(const onic_host *h) { return h->mem_base; }
const char *onic_host_mode(const onic_host *h) { return h->mode; }
int onic_host_segments(const onic_host *h) { return h->segments; }

int onic_cfg_read(onic_host *h, int seg, uint16_t bdf, int reg, int size, uint32_t *value, int *status)
{
	begin(h, "cfg_read", 4);
	kv_u64(h, "segment", (uint64_t)seg);
	kv_u64(h, "bdf", bdf);
	kv_u64(h, "reg", (uint64_t)reg);
	kv_u64(h, "size", (uint64_t)size);
	if (call(h) < 0)
		return -1;
	*value = (uint32_t)field_u64(h, "value");
	if (status)
		*status = (int)field_u64(h, "status");
	return 0;
}

int onic_cfg_write(onic_host *h, int seg, uint16_t bdf, int reg, int size, uint32_t value, int *status)
{
	begin(h, "cfg_write", 5);
	kv_u64(h, "segment", (uint64_t)seg);
	kv_u64(h, "bdf", bdf);
	kv_u64(h, "reg", (uint64_t)reg);
	kv_u64(h, "size", (uint64_t)size);
	kv_u64(h, "value", value);
	if (call(h) < 0)
		return -1;
	if (status)
		*status = (int)field_u64(h, "status");
	return 0;
}

int onic_mmio_read(onic_host *h, uint64_t addr, void *buf, uint32_t len, int *status, uint64_t *latency_ns)
{
	begin(h, "mmio_read", 2);
	kv_u64(h, "addr", addr);
	kv_u64(h, "len", len);
	if (call(h) < 0)
		return -1;
	const msgpack_object *d = field(h, "data");
	if (!d || d->type != MSGPACK_OBJECT_BIN || d->via.bin.size != len)
		return fail(h, "mmio_read %#llx: %u bytes asked, %u came", (unsigned long long)addr, len,
			    d && d->type == MSGPACK_OBJECT_BIN ? d->via.bin.size : 0);
	memcpy(buf, d->via.bin.ptr, len);
	if (status)
		*status = (int)field_u64(h, "status");
	if (latency_ns)
		*latency_ns = field_u64(h, "latency_ns");
	return 0;
}

int onic_mmio_write(onic_host *h, uint64_t addr, const void *buf, uint32_t len)
{
	begin(h, "mmio_write", 2);
	kv_u64(h, "addr", addr);
	kv_bin(h, "data", buf, len);
	return call(h);
}

int onic_read32(onic_host *h, uint64_t addr, uint32_t *value, int *status)
{
	unsigned char b[4];
	if (onic_mmio_read(h, addr, b, 4, status, NULL) < 0)
		return -1;
	*value = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 0;
}

int onic_write32(onic_host *h, uint64_t addr, uint32_t v)
{
	unsigned char b[4] = {v, v >> 8, v >> 16, v >> 24};
	return onic_mmio_write(h, addr, b, 4);
}

int onic_advance(onic_host *h, uint64_t ns, uint64_t *now_ns)
{
	begin(h, "advance", 1);
	kv_u64(h, "ns", ns);
	if (call(h) < 0)
		return -1;
	if (now_ns)
		*now_ns = field_u64(h, "now");
	return 0;
}

int onic_wait_irq(onic_host *h, uint64_t timeout_ns, onic_irq *irqs, size_t max, size_t *n, uint64_t *lost)
{
	begin(h, "wait_irq", 1);
	kv_u64(h, "ns", timeout_ns);
	if (call(h) < 0)
		return -1;
	uint64_t dropped = field_u64(h, "lost");
	size_t got = 0;
	const msgpack_object *a = field(h, "irqs");
	if (a && a->type == MSGPACK_OBJECT_ARRAY) {
		for (uint32_t i = 0; i < a->via.array.size; i++) {
			const msgpack_object *m = &a->via.array.ptr[i];
			if (m->type != MSGPACK_OBJECT_MAP)
				return fail(h, "wait_irq: interrupt %u is not a map", i);
			if (got == max) {
				dropped++;
				continue;
			}
			onic_irq q = {0};
			for (uint32_t j = 0; j < m->via.map.size; j++) {
				const msgpack_object *k = &m->via.map.ptr[j].key;
				uint64_t v = u64(&m->via.map.ptr[j].val);
				if (k->type != MSGPACK_OBJECT_STR)
					continue;
				if (k->via.str.size == 2 && !memcmp(k->via.str.ptr, "at", 2))
					q.at_ns = v;
				else if (k->via.str.size == 4 && !memcmp(k->via.str.ptr, "addr", 4))
					q.addr = v;
				else if (k->via.str.size == 4 && !memcmp(k->via.str.ptr, "data", 4))
					q.data = (uint32_t)v;
			}
			irqs[got++] = q;
		}
	}
	*n = got;
	if (lost)
		*lost = dropped;
	return 0;
}

int onic_now(onic_host *h, uint64_t *now_ns)
{
	begin(h, "time", 0);
	if (call(h) < 0)
		return -1;
	*now_ns = field_u64(h, "now");
	return 0;
}

int onic_load(onic_host *h, const char *onic, const char *path, int *slot, uint64_t *reflash_ns)
{
	begin(h, "load", onic ? 2 : 1);
	kv_str(h, "path", path);
	if (onic)
		kv_str(h, "onic", onic);
	if (call(h) < 0)
		return -1;
	if (slot) {
		const msgpack_object *s = field(h, "slot");
		*slot = s && s->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? (int)s->via.i64 : (int)u64(s);
	}
	if (reflash_ns)
		*reflash_ns = field_u64(h, "reflash_ns");
	return 0;
}
