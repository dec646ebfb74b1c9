/*
 * install: plan -> switch tables, PS tree configurations and worker
 * configurations (see install.h for the label scheme).
 *
 * Labels are keyed by (job, tree, direction, remaining path) in a hash table
 * built for one run; label = key number + 1, so numbering follows the order
 * of first use: jobs in order, PSs in order, then per PS the UP labels (flows
 * in plan order; along a path from its far end, an aggregation switch's
 * label before those of its tree path) and then the DOWN labels (the PS's
 * children: flows with agg == PS, then trees with parent == PS, in plan
 * order; depth first).  A remaining path that ends at a switch means
 * "aggregate there" (UP) or "replicate there" (DOWN); one that ends at a host
 * is delivered to it.  Every key is installed at the first node of its path
 * only, and its entry is a function of the key, so sharing a key is always
 * correct.
 *
 * The label table (keys, entries, the labels of paths) is install_label.c;
 * the builder's state, shared by both, install_impl.h.
 *
 * Ownership: the builder refers to the topology, jobs, plan and deployment
 * (never modified) and returns a struct inart_install that owns all arrays
 * (its switch, PS and worker arrays in one block with it: install_new).
 */
#include "bridge/install_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/slab.h"
#include "cp/model/evaluate.h"
#include "dp/pkt.h"
#include "bridge/routes.h"

void inart_install_opt_default(struct inart_install_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->slots_per_tree = 64;
	o->values_per_packet = 0;
	o->flush_timeout_ns = 10000000ull;
	o->retx_timeout_ns = 50000000ull;
	o->scale_exp = 16;
	o->pace_scale = INART_INSTALL_PACE_DEFAULT;
	o->pace_lead_ns = 0;
	o->rate_scale = 1;
}

void inart_install_destroy(struct inart_install *in)
{
	if (in == NULL)
		return;
	for (int k = 0; k < in->n_switches; k++) {
		free(in->sw[k].labels);
		free(in->sw[k].exp);
		free(in->sw[k].downs);
		free(in->sw[k].routes);
		free(in->sw[k].ingress);
	}
	for (int k = 0; k < in->n_ps; k++)
		for (int i = 0; i < in->ps[k].n_trees; i++)
			free((void *)in->ps[k].trees[i].sources);
	free(in); /* and its switches, PSs (with their trees) and workers */
}

/* Inputs the builder relies on, beyond plan validity. */
static int check_inputs(struct builder *b)
{
	const struct inart_topo *t = b->t;
	const struct inart_deploy *d = b->d;
	int m = inart_topo_n_arcs(t);

	if (d->n_nodes != t->n_nodes || d->n_arcs != m)
		return inart_err_set(b->err, -EINVAL,
				     "deployment has %d nodes and %d arcs, topology %d and %d",
				     d->n_nodes, d->n_arcs, t->n_nodes, m);
	if (b->plan->n_jobs != b->js->n_jobs)
		return inart_err_set(b->err, -EINVAL, "plan has %d jobs, jobs file %d",
				     b->plan->n_jobs, b->js->n_jobs);
	if (b->opt.slots_per_tree == 0)
		return inart_err_set(b->err, -EINVAL, "slots_per_tree must be > 0");
	if (b->opt.values_per_packet > inart_wire_max_values(1))
		return inart_err_set(b->err, -EINVAL, "values_per_packet %u above %d",
				     b->opt.values_per_packet, inart_wire_max_values(1));
	for (int v = 0; v < t->n_nodes; v++) {
		int deg = t->out_off[v + 1] - t->out_off[v];
		uint64_t used = 0;

		if (!is_switch(b, v)) {
			if (deg > 1)
				return inart_err_set(b->err, -EINVAL,
						     "host '%s' has %d links: installation needs "
						     "single-homed hosts",
						     nid(b, v), deg);
			continue;
		}
		if (deg > INART_SW_MAX_PORTS)
			return inart_err_set(b->err, -E2BIG,
					     "switch '%s' has %d ports (at most %d)", nid(b, v),
					     deg, INART_SW_MAX_PORTS);
		if (t->nodes[v].ina && (long)t->nodes[v].trees * b->opt.slots_per_tree > 65536)
			return inart_err_set(b->err, -E2BIG,
					     "switch '%s': %d trees x %u slots exceed 65536 slots",
					     nid(b, v), t->nodes[v].trees, b->opt.slots_per_tree);
		for (int k = t->out_off[v]; k < t->out_off[v + 1]; k++) {
			int p = d->port[t->arc_out[k]];

			if (p < 0 || p >= deg || (used >> p & 1))
				return inart_err_set(b->err, -EINVAL,
						     "deployment: switch '%s': port %d of the link "
						     "to '%s' missing, out of range or repeated",
						     nid(b, v), p,
						     nid(b, t->arcs[t->arc_out[k]].to));
			used |= 1ull << p;
		}
	}
	for (int j = 0; j < b->js->n_jobs; j++) {
		const struct inart_job *job = &b->js->jobs[j];

		if (job->n_workers > INART_WIRE_MAX_CONTRIB)
			return inart_err_set(b->err, -E2BIG, "job '%s': %d workers (at most %d)",
					     job->id, job->n_workers, INART_WIRE_MAX_CONTRIB);
		if (b->opt.values_per_packet > inart_wire_max_values((job->n_workers + 63) / 64))
			return inart_err_set(b->err, -EINVAL,
					     "job '%s': values_per_packet %u do not fit a packet "
					     "with %d workers",
					     job->id, b->opt.values_per_packet, job->n_workers);
		if (job->n_ps > INART_WORKER_MAX_TREES)
			return inart_err_set(b->err, -E2BIG, "job '%s': %d PSs (at most %d)",
					     job->id, job->n_ps, INART_WORKER_MAX_TREES);
	}
	return 0;
}

static void switch_cfg(struct builder *b, int s, struct inart_sw_cfg *cfg)
{
	const struct inart_topo *t = b->t;
	const struct inart_deploy *d = b->d;

	memset(cfg, 0, sizeof(*cfg));
	cfg->n_ports = t->out_off[s + 1] - t->out_off[s];
	for (int k = t->out_off[s]; k < t->out_off[s + 1]; k++) {
		int e = t->arc_out[k], v = t->arcs[e].to;
		struct inart_sw_port_cfg *pc = &cfg->ports[d->port[e]];

		memcpy(pc->mac, d->port_mac[e], 6);
		pc->ip = d->ip[s];
		if (is_switch(b, v)) {
			memcpy(pc->peer_mac, d->port_mac[e ^ 1], 6);
		} else {
			memcpy(pc->peer_mac, d->mac[v], 6);
			pc->peer_ip = d->ip[v]; /* the first hop filters its sources */
		}
	}
	cfg->pool_slots = t->nodes[s].ina ? t->nodes[s].trees * b->opt.slots_per_tree : 0;
	cfg->max_values =
	    b->opt.values_per_packet ? b->opt.values_per_packet : inart_wire_max_values(1);
	cfg->flush_timeout_ns = b->opt.flush_timeout_ns;
}

/* Chunks of PS pi's shard for the job's gradient size: the tree's range of
 * n values is at most n * share + 1 (inart_worker's layout), cut into
 * chunks of values_per_packet; one more for rounding. */
static uint32_t max_chunks_of(const struct builder *b, int pi)
{
	const struct inart_job *job = &b->js->jobs[b->job];
	const struct inart_job_plan *jp = b->jp;
	double total = 0, values = ceil(job->gradient_bytes / 4), c;
	int vpp = b->opt.values_per_packet ? b->opt.values_per_packet
					   : inart_wire_max_values((job->n_workers + 63) / 64);

	for (int i = 0; i < job->n_ps; i++)
		total += jp->split[i];
	c = ceil((values * jp->split[pi] / total + 1) / vpp) + 1;
	return c >= INART_PS_LIMIT_MAX_CHUNKS ? INART_PS_LIMIT_MAX_CHUNKS : (uint32_t)c;
}

/* The sources of the current tree: every worker of the job (its own rank)
 * and every switch aggregating in the tree (any rank).  0 or -ENOMEM/E2BIG. */
static int tree_sources(struct builder *b, struct inart_ps_tree_cfg *pc)
{
	const struct inart_job *job = &b->js->jobs[b->job];
	const struct inart_job_plan *jp = b->jp;
	struct inart_ps_source *src;
	int n = 0;

	src = malloc(((size_t)job->n_workers + (size_t)jp->n_trees + 1) * sizeof(*src));
	if (src == NULL)
		return -ENOMEM;
	for (int r = 0; r < job->n_workers; r++)
		src[n++] = (struct inart_ps_source){b->d->ip[job->workers[r]], (uint16_t)r};
	for (int i = 0; i < jp->n_trees; i++)
		if (jp->trees[i].ps == b->ps)
			src[n++] =
			    (struct inart_ps_source){b->d->ip[jp->trees[i].sw], INART_PS_ANY_RANK};
	if (n > INART_PS_MAX_SOURCES) {
		free(src);
		return inart_err_set(b->err, -E2BIG,
				     "job '%s': PS '%s' has %d sources (at most %d)", job->id,
				     nid(b, b->ps), n, INART_PS_MAX_SOURCES);
	}
	pc->sources = src;
	pc->n_sources = (uint16_t)n;
	return 0;
}

/* Ingress entries: every worker's switch port, its rank in its job. */
static int build_ingress(struct builder *b, struct inart_install *in)
{
	const struct inart_topo *t = b->t;

	for (int j = 0; j < b->js->n_jobs; j++) {
		const struct inart_job *job = &b->js->jobs[j];

		for (int r = 0; r < job->n_workers; r++) {
			int w = job->workers[r], e = t->arc_out[t->out_off[w]], s = t->arcs[e].to;
			struct inart_sw_install *si = &in->sw[b->sw_index[s]];
			struct inart_sw_ingress *g;

			if (t->out_off[w + 1] - t->out_off[w] != 1)
				continue;
			/* a host on one port can be a worker of several jobs */
			g = realloc(si->ingress, ((size_t)si->n_ingress + 1) * sizeof(*g));
			if (g == NULL)
				return -ENOMEM;
			si->ingress = g;
			g[si->n_ingress++] = (struct inart_sw_ingress){(uint16_t)b->d->port[e ^ 1],
								       (uint16_t)r, (uint32_t)j};
		}
	}
	return 0;
}

/* Where the PSs with a tree are: per node its PS number (-1: none) and its
 * trees. */
struct ps_at {
	int num, trees;
};

/* Labels and configurations of PS number pi of job j. */
static int build_tree(struct builder *b, struct inart_install *in, const struct ps_at *ps_at,
		      int wbase, int pi)
{
	const struct inart_job_plan *jp = b->jp;
	const struct inart_job *job = &b->js->jobs[b->job];
	struct inart_ps_install *pin = &in->ps[ps_at[job->ps[pi]].num];
	struct inart_ps_tree_cfg *pc = &pin->trees[pin->n_trees];
	char *done = calloc((size_t)jp->n_trees + 1, 1);
	int rc = 0, it = 0, node, n_rev, *rev;

	if (done == NULL)
		return -ENOMEM;
	b->tree = pi;
	b->ps = job->ps[pi];
	for (int i = 0; i < jp->n_trees; i++)
		if (jp->trees[i].ps == b->ps)
			b->tree_at[jp->trees[i].sw] = i;
	for (int i = 0; i < jp->n_trees; i++)
		if (jp->trees[i].ps == b->ps)
			inart_install_expected_of(b, i, done);
	/* UP */
	for (int i = 0; i < jp->n_flows && rc == 0; i++) {
		const struct inart_flow *f = &jp->flows[i];
		int64_t lab;

		if (f->ps != b->ps)
			continue;
		lab = inart_install_path_label(b, DIR_UP, f->path[0], f->path + 1, f->n_path - 1);
		if (lab < 0)
			rc = (int)lab;
		else
			in->workers[wbase + b->rank[f->worker]].cfg.trees[pi].label = (uint32_t)lab;
	}
	/* DOWN, from the PS */
	memset(pc, 0, sizeof(*pc));
	pc->job = (uint32_t)b->job;
	pc->tree = (uint16_t)pi;
	pc->fan_in = (uint16_t)job->n_workers;
	pc->max_chunks = max_chunks_of(b, pi);
	rc = tree_sources(b, pc);
	while (rc == 0 && (rc = inart_install_child_next(b, b->ps, &it, &node, &rev, &n_rev)) > 0) {
		int64_t lab;

		rc = 0;
		if (pc->n_children == INART_PS_MAX_CHILDREN) {
			rc = inart_err_set(b->err, -E2BIG,
					   "job '%s': PS '%s' has more than %d children", job->id,
					   nid(b, b->ps), INART_PS_MAX_CHILDREN);
		} else {
			lab = inart_install_path_label(b, DIR_DOWN, b->ps, rev + 1, n_rev - 1);
			if (lab < 0)
				rc = (int)lab;
			pc->children[pc->n_children].ip = b->d->ip[node];
			pc->children[pc->n_children].label = (uint32_t)(lab < 0 ? 0 : lab);
			pc->n_children++;
		}
		free(rev);
	}
	if (rc == 0)
		pin->n_trees++;
	else
		free((void *)pc->sources);
	for (int i = 0; i < jp->n_trees; i++)
		if (jp->trees[i].ps == b->ps)
			b->tree_at[jp->trees[i].sw] = -1;
	free(done);
	return rc;
}

/* A job planned as a ring all-reduce: every worker's ring position (the
 * hop it starts in the plan) and its neighbours' addresses; no tables. */
static int build_ring_job(struct builder *b, struct inart_install *in, int wbase)
{
	const struct inart_job *job = &b->js->jobs[b->job];
	const struct inart_job_plan *jp = b->jp;
	int n = jp->n_ring;

	for (int r = 0; r < job->n_workers; r++) {
		struct inart_worker_install *wi = &in->workers[wbase + r];
		int pos = 0;

		while (pos < n && jp->ring[pos].path[0] != job->workers[r])
			pos++;
		if (pos == n) /* the evaluator checked that every worker starts a hop */
			return inart_err_set(b->err, -EINVAL, "job '%s': worker %d not on the ring",
					     job->id, r);
		wi->node = job->workers[r];
		wi->job = b->job;
		wi->cfg.job = (uint32_t)b->job;
		wi->cfg.rank = (uint16_t)r;
		wi->cfg.n_workers = (uint16_t)job->n_workers;
		wi->ring.job = (uint32_t)b->job;
		wi->ring.pos = (uint16_t)pos;
		wi->ring.size = (uint16_t)n;
		wi->ring.prev_ip = b->d->ip[jp->ring[(pos + n - 1) % n].path[0]];
		wi->ring.next_ip = b->d->ip[jp->ring[(pos + 1) % n].path[0]];
		wi->ring.retx_timeout_ns = b->opt.retx_timeout_ns;
		wi->ring.window = b->opt.ring_window ? b->opt.ring_window
				  : b->opt.slots_per_tree > INART_RING_DEFAULT_WINDOW
				      ? b->opt.slots_per_tree
				      : INART_RING_DEFAULT_WINDOW;
		/* the plan's rate of the hop: 2 (N - 1) / N of the gradient in the
		   plan's communication time (as for the trees' pace_Bps) */
		if (b->opt.pace_scale > 0 && b->comm_s > 0) {
			double rate = 2.0 * (n - 1) / n * job->gradient_bytes / b->comm_s;

			wi->ring.pace_Bps = rate * b->opt.pace_scale;
			wi->ring.plan_Bps = rate * b->opt.rate_scale;
			wi->ring.pace_lead_ns = b->opt.pace_lead_ns;
		}
	}
	in->n_ring_hops += n;
	return 0;
}

static int build_job(struct builder *b, struct inart_install *in, const struct ps_at *ps_at,
		     int wbase)
{
	const struct inart_job *job = &b->js->jobs[b->job];
	const struct inart_job_plan *jp = b->jp;
	int rc = 0;

	if (jp->n_ring > 0)
		return build_ring_job(b, in, wbase);
	b->words = (job->n_workers + 63) / 64;
	for (int r = 0; r < job->n_workers; r++) {
		struct inart_worker_install *wi = &in->workers[wbase + r];
		struct inart_worker_cfg *c = &wi->cfg;

		b->rank[job->workers[r]] = r;
		wi->node = job->workers[r];
		wi->job = b->job;
		c->job = (uint32_t)b->job;
		c->rank = (uint16_t)r;
		c->n_workers = (uint16_t)job->n_workers;
		c->n_trees = (uint16_t)job->n_ps;
		for (int i = 0; i < job->n_ps; i++) {
			c->trees[i].ps_ip = b->d->ip[job->ps[i]];
			c->trees[i].share = jp->split[i];
			/* the plan's rate of this flow: its share of the gradient
			   in the plan's communication time, as frame bytes (the
			   header factor cancels: the plan's time on frames is F
			   times the model's, and so are the bytes) */
			if (b->opt.pace_scale > 0 && b->comm_s > 0) {
				/* ... but at least INART_WORKER_PACE_BURST full
				   frames in the plan's time: a tree whose share is a
				   chunk or two (the planner leaves shares of 0.02%)
				   would pace the probes and resends of a lost chunk
				   seconds apart (a tree of more chunks sends its
				   first ones as fast) */
				double rate = job->gradient_bytes * jp->split[i] / b->comm_s,
				       lo = (double)INART_WORKER_PACE_BURST *
					    (INART_PKT_UDP_HLEN + inart_wire_hdr_len(b->words) +
					     4.0 * inart_wire_max_values(b->words)) /
					    b->comm_s;

				rate = rate > lo || rate == 0 ? rate : lo; /* 0: no chunks */
				c->trees[i].pace_Bps = rate * b->opt.pace_scale;
				c->trees[i].plan_Bps = rate * b->opt.rate_scale;
			}
		}
		c->pace_lead_ns = b->opt.pace_scale > 0 ? b->opt.pace_lead_ns : 0;
		c->values_per_packet = b->opt.values_per_packet;
		c->slots = b->opt.slots_per_tree;
		c->window = b->opt.slots_per_tree;
		c->retx_timeout_ns = b->opt.retx_timeout_ns;
		c->scale_exp = b->opt.scale_exp;
	}
	/* slot regions: trees of positive-share PSs, in plan order per switch */
	for (int i = 0; i < jp->n_trees; i++) {
		const struct inart_tree *tr = &jp->trees[i];

		b->region[i] = -1;
		if (jp->split[inart_job_ps_index(job, tr->ps)] > 0)
			b->region[i] = b->sw[b->sw_index[tr->sw]].regions++;
	}
	for (int i = 0; i < job->n_ps && rc == 0; i++)
		if (jp->split[i] > 0)
			rc = build_tree(b, in, ps_at, wbase, i);
	for (int r = 0; r < job->n_workers; r++)
		b->rank[job->workers[r]] = -1;
	return rc;
}

/* The plan is one whose tables can be installed: its inputs fit a
 * deployment (check_inputs) and the evaluator accepts it (ring jobs
 * included: they need no tables). */
static int check_plan(struct builder *b)
{
	struct inart_evaluator *ev;
	struct inart_eval ee;
	int rc;

	rc = check_inputs(b);
	if (rc < 0)
		return rc;
	ev = inart_evaluator_create(b->t, b->js);
	if (ev == NULL)
		return inart_err_set(b->err, -ENOMEM, "out of memory");
	rc = inart_evaluator_run(ev, b->plan, &ee, b->err);
	b->comm_s = rc == 0 ? ee.comm_time_s : 0;
	inart_evaluator_destroy(ev);
	if (rc < 0)
		inart_err_prefix(b->err, "plan");
	return rc;
}

/* The build's scratch in one block (common/slab.h): per node the builder's
 * sw_index, rank and tree_at, and ps_at; per switch the builder's sw; per
 * tree of a job (room for the job with the most) region and exp. */
struct scratch {
	struct builder *b;
	struct ps_at *ps_at; /* per node */
};

static void scratch_lay_out(void *obj, struct inart_slab *s)
{
	struct scratch *x = obj;
	struct builder *b = x->b;
	size_t n = (size_t)b->t->n_nodes + 1, n_sw = 1, max_trees = 1;

	b->sw_index = inart_slab_take(s, n, sizeof(*b->sw_index));
	b->rank = inart_slab_take(s, n, sizeof(*b->rank));
	b->tree_at = inart_slab_take(s, n, sizeof(*b->tree_at));
	x->ps_at = inart_slab_take(s, n, sizeof(*x->ps_at));
	for (int v = 0; v < b->t->n_nodes; v++)
		n_sw += is_switch(b, v);
	b->sw = inart_slab_take(s, n_sw, sizeof(*b->sw));
	for (int j = 0; j < b->plan->n_jobs; j++)
		if ((size_t)b->plan->jobs[j].n_trees > max_trees)
			max_trees = (size_t)b->plan->jobs[j].n_trees;
	b->region = inart_slab_take(s, max_trees, sizeof(*b->region));
	b->exp = inart_slab_take(s, max_trees * INART_WIRE_MAX_BITMAP_WORDS, sizeof(*b->exp));
}

/* Number the switches (b->sw_index, b->sw[].node) and the PSs with a tree
 * (x->ps_at); count them and the workers in *in. */
static void number_nodes(struct builder *b, struct scratch *x, struct inart_install *in)
{
	int n = b->t->n_nodes;

	for (int v = 0; v < n; v++) {
		b->sw_index[v] = is_switch(b, v) ? b->n_sw++ : -1;
		b->rank[v] = b->tree_at[v] = x->ps_at[v].num = -1;
		if (b->sw_index[v] >= 0)
			b->sw[b->sw_index[v]].node = v;
	}
	for (int j = 0; j < b->js->n_jobs; j++) {
		const struct inart_job *job = &b->js->jobs[j];
		const struct inart_job_plan *jp = &b->plan->jobs[j];

		in->n_workers += job->n_workers;
		for (int i = 0; i < job->n_ps && jp->n_ring == 0; i++)
			if (jp->split[i] > 0)
				x->ps_at[job->ps[i]].trees++;
	}
	for (int v = 0; v < n; v++)
		if (x->ps_at[v].trees > 0)
			x->ps_at[v].num = in->n_ps++;
	in->n_switches = b->n_sw;
}

/* in's switches, PSs (each with room for its trees) and workers, for the
 * counts in in: on the sizing pass (in->ps NULL) only taken. */
static void install_lay_out(struct inart_install *in, const struct builder *b,
			    const struct scratch *x, struct inart_slab *s)
{
	in->sw = inart_slab_take(s, (size_t)in->n_switches + 1, sizeof(*in->sw));
	in->ps = inart_slab_take(s, (size_t)in->n_ps + 1, sizeof(*in->ps));
	in->workers = inart_slab_take(s, (size_t)in->n_workers + 1, sizeof(*in->workers));
	for (int k = 0; k < in->n_switches && in->sw; k++)
		in->sw[k].node = b->sw[k].node;
	for (int v = 0; v < b->t->n_nodes; v++) {
		struct inart_ps_tree_cfg *trees;

		if (x->ps_at[v].num < 0)
			continue;
		trees = inart_slab_take(s, (size_t)x->ps_at[v].trees, sizeof(*trees));
		if (in->ps != NULL)
			in->ps[x->ps_at[v].num] =
			    (struct inart_ps_install){.node = v, .trees = trees};
	}
}

/* An install with the counts of proto, and its arrays, in one zeroed block
 * (freed with one free()).  NULL if out of memory. */
static struct inart_install *install_new(const struct inart_install *proto, const struct builder *b,
					 const struct scratch *x)
{
	struct inart_slab s = INART_SLAB_INIT;
	struct inart_install sizing = *proto, *in;

	inart_slab_take(&s, 1, sizeof(*in));
	install_lay_out(&sizing, b, x, &s);
	if (inart_slab_alloc(&s) < 0)
		return NULL;
	in = inart_slab_take(&s, 1, sizeof(*in));
	*in = *proto;
	install_lay_out(in, b, x, &s);
	return in;
}

/* Hand every switch's built labels (pointers into its arrays set now) and
 * its configuration to in. */
static void give_switches(struct builder *b, struct inart_install *in)
{
	for (int k = 0; k < b->n_sw; k++) {
		struct swb *sw = &b->sw[k];

		switch_cfg(b, in->sw[k].node, &in->sw[k].cfg);
		for (int i = 0; i < sw->n_labels; i++) {
			struct inart_label_entry *e = &sw->labels[i];

			if (e->kind == INART_LABEL_DOWN)
				e->down = sw->dn + sw->var[i];
			else if (e->aggregate)
				e->expected = sw->exp + sw->var[i];
		}
		in->sw[k].n_labels = sw->n_labels;
		in->sw[k].labels = sw->labels;
		in->sw[k].exp = sw->exp;
		in->sw[k].downs = sw->dn;
		sw->labels = NULL;
		sw->exp = NULL;
		sw->dn = NULL;
	}
}

static void builder_free(struct builder *b)
{
	for (int k = 0; k < b->n_sw && b->sw; k++) {
		free(b->sw[k].labels);
		free(b->sw[k].var);
		free(b->sw[k].exp);
		free(b->sw[k].dn);
	}
	for (int i = 0; i < b->n_keys; i++)
		free(b->keys[i].nodes);
	free(b->keys);
	free(b->hash);
}

/* The switches' routes (routes.h) into in->sw[k].routes and the ring
 * counters.  0 or -ENOMEM. */
static int add_routes(const struct inart_topo *t, const struct inart_plan *plan,
		      const struct inart_deploy *d, struct inart_install *in)
{
	struct inart_sw_routes *sr = calloc((size_t)in->n_switches + 1, sizeof(*sr));
	struct inart_routes_off off;
	int rc;

	if (sr == NULL)
		return -ENOMEM;
	for (int k = 0; k < in->n_switches; k++)
		sr[k].node = in->sw[k].node;
	rc = inart_routes_build(t, plan, d, sr, in->n_switches, &off);
	for (int k = 0; k < in->n_switches; k++) { /* routes go to in, even on failure */
		in->sw[k].routes = sr[k].routes;
		in->sw[k].n_routes = sr[k].n;
	}
	in->n_ring_hops_off_plan = off.hops_off;
	in->n_ring_acks_off_plan = off.acks_off;
	free(sr);
	return rc;
}

int inart_install_build(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *plan, const struct inart_deploy *d,
			const struct inart_install_opt *opt, struct inart_install **out,
			struct inart_err *err)
{
	struct builder b;
	struct scratch x = {&b, NULL};
	struct inart_install counts = {0}, *in = NULL;
	void *block = NULL;
	int rc, wbase = 0;

	*out = NULL;
	memset(&b, 0, sizeof(b));
	b.t = t;
	b.js = js;
	b.plan = plan;
	b.d = d;
	b.err = err;
	if (opt)
		b.opt = *opt;
	else
		inart_install_opt_default(&b.opt);
	rc = check_plan(&b);
	if (rc < 0)
		return rc;
	rc = -ENOMEM;
	block = inart_slab_block(&x, scratch_lay_out);
	b.hash_size = 1024;
	b.hash = calloc(b.hash_size, sizeof(int));
	if (block == NULL || b.hash == NULL)
		goto out;
	number_nodes(&b, &x, &counts);
	in = install_new(&counts, &b, &x);
	rc = in == NULL ? -ENOMEM : 0;
	for (int j = 0; j < js->n_jobs && rc == 0; j++) {
		b.job = j;
		b.jp = &plan->jobs[j];
		rc = build_job(&b, in, x.ps_at, wbase);
		wbase += js->jobs[j].n_workers;
	}
	if (rc < 0)
		goto out;
	give_switches(&b, in);
	rc = add_routes(t, plan, d, in);
	if (rc == 0)
		rc = build_ingress(&b, in);
	if (rc < 0)
		goto out;
	*out = in;
	in = NULL;
out:
	if (rc == -ENOMEM)
		inart_err_set(err, rc, "out of memory");
	builder_free(&b);
	free(block);
	inart_install_destroy(in);
	return rc;
}

const struct inart_sw_install *inart_install_sw_of(const struct inart_install *in, int v)
{
	for (int k = 0; k < in->n_switches; k++)
		if (in->sw[k].node == v)
			return &in->sw[k];
	return NULL;
}

const struct inart_ps_install *inart_install_ps_of(const struct inart_install *in, int v)
{
	for (int k = 0; k < in->n_ps; k++)
		if (in->ps[k].node == v)
			return &in->ps[k];
	return NULL;
}

struct inart_sw_update inart_sw_install_update(const struct inart_sw_install *si)
{
	return (struct inart_sw_update){.replace = 1,
					.n_labels = si->n_labels,
					.labels = si->labels,
					.n_routes = si->n_routes,
					.routes = si->routes,
					.n_ingress = si->n_ingress,
					.ingress = si->ingress};
}
