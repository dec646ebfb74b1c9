/*
 * sbuf: the project's one growing NUL-terminated string, for every text
 * writer (JSON files, compare tables, Graphviz).  Start from a zeroed
 * struct.  Allocation failure is sticky: later appends do nothing and
 * inart_sbuf_finish returns NULL with errno ENOMEM.  The buffer owns its
 * string until finish hands it to the caller (who frees it).
 */
#ifndef INART_SBUF_H
#define INART_SBUF_H

#include <stddef.h>

#include "common/err.h"

struct inart_sbuf {
	char *s;
	size_t len, cap;
	int failed;
};

void inart_sbuf_printf(struct inart_sbuf *b, const char *fmt, ...) INART_PRINTF(2, 3);

/* Append n bytes of str (which need not be NUL-terminated), or a C string. */
void inart_sbuf_put(struct inart_sbuf *b, const char *str, size_t n);
void inart_sbuf_puts(struct inart_sbuf *b, const char *str);

/* The string (malloc'ed, caller frees; "" when nothing was appended), or
 * NULL + errno after an allocation failure (the buffer is freed). */
char *inart_sbuf_finish(struct inart_sbuf *b);

#endif
