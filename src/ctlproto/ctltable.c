/*
 * ctltable: table entries and configurations <-> JSON (see ctltable.h).  The
 * parsers check every field (ctlfield) before returning; the serializers
 * write the same forms back.
 */
#include "ctlproto/ctltable.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ctlproto/ctlfield.h"
#include "common/err.h"
#include "dp/pkt.h"

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
static int get_ports(json_t *o, const char *what, const char *key, uint64_t *mask,
		     struct inart_err *err)
{
	json_t *arr;
	size_t n;
	int rc = inart_ctl_get_array(o, what, key, INART_SW_MAX_PORTS, &arr, &n, err);

	*mask = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		json_t *v = json_array_get(arr, i);

		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) >= INART_SW_MAX_PORTS)
			return inart_err_set(err, -EINVAL, "%s: %s[%zu] must be a port 0..%d", what,
					     key, i, INART_SW_MAX_PORTS - 1);
		*mask |= 1ull << json_integer_value(v);
	}
	return rc;
}

/* The array key of o: objects, each read with the fields f into base + i *
 * stride (room for max), named "what: key[i]" in messages; *n of them. */
static int get_records(json_t *o, const char *what, const char *key, size_t max,
		       const struct inart_ctl_field *f, size_t nf, void *base, size_t stride,
		       size_t *n, struct inart_err *err)
{
	json_t *arr;
	char sub[96];
	int rc = inart_ctl_get_array(o, what, key, max, &arr, n, err);

	for (size_t i = 0; rc == 0 && i < *n; i++) {
		void *rec = (char *)base + i * stride;

		memset(rec, 0, stride);
		snprintf(sub, sizeof(sub), "%s: %s[%zu]", what, key, i);
		rc = inart_ctl_get_object(json_array_get(arr, i), sub, NULL, f, nf, rec, err);
	}
	return rc;
}

/* The fields of an UP entry (after the common ones). */
static int parse_label_up(json_t *j, const char *what, struct inart_label_entry *e, uint64_t *exp,
			  struct inart_err *err)
{
	const struct inart_ctl_field route[] = {
	    INART_CTL_NUM(inart_label_entry, out_port, 1, 0, UINT16_MAX, 0),
	    INART_CTL_NUM(inart_label_entry, next_label, 0, 0, UINT32_MAX, 0),
	};
	json_t *arr;
	size_t n;
	int agg = 0, rc;

	if (json_object_get(j, "down") != NULL)
		return inart_err_set(err, -EINVAL, "%s: 'down' in an up entry", what);
	if ((rc = inart_ctl_get_fields(j, what, route, INART_CTL_N_FIELDS(route), e, err)) < 0 ||
	    (rc = inart_ctl_get_bool(j, what, "aggregate", &agg, err)) < 0)
		return rc;
	e->aggregate = (uint8_t)agg;
	{
		/* slots: required when aggregating, then at least one */
		const struct inart_ctl_field slots[] = {
		    INART_CTL_NUM(inart_label_entry, slot_base, agg, 0, UINT16_MAX, 0),
		    INART_CTL_NUM(inart_label_entry, n_slots, agg, agg ? 1 : 0, UINT16_MAX, 0),
		};

		if ((rc = inart_ctl_get_fields(j, what, slots, INART_CTL_N_FIELDS(slots), e, err)) <
		    0)
			return rc;
	}
	if ((rc = inart_ctl_get_array(j, what, "expected", INART_WIRE_MAX_BITMAP_WORDS, &arr, &n,
				      err)) < 0)
		return rc;
	if (agg && n == 0)
		return inart_err_set(err, -EINVAL, "%s: an aggregating entry needs 'expected'",
				     what);
	e->bitmap_words = (uint8_t)n;
	e->expected = n > 0 ? exp : NULL;
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(arr, i);

		if (!json_is_string(w) || inart_addr_parse_hex64(json_string_value(w), &exp[i]) < 0)
			return inart_err_set(
			    err, -EINVAL,
			    "%s: expected[%zu] must be a hex string of at most 16 digits", what, i);
	}
	return 0;
}

/* The fields of a DOWN entry (after the common ones). */
static int parse_label_down(json_t *j, const char *what, struct inart_label_entry *e,
			    struct inart_label_down *down, struct inart_err *err)
{
	static const char *const up_only[] = {"out_port",  "next_label", "aggregate",
					      "slot_base", "n_slots",	 "expected"};
	static const struct inart_ctl_field copy[] = {
	    INART_CTL_NUM(inart_label_down, port, 1, 0, UINT16_MAX, 0),
	    INART_CTL_NUM(inart_label_down, label, 0, 0, UINT32_MAX, 0),
	    INART_CTL_IPV4(inart_label_down, dst_ip, 0),
	};
	size_t n;
	int rc;

	for (size_t i = 0; i < sizeof(up_only) / sizeof(up_only[0]); i++)
		if (json_object_get(j, up_only[i]) != NULL)
			return inart_err_set(err, -EINVAL, "%s: '%s' in a down entry", what,
					     up_only[i]);
	if ((rc = get_records(j, what, "down", INART_SW_MAX_FANOUT, copy, INART_CTL_N_FIELDS(copy),
			      down, sizeof(*down), &n, err)) < 0)
		return rc;
	if (n == 0)
		return inart_err_set(err, -EINVAL, "%s: a down entry needs a non-empty 'down'",
				     what);
	e->n_down = (uint16_t)n;
	e->down = down;
	return 0;
}

int inart_ctl_label_parse(json_t *j, const char *what, struct inart_label_entry *e, uint64_t *exp,
			  struct inart_label_down *down, struct inart_err *err)
{
	static const char *const keys[] = {
	    "label",	 "kind",      "job",	 "tree",     "in_ports", "out_port", "next_label",
	    "aggregate", "slot_base", "n_slots", "expected", "down",	 NULL};
	static const struct inart_ctl_field label[] = {
	    INART_CTL_NUM(inart_label_entry, label, 1, 1, UINT32_MAX, 0),
	};
	static const struct inart_ctl_field tree[] = {
	    INART_CTL_NUM(inart_label_entry, job, 1, 0, UINT32_MAX, 0),
	    INART_CTL_NUM(inart_label_entry, tree, 1, 0, UINT16_MAX, 0),
	};
	json_t *kind;
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = inart_ctl_get_keys(j, what, keys, err)) < 0 ||
	    (rc = inart_ctl_get_fields(j, what, label, INART_CTL_N_FIELDS(label), e, err)) < 0)
		return rc;
	kind = json_object_get(j, "kind");
	if (json_is_string(kind) && strcmp(json_string_value(kind), "up") == 0)
		e->kind = INART_LABEL_UP;
	else if (json_is_string(kind) && strcmp(json_string_value(kind), "down") == 0)
		e->kind = INART_LABEL_DOWN;
	else
		return inart_err_set(err, -EINVAL, "%s: 'kind' must be \"up\" or \"down\"", what);
	if ((rc = inart_ctl_get_fields(j, what, tree, INART_CTL_N_FIELDS(tree), e, err)) < 0 ||
	    (rc = get_ports(j, what, "in_ports", &e->in_ports, err)) < 0)
		return rc;
	if (e->kind == INART_LABEL_UP)
		return parse_label_up(j, what, e, exp, err);
	return parse_label_down(j, what, e, down, err);
}

int inart_ctl_route_parse(json_t *j, const char *what, struct inart_route *r, struct inart_err *err)
{
	static const char *const keys[] = {"prefix", "port", NULL};
	static const struct inart_ctl_field port[] = {
	    INART_CTL_NUM(inart_route, port, 1, 0, UINT16_MAX, 0),
	};
	json_t *p;
	char buf[32], *slash, *end;
	long len;
	int rc;

	memset(r, 0, sizeof(*r));
	if ((rc = inart_ctl_get_keys(j, what, keys, err)) < 0)
		return rc;
	p = json_object_get(j, "prefix");
	if (!json_is_string(p) || strlen(json_string_value(p)) >= sizeof(buf))
		return inart_err_set(err, -EINVAL, "%s: 'prefix' must be \"a.b.c.d/len\"", what);
	strcpy(buf, json_string_value(p));
	slash = strchr(buf, '/');
	if (slash == NULL)
		return inart_err_set(err, -EINVAL, "%s: 'prefix' must be \"a.b.c.d/len\"", what);
	*slash = '\0';
	errno = 0;
	len = strtol(slash + 1, &end, 10);
	if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || len < 0 || len > 32 ||
	    inart_addr_parse_ip(buf, &r->prefix) < 0)
		return inart_err_set(err, -EINVAL,
				     "%s: 'prefix' must be \"a.b.c.d/len\" with len 0..32", what);
	r->len = (uint8_t)len;
	return inart_ctl_get_fields(j, what, port, INART_CTL_N_FIELDS(port), r, err);
}

int inart_ctl_ingress_parse(json_t *j, const char *what, struct inart_sw_ingress *g,
			    struct inart_err *err)
{
	static const struct inart_ctl_field f[] = {
	    INART_CTL_NUM(inart_sw_ingress, port, 1, 0, INART_SW_MAX_PORTS - 1, 0),
	    INART_CTL_NUM(inart_sw_ingress, job, 1, 0, UINT32_MAX, 0),
	    INART_CTL_NUM(inart_sw_ingress, rank, 1, 0, INART_WIRE_MAX_CONTRIB - 1, 0),
	};

	memset(g, 0, sizeof(*g));
	return inart_ctl_get_object(j, what, NULL, f, INART_CTL_N_FIELDS(f), g, err);
}

int inart_ctl_sw_cfg_parse(json_t *j, const char *what, struct inart_sw_cfg *cfg,
			   struct inart_err *err)
{
	static const char *const keys[] = {"ports", "pool_slots", "max_values", "flush_timeout_ns",
					   NULL};
	static const struct inart_ctl_field f[] = {
	    INART_CTL_NUM(inart_sw_cfg, pool_slots, 1, 0, INART_SW_MAX_POOL_SLOTS, 0),
	    INART_CTL_NUM(inart_sw_cfg, max_values, 0, 0, INART_SW_MAX_SLOT_VALUES, 0),
	    INART_CTL_NUM(inart_sw_cfg, flush_timeout_ns, 1, 0, INT64_MAX, 0),
	};
	static const struct inart_ctl_field pf[] = {
	    INART_CTL_ETH(inart_sw_port_cfg, mac),
	    INART_CTL_IPV4(inart_sw_port_cfg, ip, 0),
	    INART_CTL_ETH(inart_sw_port_cfg, peer_mac),
	    INART_CTL_IPV4(inart_sw_port_cfg, peer_ip, 0),
	};
	size_t n;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if ((rc = inart_ctl_get_keys(j, what, keys, err)) < 0)
		return rc;
	if ((rc = get_records(j, what, "ports", INART_SW_MAX_PORTS, pf, INART_CTL_N_FIELDS(pf),
			      cfg->ports, sizeof(cfg->ports[0]), &n, err)) < 0)
		return rc;
	if (n == 0)
		return inart_err_set(err, -EINVAL, "%s: 'ports' must list 1..%d ports", what,
				     INART_SW_MAX_PORTS);
	cfg->n_ports = (int)n;
	if ((rc = inart_ctl_get_fields(j, what, f, INART_CTL_N_FIELDS(f), cfg, err)) < 0)
		return rc;
	if ((uint64_t)(cfg->pool_slots ? cfg->pool_slots : 1) *
		(uint64_t)(cfg->max_values ? cfg->max_values : INART_SW_MAX_SLOT_VALUES) >
	    INART_SW_MAX_POOL_VALUES)
		return inart_err_set(
		    err, -EINVAL, "%s: pool_slots x max_values above %u values (the pool's limit)",
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
			    struct inart_ps_source *src, struct inart_err *err)
{
	static const char *const more[] = {"children", "sources", NULL};
	static const struct inart_ctl_field f[] = {
	    INART_CTL_NUM(inart_ps_tree_cfg, job, 1, 0, UINT32_MAX, 0),
	    INART_CTL_NUM(inart_ps_tree_cfg, tree, 1, 0, UINT16_MAX, 0),
	    INART_CTL_NUM(inart_ps_tree_cfg, fan_in, 1, 1, INART_WIRE_MAX_CONTRIB, 0),
	    INART_CTL_NUM(inart_ps_tree_cfg, max_chunks, 0, 0, INART_PS_LIMIT_MAX_CHUNKS, 0),
	};
	static const struct inart_ctl_field cf[] = {
	    INART_CTL_IPV4(inart_ps_child, ip, 1),
	    INART_CTL_NUM(inart_ps_child, label, 0, 0, UINT32_MAX, 0),
	};
	size_t n;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	if ((rc = inart_ctl_get_object(j, what, more, f, INART_CTL_N_FIELDS(f), cfg, err)) < 0 ||
	    (rc =
		 get_records(j, what, "children", INART_PS_MAX_CHILDREN, cf, INART_CTL_N_FIELDS(cf),
			     cfg->children, sizeof(cfg->children[0]), &n, err)) < 0)
		return rc;
	cfg->n_children = (uint16_t)n;
	{
		/* absent rank: a switch of the tree (any rank) */
		const struct inart_ctl_field sf[] = {
		    INART_CTL_IPV4(inart_ps_source, ip, 1),
		    INART_CTL_NUM(inart_ps_source, rank, 0, 0, cfg->fan_in - 1, INART_PS_ANY_RANK),
		};

		if ((rc = get_records(j, what, "sources", INART_PS_MAX_SOURCES, sf,
				      INART_CTL_N_FIELDS(sf), src, sizeof(*src), &n, err)) < 0)
			return rc;
	}
	cfg->n_sources = (uint16_t)n;
	cfg->sources = n > 0 ? src : NULL;
	return 0;
}

/* ---- entries: C -> JSON ---- */

static json_t *jip(uint32_t ip)
{
	char s[16];

	inart_addr_fmt_ip(ip, s);
	return json_string(s);
}

static json_t *jmac(const uint8_t mac[6])
{
	char s[18];

	inart_addr_fmt_mac(mac, s);
	return json_string(s);
}

static json_t *label_json(const struct inart_label_entry *e)
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

json_t *inart_ctl_labels_json(const struct inart_label_entry *e, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++)
		json_array_append_new(a, label_json(&e[i]));
	return a;
}

json_t *inart_ctl_ingress_json(const struct inart_sw_ingress *g, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "port", json_integer(g[i].port));
		json_object_set_new(o, "job", json_integer(g[i].job));
		json_object_set_new(o, "rank", json_integer(g[i].rank));
		json_array_append_new(a, o);
	}
	return a;
}

json_t *inart_ctl_routes_json(const struct inart_route *r, int n)
{
	json_t *a = json_array();

	for (int i = 0; i < n; i++) {
		json_t *o = json_object();
		char s[16], p[24];

		inart_addr_fmt_ip(r[i].prefix, s);
		snprintf(p, sizeof(p), "%s/%u", s, r[i].len);
		json_object_set_new(o, "prefix", json_string(p));
		json_object_set_new(o, "port", json_integer(r[i].port));
		json_array_append_new(a, o);
	}
	return a;
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

json_t *inart_ctl_ps_trees_json(const struct inart_ps_tree_cfg *t, int n)
{
	json_t *a = json_array();

	for (int k = 0; k < n; k++) {
		const struct inart_ps_tree_cfg *cfg = &t[k];
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
					json_object_set_new(c, "rank",
							    json_integer(cfg->sources[i].rank));
				json_array_append_new(sa, c);
			}
			json_object_set_new(o, "sources", sa);
		}
		json_array_append_new(a, o);
	}
	return a;
}
