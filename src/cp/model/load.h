/*
 * load: the formats read from files -- inart_file_read (common/file.h) then
 * the parsers of formats.h, with the file's name ("<stdin>" for "-") in
 * every message.  The parsers themselves never touch a file.
 *
 * Ownership: returned objects belong to the caller (inart_topo_destroy,
 * inart_jobs_destroy, inart_plan_destroy).
 */
#ifndef INART_LOAD_H
#define INART_LOAD_H

#include "cp/model/plan.h"

/* Read a whole file and parse it (path "-" is standard input).  NULL + errno
 * on error (the reader's or the parser's), err filled. */
struct inart_topo *inart_topo_load(const char *path, struct inart_err *err);
struct inart_jobs *inart_jobs_load(const char *path, const struct inart_topo *t,
				   struct inart_err *err);
struct inart_plan *inart_plan_load(const char *path, const struct inart_topo *t,
				   const struct inart_jobs *js, struct inart_err *err);

#endif
