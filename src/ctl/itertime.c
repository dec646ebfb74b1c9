/*
 * itertime: per-job iteration times from PS steps (itertime.h).  Per job a
 * ring of its last HIST step advances (time, step), the last time fed and
 * the last time its step was known.
 */
#include "ctl/itertime.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/err.h"

#define HIST 64

struct job_hist {
	double t[HIST];
	int64_t step[HIST];
	int n, head;   /* entries, next slot */
	double last_t; /* the last feed */
	double seen_t; /* the last feed with a step (>= 0) */
};

struct inart_itertime {
	int n_jobs;
	double window_s;
	uint64_t resets;
	struct job_hist j[]; /* n_jobs + 1, in the same allocation */
};

struct inart_itertime *inart_itertime_create(int n_jobs, double window_s)
{
	struct inart_itertime *it;

	if (n_jobs < 0 || !(window_s > 0) || !isfinite(window_s))
		return inart_null_errno(EINVAL);
	it = calloc(1, sizeof(*it) + ((size_t)n_jobs + 1) * sizeof(it->j[0]));
	if (it == NULL)
		return NULL;
	it->n_jobs = n_jobs;
	it->window_s = window_s;
	for (int i = 0; i < n_jobs; i++)
		it->j[i].last_t = -INFINITY;
	return it;
}

void inart_itertime_destroy(struct inart_itertime *it)
{
	if (it == NULL)
		return;
	free(it);
}

/* The k-th newest advance (k = 0: the newest). */
static int slot(const struct job_hist *h, int k)
{
	return (h->head + HIST - 1 - k) % HIST;
}

int inart_itertime_feed(struct inart_itertime *it, int j, double now_s, int64_t step)
{
	struct job_hist *h;

	if (it == NULL || j < 0 || j >= it->n_jobs || !isfinite(now_s))
		return -EINVAL;
	h = &it->j[j];
	if (now_s < h->last_t)
		return -EINVAL;
	h->last_t = now_s;
	if (step < 0)
		return 0; /* no answer: no news */
	h->seen_t = now_s;
	if (h->n > 0 && step < h->step[slot(h, 0)]) {
		h->n = 0; /* restarted */
		it->resets++;
	}
	if (h->n > 0 && step == h->step[slot(h, 0)])
		return 0;
	h->t[h->head] = now_s;
	h->step[h->head] = step;
	h->head = (h->head + 1) % HIST;
	if (h->n < HIST)
		h->n++;
	return 0;
}

double inart_itertime_get(const struct inart_itertime *it, int j)
{
	const struct job_hist *h;
	int nw, old;
	double per, still;

	if (it == NULL || j < 0 || j >= it->n_jobs)
		return NAN;
	h = &it->j[j];
	if (h->n < 2)
		return NAN;
	nw = slot(h, 0);
	old = slot(h, 1);
	for (int k = 2; k < h->n && h->t[nw] - h->t[slot(h, k)] <= it->window_s; k++)
		old = slot(h, k);
	per = (h->t[nw] - h->t[old]) / (double)(h->step[nw] - h->step[old]);
	still = h->seen_t - h->t[nw]; /* the newest step seen unchanged this long */
	return still > per ? still : per;
}

uint64_t inart_itertime_resets(const struct inart_itertime *it)
{
	return it == NULL ? 0 : it->resets;
}
