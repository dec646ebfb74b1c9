/* load: see load.h. */
#include "cp/model/load.h"

#include <errno.h>
#include <stdlib.h>

#include "common/file.h"
#include "cp/model/formats.h"

/* A file's text, and its name for the parser's messages. */
struct text {
	char *buf;
	size_t len;
	const char *name;
};

static int text_read(const char *path, struct text *tx, struct inart_err *err)
{
	tx->buf = inart_file_read(path, &tx->len, err);
	tx->name = inart_file_name(path);
	return tx->buf == NULL ? -errno : 0;
}

/* Free the text and pass the parser's result (and errno) through. */
static void *text_done(struct text *tx, void *parsed)
{
	int e = errno;

	free(tx->buf);
	errno = e;
	return parsed;
}

struct inart_topo *inart_topo_load(const char *path, struct inart_err *err)
{
	struct text tx;

	if (text_read(path, &tx, err) < 0)
		return NULL;
	return text_done(&tx, inart_topo_parse(tx.buf, tx.len, tx.name, err));
}

struct inart_jobs *inart_jobs_load(const char *path, const struct inart_topo *t,
				   struct inart_err *err)
{
	struct text tx;

	if (text_read(path, &tx, err) < 0)
		return NULL;
	return text_done(&tx, inart_jobs_parse(tx.buf, tx.len, tx.name, t, err));
}

struct inart_plan *inart_plan_load(const char *path, const struct inart_topo *t,
				   const struct inart_jobs *js, struct inart_err *err)
{
	struct text tx;

	if (text_read(path, &tx, err) < 0)
		return NULL;
	return text_done(&tx, inart_plan_parse(tx.buf, tx.len, tx.name, t, js, err));
}
