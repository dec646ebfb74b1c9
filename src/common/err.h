/*
 * err: the one error convention of the project.
 *
 * Functions return 0 or a negative errno (pointer-returning functions return
 * NULL and set errno).  Where a user must be told *what* is wrong, callers pass
 * a struct inart_err that the callee fills with one human-readable line naming
 * the file, line/column or id at fault.  Libraries never print: the caller (a
 * program) decides what to do with the message.  The struct is owned by the
 * caller; a NULL pointer means "I do not want the message".
 */
#ifndef INART_ERR_H
#define INART_ERR_H

#include <errno.h>
#include <stddef.h>

#include "inart/inart.h" /* struct inart_err, INART_ERR_MAX */

#if defined(__GNUC__)
#define INART_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define INART_PRINTF(a, b)
#endif

/* Format a message into err (if non-NULL).  Returns code unchanged, so that
 * `return inart_err_set(err, -EINVAL, "...")` reads naturally. */
int inart_err_set(struct inart_err *err, int code, const char *fmt, ...) INART_PRINTF(3, 4);

/* The failing exit of a pointer-returning function (a constructor, a
 * parser): errno = code, NULL -- `return inart_null_errno(ENOMEM);` after
 * undoing what was built. */
static inline void *inart_null_errno(int code)
{
	errno = code;
	return NULL;
}

/* Prefix the existing message with "prefix: " (used to add a file name). */
void inart_err_prefix(struct inart_err *err, const char *prefix);

#endif
