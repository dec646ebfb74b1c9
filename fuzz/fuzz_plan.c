/* fuzz_plan: libFuzzer target for the plan reader and writer (against a
 * fixed small topology and jobs). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = fuzz_topo();
	struct inart_jobs *js = fuzz_jobs();
	struct inart_plan *p = inart_plan_parse((const char *)data, size, "input", t, js, &err),
			  *p2;
	char *a, *b;

	if (p == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	a = inart_plan_dump(p, t, js);
	if (a == NULL)
		fuzz_die("dump failed", NULL, NULL);
	p2 = inart_plan_parse(a, strlen(a), "input", t, js, &err);
	if (p2 == NULL)
		fuzz_die("dump does not parse", a, err.msg);
	b = inart_plan_dump(p2, t, js);
	if (b == NULL || strcmp(a, b) != 0)
		fuzz_die("dump -> parse -> dump changed the text", a, b);
	free(a);
	free(b);
	inart_plan_destroy(p);
	inart_plan_destroy(p2);
	return 0;
}
