/*
 * ctlclient: the control socket's client (see ctlclient.h): one request and
 * its reply on a connection of its own (inart_ctl_call), or on a kept
 * connection (inart_ctl_conn).  Every wait is bounded by one deadline per
 * call; nothing read from the socket is trusted as a length before
 * ctlproto/ctlmsg's frame check.  Over TCP every frame carries a MAC under the
 * session key of the ctlproto/ctlauth handshake.
 *
 * Ownership: a kept connection owns its copy of the path and its socket;
 * replies are malloc'ed for the caller.
 */
#include "ctlproto/ctlclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/file.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctladdr.h"
#include "ctlproto/ctlauth.h"

/* Wait for fd to be ready for events until the deadline. 0 or -ETIMEDOUT. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = events};
		int64_t left = deadline - inart_now_ms();
		int r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send (out) or receive exactly n bytes by the deadline.  0 or -errno
 * (-ECONNRESET: closed by the peer). */
static int io_all(int fd, uint8_t *buf, size_t n, int out, int64_t deadline)
{
	size_t off = 0;

	while (off < n) {
		ssize_t r = out ? send(fd, buf + off, n - off, MSG_NOSIGNAL)
				: recv(fd, buf + off, n - off, 0);
		int rc;

		if (r == 0 && !out)
			return -ECONNRESET;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return errno == EPIPE ? -ECONNRESET : -errno;
			if ((rc = wait_fd(fd, out ? POLLOUT : POLLIN, deadline)) < 0)
				return rc;
			continue;
		}
		off += (size_t)r;
	}
	return 0;
}

/* Send the frame of body (len bytes) on the non-blocking fd by the
 * deadline. */
static int send_request(int fd, const char *path, const char *body, size_t len, int64_t deadline,
			struct inart_err *err)
{
	uint8_t hdr[INART_CTL_HDR_LEN];
	int rc;

	inart_ctl_frame_hdr(hdr, (uint32_t)len);
	if ((rc = io_all(fd, hdr, INART_CTL_HDR_LEN, 1, deadline)) == 0)
		rc = io_all(fd, (uint8_t *)(uintptr_t)body, len, 1, deadline);
	if (rc == -ETIMEDOUT)
		return inart_err_set(err, rc, "%s: timed out sending the request", path);
	if (rc < 0)
		return inart_err_set(err, rc, "%s: send: %s", path, strerror(-rc));
	return 0;
}

/* Connect to "HOST:PORT" (spec) and run the handshake by the deadline:
 * the descriptor (non-blocking) in *fdp and the session key in ks.  0 or
 * -errno (err says why; -EACCES: refused or the daemon did not prove the
 * key). */
static int tcp_open(const char *spec, int64_t deadline, int *fdp, uint8_t ks[INART_AUTH_MAC],
		    struct inart_err *err)
{
	struct inart_ctl_key key;
	struct sockaddr_in a;
	uint8_t hello[INART_AUTH_HELLO], answer[INART_AUTH_ANSWER], proof[INART_AUTH_MAC];
	uint8_t got[INART_AUTH_MAC];
	const char *kpath = getenv("INART_CTL_KEY");
	socklen_t sl = sizeof(int);
	int fd = -1, rc, soerr = 0;

	*fdp = -1;
	if (kpath == NULL || kpath[0] == '\0')
		return inart_err_set(err, -EACCES,
				     "tcp:%s: set INART_CTL_KEY to the control key's file", spec);
	if ((rc = inart_ctl_key_load(kpath, &key, err)) < 0)
		return rc;
	if ((rc = inart_ctl_addr_tcp(spec, &a)) < 0) {
		inart_err_set(err, rc, "tcp:%s: not HOST:PORT", spec);
		goto out;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno != EINPROGRESS)) {
		rc =
		    inart_err_set(err, -errno, "tcp:%s: cannot connect: %s", spec, strerror(errno));
		goto out;
	}
	if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr != 0) {
		rc = rc < 0 ? rc : -(soerr ? soerr : errno);
		inart_err_set(err, rc, "tcp:%s: cannot connect: %s", spec, strerror(-rc));
		goto out;
	}
	if ((rc = io_all(fd, hello, sizeof(hello), 0, deadline)) < 0 ||
	    (rc = inart_ctlauth_answer(&key, hello, answer, proof, ks)) < 0 ||
	    (rc = io_all(fd, answer, sizeof(answer), 1, deadline)) < 0) {
		inart_err_set(err, rc, "tcp:%s: handshake: %s", spec, strerror(-rc));
		goto out;
	}
	if ((rc = io_all(fd, got, sizeof(got), 0, deadline)) < 0) {
		rc = rc == -ECONNRESET ? -EACCES : rc;
		inart_err_set(err, rc, "tcp:%s: %s", spec,
			      rc == -EACCES ? "refused: the daemon does not accept this key"
					    : strerror(-rc));
		goto out;
	}
	if (CRYPTO_memcmp(got, proof, sizeof(proof)) != 0) {
		rc = inart_err_set(err, -EACCES, "tcp:%s: the daemon did not prove the key", spec);
		goto out;
	}
	*fdp = fd;
	fd = -1;
	rc = 0;
out:
	inart_fd_close(fd);
	OPENSSL_cleanse(&key, sizeof(key));
	return rc;
}

/* One request and its reply on an authenticated connection: frames MAC'ed
 * with the session key ks, the request's sequence number seq (the count of
 * frames sent before it on the connection each way). */
static int tcp_exchange(int fd, const uint8_t ks[INART_AUTH_MAC], uint64_t seq, const char *spec,
			const char *body, size_t len, char **reply, size_t *reply_len,
			int64_t deadline, struct inart_err *err)
{
	uint8_t *frame = malloc(len + INART_CTL_HDR_LEN + INART_AUTH_MAC);
	uint32_t n = 0;
	int rc;

	if (frame == NULL)
		return -ENOMEM;
	inart_ctl_frame_hdr(frame, (uint32_t)len);
	memcpy(frame + INART_CTL_HDR_LEN, body, len);
	if ((rc = inart_ctlauth_mac(ks, 0, seq, frame, len + INART_CTL_HDR_LEN,
				    frame + len + INART_CTL_HDR_LEN)) < 0 ||
	    (rc = io_all(fd, frame, len + INART_CTL_HDR_LEN + INART_AUTH_MAC, 1, deadline)) < 0 ||
	    (rc = io_all(fd, frame, INART_CTL_HDR_LEN, 0, deadline)) < 0) {
		inart_err_set(err, rc, "tcp:%s: %s", spec, strerror(-rc));
		goto out;
	}
	if (inart_ctl_frame_check(frame, INART_CTL_HDR_LEN, &n) < 0) {
		rc = inart_err_set(err, -EPROTO, "tcp:%s: bad reply frame", spec);
		goto out;
	}
	free(frame);
	frame = malloc((size_t)n + INART_CTL_HDR_LEN + INART_AUTH_MAC + 1);
	if (frame == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	inart_ctl_frame_hdr(frame, n);
	if ((rc = io_all(fd, frame + INART_CTL_HDR_LEN, (size_t)n + INART_AUTH_MAC, 0, deadline)) <
		0 ||
	    (rc = inart_ctlauth_verify(ks, 1, seq, frame, (size_t)n + INART_CTL_HDR_LEN,
				       frame + INART_CTL_HDR_LEN + n)) < 0) {
		inart_err_set(err, rc, "tcp:%s: reply: %s", spec,
			      rc == -EACCES ? "its MAC is wrong" : strerror(-rc));
		goto out;
	}
	*reply = malloc((size_t)n + 1);
	if (*reply == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	memcpy(*reply, frame + INART_CTL_HDR_LEN, n);
	(*reply)[n] = '\0';
	*reply_len = n;
	rc = 0;
out:
	free(frame);
	return rc;
}

/* inart_ctl_call over TCP ("tcp:HOST:PORT"): handshake, one MAC'ed frame
 * each way. */
static int tcp_call(const char *spec, const char *body, size_t len, char **reply, size_t *reply_len,
		    int64_t deadline, struct inart_err *err)
{
	uint8_t ks[INART_AUTH_MAC];
	int fd, rc;

	rc = tcp_open(spec, deadline, &fd, ks, err);
	if (rc == 0) {
		rc = tcp_exchange(fd, ks, 0, spec, body, len, reply, reply_len, deadline, err);
		close(fd);
	}
	OPENSSL_cleanse(ks, sizeof(ks));
	return rc;
}

/* Receive one reply frame on the non-blocking fd by the deadline: its body
 * in *buf (n bytes, NUL-terminated, the caller's; set as soon as the header
 * is read). */
static int recv_reply(int fd, const char *path, int timeout_ms, int64_t deadline, char **buf,
		      uint32_t *np, struct inart_err *err)
{
	uint8_t hdr[INART_CTL_HDR_LEN];
	uint32_t n = 0;
	int rc = io_all(fd, hdr, INART_CTL_HDR_LEN, 0, deadline);

	if (rc == 0) {
		if (inart_ctl_frame_check(hdr, INART_CTL_HDR_LEN, &n) < 0)
			return inart_err_set(err, -EPROTO, "%s: bad reply frame", path);
		*buf = malloc((size_t)n + 1);
		if (*buf == NULL)
			return -ENOMEM;
		rc = io_all(fd, (uint8_t *)*buf, n, 0, deadline);
	}
	if (rc == -ECONNRESET)
		return inart_err_set(err, rc, "%s: connection closed before the reply", path);
	if (rc == -ETIMEDOUT)
		return inart_err_set(err, rc, "%s: no reply within %d ms", path, timeout_ms);
	if (rc < 0)
		return inart_err_set(err, rc, "%s: recv: %s", path, strerror(-rc));
	(*buf)[n] = '\0';
	*np = n;
	return 0;
}

int inart_ctl_call(const char *path, const char *body, size_t len, char **reply, size_t *reply_len,
		   int timeout_ms, struct inart_err *err)
{
	struct sockaddr_un a;
	int64_t deadline = inart_now_ms() + (timeout_ms > 0 ? timeout_ms : 1);
	uint32_t n = 0;
	char *buf = NULL;
	int fd = -1, rc;

	*reply = NULL;
	*reply_len = 0;
	if (strncmp(path, "tcp:", 4) == 0) {
		if (len == 0 || len > INART_CTL_MAX_MSG)
			return inart_err_set(err, -EMSGSIZE, "%s: request of %zu bytes", path, len);
		return tcp_call(path + 4, body, len, reply, reply_len, deadline, err);
	}
	if (inart_ctl_addr_unix(&a, path) < 0)
		return inart_err_set(err, -ENAMETOOLONG, "%s: path too long", path);
	if (len == 0 || len > INART_CTL_MAX_MSG)
		return inart_err_set(err, -EMSGSIZE, "%s: request of %zu bytes", path, len);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return inart_err_set(err, -errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = inart_err_set(err, -errno, "%s: cannot connect: %s", path, strerror(errno));
		goto out;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	rc = send_request(fd, path, body, len, deadline, err);
	if (rc == 0)
		rc = recv_reply(fd, path, timeout_ms, deadline, &buf, &n, err);
	if (rc < 0)
		goto out;
	*reply = buf;
	*reply_len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

/* ---- a kept connection (inart_ctl_conn, the controller's polls) ---- */

struct inart_ctl_conn {
	char *path;
	int fd;			    /* -1: not connected */
	int tcp;		    /* path is "tcp:HOST:PORT" */
	uint8_t ks[INART_AUTH_MAC]; /* tcp: the session key */
	uint64_t seq;		    /* tcp: requests sent on this connection */
	unsigned long connects;
};

struct inart_ctl_conn *inart_ctl_conn_create(const char *path)
{
	struct inart_ctl_conn *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->path = strdup(path)) == NULL) {
		free(c);
		return inart_null_errno(ENOMEM);
	}
	c->fd = -1;
	c->tcp = strncmp(path, "tcp:", 4) == 0;
	return c;
}

static void conn_drop(struct inart_ctl_conn *c)
{
	inart_fd_close(c->fd);
	c->fd = -1;
	c->seq = 0;
	OPENSSL_cleanse(c->ks, sizeof(c->ks));
}

void inart_ctl_conn_destroy(struct inart_ctl_conn *c)
{
	if (c == NULL)
		return;
	conn_drop(c);
	free(c->path);
	free(c);
}

unsigned long inart_ctl_conn_connects(const struct inart_ctl_conn *c)
{
	return c == NULL ? 0 : c->connects;
}

/* Connect (UNIX: non-blocking after connect; TCP: with the handshake). */
static int conn_open(struct inart_ctl_conn *c, int64_t deadline, struct inart_err *err)
{
	struct sockaddr_un a;
	int fd;

	if (c->tcp) {
		int rc = tcp_open(c->path + 4, deadline, &c->fd, c->ks, err);

		if (rc == 0)
			c->connects++;
		return rc;
	}
	if (inart_ctl_addr_unix(&a, c->path) < 0)
		return inart_err_set(err, -ENAMETOOLONG, "%s: path too long", c->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return inart_err_set(err, -errno, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int rc =
		    inart_err_set(err, -errno, "%s: cannot connect: %s", c->path, strerror(errno));

		close(fd);
		return rc;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	c->fd = fd;
	c->connects++;
	return 0;
}

/* One exchange on the open connection. */
static int conn_exchange(struct inart_ctl_conn *c, const char *body, size_t len, char **reply,
			 size_t *reply_len, int timeout_ms, int64_t deadline, struct inart_err *err)
{
	uint32_t n = 0;
	int rc;

	if (c->tcp) {
		rc = tcp_exchange(c->fd, c->ks, c->seq, c->path + 4, body, len, reply, reply_len,
				  deadline, err);
		c->seq++;
		return rc;
	}
	rc = send_request(c->fd, c->path, body, len, deadline, err);
	if (rc == 0)
		rc = recv_reply(c->fd, c->path, timeout_ms, deadline, reply, &n, err);
	if (rc == 0)
		*reply_len = n;
	return rc;
}

int inart_ctl_conn_call(struct inart_ctl_conn *c, const char *body, size_t len, char **reply,
			size_t *reply_len, int timeout_ms, struct inart_err *err)
{
	int64_t deadline = inart_now_ms() + (timeout_ms > 0 ? timeout_ms : 1);
	int rc, kept;

	*reply = NULL;
	*reply_len = 0;
	if (c == NULL || len == 0 || len > INART_CTL_MAX_MSG)
		return inart_err_set(err, -EMSGSIZE, "%s: request of %zu bytes", c ? c->path : "?",
				     len);
	kept = c->fd >= 0;
	if (!kept && (rc = conn_open(c, deadline, err)) < 0)
		return rc;
	rc = conn_exchange(c, body, len, reply, reply_len, timeout_ms, deadline, err);
	if ((rc == -ECONNRESET || rc == -EPIPE) && kept) {
		/* the daemon closed the kept connection (idle, restarted, its
		 * slot given to another client): once more on a new one */
		free(*reply);
		*reply = NULL;
		conn_drop(c);
		if ((rc = conn_open(c, deadline, err)) < 0)
			return rc;
		rc = conn_exchange(c, body, len, reply, reply_len, timeout_ms, deadline, err);
	}
	if (rc < 0) {
		/* a reply may still come: never take it for the next request's */
		free(*reply);
		*reply = NULL;
		*reply_len = 0;
		conn_drop(c);
	}
	return rc;
}
