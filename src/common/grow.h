/*
 * grow: room in a malloc'ed array -- for one more element at the end, the
 * capacity doubling (the growing arrays of the model: topology nodes and
 * links, jobs, plan routes; the install builder's keys and labels), or for
 * a given number of elements, the capacity exactly that (the per-call
 * vectors of the ring and worker cores).  Header-only; libc only.
 */
#ifndef INART_GROW_H
#define INART_GROW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make *arr (of `size`-byte elements, capacity *cap) hold element n: no
 * change while n < *cap, else the capacity doubles (`first` when it was
 * 0).  0, or -ENOMEM with the array and capacity unchanged. */
static inline int inart_grow(void **arr, int *cap, int n, size_t size, int first)
{
	void *na;
	int nc;

	if (n < *cap)
		return 0;
	nc = *cap ? 2 * *cap : first;
	na = realloc(*arr, size * (size_t)nc);
	if (na == NULL)
		return -ENOMEM;
	*arr = na;
	*cap = nc;
	return 0;
}

/* Make *arr (of `size`-byte elements, capacity *cap) hold need elements:
 * no change while need <= *cap, else the capacity becomes need (the
 * contents kept).  0, or -ENOMEM with the array and capacity unchanged. */
static inline int inart_grow_to(void **arr, size_t *cap, size_t need, size_t size)
{
	void *na;

	if (need <= *cap)
		return 0;
	if (size != 0 && need > SIZE_MAX / size)
		return -ENOMEM;
	na = realloc(*arr, need * size);
	if (na == NULL)
		return -ENOMEM;
	*arr = na;
	*cap = need;
	return 0;
}

#endif
