/*
 * file: whole files in and out, for every reader and writer of the project's
 * text files (formats, deployment files).  Path "-" is standard input (read)
 * or standard output (write).  Reading refuses files larger than
 * INART_FILE_MAX; writing is atomic (a temporary file next to the target,
 * renamed over it), so a reader never sees half a file.  Errors name the
 * file; nothing here parses.
 *
 * Ownership: the buffer inart_file_read returns belongs to the caller (free).
 */
#ifndef INART_FILE_H
#define INART_FILE_H

#include <stddef.h>

#include "common/err.h"

/* Largest file inart_file_read accepts (bytes). */
#define INART_FILE_MAX ((size_t)256 << 20)

/* Read a whole file (path "-" is standard input) into a malloc'ed buffer,
 * NUL-terminated; *len gets its length.  NULL + errno on failure (EFBIG when
 * the file is larger than INART_FILE_MAX). */
char *inart_file_read(const char *path, size_t *len, struct inart_err *err);

/* Write a string to a file atomically (path "-" is standard output).
 * 0 or -errno (err names the file). */
int inart_file_write(const char *path, const char *text, struct inart_err *err);

/* Close the descriptor fd if it is open (>= 0): the release of a descriptor
 * that may never have been opened (-1). */
void inart_fd_close(int fd);

/* The name of path in messages: "<stdin>" for "-", else path itself. */
const char *inart_file_name(const char *path);

#endif
