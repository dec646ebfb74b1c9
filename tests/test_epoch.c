/*
 * test_epoch: two plans' installations side by side (bridge/epoch.h):
 * epoch E's half of labels, jobs and slots, the union of two epochs (every
 * switch with both label sets, every PS with both tree sets, no label or
 * (job, tree) shared, a switch core accepting the union), the plan file's
 * epoch object.  The simulator run across an epoch switch is in
 * test_dp_e2e.c (test_epoch_switch).
 */
#include <errno.h>

#include "bridge/epoch.h"
#include "dp/switch.h"
#include "testutil.h"

/* h0, h1 under e0 (INA), e0 - e1 - h2 (the PS): one tree at e0.  The
 * topology, jobs and deployment are made on the first call. */
static struct inart_install *tiny_install(struct inart_topo **t, struct inart_jobs **js,
					  struct inart_deploy **d)
{
	struct inart_plan *p;
	struct inart_install *in = NULL;
	struct inart_err err = {{0}};

	if (*t == NULL) {
		*t = tu_topo("h0-e0 h1-e0 e0-e1 e1-h2", "e0:100:2");
		*js = tu_jobs1(*t, "h0 h1", "h2", 1e6);
		*d = inart_deploy_auto(*t);
		assert_non_null(*d);
	}
	p = inart_plan_create(*js, "hand");
	p->jobs[0].split[0] = 1;
	tu_tiny_routes(p, *t);
	if (inart_install_build(*t, *js, p, *d, NULL, &in, &err) < 0)
		fail_msg("install: %s", err.msg);
	inart_plan_destroy(p);
	return in;
}

static void test_apply_union(void **state)
{
	struct inart_topo *t = NULL;
	struct inart_jobs *js = NULL;
	struct inart_deploy *d = NULL;
	struct inart_install *a = tiny_install(&t, &js, &d), *b, *u = NULL;
	struct inart_err err = {{0}};
	int pool, s0;

	(void)state;
	b = tiny_install(&t, &js, &d); /* the same plan again */
	s0 = a->sw[0].n_labels;
	pool = a->sw[0].cfg.pool_slots;
	assert_true(pool > 0);
	assert_int_equal(inart_epoch_apply(a, 0, &err), 0);
	assert_int_equal(inart_epoch_apply(b, 1, &err), 0);
	/* both pools have both halves; epoch 1's slots, labels and jobs are in
	 * the upper half */
	assert_int_equal(a->sw[0].cfg.pool_slots, 2 * pool);
	assert_int_equal(b->sw[0].cfg.pool_slots, 2 * pool);
	for (int i = 0; i < b->sw[0].n_labels; i++) {
		const struct inart_label_entry *ea = &a->sw[0].labels[i], *eb = &b->sw[0].labels[i];

		assert_int_equal(eb->label, ea->label + INART_EPOCH_LABEL_BIT);
		assert_int_equal(eb->job, ea->job + INART_EPOCH_JOB_BIT);
		if (ea->aggregate)
			assert_int_equal(eb->slot_base, ea->slot_base + pool);
	}
	assert_int_equal(b->workers[0].cfg.job, INART_EPOCH_JOB_BIT);
	assert_int_equal(b->workers[0].job, 0); /* the job's index stays */
	assert_int_equal(b->ps[0].trees[0].job, INART_EPOCH_JOB_BIT);
	assert_int_equal(inart_epoch_union(a, b, &u, &err), 0);
	assert_int_equal(u->sw[0].n_labels, 2 * s0);
	assert_int_equal(u->ps[0].n_trees, 2);
	assert_ptr_equal(u->workers, b->workers);
	/* a switch takes the union (no label, slot or tree collides) */
	{
		struct inart_switch *sw = inart_switch_create(&u->sw[0].cfg);
		struct inart_sw_update up = {.replace = 1,
					     .n_labels = u->sw[0].n_labels,
					     .labels = u->sw[0].labels,
					     .n_routes = u->sw[0].n_routes,
					     .routes = u->sw[0].routes,
					     .n_ingress = u->sw[0].n_ingress,
					     .ingress = u->sw[0].ingress};
		struct inart_err why = {{0}};

		assert_non_null(sw);
		if (inart_switch_apply(sw, &up, &why) < 0)
			fail_msg("union refused: %s", why.msg);
		inart_switch_destroy(sw);
	}
	inart_epoch_union_destroy(u);
	inart_epoch_union_destroy(NULL);
	/* the same epoch twice: the switch refuses the duplicate labels */
	{
		struct inart_install *c;
		struct inart_switch *sw;
		struct inart_sw_update up = {.replace = 1};
		struct inart_err why = {{0}};

		c = tiny_install(&t, &js, &d);
		assert_int_equal(inart_epoch_apply(c, 0, &err), 0);
		assert_int_equal(inart_epoch_union(a, c, &u, &err), 0);
		sw = inart_switch_create(&u->sw[0].cfg);
		up.n_labels = u->sw[0].n_labels;
		up.labels = u->sw[0].labels;
		assert_true(inart_switch_apply(sw, &up, &why) < 0);
		inart_switch_destroy(sw);
		inart_epoch_union_destroy(u);
		inart_install_destroy(c);
	}
	inart_install_destroy(a);
	inart_install_destroy(b);
	inart_deploy_destroy(d);
	tu_free(t, js, NULL, NULL);
}

static void test_parse(void **state)
{
	struct inart_err err = {{0}};
	int64_t n;
	uint32_t from;
	const char *ok = "{\"jobs\": [], \"epoch\": {\"n\": 7, \"from_step\": {\"j0\": 12}}}";

	(void)state;
	assert_int_equal(inart_epoch_parse(ok, strlen(ok), "p", "j0", &n, &from, &err), 0);
	assert_int_equal(n, 7);
	assert_int_equal(from, 12);
	assert_int_equal(inart_epoch_parse(ok, strlen(ok), "p", "j1", &n, &from, &err), 0);
	assert_int_equal(from, 0);
	assert_int_equal(inart_epoch_parse("{\"jobs\": []}", 12, "p", "j0", &n, &from, &err), 0);
	assert_int_equal(n, -1);
	assert_int_equal(inart_epoch_parse("{\"epoch\": 3}", 12, "p", "j0", &n, &from, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "p: 'epoch'"));
	assert_int_equal(
	    inart_epoch_parse("{\"epoch\": {\"n\": -1}}", 20, "p", "j0", &n, &from, &err), -EINVAL);
	assert_int_equal(
	    inart_epoch_parse("{\"epoch\": {\"n\": 1, \"from_step\": {\"j0\": \"x\"}}}", 43, "p",
			      "j0", &n, &from, &err),
	    -EINVAL);
	assert_int_equal(inart_epoch_parse("{", 1, "p", "j0", &n, &from, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_apply_union),
	    cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
