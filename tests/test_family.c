/*
 * test_family: InArt on the scarce family (scarce-small/N: small
 * oversubscribed leaf-spines, INA at the leaves only with 1-2 trees, 2-3 jobs
 * whose PSs sit behind thin rack uplinks), with the baseline guard off and a
 * work budget instead of a time budget -- the large-neighbourhood search
 * solves at most LNS_STEPS neighbourhoods, each bounded by CBC's node limit
 * -- so the plan does not depend on the machine's speed (the benchmark,
 * bench/plan_bench.sh, measures the default time budget):
 *  - without ring jobs (--no-ring): within 1.05x of CBC's proven optimum on
 *    every instance, never below it (it is an optimum over the same
 *    candidates) and never worse than any PS baseline (ps, byteps,
 *    switchml, atp, inart-sp, grid, inart-even);
 *  - with ring jobs (the default: the same search, then ringmix.h on its
 *    plan): never worse than that plan nor than any baseline, the ring
 *    included, and never below its bound over plans with ring jobs.
 * The optima come from tests/data/scarce_family_optima.tsv, written by
 * scripts/family_optima.sh (CBC needs from a tenth of a second to minutes per
 * instance); the quickly proven ones are proven again here, live, so a file
 * gone stale with the candidates fails the test.  At least 12 instances.
 */
#include "testplan.h"

#include <errno.h>

#include "cp/planner/ringmix.h"
#include "cp/model/scenario.h"

#define MAX_INST 64
#define REPROVE_S 2.0 /* instances CBC proved in this much are proven again */
#define LNS_STEPS 8   /* neighbourhoods the LNS may solve */

struct inst {
	int index;
	double opt_s, cbc_s;
};

static int load_optima(struct inst *v)
{
	const char *dir = getenv("INART_TEST_DATA");
	char path[512], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/scarce_family_optima.tsv", dir ? dir : "tests/data");
	f = fopen(path, "r");
	if (f == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	while (n < MAX_INST && fgets(line, sizeof(line), f) != NULL)
		if (line[0] != '#' &&
		    sscanf(line, "%d %lf %lf", &v[n].index, &v[n].opt_s, &v[n].cbc_s) == 3)
			n++;
	fclose(f);
	return n;
}

static double time_of(const char *algo, const struct inart_topo *t, const struct inart_jobs *js,
		      const struct inart_planner_opt *o)
{
	struct inart_plan *p = tu_plan(algo, t, js, o);
	double v = p->comm_time_s;

	inart_plan_destroy(p);
	return v;
}

/* InArt (the search, guard off) with the work budget, without ring jobs
 * (returned), then with them (*mix; *ring_jobs, *ring_bound). */
static double search_time(const struct inart_topo *t, const struct inart_jobs *js, double *mix,
			  int *ring_jobs, double *ring_bound)
{
	struct inart_planner_opt o = tu_opt(32, 120, 1); /* the time: a safety net */
	struct inart_plan *p = NULL;
	struct tu_search r;
	enum inart_bound_source src;
	double v;

	o.no_ring = 1;
	tu_search_init(&r, t, js, &o);
	r.s.lns.steps = LNS_STEPS;
	if (inart_search_run(&r.s, &p) < 0)
		fail_msg("search: %s", r.err.msg);
	assert_int_equal(inart_evaluate(t, js, p, NULL), 0);
	assert_false(inart_plan_has_ring(p));
	v = p->comm_time_s;
	/* what the search does next without --no-ring */
	r.s.best = p;
	if (inart_ringmix_run(&r.s, ring_bound, &src) < 0)
		fail_msg("ringmix: %s", r.err.msg);
	assert_int_equal(inart_evaluate(t, js, r.s.best, NULL), 0);
	*mix = r.s.best->comm_time_s;
	*ring_jobs = inart_plan_has_ring(r.s.best);
	tu_search_free(&r);
	return v;
}

static void one(const struct inst *in)
{
	static const char *const covered[] = {"ps",	  "byteps", "switchml",	 "atp",
					      "inart-sp", "grid",   "inart-even"};
	struct inart_planner_opt o = tu_opt(32, 4, 1);
	struct inart_topo *t;
	struct inart_jobs *js;
	struct inart_err err;
	char name[32];
	double inart, mix, ring_bound;
	int ring_jobs;

	snprintf(name, sizeof(name), "scarce-small/%d", in->index);
	if (inart_scenario_build(name, 1, &t, &js, &err) < 0)
		fail_msg("%s: %s", name, err.msg);
	if (in->cbc_s <= REPROVE_S) {
		struct inart_plan *m = tu_plan("milp", t, js, &o);

		if (m->milp_status != INART_MILP_OPTIMAL ||
		    fabs(m->comm_time_s - in->opt_s) > 1e-6 * in->opt_s)
			fail_msg("%s: milp now %.9g (%s), the file says %.9g: rerun "
				 "scripts/family_optima.sh",
				 name, m->comm_time_s, inart_milp_status_name(m->milp_status),
				 in->opt_s);
		inart_plan_destroy(m);
	}
	inart = search_time(t, js, &mix, &ring_jobs, &ring_bound);
	print_message("%-16s optimum %9.3f ms  inart %9.3f ms  ratio %.4f  with rings %9.3f ms%s\n",
		      name, in->opt_s * 1e3, inart * 1e3, inart / in->opt_s, mix * 1e3,
		      ring_jobs ? " (ring jobs)" : "");
	if (!(mix <= inart * (1 + 1e-9)))
		fail_msg("%s: with ring jobs %.9g, worse than without %.9g", name, mix, inart);
	if (ring_jobs && !(ring_bound <= mix * (1 + 1e-9)))
		fail_msg("%s: ring bound %.9g above the plan with ring jobs %.9g", name, ring_bound,
			 mix);
	if (!(mix <= time_of("ring", t, js, &o) * (1 + 1e-9)))
		fail_msg("%s: inart with ring jobs %.9g worse than the ring baseline %.9g", name,
			 mix, time_of("ring", t, js, &o));
	if (!(inart >= in->opt_s * (1 - 1e-6)))
		fail_msg("%s: inart %.9g below the proven optimum %.9g", name, inart, in->opt_s);
	if (!(inart <= in->opt_s * 1.05))
		fail_msg("%s: inart %.9g above 1.05x the optimum %.9g", name, inart, in->opt_s);
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++) {
		double b = time_of(covered[i], t, js, &o);

		if (!(inart <= b * (1 + 1e-9)) || !(mix <= b * (1 + 1e-9)))
			fail_msg("%s: inart %.9g (guard off) worse than %s %.9g", name, inart,
				 covered[i], b);
	}
	inart_jobs_destroy(js);
	inart_topo_destroy(t);
}

static void test_family(void **state)
{
	struct inst v[MAX_INST];
	int n = load_optima(v);

	(void)state;
	if (n < 12)
		fail_msg("%d instances with a proven optimum, the family needs at least 12", n);
	for (int i = 0; i < n; i++)
		one(&v[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
