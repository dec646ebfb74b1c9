/* sbuf: see sbuf.h. */
#include "sbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void inart_sbuf_printf(struct inart_sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = 1;
		return;
	}
	if (b->len + (size_t)n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *s;

		while (b->len + (size_t)n + 1 > cap)
			cap *= 2;
		s = realloc(b->s, cap);
		if (s == NULL) {
			b->failed = 1;
			return;
		}
		b->s = s;
		b->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *inart_sbuf_finish(struct inart_sbuf *b)
{
	if (!b->failed && b->s == NULL)
		inart_sbuf_printf(b, "%s", "");
	if (b->failed) {
		free(b->s);
		b->s = NULL;
		errno = ENOMEM;
		return NULL;
	}
	return b->s;
}
