/*
 * rounding: from the phase-2 LP values to integral routes (see rounding.h
 * and docs/formulation.md, "Rounding").
 *
 * Trials: trial 0 apportions each group's members to the choices by largest
 * remainder of m * x (for a single worker: the largest x) and takes the
 * largest z of every cand tree; trial k > 0 samples with the seeded generator
 * (systematic sampling inside a group: member i takes the choice where the
 * cumulative x passes (i + U) / m for one uniform U, so every member takes
 * choice c with probability x[c]; trees: z / u_t).  Each trial is repaired to
 * the tree budgets, realized and judged by the shared evaluator.
 *
 * Local search (localsearch.h) then starts from each of the best trials,
 * the work shared among them; every result is checked by the shared
 * evaluator and the best plan is kept, so it is never worse than the best
 * trial.
 *
 * Ownership: everything here is local to one call; the plan passed in gets
 * the kept routes.
 */
#include "cp/planner/rounding.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/rng.h"
#include "cp/planner/localsearch.h"

void inart_round_opt_default(struct inart_round_opt *o)
{
	o->trials = 32;
	o->seed = 1;
	o->local_passes = 2;
	o->local_time_s = 0;
	o->local_starts = 4;
	o->budget = NULL;
}

static int flow_active(const struct inart_cand *c, const struct inart_plan *plan, int f)
{
	return plan->jobs[c->flows[f].job].split[c->flows[f].ps_idx] > 0;
}

/* ---------------------------------------------------------------------------
 * Sampling
 */

/* The sum of x (its non-negative part) over flow f's choices; where it is
 * not positive, every member of f takes the flow's first choice. */
static double flow_mass(const struct inart_cand *c, const double *x, int f, struct inart_assign *a)
{
	const struct inart_cand_flow *cf = &c->flows[f];
	double sum = 0;

	for (int i = 0; i < cf->n_choices; i++)
		sum += fmax(x[cf->first_choice + i], 0);
	if (!(sum > 0))
		for (int i = 0; i < c->groups[cf->group].n_members; i++)
			a->slot_choice[cf->first_slot + i] = cf->first_choice;
	return sum;
}

/* Members of flow f by largest remainder of m * x (deterministic). */
static void apportion(const struct inart_cand *c, const double *x, int f, struct inart_assign *a)
{
	const struct inart_cand_flow *cf = &c->flows[f];
	int m = c->groups[cf->group].n_members, given = 0, k = cf->first_slot;
	double sum = flow_mass(c, x, f, a);

	if (!(sum > 0))
		return;
	for (int i = 0; i < cf->n_choices; i++) {
		int n = (int)floor(fmax(x[cf->first_choice + i], 0) / sum * m + 1e-9);

		for (int r = 0; r < n && given < m; r++, given++)
			a->slot_choice[k++] = cf->first_choice + i;
	}
	while (given < m) { /* the largest remainders, one member each */
		int best = cf->first_choice;
		double best_rem = -1;

		for (int i = 0; i < cf->n_choices; i++) {
			double v = fmax(x[cf->first_choice + i], 0) / sum * m;
			int already = 0;

			for (int s = cf->first_slot; s < k; s++)
				already += a->slot_choice[s] == cf->first_choice + i;
			if (v - already > best_rem) {
				best_rem = v - already;
				best = cf->first_choice + i;
			}
		}
		a->slot_choice[k++] = best;
		given++;
	}
}

/* Systematic sampling of the members of flow f. */
static void sample_flow(const struct inart_cand *c, const double *x, int f, struct inart_rng *r,
			struct inart_assign *a)
{
	const struct inart_cand_flow *cf = &c->flows[f];
	int m = c->groups[cf->group].n_members, i = 0;
	double u = inart_rng_unit(r), sum = flow_mass(c, x, f, a), cum;

	if (!(sum > 0))
		return;
	cum = fmax(x[cf->first_choice], 0) / sum;
	for (int k = 0; k < m; k++) {
		double pos = (k + u) / m;

		while (pos >= cum && i + 1 < cf->n_choices) {
			i++;
			cum += fmax(x[cf->first_choice + i], 0) / sum;
		}
		a->slot_choice[cf->first_slot + k] = cf->first_choice + i;
	}
}

/* One choice of cand tree t: the largest z (deterministic) or z / u_t. */
static void pick_tree(const struct inart_cand *c, const double *x, int t, struct inart_rng *r,
		      struct inart_assign *a)
{
	const struct inart_cand_tree *ct = &c->trees[t];
	double u = 0, best = 0, draw, cum = 0;
	int pick = ct->first_choice;

	for (int i = 0; i < ct->n_choices; i++) {
		double z = fmax(x[ct->first_choice + i], 0);

		u += z;
		if (z > best) {
			best = z;
			pick = ct->first_choice + i;
		}
	}
	if (r != NULL && u > 1e-12) {
		draw = inart_rng_unit(r) * u;
		for (int i = 0; i < ct->n_choices; i++) {
			cum += fmax(x[ct->first_choice + i], 0);
			if (draw < cum) {
				pick = ct->first_choice + i;
				break;
			}
		}
	}
	a->tree_choice[t] = u > 1e-12 ? pick : ct->first_choice;
}

static void draw_trial(const struct inart_cand *c, const double *x, int trial, struct inart_rng *r,
		       struct inart_assign *a)
{
	for (int f = 0; f < c->n_flows; f++) {
		if (trial == 0)
			apportion(c, x, f, a);
		else
			sample_flow(c, x, f, r, a);
	}
	for (int t = 0; t < c->n_trees; t++)
		pick_tree(c, x, t, trial == 0 ? NULL : r, a);
}

/* ---------------------------------------------------------------------------
 * Budget repair
 */

/*
 * For a child on choice `cur` of an owner with choices [first, first + n):
 * the choice along the same path whose aggregation point is the next one
 * after cur's that is the PS or a used tree (other than `drop`).
 */
static int next_choice(const struct inart_cand *c, int first, int n, int cur, const char *used,
		       int drop)
{
	int best = -1, best_len = 0;

	for (int ci = first; ci < first + n; ci++) {
		const struct inart_choice *ch = &c->choices[ci];
		int lq = inart_pathset_len(&c->paths, ch->path);

		if (ch->tree == drop || (ch->tree >= 0 && !used[ch->tree]))
			continue;
		if (!inart_cand_prefix(c, cur, ci))
			continue;
		if (best < 0 || lq < best_len) {
			best = ci;
			best_len = lq;
		}
	}
	return best >= 0 ? best : first; /* first: shortest path to the PS */
}

int inart_rounding_repair(const struct inart_topo *t, const struct inart_cand *c,
			  const struct inart_plan *plan, struct inart_assign *a)
{
	char *used = malloc((size_t)c->n_trees + 1);
	int *count = calloc((size_t)t->n_nodes + 1, sizeof(int));
	int *children = calloc((size_t)c->n_trees + 1, sizeof(int));
	int dropped = 0;

	if (used == NULL || count == NULL || children == NULL) {
		dropped = -ENOMEM;
		goto out;
	}
	for (;;) {
		int over = -1, drop = -1;

		inart_assign_used_trees(c, a, plan, used);
		memset(count, 0, sizeof(int) * (size_t)t->n_nodes);
		for (int k = 0; k < c->n_trees; k++)
			if (used[k])
				count[c->trees[k].sw]++;
		for (int v = 0; v < t->n_nodes && over < 0; v++)
			if (count[v] > t->nodes[v].trees)
				over = v;
		if (over < 0)
			break;
		/* Children of the used trees at `over`. */
		memset(children, 0, sizeof(int) * (size_t)c->n_trees);
		for (int f = 0; f < c->n_flows; f++) {
			if (!flow_active(c, plan, f))
				continue;
			for (int k = 0; k < c->groups[c->flows[f].group].n_members; k++) {
				int tr =
				    c->choices[a->slot_choice[c->flows[f].first_slot + k]].tree;

				if (tr >= 0)
					children[tr]++;
			}
		}
		for (int k = 0; k < c->n_trees; k++)
			if (used[k] && c->choices[a->tree_choice[k]].tree >= 0)
				children[c->choices[a->tree_choice[k]].tree]++;
		for (int k = 0; k < c->n_trees; k++)
			if (used[k] && c->trees[k].sw == over &&
			    (drop < 0 || children[k] < children[drop]))
				drop = k;
		/* Move its children one aggregation point further. */
		for (int f = 0; f < c->n_flows; f++) {
			const struct inart_cand_flow *cf = &c->flows[f];

			if (!flow_active(c, plan, f))
				continue;
			for (int k = 0; k < c->groups[cf->group].n_members; k++) {
				int *sc = &a->slot_choice[cf->first_slot + k];

				if (c->choices[*sc].tree == drop)
					*sc = next_choice(c, cf->first_choice, cf->n_choices, *sc,
							  used, drop);
			}
		}
		for (int k = 0; k < c->n_trees; k++) {
			const struct inart_cand_tree *ct = &c->trees[k];

			if (used[k] && c->choices[a->tree_choice[k]].tree == drop)
				a->tree_choice[k] = next_choice(c, ct->first_choice, ct->n_choices,
								a->tree_choice[k], used, drop);
		}
		dropped++;
	}
out:
	free(used);
	free(count);
	free(children);
	return dropped;
}

/* ---------------------------------------------------------------------------
 * Driver
 */

#define LS_TRIES 32 /* moves tried per pass, slot and tree (shared by the starts) */
#define LS_KICKS 64 /* random kicks per start at most */

static int assign_copy(struct inart_assign *dst, const struct inart_assign *src,
		       const struct inart_cand *c)
{
	memcpy(dst->slot_choice, src->slot_choice, sizeof(int) * (size_t)c->n_slots);
	memcpy(dst->tree_choice, src->tree_choice, sizeof(int) * (size_t)c->n_trees);
	return 0;
}

static int judge(const struct inart_cand *c, const struct inart_assign *a, struct inart_plan *work,
		 struct inart_evaluator *ev, struct inart_eval *e, struct inart_err *err)
{
	int rc = inart_assign_realize(c, a, work);

	if (rc < 0)
		return inart_err_set(err, rc, "rounding: out of memory");
	rc = inart_evaluator_run(ev, work, e, err);
	if (rc < 0)
		inart_err_prefix(err, "rounding: realized plan rejected");
	return rc;
}

/* The `k` best trials so far (sorted by time), for the local search. */
struct top {
	int k, n;
	double *time;
	struct inart_assign *a;
};

static int top_init(struct top *tp, int k, const struct inart_cand *c)
{
	tp->k = k;
	tp->n = 0;
	tp->time = malloc(sizeof(double) * (size_t)k);
	tp->a = calloc((size_t)k, sizeof(*tp->a));
	if (tp->time == NULL || tp->a == NULL)
		return -ENOMEM;
	for (int i = 0; i < k; i++)
		if (inart_assign_init(&tp->a[i], c) < 0)
			return -ENOMEM;
	return 0;
}

static void top_free(struct top *tp)
{
	for (int i = 0; i < tp->k && tp->a; i++)
		inart_assign_free(&tp->a[i]);
	free(tp->a);
	free(tp->time);
}

static void top_offer(struct top *tp, double time, const struct inart_assign *a,
		      const struct inart_cand *c)
{
	struct inart_assign spare;
	int i;

	if (tp->n == tp->k && !(time < tp->time[tp->k - 1]))
		return;
	i = tp->n < tp->k ? tp->n++ : tp->k - 1;
	spare = tp->a[i];
	for (; i > 0 && tp->time[i - 1] > time; i--) {
		tp->time[i] = tp->time[i - 1];
		tp->a[i] = tp->a[i - 1];
	}
	tp->time[i] = time;
	tp->a[i] = spare;
	assign_copy(&tp->a[i], a, c);
}

/*
 * Local search from each kept trial (iterated: after the descent stops, a
 * random kick and a new descent, kept when the time drops, else undone), the
 * work shared among the starts; `best` gets the best result.  Returns the
 * winner's accepted moves or -errno.
 */
static int search_starts(const struct inart_topo *t, const struct inart_jobs *js,
			 const struct inart_cand *c, struct inart_plan *plan,
			 const struct inart_round_opt *opt, struct top *tp, struct inart_plan *work,
			 struct inart_evaluator *ev, struct inart_assign *best, double *best_t,
			 struct inart_err *err)
{
	double t0 = inart_now_s();
	long per = ((long)opt->local_passes * LS_TRIES * (c->n_slots + c->n_trees) + 64) / tp->n;
	int won = 0, rc = 0;

	for (int i = 0; i < tp->n && rc == 0; i++) {
		struct inart_ls_opt lo = {per, 0, opt->seed * 1000003u + (uint64_t)i, LS_KICKS, NULL};
		struct inart_budget share;
		struct inart_eval e;
		double tb;
		int moves;

		if (opt->budget != NULL) {
			if (i > 0 && inart_budget_expired(opt->budget))
				break;
			share = inart_budget_child(opt->budget, 1.0 / (tp->n - i), INFINITY);
			lo.budget = &share;
		}

		if (opt->local_time_s > 0) {
			double left = t0 + opt->local_time_s - inart_now_s();

			if (left <= 0)
				break;
			lo.deadline = inart_now_s() + left / (tp->n - i);
		}
		moves = inart_localsearch_run(t, js, c, plan, &tp->a[i], &lo, &tb);
		if (moves < 0)
			return inart_err_set(err, moves, "rounding: out of memory");
		rc = judge(c, &tp->a[i], work, ev, &e, err);
		if (rc == 0 && fabs(e.comm_time_s - tb) > 1e-6 * e.comm_time_s)
			rc = inart_err_set(err, -EINVAL,
					   "rounding: local-search load model says %.9g s, the "
					   "evaluator %.9g s (a bug)",
					   tb, e.comm_time_s);
		if (rc == 0 && e.comm_time_s < *best_t) {
			*best_t = e.comm_time_s;
			assign_copy(best, &tp->a[i], c);
			won = moves;
		}
	}
	return rc < 0 ? rc : won;
}

int inart_rounding_run(const struct inart_topo *t, const struct inart_jobs *js,
		       const struct inart_cand *c, const double *x, struct inart_plan *plan,
		       struct inart_evaluator *ev, const struct inart_round_opt *opt,
		       struct inart_round_result *res, struct inart_err *err)
{
	struct inart_round_opt dflt;
	struct inart_assign cur = {0}, best = {0};
	struct top top = {0};
	struct inart_plan *work = NULL;
	struct inart_rng rng;
	struct inart_eval e;
	double best_t = INFINITY, sum = 0;
	int rc, trials;

	memset(res, 0, sizeof(*res));
	if (opt == NULL) {
		inart_round_opt_default(&dflt);
		opt = &dflt;
	}
	if (plan->n_jobs != js->n_jobs)
		return inart_err_set(err, -EINVAL, "rounding: plan has %d jobs, expected %d",
				     plan->n_jobs, js->n_jobs);
	trials = opt->trials > 0 ? opt->trials : 1;
	inart_rng_seed(&rng, opt->seed);
	work = inart_plan_clone(plan);
	rc = work ? inart_assign_init(&cur, c) : -ENOMEM;
	if (rc == 0)
		rc = inart_assign_init(&best, c);
	if (rc == 0)
		rc = top_init(&top, opt->local_starts > 0 ? opt->local_starts : 1, c);
	if (rc < 0) {
		rc = inart_err_set(err, -ENOMEM, "rounding: out of memory");
		goto out;
	}
	for (int trial = 0; trial < trials; trial++) {
		int dropped;

		if (trial > 0 && opt->budget != NULL && inart_budget_expired(opt->budget)) {
			trials = trial; /* the mean over the trials drawn */
			break;
		}

		draw_trial(c, x, trial, &rng, &cur);
		dropped = inart_rounding_repair(t, c, plan, &cur);
		if (dropped < 0) {
			rc = inart_err_set(err, dropped, "rounding: out of memory");
			goto out;
		}
		res->repaired += dropped > 0;
		rc = judge(c, &cur, work, ev, &e, err);
		if (rc < 0)
			goto out;
		sum += e.comm_time_s;
		if (e.comm_time_s < best_t) {
			best_t = e.comm_time_s;
			res->best_trial = trial;
			assign_copy(&best, &cur, c);
		}
		top_offer(&top, e.comm_time_s, &cur, c);
	}
	res->mean_s = sum / trials;
	res->rounded_s = best_t;
	if (opt->local_passes > 0) {
		rc = search_starts(t, js, c, plan, opt, &top, work, ev, &best, &best_t, err);
		if (rc < 0)
			goto out;
		res->local_moves = rc;
	}
	rc = judge(c, &best, plan, ev, &e, err);
	if (rc < 0)
		goto out;
	plan->comm_time_s = e.comm_time_s;
	plan->push_time_s = e.push_time_s;
	plan->pull_time_s = e.pull_time_s;
	res->best_s = e.comm_time_s;
out:
	top_free(&top);
	inart_assign_free(&cur);
	inart_assign_free(&best);
	inart_plan_destroy(work);
	return rc;
}
