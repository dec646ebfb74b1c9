/*
 * slab: one zeroed allocation for a struct's fixed-size parallel arrays
 * (per-node, per-arc, per-slot ...), instead of one malloc and one free each.
 *
 * Use: a function that takes every array from the slab in a fixed order is
 * called twice -- once on a fresh slab to add up the sizes, then, after
 * inart_slab_alloc, again to hand out the pointers:
 *
 *	static void lay_out(struct x *x, struct inart_slab *s)
 *	{
 *		x->a = inart_slab_take(s, n, sizeof(*x->a));
 *		x->b = inart_slab_take(s, m, sizeof(*x->b));
 *	}
 *	struct inart_slab s = INART_SLAB_INIT;
 *	lay_out(x, &s);
 *	if (inart_slab_alloc(&s) < 0) ... ENOMEM ...
 *	lay_out(x, &s);
 *	x->block = s.base;     (freed with one free(), the arrays with it)
 *
 * inart_slab_block below is those five lines in one call, for a lay_out
 * that reads what it needs from the object:
 *
 *	x->block = inart_slab_block(x, lay_out);
 *	if (x->block == NULL) ... ENOMEM ...
 *
 * Or, where the object itself is fixed-size too, the object and its arrays
 * in one block (inart_slab_new below): destroy is one free().
 *
 * Layout: the arrays lie in the order taken, each aligned to max_align_t
 * (or to the alignment asked of inart_slab_take_aligned), all zero.  An
 * array must keep its size: one that grows later (realloc) gets its own
 * allocation.  Header-only; libc only.
 */
#ifndef INART_SLAB_H
#define INART_SLAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct inart_slab {
	char *base;   /* the block once allocated, else NULL (sizing pass) */
	size_t used;  /* bytes handed out (or counted) so far */
	size_t size;  /* the block's size once allocated */
	size_t align; /* the largest alignment asked */
	int overflow; /* a size did not fit in size_t */
};

#define INART_SLAB_INIT                                                                            \
	{                                                                                          \
		NULL, 0, 0, _Alignof(max_align_t), 0                                               \
	}

/* n elements of `size` bytes, aligned to `align` (a power of two): on the
 * sizing pass NULL (the size is counted), afterwards the array. */
static inline void *inart_slab_take_aligned(struct inart_slab *s, size_t n, size_t size,
					    size_t align)
{
	size_t at, bytes;

	if (align < _Alignof(max_align_t))
		align = _Alignof(max_align_t);
	if (align > s->align)
		s->align = align;
	at = (s->used + align - 1) & ~(align - 1);
	if (at < s->used || (size != 0 && n > SIZE_MAX / size) || n * size > SIZE_MAX - at) {
		s->overflow = 1;
		return NULL;
	}
	bytes = n * size;
	s->used = at + bytes;
	if (s->base == NULL || s->used > s->size)
		return NULL;
	return s->base + at;
}

static inline void *inart_slab_take(struct inart_slab *s, size_t n, size_t size)
{
	return inart_slab_take_aligned(s, n, size, _Alignof(max_align_t));
}

/* After the sizing pass: allocate the zeroed block and rewind for the
 * second pass.  0, or -ENOMEM (errno set) with nothing allocated. */
static inline int inart_slab_alloc(struct inart_slab *s)
{
	size_t size = s->used ? s->used : 1;

	size = (size + s->align - 1) & ~(s->align - 1);
	if (s->overflow || size < s->used || (s->base = aligned_alloc(s->align, size)) == NULL) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	memset(s->base, 0, size);
	s->size = size;
	s->used = 0;
	return 0;
}

/* The two passes over lay_out (see the top): the arrays of obj in one
 * zeroed block.  The block, which the caller keeps and frees with one
 * free(), or NULL + ENOMEM with nothing allocated (the pointers lay_out sets
 * are then NULL: a destroy that frees the block is safe). */
static inline void *inart_slab_block(void *obj, void (*lay_out)(void *obj, struct inart_slab *s))
{
	struct inart_slab s = INART_SLAB_INIT;

	lay_out(obj, &s);
	if (inart_slab_alloc(&s) < 0)
		return NULL;
	lay_out(obj, &s);
	return s.base;
}

/* An object of `size` bytes and its arrays in one zeroed block, freed with
 * one free(): proto (zeroed but for the fields lay_out reads; it is written
 * on the sizing pass) is copied to the start of the block, then lay_out
 * takes the arrays for the copy.  The object, or NULL + ENOMEM. */
static inline void *inart_slab_new(void *proto, size_t size,
				   void (*lay_out)(void *obj, struct inart_slab *s))
{
	struct inart_slab s = INART_SLAB_INIT;
	void *obj;

	inart_slab_take(&s, 1, size);
	lay_out(proto, &s);
	if (inart_slab_alloc(&s) < 0)
		return NULL;
	obj = inart_slab_take(&s, 1, size);
	memcpy(obj, proto, size);
	lay_out(obj, &s);
	return obj;
}

#endif
