/* err: see err.h. */
#include "err.h"

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
	char tmp[2 * INART_ERR_MAX + 8];

	if (err == NULL || prefix == NULL)
		return;
	snprintf(tmp, sizeof(tmp), "%.*s: %s", INART_ERR_MAX, prefix, err->msg);
	snprintf(err->msg, sizeof(err->msg), "%s", tmp);
}
