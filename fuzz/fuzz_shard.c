/*
 * fuzz_shard: libFuzzer target for the shard steering (dp/shard), which
 * reads untrusted frames.  The first byte picks the shard count (1..64),
 * the rest is the frame, copied into a buffer of exactly its size (an
 * overread is the sanitizer's to find).  Every answer must be a shard in
 * range, 0 with one shard, the same for the frame with anything appended
 * when it is an InArt packet long enough, and the documented
 * inart_shard_of_slot of its header fields then.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dp/bytes.h"
#include "dp/shard.h"
#include "dp/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *what)
{
	fprintf(stderr, "fuzz_shard: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f, *g;
	size_t len, u;
	int n, k;

	if (size < 1)
		return 0;
	n = 1 + data[0] % INART_SHARD_MAX;
	len = size - 1;
	f = malloc(len + 1);
	g = malloc(len + 8);
	if (f == NULL || g == NULL)
		die("out of memory");
	memcpy(f, data + 1, len);
	k = inart_shard_steer(f, len, n);
	if (k < 0 || k >= n)
		die("shard out of range");
	if (inart_shard_steer(f, len, 1) != 0)
		die("one shard: not 0");
	/* an InArt packet: its (job, tree, slot), whatever follows */
	u = 14 + (len > 14 ? (size_t)(f[14] & 0x0f) * 4 : 0);
	if (len >= u + 8 + INART_SHARD_INA_NEED && len >= 34 && inart_get_be16(f + 12) == 0x0800 &&
	    (f[14] & 0x0f) >= 5 && f[23] == 17 && (inart_get_be16(f + 20) & 0x3fff) == 0 &&
	    inart_get_be16(f + u + 2) == INART_WIRE_UDP_PORT) {
		if (k != inart_shard_of_slot(inart_get_be32(f + u + 8 + INART_SHARD_INA_JOB),
					     inart_get_be16(f + u + 8 + INART_SHARD_INA_TREE),
					     inart_get_be16(f + u + 8 + INART_SHARD_INA_SLOT), n))
			die("an InArt packet not on the shard of its slot");
		memcpy(g, f, len);
		memset(g + len, 0xa5, 8);
		if (inart_shard_steer(g, len + 8, n) != k)
			die("bytes after the fields changed the shard");
	}
	free(f);
	free(g);
	return 0;
}
