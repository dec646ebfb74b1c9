/*
 * sim_cores: the cores an installation puts on the simulated nodes (see
 * sim.h): a switch core per switch with its tables, a PS core per PS with
 * its trees, a worker (or ring) core per worker listed at its host; and
 * tables or workers swapped while the simulation runs.  The simulator owns
 * the cores; the installation stays the caller's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/sim_impl.h"

/* Put in's tables in service on the cores as they are (inart_sim_tables_at):
 * a switch's tables replaced (aggregation state of the labels that stay goes
 * on), a PS's trees replaced (chunk state of the trees that stay goes on),
 * PSs that in does not list lose their trees.  0 or -errno with err. */
int inart_sim_put_tables(struct inart_sim *s, const struct inart_install *in, struct inart_err *err)
{
	const struct inart_topo *t = s->t;
	int rc;

	for (int k = 0; k < in->n_switches; k++) {
		const struct inart_sw_install *si = &in->sw[k];
		struct inart_sw_update u = inart_sw_install_update(si);

		if (si->node < 0 || si->node >= t->n_nodes || s->nodes[si->node].sw == NULL) {
			inart_err_set(err, 0, "switch install %d: no switch core", k);
			return -EINVAL;
		}
		rc = inart_shards_apply(s->nodes[si->node].sw, &u, err);
		if (rc < 0)
			return rc;
	}
	for (int v = 0; v < t->n_nodes; v++) {
		struct node *nd = &s->nodes[v];
		const struct inart_ps_install *pi = inart_install_ps_of(in, v);
		struct inart_ps *to;

		if (nd->is_sw || (pi == NULL && nd->ps == NULL))
			continue;
		to = inart_ps_create();
		if (to == NULL)
			return -ENOMEM;
		for (int i = 0; pi != NULL && i < pi->n_trees; i++) {
			rc = inart_ps_tree_set(to, &pi->trees[i]);
			if (rc < 0) {
				inart_err_set(err, 0, "PS '%s': tree (%u, %u) refused",
					      t->nodes[v].id, pi->trees[i].job, pi->trees[i].tree);
				inart_ps_destroy(to);
				return rc;
			}
		}
		if (nd->ps != NULL)
			inart_ps_carry(to, nd->ps, 0);
		inart_ps_destroy(nd->ps);
		nd->ps = to;
	}
	return 0;
}

void inart_sim_drop_cores(struct inart_sim *s)
{
	for (int v = 0; v < s->t->n_nodes; v++) {
		struct node *nd = &s->nodes[v];

		inart_shards_destroy(nd->sw);
		inart_ps_destroy(nd->ps);
		free(nd->workers);
		nd->sw = NULL;
		nd->ps = NULL;
		nd->workers = NULL;
		nd->n_workers = 0;
	}
	for (int k = 0; k < s->n_workers; k++) {
		inart_worker_destroy(s->workers[k].w);
		inart_ring_destroy(s->workers[k].r);
	}
	free(s->workers);
	s->workers = NULL;
	s->n_workers = 0;
	s->remaining = 0;
}

/* A switch core per switch of in, holding its tables. */
static int install_switches(struct inart_sim *s, const struct inart_install *in,
			    struct inart_err *err)
{
	const struct inart_topo *t = s->t;
	int rc = 0;

	for (int k = 0; k < in->n_switches && rc == 0; k++) {
		const struct inart_sw_install *si = &in->sw[k];
		struct inart_sw_update u = inart_sw_install_update(si);
		struct node *nd;
		struct inart_err r = {{0}};

		if (si->node < 0 || si->node >= t->n_nodes || !s->nodes[si->node].is_sw ||
		    si->cfg.n_ports != s->nodes[si->node].n_ports) {
			inart_err_set(err, 0,
				      "switch install %d: node %d is not a switch with %d ports", k,
				      si->node, si->cfg.n_ports);
			return -EINVAL;
		}
		rc = inart_switch_cfg_check(&si->cfg, &r);
		if (rc < 0) {
			inart_err_set(err, 0, "switch '%s': %s", t->nodes[si->node].id, r.msg);
			return rc;
		}
		nd = &s->nodes[si->node];
		inart_shards_destroy(nd->sw);
		nd->sw =
		    inart_shards_create(&si->cfg, s->o.switch_shards > 1 ? s->o.switch_shards : 1);
		if (nd->sw == NULL)
			return -ENOMEM;
		rc = inart_shards_apply(nd->sw, &u, err);
	}
	return rc;
}

/* A PS core per PS of in, holding its trees. */
static int install_ps(struct inart_sim *s, const struct inart_install *in, struct inart_err *err)
{
	const struct inart_topo *t = s->t;

	for (int k = 0; k < in->n_ps; k++) {
		const struct inart_ps_install *pi = &in->ps[k];
		struct node *nd;

		if (pi->node < 0 || pi->node >= t->n_nodes || s->nodes[pi->node].is_sw) {
			inart_err_set(err, 0, "PS install %d: node %d is not a host", k, pi->node);
			return -EINVAL;
		}
		nd = &s->nodes[pi->node];
		if (nd->ps == NULL)
			nd->ps = inart_ps_create();
		if (nd->ps == NULL)
			return -ENOMEM;
		for (int i = 0; i < pi->n_trees; i++) {
			int rc = inart_ps_tree_set(nd->ps, &pi->trees[i]);

			if (rc < 0) {
				inart_err_set(err, 0, "PS '%s': tree (%u, %u) refused",
					      t->nodes[pi->node].id, pi->trees[i].job,
					      pi->trees[i].tree);
				return rc;
			}
		}
	}
	return 0;
}

/* A worker core per worker of in, listed at its host. */
static int install_workers(struct inart_sim *s, const struct inart_install *in,
			   struct inart_err *err)
{
	const struct inart_topo *t = s->t;

	s->workers = calloc((size_t)in->n_workers + 1, sizeof(*s->workers));
	if (s->workers == NULL)
		return -ENOMEM;
	for (int k = 0; k < in->n_workers; k++) {
		const struct inart_worker_install *wi = &in->workers[k];
		struct node *nd;
		int *nw;

		if (wi->node < 0 || wi->node >= t->n_nodes || s->nodes[wi->node].is_sw) {
			inart_err_set(err, 0, "worker install %d: node %d is not a host", k,
				      wi->node);
			return -EINVAL;
		}
		nd = &s->nodes[wi->node];
		s->workers[k].node = wi->node;
		s->workers[k].job = wi->cfg.job;
		if (wi->ring.size > 0)
			s->workers[k].r = inart_ring_create(&wi->ring);
		else
			s->workers[k].w = inart_worker_create(&wi->cfg);
		s->n_workers = k + 1;
		if (s->workers[k].w == NULL && s->workers[k].r == NULL) {
			int rc = errno > 0 ? -errno : -EINVAL;

			inart_err_set(err, 0,
				      "worker %d (job %u rank %u at '%s') refused its config", k,
				      wi->cfg.job, wi->cfg.rank, t->nodes[wi->node].id);
			return rc;
		}
		nw = realloc(nd->workers, (size_t)(nd->n_workers + 1) * sizeof(int));
		if (nw == NULL)
			return -ENOMEM;
		nd->workers = nw;
		nd->workers[nd->n_workers++] = k;
	}
	return 0;
}

int inart_sim_install(struct inart_sim *s, const struct inart_install *in, struct inart_err *err)
{
	int rc;

	if (err != NULL)
		err->msg[0] = '\0';
	inart_sim_drop_cores(s);
	rc = install_switches(s, in, err);
	if (rc == 0)
		rc = install_ps(s, in, err);
	if (rc == 0)
		rc = install_workers(s, in, err);
	if (rc == 0)
		return 0;
	if (rc == -ENOMEM)
		inart_err_set(err, 0, "out of memory");
	inart_sim_drop_cores(s);
	return rc < 0 ? rc : -EINVAL;
}

int inart_sim_set_workers(struct inart_sim *s, const struct inart_install *in,
			  struct inart_err *err)
{
	if (in->n_workers != s->n_workers) {
		inart_err_set(err, 0, "%d workers, the simulation has %d", in->n_workers,
			      s->n_workers);
		return -EINVAL;
	}
	for (int k = 0; k < s->n_workers; k++)
		if (in->workers[k].node != s->workers[k].node || s->workers[k].active) {
			inart_err_set(err, 0, "worker %d: another node, or in an all-reduce", k);
			return -EINVAL;
		}
	for (int k = 0; k < s->n_workers; k++) {
		const struct inart_worker_install *wi = &in->workers[k];
		struct inart_worker *w = NULL;
		struct inart_ring *r = NULL;

		if (wi->ring.size > 0)
			r = inart_ring_create(&wi->ring);
		else
			w = inart_worker_create(&wi->cfg);
		if (w == NULL && r == NULL) {
			inart_err_set(err, 0, "worker %d refused its config", k);
			return -errno;
		}
		inart_worker_destroy(s->workers[k].w);
		inart_ring_destroy(s->workers[k].r);
		s->workers[k].w = w;
		s->workers[k].r = r;
		s->workers[k].job = in->workers[k].cfg.job;
	}
	return 0;
}
