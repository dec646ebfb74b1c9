/*
 * formats: the JSON interchange formats (docs/formats.md): topology, jobs and
 * plan files, read with jansson and checked completely before anything is
 * built.  Readers take untrusted input: every error names the file (`name`)
 * and the line/column (JSON syntax) or the offending id, e.g.
 *   "topo.json:3:17: '}' expected" or "jobs.json: job 'j0': unknown model 'x'".
 * Writers (formats_dump.h, included here) produce canonical, stable JSON.
 *
 * Text in, text out: reading and writing files is common/file.h, and
 * cp/model/load.h reads these formats from files.
 *
 * Ownership: returned objects and strings belong to the caller
 * (inart_topo_destroy, inart_jobs_destroy, inart_plan_destroy, free).
 */
#ifndef INART_FORMATS_H
#define INART_FORMATS_H

#include <stddef.h>

#include "cp/model/formats_dump.h"
#include "cp/model/plan.h"

/* Parse from memory (name is used in messages only).  NULL + errno on error,
 * err filled. */
struct inart_topo *inart_topo_parse(const char *buf, size_t len, const char *name,
				    struct inart_err *err);
struct inart_jobs *inart_jobs_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, struct inart_err *err);
struct inart_plan *inart_plan_parse(const char *buf, size_t len, const char *name,
				    const struct inart_topo *t, const struct inart_jobs *js,
				    struct inart_err *err);

#endif
