/*
 * epoch: an installation moved into its epoch's half of the identifier
 * spaces, and the union of two epochs' tables (epoch.h).
 */
#include "bridge/epoch.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/file.h"
#include "common/slab.h"

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

/* n_a entries of a then n_b of b (element size sz), taken from the slab:
 * on its sizing pass NULL (the size counted), then the copy. */
static void *join(struct inart_slab *s, const void *a, int n_a, const void *b, int n_b, size_t sz)
{
	char *p = inart_slab_take(s, (size_t)n_a + (size_t)n_b, sz);

	if (p != NULL && n_a > 0)
		memcpy(p, a, (size_t)n_a * sz);
	if (p != NULL && n_b > 0)
		memcpy(p + (size_t)n_a * sz, b, (size_t)n_b * sz);
	return p;
}

/* The union and all its arrays in one block (common/slab.h), called on the
 * slab's sizing pass (nothing written) and again to fill it: the union, its
 * switches (new's, each with old's labels and ingress entries then new's),
 * its PSs (new's with old's trees added, then old's that new leaves out).
 * 0, or -EINVAL: a switch of one not in the other. */
static int union_lay_out(struct inart_slab *s, const struct inart_install *old,
			 const struct inart_install *new_in, struct inart_install **out)
{
	struct inart_install *u = inart_slab_take(s, 1, sizeof(*u));
	struct inart_sw_install *sw = inart_slab_take(s, (size_t)new_in->n_switches, sizeof(*sw));
	struct inart_ps_install *ps =
	    inart_slab_take(s, (size_t)(old->n_ps + new_in->n_ps), sizeof(*ps));
	int n_ps = 0;

	if (old->n_switches != new_in->n_switches)
		return -EINVAL;
	for (int k = 0; k < new_in->n_switches; k++) {
		const struct inart_sw_install *n = &new_in->sw[k],
					      *o = inart_install_sw_of(old, n->node);
		void *labels, *ingress;

		if (o == NULL)
			return -EINVAL;
		labels =
		    join(s, o->labels, o->n_labels, n->labels, n->n_labels, sizeof(*n->labels));
		ingress = join(s, o->ingress, o->n_ingress, n->ingress, n->n_ingress,
			       sizeof(*n->ingress));
		if (sw == NULL)
			continue;
		sw[k] = *n;
		sw[k].exp = NULL;
		sw[k].downs = NULL;
		sw[k].labels = labels;
		sw[k].n_labels = o->n_labels + n->n_labels;
		sw[k].ingress = ingress;
		sw[k].n_ingress = o->n_ingress + n->n_ingress;
	}
	for (int pass = 0; pass < 2; pass++) {
		const struct inart_install *a = pass == 0 ? new_in : old;
		const struct inart_install *b = pass == 0 ? old : NULL;

		for (int k = 0; k < a->n_ps; k++) {
			const struct inart_ps_install *p = &a->ps[k];
			const struct inart_ps_install *q =
			    b ? inart_install_ps_of(b, p->node) : NULL;
			int n_q = q ? q->n_trees : 0;
			void *trees;

			if (pass == 1 && inart_install_ps_of(new_in, p->node) != NULL)
				continue;
			trees = join(s, p->trees, p->n_trees, q ? q->trees : NULL, n_q,
				     sizeof(*p->trees));
			if (ps != NULL)
				ps[n_ps] = (struct inart_ps_install){
				    .node = p->node, .n_trees = p->n_trees + n_q, .trees = trees};
			n_ps++;
		}
	}
	if (u != NULL)
		*u = (struct inart_install){.n_switches = new_in->n_switches,
					    .sw = sw,
					    .n_ps = n_ps,
					    .ps = ps,
					    .n_workers = new_in->n_workers,
					    .workers = new_in->workers};
	*out = u;
	return 0;
}

int inart_epoch_union(const struct inart_install *old, const struct inart_install *new_in,
		      struct inart_install **out, struct inart_err *err)
{
	struct inart_slab s = INART_SLAB_INIT;
	int rc = union_lay_out(&s, old, new_in, out);

	if (rc == 0 && (rc = inart_slab_alloc(&s)) == 0)
		rc = union_lay_out(&s, old, new_in, out);
	if (rc == -EINVAL)
		return inart_err_set(err, rc, "the two installations have different switches");
	if (rc < 0)
		return inart_err_set(err, rc, "out of memory");
	return 0;
}

void inart_epoch_union_destroy(struct inart_install *u)
{
	free(u); /* and its arrays (union_lay_out) */
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
