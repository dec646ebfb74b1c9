/* sbuf: see sbuf.h. */
#include "common/sbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; 0, or -1 (and failed set). */
static int reserve(struct inart_sbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *s;

	if (b->failed)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	while (b->len + n + 1 > cap)
		cap *= 2;
	s = realloc(b->s, cap);
	if (s == NULL) {
		b->failed = 1;
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

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
	if (reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void inart_sbuf_put(struct inart_sbuf *b, const char *str, size_t n)
{
	if (reserve(b, n) < 0)
		return;
	memcpy(b->s + b->len, str, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void inart_sbuf_puts(struct inart_sbuf *b, const char *str)
{
	inart_sbuf_put(b, str, strlen(str));
}

char *inart_sbuf_finish(struct inart_sbuf *b)
{
	if (!b->failed && b->s == NULL)
		inart_sbuf_put(b, "", 0);
	if (b->failed) {
		free(b->s);
		b->s = NULL;
		return inart_null_errno(ENOMEM);
	}
	return b->s;
}
