/*
 * formats: the JSON interchange formats (docs/formats.md): topology, jobs and
 * plan files, read with jansson and checked completely before anything is
 * built.  Readers take untrusted input: every error names the file (`name`)
 * and the line/column (JSON syntax) or the offending id, e.g.
 *   "topo.json:3:17: '}' expected" or "jobs.json: job 'j0': unknown model 'x'".
 * Writers produce canonical, stable JSON (keys in a fixed order, 2-space
 * indentation, shortest round-trip numbers) so that golden files compare
 * byte for byte.
 *
 * Ownership: returned objects and strings belong to the caller
 * (inart_topo_destroy, inart_jobs_destroy, inart_plan_destroy, free).
 */
#ifndef INART_FORMATS_H
#define INART_FORMATS_H

#include <stddef.h>

#include "plan.h"

/* Parse from memory (name is used in messages only).  NULL + errno on error,
 * err filled. */
struct inart_topo *inart_topo_parse(const char *buf, size_t len, const char *name,
				    struct inart_err *err);
struct inart_jobs *inart_jobs_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, struct inart_err *err);
struct inart_plan *inart_plan_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, const struct inart_jobs *js,
				    struct inart_err *err);

/* Read a whole file and parse it (path "-" is standard input). */
struct inart_topo *inart_topo_load(const char *path, struct inart_err *err);
struct inart_jobs *inart_jobs_load(const char *path, const struct inart_topo *t,
				   struct inart_err *err);
struct inart_plan *inart_plan_load(const char *path, const struct inart_topo *t,
				   const struct inart_jobs *js, struct inart_err *err);

/* Serialize to a NUL-terminated malloc'ed string (NULL + errno on failure). */
char *inart_topo_dump(const struct inart_topo *t);
char *inart_jobs_dump(const struct inart_jobs *js, const struct inart_topo *t);
char *inart_plan_dump(const struct inart_plan *p, const struct inart_topo *t,
		      const struct inart_jobs *js);

/* Write a string to a file atomically (path "-" is standard output).
 * 0 or -errno (err names the file). */
int inart_file_write(const char *path, const char *text, struct inart_err *err);

/* Largest file inart_file_read accepts (bytes). */
#define INART_FILE_MAX ((size_t)256 << 20)

/* Read a whole file (path "-" is standard input) into a malloc'ed buffer,
 * NUL-terminated; *len gets its length.  NULL + errno on failure (EFBIG when
 * the file is larger than INART_FILE_MAX). */
char *inart_file_read(const char *path, size_t *len, struct inart_err *err);

#endif
