/*
 * test_sbuf: the string builder every text writer uses: appends of each
 * kind, growth far past the first allocation, the empty string, and the
 * sticky failure (finish frees and reports ENOMEM).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/sbuf.h"

static void test_appends(void **state)
{
	struct inart_sbuf b = {0};
	char *s;

	(void)state;
	inart_sbuf_puts(&b, "a=");
	inart_sbuf_printf(&b, "%d,%s", 42, "x");
	inart_sbuf_put(&b, "yz-not-this", 2); /* not NUL-terminated at n */
	inart_sbuf_put(&b, "", 0);
	assert_int_equal(b.len, 8);
	assert_string_equal(b.s, "a=42,xyz"); /* NUL-terminated after every append */
	s = inart_sbuf_finish(&b);
	assert_string_equal(s, "a=42,xyz");
	free(s);
}

static void test_empty(void **state)
{
	struct inart_sbuf b = {0};
	char *s = inart_sbuf_finish(&b);

	(void)state;
	assert_non_null(s);
	assert_string_equal(s, "");
	free(s);
}

/* Many appends across several doublings: every byte where it belongs. */
static void test_growth(void **state)
{
	struct inart_sbuf b = {0};
	char *s;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		if (i % 2)
			inart_sbuf_printf(&b, "%04d", i);
		else
			inart_sbuf_put(&b, "abcd", 4);
	}
	inart_sbuf_printf(&b, "%s", ""); /* an empty printf appends nothing */
	s = inart_sbuf_finish(&b);
	assert_non_null(s);
	assert_int_equal(strlen(s), 40000);
	for (int i = 0; i < 10000; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%04d", i);
		assert_memory_equal(s + 4 * i, i % 2 ? want : "abcd", 4);
	}
	free(s);
}

/* After a failure, appends do nothing and finish frees and says ENOMEM. */
static void test_failure_sticks(void **state)
{
	struct inart_sbuf b = {0};

	(void)state;
	inart_sbuf_puts(&b, "kept?");
	b.failed = 1; /* what a failed realloc leaves */
	inart_sbuf_puts(&b, "more");
	inart_sbuf_printf(&b, "%d", 1);
	assert_int_equal(b.len, 5);
	errno = 0;
	assert_null(inart_sbuf_finish(&b));
	assert_int_equal(errno, ENOMEM);
	assert_null(b.s);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_appends),
    cmocka_unit_test(test_empty),
    cmocka_unit_test(test_growth),
    cmocka_unit_test(test_failure_sticks),
};

int main(void)
{
	return cmocka_run_group_tests(tests, NULL, NULL);
}
