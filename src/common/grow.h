/*
 * grow: room for one more element at the end of a malloc'ed array whose
 * capacity doubles -- the growing arrays of the model (topology nodes and
 * links, jobs, plan routes).  Header-only; libc only.
 */
#ifndef INART_GROW_H
#define INART_GROW_H

#include <errno.h>
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

#endif
