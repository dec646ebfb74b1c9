/*
 * strpool: strings copied into blocks that never move and are freed all at
 * once -- for many short strings that live as long as their owner (the node
 * ids of a topology): one malloc per block of ids instead of one per id,
 * and one call to free them.
 *
 * Invariants: a copy stays where it is (and valid) until inart_strpool_free;
 * blocks are INART_STRPOOL_BLOCK bytes, or one string's size when it is
 * larger.  A zeroed struct is an empty pool.  Header-only; libc only.
 */
#ifndef INART_STRPOOL_H
#define INART_STRPOOL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define INART_STRPOOL_BLOCK 4096

struct inart_strpool_block {
	struct inart_strpool_block *next; /* the block filled before */
	char bytes[];
};

struct inart_strpool {
	struct inart_strpool_block *head; /* the block being filled, or NULL */
	size_t used, size;		  /* bytes of head used / held */
};

/* A copy of s in the pool, or NULL + ENOMEM (the pool unchanged). */
static inline char *inart_strpool_dup(struct inart_strpool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy;

	if (p->head == NULL || n > p->size - p->used) {
		size_t size = n > INART_STRPOOL_BLOCK ? n : INART_STRPOOL_BLOCK;
		struct inart_strpool_block *b = malloc(sizeof(*b) + size);

		if (b == NULL) {
			errno = ENOMEM;
			return NULL;
		}
		b->next = p->head;
		p->head = b;
		p->used = 0;
		p->size = size;
	}
	copy = p->head->bytes + p->used;
	memcpy(copy, s, n);
	p->used += n;
	return copy;
}

/* Free every copy; the pool is empty again. */
static inline void inart_strpool_free(struct inart_strpool *p)
{
	while (p->head != NULL) {
		struct inart_strpool_block *b = p->head;

		p->head = b->next;
		free(b);
	}
	p->used = p->size = 0;
}

#endif
