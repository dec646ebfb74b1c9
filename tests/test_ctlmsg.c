/* Tests of ctlmsg (control messages: framing, parsing with reasons,
 * encode/parse round trips, seeded mutations), of ctlproto/ctlsock (a server in a
 * thread, real UNIX socket) and of bridge/deploy (file reader/writer). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/rng.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlauth.h"
#include "ctlproto/ctlsock.h"
#include "bridge/deploy.h"
#include "testutil.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static int parse(const char *s, struct inart_ctl_req *r, struct inart_err *e)
{
	return inart_ctl_req_parse(s, strlen(s), r, e);
}

static void test_framing(void **state)
{
	uint8_t b[8];
	uint32_t n = 0;

	(void)state;
	inart_ctl_frame_hdr(b, 0x01020304);
	assert_int_equal(b[0], 1);
	assert_int_equal(b[3], 4);
	inart_ctl_frame_hdr(b, 3);
	memcpy(b + 4, "abc", 3);
	assert_int_equal(inart_ctl_frame_check(b, 3, &n), 0); /* header incomplete */
	assert_int_equal(inart_ctl_frame_check(b, 6, &n), 0); /* body incomplete */
	assert_int_equal(n, 3);
	assert_int_equal(inart_ctl_frame_check(b, 7, &n), 1);
	inart_ctl_frame_hdr(b, 0);
	assert_int_equal(inart_ctl_frame_check(b, 4, &n), -EMSGSIZE);
	inart_ctl_frame_hdr(b, INART_CTL_MAX_MSG + 1);
	assert_int_equal(inart_ctl_frame_check(b, 4, &n), -EMSGSIZE);
	inart_ctl_frame_hdr(b, INART_CTL_MAX_MSG);
	assert_int_equal(inart_ctl_frame_check(b, 4, &n), 0);
}

static void test_text_helpers(void **state)
{
	uint32_t ip;
	uint8_t mac[6];
	char s[18];

	(void)state;
	assert_int_equal(inart_addr_parse_ip("10.1.2.3", &ip), 0);
	assert_int_equal(ip, IP(10, 1, 2, 3));
	inart_addr_fmt_ip(IP(192, 168, 0, 255), s);
	assert_string_equal(s, "192.168.0.255");
	assert_int_equal(inart_addr_parse_ip("10.1.2", &ip), -1);
	assert_int_equal(inart_addr_parse_ip("10.1.2.256", &ip), -1);
	assert_int_equal(inart_addr_parse_ip("10.1.2.3.4", &ip), -1);
	assert_int_equal(inart_addr_parse_ip("10..2.3", &ip), -1);
	assert_int_equal(inart_addr_parse_ip("0010.1.2.3", &ip), -1);
	assert_int_equal(inart_addr_parse_ip("", &ip), -1);
	assert_int_equal(inart_addr_parse_mac("02:00:0a:Ff:10:01", mac), 0);
	assert_int_equal(mac[3], 0xff);
	inart_addr_fmt_mac(mac, s);
	assert_string_equal(s, "02:00:0a:ff:10:01");
	assert_int_equal(inart_addr_parse_mac("02:00:0a:ff:10", mac), -1);
	assert_int_equal(inart_addr_parse_mac("02:00:0a:ff:10:011", mac), -1);
	assert_int_equal(inart_addr_parse_mac("02-00-0a-ff-10-01", mac), -1);
	assert_int_equal(inart_addr_parse_mac("0g:00:0a:ff:10:01", mac), -1);
}

/* Two label entries are equal: fields and the arrays they point to. */
static void label_eq(const struct inart_label_entry *a, const struct inart_label_entry *b)
{
	assert_int_equal(a->label, b->label);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->job, b->job);
	assert_int_equal(a->tree, b->tree);
	assert_int_equal(a->in_ports, b->in_ports);
	assert_int_equal(a->out_port, b->out_port);
	assert_int_equal(a->next_label, b->next_label);
	assert_int_equal(a->aggregate, b->aggregate);
	assert_int_equal(a->slot_base, b->slot_base);
	assert_int_equal(a->n_slots, b->n_slots);
	assert_int_equal(a->bitmap_words, b->bitmap_words);
	if (a->bitmap_words > 0)
		assert_memory_equal(a->expected, b->expected, 8 * (size_t)a->bitmap_words);
	assert_int_equal(a->n_down, b->n_down);
	for (int i = 0; i < a->n_down; i++) {
		assert_int_equal(a->down[i].port, b->down[i].port);
		assert_int_equal(a->down[i].label, b->down[i].label);
		assert_int_equal(a->down[i].dst_ip, b->down[i].dst_ip);
	}
}

/* A request with every kind of entry. */
static void sample_install(struct inart_ctl_req *r, struct inart_label_entry *l,
			   struct inart_route *rt, uint32_t *del)
{
	static uint64_t exp[2] = {0xffffffffffffffffull, 0x8000000000000001ull};
	static struct inart_label_down dn[3];
	static struct inart_sw_ingress ing[2] = {{0, 3, 7}, {1, 1023, 4000000000u}};

	memset(r, 0, sizeof(*r));
	memset(l, 0, 3 * sizeof(*l));
	r->op = INART_CTL_INSTALL;
	strcpy(r->node, "s0");
	r->tab.replace = 1;
	r->has_cfg = 1;
	r->cfg.n_ports = 3;
	r->cfg.ports[0].mac[0] = 2;
	r->cfg.ports[0].mac[5] = 7;
	r->cfg.ports[0].ip = IP(10, 0, 0, 1);
	r->cfg.ports[2].peer_mac[0] = 2;
	r->cfg.ports[2].peer_mac[1] = 0xab;
	r->cfg.ports[1].peer_ip = IP(10, 0, 1, 9);
	r->cfg.pool_slots = 128;
	r->cfg.max_values = 300;
	r->cfg.flush_timeout_ns = 10000000;
	l[0].label = 7;
	l[0].kind = INART_LABEL_UP;
	l[0].job = 3;
	l[0].tree = 1;
	l[0].out_port = 2;
	l[0].next_label = 9;
	l[0].aggregate = 1;
	l[0].slot_base = 64;
	l[0].n_slots = 64;
	l[0].bitmap_words = 2;
	l[0].expected = exp;
	l[0].in_ports = 0x3;
	l[1].label = 4000000000u;
	l[1].kind = INART_LABEL_UP;
	l[1].job = 4000000000u;
	l[1].tree = 65535;
	l[1].out_port = 1;
	l[2].label = 12;
	l[2].kind = INART_LABEL_DOWN;
	l[2].job = 3;
	l[2].tree = 1;
	l[2].n_down = 3;
	l[2].in_ports = 1ull << 2;
	memset(dn, 0, sizeof(dn));
	dn[0].port = 0;
	dn[0].label = 0;
	dn[0].dst_ip = IP(10, 0, 1, 1);
	dn[1].port = 1;
	dn[1].label = 13;
	dn[2].port = 2;
	dn[2].label = 14;
	l[2].down = dn;
	r->tab.n_ingress = 2;
	r->tab.ingress = ing;
	strcpy(r->install_id, "0123456789abcdef");
	r->prepare = 1;
	r->tab.n_labels = 3;
	r->tab.labels = l;
	rt[0].prefix = IP(10, 0, 1, 1);
	rt[0].len = 32;
	rt[0].port = 0;
	rt[1].prefix = 0;
	rt[1].len = 0;
	rt[1].port = 2;
	r->tab.n_routes = 2;
	r->tab.routes = rt;
	del[0] = 5;
	del[1] = 6;
	r->tab.n_del_labels = 2;
	r->tab.del_labels = del;
}

static void test_install_roundtrip(void **state)
{
	struct inart_ctl_req r, p;
	struct inart_label_entry l[3];
	struct inart_route rt[2];
	uint32_t del[2];
	struct inart_err why = {{0}};
	char *s, *s2;

	(void)state;
	sample_install(&r, l, rt, del);
	s = inart_ctl_req_encode(&r);
	assert_non_null(s);
	assert_int_equal(parse(s, &p, &why), 0);
	assert_int_equal(p.op, INART_CTL_INSTALL);
	assert_string_equal(p.node, "s0");
	assert_int_equal(p.tab.replace, 1);
	assert_int_equal(p.has_cfg, 1);
	assert_int_equal(p.cfg.n_ports, 3);
	assert_memory_equal(p.cfg.ports, r.cfg.ports, 3 * sizeof(r.cfg.ports[0]));
	assert_int_equal(p.cfg.pool_slots, 128);
	assert_int_equal(p.cfg.max_values, 300);
	assert_int_equal(p.cfg.flush_timeout_ns, 10000000);
	assert_int_equal(p.tab.n_labels, 3);
	for (int i = 0; i < 3; i++)
		label_eq(&p.tab.labels[i], &l[i]);
	assert_int_equal(p.tab.n_ingress, 2);
	assert_memory_equal(p.tab.ingress, r.tab.ingress, 2 * sizeof(r.tab.ingress[0]));
	assert_string_equal(p.install_id, "0123456789abcdef");
	assert_int_equal(p.prepare, 1);
	assert_int_equal(p.tab.n_routes, 2);
	assert_memory_equal(p.tab.routes, rt, sizeof(rt));
	assert_int_equal(p.tab.n_del_labels, 2);
	assert_int_equal(p.tab.del_labels[1], 6);
	/* encoding is a function of the content */
	s2 = inart_ctl_req_encode(&p);
	assert_string_equal(s, s2);
	free(s);
	free(s2);
	inart_ctl_req_free(&p);
	inart_ctl_req_free(NULL);
}

static void test_trees_roundtrip(void **state)
{
	struct inart_ps_tree_cfg t[2];
	static const struct inart_ps_source src[3] = {
	    {IP(10, 0, 0, 7), 0}, {IP(10, 0, 0, 8), 63}, {IP(10, 0, 0, 9), INART_PS_ANY_RANK}};
	struct inart_ctl_req r = {.op = INART_CTL_TREES,
				  .replace = 1,
				  .reset = 1,
				  .n_trees = 2,
				  .trees = t},
			     p;
	struct inart_err why = {{0}};
	char *s;

	(void)state;
	memset(t, 0, sizeof(t));
	t[0].job = 1;
	t[0].tree = 0;
	t[0].fan_in = 64;
	t[0].n_children = 2;
	t[0].children[0].ip = IP(10, 0, 0, 2);
	t[0].children[0].label = 33;
	t[0].children[1].ip = IP(10, 0, 0, 3);
	t[1].job = 1;
	t[1].tree = 1;
	t[1].fan_in = 1024;
	t[1].max_chunks = 4096;
	t[0].n_sources = 3;
	t[0].sources = src;
	s = inart_ctl_req_encode(&r);
	assert_non_null(s);
	assert_int_equal(parse(s, &p, &why), 0);
	assert_int_equal(p.op, INART_CTL_TREES);
	assert_int_equal(p.replace, 1);
	assert_int_equal(p.reset, 1);
	assert_int_equal(p.n_trees, 2);
	assert_int_equal(p.trees[0].n_sources, 3);
	assert_memory_equal(p.trees[0].sources, src, sizeof(src));
	assert_null(p.trees[1].sources);
	p.trees[0].sources = t[0].sources; /* the rest byte for byte */
	assert_memory_equal(p.trees, t, sizeof(t));
	free(s);
	inart_ctl_req_free(&p);
}

/* The control messages' wire names (docs/wire.md), each with its op. */
static const struct {
	int op;
	const char *name;
} wire_names[] = {
    {INART_CTL_INFO, "info"},
    {INART_CTL_INSTALL, "install"},
    {INART_CTL_TABLES, "tables"},
    {INART_CTL_STATS, "stats"},
    {INART_CTL_RESET_STATS, "reset_stats"},
    {INART_CTL_LOSE_STATE, "lose_state"},
    {INART_CTL_LOG_LEVEL, "log_level"},
    {INART_CTL_TREES, "trees"},
    {INART_CTL_TREE_DEL, "tree_del"},
    {INART_CTL_SHOW, "show"},
    {INART_CTL_COMMIT, "commit"},
    {INART_CTL_ABORT, "abort"},
    {INART_CTL_ROLLBACK, "rollback"},
    {INART_CTL_PORT_COUNTERS, "port_counters"},
};

static void test_simple_ops(void **state)
{
	struct inart_ctl_req r;
	struct inart_err why = {{0}};

	(void)state;
	assert_int_equal(parse("{\"op\":\"stats\"}", &r, &why), 0);
	assert_int_equal(r.op, INART_CTL_STATS);
	assert_int_equal(parse("{\"op\":\"lose_state\",\"node\":\"t0\"}", &r, &why), 0);
	assert_int_equal(r.op, INART_CTL_LOSE_STATE);
	assert_string_equal(r.node, "t0");
	assert_int_equal(parse("{\"op\":\"log_level\",\"level\":\"debug\"}", &r, &why), 0);
	assert_int_equal(r.level, 3);
	assert_int_equal(parse("{\"op\":\"tree_del\",\"job\":5,\"tree\":2}", &r, &why), 0);
	assert_int_equal(r.job, 5);
	assert_int_equal(r.tree, 2);
	for (int op = INART_CTL_INFO; op <= INART_CTL_SHOW; op++) {
		struct inart_ctl_req q = {.op = op, .level = 1}, p;
		char *s = inart_ctl_req_encode(&q);

		assert_non_null(s);
		assert_int_equal(parse(s, &p, &why), 0);
		assert_int_equal(p.op, op);
		inart_ctl_req_free(&p);
		free(s);
	}
	assert_null(inart_ctl_op_name(0));
	assert_null(inart_ctl_op_name(INART_CTL_PORT_COUNTERS + 1));
	for (size_t i = 0; i < sizeof(wire_names) / sizeof(wire_names[0]); i++)
		assert_string_equal(inart_ctl_op_name(wire_names[i].op), wire_names[i].name);
	/* port_counters: no arguments */
	assert_int_equal(parse("{\"op\":\"port_counters\"}", &r, &why), 0);
	assert_int_equal(r.op, INART_CTL_PORT_COUNTERS);
	assert_int_equal(parse("{\"op\":\"port_counters\",\"x\":1}", &r, &why), -EINVAL);
}

/* Each must be refused with a reason containing `needle`. */
static void refused(const char *json, const char *needle)
{
	struct inart_ctl_req r;
	struct inart_err why = {{0}};
	int rc = parse(json, &r, &why);

	if (rc != -EINVAL || strstr(why.msg, needle) == NULL)
		fail_msg("'%s': rc %d, why.msg '%s' (expected '%s')", json, rc, why.msg, needle);
	assert_null(r.tab.labels);
	assert_int_equal(r.tab.n_labels, 0);
}

static void test_refusals(void **state)
{
	(void)state;
	refused("", "not JSON");
	refused("{\"op\": \"install\", ", "not JSON");
	refused("[1]", "object");
	refused("{\"op\": 3}", "'op'");
	refused("{\"op\": \"reboot\"}", "'op'");
	refused("{\"op\": \"stats\", \"x\": 1}", "unknown key 'x'");
	refused("{\"op\": \"stats\", \"op\": \"info\"}", "duplicate");
	refused("{\"op\": \"stats\", \"node\": 5}", "'node'");
	refused("{\"op\": \"install\", \"labels\": {}}", "'labels' must be an array");
	refused("{\"op\": \"install\", \"labels\": [5]}", "labels[0]: must be an object");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 0, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0}]}",
		"labels[0]: 'label' 0 out of range");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 4294967296, \"kind\": \"up\"}]}",
		"'label' 4294967296 out of range");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1.5}]}", "must be an integer");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"sideways\"}]}",
		"'kind'");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 65536, \"out_port\": 0}]}",
		"'tree' 65536");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0}]}",
		"missing 'out_port'");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"down\": []}]}",
		"'down' in an up entry");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"aggregate\": true, \"slot_base\": 0, "
		"\"n_slots\": 4}]}",
		"needs 'expected'");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"aggregate\": true, \"slot_base\": 0, "
		"\"n_slots\": 0, \"expected\": [\"1\"]}]}",
		"'n_slots' 0");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"aggregate\": true, \"slot_base\": 0, "
		"\"n_slots\": 1, \"expected\": [\"12345678901234567\"]}]}",
		"expected[0]");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"aggregate\": \"yes\"}]}",
		"'aggregate' must be true or false");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"up\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 0, \"expected\": [\"1\",\"1\",\"1\",\"1\",\"1\",\"1\","
		"\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"]}]}",
		"at most 16");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"down\", \"job\": 0, "
		"\"tree\": 0, \"down\": []}]}",
		"non-empty 'down'");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"down\", \"job\": 0, "
		"\"tree\": 0, \"out_port\": 1, \"down\": [{\"port\": 0}]}]}",
		"'out_port' in a down entry");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"down\", \"job\": 0, "
		"\"tree\": 0, \"down\": [{\"port\": 0, \"dst_ip\": \"10.0.0\"}]}]}",
		"down[0]: 'dst_ip'");
	refused("{\"op\": \"install\", \"labels\": [{\"label\": 1, \"kind\": \"down\", \"job\": 0, "
		"\"tree\": 0, \"down\": [{\"port\": 70000}]}]}",
		"labels[0]: down[0]: 'port' 70000 out of range");
	refused("{\"op\": \"install\", \"routes\": [{\"prefix\": \"10.0.0.0/33\", \"port\": 0}]}",
		"routes[0]: 'prefix'");
	refused("{\"op\": \"install\", \"routes\": [{\"prefix\": \"10.0.0.0\", \"port\": 0}]}",
		"routes[0]: 'prefix'");
	refused("{\"op\": \"install\", \"routes\": [{\"prefix\": \"10.0.0.0/\", \"port\": 0}]}",
		"routes[0]: 'prefix'");
	refused("{\"op\": \"install\", \"routes\": [{\"prefix\": \"10.0.0.0/8\"}]}",
		"missing 'port'");
	refused("{\"op\": \"install\", \"del_labels\": [0]}", "del_labels[0]");
	refused("{\"op\": \"install\", \"config\": {\"ports\": [], \"pool_slots\": 1, "
		"\"flush_timeout_ns\": 1}}",
		"config: 'ports'");
	refused("{\"op\": \"install\", \"config\": {\"ports\": [{\"mac\": \"zz\"}], "
		"\"pool_slots\": 1, \"flush_timeout_ns\": 1}}",
		"ports[0]: 'mac'");
	refused("{\"op\": \"install\", \"config\": {\"ports\": [{}], \"pool_slots\": -1, "
		"\"flush_timeout_ns\": 1}}",
		"'pool_slots'");
	refused("{\"op\": \"trees\"}", "missing 'trees'");
	refused("{\"op\": \"trees\", \"trees\": [{\"job\": 0, \"tree\": 0, \"fan_in\": 0}]}",
		"trees[0]: 'fan_in' 0");
	refused("{\"op\": \"trees\", \"trees\": [{\"job\": 0, \"tree\": 0, \"fan_in\": 1025}]}",
		"'fan_in' 1025");
	refused("{\"op\": \"trees\", \"trees\": [{\"job\": 0, \"tree\": 0, \"fan_in\": 2}, "
		"{\"job\": 0, \"tree\": 0, \"fan_in\": 2}]}",
		"listed twice");
	refused("{\"op\": \"trees\", \"trees\": [{\"job\": 0, \"tree\": 0, \"fan_in\": 2, "
		"\"children\": [{\"label\": 3}]}]}",
		"children[0]: missing 'ip'");
	refused("{\"op\": \"log_level\", \"level\": \"loud\"}", "'level'");
	refused("{\"op\": \"tree_del\", \"job\": 1}", "missing 'tree'");
}

static void test_limits(void **state)
{
	/* 65 down entries: one more than a switch replicates */
	size_t cap = 64 * 1024;
	char *s = malloc(cap);
	size_t n = 0;
	struct inart_ctl_req r;
	struct inart_err why = {{0}};

	(void)state;
	n += (size_t)snprintf(s + n, cap - n,
			      "{\"op\":\"install\",\"labels\":[{\"label\":1,\"kind\":\"down\","
			      "\"job\":0,\"tree\":0,\"down\":[");
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(s + n, cap - n, "%s{\"port\":%d}", i ? "," : "", i % 4);
	snprintf(s + n, cap - n, "]}]}");
	assert_int_equal(parse(s, &r, &why), -EINVAL);
	assert_non_null(strstr(why.msg, "at most 64"));
	free(s);
}

static void test_replies(void **state)
{
	json_t *d = json_object(), *o = NULL;
	struct inart_err why = {{0}};
	char *s;

	(void)state;
	json_object_set_new(d, "x", json_integer(5));
	s = inart_ctl_reply_ok(d);
	assert_non_null(s);
	assert_int_equal(inart_ctl_reply_parse(s, strlen(s), &o, &why), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "x")), 5);
	json_decref(o);
	free(s);
	s = inart_ctl_reply_err("labels[3]: bad port");
	assert_int_equal(inart_ctl_reply_parse(s, strlen(s), &o, &why), -EPERM);
	assert_string_equal(why.msg, "labels[3]: bad port");
	assert_null(o);
	free(s);
	assert_int_equal(inart_ctl_reply_parse("{}", 2, &o, &why), -EINVAL);
	assert_int_equal(inart_ctl_reply_parse("nope", 4, &o, &why), -EINVAL);
}

static void test_stats_json(void **state)
{
	uint64_t drops[INART_DROP_N] = {0};
	struct inart_sw_port_stats ports[2] = {{1, 100, 2, 200, 50, 60}, {3, 300, 4, 400, 70, 80}};
	struct inart_sw_tree_stats tr = {.job = 1, .tree = 2, .aggregated = 10, .emitted = 5};
	const char *names[2] = {"eth0", "eth1"};
	struct inart_ps_stats ps = {.rx = 7, .completed = 3};
	json_t *o;

	(void)state;
	drops[INART_DROP_NO_LABEL] = 9;
	o = inart_ctl_sw_stats_json(drops, ports, 2, names, &tr, 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "drops"),
					       inart_switch_drop_name(INART_DROP_NO_LABEL))),
	    9);
	assert_int_equal(json_array_size(json_object_get(o, "ports")), 2);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(o, "ports"), 1), "name")),
			    "eth1");
	assert_int_equal(json_integer_value(json_object_get(
			     json_array_get(json_object_get(o, "ports"), 1), "tx_bytes")),
			 400);
	assert_int_equal(json_integer_value(json_object_get(
			     json_array_get(json_object_get(o, "trees"), 0), "aggregated")),
			 10);
	json_decref(o);
	o = inart_ctl_ps_stats_json(&ps);
	assert_int_equal(json_integer_value(json_object_get(o, "completed")), 3);
	json_decref(o);
}

/* Fill the counter words [first, size) of a stats struct with distinct
 * values: word w (bytes 8w..8w+7) holds tag + w. */
static void fill_words(void *st, size_t first, size_t size, uint64_t tag)
{
	for (size_t off = first; off + sizeof(uint64_t) <= size; off += sizeof(uint64_t)) {
		uint64_t v = tag + off / sizeof(uint64_t);

		memcpy((char *)st + off, &v, sizeof(v));
	}
}

/* o is the JSON of a struct filled by fill_words(first, size, tag), with
 * n_other keys besides the counters.  Every table entry's key carries the
 * value of its word, and every counter word's value is in o under the
 * table's name for it: a counter added to the struct but not to the table
 * (so neither serialized nor printed) fails here. */
static void check_counters(json_t *o, const struct inart_ctl_counter *tab, int n, size_t first,
			   size_t size, uint64_t tag, size_t n_other)
{
	size_t n_words = (size - first) / sizeof(uint64_t);

	assert_int_equal((size - first) % sizeof(uint64_t), 0);
	assert_int_equal(json_object_size(o), n_other + (size_t)n);
	for (size_t w = 0; w < n_words; w++) {
		size_t off = first + w * sizeof(uint64_t);
		int found = -1;

		for (int i = 0; i < n; i++)
			if (tab[i].off == off)
				found = i;
		if (found < 0)
			fail_msg("the counter at offset %zu is in no table", off);
		assert_true(json_is_integer(json_object_get(o, tab[found].name)));
		assert_int_equal(json_integer_value(json_object_get(o, tab[found].name)),
				 tag + off / sizeof(uint64_t));
	}
	assert_int_equal((size_t)n, n_words); /* and no entry twice */
}

static void test_stats_counters(void **state)
{
	uint64_t drops[INART_DROP_N] = {0};
	struct inart_sw_port_stats port[1];
	struct inart_sw_tree_stats tree[1];
	struct inart_ps_stats ps, ps2, base;
	const size_t first = offsetof(struct inart_sw_tree_stats, aggregated);
	json_t *o, *d;

	(void)state;
	memset(tree, 0, sizeof(tree));
	tree[0].job = 77;
	tree[0].tree = 5;
	fill_words(port, 0, sizeof(port[0]), 1000);
	fill_words(tree, first, sizeof(tree[0]), 2000);
	fill_words(&ps, 0, sizeof(ps), 3000);
	o = inart_ctl_sw_stats_json(drops, port, 1, NULL, tree, 1);
	d = json_array_get(json_object_get(o, "ports"), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "port")), 0);
	check_counters(d, inart_ctl_sw_port_counters, inart_ctl_n_sw_port_counters, 0,
		       sizeof(port[0]), 1000, 1);
	d = json_array_get(json_object_get(o, "trees"), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "job")), 77);
	assert_int_equal(json_integer_value(json_object_get(d, "tree")), 5);
	check_counters(d, inart_ctl_sw_tree_counters, inart_ctl_n_sw_tree_counters, first,
		       sizeof(tree[0]), 2000, 2);
	/* the recovery counters by name, as docs/programs.md lists them */
	assert_int_equal(json_integer_value(json_object_get(d, "early")),
			 2000 + offsetof(struct inart_sw_tree_stats, early) / 8);
	assert_int_equal(json_integer_value(json_object_get(d, "repaired")),
			 2000 + offsetof(struct inart_sw_tree_stats, repaired) / 8);
	assert_int_equal(json_integer_value(json_object_get(d, "answered")),
			 2000 + offsetof(struct inart_sw_tree_stats, answered) / 8);
	json_decref(o);
	/* port_counters: the same port objects, nothing else */
	o = inart_ctl_sw_port_counters_json(port, 1);
	assert_int_equal(json_object_size(o), 1);
	assert_int_equal(json_array_size(json_object_get(o, "ports")), 1);
	d = json_array_get(json_object_get(o, "ports"), 0);
	assert_int_equal(json_integer_value(json_object_get(d, "port")), 0);
	check_counters(d, inart_ctl_sw_port_counters, inart_ctl_n_sw_port_counters, 0,
		       sizeof(port[0]), 1000, 1);
	json_decref(o);
	o = inart_ctl_ps_stats_json(&ps);
	check_counters(o, inart_ctl_ps_counters, inart_ctl_n_ps_counters, 0, sizeof(ps), 3000, 0);
	assert_int_equal(json_integer_value(json_object_get(o, "probe_nacks")),
			 3000 + offsetof(struct inart_ps_stats, probe_nacks) / 8);
	json_decref(o);

	/* baselines: every counter minus its base, nothing else touched */
	fill_words(&base, 0, sizeof(base), 100);
	ps2 = ps;
	inart_ctl_counters_sub(&ps2, &base, inart_ctl_ps_counters, inart_ctl_n_ps_counters);
	for (size_t w = 0; w < sizeof(ps) / 8; w++) {
		uint64_t a, b;

		memcpy(&a, (char *)&ps2 + 8 * w, 8);
		memcpy(&b, (char *)&ps + 8 * w, 8);
		assert_int_equal(a, b - (100 + w));
		assert_int_equal(a, 2900);
	}
	inart_ctl_counters_sub(&tree[0], &tree[0], inart_ctl_sw_tree_counters,
			       inart_ctl_n_sw_tree_counters);
	assert_int_equal(tree[0].job, 77);
	assert_int_equal(tree[0].tree, 5);
	assert_int_equal(tree[0].answered, 0);
	assert_int_equal(tree[0].aggregated, 0);
}

/* Seeded mutations of valid requests: every outcome is a clean accept (and
 * then the request re-encodes to something that parses to the same
 * encoding) or a refusal with a reason. */
static void test_mutations(void **state)
{
	struct inart_ctl_req r, p;
	struct inart_label_entry l[3];
	struct inart_route rt[2];
	uint32_t del[2];
	struct inart_err why = {{0}};
	char *base;
	size_t blen;
	uint64_t x = 12345;
	int accepted = 0, refusedn = 0;

	(void)state;
	sample_install(&r, l, rt, del);
	base = inart_ctl_req_encode(&r);
	blen = strlen(base);
	for (int it = 0; it < 3000; it++) {
		char *m = malloc(blen + 1);
		size_t len = blen;
		int k = 1 + (int)((x >> 7) % 4);

		memcpy(m, base, blen + 1);
		for (int j = 0; j < k; j++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			switch ((x >> 33) % 4) {
			case 0: /* replace a byte by a JSON-ish character */
				m[(x >> 13) % len] = "0123456789\"{}[],:-.ex "[(x >> 40) % 22];
				break;
			case 1: /* truncate */
				len = 1 + (x >> 13) % len;
				break;
			case 2: /* digit change */
				for (size_t q = (x >> 13) % len; q < len; q++)
					if (m[q] >= '0' && m[q] <= '9') {
						m[q] = (char)('0' + (x >> 45) % 10);
						break;
					}
				break;
			default: /* bit flip */
				m[(x >> 13) % len] ^= (char)(1 << ((x >> 50) % 8));
				break;
			}
		}
		why.msg[0] = '\0';
		if (inart_ctl_req_parse(m, len, &p, &why) == 0) {
			char *e1 = inart_ctl_req_encode(&p), *e2;
			struct inart_ctl_req q;

			assert_non_null(e1);
			assert_int_equal(parse(e1, &q, &why), 0);
			e2 = inart_ctl_req_encode(&q);
			assert_string_equal(e1, e2);
			free(e1);
			free(e2);
			inart_ctl_req_free(&q);
			inart_ctl_req_free(&p);
			accepted++;
		} else {
			assert_true(why.msg[0] != '\0');
			assert_null(p.tab.labels);
			refusedn++;
		}
		free(m);
	}
	free(base);
	assert_true(accepted > 0);
	assert_true(refusedn > 0);
}

/* ---- ctlsock: a server in a thread ---- */

struct srv_ctx {
	struct inart_ctlsrv *srv;
	volatile int stop;
	int handled;
};

static char *echo_handler(void *ctx, const char *body, size_t len)
{
	struct inart_ctl_req r;
	struct inart_err why = {{0}};
	json_t *d;

	(void)ctx;
	if (inart_ctl_req_parse(body, len, &r, &why) < 0)
		return inart_ctl_reply_err(why.msg);
	d = json_object();
	json_object_set_new(d, "op", json_string(inart_ctl_op_name(r.op)));
	json_object_set_new(d, "labels", json_integer(r.tab.n_labels));
	inart_ctl_req_free(&r);
	return inart_ctl_reply_ok(d);
}

static void *srv_thread(void *arg)
{
	struct srv_ctx *c = arg;

	while (!c->stop) {
		struct pollfd p = {inart_ctlsrv_fd(c->srv), POLLIN, 0};

		if (poll(&p, 1, 20) > 0)
			c->handled += inart_ctlsrv_service(c->srv);
	}
	return NULL;
}

static void test_ctlsock(void **state)
{
	struct inart_err why = {{0}};
	char dir[] = "/tmp/inart-ctlsock-XXXXXX", path[128], *rep = NULL;
	struct inart_err err = {{0}};
	struct srv_ctx c = {0};
	struct inart_ctl_req big = {.op = INART_CTL_INSTALL};
	struct inart_label_entry *bigl;
	pthread_t th;
	size_t rlen;
	json_t *o;
	char *body;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	c.srv = inart_ctlsrv_open(path, echo_handler, &c, &err);
	assert_non_null(c.srv);
	/* a second server on a live socket is refused */
	assert_null(inart_ctlsrv_open(path, echo_handler, &c, &err));
	assert_int_equal(errno, EADDRINUSE);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &c), 0);

	assert_int_equal(inart_ctl_call(path, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err), 0);
	assert_int_equal(inart_ctl_reply_parse(rep, rlen, &o, &why), 0);
	assert_string_equal(json_string_value(json_object_get(o, "op")), "info");
	json_decref(o);
	free(rep);
	assert_int_equal(inart_ctl_call(path, "{\"op\":\"x\"}", 10, &rep, &rlen, 5000, &err), 0);
	assert_int_equal(inart_ctl_reply_parse(rep, rlen, &o, &why), -EPERM);
	free(rep);
	/* a big request (about 6 MB: 20000 labels) crosses many reads */
	bigl = calloc(20000, sizeof(*bigl));
	assert_non_null(bigl);
	for (int i = 0; i < 20000; i++) {
		static const struct inart_label_down four[4];

		bigl[i].label = (uint32_t)i + 1;
		bigl[i].kind = INART_LABEL_DOWN;
		bigl[i].n_down = 4;
		bigl[i].down = four;
	}
	big.tab.n_labels = 20000;
	big.tab.labels = bigl;
	body = inart_ctl_req_encode(&big);
	assert_non_null(body);
	assert_int_equal(inart_ctl_call(path, body, strlen(body), &rep, &rlen, 20000, &err), 0);
	assert_int_equal(inart_ctl_reply_parse(rep, rlen, &o, &why), 0);
	assert_int_equal(json_integer_value(json_object_get(o, "labels")), 20000);
	json_decref(o);
	free(rep);
	free(body);
	free(bigl);
	/* nobody there */
	assert_true(inart_ctl_call("/tmp/inart-no-such.sock", "{}", 2, &rep, &rlen, 100, &err) < 0);
	assert_non_null(strstr(err.msg, "cannot connect"));

	c.stop = 1;
	pthread_join(th, NULL);
	assert_int_equal(c.handled, 3);
	inart_ctlsrv_close(c.srv);
	assert_int_equal(access(path, F_OK), -1); /* unlinked */
	/* a stale socket file is replaced */
	c.srv = inart_ctlsrv_open(path, echo_handler, &c, &err);
	assert_non_null(c.srv);
	inart_ctlsrv_close(c.srv);
	inart_ctlsrv_close(NULL);
	rmdir(dir);
}

/* ---- deploy ---- */

static void test_deploy(void **state)
{
	struct inart_topo *t = tu_topo("h0-s0 h1-s0 s0-s1 s1-h2", "s0:100:2");
	struct inart_deploy *d = inart_deploy_auto(t), *d2;
	struct inart_err err = {{0}};
	unsigned char is_ps[8] = {0};
	char **ctl = NULL, *s, *s2;
	int h2 = inart_topo_find(t, "h2"), s0 = inart_topo_find(t, "s0");

	(void)state;
	assert_non_null(d);
	is_ps[h2] = 1;
	s = inart_deploy_dump(d, t, NULL, "/run/x", is_ps);
	assert_non_null(s);
	d2 = inart_deploy_parse(s, strlen(s), "d.json", t, &ctl, &err);
	if (d2 == NULL)
		fail_msg("%s", err.msg);
	assert_memory_equal(d2->ip, d->ip, sizeof(uint32_t) * (size_t)t->n_nodes);
	for (int v = 0; v < t->n_nodes; v++) /* switches have port MACs only */
		if (t->nodes[v].kind == INART_NODE_HOST)
			assert_memory_equal(d2->mac[v], d->mac[v], 6);
	assert_memory_equal(d2->port, d->port, sizeof(int) * (size_t)d->n_arcs);
	assert_memory_equal(d2->port_mac, d->port_mac, 6 * (size_t)d->n_arcs);
	assert_string_equal(ctl[h2], "/run/x/h2.sock");
	assert_string_equal(ctl[s0], "/run/x/s0.sock");
	assert_null(ctl[inart_topo_find(t, "h0")]);
	s2 = inart_deploy_dump(d2, t, ctl, NULL, NULL);
	assert_string_equal(s, s2);
	free(s);
	free(s2);
	inart_deploy_ctl_free(ctl, t->n_nodes);
	inart_deploy_destroy(d2);
	inart_deploy_destroy(d);

	/* refusals name the node */
	static const struct {
		const char *json, *needle;
	} bad[] = {
	    {"{\"nodes\": {\"h9\": {\"ip\": \"10.0.0.1\"}}}", "'h9' is not in the topology"},
	    {"{\"nodes\": {}}", "missing"},
	    {"{\"nodes\": {\"h0\": {\"ip\": \"10.0.0\"}}}", "'h0': 'ip'"},
	    {"{\"nodes\": {\"h0\": {\"ip\": \"10.0.0.1\", \"ports\": {}}}}", "unknown key 'ports'"},
	    {"{\"nodes\": {\"s0\": {\"ip\": \"10.0.0.1\", \"ports\": {\"h2\": {\"port\": 0}}}}}",
	     "not a neighbour"},
	    {"{\"nodes\": {\"s0\": {\"ip\": \"10.0.0.1\", \"ports\": {\"h0\": {\"port\": 0}, "
	     "\"h1\": {\"port\": 0}}}}}",
	     "distinct 'port'"},
	    {"{\"nodes\": {\"s0\": {\"ip\": \"10.0.0.1\", \"ports\": {\"h0\": {\"port\": 3}}}}}",
	     "distinct 'port' in 0..2"},
	    {"{\"nodes\": {\"s0\": {\"ip\": \"10.0.0.1\", \"ports\": {\"h0\": {\"port\": 0}}}}}",
	     "no port towards 'h1'"},
	    {"{\"nodes\": ", "d.json:1:"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = '\0';
		d2 = inart_deploy_parse(bad[i].json, strlen(bad[i].json), "d.json", t, &ctl, &err);
		if (d2 != NULL || strstr(err.msg, bad[i].needle) == NULL)
			fail_msg("case %zu: '%s' (expected '%s')", i, err.msg, bad[i].needle);
		assert_null(ctl);
	}
	inart_topo_destroy(t);
}

/* Idle or slow control clients cannot lock the others out (issue 7: 32
 * idle clients did).  A full server makes room for a new client by closing
 * the one idle the longest; an idle client is closed after idle_ms; a
 * request that does not arrive within request_ms is answered with an error
 * and its client closed. */
static int unix_connect(const char *path)
{
	struct sockaddr_un a;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Wait up to ms for fd to be closed by the peer (read 0). */
static int closed_within(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	char b[256];

	while (poll(&p, 1, ms) > 0) {
		ssize_t r = read(fd, b, sizeof(b));

		if (r <= 0)
			return 1;
	}
	return 0;
}

static void test_ctlsock_limits(void **state)
{
	char dir[] = "/tmp/inart-ctllim-XXXXXX", path[128], *rep = NULL;
	struct inart_err err = {{0}};
	struct inart_ctlsrv_opt opt;
	struct srv_ctx c = {0};
	int idle[40], fd;
	pthread_t th;
	size_t rlen;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	/* defaults: 32 clients, idle 10 s: 40 idle clients, then a real one */
	c.srv = inart_ctlsrv_open(path, echo_handler, &c, &err);
	assert_non_null(c.srv);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &c), 0);
	for (int i = 0; i < 40; i++)
		idle[i] = unix_connect(path);
	usleep(100000);
	assert_int_equal(inart_ctl_call(path, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err), 0);
	free(rep);
	assert_true(inart_ctlsrv_clients(c.srv) <= INART_CTLSRV_MAX_CLIENTS);
	c.stop = 1;
	pthread_join(th, NULL);
	for (int i = 0; i < 40; i++)
		close(idle[i]);
	inart_ctlsrv_close(c.srv);
	/* short limits: idle clients and slow requests are closed */
	inart_ctlsrv_opt_default(&opt);
	opt.idle_ms = 200;
	opt.request_ms = 300;
	c.stop = 0;
	c.srv = inart_ctlsrv_open_opt(path, echo_handler, &c, &opt, &err);
	assert_non_null(c.srv);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &c), 0);
	fd = unix_connect(path);
	assert_int_equal(closed_within(fd, 2000), 1);
	close(fd);
	fd = unix_connect(path);
	assert_int_equal(write(fd, "\0\0\0\x20{\"op\":", 10), 10); /* a request begun */
	assert_int_equal(closed_within(fd, 2000), 1);
	close(fd);
	usleep(100000);
	assert_int_equal(inart_ctlsrv_clients(c.srv), 0);
	c.stop = 1;
	pthread_join(th, NULL);
	inart_ctlsrv_close(c.srv);
	rmdir(dir);
}

static void key_file(const char *path, const char *bytes, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(bytes, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

/* A raw TCP connection to 127.0.0.1:port that has read the hello. */
static int raw_tcp(int port, uint8_t hello[INART_AUTH_HELLO])
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t got = 0;

	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	while (got < INART_AUTH_HELLO) {
		ssize_t r = recv(fd, hello + got, INART_AUTH_HELLO - got, 0);

		assert_true(r > 0);
		got += (size_t)r;
	}
	return fd;
}

/* 1 if the server closed fd within 5 s (EOF), else 0. */
static int closed_by_server(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	uint8_t b[64];

	while (poll(&p, 1, 5000) > 0) {
		ssize_t r = recv(fd, b, sizeof(b), 0);

		if (r <= 0)
			return 1;
	}
	return 0;
}

/* The TCP control listener: the right key is served; a wrong key, no key,
 * a client that skips the handshake, one that never answers, and a frame
 * whose MAC is wrong are refused and counted, and the handler never sees
 * their requests; key files must be private and long enough. */
static void test_ctl_tcp_auth(void **state)
{
	char dir[] = "/tmp/inart-h10-tcp-XXXXXX", path[128], kpath[160], wpath[160], spec[64];
	struct inart_err err = {{0}};
	struct inart_ctlsrv_opt opt;
	struct inart_ctl_key key;
	struct srv_ctx c = {0};
	uint8_t hello[INART_AUTH_HELLO], answer[INART_AUTH_ANSWER], proof[INART_AUTH_MAC];
	uint8_t ks[INART_AUTH_MAC], frame[64];
	struct inart_err why = {{0}};
	char *rep = NULL;
	size_t rlen;
	pthread_t th;
	json_t *o;
	int port, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(kpath, sizeof(kpath), "%s/key", dir);
	snprintf(wpath, sizeof(wpath), "%s/wrong", dir);
	key_file(kpath, "0123456789abcdef0123456789abcdef\n", 0600);
	key_file(wpath, "0123456789abcdef0123456789abcdeX\n", 0600);
	assert_int_equal(inart_ctl_key_load(kpath, &key, &err), 0);
	assert_int_equal(key.len, 32);
	inart_ctlsrv_opt_default(&opt);
	opt.tcp = "127.0.0.1:0";
	opt.key = &key;
	c.srv = inart_ctlsrv_open_opt(path, echo_handler, &c, &opt, &err);
	assert_non_null(c.srv);
	port = inart_ctlsrv_tcp_port(c.srv);
	assert_true(port > 0);
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%d", port);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &c), 0);
	/* the right key */
	setenv("INART_CTL_KEY", kpath, 1);
	assert_int_equal(inart_ctl_call(spec, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err), 0);
	assert_int_equal(inart_ctl_reply_parse(rep, rlen, &o, &why), 0);
	assert_string_equal(json_string_value(json_object_get(o, "op")), "info");
	json_decref(o);
	free(rep);
	/* the server thread counts the request after the reply left */
	for (int i = 0; i < 100 && *(volatile int *)&c.handled < 1; i++)
		usleep(10000);
	assert_int_equal(c.handled, 1);
	assert_int_equal(inart_ctlsrv_auth_failures(c.srv), 0);
	/* a wrong key: refused, counted, not handled */
	setenv("INART_CTL_KEY", wpath, 1);
	assert_int_equal(inart_ctl_call(spec, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err),
			 -EACCES);
	assert_non_null(strstr(err.msg, "does not accept this key"));
	/* no key at all: the client refuses to try */
	unsetenv("INART_CTL_KEY");
	assert_int_equal(inart_ctl_call(spec, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err),
			 -EACCES);
	/* a client that sends a request instead of answering the hello */
	fd = raw_tcp(port, hello);
	memset(frame, 0, sizeof(frame));
	inart_ctl_frame_hdr(frame, 13);
	memcpy(frame + 4, "{\"op\":\"info\"}", 13);
	assert_int_equal(send(fd, frame, sizeof(frame), 0), (ssize_t)sizeof(frame));
	assert_true(closed_by_server(fd));
	close(fd);
	/* the right handshake, then a frame whose MAC is wrong */
	fd = raw_tcp(port, hello);
	assert_int_equal(inart_ctlauth_answer(&key, hello, answer, proof, ks), 0);
	assert_int_equal(send(fd, answer, sizeof(answer), 0), (ssize_t)sizeof(answer));
	assert_int_equal(recv(fd, frame, INART_AUTH_MAC, MSG_WAITALL), INART_AUTH_MAC);
	assert_memory_equal(frame, proof, INART_AUTH_MAC);
	memset(frame, 0, sizeof(frame));
	inart_ctl_frame_hdr(frame, 13);
	memcpy(frame + 4, "{\"op\":\"info\"}", 13);
	inart_ctlauth_mac(ks, 0, 1, frame, 17, frame + 17); /* the wrong seq */
	assert_int_equal(send(fd, frame, 17 + INART_AUTH_MAC, 0), 17 + INART_AUTH_MAC);
	assert_true(closed_by_server(fd));
	close(fd);
	/* a client that never answers: closed after 2 s */
	fd = raw_tcp(port, hello);
	assert_true(closed_by_server(fd));
	close(fd);
	assert_int_equal(c.handled, 1);
	assert_int_equal(inart_ctlsrv_auth_failures(c.srv), 4);
	c.stop = 1;
	pthread_join(th, NULL);
	inart_ctlsrv_close(c.srv);
	/* key files: private, 16 bytes at least */
	key_file(wpath, "0123456789abcdef0123456789abcdef", 0644);
	assert_int_equal(inart_ctl_key_load(wpath, &key, &err), -EPERM);
	key_file(wpath, "short", 0600);
	assert_int_equal(inart_ctl_key_load(wpath, &key, &err), -EINVAL);
	/* a listener without a key is refused */
	opt.key = NULL;
	assert_null(inart_ctlsrv_open_opt(path, echo_handler, &c, &opt, &err));
	unlink(kpath);
	unlink(wpath);
	unlink(path);
	rmdir(dir);
}

/* ---- ctlsock: a kept connection (inart_ctl_conn) ---- */

/* n calls of info on c, each answered. */
static void conn_calls(struct inart_ctl_conn *c, int n)
{
	struct inart_err err = {{0}};
	struct inart_err why = {{0}};
	char *rep = NULL;
	size_t rlen;
	json_t *o;

	for (int i = 0; i < n; i++) {
		assert_int_equal(
		    inart_ctl_conn_call(c, "{\"op\":\"info\"}", 13, &rep, &rlen, 5000, &err), 0);
		assert_int_equal(inart_ctl_reply_parse(rep, rlen, &o, &why), 0);
		assert_string_equal(json_string_value(json_object_get(o, "op")), "info");
		json_decref(o);
		free(rep);
	}
}

/* A plain echo server on path in a thread (its handle), and its end. */
static pthread_t srv_start(struct srv_ctx *c, const char *path)
{
	struct inart_err err = {{0}};
	pthread_t th;

	c->stop = 0;
	c->srv = inart_ctlsrv_open(path, echo_handler, c, &err);
	assert_non_null(c->srv);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, c), 0);
	return th;
}

static void srv_stop(struct srv_ctx *c, pthread_t th)
{
	c->stop = 1;
	pthread_join(th, NULL);
	inart_ctlsrv_close(c->srv);
}

/* One connection for many requests, UNIX and TCP (MACs with consecutive
 * sequence numbers); a connection the daemon closed (idle) or a daemon
 * restarted: the call is made again on a new one; a daemon gone: an error,
 * and the next call after it is back connects again. */
static void test_ctl_conn(void **state)
{
	char dir[] = "/tmp/inart-h10c-conn-XXXXXX", path[128], kpath[160], spec[64], *rep = NULL;
	struct inart_err err = {{0}};
	struct inart_ctlsrv_opt opt;
	struct inart_ctl_key key;
	struct srv_ctx c = {0};
	struct inart_ctl_conn *k;
	pthread_t th;
	size_t rlen;

	(void)state;
	inart_ctl_conn_destroy(NULL);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(kpath, sizeof(kpath), "%s/key", dir);
	key_file(kpath, "0123456789abcdef0123456789abcdef\n", 0600);
	assert_int_equal(inart_ctl_key_load(kpath, &key, &err), 0);
	inart_ctlsrv_opt_default(&opt);
	opt.idle_ms = 300;
	opt.tcp = "127.0.0.1:0";
	opt.key = &key;
	c.srv = inart_ctlsrv_open_opt(path, echo_handler, &c, &opt, &err);
	assert_non_null(c.srv);
	assert_int_equal(pthread_create(&th, NULL, srv_thread, &c), 0);
	k = inart_ctl_conn_create(path);
	assert_non_null(k);
	conn_calls(k, 5);
	assert_int_equal(inart_ctl_conn_connects(k), 1);
	assert_int_equal(inart_ctlsrv_clients(c.srv), 1);
	/* closed by the server after 300 ms idle: made again on a new one */
	usleep(700000);
	assert_int_equal(inart_ctlsrv_clients(c.srv), 0);
	conn_calls(k, 2);
	assert_int_equal(inart_ctl_conn_connects(k), 2);
	/* over TCP: one handshake for five requests */
	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:%d", inart_ctlsrv_tcp_port(c.srv));
	setenv("INART_CTL_KEY", kpath, 1);
	{
		struct inart_ctl_conn *kt = inart_ctl_conn_create(spec);

		assert_non_null(kt);
		conn_calls(kt, 5);
		assert_int_equal(inart_ctl_conn_connects(kt), 1);
		assert_int_equal(inart_ctlsrv_auth_failures(c.srv), 0);
		inart_ctl_conn_destroy(kt);
	}
	unsetenv("INART_CTL_KEY");
	/* the daemon gone: an error; back (a new server): a new connection */
	srv_stop(&c, th);
	assert_true(inart_ctl_conn_call(k, "{\"op\":\"info\"}", 13, &rep, &rlen, 200, &err) < 0);
	assert_null(rep);
	th = srv_start(&c, path);
	conn_calls(k, 1);
	assert_int_equal(inart_ctl_conn_connects(k), 3);
	/* restarted while the connection is kept: made again on a new one */
	srv_stop(&c, th);
	th = srv_start(&c, path);
	conn_calls(k, 1);
	assert_int_equal(inart_ctl_conn_connects(k), 4);
	inart_ctl_conn_destroy(k);
	srv_stop(&c, th);
	unlink(kpath);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_framing),
	    cmocka_unit_test(test_text_helpers),
	    cmocka_unit_test(test_install_roundtrip),
	    cmocka_unit_test(test_trees_roundtrip),
	    cmocka_unit_test(test_simple_ops),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_replies),
	    cmocka_unit_test(test_stats_json),
	    cmocka_unit_test(test_stats_counters),
	    cmocka_unit_test(test_mutations),
	    cmocka_unit_test(test_ctlsock),
	    cmocka_unit_test(test_ctlsock_limits),
	    cmocka_unit_test(test_ctl_tcp_auth),
	    cmocka_unit_test(test_ctl_conn),
	    cmocka_unit_test(test_deploy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
