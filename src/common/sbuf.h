/*
 * sbuf: a growing NUL-terminated string for the text renderers (compare
 * tables, Graphviz).  Allocation failure is sticky: later appends do nothing
 * and inart_sbuf_finish returns NULL with errno ENOMEM.  The buffer owns its
 * string until finish hands it to the caller (who frees it).
 */
#ifndef INART_SBUF_H
#define INART_SBUF_H

#include <stddef.h>

#include "err.h"

struct inart_sbuf {
	char *s;
	size_t len, cap;
	int failed;
};

void inart_sbuf_printf(struct inart_sbuf *b, const char *fmt, ...) INART_PRINTF(2, 3);

/* The string (malloc'ed, caller frees; "" when nothing was appended), or
 * NULL + errno after an allocation failure (the buffer is freed). */
char *inart_sbuf_finish(struct inart_sbuf *b);

#endif
