/*
 * epoch: an installation moved into its epoch's half of the identifier
 * spaces, and the union of two epochs' tables (epoch.h).
 */
#include "epoch.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"

static uint32_t lab(uint32_t l, uint32_t off)
{
	return l == 0 ? 0 : l + off;
}

static int sw_apply(struct inart_sw_install *si, uint32_t loff, uint32_t joff,
		    struct inart_err *err)
{
	int half = si->cfg.pool_slots;

	if (half > 32768)
		return inart_err_set(err, -ERANGE, "switch %d: pool of %d slots: two do not fit",
				     si->node, half);
	si->cfg.pool_slots = 2 * half;
	for (int i = 0; i < si->n_labels; i++) {
		struct inart_label_entry *e = &si->labels[i];

		if (e->label >= INART_EPOCH_LABEL_BIT || e->next_label >= INART_EPOCH_LABEL_BIT ||
		    e->job >= INART_EPOCH_JOB_BIT)
			return inart_err_set(err, -ERANGE,
					     "switch %d: label %u or job %u too large", si->node,
					     e->label, e->job);
		e->label = lab(e->label, loff);
		e->next_label = lab(e->next_label, loff);
		e->job += joff;
		if (e->aggregate && joff != 0)
			e->slot_base = (uint16_t)(e->slot_base + half);
		for (int k = 0; k < e->n_down; k++) {
			struct inart_label_down *d = (struct inart_label_down *)&e->down[k];

			d->label = lab(d->label, loff);
		}
	}
	for (int i = 0; i < si->n_ingress; i++)
		si->ingress[i].job += joff;
	return 0;
}

int inart_epoch_apply(struct inart_install *in, uint32_t epoch, struct inart_err *err)
{
	uint32_t loff = (epoch & 1) ? INART_EPOCH_LABEL_BIT : 0;
	uint32_t joff = (epoch & 1) ? INART_EPOCH_JOB_BIT : 0;
	int rc;

	for (int k = 0; k < in->n_switches; k++) {
		rc = sw_apply(&in->sw[k], loff, joff, err);
		if (rc < 0)
			return rc;
	}
	for (int k = 0; k < in->n_ps; k++)
		for (int i = 0; i < in->ps[k].n_trees; i++) {
			struct inart_ps_tree_cfg *c = &in->ps[k].trees[i];

			c->job += joff;
			for (int m = 0; m < c->n_children; m++)
				c->children[m].label = lab(c->children[m].label, loff);
		}
	for (int k = 0; k < in->n_workers; k++) {
		struct inart_worker_cfg *c = &in->workers[k].cfg;

		c->job += joff;
		for (int t = 0; t < c->n_trees; t++)
			c->trees[t].label = lab(c->trees[t].label, loff);
	}
	return 0;
}

void inart_epoch_union_destroy(struct inart_install *u)
{
	if (u == NULL)
		return;
	for (int k = 0; k < u->n_switches && u->sw; k++) {
		free(u->sw[k].labels);
		free(u->sw[k].ingress);
	}
	for (int k = 0; k < u->n_ps && u->ps; k++)
		free(u->ps[k].trees);
	free(u->sw);
	free(u->ps);
	free(u);
}

/* dst = a's n_a entries then b's n_b (element size sz); NULL on ENOMEM. */
static void *concat(const void *a, int n_a, const void *b, int n_b, size_t sz)
{
	char *p = malloc(((size_t)n_a + (size_t)n_b + 1) * sz);

	if (p == NULL)
		return NULL;
	if (n_a > 0)
		memcpy(p, a, (size_t)n_a * sz);
	if (n_b > 0)
		memcpy(p + (size_t)n_a * sz, b, (size_t)n_b * sz);
	return p;
}

int inart_epoch_union(const struct inart_install *old, const struct inart_install *new_in,
		      struct inart_install **out, struct inart_err *err)
{
	struct inart_install *u = calloc(1, sizeof(*u));
	int n_ps = 0;

	*out = NULL;
	if (u == NULL)
		return inart_err_set(err, -ENOMEM, "out of memory");
	u->sw = calloc((size_t)new_in->n_switches + 1, sizeof(*u->sw));
	u->ps = calloc((size_t)(old->n_ps + new_in->n_ps) + 1, sizeof(*u->ps));
	if (u->sw == NULL || u->ps == NULL)
		goto nomem;
	if (old->n_switches != new_in->n_switches)
		goto mismatch;
	for (int k = 0; k < new_in->n_switches; k++) {
		const struct inart_sw_install *n = &new_in->sw[k],
					      *o = inart_install_sw_of(old, n->node);
		struct inart_sw_install *s = &u->sw[k];

		if (o == NULL)
			goto mismatch;
		*s = *n;
		s->exp = NULL;
		s->downs = NULL;
		u->n_switches = k + 1;
		s->labels =
		    concat(o->labels, o->n_labels, n->labels, n->n_labels, sizeof(*s->labels));
		s->n_labels = o->n_labels + n->n_labels;
		s->ingress =
		    concat(o->ingress, o->n_ingress, n->ingress, n->n_ingress, sizeof(*s->ingress));
		s->n_ingress = o->n_ingress + n->n_ingress;
		if (s->labels == NULL || s->ingress == NULL)
			goto nomem;
	}
	/* PSs: new's with old's trees added, then old's that new leaves out */
	for (int pass = 0; pass < 2; pass++) {
		const struct inart_install *a = pass == 0 ? new_in : old;
		const struct inart_install *b = pass == 0 ? old : NULL;

		for (int k = 0; k < a->n_ps; k++) {
			const struct inart_ps_install *p = &a->ps[k];
			const struct inart_ps_install *q =
			    b ? inart_install_ps_of(b, p->node) : NULL;
			struct inart_ps_install *s = &u->ps[n_ps];

			if (pass == 1 && inart_install_ps_of(new_in, p->node) != NULL)
				continue;
			s->node = p->node;
			s->trees = concat(p->trees, p->n_trees, q ? q->trees : NULL,
					  q ? q->n_trees : 0, sizeof(*s->trees));
			s->n_trees = p->n_trees + (q ? q->n_trees : 0);
			n_ps++;
			u->n_ps = n_ps;
			if (s->trees == NULL)
				goto nomem;
		}
	}
	u->n_workers = new_in->n_workers;
	u->workers = new_in->workers;
	*out = u;
	return 0;
nomem:
	inart_epoch_union_destroy(u);
	return inart_err_set(err, -ENOMEM, "out of memory");
mismatch:
	inart_epoch_union_destroy(u);
	return inart_err_set(err, -EINVAL, "the two installations have different switches");
}

int inart_epoch_parse(const char *buf, size_t len, const char *name, const char *job, int64_t *n,
		      uint32_t *from_step, struct inart_err *err)
{
	json_error_t je;
	json_t *o = json_loadb(buf, len, 0, &je), *ep, *v, *fs;
	int rc = 0;

	*n = -1;
	*from_step = 0;
	if (o == NULL)
		return inart_err_set(err, -EINVAL, "%s:%d:%d: %s", name, je.line, je.column,
				     je.text);
	ep = json_object_get(o, "epoch");
	if (ep == NULL)
		goto out;
	v = json_object_get(ep, "n");
	fs = json_object_get(ep, "from_step");
	if (!json_is_object(ep) || !json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > UINT32_MAX || (fs != NULL && !json_is_object(fs))) {
		rc = inart_err_set(err, -EINVAL,
				   "%s: 'epoch' must be {\"n\": 0..2^32-1, \"from_step\": {...}}",
				   name);
		goto out;
	}
	*n = json_integer_value(v);
	v = job != NULL && fs != NULL ? json_object_get(fs, job) : NULL;
	if (v != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > UINT32_MAX) {
			rc = inart_err_set(err, -EINVAL, "%s: epoch.from_step.%s: not a step", name,
					   job);
			goto out;
		}
		*from_step = (uint32_t)json_integer_value(v);
	}
out:
	json_decref(o);
	return rc;
}

int inart_epoch_load(const char *path, const char *job, int64_t *n, uint32_t *from_step,
		     struct inart_err *err)
{
	size_t len = 0;
	char *buf = inart_file_read(path, &len, err);
	int rc;

	if (buf == NULL)
		return -(errno ? errno : EIO);
	rc = inart_epoch_parse(buf, len, path, job, n, from_step, err);
	free(buf);
	return rc;
}
