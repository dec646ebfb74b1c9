/*
 * test_install: plan -> tables.  A tiny plan checked entry by entry, a
 * multi-level tree's expected bitmaps, multiple PSs with a zero share, and a
 * property test on fat-trees with baseline plans: labels unique, every UP
 * label chain from every worker follows the plan's paths and ends at the PS
 * with the worker counted exactly once, every DOWN chain from the PS reaches
 * every worker exactly once, and /32 routes reach every address along
 * shortest paths.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "testutil.h"

#include "cp/planner/baselines.h"
#include "cp/model/gen.h"
#include "cp/model/paths.h"
#include "cp/model/plan.h"
#include "bridge/install.h"

static const struct inart_sw_install *sw_of(const struct inart_install *in, int v)
{
	const struct inart_sw_install *si = inart_install_sw_of(in, v);

	if (si == NULL)
		fail_msg("no switch install for node %d", v);
	return si;
}

static const struct inart_label_entry *label_at(const struct inart_sw_install *si, uint32_t l)
{
	for (int i = 0; i < si->n_labels; i++)
		if (si->labels[i].label == l)
			return &si->labels[i];
	return NULL;
}

/* Node behind switch s's port p. */
static int peer(const struct inart_topo *t, const struct inart_deploy *d, int s, int p)
{
	for (int k = t->out_off[s]; k < t->out_off[s + 1]; k++)
		if (d->port[t->arc_out[k]] == p)
			return t->arcs[t->arc_out[k]].to;
	fail_msg("switch %d has no port %d", s, p);
	return -1;
}

static int route_port(const struct inart_sw_install *si, uint32_t ip)
{
	for (int i = 0; i < si->n_routes; i++)
		if (si->routes[i].prefix == ip && si->routes[i].len == 32)
			return si->routes[i].port;
	return -1;
}

static struct inart_install *build(const struct inart_topo *t, const struct inart_jobs *js,
				   const struct inart_plan *p, const struct inart_deploy *d,
				   const struct inart_install_opt *o)
{
	struct inart_install *in = NULL;
	struct inart_err err = {{0}};
	int rc = inart_install_build(t, js, p, d, o, &in, &err);

	if (rc < 0)
		fail_msg("install: %s", err.msg);
	assert_non_null(in);
	return in;
}

/* h0, h1 under e0 (INA, 2 trees), PS h2 behind e1. */
static void test_tiny(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-e1 e1-h2", "e0:100:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e6);
	struct inart_plan *p = inart_plan_create(js, "hand");
	struct inart_deploy *d = inart_deploy_auto(t);
	struct inart_install_opt o;
	struct inart_install *in;
	const struct inart_sw_install *e0, *e1;
	const struct inart_label_entry *le;
	int h0 = tu_find(t, "h0"), h1 = tu_find(t, "h1"), h2 = tu_find(t, "h2");
	int ne0 = tu_find(t, "e0"), ne1 = tu_find(t, "e1");

	(void)state;
	assert_non_null(d);
	p->jobs[0].split[0] = 1;
	tu_tiny_routes(p, t);
	inart_install_opt_default(&o);
	o.slots_per_tree = 8;
	in = build(t, js, p, d, &o);

	/* deployment: 10.<v/256>.<v%256>.1, MACs 02:00:<v>:<port> */
	assert_int_equal(d->ip[h2], 0x0a000001u | (uint32_t)h2 << 8);
	assert_int_equal(d->mac[h2][0], 2);
	assert_int_equal(d->mac[h2][3], h2);
	/* ports in adjacency order (by neighbour number): e0: h0 0, h1 1, e1 2 */
	assert_int_equal(d->port[inart_topo_arc_between(t, ne0, h0)], 0);
	assert_int_equal(d->port[inart_topo_arc_between(t, ne0, h1)], 1);
	assert_int_equal(d->port[inart_topo_arc_between(t, ne0, ne1)], 2);
	assert_int_equal(d->port[inart_topo_arc_between(t, ne1, h2)], 1);
	assert_int_equal(d->port[inart_topo_arc_between(t, h0, ne0)], -1);
	assert_int_equal(d->port_mac[inart_topo_arc_between(t, ne1, h2)][5], 1);

	assert_int_equal(in->n_switches, 2);
	assert_int_equal(in->n_ps, 1);
	assert_int_equal(in->n_workers, 2);
	e0 = sw_of(in, ne0);
	e1 = sw_of(in, ne1);

	/* switch configs */
	assert_int_equal(e0->cfg.n_ports, 3);
	assert_int_equal(e0->cfg.pool_slots, 16);
	assert_int_equal(e1->cfg.pool_slots, 0);
	assert_int_equal(e0->cfg.max_values, inart_wire_max_values(1));
	assert_int_equal(e0->cfg.flush_timeout_ns, 10000000ull);
	assert_int_equal(e0->cfg.ports[2].ip, d->ip[ne0]);
	assert_memory_equal(e0->cfg.ports[0].peer_mac, d->mac[h0], 6);
	assert_memory_equal(e0->cfg.ports[2].peer_mac,
			    d->port_mac[inart_topo_arc_between(t, ne1, ne0)], 6);
	assert_memory_equal(e0->cfg.ports[1].mac, d->port_mac[inart_topo_arc_between(t, ne0, h1)],
			    6);

	/* labels: 1 = aggregate at e0, 2 = e1 -> h2, 3 = replicate at e0,
	 * 4 = e1 -> e0 (DOWN) */
	assert_int_equal(e0->n_labels, 2);
	assert_int_equal(e1->n_labels, 2);
	le = label_at(e0, 1);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_UP);
	assert_int_equal(le->job, 0);
	assert_int_equal(le->tree, 0);
	assert_int_equal(le->aggregate, 1);
	assert_int_equal(le->out_port, 2);
	assert_int_equal(le->next_label, 2);
	assert_int_equal(le->slot_base, 0);
	assert_int_equal(le->n_slots, 8);
	assert_int_equal(le->bitmap_words, 1);
	assert_int_equal(le->expected[0], 0x3);
	le = label_at(e1, 2);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_UP);
	assert_int_equal(le->aggregate, 0);
	assert_int_equal(le->out_port, 1);
	assert_int_equal(le->next_label, 0);
	le = label_at(e0, 3);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_DOWN);
	assert_int_equal(le->n_down, 2);
	assert_int_equal(le->down[0].port, 0);
	assert_int_equal(le->down[0].label, 0);
	assert_int_equal(le->down[0].dst_ip, d->ip[h0]);
	assert_int_equal(le->down[1].port, 1);
	assert_int_equal(le->down[1].label, 0);
	assert_int_equal(le->down[1].dst_ip, d->ip[h1]);
	le = label_at(e1, 4);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_DOWN);
	assert_int_equal(le->n_down, 1);
	assert_int_equal(le->down[0].port, 0);
	assert_int_equal(le->down[0].label, 3);
	assert_int_equal(le->down[0].dst_ip, 0);

	/* PS */
	assert_int_equal(in->ps[0].node, h2);
	assert_int_equal(in->ps[0].n_trees, 1);
	assert_int_equal(in->ps[0].trees[0].job, 0);
	assert_int_equal(in->ps[0].trees[0].tree, 0);
	assert_int_equal(in->ps[0].trees[0].fan_in, 2);
	assert_int_equal(in->ps[0].trees[0].n_children, 1);
	assert_int_equal(in->ps[0].trees[0].children[0].ip, d->ip[ne0]);
	assert_int_equal(in->ps[0].trees[0].children[0].label, 4);

	/* workers */
	for (int r = 0; r < 2; r++) {
		const struct inart_worker_install *wi = &in->workers[r];

		assert_int_equal(wi->node, r == 0 ? h0 : h1);
		assert_int_equal(wi->job, 0);
		assert_int_equal(wi->cfg.rank, r);
		assert_int_equal(wi->cfg.n_workers, 2);
		assert_int_equal(wi->cfg.n_trees, 1);
		assert_int_equal(wi->cfg.trees[0].ps_ip, d->ip[h2]);
		assert_int_equal(wi->cfg.trees[0].label, 1);
		assert_true(wi->cfg.trees[0].share == 1.0);
		assert_int_equal(wi->cfg.slots, 8);
		assert_int_equal(wi->cfg.window, 8);
		assert_int_equal(wi->cfg.retx_timeout_ns, 50000000ull);
		assert_int_equal(wi->cfg.scale_exp, 16);
		/* paced by default (the plan's rate x INART_INSTALL_PACE_DEFAULT) */
		assert_true(wi->cfg.trees[0].pace_Bps > 0);
	}
	assert_true(fabs(o.pace_scale - INART_INSTALL_PACE_DEFAULT) < 1e-12);
	/* paced: the flow's share of the gradient in the plan's evaluated time,
	   times pace_scale */
	{
		struct inart_err err = {{0}};
		struct inart_install *pin;
		double want;

		assert_int_equal(inart_evaluate(t, js, p, &err), 0);
		assert_true(p->comm_time_s > 0);
		want = js->jobs[0].gradient_bytes * 1.0 / p->comm_time_s * 0.5;
		o.pace_scale = 0.5;
		pin = build(t, js, p, d, &o);
		for (int r = 0; r < 2; r++)
			assert_true(fabs(pin->workers[r].cfg.trees[0].pace_Bps - want) <=
				    1e-9 * want);
		assert_true(inart_install_digest(pin) != inart_install_digest(in));
		inart_install_destroy(pin);
		/* 0: not paced */
		o.pace_scale = 0;
		pin = build(t, js, p, d, &o);
		for (int r = 0; r < 2; r++)
			assert_true(pin->workers[r].cfg.trees[0].pace_Bps == 0);
		inart_install_destroy(pin);
		o.pace_scale = INART_INSTALL_PACE_DEFAULT;
	}

	/* routes: e0 reaches h0, h1 directly, e1 and h2 via port 2 */
	assert_int_equal(e0->n_routes, 4);
	assert_int_equal(route_port(e0, d->ip[h0]), 0);
	assert_int_equal(route_port(e0, d->ip[h1]), 1);
	assert_int_equal(route_port(e0, d->ip[ne1]), 2);
	assert_int_equal(route_port(e0, d->ip[h2]), 2);
	assert_int_equal(route_port(e0, d->ip[ne0]), -1);
	assert_int_equal(e1->n_routes, 4);
	assert_int_equal(route_port(e1, d->ip[h0]), 0);
	assert_int_equal(route_port(e1, d->ip[h2]), 1);

	inart_install_destroy(in);
	inart_deploy_destroy(d);
	tu_free(t, js, NULL, p);
}

/* Two levels: e0 {h0,h1} and e1 {h2,h3} merge at a0, which sends to PS h4
 * behind e2; h5 under e2 goes straight to the PS.  A second PS h6 (share
 * 0.25) without INA; a third PS h7 with share 0 is not installed. */
static void test_multilevel(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 h2-e1 h3-e1 e0-a0 e1-a0 a0-e2 e2-h4 h5-e2 "
				       "e2-h6 e2-h7",
				       "e0:100:1 e1:100:1 a0:100:4");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h2 h3 h5", "h4 h6 h7", 1e6);
	struct inart_plan *p = inart_plan_create(js, "hand");
	struct inart_deploy *d = inart_deploy_auto(t);
	struct inart_install *in;
	const struct inart_sw_install *e0, *e1, *a0, *e2;
	const struct inart_label_entry *le;
	const struct inart_ps_install *p4 = NULL, *p6 = NULL;
	const char *ws[] = {"h0", "h1", "h2", "h3", "h5"},
		   *under[] = {"e0", "e0", "e1", "e1", "e2"};
	char path[64];

	(void)state;
	p->jobs[0].split[0] = 0.75;
	p->jobs[0].split[1] = 0.25;
	p->jobs[0].split[2] = 0;
	tu_flow(p, t, 0, "h0", "h4", "e0", "h0 e0");
	tu_flow(p, t, 0, "h1", "h4", "e0", "h1 e0");
	tu_flow(p, t, 0, "h2", "h4", "e1", "h2 e1");
	tu_flow(p, t, 0, "h3", "h4", "e1", "h3 e1");
	tu_flow(p, t, 0, "h5", "h4", "h4", "h5 e2 h4");
	tu_tree(p, t, 0, "e0", "h4", "a0", "e0 a0");
	tu_tree(p, t, 0, "e1", "h4", "a0", "e1 a0");
	tu_tree(p, t, 0, "a0", "h4", "h4", "a0 e2 h4");
	for (int i = 0; i < 5; i++) {
		if (i < 4)
			snprintf(path, sizeof(path), "%s %s a0 e2 h6", ws[i], under[i]);
		else
			snprintf(path, sizeof(path), "%s e2 h6", ws[i]);
		tu_flow(p, t, 0, ws[i], "h6", "h6", path);
	}
	in = build(t, js, p, d, NULL);
	e0 = sw_of(in, tu_find(t, "e0"));
	e1 = sw_of(in, tu_find(t, "e1"));
	a0 = sw_of(in, tu_find(t, "a0"));
	e2 = sw_of(in, tu_find(t, "e2"));

	/* expected bitmaps: e0 ranks 0,1; e1 ranks 2,3; a0 all four */
	for (int k = 0; k < 3; k++) {
		const struct inart_sw_install *si = k == 0 ? e0 : k == 1 ? e1 : a0;
		uint64_t want = k == 0 ? 0x3 : k == 1 ? 0xc : 0xf;
		int found = 0;

		for (int i = 0; i < si->n_labels; i++) {
			le = &si->labels[i];
			if (le->kind != INART_LABEL_UP || !le->aggregate)
				continue;
			found++;
			assert_int_equal(le->tree, 0);
			assert_int_equal(le->expected[0], want);
			assert_int_equal(le->slot_base, 0); /* the only tree at each switch */
			assert_int_equal(le->n_slots, 64);
		}
		assert_int_equal(found, 1);
	}
	assert_int_equal(a0->cfg.pool_slots, 4 * 64);
	/* no aggregation at e2 (not INA) */
	for (int i = 0; i < e2->n_labels; i++)
		assert_int_equal(e2->labels[i].aggregate, 0);

	/* PSs: h4 serves tree 0 with children a0 and h5; h6 tree 1 with the
	 * five workers; h7 nothing */
	assert_int_equal(in->n_ps, 2);
	for (int k = 0; k < in->n_ps; k++) {
		if (in->ps[k].node == tu_find(t, "h4"))
			p4 = &in->ps[k];
		if (in->ps[k].node == tu_find(t, "h6"))
			p6 = &in->ps[k];
	}
	assert_non_null(p4);
	assert_non_null(p6);
	assert_int_equal(p4->n_trees, 1);
	assert_int_equal(p4->trees[0].tree, 0);
	assert_int_equal(p4->trees[0].fan_in, 5);
	assert_int_equal(p4->trees[0].n_children, 2);
	assert_int_equal(p4->trees[0].children[0].ip, d->ip[tu_find(t, "h5")]); /* flows first */
	assert_int_equal(p4->trees[0].children[1].ip, d->ip[tu_find(t, "a0")]);
	assert_int_equal(p6->trees[0].tree, 1);
	assert_int_equal(p6->trees[0].n_children, 5);

	/* DOWN from h4 to a0: e2 forwards to a0's replication, which copies to
	 * e0 and e1 (addressed to them), which copy to the workers */
	le = label_at(e2, p4->trees[0].children[1].label);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_DOWN);
	assert_int_equal(le->n_down, 1);
	le = label_at(a0, le->down[0].label);
	assert_non_null(le);
	assert_int_equal(le->n_down, 2);
	assert_int_equal(le->down[0].dst_ip, d->ip[tu_find(t, "e0")]);
	assert_int_equal(le->down[1].dst_ip, d->ip[tu_find(t, "e1")]);
	le = label_at(e1, le->down[1].label);
	assert_non_null(le);
	assert_int_equal(le->n_down, 2);
	assert_int_equal(le->down[0].dst_ip, d->ip[tu_find(t, "h2")]);
	assert_int_equal(le->down[1].dst_ip, d->ip[tu_find(t, "h3")]);

	/* workers: tree ids are PS indices; the zero-share PS gets no label */
	for (int r = 0; r < 5; r++) {
		const struct inart_worker_cfg *c = &in->workers[r].cfg;

		assert_int_equal(c->rank, r);
		assert_true(c->trees[1].share == 0.25);
		assert_int_equal(c->trees[2].label, 0);
		assert_true(c->trees[2].share == 0);
		assert_int_equal(c->trees[1].ps_ip, d->ip[tu_find(t, "h6")]);
		assert_true(c->trees[1].label != 0);
	}
	/* h5's first UP label for tree 0 forwards at e2 straight to h4 */
	le = label_at(e2, in->workers[4].cfg.trees[0].label);
	assert_non_null(le);
	assert_int_equal(le->aggregate, 0);
	assert_int_equal(peer(t, d, tu_find(t, "e2"), le->out_port), tu_find(t, "h4"));
	assert_int_equal(le->next_label, 0);

	inart_install_destroy(in);
	inart_deploy_destroy(d);
	tu_free(t, js, NULL, p);
}

static void expect_fail(const struct inart_topo *t, const struct inart_jobs *js,
			const struct inart_plan *p, const struct inart_deploy *d,
			const struct inart_install_opt *o, int code, const char *needle)
{
	struct inart_install *in = (void *)1;
	struct inart_err err = {{0}};

	assert_int_equal(inart_install_build(t, js, p, d, o, &in, &err), code);
	assert_null(in);
	if (strstr(err.msg, needle) == NULL)
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
}

static void test_errors(void **state)
{
	struct inart_topo *t = tu_topo("h0-e0 h1-e0 e0-e1 e1-h2", "e0:100:2");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1", "h2", 1e6);
	struct inart_plan *p = inart_plan_create(js, "hand");
	struct inart_deploy *d = inart_deploy_auto(t);
	struct inart_install_opt o;
	struct inart_topo *t2;
	struct inart_jobs *js2;
	struct inart_plan *p2;
	struct inart_deploy *d2;

	(void)state;
	/* invalid plan: no flows */
	p->jobs[0].split[0] = 1;
	expect_fail(t, js, p, d, NULL, -EINVAL, "plan: ");
	tu_tiny_routes(p, t);
	inart_install_opt_default(&o);
	o.slots_per_tree = 0;
	expect_fail(t, js, p, d, &o, -EINVAL, "slots_per_tree");
	o.slots_per_tree = 40000; /* 2 trees x 40000 > 65536 */
	expect_fail(t, js, p, d, &o, -E2BIG, "65536");
	/* a broken deployment: repeated port */
	d->port[inart_topo_arc_between(t, tu_find(t, "e0"), tu_find(t, "h1"))] = 0;
	expect_fail(t, js, p, d, NULL, -EINVAL, "repeated");
	d->port[inart_topo_arc_between(t, tu_find(t, "e0"), tu_find(t, "h1"))] = 1;
	d->n_arcs--;
	expect_fail(t, js, p, d, NULL, -EINVAL, "deployment has");
	d->n_arcs++;
	/* a ring all-reduce plan (the `ring` baseline): no switch or PS state,
	   each worker its ring position and neighbours (dp/ring) */
	inart_plan_clear_routes(p, 0);
	{
		int hop0[] = {tu_find(t, "h1"), tu_find(t, "e0"), tu_find(t, "h0")};
		int hop1[] = {tu_find(t, "h0"), tu_find(t, "e0"), tu_find(t, "h1")};
		struct inart_install *in = NULL;
		struct inart_err err = {{0}};

		assert_int_equal(inart_plan_add_ring_hop(p, 0, hop0, 3), 0);
		assert_int_equal(inart_plan_add_ring_hop(p, 0, hop1, 3), 0);
		assert_int_equal(inart_install_build(t, js, p, d, NULL, &in, &err), 0);
		assert_int_equal(in->n_ps, 0);
		assert_int_equal(in->n_workers, 2);
		assert_int_equal(in->n_ring_hops, 2);
		assert_int_equal(in->n_ring_hops_off_plan, 0);
		for (int k = 0; k < in->n_switches; k++)
			assert_int_equal(in->sw[k].n_labels, 0);
		for (int k = 0; k < 2; k++) {
			const struct inart_worker_install *wi = &in->workers[k];
			int other = tu_find(t, k == 0 ? "h1" : "h0");

			assert_int_equal(wi->cfg.n_trees, 0);
			assert_int_equal(wi->ring.size, 2);
			assert_int_equal(wi->ring.pos, wi->node == tu_find(t, "h1") ? 0 : 1);
			assert_int_equal(wi->ring.prev_ip, d->ip[other]);
			assert_int_equal(wi->ring.next_ip, d->ip[other]);
		}
		inart_install_destroy(in);
	}
	inart_plan_clear_routes(p, 0);
	tu_tiny_routes(p, t);

	/* a dual-homed host */
	t2 = tu_topo("h0-e0 h0-e1 h1-e0 e0-e1 e1-h2", "");
	js2 = tu_jobs1(t2, "h1", "h2", 1e6);
	p2 = inart_plan_create(js2, "hand");
	d2 = inart_deploy_auto(t2);
	p2->jobs[0].split[0] = 1;
	expect_fail(t2, js2, p2, d2, NULL, -EINVAL, "single-homed");

	inart_deploy_destroy(d2);
	tu_free(t2, js2, NULL, p2);
	inart_deploy_destroy(d);
	tu_free(t, js, NULL, p);
}

/* Follow the UP chain of worker rank r for tree i: it must visit exactly
 * the flow's path and then the tree paths up to the PS, aggregate exactly at
 * the flow's agg and the tree switches above it, with the worker inside each
 * expected set. */
static void walk_up(const struct inart_topo *t, const struct inart_deploy *d,
		    const struct inart_install *in, const struct inart_jobs *js,
		    const struct inart_plan *p, int j, int r, int i)
{
	const struct inart_job *job = &js->jobs[j];
	const struct inart_worker_cfg *c = NULL;
	const struct inart_job_plan *jp = &p->jobs[j];
	const struct inart_flow *f = NULL;
	int w = job->workers[r], ps = job->ps[i], at, n = 0, pos = 1;
	int seq[128], is_agg[128] = {0};
	uint32_t label;

	for (int k = 0; k < in->n_workers; k++)
		if (in->workers[k].job == j && in->workers[k].cfg.rank == r)
			c = &in->workers[k].cfg;
	assert_non_null(c);
	for (int k = 0; k < jp->n_flows; k++)
		if (jp->flows[k].worker == w && jp->flows[k].ps == ps)
			f = &jp->flows[k];
	assert_non_null(f);
	/* expected node sequence: the flow's path, then the tree paths */
	for (int k = 0; k < f->n_path; k++)
		seq[n++] = f->path[k];
	for (int s = f->agg; s != ps;) {
		const struct inart_tree *tr = NULL;

		for (int q = 0; q < jp->n_trees; q++)
			if (jp->trees[q].ps == ps && jp->trees[q].sw == s)
				tr = &jp->trees[q];
		assert_non_null(tr);
		is_agg[n - 1] = 1;
		for (int k = 1; k < tr->n_path; k++) {
			assert_true(n < 128);
			seq[n++] = tr->path[k];
		}
		s = tr->parent;
	}
	label = c->trees[i].label;
	at = t->arcs[t->arc_out[t->out_off[w]]].to;
	while (at != ps) {
		const struct inart_label_entry *le;

		assert_true(pos < n);
		assert_int_equal(at, seq[pos]);
		assert_int_equal(t->nodes[at].kind, INART_NODE_SWITCH);
		assert_true(label != 0);
		le = label_at(sw_of(in, at), label);
		assert_non_null(le);
		assert_int_equal(le->kind, INART_LABEL_UP);
		assert_int_equal(le->job, j);
		assert_int_equal(le->tree, i);
		assert_int_equal(le->aggregate, is_agg[pos]);
		if (le->aggregate) {
			assert_true(le->expected[r / 64] >> (r % 64) & 1);
			assert_int_equal(le->bitmap_words, (job->n_workers + 63) / 64);
		}
		at = peer(t, d, at, le->out_port);
		label = le->next_label;
		pos++;
	}
	assert_int_equal(pos, n - 1);
	assert_int_equal(label, 0);
}

/* Follow every DOWN copy from the PS; count arrivals per worker. */
static void walk_down(const struct inart_topo *t, const struct inart_deploy *d,
		      const struct inart_install *in, int at, uint32_t label, uint32_t dst, int j,
		      int i, int *arrivals, int depth)
{
	const struct inart_label_entry *le;

	assert_true(depth < 64);
	if (t->nodes[at].kind == INART_NODE_HOST) {
		assert_int_equal(label, 0);
		assert_int_equal(dst, d->ip[at]);
		arrivals[at]++;
		return;
	}
	assert_true(label != 0);
	le = label_at(sw_of(in, at), label);
	assert_non_null(le);
	assert_int_equal(le->kind, INART_LABEL_DOWN);
	assert_int_equal(le->job, j);
	assert_int_equal(le->tree, i);
	assert_true(le->n_down >= 1);
	for (int k = 0; k < le->n_down; k++) {
		int nxt = peer(t, d, at, le->down[k].port);

		walk_down(t, d, in, nxt, le->down[k].label,
			  le->down[k].dst_ip ? le->down[k].dst_ip : dst, j, i, arrivals, depth + 1);
	}
}

static void check_install(const struct inart_topo *t, const struct inart_jobs *js,
			  const struct inart_plan *p, const struct inart_deploy *d,
			  const struct inart_install *in)
{
	int n_labels = 0, max_label = 0;
	char *seen;
	int *arrivals = calloc((size_t)t->n_nodes, sizeof(int));

	/* labels globally unique, numbered 1..n */
	for (int k = 0; k < in->n_switches; k++)
		for (int i = 0; i < in->sw[k].n_labels; i++) {
			n_labels++;
			if ((int)in->sw[k].labels[i].label > max_label)
				max_label = (int)in->sw[k].labels[i].label;
		}
	assert_int_equal(max_label, n_labels);
	seen = calloc((size_t)n_labels + 1, 1);
	for (int k = 0; k < in->n_switches; k++)
		for (int i = 0; i < in->sw[k].n_labels; i++) {
			uint32_t l = in->sw[k].labels[i].label;

			assert_true(l >= 1);
			assert_false(seen[l]);
			seen[l] = 1;
		}
	free(seen);

	for (int j = 0; j < js->n_jobs; j++) {
		const struct inart_job *job = &js->jobs[j];

		for (int i = 0; i < job->n_ps; i++) {
			const struct inart_ps_tree_cfg *pc = NULL;

			if (p->jobs[j].split[i] <= 0)
				continue;
			for (int r = 0; r < job->n_workers; r++)
				walk_up(t, d, in, js, p, j, r, i);
			for (int k = 0; k < in->n_ps; k++)
				for (int q = 0; q < in->ps[k].n_trees; q++)
					if (in->ps[k].node == job->ps[i] &&
					    in->ps[k].trees[q].job == (uint32_t)j &&
					    in->ps[k].trees[q].tree == i)
						pc = &in->ps[k].trees[q];
			assert_non_null(pc);
			assert_int_equal(pc->fan_in, job->n_workers);
			memset(arrivals, 0, (size_t)t->n_nodes * sizeof(int));
			for (int c = 0; c < pc->n_children; c++) {
				int ps = job->ps[i];
				int first = t->arcs[t->arc_out[t->out_off[ps]]].to;

				walk_down(t, d, in, first, pc->children[c].label,
					  pc->children[c].ip, j, i, arrivals, 0);
			}
			for (int v = 0; v < t->n_nodes; v++) {
				int want = 0;

				for (int r = 0; r < job->n_workers; r++)
					want |= job->workers[r] == v;
				assert_int_equal(arrivals[v], want);
			}
		}
	}
	/* routes: from every switch to every address, along shortest paths */
	{
		struct inart_paths *ph = inart_paths_create(t);

		for (int k = 0; k < in->n_switches; k++)
			for (int dst = 0; dst < t->n_nodes; dst++) {
				int at = in->sw[k].node, hops = 0;
				const int *dist = inart_paths_dist_to(ph, dst);
				int want = dist[at];

				if (at == dst)
					continue;
				while (at != dst) {
					int port = route_port(sw_of(in, at), d->ip[dst]);

					assert_true(port >= 0);
					at = peer(t, d, at, port);
					hops++;
					assert_true(hops <= want);
				}
				assert_int_equal(hops, want);
			}
		inart_paths_destroy(ph);
	}
	free(arrivals);
}

/* Fat-tree k=4, three jobs, baseline plans: every chain checked. */
static void test_fattree_property(void **state)
{
	struct inart_gen_opt go;
	struct inart_err err;
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_deploy *d;
	struct inart_paths *ph;
	int (*algs[])(const struct inart_topo *, const struct inart_jobs *, struct inart_paths *,
		      struct inart_plan **, struct inart_err *) = {
	    inart_baseline_ps, inart_baseline_byteps, inart_baseline_switchml, inart_baseline_atp,
	    inart_baseline_inart_sp};

	(void)state;
	inart_gen_opt_default(&go);
	go.trees = 3;
	t = inart_gen_fattree(4, &go, &err);
	assert_non_null(t);
	js = inart_jobs_create();
	tu_job(js, t, "a", "h0 h1 h2 h5 h9 h12", "h3 h14", 1e8);
	tu_job(js, t, "b", "h4 h6 h7 h8 h10 h11", "h13 h15 h0", 5e7);
	tu_job(js, t, "c", "h1 h3 h5", "h9", 1e7);
	assert_int_equal(inart_jobs_validate(js, t, &err), 0);
	d = inart_deploy_auto(t);
	ph = inart_paths_create(t);
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		struct inart_plan *p = NULL;
		struct inart_install *in;

		if (algs[a](t, js, ph, &p, &err) < 0)
			fail_msg("baseline %zu: %s", a, err.msg);
		in = build(t, js, p, d, NULL);
		check_install(t, js, p, d, in);
		/* hosts that are workers of two jobs get two worker installs */
		assert_int_equal(in->n_workers, 15);
		inart_install_destroy(in);
		inart_plan_destroy(p);
	}
	inart_paths_destroy(ph);
	inart_deploy_destroy(d);
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

/* Where a packet from host `from` to `to`'s address goes, switch by switch
 * along the IPv4 routes: the nodes visited (at most max). */
static int route_walk(const struct inart_topo *t, const struct inart_deploy *d,
		      const struct inart_install *in, int from, int to, int *out, int max)
{
	int n = 0, v = from;

	out[n++] = v;
	v = t->arcs[t->arc_out[t->out_off[v]]].to; /* the host's one link */
	while (n < max) {
		out[n++] = v;
		if (v == to || t->nodes[v].kind != INART_NODE_SWITCH)
			break;
		v = peer(t, d, v, route_port(sw_of(in, v), d->ip[to]));
	}
	return n;
}

/* A three-worker ring over two spines: each hop's DATA follows the hop and
 * the successor's ACKs go back along the hop reversed (not the shortest
 * path through the first spine, which the plan left to other traffic). */
static void test_ring_ack_routes(void **state)
{
	struct inart_topo *t =
	    tu_topo("h0-e0 h1-e1 h2-e2 h3-e0 e0-s0 e1-s0 e2-s0 e0-s1 e1-s1 e2-s1", "");
	struct inart_jobs *js = tu_jobs1(t, "h0 h1 h2", "h3", 1e6);
	struct inart_plan *p = inart_plan_create(js, "hand");
	struct inart_deploy *d = inart_deploy_auto(t);
	const char *hops[3] = {"h0 e0 s1 e1 h1", "h1 e1 s0 e2 h2", "h2 e2 s1 e0 h0"};
	struct inart_install *in;

	(void)state;
	for (int i = 0; i < 3; i++) {
		int q[5], n = 0, used;
		char name[16];

		for (const char *s = hops[i]; sscanf(s, " %15s%n", name, &used) == 1; s += used)
			q[n++] = tu_find(t, name);
		assert_int_equal(inart_plan_add_ring_hop(p, 0, q, n), 0);
	}
	in = build(t, js, p, d, NULL);
	assert_int_equal(in->n_ring_hops, 3);
	assert_int_equal(in->n_ring_hops_off_plan, 0);
	assert_int_equal(in->n_ring_acks_off_plan, 0);
	for (int i = 0; i < 3; i++) {
		int q[5], n = 0, used, got[8], ng;
		char name[16];

		for (const char *s = hops[i]; sscanf(s, " %15s%n", name, &used) == 1; s += used)
			q[n++] = tu_find(t, name);
		ng = route_walk(t, d, in, q[0], q[n - 1], got, 8); /* DATA */
		assert_int_equal(ng, n);
		for (int k = 0; k < n; k++)
			assert_int_equal(got[k], q[k]);
		ng = route_walk(t, d, in, q[n - 1], q[0], got, 8); /* its ACKs */
		assert_int_equal(ng, n);
		for (int k = 0; k < n; k++)
			if (got[k] != q[n - 1 - k])
				fail_msg("hop %s: ACK path node %d is '%s'", hops[i], k,
					 t->nodes[got[k]].id);
	}
	inart_install_destroy(in);
	inart_deploy_destroy(d);
	tu_free(t, js, NULL, p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tiny),
	    cmocka_unit_test(test_multilevel),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_fattree_property),
	    cmocka_unit_test(test_ring_ack_routes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
