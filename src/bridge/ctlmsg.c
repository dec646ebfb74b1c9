/*
 * ctlmsg: control messages (see ctlmsg.h): length-prefixed JSON, parsed with
 * jansson into fixed C structs.  Every object is checked for unknown keys,
 * every number for its type and range, every array for its length, before
 * anything is returned; on error the request is left empty.
 *
 * Ownership: a parsed request owns its arrays; json_t values returned are new
 * references owned by the caller.
 */
#include "ctlmsg.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "dp/bytes.h"
#include "dp/pkt.h"

static const char *const op_names[] = {
    [INART_CTL_INFO] = "info",
    [INART_CTL_INSTALL] = "install",
    [INART_CTL_TABLES] = "tables",
    [INART_CTL_STATS] = "stats",
    [INART_CTL_RESET_STATS] = "reset_stats",
    [INART_CTL_LOSE_STATE] = "lose_state",
    [INART_CTL_LOG_LEVEL] = "log_level",
    [INART_CTL_TREES] = "trees",
    [INART_CTL_TREE_DEL] = "tree_del",
    [INART_CTL_SHOW] = "show",
    [INART_CTL_COMMIT] = "commit",
    [INART_CTL_ABORT] = "abort",
    [INART_CTL_ROLLBACK] = "rollback",
};
#define N_OPS ((int)(sizeof(op_names) / sizeof(op_names[0])))

static const char *const level_names[] = {"error", "warn", "info", "debug"};

const char *inart_ctl_op_name(int op)
{
	if (op < 1 || op >= N_OPS)
		return NULL;
	return op_names[op];
}

/* ---- framing ---- */

void inart_ctl_frame_hdr(uint8_t hdr[INART_CTL_HDR_LEN], uint32_t len)
{
	inart_put_be32(hdr, len);
}

int inart_ctl_frame_check(const uint8_t *buf, size_t len, uint32_t *body_len)
{
	uint32_t n;

	if (len < INART_CTL_HDR_LEN)
		return 0;
	n = inart_get_be32(buf);
	if (n == 0 || n > INART_CTL_MAX_MSG)
		return -EMSGSIZE;
	*body_len = n;
	return len - INART_CTL_HDR_LEN >= n;
}

/* ---- text helpers ---- */

int inart_ctl_parse_ip(const char *s, uint32_t *ip)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		unsigned part = 0;
		int digits = 0;

		while (*s >= '0' && *s <= '9') {
			part = part * 10 + (unsigned)(*s++ - '0');
			if (++digits > 3)
				return -1;
		}
		if (digits == 0 || part > 255)
			return -1;
		v = v << 8 | part;
		if (i < 3 && *s++ != '.')
			return -1;
	}
	if (*s != '\0')
		return -1;
	*ip = v;
	return 0;
}

void inart_ctl_fmt_ip(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int inart_ctl_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		if (lo < 0)
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < 5 && *s++ != ':')
			return -1;
	}
	if (*s != '\0')
		return -1;
	memcpy(mac, m, 6);
	return 0;
}

void inart_ctl_fmt_mac(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

/* ---- checked field access ---- */

/* o must be an object whose keys are all in the NULL-terminated list. */
static int check_keys(json_t *o, const char *what, const char *const *allowed, char *why,
		      size_t why_len)
{
	const char *key;
	json_t *v;

	if (!json_is_object(o))
		return inart_why(why, why_len, -EINVAL, "%s: must be an object", what);
	json_object_foreach(o, key, v)
	{
		int ok = 0;

		for (int i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				ok = 1;
		if (!ok)
			return inart_why(why, why_len, -EINVAL, "%s: unknown key '%.64s'", what,
					 key);
	}
	return 0;
}

/* An integer field in [min, max]; absent: *out = dflt, or an error if
 * required. */
static int get_int(json_t *o, const char *what, const char *key, int required, int64_t min,
		   int64_t max, int64_t dflt, int64_t *out, char *why, size_t why_len)
{
	json_t *v = json_object_get(o, key);
	json_int_t x;

	if (v == NULL) {
		if (required)
			return inart_why(why, why_len, -EINVAL, "%s: missing '%s'", what, key);
		*out = dflt;
		return 0;
	}
	if (!json_is_integer(v))
		return inart_why(why, why_len, -EINVAL, "%s: '%s' must be an integer", what, key);
	x = json_integer_value(v);
	if (x < min || x > max)
		return inart_why(why, why_len, -EINVAL, "%s: '%s' %lld out of range [%lld, %lld]",
				 what, key, (long long)x, (long long)min, (long long)max);
	*out = x;
	return 0;
}

/* get_int into a field of the type (min..max within it). */
#define GET_UINT(name, type)                                                                       \
	static int name(json_t *o, const char *what, const char *key, int required, int64_t min,   \
			int64_t max, int64_t dflt, type *out, char *why, size_t why_len)           \
	{                                                                                          \
		int64_t x;                                                                         \
		int rc = get_int(o, what, key, required, min, max, dflt, &x, why, why_len);        \
                                                                                                   \
		if (rc == 0)                                                                       \
			*out = (type)x;                                                            \
		return rc;                                                                         \
	}
GET_UINT(get_u16, uint16_t)
GET_UINT(get_u32, uint32_t)
GET_UINT(get_u64, uint64_t)

static int get_bool(json_t *o, const char *what, const char *key, int *out, char *why,
		    size_t why_len)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		*out = 0;
		return 0;
	}
	if (!json_is_boolean(v))
		return inart_why(why, why_len, -EINVAL, "%s: '%s' must be true or false", what,
				 key);
	*out = json_is_true(v);
	return 0;
}

static int get_ip(json_t *o, const char *what, const char *key, int required, uint32_t *ip,
		  char *why, size_t why_len)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		if (required)
			return inart_why(why, why_len, -EINVAL, "%s: missing '%s'", what, key);
		*ip = 0;
		return 0;
	}
	if (!json_is_string(v) || inart_ctl_parse_ip(json_string_value(v), ip) < 0)
		return inart_why(why, why_len, -EINVAL,
				 "%s: '%s' must be an IPv4 address \"a.b.c.d\"", what, key);
	return 0;
}

static int get_mac(json_t *o, const char *what, const char *key, uint8_t mac[6], char *why,
		   size_t why_len)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL) {
		memset(mac, 0, 6);
		return 0;
	}
	if (!json_is_string(v) || inart_ctl_parse_mac(json_string_value(v), mac) < 0)
		return inart_why(why, why_len, -EINVAL,
				 "%s: '%s' must be a MAC \"xx:xx:xx:xx:xx:xx\"", what, key);
	return 0;
}

/* An optional array of at most max elements; *n = 0 when absent. */
static int get_array(json_t *o, const char *what, const char *key, size_t max, json_t **arr,
		     size_t *n, char *why, size_t why_len)
{
	json_t *v = json_object_get(o, key);

	*arr = NULL;
	*n = 0;
	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return inart_why(why, why_len, -EINVAL, "%s: '%s' must be an array", what, key);
	if (json_array_size(v) > max)
		return inart_why(why, why_len, -EINVAL, "%s: '%s' has %zu entries, at most %zu",
				 what, key, json_array_size(v), max);
	*arr = v;
	*n = json_array_size(v);
	return 0;
}

/* get_array, then an array of n zeroed elements of `size` bytes in *mem
 * (left NULL when the array is absent or empty; the caller frees it). */
static int get_array_alloc(json_t *o, const char *what, const char *key, size_t max, size_t size,
			   json_t **arr, size_t *n, void **mem, char *why, size_t why_len)
{
	int rc = get_array(o, what, key, max, arr, n, why, why_len);

	*mem = NULL;
	if (rc < 0 || *n == 0)
		return rc;
	*mem = calloc(*n, size);
	return *mem ? 0 : -ENOMEM;
}

static int parse_u64_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		int h = hexval(*s);

		if (h < 0 || n >= 16)
			return -1;
		v = v << 4 | (uint64_t)h;
	}
	if (n == 0)
		return -1;
	*out = v;
	return 0;
}

/* ---- entries: JSON -> C ---- */

void inart_ctl_label_sizes(json_t *j, size_t *words, size_t *copies)
{
	json_t *e = json_object_get(j, "expected"), *d = json_object_get(j, "down");

	*words = json_is_array(e) ? json_array_size(e) : 0;
	*copies = json_is_array(d) ? json_array_size(d) : 0;
	if (*words > INART_WIRE_MAX_BITMAP_WORDS)
		*words = INART_WIRE_MAX_BITMAP_WORDS;
	if (*copies > INART_SW_MAX_FANOUT)
		*copies = INART_SW_MAX_FANOUT;
}

/* in_ports: an array of port numbers 0..63, or absent (any port). */
static int get_ports(json_t *o, const char *what, const char *key, uint64_t *mask, char *why,
		     size_t why_len)
{
	json_t *arr;
	size_t n;
	int rc = get_array(o, what, key, INART_SW_MAX_PORTS, &arr, &n, why, why_len);

	*mask = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		json_t *v = json_array_get(arr, i);

		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= INART_SW_MAX_PORTS)
			return inart_why(why, why_len, -EINVAL, "%s: %s[%zu] must be a port 0..%d",
					 what, key, i, INART_SW_MAX_PORTS - 1);
		*mask |= 1ull << json_integer_value(v);
	}
	return rc;
}

/* The fields of an UP entry (after the common ones). */
static int parse_label_up(json_t *j, const char *what, struct inart_label_entry *e, uint64_t *exp,
			  char *why, size_t why_len)
{
	json_t *arr;
	size_t n;
	int agg = 0, rc;

	if (json_object_get(j, "down") != NULL)
		return inart_why(why, why_len, -EINVAL, "%s: 'down' in an up entry", what);
	if ((rc = get_u16(j, what, "out_port", 1, 0, UINT16_MAX, 0, &e->out_port, why, why_len)) <
	    0)
		return rc;
	if ((rc = get_u32(j, what, "next_label", 0, 0, UINT32_MAX, 0, &e->next_label, why,
			  why_len)) < 0)
		return rc;
	if ((rc = get_bool(j, what, "aggregate", &agg, why, why_len)) < 0)
		return rc;
	e->aggregate = (uint8_t)agg;
	if ((rc = get_u16(j, what, "slot_base", agg, 0, UINT16_MAX, 0, &e->slot_base, why,
			  why_len)) < 0)
		return rc;
	if ((rc = get_u16(j, what, "n_slots", agg, agg ? 1 : 0, UINT16_MAX, 0, &e->n_slots, why,
			  why_len)) < 0)
		return rc;
	if ((rc = get_array(j, what, "expected", INART_WIRE_MAX_BITMAP_WORDS, &arr, &n, why,
			    why_len)) < 0)
		return rc;
	if (agg && n == 0)
		return inart_why(why, why_len, -EINVAL, "%s: an aggregating entry needs 'expected'",
				 what);
	e->bitmap_words = (uint8_t)n;
	e->expected = n > 0 ? exp : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(arr, i);

		if (!json_is_string(w) || parse_u64_hex(json_string_value(w), &exp[i]) < 0)
			return inart_why(
			    why, why_len, -EINVAL,
			    "%s: expected[%zu] must be a hex string of at most 16 digits", what, i);
	}
	return 0;
}

/* One copy of a DOWN entry (what: its place, for messages). */
static int parse_down_copy(json_t *d, const char *what, struct inart_label_down *dn, char *why,
			   size_t why_len)
{
	static const char *const dkeys[] = {"port", "label", "dst_ip", NULL};
	int rc;

	memset(dn, 0, sizeof(*dn));
	if ((rc = check_keys(d, what, dkeys, why, why_len)) < 0)
		return rc;
	if ((rc = get_u16(d, what, "port", 1, 0, UINT16_MAX, 0, &dn->port, why, why_len)) < 0)
		return rc;
	if ((rc = get_u32(d, what, "label", 0, 0, UINT32_MAX, 0, &dn->label, why, why_len)) < 0)
		return rc;
	return get_ip(d, what, "dst_ip", 0, &dn->dst_ip, why, why_len);
}

/* The fields of a DOWN entry (after the common ones). */
static int parse_label_down(json_t *j, const char *what, struct inart_label_entry *e,
			    struct inart_label_down *down, char *why, size_t why_len)
{
	static const char *const up_only[] = {"out_port",  "next_label", "aggregate",
					      "slot_base", "n_slots",	 "expected"};
	char sub[96];
	json_t *arr;
	size_t n;
	int rc;

	for (size_t i = 0; i < sizeof(up_only) / sizeof(up_only[0]); i++)
		if (json_object_get(j, up_only[i]) != NULL)
			return inart_why(why, why_len, -EINVAL, "%s: '%s' in a down entry", what,
					 up_only[i]);
	if ((rc = get_array(j, what, "down", INART_SW_MAX_FANOUT, &arr, &n, why, why_len)) < 0)
		return rc;
	if (n == 0)
		return inart_why(why, why_len, -EINVAL, "%s: a down entry needs a non-empty 'down'",
				 what);
	e->n_down = (uint16_t)n;
	e->down = down;
	for (size_t i = 0; i < n; i++) {
		snprintf(sub, sizeof(sub), "%s: down[%zu]", what, i);
		if ((rc = parse_down_copy(json_array_get(arr, i), sub, &down[i], why, why_len)) < 0)
			return rc;
	}
	return 0;
}

int inart_ctl_label_parse(json_t *j, const char *what, struct inart_label_entry *e, uint64_t *exp,
			  struct inart_label_down *down, char *why, size_t why_len)
{
	static const char *const keys[] = {
	    "label",	 "kind",      "job",	 "tree",     "in_ports", "out_port", "next_label",
	    "aggregate", "slot_base", "n_slots", "expected", "down",	 NULL};
	json_t *kind;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = check_keys(j, what, keys, why, why_len)) < 0)
		return rc;
	if ((rc = get_u32(j, what, "label", 1, 1, UINT32_MAX, 0, &e->label, why, why_len)) < 0)
		return rc;
	kind = json_object_get(j, "kind");
	if (!json_is_string(kind))
		return inart_why(why, why_len, -EINVAL, "%s: 'kind' must be \"up\" or \"down\"",
				 what);
	if (strcmp(json_string_value(kind), "up") == 0)
		e->kind = INART_LABEL_UP;
	else if (strcmp(json_string_value(kind), "down") == 0)
		e->kind = INART_LABEL_DOWN;
	else
		return inart_why(why, why_len, -EINVAL, "%s: 'kind' must be \"up\" or \"down\"",
				 what);
	if ((rc = get_u32(j, what, "job", 1, 0, UINT32_MAX, 0, &e->job, why, why_len)) < 0)
		return rc;
	if ((rc = get_u16(j, what, "tree", 1, 0, UINT16_MAX, 0, &e->tree, why, why_len)) < 0)
		return rc;
	if ((rc = get_ports(j, what, "in_ports", &e->in_ports, why, why_len)) < 0)
		return rc;
	if (e->kind == INART_LABEL_UP)
		return parse_label_up(j, what, e, exp, why, why_len);
	return parse_label_down(j, what, e, down, why, why_len);
}

int inart_ctl_route_parse(json_t *j, const char *what, struct inart_route *r, char *why,
			  size_t why_len)
{
	static const char *const keys[] = {"prefix", "port", NULL};
	json_t *p;
	char buf[32], *slash, *end;
	long len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = check_keys(j, what, keys, why, why_len)) < 0)
		return rc;
	p = json_object_get(j, "prefix");
	if (!json_is_string(p) || strlen(json_string_value(p)) >= sizeof(buf))
		return inart_why(why, why_len, -EINVAL, "%s: 'prefix' must be \"a.b.c.d/len\"",
				 what);
	strcpy(buf, json_string_value(p));
	slash = strchr(buf, '/');
	if (slash == NULL)
		return inart_why(why, why_len, -EINVAL, "%s: 'prefix' must be \"a.b.c.d/len\"",
				 what);
	*slash = '\0';
	errno = 0;
	len = strtol(slash + 1, &end, 10);
	if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || len < 0 || len > 32 ||
	    inart_ctl_parse_ip(buf, &r->prefix) < 0)
		return inart_why(why, why_len, -EINVAL,
				 "%s: 'prefix' must be \"a.b.c.d/len\" with len 0..32", what);
	r->len = (uint8_t)len;
	if ((rc = get_u16(j, what, "port", 1, 0, UINT16_MAX, 0, &r->port, why, why_len)) < 0)
		return rc;
	return 0;
}

int inart_ctl_sw_cfg_parse(json_t *j, const char *what, struct inart_sw_cfg *cfg, char *why,
			   size_t why_len)
{
	static const char *const keys[] = {"ports", "pool_slots", "max_values", "flush_timeout_ns",
					   NULL};
	static const char *const pkeys[] = {"mac", "ip", "peer_mac", "peer_ip", NULL};
	json_t *arr;
	size_t n;
	int64_t x;
	char sub[96];
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if ((rc = check_keys(j, what, keys, why, why_len)) < 0)
		return rc;
	if ((rc = get_array(j, what, "ports", INART_SW_MAX_PORTS, &arr, &n, why, why_len)) < 0)
		return rc;
	if (n == 0)
		return inart_why(why, why_len, -EINVAL, "%s: 'ports' must list 1..%d ports", what,
				 INART_SW_MAX_PORTS);
	cfg->n_ports = (int)n;
	for (size_t i = 0; i < n; i++) {
		json_t *p = json_array_get(arr, i);

		snprintf(sub, sizeof(sub), "%s: ports[%zu]", what, i);
		if ((rc = check_keys(p, sub, pkeys, why, why_len)) < 0 ||
		    (rc = get_mac(p, sub, "mac", cfg->ports[i].mac, why, why_len)) < 0 ||
		    (rc = get_ip(p, sub, "ip", 0, &cfg->ports[i].ip, why, why_len)) < 0 ||
		    (rc = get_mac(p, sub, "peer_mac", cfg->ports[i].peer_mac, why, why_len)) < 0 ||
		    (rc = get_ip(p, sub, "peer_ip", 0, &cfg->ports[i].peer_ip, why, why_len)) < 0)
			return rc;
	}
	if ((rc = get_int(j, what, "pool_slots", 1, 0, INART_SW_MAX_POOL_SLOTS, 0, &x, why,
			  why_len)) < 0)
		return rc;
	cfg->pool_slots = (int)x;
	if ((rc = get_int(j, what, "max_values", 0, 0, INART_SW_MAX_SLOT_VALUES, 0, &x, why,
			  why_len)) < 0)
		return rc;
	cfg->max_values = (int)x;
	if ((rc = get_u64(j, what, "flush_timeout_ns", 1, 0, INT64_MAX, 0, &cfg->flush_timeout_ns,
			  why, why_len)) < 0)
		return rc;
	if ((uint64_t)(cfg->pool_slots ? cfg->pool_slots : 1) *
		(uint64_t)(cfg->max_values ? cfg->max_values : INART_SW_MAX_SLOT_VALUES) >
	    INART_SW_MAX_POOL_VALUES)
		return inart_why(why, why_len, -EINVAL,
				 "%s: pool_slots x max_values above %u values (the pool's limit)",
				 what, INART_SW_MAX_POOL_VALUES);
	return 0;
}

size_t inart_ctl_ps_tree_sources(json_t *j)
{
	json_t *a = json_object_get(j, "sources");
	size_t n = json_is_array(a) ? json_array_size(a) : 0;

	return n > INART_PS_MAX_SOURCES ? INART_PS_MAX_SOURCES : n;
}

int inart_ctl_ps_tree_parse(json_t *j, const char *what, struct inart_ps_tree_cfg *cfg,
			    struct inart_ps_source *src, char *why, size_t why_len)
{
	static const char *const keys[] = {"job",      "tree",	  "fan_in", "max_chunks",
					   "children", "sources", NULL};
	static const char *const ckeys[] = {"ip", "label", NULL};
	static const char *const skeys[] = {"ip", "rank", NULL};
	json_t *arr;
	size_t n;
	char sub[96];
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if ((rc = check_keys(j, what, keys, why, why_len)) < 0)
		return rc;
	if ((rc = get_u32(j, what, "job", 1, 0, UINT32_MAX, 0, &cfg->job, why, why_len)) < 0)
		return rc;
	if ((rc = get_u16(j, what, "tree", 1, 0, UINT16_MAX, 0, &cfg->tree, why, why_len)) < 0)
		return rc;
	if ((rc = get_u16(j, what, "fan_in", 1, 1, INART_WIRE_MAX_CONTRIB, 0, &cfg->fan_in, why,
			  why_len)) < 0)
		return rc;
	if ((rc = get_u32(j, what, "max_chunks", 0, 0, INART_PS_LIMIT_MAX_CHUNKS, 0,
			  &cfg->max_chunks, why, why_len)) < 0)
		return rc;
	if ((rc = get_array(j, what, "children", INART_PS_MAX_CHILDREN, &arr, &n, why, why_len)) <
	    0)
		return rc;
	cfg->n_children = (uint16_t)n;
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_array_get(arr, i);

		snprintf(sub, sizeof(sub), "%s: children[%zu]", what, i);
		if ((rc = check_keys(c, sub, ckeys, why, why_len)) < 0 ||
		    (rc = get_ip(c, sub, "ip", 1, &cfg->children[i].ip, why, why_len)) < 0)
			return rc;
		if ((rc = get_u32(c, sub, "label", 0, 0, UINT32_MAX, 0, &cfg->children[i].label,
				  why, why_len)) < 0)
			return rc;
	}
	if ((rc = get_array(j, what, "sources", INART_PS_MAX_SOURCES, &arr, &n, why, why_len)) < 0)
		return rc;
	cfg->n_sources = (uint16_t)n;
	cfg->sources = n > 0 ? src : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *c = json_array_get(arr, i);

		snprintf(sub, sizeof(sub), "%s: sources[%zu]", what, i);
		if ((rc = check_keys(c, sub, skeys, why, why_len)) < 0 ||
		    (rc = get_ip(c, sub, "ip", 1, &src[i].ip, why, why_len)) < 0)
			return rc;
		/* absent rank: a switch of the tree (any rank) */
		if ((rc = get_u16(c, sub, "rank", 0, 0, cfg->fan_in - 1, INART_PS_ANY_RANK,
				  &src[i].rank, why, why_len)) < 0)
			return rc;
	}
	return 0;
}

/* ---- requests ---- */

static int op_from_name(const char *s)
{
	for (int i = 1; i < N_OPS; i++)
		if (strcmp(s, op_names[i]) == 0)
			return i;
	return 0;
}

/* "install_id" (16 hex digits) and "phase" ("prepare": keep aside until a
 * commit; absent: apply now). */
static int parse_ident(json_t *o, const char *what, struct inart_ctl_req *r, int phase, char *why,
		       size_t why_len)
{
	json_t *v = json_object_get(o, "install_id");
	uint64_t id;

	if (v != NULL) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != 16 ||
		    parse_u64_hex(json_string_value(v), &id) < 0)
			return inart_why(why, why_len, -EINVAL,
					 "%s: 'install_id' must be 16 hex digits", what);
		strcpy(r->install_id, json_string_value(v));
	}
	v = json_object_get(o, "phase");
	if (v == NULL)
		return 0;
	if (!phase || !json_is_string(v) || strcmp(json_string_value(v), "prepare") != 0)
		return inart_why(why, why_len, -EINVAL, "%s: 'phase' must be \"prepare\"", what);
	r->prepare = 1;
	return 0;
}

static int parse_labels(json_t *o, struct inart_ctl_req *r, char *why, size_t why_len)
{
	json_t *arr;
	void *mem;
	size_t n, words = 0, copies = 0;
	char what[48];
	int rc;

	rc = get_array_alloc(o, "install", "labels", INART_SW_MAX_LABELS, sizeof(*r->labels), &arr,
			     &n, &mem, why, why_len);
	r->labels = mem;
	if (rc < 0)
		return rc;
	r->n_labels = (int)n;
	/* one array each for the expected bitmaps and the copies */
	for (size_t i = 0; i < n; i++) {
		size_t w, c;

		inart_ctl_label_sizes(json_array_get(arr, i), &w, &c);
		words += w;
		copies += c;
	}
	r->exp = calloc(words + 1, sizeof(*r->exp));
	r->downs = calloc(copies + 1, sizeof(*r->downs));
	if (r->exp == NULL || r->downs == NULL)
		return -ENOMEM;
	words = copies = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(arr, i);
		size_t w, c;

		inart_ctl_label_sizes(j, &w, &c);
		snprintf(what, sizeof(what), "labels[%zu]", i);
		if ((rc = inart_ctl_label_parse(j, what, &r->labels[i], r->exp + words,
						r->downs + copies, why, why_len)) < 0)
			return rc;
		words += w;
		copies += c;
	}
	return 0;
}

static int parse_install(json_t *o, struct inart_ctl_req *r, char *why, size_t why_len)
{
	static const char *const keys[] = {"op",	 "node",       "config", "replace",
					   "labels",	 "del_labels", "routes", "ingress",
					   "install_id", "phase",      NULL};
	static const char *const gkeys[] = {"port", "job", "rank", NULL};
	json_t *arr, *cfg;
	void *mem;
	size_t n;
	char what[48];
	int rc;

	if ((rc = check_keys(o, "install", keys, why, why_len)) < 0 ||
	    (rc = parse_ident(o, "install", r, 1, why, why_len)) < 0)
		return rc;
	if ((rc = get_bool(o, "install", "replace", &r->replace, why, why_len)) < 0)
		return rc;
	cfg = json_object_get(o, "config");
	if (cfg != NULL) {
		if ((rc = inart_ctl_sw_cfg_parse(cfg, "config", &r->cfg, why, why_len)) < 0)
			return rc;
		r->has_cfg = 1;
	}
	if ((rc = parse_labels(o, r, why, why_len)) < 0)
		return rc;
	rc = get_array_alloc(o, "install", "del_labels", INART_SW_MAX_LABELS,
			     sizeof(*r->del_labels), &arr, &n, &mem, why, why_len);
	r->del_labels = mem;
	if (rc < 0)
		return rc;
	r->n_del_labels = (int)n;
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_array_get(arr, i);

		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > UINT32_MAX)
			return inart_why(why, why_len, -EINVAL,
					 "del_labels[%zu]: must be a label 1..%u", i, UINT32_MAX);
		r->del_labels[i] = (uint32_t)json_integer_value(v);
	}
	rc = get_array_alloc(o, "install", "routes", INART_CTL_MAX_ROUTES, sizeof(*r->routes), &arr,
			     &n, &mem, why, why_len);
	r->routes = mem;
	if (rc < 0)
		return rc;
	r->n_routes = (int)n;
	for (size_t i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "routes[%zu]", i);
		if ((rc = inart_ctl_route_parse(json_array_get(arr, i), what, &r->routes[i], why,
						why_len)) < 0)
			return rc;
	}
	rc = get_array_alloc(o, "install", "ingress", INART_CTL_MAX_ROUTES, sizeof(*r->ingress),
			     &arr, &n, &mem, why, why_len);
	r->ingress = mem;
	if (rc < 0)
		return rc;
	r->n_ingress = (int)n;
	for (size_t i = 0; i < n; i++) {
		json_t *g = json_array_get(arr, i);

		snprintf(what, sizeof(what), "ingress[%zu]", i);
		if ((rc = check_keys(g, what, gkeys, why, why_len)) < 0)
			return rc;
		if ((rc = get_u16(g, what, "port", 1, 0, INART_SW_MAX_PORTS - 1, 0,
				  &r->ingress[i].port, why, why_len)) < 0)
			return rc;
		if ((rc = get_u32(g, what, "job", 1, 0, UINT32_MAX, 0, &r->ingress[i].job, why,
				  why_len)) < 0)
			return rc;
		if ((rc = get_u16(g, what, "rank", 1, 0, INART_WIRE_MAX_CONTRIB - 1, 0,
				  &r->ingress[i].rank, why, why_len)) < 0)
			return rc;
	}
	return 0;
}

static int parse_trees(json_t *o, struct inart_ctl_req *r, char *why, size_t why_len)
{
	static const char *const keys[] = {"op",    "node",	  "replace", "reset",
					   "trees", "install_id", "phase",   NULL};
	json_t *arr;
	void *mem;
	size_t n, ns = 0;
	char what[48];
	int rc;

	if ((rc = check_keys(o, "trees", keys, why, why_len)) < 0 ||
	    (rc = parse_ident(o, "trees", r, 1, why, why_len)) < 0)
		return rc;
	if ((rc = get_bool(o, "trees", "replace", &r->replace, why, why_len)) < 0 ||
	    (rc = get_bool(o, "trees", "reset", &r->reset, why, why_len)) < 0)
		return rc;
	if (json_object_get(o, "trees") == NULL)
		return inart_why(why, why_len, -EINVAL, "trees: missing 'trees'");
	rc = get_array_alloc(o, "trees", "trees", INART_CTL_MAX_TREES, sizeof(*r->trees), &arr, &n,
			     &mem, why, why_len);
	r->trees = mem;
	if (rc < 0)
		return rc;
	r->n_trees = (int)n;
	for (size_t i = 0; i < n; i++)
		ns += inart_ctl_ps_tree_sources(json_array_get(arr, i));
	r->srcs = calloc(ns + 1, sizeof(*r->srcs));
	if (r->srcs == NULL)
		return -ENOMEM;
	ns = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(arr, i);

		snprintf(what, sizeof(what), "trees[%zu]", i);
		if ((rc = inart_ctl_ps_tree_parse(j, what, &r->trees[i], r->srcs + ns, why,
						  why_len)) < 0)
			return rc;
		ns += inart_ctl_ps_tree_sources(j);
		for (size_t k = 0; k < i; k++)
			if (r->trees[k].job == r->trees[i].job &&
			    r->trees[k].tree == r->trees[i].tree)
				return inart_why(why, why_len, -EINVAL,
						 "trees[%zu]: job %" PRIu32 " tree %u listed twice",
						 i, r->trees[i].job, r->trees[i].tree);
	}
	return 0;
}

int inart_ctl_req_parse(const char *body, size_t len, struct inart_ctl_req *req, char *why,
			size_t why_len)
{
	static const char *const plain_keys[] = {"op", "node", NULL};
	static const char *const level_keys[] = {"op", "node", "level", NULL};
	static const char *const del_keys[] = {"op", "node", "job", "tree", NULL};
	static const char *const id_keys[] = {"op", "node", "install_id", NULL};
	json_error_t jerr;
	json_t *o, *v;
	int64_t x;
	int rc = 0;

	memset(req, 0, sizeof(*req));
	if (why != NULL && why_len > 0)
		why[0] = '\0';
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL)
		return inart_why(why, why_len, -EINVAL, "not JSON: %d:%d: %s", jerr.line,
				 jerr.column, jerr.text);
	if (!json_is_object(o)) {
		rc = inart_why(why, why_len, -EINVAL, "a request must be a JSON object");
		goto out;
	}
	v = json_object_get(o, "op");
	if (!json_is_string(v) || (req->op = op_from_name(json_string_value(v))) == 0) {
		rc = inart_why(why, why_len, -EINVAL,
			       "'op' must name an operation (info, install, tables, "
			       "stats, reset_stats, lose_state, log_level, trees, "
			       "tree_del, show, commit, abort, rollback)");
		goto out;
	}
	v = json_object_get(o, "node");
	if (v != NULL) {
		if (!json_is_string(v) || strlen(json_string_value(v)) >= sizeof(req->node)) {
			rc = inart_why(why, why_len, -EINVAL,
				       "'node' must be a string of at most %zu bytes",
				       sizeof(req->node) - 1);
			goto out;
		}
		strcpy(req->node, json_string_value(v));
	}
	switch (req->op) {
	case INART_CTL_INSTALL:
		rc = parse_install(o, req, why, why_len);
		break;
	case INART_CTL_TREES:
		rc = parse_trees(o, req, why, why_len);
		break;
	case INART_CTL_LOG_LEVEL:
		if ((rc = check_keys(o, "log_level", level_keys, why, why_len)) < 0)
			break;
		v = json_object_get(o, "level");
		req->level = -1;
		for (int i = 0; json_is_string(v) && i < 4; i++)
			if (strcmp(json_string_value(v), level_names[i]) == 0)
				req->level = i;
		if (req->level < 0)
			rc = inart_why(why, why_len, -EINVAL,
				       "log_level: 'level' must be error, warn, info or debug");
		break;
	case INART_CTL_TREE_DEL:
		if ((rc = check_keys(o, "tree_del", del_keys, why, why_len)) < 0)
			break;
		if ((rc = get_int(o, "tree_del", "job", 1, 0, UINT32_MAX, 0, &x, why, why_len)) < 0)
			break;
		req->job = (uint32_t)x;
		if ((rc = get_int(o, "tree_del", "tree", 1, 0, UINT16_MAX, 0, &x, why, why_len)) <
		    0)
			break;
		req->tree = (uint16_t)x;
		break;
	case INART_CTL_COMMIT:
	case INART_CTL_ABORT:
	case INART_CTL_ROLLBACK:
		if ((rc = check_keys(o, inart_ctl_op_name(req->op), id_keys, why, why_len)) < 0 ||
		    (rc = parse_ident(o, inart_ctl_op_name(req->op), req, 0, why, why_len)) < 0)
			break;
		if (req->op != INART_CTL_ABORT && req->install_id[0] == '\0')
			rc = inart_why(why, why_len, -EINVAL, "%s: missing 'install_id'",
				       inart_ctl_op_name(req->op));
		break;
	default:
		rc = check_keys(o, inart_ctl_op_name(req->op), plain_keys, why, why_len);
		break;
	}
out:
	json_decref(o);
	if (rc < 0)
		inart_ctl_req_free(req);
	return rc;
}

void inart_ctl_req_free(struct inart_ctl_req *req)
{
	if (req == NULL)
		return;
	free(req->labels);
	free(req->exp);
	free(req->downs);
	free(req->del_labels);
	free(req->routes);
	free(req->ingress);
	free(req->trees);
	free(req->srcs);
	memset(req, 0, sizeof(*req));
}

/* ---- entries: C -> JSON ---- */

static json_t *jip(uint32_t ip)
{
	char s[16];

	inart_ctl_fmt_ip(ip, s);
	return json_string(s);
}

static json_t *jmac(const uint8_t mac[6])
{
	char s[18];

	inart_ctl_fmt_mac(mac, s);
	return json_string(s);
}

json_t *inart_ctl_label_json(const struct inart_label_entry *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "label", json_integer(e->label));
	json_object_set_new(o, "kind", json_string(e->kind == INART_LABEL_UP ? "up" : "down"));
	json_object_set_new(o, "job", json_integer(e->job));
	json_object_set_new(o, "tree", json_integer(e->tree));
	if (e->in_ports != 0) {
		json_t *ports = json_array();

		for (int p = 0; p < INART_SW_MAX_PORTS; p++)
			if (e->in_ports >> p & 1)
				json_array_append_new(ports, json_integer(p));
		json_object_set_new(o, "in_ports", ports);
	}
	if (e->kind == INART_LABEL_UP) {
		json_t *exp = json_array();

		json_object_set_new(o, "out_port", json_integer(e->out_port));
		json_object_set_new(o, "next_label", json_integer(e->next_label));
		json_object_set_new(o, "aggregate", json_boolean(e->aggregate));
		if (e->aggregate) {
			json_object_set_new(o, "slot_base", json_integer(e->slot_base));
			json_object_set_new(o, "n_slots", json_integer(e->n_slots));
		}
		for (int i = 0;
		     e->expected && i < e->bitmap_words && i < INART_WIRE_MAX_BITMAP_WORDS; i++) {
			char s[20];

			snprintf(s, sizeof(s), "%016" PRIx64, e->expected[i]);
			json_array_append_new(exp, json_string(s));
		}
		if (json_array_size(exp) > 0)
			json_object_set_new(o, "expected", exp);
		else
			json_decref(exp);
	} else {
		json_t *down = json_array();

		for (int i = 0; e->down && i < e->n_down && i < INART_SW_MAX_FANOUT; i++) {
			json_t *d = json_object();

			json_object_set_new(d, "port", json_integer(e->down[i].port));
			json_object_set_new(d, "label", json_integer(e->down[i].label));
			if (e->down[i].dst_ip)
				json_object_set_new(d, "dst_ip", jip(e->down[i].dst_ip));
			json_array_append_new(down, d);
		}
		json_object_set_new(o, "down", down);
	}
	return o;
}

json_t *inart_ctl_ingress_json(const struct inart_sw_ingress *g)
{
	json_t *o = json_object();

	json_object_set_new(o, "port", json_integer(g->port));
	json_object_set_new(o, "job", json_integer(g->job));
	json_object_set_new(o, "rank", json_integer(g->rank));
	return o;
}

json_t *inart_ctl_route_json(const struct inart_route *r)
{
	json_t *o = json_object();
	char s[16], p[24];

	inart_ctl_fmt_ip(r->prefix, s);
	snprintf(p, sizeof(p), "%s/%u", s, r->len);
	json_object_set_new(o, "prefix", json_string(p));
	json_object_set_new(o, "port", json_integer(r->port));
	return o;
}

json_t *inart_ctl_sw_cfg_json(const struct inart_sw_cfg *cfg)
{
	json_t *o = json_object(), *ports = json_array();

	for (int i = 0; i < cfg->n_ports && i < INART_SW_MAX_PORTS; i++) {
		json_t *p = json_object();
		const struct inart_sw_port_cfg *pc = &cfg->ports[i];

		if (!inart_mac_is_zero(pc->mac))
			json_object_set_new(p, "mac", jmac(pc->mac));
		if (pc->ip)
			json_object_set_new(p, "ip", jip(pc->ip));
		if (!inart_mac_is_zero(pc->peer_mac))
			json_object_set_new(p, "peer_mac", jmac(pc->peer_mac));
		if (pc->peer_ip)
			json_object_set_new(p, "peer_ip", jip(pc->peer_ip));
		json_array_append_new(ports, p);
	}
	json_object_set_new(o, "ports", ports);
	json_object_set_new(o, "pool_slots", json_integer(cfg->pool_slots));
	json_object_set_new(o, "max_values", json_integer(cfg->max_values));
	json_object_set_new(o, "flush_timeout_ns", json_integer((json_int_t)cfg->flush_timeout_ns));
	return o;
}

json_t *inart_ctl_ps_tree_json(const struct inart_ps_tree_cfg *cfg)
{
	json_t *o = json_object(), *ch = json_array();

	json_object_set_new(o, "job", json_integer(cfg->job));
	json_object_set_new(o, "tree", json_integer(cfg->tree));
	json_object_set_new(o, "fan_in", json_integer(cfg->fan_in));
	json_object_set_new(o, "max_chunks", json_integer(cfg->max_chunks));
	for (int i = 0; i < cfg->n_children && i < INART_PS_MAX_CHILDREN; i++) {
		json_t *c = json_object();

		json_object_set_new(c, "ip", jip(cfg->children[i].ip));
		json_object_set_new(c, "label", json_integer(cfg->children[i].label));
		json_array_append_new(ch, c);
	}
	json_object_set_new(o, "children", ch);
	if (cfg->n_sources > 0) {
		json_t *sa = json_array();

		for (int i = 0; i < cfg->n_sources; i++) {
			json_t *c = json_object();

			json_object_set_new(c, "ip", jip(cfg->sources[i].ip));
			if (cfg->sources[i].rank != INART_PS_ANY_RANK)
				json_object_set_new(c, "rank", json_integer(cfg->sources[i].rank));
			json_array_append_new(sa, c);
		}
		json_object_set_new(o, "sources", sa);
	}
	return o;
}

static json_t *ju64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* The counter tables (ctlmsg.h): every uint64_t counter of each struct, in
 * the struct's order.  tests/test_ctlmsg.c fills every word of the structs
 * with a distinct value and checks that each one comes out under its name,
 * so a counter added to a struct but not here fails the unit tests. */
#define C(type, field)                                                                             \
	{                                                                                          \
#field, offsetof(struct type, field)                                               \
	}
const struct inart_ctl_counter inart_ctl_sw_port_counters[] = {
    C(inart_sw_port_stats, rx_pkts),
    C(inart_sw_port_stats, rx_bytes),
    C(inart_sw_port_stats, tx_pkts),
    C(inart_sw_port_stats, tx_bytes),
    C(inart_sw_port_stats, rx_ina_bytes),
    C(inart_sw_port_stats, tx_ina_bytes),
};
const struct inart_ctl_counter inart_ctl_sw_tree_counters[] = {
    C(inart_sw_tree_stats, aggregated), C(inart_sw_tree_stats, emitted),
    C(inart_sw_tree_stats, partial),	C(inart_sw_tree_stats, early),
    C(inart_sw_tree_stats, fallback),	C(inart_sw_tree_stats, duplicates),
    C(inart_sw_tree_stats, results),	C(inart_sw_tree_stats, repaired),
    C(inart_sw_tree_stats, answered),	C(inart_sw_tree_stats, overflows),
};
const struct inart_ctl_counter inart_ctl_ps_counters[] = {
    C(inart_ps_stats, rx),
    C(inart_ps_stats, absorbed),
    C(inart_ps_stats, duplicates),
    C(inart_ps_stats, completed),
    C(inart_ps_stats, results_sent),
    C(inart_ps_stats, retx_answered),
    C(inart_ps_stats, overflows),
    C(inart_ps_stats, dropped),
    C(inart_ps_stats, drop_malformed),
    C(inart_ps_stats, drop_unknown),
    C(inart_ps_stats, drop_mismatch),
    C(inart_ps_stats, drop_stale),
    C(inart_ps_stats, drop_limit),
    C(inart_ps_stats, drop_source),
    C(inart_ps_stats, drop_window),
    C(inart_ps_stats, out_full),
    C(inart_ps_stats, rescales),
    C(inart_ps_stats, notices),
    C(inart_ps_stats, replaced),
    C(inart_ps_stats, nacks),
    C(inart_ps_stats, probes),
    C(inart_ps_stats, probe_nacks),
    C(inart_ps_stats, resent_down),
    C(inart_ps_stats, answers_held),
    C(inart_ps_stats, restarts),
    C(inart_ps_stats, step_notices),
};
#undef C
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))
const int inart_ctl_n_sw_port_counters = N_OF(inart_ctl_sw_port_counters);
const int inart_ctl_n_sw_tree_counters = N_OF(inart_ctl_sw_tree_counters);
const int inart_ctl_n_ps_counters = N_OF(inart_ctl_ps_counters);
#undef N_OF

static uint64_t counter_get(const void *st, const struct inart_ctl_counter *c)
{
	uint64_t v;

	memcpy(&v, (const char *)st + c->off, sizeof(v));
	return v;
}

void inart_ctl_counters_sub(void *st, const void *base, const struct inart_ctl_counter *tab, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = counter_get(st, &tab[i]) - counter_get(base, &tab[i]);

		memcpy((char *)st + tab[i].off, &v, sizeof(v));
	}
}

/* Add the counters of st named in tab to the object o. */
static void counters_json(json_t *o, const void *st, const struct inart_ctl_counter *tab, int n)
{
	for (int i = 0; i < n; i++)
		json_object_set_new(o, tab[i].name, ju64(counter_get(st, &tab[i])));
}

json_t *inart_ctl_sw_stats_json(const uint64_t *drops, const struct inart_sw_port_stats *ports,
				int n_ports, const char *const *names,
				const struct inart_sw_tree_stats *trees, int n_trees)
{
	json_t *o = json_object(), *d = json_object(), *pa = json_array(), *ta = json_array();

	for (int i = 0; i < INART_DROP_N; i++)
		json_object_set_new(d, inart_switch_drop_name(i), ju64(drops[i]));
	for (int i = 0; i < n_ports; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "port", json_integer(i));
		if (names != NULL && names[i] != NULL)
			json_object_set_new(p, "name", json_string(names[i]));
		counters_json(p, &ports[i], inart_ctl_sw_port_counters,
			      inart_ctl_n_sw_port_counters);
		json_array_append_new(pa, p);
	}
	for (int i = 0; i < n_trees; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "job", json_integer(trees[i].job));
		json_object_set_new(p, "tree", json_integer(trees[i].tree));
		counters_json(p, &trees[i], inart_ctl_sw_tree_counters,
			      inart_ctl_n_sw_tree_counters);
		json_array_append_new(ta, p);
	}
	json_object_set_new(o, "drops", d);
	json_object_set_new(o, "ports", pa);
	json_object_set_new(o, "trees", ta);
	return o;
}

json_t *inart_ctl_ps_stats_json(const struct inart_ps_stats *st)
{
	json_t *o = json_object();

	counters_json(o, st, inart_ctl_ps_counters, inart_ctl_n_ps_counters);
	return o;
}

/* ---- request encoding (client side) ---- */

char *inart_ctl_req_encode(const struct inart_ctl_req *req)
{
	const char *name = inart_ctl_op_name(req->op);
	json_t *o;
	char *s;

	if (name == NULL) {
		errno = EINVAL;
		return NULL;
	}
	o = json_object();
	json_object_set_new(o, "op", json_string(name));
	if (req->node[0])
		json_object_set_new(o, "node", json_string(req->node));
	if (req->install_id[0])
		json_object_set_new(o, "install_id", json_string(req->install_id));
	if (req->prepare && (req->op == INART_CTL_INSTALL || req->op == INART_CTL_TREES))
		json_object_set_new(o, "phase", json_string("prepare"));
	switch (req->op) {
	case INART_CTL_INSTALL: {
		json_t *a;

		if (req->replace)
			json_object_set_new(o, "replace", json_true());
		if (req->has_cfg)
			json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&req->cfg));
		a = json_array();
		for (int i = 0; i < req->n_labels; i++)
			json_array_append_new(a, inart_ctl_label_json(&req->labels[i]));
		json_object_set_new(o, "labels", a);
		if (req->n_del_labels > 0) {
			a = json_array();
			for (int i = 0; i < req->n_del_labels; i++)
				json_array_append_new(a, json_integer(req->del_labels[i]));
			json_object_set_new(o, "del_labels", a);
		}
		a = json_array();
		for (int i = 0; i < req->n_routes; i++)
			json_array_append_new(a, inart_ctl_route_json(&req->routes[i]));
		json_object_set_new(o, "routes", a);
		if (req->n_ingress > 0) {
			a = json_array();
			for (int i = 0; i < req->n_ingress; i++)
				json_array_append_new(a, inart_ctl_ingress_json(&req->ingress[i]));
			json_object_set_new(o, "ingress", a);
		}
		break;
	}
	case INART_CTL_TREES: {
		json_t *a = json_array();

		if (req->replace)
			json_object_set_new(o, "replace", json_true());
		if (req->reset)
			json_object_set_new(o, "reset", json_true());
		for (int i = 0; i < req->n_trees; i++)
			json_array_append_new(a, inart_ctl_ps_tree_json(&req->trees[i]));
		json_object_set_new(o, "trees", a);
		break;
	}
	case INART_CTL_LOG_LEVEL:
		if (req->level < 0 || req->level > 3) {
			json_decref(o);
			errno = EINVAL;
			return NULL;
		}
		json_object_set_new(o, "level", json_string(level_names[req->level]));
		break;
	case INART_CTL_TREE_DEL:
		json_object_set_new(o, "job", json_integer(req->job));
		json_object_set_new(o, "tree", json_integer(req->tree));
		break;
	default:
		break;
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}

/* ---- replies ---- */

char *inart_ctl_reply_ok(json_t *data)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "ok", json_true());
	if (data != NULL) {
		json_object_update(o, data);
		json_decref(data);
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}

char *inart_ctl_reply_err(const char *reason)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "reason", json_string(reason ? reason : "refused"));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}

int inart_ctl_reply_parse(const char *body, size_t len, json_t **obj, char *why, size_t why_len)
{
	json_error_t jerr;
	json_t *o, *ok, *reason;

	*obj = NULL;
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL)
		return inart_why(why, why_len, -EINVAL, "reply is not JSON: %s", jerr.text);
	ok = json_object_get(o, "ok");
	if (!json_is_object(o) || !json_is_boolean(ok)) {
		json_decref(o);
		return inart_why(why, why_len, -EINVAL, "reply without 'ok'");
	}
	if (json_is_false(ok)) {
		reason = json_object_get(o, "reason");
		inart_why(why, why_len, -EINVAL, "%s",
			  json_is_string(reason) ? json_string_value(reason) : "refused");
		json_decref(o);
		return -EPERM;
	}
	*obj = o;
	return 0;
}
