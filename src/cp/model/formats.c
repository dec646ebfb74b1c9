/*
 * formats: the JSON interchange formats, their readers (see formats.h,
 * docs/formats.md).
 *
 * Readers parse the whole text with jansson (duplicate object keys rejected),
 * then walk it checking every type and value before building anything through
 * the graph/jobs/plan constructors; the first problem found becomes the one
 * error message ("NAME:LINE:COL: ..." for syntax, "NAME: <where>: ..." for
 * content).  Topology and jobs files reject unknown keys (typos); plan files
 * ignore them (other tools add statistics).  Nothing read from a file is
 * trusted as a length: arrays are sized by what jansson actually parsed.
 *
 * The writers are formats_dump.c.
 *
 * Ownership: parsed objects belong to the caller.
 */
#include "cp/model/formats.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- reading */

/* Reader context: file name for messages, error sink, current location. */
struct rd {
	const char *name;
	struct inart_err *err;
	char where[256];
	const struct inart_topo *t; /* jobs: the topology whose hosts they name */
};

/* Keep the message on one line: control characters that came from the
 * input (ids with newlines...) are shown escaped, e.g. "\n" or "\x01". */
static void one_line(struct inart_err *err)
{
	char out[INART_ERR_MAX];
	size_t n = 0;

	if (err == NULL)
		return;
	for (const unsigned char *c = (const unsigned char *)err->msg; *c; c++) {
		char esc[8];
		size_t k;

		if (*c >= 0x20) {
			esc[0] = (char)*c;
			esc[1] = '\0';
		} else if (*c == '\n' || *c == '\t' || *c == '\r') {
			snprintf(esc, sizeof(esc), "\\%c",
				 *c == '\n'   ? 'n'
				 : *c == '\t' ? 't'
					      : 'r');
		} else {
			snprintf(esc, sizeof(esc), "\\x%02x", *c);
		}
		k = strlen(esc);
		if (n + k >= sizeof(out))
			break;
		memcpy(out + n, esc, k);
		n += k;
	}
	out[n] = '\0';
	memcpy(err->msg, out, n + 1);
}

static int rd_fail(struct rd *r, const char *fmt, ...) INART_PRINTF(2, 3);
static int rd_fail(struct rd *r, const char *fmt, ...)
{
	char msg[INART_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->where[0])
		inart_err_set(r->err, -EINVAL, "%s: %s: %s", r->name, r->where, msg);
	else
		inart_err_set(r->err, -EINVAL, "%s: %s", r->name, msg);
	one_line(r->err);
	return -EINVAL;
}

static void rd_where(struct rd *r, const char *fmt, ...) INART_PRINTF(2, 3);
static void rd_where(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->where, sizeof(r->where), fmt, ap);
	va_end(ap);
}

/* The result of a constructor (graph.c, jobs.c): 0 where it succeeded (rc
 * >= 0), else its error with the file name added.  Bad content is -EINVAL
 * whatever the constructor said (e.g. -EEXIST). */
static int rd_pass(struct rd *r, int rc)
{
	if (rc >= 0)
		return 0;
	if (rc == -ENOMEM)
		return inart_err_set(r->err, rc, "%s: out of memory", r->name);
	inart_err_prefix(r->err, r->name);
	one_line(r->err);
	return -EINVAL;
}

static int rd_oom(struct rd *r)
{
	return inart_err_set(r->err, -ENOMEM, "%s: out of memory", r->name);
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

/* Parse text; syntax errors become "NAME:LINE:COL: message". */
static json_t *rd_load(struct rd *r, const char *buf, size_t len)
{
	json_error_t je;
	json_t *root = json_loadb(buf ? buf : "", buf ? len : 0, JSON_REJECT_DUPLICATES, &je);

	if (root == NULL) {
		if (je.line > 0)
			inart_err_set(r->err, -EINVAL, "%s:%d:%d: %s", r->name, je.line,
				      je.column > 0 ? je.column : 1, je.text);
		else
			inart_err_set(r->err, -EINVAL, "%s: %s", r->name, je.text);
		one_line(r->err);
		errno = EINVAL;
		return NULL;
	}
	if (!json_is_object(root)) {
		r->where[0] = '\0';
		rd_fail(r, "the top level must be an object, not %s", jtype(root));
		json_decref(root);
		errno = EINVAL;
		return NULL;
	}
	return root;
}

/* Reject keys of obj that are not in allowed (NULL-terminated). */
static int check_keys(struct rd *r, json_t *obj, const char *const *allowed, const char *inside)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val)
	{
		int ok = 0;

		for (int i = 0; allowed[i] && !ok; i++)
			ok = strcmp(key, allowed[i]) == 0;
		if (!ok) {
			if (inside)
				return rd_fail(r, "unknown key '%.64s' in '%s'", key, inside);
			return rd_fail(r, "unknown key '%.64s'", key);
		}
	}
	return 0;
}

/* The member key of obj if it is a string, else NULL (no error). */
static const char *peek_str(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A required non-empty string member. */
static int need_str(struct rd *r, json_t *obj, const char *key, const char **out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return rd_fail(r, "missing '%s'", key);
	if (!json_is_string(v))
		return rd_fail(r, "'%s' must be a string, not %s", key, jtype(v));
	if (json_string_value(v)[0] == '\0')
		return rd_fail(r, "'%s' must not be empty", key);
	*out = json_string_value(v);
	return 0;
}

/* An optional number member: *present says whether it was there. */
static int opt_num(struct rd *r, json_t *obj, const char *key, double *out, int *present)
{
	json_t *v = json_object_get(obj, key);

	*present = v != NULL;
	if (v == NULL)
		return 0;
	if (!json_is_number(v))
		return rd_fail(r, "'%s' must be a number, not %s", key, jtype(v));
	*out = json_number_value(v);
	if (!isfinite(*out))
		return rd_fail(r, "'%s' must be finite", key);
	return 0;
}

/* An optional integer member in [lo, hi]. */
static int opt_int(struct rd *r, json_t *obj, const char *key, long long lo, long long hi, int *out,
		   int *present)
{
	json_t *v = json_object_get(obj, key);
	long long x;

	*present = v != NULL;
	if (v == NULL)
		return 0;
	if (!json_is_integer(v))
		return rd_fail(r, "'%s' must be an integer, not %s", key,
			       json_is_real(v) ? "a fraction" : jtype(v));
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return rd_fail(r, "'%s' must be in [%lld, %lld] (got %lld)", key, lo, hi, x);
	*out = (int)x;
	return 0;
}

/* --- topology */

static const char *const topo_keys[] = {"nodes", "links", NULL};
static const char *const node_keys[] = {"id", "kind", "ina", NULL};
static const char *const ina_keys[] = {"agg_gbps", "trees", NULL};
static const char *const link_keys[] = {"a",
					"b",
					"gbps",
					"ab_gbps",
					"ba_gbps",
					"background_gbps",
					"background_ab_gbps",
					"background_ba_gbps",
					NULL};

static int parse_node(struct rd *r, struct inart_topo *t, json_t *v, size_t i)
{
	const char *id, *kind;
	json_t *ina;
	enum inart_node_kind k;
	double agg = 0;
	int trees = 0, has_agg = 0, has_trees = 0, rc;

	rd_where(r, "node %zu", i);
	if (!json_is_object(v))
		return rd_fail(r, "must be an object, not %s", jtype(v));
	if (peek_str(v, "id") && peek_str(v, "id")[0])
		rd_where(r, "node %zu ('%.64s')", i, peek_str(v, "id"));
	if ((rc = check_keys(r, v, node_keys, NULL)) || (rc = need_str(r, v, "id", &id)) ||
	    (rc = need_str(r, v, "kind", &kind)))
		return rc;
	if (strcmp(kind, "host") == 0)
		k = INART_NODE_HOST;
	else if (strcmp(kind, "switch") == 0)
		k = INART_NODE_SWITCH;
	else
		return rd_fail(r, "'kind' must be \"host\" or \"switch\", not \"%.32s\"", kind);
	ina = json_object_get(v, "ina");
	if (ina != NULL) {
		if (k == INART_NODE_HOST)
			return rd_fail(r, "a host cannot be INA-capable ('ina' is for switches)");
		if (!json_is_object(ina))
			return rd_fail(r, "'ina' must be an object, not %s", jtype(ina));
		if ((rc = check_keys(r, ina, ina_keys, "ina")) ||
		    (rc = opt_num(r, ina, "agg_gbps", &agg, &has_agg)) ||
		    (rc = opt_int(r, ina, "trees", 0, INT_MAX, &trees, &has_trees)))
			return rc;
		if (!has_agg)
			return rd_fail(r, "missing 'agg_gbps' in 'ina'");
		if (!has_trees)
			return rd_fail(r, "missing 'trees' in 'ina'");
		if (!(agg > 0))
			return rd_fail(r, "'agg_gbps' must be > 0 Gbit/s (got %g)", agg);
	}
	rc = inart_topo_add_node(t, id, k, ina != NULL, agg, trees, r->err);
	return rd_pass(r, rc);
}

/* Capacity (or background) of one direction: the per-direction key wins over
 * the common one; def < 0 means required. */
static int link_dir(struct rd *r, json_t *v, const char *dir_key, const char *key, double def,
		    double *out)
{
	int has_dir, has, rc;
	double d = 0, c = 0;

	if ((rc = opt_num(r, v, dir_key, &d, &has_dir)) || (rc = opt_num(r, v, key, &c, &has)))
		return rc;
	if (has_dir)
		*out = d;
	else if (has)
		*out = c;
	else if (def >= 0)
		*out = def;
	else
		return rd_fail(r, "missing '%s' (or '%s')", key, dir_key);
	return 0;
}

/* The graph invariants of one direction, checked here so that the message
 * carries the link's index. */
static int link_check(struct rd *r, const char *from, const char *to, double gbps, double bg)
{
	if (!(gbps > 0))
		return rd_fail(r, "capacity %.64s->%.64s must be > 0 Gbit/s (got %g)", from, to,
			       gbps);
	if (!(bg >= 0))
		return rd_fail(r, "background %.64s->%.64s must be >= 0 Gbit/s (got %g)", from, to,
			       bg);
	if (bg > gbps)
		return rd_fail(r,
			       "background %.64s->%.64s (%g Gbit/s) is above the capacity (%g "
			       "Gbit/s)",
			       from, to, bg, gbps);
	return 0;
}

static int parse_link(struct rd *r, struct inart_topo *t, json_t *v, size_t i)
{
	const char *as, *bs;
	double ab, ba, bab, bba;
	int a, b, rc;

	rd_where(r, "link %zu", i);
	if (!json_is_object(v))
		return rd_fail(r, "must be an object, not %s", jtype(v));
	if (peek_str(v, "a") && peek_str(v, "b"))
		rd_where(r, "link %zu (%.64s-%.64s)", i, peek_str(v, "a"), peek_str(v, "b"));
	if ((rc = check_keys(r, v, link_keys, NULL)) || (rc = need_str(r, v, "a", &as)) ||
	    (rc = need_str(r, v, "b", &bs)))
		return rc;
	a = inart_topo_find(t, as);
	if (a < 0)
		return rd_fail(r, "unknown node '%.64s'", as);
	b = inart_topo_find(t, bs);
	if (b < 0)
		return rd_fail(r, "unknown node '%.64s'", bs);
	if ((rc = link_dir(r, v, "ab_gbps", "gbps", -1, &ab)) ||
	    (rc = link_dir(r, v, "ba_gbps", "gbps", -1, &ba)) ||
	    (rc = link_dir(r, v, "background_ab_gbps", "background_gbps", 0, &bab)) ||
	    (rc = link_dir(r, v, "background_ba_gbps", "background_gbps", 0, &bba)))
		return rc;
	if (a == b)
		return rd_fail(r, "joins a node to itself");
	if ((rc = link_check(r, as, bs, ab, bab)) || (rc = link_check(r, bs, as, ba, bba)))
		return rc;
	rc = inart_topo_add_link(t, a, b, ab, ba, bab, bba, r->err);
	return rd_pass(r, rc);
}

/* A required array member. */
static int need_array(struct rd *r, json_t *obj, const char *key, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return rd_fail(r, "missing '%s'", key);
	if (!json_is_array(v))
		return rd_fail(r, "'%s' must be an array, not %s", key, jtype(v));
	*out = v;
	return 0;
}

/* Read a file into obj: a top-level object whose keys are all in keys,
 * handed to fill.  0, or -errno with the error in r->err. */
static int rd_read(struct rd *r, const char *buf, size_t len, const char *const *keys,
		   int (*fill)(struct rd *r, json_t *root, void *obj), void *obj)
{
	json_t *root = rd_load(r, buf, len);
	int rc;

	if (root == NULL)
		return -EINVAL;
	rc = check_keys(r, root, keys, NULL);
	if (rc == 0)
		rc = fill(r, root, obj);
	json_decref(root);
	return rc;
}

static int topo_fill(struct rd *r, json_t *root, void *obj)
{
	struct inart_topo *t = obj;
	json_t *nodes, *links, *v;
	size_t i;
	int rc;

	if ((rc = need_array(r, root, "nodes", &nodes)) ||
	    (rc = need_array(r, root, "links", &links)))
		return rc;
	if (json_array_size(nodes) == 0)
		return rd_fail(r, "no nodes");
	if (json_array_size(nodes) > INT_MAX / 2 || json_array_size(links) > INT_MAX / 4)
		return rd_fail(r, "too many nodes or links");
	json_array_foreach(nodes, i, v)
	{
		if ((rc = parse_node(r, t, v, i)))
			return rc;
	}
	json_array_foreach(links, i, v)
	{
		if ((rc = parse_link(r, t, v, i)))
			return rc;
	}
	return rd_pass(r, inart_topo_finalize(t, r->err));
}

struct inart_topo *inart_topo_parse(const char *buf, size_t len, const char *name,
				    struct inart_err *err)
{
	struct rd r = {name ? name : "<input>", err, "", NULL};
	struct inart_topo *t = inart_topo_create();
	int rc = t ? rd_read(&r, buf, len, topo_keys, topo_fill, t) : rd_oom(&r);

	if (rc < 0) {
		inart_topo_destroy(t);
		return inart_null_errno(-rc);
	}
	return t;
}

/* --- jobs */

static const char *const jobs_keys[] = {"jobs", NULL};
static const char *const job_keys[] = {"id", "workers", "ps", "model", "gradient_bytes", NULL};

/* A job's host list ("workers" or "ps"): known hosts, at least one. */
static int parse_hosts(struct rd *r, const struct inart_topo *t, json_t *job, const char *key,
		       const char *what, int **out, int *n)
{
	json_t *arr, *v;
	size_t i;
	int rc;

	if ((rc = need_array(r, job, key, &arr)))
		return rc;
	if (json_array_size(arr) == 0)
		return rd_fail(r, "no %ss ('%s' is empty)", what, key);
	*out = malloc(sizeof(**out) * json_array_size(arr));
	if (*out == NULL)
		return rd_oom(r);
	*n = (int)json_array_size(arr);
	json_array_foreach(arr, i, v)
	{
		int node;

		if (!json_is_string(v))
			return rd_fail(r, "%s[%zu] must be a host id (string), not %s", key, i,
				       jtype(v));
		node = inart_topo_find(t, json_string_value(v));
		if (node < 0)
			return rd_fail(r, "unknown %s '%.64s'", what, json_string_value(v));
		if (t->nodes[node].kind != INART_NODE_HOST)
			return rd_fail(r, "%s '%.64s' is not a host", what, json_string_value(v));
		(*out)[i] = node;
	}
	return 0;
}

static int model_list(char *buf, size_t cap)
{
	const char *m;
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; (m = inart_model_name(i, NULL)) != NULL && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", m);
	return 0;
}

static int parse_job(struct rd *r, const struct inart_topo *t, struct inart_jobs *js, json_t *v,
		     size_t i)
{
	const char *id, *model = NULL;
	json_t *mv;
	int *workers = NULL, *ps = NULL, n_workers = 0, n_ps = 0, has_bytes, rc;
	double bytes = 0;

	rd_where(r, "job %zu", i);
	if (!json_is_object(v))
		return rd_fail(r, "must be an object, not %s", jtype(v));
	if (peek_str(v, "id") && peek_str(v, "id")[0])
		rd_where(r, "job '%.64s'", peek_str(v, "id"));
	if ((rc = check_keys(r, v, job_keys, NULL)) || (rc = need_str(r, v, "id", &id)) ||
	    (rc = parse_hosts(r, t, v, "workers", "worker", &workers, &n_workers)) ||
	    (rc = parse_hosts(r, t, v, "ps", "PS", &ps, &n_ps)) ||
	    (rc = opt_num(r, v, "gradient_bytes", &bytes, &has_bytes)))
		goto out;
	mv = json_object_get(v, "model");
	if (mv != NULL && has_bytes) {
		rc = rd_fail(r, "give either 'model' or 'gradient_bytes', not both");
		goto out;
	}
	if (mv == NULL && !has_bytes) {
		rc = rd_fail(r, "missing 'model' or 'gradient_bytes'");
		goto out;
	}
	if (mv != NULL) {
		char known[256];

		if (!json_is_string(mv)) {
			rc = rd_fail(r, "'model' must be a string, not %s", jtype(mv));
			goto out;
		}
		model = json_string_value(mv);
		bytes = inart_model_bytes(model);
		if (bytes < 0) {
			model_list(known, sizeof(known));
			rc = rd_fail(r, "unknown model '%.64s' (known: %s)", model, known);
			goto out;
		}
	} else if (!(bytes > 0)) {
		rc = rd_fail(r, "'gradient_bytes' must be > 0 (got %g)", bytes);
		goto out;
	}
	rc = inart_jobs_add(js, id, workers, n_workers, ps, n_ps, bytes, model, r->err);
	rc = rd_pass(r, rc);
out:
	free(workers);
	free(ps);
	return rc;
}

static int jobs_fill(struct rd *r, json_t *root, void *obj)
{
	struct inart_jobs *js = obj;
	json_t *jobs, *v;
	size_t i;
	int rc = need_array(r, root, "jobs", &jobs);

	if (rc)
		return rc;
	if (json_array_size(jobs) == 0)
		return rd_fail(r, "no jobs");
	if (json_array_size(jobs) > INT_MAX / 4)
		return rd_fail(r, "too many jobs");
	json_array_foreach(jobs, i, v)
	{
		if ((rc = parse_job(r, r->t, js, v, i)))
			return rc;
	}
	return rd_pass(r, inart_jobs_validate(js, r->t, r->err));
}

struct inart_jobs *inart_jobs_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, struct inart_err *err)
{
	struct rd r = {name ? name : "<input>", err, "", t};
	struct inart_jobs *js;
	int rc;

	if (t == NULL || !t->finalized) {
		inart_err_set(err, -EINVAL, "%s: no (finalized) topology to check the jobs against",
			      r.name);
		errno = EINVAL;
		return NULL;
	}
	js = inart_jobs_create();
	rc = js ? rd_read(&r, buf, len, jobs_keys, jobs_fill, js) : rd_oom(&r);
	if (rc < 0) {
		inart_jobs_destroy(js);
		return inart_null_errno(-rc);
	}
	return js;
}

/* --- plan */

/* An optional time: absent keeps *out, null is NaN, else a number. */
static int opt_time(struct rd *r, json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);

	if (v == NULL)
		return 0;
	if (json_is_null(v)) {
		*out = NAN;
		return 0;
	}
	if (!json_is_number(v))
		return rd_fail(r, "'%s' must be a number or null, not %s", key, jtype(v));
	*out = json_number_value(v);
	return 0;
}

/* A required node reference member. */
static int plan_node(struct rd *r, const struct inart_topo *t, json_t *obj, const char *key,
		     int *out)
{
	const char *id;
	int rc = need_str(r, obj, key, &id);

	if (rc)
		return rc;
	*out = inart_topo_find(t, id);
	if (*out < 0)
		return rd_fail(r, "'%s': unknown node '%.64s'", key, id);
	return 0;
}

/* A required path member: an array of node ids (any length). */
static int plan_path(struct rd *r, const struct inart_topo *t, json_t *obj, int **out, int *n)
{
	json_t *arr, *v;
	size_t i;
	int rc;

	if ((rc = need_array(r, obj, "path", &arr)))
		return rc;
	if (json_array_size(arr) > INT_MAX / 4)
		return rd_fail(r, "'path' is too long");
	*out = malloc(sizeof(**out) * (json_array_size(arr) + 1));
	if (*out == NULL)
		return rd_oom(r);
	*n = (int)json_array_size(arr);
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v))
			return rd_fail(r, "path[%zu] must be a node id (string), not %s", i,
				       jtype(v));
		(*out)[i] = inart_topo_find(t, json_string_value(v));
		if ((*out)[i] < 0)
			return rd_fail(r, "path[%zu]: unknown node '%.64s'", i,
				       json_string_value(v));
	}
	return 0;
}

/* A member that must be an array if present; NULL when absent. */
static int opt_array(struct rd *r, json_t *obj, const char *key, json_t **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL)
		return 0;
	if (!json_is_array(v))
		return rd_fail(r, "'%s' must be an array, not %s", key, jtype(v));
	*out = v;
	return 0;
}

/* Element k of a job's "flows", "trees" or "ring": its nodes and its path
 * (*path is malloc'ed once the path is reached, also on error: the caller
 * frees it). */
static int plan_route(struct rd *r, const struct inart_topo *t, const char *base,
		      const struct inart_route_kind *rk, json_t *e, size_t k, int n[3], int **path,
		      int *n_path)
{
	int rc;

	rd_where(r, "%s: %s %zu", base, rk->what, k);
	if (!json_is_object(e))
		return rd_fail(r, "must be an object, not %s", jtype(e));
	for (int i = 0; i < 3 && rk->keys[i] != NULL; i++)
		if ((rc = plan_node(r, t, e, rk->keys[i], &n[i])))
			return rc;
	return plan_path(r, t, e, path, n_path);
}

static int parse_plan_job(struct rd *r, const struct inart_topo *t, const struct inart_jobs *js,
			  struct inart_plan *p, char *seen, json_t *v, size_t i)
{
	const struct inart_job *job;
	const char *id, *key;
	json_t *split, *lists[3], *e, *sv;
	int *path = NULL, n_path = 0, j, rc;
	char base[128];
	size_t k;

	rd_where(r, "job %zu", i);
	if (!json_is_object(v))
		return rd_fail(r, "must be an object, not %s", jtype(v));
	if ((rc = need_str(r, v, "id", &id)))
		return rc;
	j = inart_jobs_find(js, id);
	rd_where(r, "job '%.64s'", id);
	if (j < 0)
		return rd_fail(r, "not in the jobs file");
	snprintf(base, sizeof(base), "job '%.64s'", id);
	if (seen[j])
		return rd_fail(r, "appears twice");
	seen[j] = 1;
	job = &js->jobs[j];
	split = json_object_get(v, "split");
	if (split != NULL && !json_is_object(split))
		return rd_fail(r, "'split' must be an object (PS id -> share), not %s",
			       jtype(split));
	if (split != NULL) {
		json_object_foreach(split, key, sv)
		{
			int node = inart_topo_find(t, key), idx;

			idx = node < 0 ? -1 : inart_job_ps_index(job, node);
			if (idx < 0)
				return rd_fail(r, "split: '%.64s' is not a PS of this job", key);
			if (!json_is_number(sv))
				return rd_fail(
				    r, "split: the share of '%.64s' must be a number, not %s", key,
				    jtype(sv));
			p->jobs[j].split[idx] = json_number_value(sv);
		}
	}
	for (int kind = 0; kind < 3; kind++)
		if ((rc = opt_array(r, v, inart_route_kinds[kind].list, &lists[kind])))
			return rc;
	for (int kind = 0; kind < 3; kind++) {
		json_array_foreach(lists[kind], k, e)
		{
			int n[3];

			if ((rc = plan_route(r, t, base, &inart_route_kinds[kind], e, k, n, &path,
					     &n_path)))
				goto out;
			rc = kind == 2 ? inart_plan_add_ring_hop(p, j, path, n_path)
			     : kind == 1
				 ? inart_plan_add_tree(p, j, n[0], n[1], n[2], path, n_path)
				 : inart_plan_add_flow(p, j, n[0], n[1], n[2], path, n_path);
			free(path);
			path = NULL;
			if (rc < 0) {
				rc = rd_oom(r);
				goto out;
			}
		}
	}
out:
	free(path);
	return rc;
}

/* An optional member naming one of a fixed set (parse: name -> value >= 0,
 * -1 unknown); null or absent leaves *out unchanged. */
static int opt_enum(struct rd *r, json_t *obj, const char *key, int (*parse)(const char *),
		    int *out)
{
	json_t *v = json_object_get(obj, key);
	int e;

	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return rd_fail(r, "'%s' must be a string or null, not %s", key, jtype(v));
	e = parse(json_string_value(v));
	if (e < 0)
		return rd_fail(r, "'%s': unknown value '%.64s'", key, json_string_value(v));
	*out = e;
	return 0;
}

/* The plan's statistics: times, bounds, milp status, origin. */
static int parse_plan_stats(struct rd *r, json_t *root, struct inart_plan *p)
{
	json_t *origin = json_object_get(root, "origin");
	int rc, has, src = 0, st = 0, rsrc = 0;

	if ((rc = opt_time(r, root, "comm_time_s", &p->comm_time_s)) ||
	    (rc = opt_time(r, root, "push_time_s", &p->push_time_s)) ||
	    (rc = opt_time(r, root, "pull_time_s", &p->pull_time_s)) ||
	    (rc = opt_time(r, root, "lp_bound_s", &p->lp_bound_s)) ||
	    (rc = opt_time(r, root, "best_bound_s", &p->best_bound_s)) ||
	    (rc = opt_time(r, root, "ring_bound_s", &p->ring_bound_s)) ||
	    (rc = opt_enum(r, root, "bound_source", inart_bound_source_parse, &src)) ||
	    (rc = opt_enum(r, root, "ring_bound_source", inart_bound_source_parse, &rsrc)) ||
	    (rc = opt_enum(r, root, "milp_status", inart_milp_status_parse, &st)) ||
	    (rc = opt_time(r, root, "plan_time_s", &p->plan_time_s)) ||
	    (rc = opt_time(r, root, "split_gap", &p->split_gap)) ||
	    (rc = opt_int(r, root, "rounding_trials", 0, INT_MAX, &p->rounding_trials, &has)))
		return rc;
	p->bound_source = (enum inart_bound_source)src;
	p->ring_bound_source = (enum inart_bound_source)rsrc;
	p->milp_status = (enum inart_milp_status)st;
	if (origin != NULL && !json_is_null(origin) && !json_is_string(origin))
		return rd_fail(r, "'origin' must be a string or null, not %s", jtype(origin));
	if (origin != NULL && json_is_string(origin) &&
	    (p->origin = strdup(json_string_value(origin))) == NULL)
		return rd_oom(r);
	return 0;
}

struct inart_plan *inart_plan_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, const struct inart_jobs *js,
				    struct inart_err *err)
{
	struct rd r = {name ? name : "<input>", err, "", NULL};
	struct inart_plan *p = NULL;
	json_t *root, *jobs, *algo, *v;
	char *seen = NULL;
	size_t i;
	int rc;

	if (t == NULL || js == NULL) {
		inart_err_set(err, -EINVAL, "%s: a plan needs its topology and jobs", r.name);
		errno = EINVAL;
		return NULL;
	}
	root = rd_load(&r, buf, len);
	if (root == NULL)
		return NULL;
	algo = json_object_get(root, "algorithm");
	if (algo != NULL && !json_is_string(algo)) {
		rc = rd_fail(&r, "'algorithm' must be a string, not %s", jtype(algo));
		goto out;
	}
	p = inart_plan_create(js, algo ? json_string_value(algo) : "");
	seen = calloc((size_t)js->n_jobs + 1, 1);
	if (p == NULL || seen == NULL) {
		rc = rd_oom(&r);
		goto out;
	}
	if ((rc = parse_plan_stats(&r, root, p)) || (rc = need_array(&r, root, "jobs", &jobs)))
		goto out;
	json_array_foreach(jobs, i, v)
	{
		if ((rc = parse_plan_job(&r, t, js, p, seen, v, i)))
			goto out;
	}
out:
	json_decref(root);
	free(seen);
	if (rc < 0) {
		inart_plan_destroy(p);
		return inart_null_errno(-rc);
	}
	return p;
}
