/*
 * sim_evq: the simulator's event queue (see sim_evq.h), a binary min-heap
 * in one array grown by doubling.
 *
 * Invariants: h[0..n) is a heap under (t, seq); seq is the insertion number,
 * so no two keys are equal and events of equal time leave in the order they
 * came.  Ownership: the queue owns its array; payloads are the caller's.
 */
#include "sim/sim_evq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void inart_sim_evq_init(struct inart_sim_evq *q)
{
	memset(q, 0, sizeof(*q));
}

void inart_sim_evq_free(struct inart_sim_evq *q)
{
	free(q->h);
	memset(q, 0, sizeof(*q));
}

static int ev_less(const struct inart_sim_ev *a, const struct inart_sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_swap(struct inart_sim_ev *h, size_t i, size_t j)
{
	struct inart_sim_ev tmp = h[i];

	h[i] = h[j];
	h[j] = tmp;
}

int inart_sim_evq_push(struct inart_sim_evq *q, uint64_t t, int type, int a, void *p)
{
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 1024;
		struct inart_sim_ev *h = realloc(q->h, cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		q->h = h;
		q->cap = cap;
	}
	i = q->n++;
	q->h[i] = (struct inart_sim_ev){t, q->next_seq++, type, a, p};
	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (!ev_less(&q->h[i], &q->h[up]))
			break;
		ev_swap(q->h, i, up);
		i = up;
	}
	return 0;
}

int inart_sim_evq_pop(struct inart_sim_evq *q, struct inart_sim_ev *ev)
{
	size_t i = 0;

	if (q->n == 0)
		return 0;
	*ev = q->h[0];
	q->h[0] = q->h[--q->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && ev_less(&q->h[l], &q->h[m]))
			m = l;
		if (r < q->n && ev_less(&q->h[r], &q->h[m]))
			m = r;
		if (m == i)
			break;
		ev_swap(q->h, i, m);
		i = m;
	}
	return 1;
}
