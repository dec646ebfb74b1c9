/*
 * rank: (id, value) pairs in the "most loaded first" order -- the largest
 * value first, ties by the smaller id, so that the order is total and the
 * same on every platform (link times in `inart eval`; the resources of
 * cp/planner/localsearch.c sort the same way).  Header-only; libc only.
 */
#ifndef INART_RANK_H
#define INART_RANK_H

#include <stddef.h>
#include <stdlib.h>

struct inart_rank {
	int id; /* >= 0 */
	double value;
};

/* qsort comparator: value descending, then id ascending. */
static inline int inart_rank_cmp(const void *pa, const void *pb)
{
	const struct inart_rank *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return a->id - b->id;
}

static inline void inart_rank_sort(struct inart_rank *r, size_t n)
{
	qsort(r, n, sizeof(*r), inart_rank_cmp);
}

#endif
