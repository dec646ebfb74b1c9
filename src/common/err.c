/* err: see err.h. */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int inart_err_set(struct inart_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void inart_err_prefix(struct inart_err *err, const char *prefix)
{
	char old[INART_ERR_MAX];
	size_t pl, ol;

	if (err == NULL || prefix == NULL)
		return;
	memcpy(old, err->msg, sizeof(old));
	old[sizeof(old) - 1] = '\0';
	ol = strlen(old);
	pl = strnlen(prefix, INART_ERR_MAX - 3);
	memcpy(err->msg, prefix, pl);
	memcpy(err->msg + pl, ": ", 2);
	if (ol > INART_ERR_MAX - 1 - pl - 2)
		ol = INART_ERR_MAX - 1 - pl - 2;
	memcpy(err->msg + pl + 2, old, ol);
	err->msg[pl + 2 + ol] = '\0';
}
