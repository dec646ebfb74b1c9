/* Tests of switch: table validation and all-or-nothing updates, ARP, IPv4
 * forwarding, INA aggregation (2..100 contributors, exact sums), duplicate
 * and out-of-subtree drops, fallback on a busy slot, partial flush, RETX,
 * DOWN replication, overflow, lost state, counters, seeded garbage that
 * must neither crash nor disturb another tree's aggregation, and loss
 * recovery: early flushes on rank progress, partial aggregates and
 * eviction, repairs on NACKs, probes answered from kept results. */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dp/bytes.h"
#include "dp/pkt.h"
#include "dp/switch.h"
#include "dp/progress.h"
#include "dp/switch_table.h" /* the entry layout: test_entry_memory */
#include "dp/wire.h"

#define NP 5
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define PS_IP IP(10, 0, 9, 1)
#define MAXOUT 128

static const uint8_t peer0[6] = {0x02, 0, 0, 0, 0x99, 0};

static struct inart_frame outv[MAXOUT];
static uint8_t outbuf[MAXOUT][INART_FRAME_MAX];

static void port_mac(int p, uint8_t m[6])
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0x01, 0};

	memcpy(m, base, 6);
	m[5] = (uint8_t)p;
}

static void host_mac(int p, uint8_t m[6])
{
	static const uint8_t base[6] = {0x02, 0, 0, 0, 0x42, 0};

	memcpy(m, base, 6);
	m[5] = (uint8_t)p;
}

static struct inart_switch *mk_switch(int pool_slots, int max_values, uint64_t timeout)
{
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;
	int p;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = NP;
	for (p = 0; p < NP; p++) {
		port_mac(p, cfg.ports[p].mac);
		cfg.ports[p].ip = IP(10, 255, 0, p + 1);
	}
	memcpy(cfg.ports[0].peer_mac, peer0, 6); /* fixed; the others are learned */
	cfg.pool_slots = pool_slots;
	cfg.max_values = max_values;
	cfg.flush_timeout_ns = timeout;
	sw = inart_switch_create(&cfg);
	assert_non_null(sw);
	return sw;
}

static int rx_n(struct inart_switch *sw, const uint8_t *f, size_t len, int port, uint64_t now,
		int max_out)
{
	struct inart_frame in;
	int i;

	in.data = (uint8_t *)f;
	in.len = (uint16_t)len;
	in.port = (uint16_t)port;
	for (i = 0; i < MAXOUT; i++) {
		outv[i].data = outbuf[i];
		outv[i].len = 0;
		outv[i].port = 0xffff;
	}
	return inart_switch_rx(sw, &in, now, outv, max_out);
}

static int rx(struct inart_switch *sw, const uint8_t *f, size_t len, int port, uint64_t now)
{
	return rx_n(sw, f, len, port, now, MAXOUT);
}

static int tick(struct inart_switch *sw, uint64_t now, int max_out)
{
	int i;

	for (i = 0; i < MAXOUT; i++)
		outv[i].data = outbuf[i];
	return inart_switch_tick(sw, now, outv, max_out);
}

static struct inart_wire_hdr data_hdr(uint32_t job, uint16_t tree, uint32_t label, int words,
				      int fan_in)
{
	struct inart_wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.version = INART_WIRE_VERSION;
	h.flags = INART_F_DATA;
	h.bitmap_words = (uint8_t)words;
	h.scale_exp = 8;
	h.job = job;
	h.tree = tree;
	h.fan_in = (uint16_t)fan_in;
	h.label = label;
	h.iter = 1;
	return h;
}

static void set_rank(struct inart_wire_hdr *h, int r)
{
	memset(h->bitmap, 0, sizeof(h->bitmap));
	h->bitmap[r / 64] = 1ull << (r % 64);
}

/* An INA frame from host `hp` (its MAC) with source IP src. */
static size_t ina_frame(uint8_t *f, const struct inart_wire_hdr *h, const int32_t *v, int hp,
			uint32_t src, uint32_t dst)
{
	uint8_t pl[1600], sm[6], dm[6];
	size_t n = inart_wire_encode(h, v, pl, sizeof(pl));

	assert_true(n > 0);
	host_mac(hp, sm);
	port_mac(0, dm);
	n = inart_pkt_build_udp(f, INART_FRAME_MAX, sm, dm, src, dst, 40000, INART_WIRE_UDP_PORT,
				pl, n);
	assert_true(n > 0);
	return n;
}

/* Receive on port hp, at now, an INA frame of (h, v) from host hp (source
 * src) to the PS; returns the frames sent out. */
static int rx_up(struct inart_switch *sw, const struct inart_wire_hdr *h, const int32_t *v, int hp,
		 uint32_t src, uint64_t now)
{
	uint8_t f[INART_FRAME_MAX];
	size_t len = ina_frame(f, h, v, hp, src, PS_IP);

	return rx(sw, f, len, hp, now);
}

/* Recompute the IPv4 header checksum of frame f (header of hl bytes). */
static void fix_ip_csum(uint8_t *f, size_t hl)
{
	uint16_t cs;

	f[24] = f[25] = 0;
	cs = inart_pkt_ip_csum(f + 14, hl);
	f[24] = (uint8_t)(cs >> 8);
	f[25] = (uint8_t)cs;
}

/* Parse an output frame fully; returns the INA decode code (or 1 if the
 * frame is not an INA frame). */
static int parse_out(const struct inart_frame *o, struct inart_pkt_info *pi,
		     struct inart_wire_hdr *h, int32_t *vals)
{
	const uint8_t *pl;
	int rc, i;

	assert_true(o->len <= INART_FRAME_MAX);
	assert_true(o->port < NP);
	assert_int_equal(inart_pkt_parse(o->data, o->len, pi), 0);
	/* (an answer to a worker goes to the worker's port, from the INA port) */
	if (!pi->is_udp || (pi->dport != INART_WIRE_UDP_PORT && pi->sport != INART_WIRE_UDP_PORT))
		return 1;
	rc = inart_wire_decode(o->data + pi->l4_payload_off, pi->l4_payload_len, h, &pl);
	if (rc == INART_WIRE_OK && vals != NULL)
		for (i = 0; i < h->count; i++)
			vals[i] = (int32_t)inart_get_be32(pl + 4 * i);
	return rc;
}

/* Storage for the variable parts of the entries tests build (entries point
 * into them; a ring: an entry stays valid for the next 255 built). */
static uint64_t *exp_buf(void)
{
	static uint64_t pool[256][INART_WIRE_MAX_BITMAP_WORDS];
	static int next;
	uint64_t *x = pool[next++ % 256];

	memset(x, 0, sizeof(pool[0]));
	return x;
}

static struct inart_label_down *down_buf(void)
{
	static struct inart_label_down pool[64][INART_SW_MAX_FANOUT + 1];
	static int next;
	struct inart_label_down *d = pool[next++ % 64];

	memset(d, 0, sizeof(pool[0]));
	return d;
}

/* The writable arrays behind an entry built here. */
#define EXP(e) ((uint64_t *)(e).expected)
#define DN(e) ((struct inart_label_down *)(e).down)

static struct inart_label_entry up_agg(uint32_t label, uint32_t job, uint16_t tree, int base,
				       int n_slots, int words, int n_ranks, uint32_t next)
{
	struct inart_label_entry e;
	uint64_t *x = exp_buf();
	int r;

	memset(&e, 0, sizeof(e));
	e.label = label;
	e.kind = INART_LABEL_UP;
	e.job = job;
	e.tree = tree;
	e.out_port = 0;
	e.next_label = next;
	e.aggregate = 1;
	e.slot_base = (uint16_t)base;
	e.n_slots = (uint16_t)n_slots;
	e.bitmap_words = (uint8_t)words;
	for (r = 0; r < n_ranks; r++)
		x[r / 64] |= 1ull << (r % 64);
	e.expected = x;
	e.down = down_buf(); /* for tests that turn it into a DOWN entry */
	return e;
}

static int apply1(struct inart_switch *sw, const struct inart_label_entry *e, int n,
		  const struct inart_route *routes, int nr, struct inart_err *err)
{
	struct inart_sw_update u;

	memset(&u, 0, sizeof(u));
	u.n_labels = n;
	u.labels = e;
	u.n_routes = nr;
	u.routes = routes;
	return inart_switch_apply(sw, &u, err);
}

/* A switch (64 slots, 360 values, the flush timeout) with label 7
 * aggregating job 42's tree 3 from n_ranks ranks in n_slots slots from 0,
 * towards label 77 (up_agg). */
static struct inart_switch *agg_switch(uint64_t timeout, int n_slots, int n_ranks)
{
	struct inart_switch *sw = mk_switch(64, 360, timeout);
	struct inart_label_entry e = up_agg(7, 42, 3, 0, n_slots, 1, n_ranks, 77);
	struct inart_err why = {{0}};
	int rc = apply1(sw, &e, 1, NULL, 0, &why);

	if (rc != 0)
		fail_msg("apply1: %d %s", rc, why.msg);
	return sw;
}

static uint64_t drops_of(struct inart_switch *sw, int reason)
{
	uint64_t d[INART_DROP_N];

	inart_switch_stats(sw, d, NULL, NULL, 0);
	return d[reason];
}

static struct inart_sw_tree_stats tree_of(struct inart_switch *sw, uint32_t job, uint16_t tree)
{
	struct inart_sw_tree_stats ts[16];
	int n = inart_switch_stats(sw, NULL, NULL, ts, 16), i;

	for (i = 0; i < n; i++)
		if (ts[i].job == job && ts[i].tree == tree)
			return ts[i];
	fail_msg("no stats for job %u tree %u", job, tree);
	return ts[0];
}

static void expect_why(const char *why, const char *words)
{
	if (strstr(why, words) == NULL)
		fail_msg("why '%s' lacks '%s'", why, words);
}

/* ---- creation and tables ---- */

static void test_create(void **state)
{
	struct inart_sw_cfg cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_null(inart_switch_create(NULL));
	assert_null(inart_switch_create(&cfg)); /* 0 ports */
	cfg.n_ports = INART_SW_MAX_PORTS + 1;
	assert_null(inart_switch_create(&cfg));
	cfg.n_ports = 2;
	cfg.pool_slots = -1;
	assert_null(inart_switch_create(&cfg));
	cfg.pool_slots = 0;
	cfg.max_values = -1;
	assert_null(inart_switch_create(&cfg));
	cfg.max_values = 0;
	inart_switch_destroy(inart_switch_create(&cfg));
	inart_switch_destroy(NULL);
}

/* The reason a configuration is refused names the field and its bounds. */
static void test_cfg_reason(void **state)
{
	struct inart_sw_cfg cfg;
	struct inart_err why = {{0}};

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(inart_switch_cfg_check(NULL, &why), -EINVAL);
	assert_string_equal(why.msg, "no configuration");
	assert_int_equal(inart_switch_cfg_check(&cfg, &why), -EINVAL);
	assert_string_equal(why.msg, "n_ports 0 not in 1..64");
	cfg.n_ports = 2;
	cfg.pool_slots = -1;
	assert_int_equal(inart_switch_cfg_check(&cfg, &why), -EINVAL);
	assert_string_equal(why.msg, "pool_slots -1 not in 0..16777216");
	cfg.pool_slots = 0;
	cfg.max_values = INART_SW_MAX_SLOT_VALUES + 1;
	assert_int_equal(inart_switch_cfg_check(&cfg, &why), -EINVAL);
	assert_string_equal(why.msg, "max_values 1025 not in 0..1024");
	cfg.max_values = 358;
	cfg.pool_slots = (int)(INART_SW_MAX_POOL_VALUES / 358) + 1;
	assert_int_equal(inart_switch_cfg_check(&cfg, &why), -EINVAL);
	assert_string_equal(why.msg, "pool of 374910 slots x 358 values above 134217728 values");
	assert_null(inart_switch_create(&cfg));
	assert_int_equal(errno, EINVAL);
	cfg.pool_slots = 4;
	why.msg[0] = 'x';
	assert_int_equal(inart_switch_cfg_check(&cfg, &why), 0);
	assert_int_equal(why.msg[0], 'x'); /* untouched when accepted */
	assert_int_equal(inart_switch_cfg_check(&cfg, NULL), 0);
	cfg.n_ports = 0;
	assert_int_equal(inart_switch_cfg_check(&cfg, NULL), -EINVAL);
}

static void test_apply_validation(void **state)
{
	struct inart_switch *sw = mk_switch(32, 16, 1000);
	struct inart_label_entry e[4], bad;
	struct inart_route rt[2] = {{IP(10, 0, 0, 0), 8, 1}, {IP(10, 1, 0, 0), 16, 2}};
	struct inart_label_entry got[8];
	struct inart_route rgot[4];
	struct inart_sw_update u;
	struct inart_err why = {{0}};
	uint32_t del;

	(void)state;
	e[0] = up_agg(10, 1, 0, 0, 8, 1, 4, 11);
	e[1] = up_agg(20, 1, 0, 4, 8, 1, 2, 21); /* same (job, tree): may share */
	e[2] = up_agg(30, 2, 0, 16, 8, 1, 4, 0);
	memset(&e[3], 0, sizeof(e[3]));
	e[3].label = 40;
	e[3].kind = INART_LABEL_DOWN;
	e[3].job = 1;
	e[3].n_down = 2;
	e[3].down = down_buf();
	DN(e[3])[0].port = 1;
	DN(e[3])[1].port = 4;
	assert_int_equal(apply1(sw, e, 4, rt, 2, &why), 0);
	assert_int_equal(inart_switch_get_labels(sw, got, 8), 4);
	assert_int_equal(inart_switch_get_routes(sw, rgot, 4), 2);
	assert_int_equal(inart_switch_get_labels(sw, NULL, 0), 4);

	/* each invalid entry, in a batch with a valid one: refused, named, nothing changes */
#define REFUSE(mutate, words, code)                                                                \
	do {                                                                                       \
		struct inart_label_entry b2[2];                                                    \
		b2[0] = up_agg(50, 3, 0, 24, 4, 1, 2, 0);                                          \
		bad = up_agg(60, 4, 0, 28, 4, 1, 2, 0);                                            \
		mutate;                                                                            \
		b2[1] = bad;                                                                       \
		assert_int_equal(apply1(sw, b2, 2, NULL, 0, &why), code);                          \
		expect_why(why.msg, words);                                                        \
		assert_int_equal(inart_switch_get_labels(sw, NULL, 0), 4);                         \
	} while (0)
	REFUSE(bad.label = 0, "label 0", -EINVAL);
	REFUSE(bad.kind = 3, "label 60: unknown kind", -EINVAL);
	REFUSE(bad.out_port = NP, "label 60: out_port 5 >= 5 ports", -EINVAL);
	REFUSE(bad.aggregate = 2, "label 60: aggregate", -EINVAL);
	REFUSE(bad.bitmap_words = 0, "label 60: bitmap_words 0", -EINVAL);
	REFUSE(bad.bitmap_words = 17, "label 60: bitmap_words 17", -EINVAL);
	REFUSE(bad.n_slots = 0, "label 60: slot region", -EINVAL);
	REFUSE(bad.slot_base = 30, "label 60: slot region 30+4 outside the pool of 32", -EINVAL);
	REFUSE(EXP(bad)[0] = 0, "label 60: expected bitmap is empty", -EINVAL);
	REFUSE(bad.label = 50, "label 50: appears twice", -EINVAL);
	/* overlap with another tree in the batch, and with the table */
	REFUSE(bad.slot_base = 25, "overlaps label", -EINVAL);
	REFUSE(bad.slot_base = 20, "(job 2 tree 0)", -EINVAL);
	REFUSE(bad.slot_base = 0; bad.job = 1;
	       bad.n_slots = 17, "label 30: slot region 16..23 of job 2 tree 0 overlaps label 60",
	       -EINVAL);
	/* DOWN entries */
	REFUSE(bad.kind = INART_LABEL_DOWN; bad.n_down = 0, "label 60: n_down 0", -EINVAL);
	REFUSE(bad.kind = INART_LABEL_DOWN; bad.n_down = 65, "label 60: n_down 65", -EINVAL);
	REFUSE(bad.kind = INART_LABEL_DOWN; bad.n_down = 2;
	       DN(bad)[1].port = 9, "label 60: down[1] port 9", -EINVAL);
	/* a non-aggregating UP entry needs no slots */
	{
		struct inart_label_entry f = up_agg(70, 5, 0, 0, 0, 0, 0, 71);

		f.aggregate = 0;
		assert_int_equal(apply1(sw, &f, 1, NULL, 0, &why), 0);
	}
	/* routes */
	{
		struct inart_route br[2] = {{IP(10, 2, 0, 0), 16, 1}, {IP(10, 3, 0, 0), 33, 1}};

		assert_int_equal(apply1(sw, e, 1, br, 2, &why), -EINVAL);
		expect_why(why.msg, "route 10.3.0.0/33");
		br[1].len = 16;
		br[1].port = NP;
		assert_int_equal(apply1(sw, e, 1, br, 2, &why), -EINVAL);
		expect_why(why.msg, "port 5 >= 5 ports");
		assert_int_equal(inart_switch_get_routes(sw, NULL, 0), 2);
	}
	/* deletes: a missing label refuses the batch */
	memset(&u, 0, sizeof(u));
	del = 999;
	u.n_del_labels = 1;
	u.del_labels = &del;
	assert_int_equal(inart_switch_apply(sw, &u, &why), -EINVAL);
	expect_why(why.msg, "delete label 999");
	del = 70;
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	assert_int_equal(inart_switch_get_labels(sw, NULL, 0), 4);
	/* a deleted region can be reused by another tree in the same batch */
	{
		struct inart_label_entry f = up_agg(80, 9, 1, 16, 8, 1, 3, 0);

		del = 30;
		u.n_labels = 1;
		u.labels = &f;
		assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	}
	/* upsert: an existing label is replaced */
	e[0].next_label = 12345;
	assert_int_equal(apply1(sw, e, 1, NULL, 0, &why), 0);
	assert_int_equal(inart_switch_get_labels(sw, got, 8), 4);
	{
		int i, found = 0;

		for (i = 0; i < 4; i++)
			if (got[i].label == 10)
				found = got[i].next_label == 12345;
		assert_true(found);
	}
	/* malformed update */
	memset(&u, 0, sizeof(u));
	u.n_labels = 1;
	assert_int_equal(inart_switch_apply(sw, &u, &why), -EINVAL);
	assert_int_equal(inart_switch_apply(sw, NULL, &why), -EINVAL);
	/* replace clears both tables */
	memset(&u, 0, sizeof(u));
	u.replace = 1;
	u.n_labels = 1;
	u.labels = &e[2];
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	assert_int_equal(inart_switch_get_labels(sw, got, 8), 1);
	assert_int_equal(got[0].label, 30);
	assert_int_equal(inart_switch_get_routes(sw, NULL, 0), 0);
	/* trees with stats: only job 2 tree 0 remains */
	assert_int_equal(inart_switch_stats(sw, NULL, NULL, NULL, 0), 1);
	inart_switch_destroy(sw);
}

/* ---- ARP and IPv4 ---- */

static void arp_request(uint8_t *f, const uint8_t sha[6], uint32_t spa, uint32_t tpa)
{
	/* build a reply-shaped frame and turn it into a broadcast request */
	uint8_t dummy[6] = {0};

	inart_pkt_build_arp_reply(f, 64, sha, spa, dummy, tpa);
	memset(f, 0xff, 6);
	f[14 + 7] = 1;
	memset(f + 14 + 18, 0, 6);
	/* the builder wrote (sha, spa) as sender and (dummy, tpa) as target */
}

static void test_arp(void **state)
{
	struct inart_switch *sw = mk_switch(8, 16, 1000);
	struct inart_pkt_info pi;
	uint8_t f[64], hm[6], pm[6];
	int n;

	(void)state;
	host_mac(2, hm);
	port_mac(2, pm);
	arp_request(f, hm, IP(10, 0, 2, 7), IP(10, 0, 2, 1));
	n = rx(sw, f, 42, 2, 0);
	assert_int_equal(n, 1);
	assert_int_equal(outv[0].port, 2);
	assert_int_equal(inart_pkt_parse(outv[0].data, outv[0].len, &pi), 0);
	assert_int_equal(pi.arp_op, 2);
	assert_memory_equal(pi.arp_sha, pm, 6);
	assert_int_equal(pi.arp_spa, IP(10, 0, 2, 1));
	assert_int_equal(pi.arp_tpa, IP(10, 0, 2, 7));
	assert_memory_equal(pi.dst_mac, hm, 6);
	assert_memory_equal(pi.src_mac, pm, 6);
	/* any other address is answered too (proxy ARP) */
	arp_request(f, hm, IP(10, 0, 2, 7), IP(10, 7, 7, 7));
	assert_int_equal(rx(sw, f, 42, 2, 0), 1);
	/* gratuitous ARP (target = sender) and replies: not answered */
	arp_request(f, hm, IP(10, 0, 2, 7), IP(10, 0, 2, 7));
	assert_int_equal(rx(sw, f, 42, 2, 0), 0);
	inart_pkt_build_arp_reply(f, 64, hm, IP(10, 0, 2, 7), pm, IP(10, 0, 2, 1));
	assert_int_equal(rx(sw, f, 42, 2, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_OTHER), 2);
	/* truncated ARP: malformed */
	assert_int_equal(rx(sw, f, 30, 2, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_MALFORMED), 1);
	/* no room for the reply */
	arp_request(f, hm, IP(10, 0, 2, 7), IP(10, 0, 2, 1));
	assert_int_equal(rx_n(sw, f, 42, 2, 0, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_OUT_FULL), 1);
	/* the peer MAC was learned from the requests */
	{
		uint8_t m[6];

		assert_int_equal(inart_switch_peer_mac(sw, 2, m), 0);
		assert_memory_equal(m, hm, 6);
		assert_int_equal(inart_switch_peer_mac(sw, 3, m), -1);
		assert_int_equal(inart_switch_peer_mac(sw, 0, m), 0);
		assert_memory_equal(m, peer0, 6);
		assert_int_equal(inart_switch_peer_mac(sw, NP, m), -1);
	}
	inart_switch_destroy(sw);
}

static void test_ipv4_forward(void **state)
{
	struct inart_switch *sw = mk_switch(8, 16, 1000);
	struct inart_route rt[3] = {{IP(10, 1, 0, 0), 16, 2}, {IP(10, 1, 5, 0), 24, 3}, {0, 0, 4}};
	struct inart_pkt_info pi;
	uint8_t f[200], hm[6], pm[6], payload[50] = "ping";
	struct inart_err why = {{0}};
	size_t n;
	int k;

	(void)state;
	assert_int_equal(apply1(sw, NULL, 0, rt, 3, &why), 0);
	host_mac(1, hm);
	port_mac(1, pm);
	n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(10, 1, 7, 7), 5, 6,
				payload, sizeof(payload));
	f[14 + 9] = 6; /* TCP: routed like anything else */
	f[14 + 10] = f[14 + 11] = 0;
	{
		uint16_t cs = inart_pkt_ip_csum(f + 14, 20);

		f[24] = (uint8_t)(cs >> 8);
		f[25] = (uint8_t)cs;
	}
	assert_int_equal(rx(sw, f, n, 1, 0), 1);
	assert_int_equal(outv[0].port, 2);
	assert_int_equal(outv[0].len, n);
	assert_int_equal(inart_pkt_parse(outv[0].data, outv[0].len, &pi), 0); /* checksum ok */
	assert_int_equal(pi.ttl, 63);
	assert_memory_equal(pi.dst_mac, "\xff\xff\xff\xff\xff\xff", 6); /* peer unknown */
	port_mac(2, pm);
	assert_memory_equal(pi.src_mac, pm, 6);
	assert_memory_equal(outv[0].data + 34, f + 34, n - 34);
	/* once port 2's peer spoke, its MAC is used */
	{
		uint8_t f2[200], h2[6];
		size_t n2;

		host_mac(2, h2);
		n2 = inart_pkt_build_udp(f2, sizeof(f2), h2, pm, IP(10, 1, 7, 7), IP(10, 1, 5, 1),
					 5, 6, payload, 4);
		assert_int_equal(rx(sw, f2, n2, 2, 0), 1);
		assert_int_equal(outv[0].port, 3); /* the /24 wins */
		assert_int_equal(rx(sw, f, n, 1, 0), 1);
		assert_memory_equal(outv[0].data, h2, 6);
	}
	/* default route */
	n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(192, 168, 0, 1), 5, 6,
				payload, 10);
	assert_int_equal(rx(sw, f, n, 1, 0), 1);
	assert_int_equal(outv[0].port, 4);
	/* port 0's peer MAC is configured */
	rt[0].port = 0;
	assert_int_equal(apply1(sw, NULL, 0, rt, 1, &why), 0);
	n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(10, 1, 9, 9), 5, 6,
				payload, 10);
	assert_int_equal(rx(sw, f, n, 1, 0), 1);
	assert_int_equal(outv[0].port, 0);
	assert_memory_equal(outv[0].data, peer0, 6);
	/* TTL: 2 goes out with 1, 1 is dropped */
	f[14 + 8] = 2;
	fix_ip_csum(f, 20);
	assert_int_equal(rx(sw, f, n, 1, 0), 1);
	assert_int_equal(inart_pkt_parse(outv[0].data, outv[0].len, &pi), 0);
	assert_int_equal(pi.ttl, 1);
	memcpy(f, outv[0].data, outv[0].len);
	assert_int_equal(rx(sw, f, n, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_TTL), 1);
	/* IPv4 options are carried over */
	{
		uint8_t g[200];
		size_t m;
		uint16_t cs;

		m = inart_pkt_build_udp(g, sizeof(g), hm, pm, IP(10, 0, 1, 2), IP(10, 1, 9, 9), 5,
					6, payload, 10);
		memmove(g + 34 + 4, g + 34, m - 34);
		memset(g + 34, 1, 4);
		g[14] = 0x46;
		g[17] = (uint8_t)(g[17] + 4);
		g[24] = g[25] = 0;
		cs = inart_pkt_ip_csum(g + 14, 24);
		g[24] = (uint8_t)(cs >> 8);
		g[25] = (uint8_t)cs;
		assert_int_equal(rx(sw, g, m + 4, 1, 0), 1);
		assert_int_equal(outv[0].len, m + 4);
		assert_int_equal(inart_pkt_parse(outv[0].data, outv[0].len, &pi), 0);
		assert_int_equal(pi.ip_hlen, 24);
		assert_int_equal(pi.ttl, 63);
	}
	/* no route (replace with an empty table) */
	{
		struct inart_sw_update u;

		memset(&u, 0, sizeof(u));
		u.replace = 1;
		assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
		n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(10, 1, 7, 7), 5,
					6, payload, 10);
		assert_int_equal(rx(sw, f, n, 1, 0), 0);
		assert_int_equal(drops_of(sw, INART_DROP_NO_ROUTE), 1);
	}
	/* addressed to the switch itself: dropped (no local stack) */
	assert_int_equal(apply1(sw, NULL, 0, &rt[2], 1, &why), 0);
	n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(10, 255, 0, 3), 5, 6,
				payload, 10);
	assert_int_equal(rx(sw, f, n, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_OTHER), 1);
	/* not IPv4 nor ARP */
	f[12] = 0x86;
	f[13] = 0xdd;
	assert_int_equal(rx(sw, f, n, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_OTHER), 2);
	/* bad IP checksum, bad port, oversize */
	n = inart_pkt_build_udp(f, sizeof(f), hm, pm, IP(10, 0, 1, 2), IP(10, 1, 7, 7), 5, 6,
				payload, 10);
	f[24] ^= 0xff;
	k = (int)drops_of(sw, INART_DROP_MALFORMED);
	assert_int_equal(rx(sw, f, n, 1, 0), 0);
	assert_int_equal(rx(sw, f, n, NP, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_MALFORMED), k + 2);
	inart_switch_destroy(sw);
}

/* ---- INA ---- */

static void check_aggregation(int n_workers, int words)
{
	struct inart_switch *sw = mk_switch(64, 360, 1000000);
	struct inart_label_entry e = up_agg(7, 42, 3, 8, 16, words, n_workers, 77);
	int32_t v[300], got[400];
	int64_t ref[300] = {0};
	uint8_t f[INART_FRAME_MAX], pm[6];
	struct inart_wire_hdr h = data_hdr(42, 3, 7, words, n_workers), o;
	struct inart_pkt_info pi;
	struct inart_sw_tree_stats ts;
	struct inart_err why = {{0}};
	int r, i, n_out = 0, cnt = 300;
	size_t len;

	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	if (words > 1)
		cnt = 200;
	h.count = (uint16_t)cnt;
	h.seq = 1234;
	h.slot = (uint16_t)(1234 % 16);
	/* contributors in a scrambled order */
	for (i = 0; i < n_workers; i++) {
		r = (i * 37 + 11) % n_workers;
		set_rank(&h, r);
		for (int j = 0; j < cnt; j++) {
			v[j] = (int32_t)((uint32_t)rand() % 2000001) - 1000000 + r;
			ref[j] += v[j];
		}
		len = ina_frame(f, &h, v, 1 + r % 4, IP(10, 0, 1, 1 + r), PS_IP);
		n_out = rx(sw, f, len, 1 + r % 4, 100 + (uint64_t)i);
		assert_int_equal(n_out, i == n_workers - 1 ? 1 : 0);
	}
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(outv[0].port, 0);
	assert_int_equal(o.flags, INART_F_DATA);
	assert_int_equal(o.label, 77);
	assert_int_equal(o.job, 42);
	assert_int_equal(o.tree, 3);
	assert_int_equal(o.fan_in, n_workers);
	assert_int_equal(o.seq, 1234);
	assert_int_equal(o.iter, 1);
	assert_int_equal(o.slot, 1234 % 16);
	assert_int_equal(o.scale_exp, 8);
	assert_int_equal(o.count, cnt);
	assert_memory_equal(o.bitmap, e.expected, sizeof(o.bitmap));
	for (i = 0; i < cnt; i++)
		assert_true(got[i] == ref[i]);
	assert_int_equal(pi.dst_ip, PS_IP);
	assert_int_equal(pi.src_ip, IP(10, 255, 0, 1)); /* the out port's address */
	assert_int_equal(pi.ttl, 63); /* one less than the contributions' smallest */
	assert_int_equal(pi.dport, INART_WIRE_UDP_PORT);
	assert_memory_equal(pi.dst_mac, peer0, 6);
	port_mac(0, pm);
	assert_memory_equal(pi.src_mac, pm, 6);
	ts = tree_of(sw, 42, 3);
	assert_int_equal(ts.aggregated, n_workers);
	assert_int_equal(ts.emitted, 1);
	assert_int_equal(ts.partial + ts.fallback + ts.duplicates + ts.overflows, 0);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX); /* slot freed */
	inart_switch_destroy(sw);
}

static void test_aggregate_2_to_100(void **state)
{
	static const int ns[] = {2, 3, 5, 17, 63, 64};
	size_t i;

	(void)state;
	srand(2024);
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		check_aggregation(ns[i], 1);
	check_aggregation(64, 2);
	check_aggregation(100, 2);
	check_aggregation(1000, 16);
}

static void test_drops(void **state)
{
	struct inart_switch *sw = agg_switch(1000000, 8, 4);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 8);
	int32_t v[4] = {1, 2, 3, 4};
	uint8_t f[INART_FRAME_MAX];
	size_t len;

	(void)state;
	h.count = 4;
	set_rank(&h, 0);
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	/* the same contribution again */
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_DUPLICATE), 1);
	assert_int_equal(tree_of(sw, 42, 3).duplicates, 1);
	/* overlapping two-rank aggregate */
	h.bitmap[0] = 0x3;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_DUPLICATE), 2);
	/* rank 5 is below another switch: outside the subtree */
	set_rank(&h, 5);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_BITS), 1);
	/* job or tree different from the label's */
	set_rank(&h, 1);
	h.job = 43;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.job = 42;
	h.tree = 4;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.tree = 3;
	/* bitmap width different */
	h.bitmap_words = 2;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.bitmap_words = 1;
	/* RESULT on an UP label */
	h.flags = INART_F_RESULT;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.flags = INART_F_DATA;
	assert_int_equal(drops_of(sw, INART_DROP_MISMATCH), 4);
	/* unknown label */
	h.label = 8;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_NO_LABEL), 1);
	h.label = 7;
	/* malformed INA (reserved field set): never touches the slot */
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	f[INART_PKT_UDP_HLEN + 30] = 1;
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	/* UDP length shorter than the INA packet */
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	f[14 + 20 + 5] = (uint8_t)(f[14 + 20 + 5] - 4);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_WIRE), 2);
	/* TTL expired on a labelled packet that would be forwarded */
	h.flags = INART_F_DATA | INART_F_RETX;
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	f[14 + 8] = 1;
	fix_ip_csum(f, 20);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_TTL), 1);
	/* the slot still holds only rank 0: ranks 1..3 complete it with exact sums */
	h.flags = INART_F_DATA;
	h.bitmap[0] = 0xe;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	{
		struct inart_pkt_info pi;
		struct inart_wire_hdr o;
		int32_t got[4];

		assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
		assert_true(o.bitmap[0] == 0xf);
		assert_int_equal(got[0], 2);
		assert_int_equal(got[3], 8);
	}
	inart_switch_destroy(sw);
}

static void test_fallback(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 1000000);
	struct inart_label_entry e = up_agg(7, 42, 3, 0, 8, 1, 4, 77);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 4), o;
	struct inart_pkt_info pi;
	int32_t v[4] = {1, 2, 3, 4}, got[4];
	uint8_t f[INART_FRAME_MAX];
	struct inart_err why = {{0}};
	size_t len;

	(void)state;
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	h.count = 4;
	h.seq = 3;
	h.slot = 3;
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	/* seq 11 maps to the same slot (11 % 8 == 3): forwarded with FALLBACK */
	h.seq = 11;
	set_rank(&h, 1);
	assert_int_equal(rx_up(sw, &h, v, 2, IP(10, 0, 1, 2), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(outv[0].port, 0);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_FALLBACK);
	assert_int_equal(o.label, 77);
	assert_int_equal(o.seq, 11);
	assert_true(o.bitmap[0] == 2);
	assert_memory_equal(got, v, sizeof(v));
	assert_int_equal(pi.ttl, 63);
	assert_int_equal(pi.src_ip, IP(10, 0, 1, 2)); /* forwarded, not rewritten */
	assert_int_equal(tree_of(sw, 42, 3).fallback, 1);
	/* a different scale for the same chunk is busy as well */
	h.seq = 3;
	h.scale_exp = 5;
	assert_int_equal(rx_up(sw, &h, v, 2, IP(10, 0, 1, 2), 0), 1);
	assert_int_equal(tree_of(sw, 42, 3).fallback, 2);
	/* more values than a slot holds: fallback */
	{
		struct inart_switch *s2 = mk_switch(64, 2, 1000000);

		assert_int_equal(apply1(s2, &e, 1, NULL, 0, &why), 0);
		h.scale_exp = 8;
		len = ina_frame(f, &h, v, 2, IP(10, 0, 1, 2), PS_IP);
		assert_int_equal(rx(s2, f, len, 2, 0), 1);
		assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
		assert_true(o.flags & INART_F_FALLBACK);
		inart_switch_destroy(s2);
	}
	/* the rest of seq 3 still aggregates with rank 0 */
	h.scale_exp = 8;
	h.bitmap[0] = 0xe;
	assert_int_equal(rx_up(sw, &h, v, 2, IP(10, 0, 1, 2), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA);
	assert_int_equal(got[2], 6);
	inart_switch_destroy(sw);
}

static void test_partial_flush(void **state)
{
	struct inart_switch *sw = agg_switch(5000, 8, 3);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[4] = {10, 20, 30, 40}, got[4];
	uint8_t f[INART_FRAME_MAX];
	size_t len;

	(void)state;
	h.count = 4;
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 1000), 0);
	set_rank(&h, 2);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 3000), 0);
	/* a second chunk in another slot, later */
	h.seq = 1;
	h.slot = 1;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 4000), 0);
	assert_true(inart_switch_next_deadline(sw) == 6000);
	assert_int_equal(tick(sw, 5999, MAXOUT), 0);
	assert_int_equal(tick(sw, 6000, MAXOUT), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_int_equal(o.seq, 0);
	assert_true(o.bitmap[0] == 0x5);
	assert_int_equal(got[3], 80);
	assert_int_equal(o.label, 77);
	assert_int_equal(outv[0].port, 0);
	assert_true(inart_switch_next_deadline(sw) == 9000);
	/* no room: the flush waits */
	assert_int_equal(tick(sw, 10000, 0), 0);
	assert_int_equal(tick(sw, 10000, 1), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.seq, 1);
	assert_true(o.bitmap[0] == 0x4);
	assert_int_equal(tree_of(sw, 42, 3).partial, 2);
	/* the late rank 1 of seq 0 starts a new slot, later flushed alone */
	h.seq = 0;
	h.slot = 0;
	set_rank(&h, 1);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 20000), 0);
	assert_int_equal(tick(sw, 25000, MAXOUT), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_true(o.bitmap[0] == 0x2);
	assert_int_equal(got[0], 10);
	assert_int_equal(tree_of(sw, 42, 3).partial, 3);
	/* a complete aggregate that found no room in rx goes out whole at tick */
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 30000), 0);
	h.bitmap[0] = 0x6;
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx_n(sw, f, len, 1, 30001, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_OUT_FULL), 1);
	assert_int_equal(tick(sw, 35000, MAXOUT), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA);
	assert_true(o.bitmap[0] == 0x7);
	assert_int_equal(got[1], 40);
	assert_int_equal(tree_of(sw, 42, 3).emitted, 1);
	inart_switch_destroy(sw);
}

static void test_retx_and_forward(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 5000);
	struct inart_label_entry e[2];
	struct inart_route rt = {PS_IP, 32, 3};
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[4] = {10, 20, 30, 40}, got[4];
	struct inart_err why = {{0}};

	(void)state;
	e[0] = up_agg(7, 42, 3, 0, 8, 1, 3, 77);
	e[1] = up_agg(8, 42, 3, 0, 0, 0, 0, 88);
	e[1].aggregate = 0;
	e[1].out_port = 2;
	assert_int_equal(apply1(sw, e, 2, &rt, 1, &why), 0);
	h.count = 4;
	set_rank(&h, 0);
	/* RETX with an aggregating label: forwarded, never absorbed */
	h.flags = INART_F_DATA | INART_F_RETX;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_RETX);
	assert_int_equal(o.label, 77);
	assert_int_equal(outv[0].port, 0);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	/* RETX with label 0: plain IPv4 routing to the PS */
	h.label = 0;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(outv[0].port, 3);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.label, 0);
	assert_memory_equal(got, v, sizeof(v));
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	/* DATA with label 0 is routed too, never aggregated */
	h.flags = INART_F_DATA;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(outv[0].port, 3);
	/* a forwarding UP label: out port 2, label rewritten */
	h.label = 8;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(outv[0].port, 2);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.label, 88);
	assert_int_equal(o.flags, INART_F_DATA);
	assert_int_equal(pi.ttl, 63);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	inart_switch_destroy(sw);
}

static void test_down_replication(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 5000);
	struct inart_label_entry e;
	struct inart_wire_hdr h = data_hdr(42, 3, 50, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[4] = {10, 20, 30, 40}, got[4];
	uint8_t f[INART_FRAME_MAX];
	struct inart_sw_port_stats ps[NP];
	struct inart_err why = {{0}};
	size_t len;
	int i;

	(void)state;
	memset(&e, 0, sizeof(e));
	e.label = 50;
	e.kind = INART_LABEL_DOWN;
	e.job = 42;
	e.tree = 3;
	e.n_down = 3;
	e.down = down_buf();
	DN(e)[0] = (struct inart_label_down){1, 0, IP(10, 0, 1, 1)};
	DN(e)[1] = (struct inart_label_down){2, 51, 0};
	DN(e)[2] = (struct inart_label_down){4, 0, IP(10, 0, 4, 1)};
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	h.flags = INART_F_RESULT;
	h.count = 4;
	h.bitmap[0] = 0x7;
	len = ina_frame(f, &h, v, 0, PS_IP, IP(10, 0, 77, 77));
	assert_int_equal(rx(sw, f, len, 0, 0), 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(parse_out(&outv[i], &pi, &o, got), INART_WIRE_OK);
		assert_int_equal(outv[i].port, e.down[i].port);
		assert_int_equal(o.label, e.down[i].label);
		assert_int_equal(o.flags, INART_F_RESULT);
		assert_int_equal(pi.dst_ip,
				 e.down[i].dst_ip ? e.down[i].dst_ip : IP(10, 0, 77, 77));
		assert_int_equal(pi.src_ip, PS_IP);
		assert_int_equal(pi.ttl, 63);
		assert_memory_equal(got, v, sizeof(v));
		assert_true(o.bitmap[0] == 0x7);
	}
	assert_int_equal(tree_of(sw, 42, 3).results, 3);
	/* only two frames of room: one copy counted as OUT_FULL */
	assert_int_equal(rx_n(sw, f, len, 0, 0, 2), 2);
	assert_int_equal(drops_of(sw, INART_DROP_OUT_FULL), 1);
	assert_int_equal(tree_of(sw, 42, 3).results, 5);
	/* DATA on a DOWN label */
	h.flags = INART_F_DATA;
	len = ina_frame(f, &h, v, 0, PS_IP, IP(10, 0, 77, 77));
	assert_int_equal(rx(sw, f, len, 0, 0), 0);
	assert_int_equal(drops_of(sw, INART_DROP_MISMATCH), 1);
	/* port counters: 3 frames in on port 0, copies out */
	inart_switch_stats(sw, NULL, ps, NULL, 0);
	assert_int_equal(ps[0].rx_pkts, 3);
	assert_int_equal(ps[0].tx_pkts, 0);
	assert_int_equal(ps[1].tx_pkts, 2);
	assert_int_equal(ps[2].tx_pkts, 2);
	assert_int_equal(ps[4].tx_pkts, 1);
	assert_int_equal(ps[1].tx_bytes, 2 * (uint64_t)len);
	assert_int_equal(ps[0].rx_bytes, 2 * (uint64_t)len + len);
	/* all of it INA traffic (the controller's INA counters) */
	assert_int_equal(ps[0].rx_ina_bytes, ps[0].rx_bytes);
	assert_int_equal(ps[1].tx_ina_bytes, ps[1].tx_bytes);
	assert_int_equal(ps[4].tx_ina_bytes, ps[4].tx_bytes);
	/* a background frame (another EtherType) is counted, not as INA */
	memset(f, 0, 100);
	f[12] = 0x88;
	f[13] = 0xb5;
	f[6] = 0x02;
	assert_int_equal(rx(sw, f, 100, 0, 0), 0);
	inart_switch_stats(sw, NULL, ps, NULL, 0);
	assert_int_equal(ps[0].rx_bytes, 3 * (uint64_t)len + 100);
	assert_int_equal(ps[0].rx_ina_bytes, 3 * (uint64_t)len);
	inart_switch_destroy(sw);
}

static void test_overflow(void **state)
{
	struct inart_switch *sw = agg_switch(5000, 8, 3);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {0x40000000, 1};

	(void)state;
	h.count = 2;
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.bitmap[0] = 0x6;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_OVERFLOW);
	assert_int_equal(tree_of(sw, 42, 3).overflows, 1);
	/* a contribution already flagged OVERFLOW taints the aggregate */
	v[0] = 1;
	set_rank(&h, 0);
	h.flags = INART_F_DATA | INART_F_OVERFLOW;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	h.flags = INART_F_DATA;
	h.bitmap[0] = 0x6;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_OVERFLOW);
	assert_int_equal(tree_of(sw, 42, 3).overflows, 2);
	inart_switch_destroy(sw);
}

static void test_lose_state_and_orphans(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 5000);
	struct inart_label_entry e = up_agg(7, 42, 3, 0, 8, 1, 3, 77);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	struct inart_sw_update u;
	int32_t v[2] = {5, 6}, got[2];
	uint8_t f[INART_FRAME_MAX];
	struct inart_err why = {{0}};
	size_t len;
	uint32_t del = 7;

	(void)state;
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	h.count = 2;
	set_rank(&h, 0);
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	inart_switch_lose_state(sw);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	assert_int_equal(tick(sw, UINT64_MAX, MAXOUT), 0);
	/* after the restart, rank 0's contribution is gone: a resend is not a duplicate */
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	h.bitmap[0] = 0x6;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(got[0], 10);
	assert_int_equal(drops_of(sw, INART_DROP_DUPLICATE), 0);
	/* deleting the label frees its busy slots */
	set_rank(&h, 0);
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	assert_true(inart_switch_next_deadline(sw) != UINT64_MAX);
	memset(&u, 0, sizeof(u));
	u.n_del_labels = 1;
	u.del_labels = &del;
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	/* moving a region frees slots outside the new one; slots inside stay */
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	assert_int_equal(rx(sw, f, len, 1, 0), 0);
	e.slot_base = 1;
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	assert_true(inart_switch_next_deadline(sw) == UINT64_MAX);
	h.seq = 1;
	h.slot = 0; /* slot 1 + 0 */
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 0), 0);
	e.next_label = 99;
	assert_int_equal(apply1(sw, &e, 1, NULL, 0, &why), 0);
	assert_true(inart_switch_next_deadline(sw) == 5000);
	/* the flush follows the updated entry */
	assert_int_equal(tick(sw, 5000, MAXOUT), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.label, 99);
	inart_switch_destroy(sw);
}

static void test_drop_names(void **state)
{
	int i, j;

	(void)state;
	for (i = 0; i < INART_DROP_N; i++) {
		assert_string_not_equal(inart_switch_drop_name(i), "unknown");
		for (j = 0; j < i; j++)
			assert_string_not_equal(inart_switch_drop_name(i),
						inart_switch_drop_name(j));
	}
	assert_string_equal(inart_switch_drop_name(-1), "unknown");
	assert_string_equal(inart_switch_drop_name(INART_DROP_N), "unknown");
}

/* Tree B of the garbage tests: rank r's contribution to hb's chunk, 64
 * values from rand() (added to refb), from 10.0.2.1 on port 2 at time 0;
 * returns the frames sent out. */
static int rx_tree_b(struct inart_switch *sw, struct inart_wire_hdr *hb, int r, int64_t *refb)
{
	int32_t vb[64];

	set_rank(hb, r);
	for (int i = 0; i < 64; i++) {
		vb[i] = (int32_t)(rand() % 100000) - 50000;
		refb[i] += vb[i];
	}
	return rx_up(sw, hb, vb, 2, IP(10, 0, 2, 1), 0);
}

/* Seeded garbage: random frames and mutations of valid frames for tree A
 * (labels 0x0a0a0a0a / DOWN 0x0c0c0c0c, job 0x11111111).  Nothing crashes,
 * every output frame parses, and tree B (label 0x0b0b0b0b, job 0x22222222,
 * the neighbouring slot region) still aggregates to the exact sums. */
static void test_garbage(void **state)
{
	struct inart_switch *sw = mk_switch(32, 64, 1000);
	struct inart_label_entry e[3];
	struct inart_route rt = {0, 0, 3};
	struct inart_wire_hdr ha = data_hdr(0x11111111, 1, 0x0a0a0a0a, 1, 8);
	struct inart_wire_hdr hb = data_hdr(0x22222222, 2, 0x0b0b0b0b, 1, 4), o;
	struct inart_pkt_info pi;
	int32_t v[64], got[64];
	int64_t refb[64] = {0};
	uint8_t base[8][INART_FRAME_MAX], f[INART_FRAME_MAX];
	size_t blen[8], len;
	struct inart_err why = {{0}};
	int it, i, k, n, b_flushed = 0;

	(void)state;
	srand(5150);
	e[0] = up_agg(0x0a0a0a0a, 0x11111111, 1, 0, 16, 1, 8, 0x0d0d0d0d);
	e[1] = up_agg(0x0b0b0b0b, 0x22222222, 2, 16, 16, 1, 4, 0x0e0e0e0e);
	memset(&e[2], 0, sizeof(e[2]));
	e[2].label = 0x0c0c0c0c;
	e[2].kind = INART_LABEL_DOWN;
	e[2].job = 0x11111111;
	e[2].tree = 1;
	e[2].n_down = 4;
	e[2].down = down_buf();
	for (i = 0; i < 4; i++)
		DN(e[2])[i] = (struct inart_label_down){(uint16_t)(i + 1), (uint32_t)i, 0};
	assert_int_equal(apply1(sw, e, 3, &rt, 1, &why), 0);
	/* tree B: ranks 0..2 of seq 5 go in first */
	hb.count = 64;
	hb.seq = 5;
	hb.slot = 5;
	for (k = 0; k < 3; k++)
		assert_int_equal(rx_tree_b(sw, &hb, k, refb), 0);
	/* valid tree-A frames to mutate: DATA of several ranks/seqs, RESULT, RETX, ARP */
	for (k = 0; k < 6; k++) {
		ha.flags = k == 4   ? INART_F_RESULT
			   : k == 5 ? INART_F_DATA | INART_F_RETX
				    : INART_F_DATA;
		ha.label = k == 4 ? 0x0c0c0c0c : 0x0a0a0a0a;
		ha.count = (uint16_t)(1 + k * 12);
		ha.seq = (uint32_t)k;
		ha.slot = (uint16_t)k;
		set_rank(&ha, k);
		for (i = 0; i < ha.count; i++)
			v[i] = rand();
		blen[k] = ina_frame(base[k], &ha, v, 1, IP(10, 0, 1, 1), PS_IP);
	}
	{
		uint8_t hm[6], z[6] = {0};

		host_mac(1, hm);
		blen[6] = inart_pkt_build_arp_reply(base[6], INART_FRAME_MAX, hm, 1, z, 2);
		base[6][14 + 7] = 1;
		blen[7] = inart_pkt_build_udp(base[7], INART_FRAME_MAX, hm, hm, 1, 2, 3, 4,
					      (const uint8_t *)"xyz", 3);
	}
	for (it = 0; it < 30000; it++) {
		int which = rand() % 8;
		uint64_t now = (uint64_t)it * 10;

		if (it % 5 == 0) {
			len = (size_t)(rand() % 200);
			for (i = 0; i < (int)len; i++)
				f[i] = (uint8_t)rand();
		} else {
			len = blen[which];
			memcpy(f, base[which], len);
			for (i = 0; i < 1 + rand() % 4; i++) {
				int pos = rand() % (int)len;

				/* keep tree B's identity out of reach */
				f[pos] = (uint8_t)rand();
			}
			if (rand() % 4 == 0)
				len = (size_t)(rand() % (int)len + 1);
			if (rand() % 2 && len >= 34 && (f[14] >> 4) == 4 &&
			    (size_t)(f[14] & 15) * 4 + 14 <= len) {
				fix_ip_csum(f, (size_t)(f[14] & 15) * 4);
			}
		}
		n = rx(sw, f, len, rand() % (NP + 1), now);
		assert_true(n >= 0 && n <= MAXOUT);
		for (i = 0; i < n; i++) {
			int rc = parse_out(&outv[i], &pi, &o, NULL);

			assert_true(rc == INART_WIRE_OK || rc == 1);
		}
		if (it % 7 == 0) {
			n = tick(sw, now, MAXOUT);
			for (i = 0; i < n; i++) {
				assert_int_equal(parse_out(&outv[i], &pi, &o, got), INART_WIRE_OK);
				assert_true(o.flags & INART_F_PARTIAL);
				if (o.job == 0x11111111)
					continue;
				/* tree B's partial aggregate: exactly ranks 0..2 */
				assert_int_equal(o.job, 0x22222222);
				assert_int_equal(o.label, 0x0e0e0e0e);
				assert_true(o.bitmap[0] == 0x7);
				assert_int_equal(o.count, 64);
				for (k = 0; k < 64; k++)
					assert_true(got[k] == refb[k]);
				b_flushed++;
			}
		}
	}
	assert_int_equal(b_flushed, 1);
	{
		struct inart_sw_tree_stats tb = tree_of(sw, 0x22222222, 2);

		assert_int_equal(tb.aggregated, 3);
		assert_int_equal(tb.partial, 1);
		assert_int_equal(tb.duplicates + tb.fallback + tb.emitted, 0);
	}
	inart_switch_destroy(sw);
}

/* Tree B's chunk keeps its exact state while tree A receives garbage, if the
 * flush timeout is long enough not to interfere. */
static void test_garbage_isolation(void **state)
{
	struct inart_switch *sw = mk_switch(32, 64, UINT64_MAX / 2);
	struct inart_label_entry e[2];
	struct inart_wire_hdr ha = data_hdr(0x11111111, 1, 0x0a0a0a0a, 1, 8);
	struct inart_wire_hdr hb = data_hdr(0x22222222, 2, 0x0b0b0b0b, 1, 4), o;
	struct inart_pkt_info pi;
	int32_t v[64], got[64];
	int64_t refb[64] = {0};
	uint8_t base[INART_FRAME_MAX], f[INART_FRAME_MAX];
	size_t blen, len;
	struct inart_err why = {{0}};
	int it, i, k;

	(void)state;
	srand(6160);
	e[0] = up_agg(0x0a0a0a0a, 0x11111111, 1, 0, 16, 1, 8, 0x0d0d0d0d);
	e[1] = up_agg(0x0b0b0b0b, 0x22222222, 2, 16, 16, 1, 4, 0x0e0e0e0e);
	assert_int_equal(apply1(sw, e, 2, NULL, 0, &why), 0);
	hb.count = 64;
	hb.seq = 5;
	hb.slot = 5;
	for (k = 0; k < 3; k++)
		assert_int_equal(rx_tree_b(sw, &hb, k, refb), 0);
	ha.count = 64;
	ha.seq = 5; /* same seq and slot number as tree B's chunk */
	ha.slot = 5;
	set_rank(&ha, 0);
	for (i = 0; i < 64; i++)
		v[i] = rand();
	blen = ina_frame(base, &ha, v, 1, IP(10, 0, 1, 1), PS_IP);
	for (it = 0; it < 20000; it++) {
		len = blen;
		memcpy(f, base, len);
		/* mutate only the INA header and payload, fix nothing else */
		for (i = 0; i < 1 + rand() % 3; i++) {
			int pos = INART_PKT_UDP_HLEN + rand() % (int)(len - INART_PKT_UDP_HLEN);

			f[pos] = (uint8_t)rand();
		}
		rx(sw, f, len, 1, (uint64_t)it);
	}
	assert_int_equal(rx_tree_b(sw, &hb, 3, refb), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.job, 0x22222222);
	assert_true(o.bitmap[0] == 0xf);
	assert_int_equal(o.flags, INART_F_DATA);
	for (i = 0; i < 64; i++)
		assert_true(got[i] == refb[i]);
	inart_switch_destroy(sw);
}

/* ---- loss recovery ---- */

/* A slot waits only for ranks that can still come: a rank that sent a chunk
 * INART_SW_LOST_AFTER later (through this entry, not as a fallback from
 * below) is gone for it, so the slot is flushed at once (before the later
 * chunk is aggregated); a contribution starting a slot whose other ranks are
 * gone leaves at once too. */
static void test_early_flush(void **state)
{
	struct inart_switch *sw = agg_switch(1000000, 8, 3);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {10, 20}, got[2];

	(void)state;
	h.count = 2;
	/* chunk 0 from ranks 0 and 1; rank 2's chunk 0 is lost */
	for (int r = 0; r < 2; r++) {
		set_rank(&h, r);
		assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 100), 0);
	}
	/* rank 2's chunk 1: nothing said yet (an allowance for reordering) */
	set_rank(&h, 2);
	h.seq = h.slot = 1;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 200), 0);
	assert_int_equal(tree_of(sw, 42, 3).early, 0);
	/* its chunk 2: chunk 0 cannot complete any more and leaves first */
	h.seq = h.slot = 2;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 300), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_int_equal(o.seq, 0);
	assert_true(o.bitmap[0] == 0x3);
	assert_int_equal(got[1], 40);
	assert_int_equal(o.label, 77);
	assert_int_equal(tree_of(sw, 42, 3).early, 1);
	assert_int_equal(tree_of(sw, 42, 3).partial, 1);
	/* rank 0's chunk 1 arrives late: rank 1 may still come, it waits */
	set_rank(&h, 0);
	h.seq = h.slot = 1;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 400), 0);
	/* rank 1's chunk 3 shows its chunk 1 was lost: chunk 1 leaves */
	set_rank(&h, 1);
	h.seq = h.slot = 3;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 500), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.seq, 1);
	assert_true(o.bitmap[0] == 0x5);
	/* a fallback from below says nothing about its ranks' progress (it may
	 * overtake their contributions held in a slot below): rank 2's chunk 9
	 * as a fallback, then rank 1's chunk 8 does not flush chunk 6 */
	set_rank(&h, 2);
	h.seq = 9;
	h.slot = 1;
	h.flags = INART_F_DATA | INART_F_FALLBACK;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 600), 0);
	h.flags = INART_F_DATA;
	set_rank(&h, 0);
	h.seq = h.slot = 6;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 700), 0);
	set_rank(&h, 1);
	h.seq = 8;
	h.slot = 0;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 800), 0);
	/* rank 2's own contribution to chunk 6 arrives: rank 1 is gone, it
	 * leaves */
	set_rank(&h, 2);
	h.seq = h.slot = 6;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 900), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_true(o.bitmap[0] == 0x5);
	inart_switch_destroy(sw);
}

/* A job started again (new workers count iterations from 1) after the
 * entry saw nothing for INART_SW_RESTART_IDLE_NS aggregates as before; within
 * that time an older iteration's chunk finds the ranks' records of the old
 * run, which show it given up, and leaves at once as a partial aggregate. */
static void test_restart_idle(void **state)
{
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 2), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {10, 20}, got[2];
	uint64_t t = 1000, quiet[2] = {INART_SW_RESTART_IDLE_NS / 2, INART_SW_RESTART_IDLE_NS};

	(void)state;
	h.count = 2;
	for (int k = 0; k < 2; k++) {
		struct inart_switch *sw = agg_switch(100000000, 8, 2);

		/* the first run: iteration 5, chunks 0..3 complete */
		h.iter = 5;
		for (uint32_t c = 0; c < 4; c++) {
			h.seq = h.slot = c;
			set_rank(&h, 0);
			assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), t += 1000), 0);
			set_rank(&h, 1);
			assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), t += 1000), 1);
		}
		/* the job again, from iteration 1, after a quiet time */
		t += quiet[k];
		h.iter = 1;
		h.seq = h.slot = 0;
		set_rank(&h, 0);
		if (k == 0) { /* within the idle time: rank 1 looks gone */
			assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), t), 1);
			assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
			assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
		} else { /* a restart: it waits for rank 1, then completes */
			assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), t), 0);
			set_rank(&h, 1);
			assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), t + 1000), 1);
			assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
			assert_int_equal(o.flags, INART_F_DATA);
			assert_true(o.bitmap[0] == 0x3);
			assert_int_equal(got[1], 40);
			assert_int_equal(tree_of(sw, 42, 3).partial, 0);
		}
		inart_switch_destroy(sw);
	}
}

/* A partial aggregate from below joins an open slot of its chunk but never
 * waits in a fresh one; a busy slot whose chunk cannot complete any more is
 * flushed to make room for a new chunk. */
static void test_partial_and_evict(void **state)
{
	struct inart_switch *sw = agg_switch(1000000, 1, 3); /* one slot */
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {10, 20}, got[2];

	(void)state;
	h.count = 2;
	/* a partial of ranks {0, 1} with no slot open: goes on at once */
	h.flags = INART_F_DATA | INART_F_PARTIAL;
	h.bitmap[0] = 0x3;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 100), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_true(o.bitmap[0] == 0x3);
	assert_int_equal(o.label, 77);
	assert_int_equal(tree_of(sw, 42, 3).aggregated, 0);
	/* with rank 2 waiting in the slot it joins and completes it */
	h.flags = INART_F_DATA;
	h.seq = h.slot = 1;
	set_rank(&h, 2);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 200), 0);
	h.flags = INART_F_DATA | INART_F_PARTIAL;
	h.bitmap[0] = 0x3;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 300), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA);
	assert_true(o.bitmap[0] == 0x7);
	assert_int_equal(got[0], 20);
	/* chunk 2 from ranks 0, 1 holds the one slot; rank 2 jumps to chunk 9
	 * (its chunks in between are not seen here): chunk 9 finds the slot
	 * busy with a chunk that cannot complete any more, which is flushed
	 * to make room */
	h.flags = INART_F_DATA;
	h.seq = 2;
	h.slot = 0;
	for (int r = 0; r < 2; r++) {
		set_rank(&h, r);
		assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 400), 0);
	}
	set_rank(&h, 2);
	h.seq = 9;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 500), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.seq, 2);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_int_equal(tree_of(sw, 42, 3).early, 1);
	assert_int_equal(tree_of(sw, 42, 3).fallback, 0);
	assert_true(inart_switch_next_deadline(sw) == 500 + 1000000); /* chunk 9's slot */
	inart_switch_destroy(sw);
}

/* A NACK passing down: a kept aggregate holding only ranks the PS misses is
 * sent up again (once per NACK round) and its ranks leave the NACK; a slot
 * still waiting that holds a rank asked for is flushed now. */
static void test_nack_repair(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 1000000);
	struct inart_label_entry e[2];
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 4), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {10, 20}, got[2];
	uint8_t f[INART_FRAME_MAX];
	struct inart_err why = {{0}};
	size_t len;

	(void)state;
	e[0] = up_agg(7, 42, 3, 0, 8, 1, 3, 77); /* ranks 0..2 below, rank 3 elsewhere */
	memset(&e[1], 0, sizeof(e[1]));
	e[1].label = 50;
	e[1].kind = INART_LABEL_DOWN;
	e[1].job = 42;
	e[1].tree = 3;
	e[1].n_down = 2;
	e[1].down = down_buf();
	DN(e[1])[0] = (struct inart_label_down){1, 0, IP(10, 0, 1, 1)};
	DN(e[1])[1] = (struct inart_label_down){2, 0, IP(10, 0, 2, 1)};
	assert_int_equal(apply1(sw, e, 2, NULL, 0, &why), 0);
	h.count = 2;
	for (int r = 0; r < 3; r++) {
		set_rank(&h, r);
		assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 100), r == 2 ? 1 : 0);
	}
	/* the aggregate was lost on the way: the PS NACKs ranks 0..3 */
	h = data_hdr(42, 3, 50, 1, 4);
	h.flags = INART_F_RESULT | INART_F_NACK;
	h.bitmap[0] = 0xf;
	h.prev = 1;
	len = ina_frame(f, &h, NULL, 0, PS_IP, IP(10, 255, 0, 1));
	assert_int_equal(rx(sw, f, len, 0, 200), 3);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_RETX);
	assert_int_equal(o.label, 77);
	assert_true(o.bitmap[0] == 0x7);
	assert_int_equal(got[1], 60);
	assert_int_equal(outv[0].port, 0);
	for (int i = 1; i < 3; i++) { /* the NACK goes on for rank 3 only */
		assert_int_equal(parse_out(&outv[i], &pi, &o, NULL), INART_WIRE_OK);
		assert_int_equal(o.flags, INART_F_RESULT | INART_F_NACK);
		assert_true(o.bitmap[0] == 0x8);
	}
	assert_int_equal(tree_of(sw, 42, 3).repaired, 1);
	/* a copy of the same round: not sent again, ranks still taken out */
	assert_int_equal(rx(sw, f, len, 0, 210), 2);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_true(o.flags & INART_F_NACK);
	/* round 2 (the repair was lost): again */
	h.prev = 2;
	h.bitmap[0] = 0x7;
	len = ina_frame(f, &h, NULL, 0, PS_IP, IP(10, 255, 0, 1));
	assert_int_equal(rx(sw, f, len, 0, 300), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_RETX);
	/* a NACK naming only rank 1: the PS has 0 and 2, the aggregate is no
	 * use; the NACK goes on to the workers */
	h.prev = 3;
	h.bitmap[0] = 0x2;
	len = ina_frame(f, &h, NULL, 0, PS_IP, IP(10, 255, 0, 1));
	assert_int_equal(rx(sw, f, len, 0, 400), 2);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_true(o.flags & INART_F_NACK);
	assert_true(o.bitmap[0] == 0x2);
	/* chunk 1: ranks 0 and 1 wait for rank 2; a NACK for rank 1 flushes
	 * them now and nobody below needs to retransmit */
	h = data_hdr(42, 3, 7, 1, 4);
	h.count = 2;
	h.seq = h.slot = 1;
	for (int r = 0; r < 2; r++) {
		set_rank(&h, r);
		assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 500), 0);
	}
	h = data_hdr(42, 3, 50, 1, 4);
	h.flags = INART_F_RESULT | INART_F_NACK;
	h.seq = h.slot = 1;
	h.bitmap[0] = 0x2;
	h.prev = 1;
	len = ina_frame(f, &h, NULL, 0, PS_IP, IP(10, 255, 0, 1));
	assert_int_equal(rx(sw, f, len, 0, 600), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_PARTIAL);
	assert_true(o.bitmap[0] == 0x3);
	inart_switch_destroy(sw);
}

/* A clean result passing down is kept in its chunk's slot; a probe going up
 * for that chunk is answered from it (RESULT|RETX to the prober, routed by
 * IPv4, as from the PS); other probes go on up. */
static void test_probe_answer(void **state)
{
	struct inart_switch *sw = mk_switch(64, 360, 1000000);
	struct inart_label_entry e[2];
	struct inart_route rt = {IP(10, 0, 1, 0), 24, 1};
	struct inart_wire_hdr h = data_hdr(42, 3, 50, 1, 3), o;
	struct inart_pkt_info pi;
	int32_t v[2] = {31, -5}, got[2];
	uint8_t f[INART_FRAME_MAX];
	struct inart_err why = {{0}};
	size_t len;

	(void)state;
	e[0] = up_agg(7, 42, 3, 0, 8, 1, 3, 77);
	memset(&e[1], 0, sizeof(e[1]));
	e[1].label = 50;
	e[1].kind = INART_LABEL_DOWN;
	e[1].job = 42;
	e[1].tree = 3;
	e[1].n_down = 1;
	e[1].down = down_buf();
	DN(e[1])[0] = (struct inart_label_down){1, 0, IP(10, 0, 1, 1)};
	assert_int_equal(apply1(sw, e, 2, &rt, 1, &why), 0);
	h.flags = INART_F_RESULT;
	h.seq = h.slot = 5;
	h.count = 2;
	h.bitmap[0] = 0x7;
	h.prev = 1 + 4;
	len = ina_frame(f, &h, v, 0, PS_IP, IP(10, 255, 0, 1));
	assert_int_equal(rx(sw, f, len, 0, 100), 1);
	/* a worker that missed it probes */
	h = data_hdr(42, 3, 7, 1, 3);
	h.flags = INART_F_DATA | INART_F_RETX | INART_F_NACK;
	h.seq = h.slot = 5;
	set_rank(&h, 1);
	len = ina_frame(f, &h, NULL, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 200), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_RESULT | INART_F_RETX);
	assert_int_equal(o.seq, 5);
	assert_int_equal(o.label, 0);
	assert_int_equal(o.prev, 5);
	assert_true(o.bitmap[0] == 0x7);
	assert_int_equal(got[0], 31);
	assert_int_equal(got[1], -5);
	assert_int_equal(outv[0].port, 1);
	assert_int_equal(pi.dst_ip, IP(10, 0, 1, 1));
	assert_int_equal(pi.src_ip, PS_IP);
	assert_int_equal(pi.dport, 40000);
	assert_int_equal(pi.sport, INART_WIRE_UDP_PORT);
	assert_int_equal(tree_of(sw, 42, 3).answered, 1);
	/* a probe for a chunk not kept goes on up */
	h.seq = h.slot = 6;
	len = ina_frame(f, &h, NULL, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 300), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.flags, INART_F_DATA | INART_F_RETX | INART_F_NACK);
	assert_int_equal(o.label, 77);
	assert_int_equal(outv[0].port, 0);
	/* a new chunk in the slot replaces the kept result */
	h = data_hdr(42, 3, 7, 1, 3);
	h.count = 2;
	h.seq = 13;
	h.slot = 5;
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 400), 0);
	h.flags = INART_F_DATA | INART_F_RETX | INART_F_NACK;
	h.count = 0;
	h.seq = 5;
	len = ina_frame(f, &h, NULL, 1, IP(10, 0, 1, 1), PS_IP);
	assert_int_equal(rx(sw, f, len, 1, 500), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, NULL), INART_WIRE_OK);
	assert_int_equal(o.label, 77);
	inart_switch_destroy(sw);
}

/* ---- ingress filtering, TTL, memory (issue 7, issue 8) ---- */

/* mk_switch with hosts on ports 1..3 (host p has address 10.0.1.p: the
 * first hop of its traffic) and a switch on port 0 (no check). */
static struct inart_switch *mk_switch_hosts(void)
{
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;

	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = NP;
	for (int p = 0; p < NP; p++) {
		port_mac(p, cfg.ports[p].mac);
		cfg.ports[p].ip = IP(10, 255, 0, p + 1);
		if (p >= 1 && p <= 3)
			cfg.ports[p].peer_ip = IP(10, 0, 1, p);
	}
	memcpy(cfg.ports[0].peer_mac, peer0, 6);
	cfg.pool_slots = 64;
	cfg.max_values = 360;
	cfg.flush_timeout_ns = 1000000;
	sw = inart_switch_create(&cfg);
	assert_non_null(sw);
	return sw;
}

/* A host can contribute only as its own rank, from its own address, along
 * labels that may arrive on its port: forged contributions of another rank
 * (which could replace or complete the real ones), spoofed sources and
 * results injected from a host port are dropped, counted by reason, and
 * change no state.  Before the fix the switch took a contribution of any
 * rank in the subtree from any port and address. */
static void test_ingress_filter(void **state)
{
	struct inart_switch *sw = mk_switch_hosts();
	struct inart_label_entry e[2];
	struct inart_sw_ingress ing[3] = {{1, 0, 42}, {2, 1, 42}, {3, 2, 42}};
	struct inart_route rt = {IP(10, 0, 0, 0), 8, 0};
	struct inart_sw_update u;
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3);
	struct inart_sw_tree_stats ts;
	struct inart_pkt_info pi;
	struct inart_wire_hdr o;
	uint8_t f[INART_FRAME_MAX];
	int32_t v[4] = {1, 2, 3, 4}, got[4];
	struct inart_err why = {{0}};
	size_t len;

	(void)state;
	e[0] = up_agg(7, 42, 3, 0, 8, 1, 3, 77);
	e[0].in_ports = 0xe; /* ports 1..3: the workers */
	memset(&e[1], 0, sizeof(e[1]));
	e[1].label = 50;
	e[1].kind = INART_LABEL_DOWN;
	e[1].job = 42;
	e[1].tree = 3;
	e[1].in_ports = 0x1; /* from the PS side only */
	e[1].n_down = 1;
	e[1].down = down_buf();
	DN(e[1])[0] = (struct inart_label_down){1, 0, IP(10, 0, 1, 1)};
	memset(&u, 0, sizeof(u));
	u.n_labels = 2;
	u.labels = e;
	u.n_routes = 1;
	u.routes = &rt;
	u.n_ingress = 3;
	u.ingress = ing;
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	assert_int_equal(inart_switch_get_ingress(sw, NULL, 0), 3);
	h.count = 4;
	h.seq = h.slot = 1;
	/* rank 0's real contribution */
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 10), 0);
	/* host 1 forging rank 1, or ranks 0 and 1 (a superset) */
	set_rank(&h, 1);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 11), 0);
	h.bitmap[0] = 3;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 12), 0);
	/* ... or rank 2's retransmission straight to the PS (label 0) */
	set_rank(&h, 2);
	h.label = 0;
	h.flags = INART_F_DATA | INART_F_RETX;
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 13), 0);
	h.label = 7;
	h.flags = INART_F_DATA;
	/* a job the host is not a worker of */
	h.job = 43;
	set_rank(&h, 0);
	assert_int_equal(rx_up(sw, &h, v, 1, IP(10, 0, 1, 1), 14), 0);
	h.job = 42;
	assert_int_equal(drops_of(sw, INART_DROP_RANK), 4);
	/* host 2 sending as host 1 (spoofed source address), for its own rank */
	set_rank(&h, 1);
	assert_int_equal(rx_up(sw, &h, v, 2, IP(10, 0, 1, 1), 15), 0);
	assert_int_equal(drops_of(sw, INART_DROP_SPOOFED), 1);
	/* a result injected from a host port on a DOWN label */
	{
		struct inart_wire_hdr r = data_hdr(42, 3, 50, 1, 3);

		r.flags = INART_F_RESULT;
		r.bitmap[0] = 7;
		r.count = 4;
		len = ina_frame(f, &r, v, 2, IP(10, 0, 1, 2), IP(10, 0, 1, 1));
		assert_int_equal(rx(sw, f, len, 2, 16), 0);
		assert_int_equal(drops_of(sw, INART_DROP_INGRESS), 1);
		/* from the PS side it goes down */
		len = ina_frame(f, &r, v, 0, PS_IP, IP(10, 0, 1, 1));
		assert_int_equal(rx(sw, f, len, 0, 17), 1);
	}
	/* plain IPv4 and ARP from a host keep to its address too */
	{
		uint8_t sm[6], dm[6], pl[8] = {0};
		uint8_t arp[64];

		host_mac(3, sm);
		port_mac(3, dm);
		len = inart_pkt_build_udp(f, sizeof(f), sm, dm, IP(10, 0, 1, 9), IP(10, 0, 5, 5), 1,
					  2, pl, sizeof(pl));
		assert_int_equal(rx(sw, f, len, 3, 18), 0);
		len = inart_pkt_build_udp(f, sizeof(f), sm, dm, IP(10, 0, 1, 3), IP(10, 0, 5, 5), 1,
					  2, pl, sizeof(pl));
		assert_int_equal(rx(sw, f, len, 3, 19), 1); /* its own address: routed */
		len = inart_pkt_build_arp_reply(arp, sizeof(arp), sm, IP(10, 0, 1, 1), dm,
						IP(10, 0, 1, 7));
		arp[21] = 1; /* a request from 10.0.1.1 (not host 3) */
		assert_int_equal(rx(sw, arp, len, 3, 20), 0);
		assert_int_equal(drops_of(sw, INART_DROP_SPOOFED), 3);
	}
	/* nothing of that touched the slot: ranks 1 and 2 complete it with
	 * exactly the real contributions */
	ts = tree_of(sw, 42, 3);
	assert_int_equal(ts.aggregated, 1);
	v[0] = 10;
	set_rank(&h, 1);
	assert_int_equal(rx_up(sw, &h, v, 2, IP(10, 0, 1, 2), 21), 0);
	v[0] = 100;
	set_rank(&h, 2);
	assert_int_equal(rx_up(sw, &h, v, 3, IP(10, 0, 1, 3), 22), 1);
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_true(o.bitmap[0] == 7);
	assert_int_equal(got[0], 1 + 10 + 100);
	assert_int_equal(got[1], 6);
	/* a switch port is not filtered: any source */
	set_rank(&h, 0);
	h.seq = h.slot = 2;
	assert_int_equal(rx_up(sw, &h, v, 0, IP(10, 9, 9, 9), 23), 0);
	assert_int_equal(drops_of(sw, INART_DROP_INGRESS), 2); /* label 7 not from port 0 */
	inart_switch_destroy(sw);
}

/* Label-switched packets obey the IPv4 TTL like routed ones: a contribution
 * with TTL 1 is dropped (not aggregated), and an aggregate leaves with one
 * less than the smallest TTL of what it sums, so a loop in the tables ends.
 * Before the fix a TTL-1 contribution was aggregated and every aggregate
 * left with TTL 64. */
static void test_ttl_label_switched(void **state)
{
	struct inart_switch *sw = agg_switch(1000000, 8, 3);
	struct inart_wire_hdr h = data_hdr(42, 3, 7, 1, 3), o;
	struct inart_pkt_info pi;
	uint8_t f[INART_FRAME_MAX];
	int32_t v[2] = {5, 6}, got[2];
	static const uint8_t ttl[3] = {10, 5, 64};
	size_t len;

	(void)state;
	h.count = 2;
	h.seq = h.slot = 3;
	set_rank(&h, 0);
	len = ina_frame(f, &h, v, 1, IP(10, 0, 1, 1), PS_IP);
	f[22] = 1;
	fix_ip_csum(f, 20);
	assert_int_equal(rx(sw, f, len, 1, 10), 0);
	assert_int_equal(drops_of(sw, INART_DROP_TTL), 1);
	assert_int_equal(tree_of(sw, 42, 3).aggregated, 0);
	for (int r = 0; r < 3; r++) {
		set_rank(&h, r);
		len = ina_frame(f, &h, v, 1 + r, IP(10, 0, 1, 1 + r), PS_IP);
		f[22] = ttl[r];
		fix_ip_csum(f, 20);
		assert_int_equal(rx(sw, f, len, 1 + r, 11 + (uint64_t)r), r == 2 ? 1 : 0);
	}
	assert_int_equal(parse_out(&outv[0], &pi, &o, got), INART_WIRE_OK);
	assert_int_equal(pi.ttl, 4);
	assert_int_equal(got[0], 15);
	inart_switch_destroy(sw);
}

/* The aggregator pool is capped: pool_slots x max_values at most
 * INART_SW_MAX_POOL_VALUES int32 sums (512 MiB). */
static void test_pool_cap(void **state)
{
	struct inart_sw_cfg cfg;

	(void)state;
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = 2;
	cfg.pool_slots = INART_SW_MAX_POOL_SLOTS;
	cfg.max_values = 358;
	assert_null(inart_switch_create(&cfg));
	cfg.pool_slots = (int)(INART_SW_MAX_POOL_VALUES / 358) + 1;
	assert_null(inart_switch_create(&cfg));
	cfg.max_values = INART_SW_MAX_SLOT_VALUES + 1;
	cfg.pool_slots = 4;
	assert_null(inart_switch_create(&cfg));
	cfg.max_values = 358;
	inart_switch_destroy(inart_switch_create(&cfg));
}

/* Memory of the label table (issue 8): an entry takes what its kind uses,
 * the table is not copied whole on an update.  1M labels (60% forwarding UP
 * entries, 30% DOWN entries with 2 copies, 10% aggregating entries of 4
 * ranks) must take at most 80 bytes each on average (docs/dataplane.md
 * states the formula), both as the table counts it and as the heap grew.
 * Before the fix every entry took about 0.9 KB (the 64-copy array inline),
 * and an update copied the whole table. */
/* Entry e of the memory tests: kind 0 forwarding UP, 1 DOWN with 2 copies,
 * 2 aggregating UP with 4 ranks at slot. */
static void mem_entry(struct inart_label_entry *e, uint32_t label, uint32_t job, int kind,
		      uint16_t slot)
{
	static const struct inart_label_down two[2] = {{1, 5, 0}, {2, 6, 0}};
	static const uint64_t four[1] = {0xf};

	memset(e, 0, sizeof(*e));
	e->label = label;
	e->job = job;
	e->kind = kind == 1 ? INART_LABEL_DOWN : INART_LABEL_UP;
	if (kind == 0) {
		e->out_port = 3;
		e->next_label = label + 1;
	} else if (kind == 1) {
		e->n_down = 2;
		e->down = two;
	} else {
		e->aggregate = 1;
		e->slot_base = slot;
		e->n_slots = 1;
		e->bitmap_words = 1;
		e->expected = four;
	}
}

static void test_table_memory(void **state)
{
	const int n = 1 << 20, jobs = 1000;
	struct inart_sw_cfg cfg;
	struct inart_switch *sw;
	struct inart_label_entry *e = calloc((size_t)n, sizeof(*e));
	struct inart_sw_update u;
	struct mallinfo2 m0, m1;
	size_t bytes, heap;
	struct inart_err why = {{0}};

	(void)state;
	assert_non_null(e);
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = 4;
	cfg.pool_slots = jobs;
	cfg.max_values = 358;
	sw = inart_switch_create(&cfg);
	assert_non_null(sw);
	for (int i = 0; i < n; i++)
		mem_entry(&e[i], (uint32_t)i + 1, (uint32_t)(i % jobs),
			  i % 10 < 6   ? 0
			  : i % 10 < 9 ? 1
				       : 2,
			  (uint16_t)(i % jobs));
	memset(&u, 0, sizeof(u));
	u.n_labels = n;
	u.labels = e;
	m0 = mallinfo2();
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	m1 = mallinfo2();
	bytes = inart_sw_tables_bytes(inart_switch_tables(sw));
	heap = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
	print_message("1M labels: the table counts %.1f MB (%.1f B/label), the heap grew by "
		      "%.1f MB\n",
		      bytes / 1e6, (double)bytes / n, heap / 1e6);
	assert_true(bytes <= 80u * (size_t)n);
	assert_true(heap <= 80u * (size_t)n);
	/* a small update does not copy the whole table's worth twice over */
	u.n_labels = 1;
	e[0].next_label = 99;
	m0 = mallinfo2();
	assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
	m1 = mallinfo2();
	assert_true((m1.uordblks + m1.hblkhd) <= (m0.uordblks + m0.hblkhd) + 4096);
	inart_switch_destroy(sw);
	free(e);
}

/* The memory of each kind of label entry, as docs/dataplane.md ("Memory of
 * a switch") states it: 56 bytes an entry, 12 a DOWN copy, 8 an expected
 * bitmap word and 8 an expected rank's progress, 88 a (job, tree), 4 an
 * index cell (cells: the power of two >= 2 x entries, at least 16).  A
 * table of one kind of entry counts exactly that. */
static void test_entry_memory(void **state)
{
	const int n = 1000, cells = 2048;
	struct inart_label_entry *e = calloc((size_t)n, sizeof(*e));
	struct inart_sw_cfg cfg;
	struct inart_sw_update u;
	struct inart_err why = {{0}};
	size_t base, per[3];

	(void)state;
	assert_non_null(e);
	assert_int_equal(sizeof(struct lent), 56);
	assert_int_equal(sizeof(struct inart_label_down), 12);
	assert_int_equal(sizeof(struct inart_rank_pos), 8);
	assert_int_equal(sizeof(struct inart_sw_tree_stats), 88);
	memset(&cfg, 0, sizeof(cfg));
	cfg.n_ports = 4;
	cfg.pool_slots = n;
	cfg.max_values = 358;
	/* the fixed part and the ingress offsets, counted by an empty set */
	{
		struct inart_switch *sw = inart_switch_create(&cfg);

		assert_non_null(sw);
		base = inart_sw_tables_bytes(inart_switch_tables(sw)) - 16 * 4;
		inart_switch_destroy(sw);
	}
	for (int kind = 0; kind < 3; kind++) {
		struct inart_switch *sw = inart_switch_create(&cfg);
		size_t bytes;

		assert_non_null(sw);
		for (int i = 0; i < n; i++) /* a tree each */
			mem_entry(&e[i], (uint32_t)i + 1, (uint32_t)i, kind, (uint16_t)i);
		memset(&u, 0, sizeof(u));
		u.n_labels = n;
		u.labels = e;
		assert_int_equal(inart_switch_apply(sw, &u, &why), 0);
		bytes = inart_sw_tables_bytes(inart_switch_tables(sw));
		assert_true(bytes > base + (size_t)cells * 4 + (size_t)n * 88);
		per[kind] = bytes - base - (size_t)cells * 4 - (size_t)n * 88;
		inart_switch_destroy(sw);
	}
	assert_int_equal(per[0], (size_t)n * 56);	     /* forwarding UP */
	assert_int_equal(per[1], (size_t)n * (56 + 2 * 12)); /* DOWN, 2 copies */
	/* aggregating, 4 ranks: a progress record each and the entry's clock */
	assert_int_equal(per[2], (size_t)n * (56 + 8 + 5 * 8));
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create),
	    cmocka_unit_test(test_apply_validation),
	    cmocka_unit_test(test_arp),
	    cmocka_unit_test(test_ipv4_forward),
	    cmocka_unit_test(test_aggregate_2_to_100),
	    cmocka_unit_test(test_drops),
	    cmocka_unit_test(test_fallback),
	    cmocka_unit_test(test_partial_flush),
	    cmocka_unit_test(test_retx_and_forward),
	    cmocka_unit_test(test_down_replication),
	    cmocka_unit_test(test_overflow),
	    cmocka_unit_test(test_lose_state_and_orphans),
	    cmocka_unit_test(test_drop_names),
	    cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_garbage_isolation),
	    cmocka_unit_test(test_early_flush),
	    cmocka_unit_test(test_restart_idle),
	    cmocka_unit_test(test_partial_and_evict),
	    cmocka_unit_test(test_nack_repair),
	    cmocka_unit_test(test_ingress_filter),
	    cmocka_unit_test(test_ttl_label_switched),
	    cmocka_unit_test(test_pool_cap),
	    cmocka_unit_test(test_table_memory),
	    cmocka_unit_test(test_cfg_reason),
	    cmocka_unit_test(test_entry_memory),
	    cmocka_unit_test(test_probe_answer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
