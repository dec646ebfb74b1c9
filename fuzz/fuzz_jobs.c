/* fuzz_jobs: libFuzzer target for the jobs reader and writer (against a
 * fixed small topology). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = fuzz_topo();
	struct inart_jobs *js = inart_jobs_parse((const char *)data, size, "input", t, &err), *js2;
	char *a, *b;

	if (js == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	a = inart_jobs_dump(js, t);
	if (a == NULL)
		fuzz_die("dump failed", NULL, NULL);
	js2 = inart_jobs_parse(a, strlen(a), "input", t, &err);
	if (js2 == NULL)
		fuzz_die("dump does not parse", a, err.msg);
	b = inart_jobs_dump(js2, t);
	if (b == NULL || strcmp(a, b) != 0)
		fuzz_die("dump -> parse -> dump changed the text", a, b);
	free(a);
	free(b);
	inart_jobs_destroy(js);
	inart_jobs_destroy(js2);
	return 0;
}
