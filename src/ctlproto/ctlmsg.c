/*
 * ctlmsg: control messages (see ctlmsg.h): length-prefixed JSON, parsed with
 * jansson into fixed C structs.  Every object is checked for unknown keys,
 * every number for its type and range, every array for its length, before
 * anything is returned; on error the request is left empty.
 *
 * Ownership: a parsed request owns its arrays; json_t values returned are new
 * references owned by the caller.
 */
#include "ctlproto/ctlmsg.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/slab.h"
#include "dp/bytes.h"
#include "dp/shard.h"

/* Wire names, indexed by enum inart_ctl_op (test_ctlmsg pins each to its op). */
static const char *const op_names[] = {
    NULL,    "info",	 "install", "tables", "stats", "reset_stats", "lose_state",   "log_level",
    "trees", "tree_del", "show",    "commit", "abort", "rollback",    "port_counters"};
#define N_OPS ((int)(sizeof(op_names) / sizeof(op_names[0])))
_Static_assert(N_OPS == INART_CTL_PORT_COUNTERS + 1, "a wire name per control operation");

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* The test operations' names (their numbers apart: enum inart_ctl_op). */
static const struct {
	int op;
	const char *name;
} test_ops[] = {{INART_CTL_TEST_FAULT, "test_fault"}};
#define N_TEST_OPS ((int)(sizeof(test_ops) / sizeof(test_ops[0])))

const char *inart_ctl_op_name(int op)
{
	for (int i = 0; i < N_TEST_OPS; i++)
		if (op == test_ops[i].op)
			return test_ops[i].name;
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

/* ---- requests ---- */

static int op_from_name(const char *s)
{
	for (int i = 1; i < N_OPS; i++)
		if (strcmp(s, op_names[i]) == 0)
			return i;
	for (int i = 0; i < N_TEST_OPS; i++)
		if (strcmp(s, test_ops[i].name) == 0)
			return test_ops[i].op;
	return 0;
}

/* "install_id" (16 hex digits) and "phase" ("prepare": keep aside until a
 * commit; absent: apply now). */
static int parse_ident(json_t *o, const char *what, struct inart_ctl_req *r, int phase,
		       struct inart_err *err)
{
	json_t *v = json_object_get(o, "install_id");
	uint64_t id;

	if (v != NULL) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != 16 ||
		    inart_addr_parse_hex64(json_string_value(v), &id) < 0)
			return inart_err_set(err, -EINVAL, "%s: 'install_id' must be 16 hex digits",
					     what);
		strcpy(r->install_id, json_string_value(v));
	}
	v = json_object_get(o, "phase");
	if (v == NULL)
		return 0;
	if (!phase || !json_is_string(v) || strcmp(json_string_value(v), "prepare") != 0)
		return inart_err_set(err, -EINVAL, "%s: 'phase' must be \"prepare\"", what);
	r->prepare = 1;
	return 0;
}

/* The sizes of an install or trees request's arrays, read from its JSON
 * before it is parsed (an array that is not one, or too long, counts 0: the
 * parse refuses it). */
struct req_sizes {
	size_t labels, words, copies, del_labels, routes, ingress, trees, srcs;
};

static size_t array_len(json_t *o, const char *key, size_t max)
{
	json_t *v = json_object_get(o, key);

	return json_is_array(v) && json_array_size(v) <= max ? json_array_size(v) : 0;
}

static void req_sizes(json_t *o, int op, struct req_sizes *z)
{
	json_t *labels = json_object_get(o, "labels"), *trees = json_object_get(o, "trees");

	memset(z, 0, sizeof(*z));
	if (op == INART_CTL_INSTALL) {
		z->labels = array_len(o, "labels", INART_SW_MAX_LABELS);
		for (size_t i = 0; i < z->labels; i++) {
			size_t w, c;

			inart_ctl_label_sizes(json_array_get(labels, i), &w, &c);
			z->words += w;
			z->copies += c;
		}
		z->del_labels = array_len(o, "del_labels", INART_SW_MAX_LABELS);
		z->routes = array_len(o, "routes", INART_CTL_MAX_ROUTES);
		z->ingress = array_len(o, "ingress", INART_CTL_MAX_ROUTES);
	} else {
		z->trees = array_len(o, "trees", INART_CTL_MAX_TREES);
		for (size_t i = 0; i < z->trees; i++)
			z->srcs += inart_ctl_ps_tree_sources(json_array_get(trees, i));
	}
}

/* A request, the sizes of its arrays (req_sizes), for req_lay_out, and the
 * install arrays writable while they are parsed (r->tab views them). */
struct req_room {
	struct inart_ctl_req *r;
	struct req_sizes z;
	struct inart_label_entry *labels; /* pointing into exp and downs */
	uint64_t *exp;
	struct inart_label_down *downs;
	uint32_t *del_labels;
	struct inart_route *routes;
	struct inart_sw_ingress *ingress;
};

static void req_lay_out(void *obj, struct inart_slab *s)
{
	struct req_room *q = obj;
	struct inart_ctl_req *r = q->r;
	const struct req_sizes *z = &q->z;

	q->labels = inart_slab_take(s, z->labels, sizeof(*q->labels));
	q->exp = inart_slab_take(s, z->words, sizeof(*q->exp));
	q->downs = inart_slab_take(s, z->copies, sizeof(*q->downs));
	q->del_labels = inart_slab_take(s, z->del_labels, sizeof(*q->del_labels));
	q->routes = inart_slab_take(s, z->routes, sizeof(*q->routes));
	q->ingress = inart_slab_take(s, z->ingress, sizeof(*q->ingress));
	r->trees = inart_slab_take(s, z->trees, sizeof(*r->trees));
	r->srcs = inart_slab_take(s, z->srcs, sizeof(*r->srcs));
}

/* Room for the arrays of request o (op: install or trees) in q, one block
 * in q->r->block.  0 or -ENOMEM. */
static int req_alloc(json_t *o, struct req_room *q)
{
	struct inart_ctl_req *r = q->r;

	req_sizes(o, r->op, &q->z);
	r->block = inart_slab_block(q, req_lay_out);
	return r->block != NULL ? 0 : -ENOMEM;
}

/* Frees the block req_alloc made (a request never allocates more). */
void inart_ctl_req_free(struct inart_ctl_req *req)
{
	if (req == NULL)
		return;
	free(req->block);
	memset(req, 0, sizeof(*req));
}

static int parse_labels(json_t *o, struct req_room *q, struct inart_err *err)
{
	json_t *arr;
	size_t n, words = 0, copies = 0;
	char what[48];
	int rc;

	rc = inart_ctl_get_array(o, "install", "labels", INART_SW_MAX_LABELS, &arr, &n, err);
	if (rc < 0)
		return rc;
	q->r->tab.n_labels = (int)n;
	/* expected bitmaps and copies into exp and downs, in label order */
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(arr, i);
		size_t w, c;

		inart_ctl_label_sizes(j, &w, &c);
		snprintf(what, sizeof(what), "labels[%zu]", i);
		if ((rc = inart_ctl_label_parse(j, what, &q->labels[i], q->exp + words,
						q->downs + copies, err)) < 0)
			return rc;
		words += w;
		copies += c;
	}
	return 0;
}

/* One element of an install list ("key[i]" in messages). */
typedef int (*elem_parse_fn)(json_t *j, const char *what, void *out, struct inart_err *err);

static int del_label_elem(json_t *v, const char *what, void *out, struct inart_err *err)
{
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > UINT32_MAX)
		return inart_err_set(err, -EINVAL, "%s: must be a label 1..%u", what, UINT32_MAX);
	*(uint32_t *)out = (uint32_t)json_integer_value(v);
	return 0;
}

static int route_elem(json_t *j, const char *what, void *out, struct inart_err *err)
{
	return inart_ctl_route_parse(j, what, out, err);
}

static int ingress_elem(json_t *j, const char *what, void *out, struct inart_err *err)
{
	return inart_ctl_ingress_parse(j, what, out, err);
}

/* The install list key: at most max elements of `size` bytes into mem
 * (room for them: req_alloc), *count of them. */
static int parse_list(json_t *o, const char *key, size_t max, size_t size, elem_parse_fn parse,
		      void *mem, int *count, struct inart_err *err)
{
	json_t *arr;
	size_t n;
	char what[48];
	int rc = inart_ctl_get_array(o, "install", key, max, &arr, &n, err);

	*count = rc < 0 ? 0 : (int)n;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		snprintf(what, sizeof(what), "%s[%zu]", key, i);
		rc = parse(json_array_get(arr, i), what, (char *)mem + i * size, err);
	}
	return rc;
}

static int parse_install(json_t *o, struct inart_ctl_req *r, struct inart_err *err)
{
	static const char *const keys[] = {"op",	 "node",       "config", "replace",
					   "labels",	 "del_labels", "routes", "ingress",
					   "install_id", "phase",      "reset",	 NULL};
	struct req_room q = {.r = r};
	struct inart_sw_update *u = &r->tab;
	json_t *cfg;
	int rc;

	if ((rc = inart_ctl_get_keys(o, "install", keys, err)) < 0 ||
	    (rc = parse_ident(o, "install", r, 1, err)) < 0 || (rc = req_alloc(o, &q)) < 0)
		return rc;
	u->labels = q.labels;
	u->del_labels = q.del_labels;
	u->routes = q.routes;
	u->ingress = q.ingress;
	if ((rc = inart_ctl_get_bool(o, "install", "replace", &u->replace, err)) < 0 ||
	    (rc = inart_ctl_get_bool(o, "install", "reset", &r->reset, err)) < 0)
		return rc;
	cfg = json_object_get(o, "config");
	if (cfg != NULL) {
		if ((rc = inart_ctl_sw_cfg_parse(cfg, "config", &r->cfg, err)) < 0)
			return rc;
		r->has_cfg = 1;
	}
	if ((rc = parse_labels(o, &q, err)) < 0 ||
	    (rc = parse_list(o, "del_labels", INART_SW_MAX_LABELS, sizeof(*q.del_labels),
			     del_label_elem, q.del_labels, &u->n_del_labels, err)) < 0 ||
	    (rc = parse_list(o, "routes", INART_CTL_MAX_ROUTES, sizeof(*q.routes), route_elem,
			     q.routes, &u->n_routes, err)) < 0)
		return rc;
	return parse_list(o, "ingress", INART_CTL_MAX_ROUTES, sizeof(*q.ingress), ingress_elem,
			  q.ingress, &u->n_ingress, err);
}

static int parse_trees(json_t *o, struct inart_ctl_req *r, struct inart_err *err)
{
	static const char *const keys[] = {"op",    "node",	  "replace", "reset",
					   "trees", "install_id", "phase",   NULL};
	struct req_room q = {.r = r};
	json_t *arr;
	size_t n, ns = 0;
	char what[48];
	int rc;

	if ((rc = inart_ctl_get_keys(o, "trees", keys, err)) < 0 ||
	    (rc = parse_ident(o, "trees", r, 1, err)) < 0 || (rc = req_alloc(o, &q)) < 0)
		return rc;
	if ((rc = inart_ctl_get_bool(o, "trees", "replace", &r->replace, err)) < 0 ||
	    (rc = inart_ctl_get_bool(o, "trees", "reset", &r->reset, err)) < 0)
		return rc;
	if (json_object_get(o, "trees") == NULL)
		return inart_err_set(err, -EINVAL, "trees: missing 'trees'");
	rc = inart_ctl_get_array(o, "trees", "trees", INART_CTL_MAX_TREES, &arr, &n, err);
	if (rc < 0)
		return rc;
	r->n_trees = (int)n;
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(arr, i);

		snprintf(what, sizeof(what), "trees[%zu]", i);
		if ((rc = inart_ctl_ps_tree_parse(j, what, &r->trees[i], r->srcs + ns, err)) < 0)
			return rc;
		ns += inart_ctl_ps_tree_sources(j);
		for (size_t k = 0; k < i; k++)
			if (r->trees[k].job == r->trees[i].job &&
			    r->trees[k].tree == r->trees[i].tree)
				return inart_err_set(err, -EINVAL,
						     "trees[%zu]: job %" PRIu32
						     " tree %u listed twice",
						     i, r->trees[i].job, r->trees[i].tree);
	}
	return 0;
}

int inart_ctl_req_parse(const char *body, size_t len, struct inart_ctl_req *req,
			struct inart_err *err)
{
	static const char *const plain_keys[] = {"op", "node", NULL};
	static const char *const level_keys[] = {"op", "node", "level", NULL};
	static const struct inart_ctl_field del_fields[] = {
	    INART_CTL_NUM(inart_ctl_req, job, 1, 0, UINT32_MAX, 0),
	    INART_CTL_NUM(inart_ctl_req, tree, 1, 0, UINT16_MAX, 0),
	};
	static const char *const id_keys[] = {"op", "node", "install_id", NULL};
	static const struct inart_ctl_field fault_fields[] = {
	    INART_CTL_NUM(inart_ctl_req, shard, 1, 0, INART_SHARD_MAX - 1, 0),
	    INART_CTL_NUM(inart_ctl_req, error, 1, 1, 4095, 0),
	};
	json_error_t jerr;
	json_t *o, *v;
	int rc = 0;

	memset(req, 0, sizeof(*req));
	if (err != NULL)
		err->msg[0] = '\0';
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL)
		return inart_err_set(err, -EINVAL, "not JSON: %d:%d: %s", jerr.line, jerr.column,
				     jerr.text);
	if (!json_is_object(o)) {
		rc = inart_err_set(err, -EINVAL, "a request must be a JSON object");
		goto out;
	}
	v = json_object_get(o, "op");
	if (!json_is_string(v) || (req->op = op_from_name(json_string_value(v))) == 0) {
		rc = inart_err_set(err, -EINVAL,
				   "'op' must name an operation (info, install, tables, "
				   "stats, reset_stats, lose_state, log_level, trees, "
				   "tree_del, show, commit, abort, rollback)");
		goto out;
	}
	v = json_object_get(o, "node");
	if (v != NULL) {
		if (!json_is_string(v) || strlen(json_string_value(v)) >= sizeof(req->node)) {
			rc = inart_err_set(err, -EINVAL,
					   "'node' must be a string of at most %zu bytes",
					   sizeof(req->node) - 1);
			goto out;
		}
		strcpy(req->node, json_string_value(v));
	}
	switch (req->op) {
	case INART_CTL_INSTALL:
		rc = parse_install(o, req, err);
		break;
	case INART_CTL_TREES:
		rc = parse_trees(o, req, err);
		break;
	case INART_CTL_LOG_LEVEL:
		if ((rc = inart_ctl_get_keys(o, "log_level", level_keys, err)) < 0)
			break;
		v = json_object_get(o, "level");
		req->level = -1;
		for (int i = 0; json_is_string(v) && i < 4; i++)
			if (strcmp(json_string_value(v), level_names[i]) == 0)
				req->level = i;
		if (req->level < 0)
			rc = inart_err_set(err, -EINVAL,
					   "log_level: 'level' must be error, warn, info or debug");
		break;
	case INART_CTL_TREE_DEL:
		rc = inart_ctl_get_object(o, "tree_del", plain_keys, del_fields,
					  INART_CTL_N_FIELDS(del_fields), req, err);
		break;
	case INART_CTL_TEST_FAULT:
		rc = inart_ctl_get_object(o, "test_fault", plain_keys, fault_fields,
					  INART_CTL_N_FIELDS(fault_fields), req, err);
		break;
	case INART_CTL_COMMIT:
	case INART_CTL_ABORT:
	case INART_CTL_ROLLBACK:
		if ((rc = inart_ctl_get_keys(o, inart_ctl_op_name(req->op), id_keys, err)) < 0 ||
		    (rc = parse_ident(o, inart_ctl_op_name(req->op), req, 0, err)) < 0)
			break;
		if (req->op != INART_CTL_ABORT && req->install_id[0] == '\0')
			rc = inart_err_set(err, -EINVAL, "%s: missing 'install_id'",
					   inart_ctl_op_name(req->op));
		break;
	default:
		rc = inart_ctl_get_keys(o, inart_ctl_op_name(req->op), plain_keys, err);
		break;
	}
out:
	json_decref(o);
	if (rc < 0)
		inart_ctl_req_free(req);
	return rc;
}

/* ---- request encoding (client side) ---- */

/* Message o as one compact line (keys in order), o released; NULL with
 * errno ENOMEM if it cannot be written. */
static char *dump(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(o);
	if (s == NULL)
		errno = ENOMEM;
	return s;
}

char *inart_ctl_req_encode(const struct inart_ctl_req *req)
{
	const char *name = inart_ctl_op_name(req->op);
	json_t *o;

	if (name == NULL)
		return inart_null_errno(EINVAL);
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
		const struct inart_sw_update *u = &req->tab;
		json_t *a;

		if (u->replace)
			json_object_set_new(o, "replace", json_true());
		if (req->reset)
			json_object_set_new(o, "reset", json_true());
		if (req->has_cfg)
			json_object_set_new(o, "config", inart_ctl_sw_cfg_json(&req->cfg));
		json_object_set_new(o, "labels", inart_ctl_labels_json(u->labels, u->n_labels));
		if (u->n_del_labels > 0) {
			a = json_array();
			for (int i = 0; i < u->n_del_labels; i++)
				json_array_append_new(a, json_integer(u->del_labels[i]));
			json_object_set_new(o, "del_labels", a);
		}
		json_object_set_new(o, "routes", inart_ctl_routes_json(u->routes, u->n_routes));
		if (u->n_ingress > 0)
			json_object_set_new(o, "ingress",
					    inart_ctl_ingress_json(u->ingress, u->n_ingress));
		break;
	}
	case INART_CTL_TREES:
		if (req->replace)
			json_object_set_new(o, "replace", json_true());
		if (req->reset)
			json_object_set_new(o, "reset", json_true());
		json_object_set_new(o, "trees", inart_ctl_ps_trees_json(req->trees, req->n_trees));
		break;
	case INART_CTL_LOG_LEVEL:
		if (req->level < 0 || req->level > 3) {
			json_decref(o);
			return inart_null_errno(EINVAL);
		}
		json_object_set_new(o, "level", json_string(level_names[req->level]));
		break;
	case INART_CTL_TREE_DEL:
		json_object_set_new(o, "job", json_integer(req->job));
		json_object_set_new(o, "tree", json_integer(req->tree));
		break;
	case INART_CTL_TEST_FAULT:
		json_object_set_new(o, "shard", json_integer(req->shard));
		json_object_set_new(o, "error", json_integer(req->error));
		break;
	default:
		break;
	}
	return dump(o);
}

/* ---- replies ---- */

char *inart_ctl_reply_ok(json_t *data)
{
	json_t *o = json_object();

	json_object_set_new(o, "ok", json_true());
	if (data != NULL) {
		json_object_update(o, data);
		json_decref(data);
	}
	return dump(o);
}

char *inart_ctl_reply_err(const char *reason)
{
	json_t *o = json_object();

	json_object_set_new(o, "ok", json_false());
	json_object_set_new(o, "reason", json_string(reason ? reason : "refused"));
	return dump(o);
}

int inart_ctl_reply_parse(const char *body, size_t len, json_t **obj, struct inart_err *err)
{
	json_error_t jerr;
	json_t *o, *ok, *reason;

	*obj = NULL;
	o = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (o == NULL)
		return inart_err_set(err, -EINVAL, "reply is not JSON: %s", jerr.text);
	ok = json_object_get(o, "ok");
	if (!json_is_object(o) || !json_is_boolean(ok)) {
		json_decref(o);
		return inart_err_set(err, -EINVAL, "reply without 'ok'");
	}
	if (json_is_false(ok)) {
		reason = json_object_get(o, "reason");
		inart_err_set(err, -EINVAL, "%s",
			      json_is_string(reason) ? json_string_value(reason) : "refused");
		json_decref(o);
		return -EPERM;
	}
	*obj = o;
	return 0;
}
