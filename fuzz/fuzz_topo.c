/* fuzz_topo: libFuzzer target for the topology reader and writer. */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_err err = {{0}};
	struct inart_topo *t = inart_topo_parse((const char *)data, size, "input", &err), *t2;
	char *a, *b;

	if (t == NULL) {
		fuzz_check_error(&err);
		return 0;
	}
	a = inart_topo_dump(t);
	if (a == NULL)
		fuzz_die("dump failed", NULL, NULL);
	t2 = inart_topo_parse(a, strlen(a), "input", &err);
	if (t2 == NULL)
		fuzz_die("dump does not parse", a, err.msg);
	b = inart_topo_dump(t2);
	if (b == NULL || strcmp(a, b) != 0)
		fuzz_die("dump -> parse -> dump changed the text", a, b);
	free(a);
	free(b);
	inart_topo_destroy(t);
	inart_topo_destroy(t2);
	return 0;
}
