/*
 * test_file: whole files in and out (common/file.h): atomic replacement
 * with no temporary file left behind, empty files, standard input, errors
 * that name the path, and the size cap.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/file.h"

static void test_files(void **state)
{
	struct inart_err err = {{0}};
	char dir[] = "/tmp/inart_test_file_XXXXXX";
	char path[512], bad[512];
	size_t len;
	char *s;
	DIR *d;
	struct dirent *de;
	int entries = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(inart_file_write(path, "first\n", &err), 0);
	assert_int_equal(inart_file_write(path, "{\"x\": 1}\n", &err), 0); /* replaces */
	s = inart_file_read(path, &len, &err);
	assert_non_null(s);
	assert_int_equal(len, 9);
	assert_string_equal(s, "{\"x\": 1}\n");
	free(s);
	/* No temporary file left behind. */
	d = opendir(dir);
	while ((de = readdir(d)) != NULL)
		entries += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(entries, 1);

	/* Empty file: an empty NUL-terminated buffer. */
	assert_int_equal(inart_file_write(path, "", &err), 0);
	s = inart_file_read(path, &len, &err);
	assert_non_null(s);
	assert_int_equal(len, 0);
	assert_int_equal(s[0], '\0');
	free(s);

	/* "-" reads standard input. */
	assert_int_equal(inart_file_write(path, "from stdin", &err), 0);
	assert_non_null(freopen(path, "r", stdin));
	s = inart_file_read("-", &len, &err);
	assert_non_null(s);
	assert_string_equal(s, "from stdin");
	free(s);

	/* Missing file, directory, unwritable place: errors naming the path. */
	snprintf(bad, sizeof(bad), "%s/missing.json", dir);
	errno = 0;
	assert_null(inart_file_read(bad, &len, &err));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.msg, "missing.json"));
	assert_null(inart_file_read(dir, &len, &err));
	assert_non_null(strstr(err.msg, dir));
	snprintf(bad, sizeof(bad), "%s/no/such/dir/out.json", dir);
	assert_true(inart_file_write(bad, "x", &err) < 0);
	assert_non_null(strstr(err.msg, "no/such/dir/out.json"));

	unlink(path);
	rmdir(dir);
}

/* Sparse file one byte over the cap: refused with EFBIG (no parse). */
static void test_file_cap(void **state)
{
	struct inart_err err = {{0}};
	char path[] = "/tmp/inart_test_big_XXXXXX";
	int fd = mkstemp(path);
	size_t len;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)INART_FILE_MAX + 1), 0);
	close(fd);
	errno = 0;
	assert_null(inart_file_read(path, &len, &err));
	assert_int_equal(errno, EFBIG);
	assert_non_null(strstr(err.msg, "larger than 256 MiB"));
	unlink(path);
}

static void test_name(void **state)
{
	(void)state;
	assert_string_equal(inart_file_name("-"), "<stdin>");
	assert_string_equal(inart_file_name("a/b.json"), "a/b.json");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_files),
    cmocka_unit_test(test_file_cap),
    cmocka_unit_test(test_name),
};

int main(void)
{
	return cmocka_run_group_tests(tests, NULL, NULL);
}
