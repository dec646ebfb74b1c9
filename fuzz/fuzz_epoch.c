/* fuzz_epoch: libFuzzer target for a plan file's epoch object
 * (bridge/epoch.h inart_epoch_parse): any input either parses to an epoch
 * (or none) with a sane step, or fails with one line naming the input. */
#include <stdint.h>

#include "fuzz_common.h"
#include "bridge/epoch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inart_err err = {{0}};
	int64_t n = 0;
	uint32_t from = 0;

	if (inart_epoch_parse((const char *)data, size, "input", "j0", &n, &from, &err) < 0) {
		fuzz_check_error(&err);
		return 0;
	}
	if (n < -1 || n > (int64_t)UINT32_MAX || (n == -1 && from != 0))
		fuzz_die("epoch out of range", NULL, NULL);
	return 0;
}
