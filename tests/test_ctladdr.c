/*
 * test_ctladdr: the control socket's addresses (ctlproto/ctladdr.h): a UNIX path
 * that fits and one that does not; "HOST:PORT" with an address, a port at
 * both ends of its range, and what is refused (no colon, no port, a port
 * that is not a number or out of range, a host too long, a name that does
 * not resolve).  No socket is opened.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "ctlproto/ctladdr.h"
#include "testutil.h"

static void test_unix(void **state)
{
	struct sockaddr_un a;
	char path[sizeof(a.sun_path) + 1];

	(void)state;
	assert_int_equal(inart_ctl_addr_unix(&a, "/run/inart/s0.sock"), 0);
	assert_int_equal(a.sun_family, AF_UNIX);
	assert_string_equal(a.sun_path, "/run/inart/s0.sock");
	/* the longest path that fits leaves room for the NUL */
	memset(path, 'x', sizeof(a.sun_path) - 1);
	path[sizeof(a.sun_path) - 1] = '\0';
	assert_int_equal(inart_ctl_addr_unix(&a, path), 0);
	assert_int_equal(strlen(a.sun_path), sizeof(a.sun_path) - 1);
	memset(path, 'x', sizeof(a.sun_path));
	path[sizeof(a.sun_path)] = '\0';
	assert_int_equal(inart_ctl_addr_unix(&a, path), -ENAMETOOLONG);
}

static void test_tcp(void **state)
{
	struct sockaddr_in a;
	char host[300];

	(void)state;
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:47471", &a), 0);
	assert_int_equal(a.sin_family, AF_INET);
	assert_int_equal(ntohs(a.sin_port), 47471);
	assert_int_equal(ntohl(a.sin_addr.s_addr), 0x7f000001);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.2:0", &a), 0); /* any free port */
	assert_int_equal(ntohs(a.sin_port), 0);
	assert_int_equal(ntohl(a.sin_addr.s_addr), 0x7f000002);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:65535", &a), 0);
	assert_int_equal(ntohs(a.sin_port), 65535);

	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1", &a), -EINVAL);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:", &a), -EINVAL);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:x", &a), -EINVAL);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:80x", &a), -EINVAL);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:65536", &a), -EINVAL);
	assert_int_equal(inart_ctl_addr_tcp("127.0.0.1:-1", &a), -EINVAL);
	memset(host, 'h', sizeof(host));
	strcpy(host + 280, ":1");
	assert_int_equal(inart_ctl_addr_tcp(host, &a), -EINVAL);
	/* .invalid never resolves (RFC 6761) */
	assert_int_equal(inart_ctl_addr_tcp("no-such-host.invalid:1", &a), -EHOSTUNREACH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unix),
	    cmocka_unit_test(test_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
