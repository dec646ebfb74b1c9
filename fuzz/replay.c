/*
 * replay: runs a libFuzzer target's LLVMFuzzerTestOneInput on stored inputs,
 * without libFuzzer -- so that `meson test` replays every corpus in the
 * normal (gcc, no sanitizer) build and a regression on a stored input fails
 * the suite even where clang is not installed.  Linked with one fuzz_*.c.
 *
 *   replay_TARGET PATH...     (files, or folders whose files are replayed in
 *                              name order; subfolders are not entered)
 *
 * A target reports a failed check by abort(), which fails the test; each
 * input's name goes to stderr first, so the log names the one at fault.
 * Exit 0 when every input ran, 1 when a path cannot be read or when no
 * input at all was found (an empty or missing corpus must not pass).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Run the target on one file's bytes (an exact-size copy, as libFuzzer
 * hands them).  0, or -1 if the file cannot be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;
	int rc = -1;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		goto out;
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto out;
	fprintf(stderr, "replay: %s (%ld bytes)\n", path, n);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	rc = 0;
out:
	if (rc < 0)
		perror(path);
	free(buf);
	if (f != NULL)
		fclose(f);
	return rc;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replay one path (a file, or the regular files of a folder); adds the
 * inputs run to *count.  0 or -1. */
static int replay_path(const char *path, int *count)
{
	struct dirent **names;
	struct stat st;
	int n, rc = 0;

	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		*count += replay_file(path) == 0;
		return *count > 0 ? 0 : -1;
	}
	n = scandir(path, &names, NULL, by_name);
	if (n < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
			if (replay_file(file) < 0)
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int count = 0, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &count) < 0)
			rc = 1;
	if (count == 0) {
		fprintf(stderr, "replay: no input found\n");
		rc = 1;
	}
	printf("replay: %d inputs, %s\n", count, rc ? "FAILED" : "all passed");
	return rc;
}
