/*
 * ctlsock: the control socket's server (see ctlsock.h); its client is
 * ctlclient.c, the addresses both use are ctladdr.c.
 *
 * Server state: the listening socket, a periodic timer and up to
 * max_clients connections, each with an input buffer (grown up to one whole
 * message, never beyond INART_CTL_MAX_MSG + header: the length is checked
 * before the body is buffered), an output buffer of pending reply bytes, the
 * time of its last activity and the time its current request (or reply)
 * began.  While a connection has output pending, its input is not read (one
 * request at a time, replies in order).  All sockets are non-blocking and
 * registered in the server's own epoll instance (data.ptr = the connection,
 * NULL = the listener, &timer_tag = the timer, which fires every quarter of
 * the shortest limit so that expiry needs no help from the caller).
 */
#include "ctlproto/ctlsock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "common/file.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctladdr.h"
#include "ctlproto/ctlauth.h"

/* An unauthenticated TCP client must complete the handshake this fast. */
#define AUTH_MS 2000

struct conn {
	int fd;
	int tcp, authed; /* a TCP client; it completed the handshake */
	uint8_t ns[INART_AUTH_NONCE], ks[INART_AUTH_MAC];
	uint64_t seq_in, seq_out; /* frames received and sent (MACs) */
	int64_t accepted_ms;	  /* TCP: the handshake's deadline counts from here */
	uint8_t *in;
	size_t in_len, in_cap;
	uint8_t *out;
	size_t out_len, out_off;
	int closing;	  /* close once the output is flushed */
	int dead;	  /* peer gone or error: close now */
	int64_t last_ms;  /* last byte in or out */
	int64_t begun_ms; /* the current request's first byte, or its reply's queueing; 0 */
};

struct inart_ctlsrv {
	int lfd, ep, tfd;
	int tcp_fd, tcp_port; /* the TCP listener (-1: none) and its port */
	struct inart_ctl_key key;
	uint64_t auth_failures;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	inart_ctl_handler_fn fn;
	void *ctx;
	struct inart_ctlsrv_opt opt;
	struct conn *conns[INART_CTLSRV_MAX_CLIENTS];
};

static char timer_tag, tcp_tag;

void inart_ctlsrv_opt_default(struct inart_ctlsrv_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->max_clients = INART_CTLSRV_MAX_CLIENTS;
	o->idle_ms = 10000;
	o->request_ms = 30000;
}

struct inart_ctlsrv *inart_ctlsrv_open(const char *path, inart_ctl_handler_fn fn, void *ctx,
				       struct inart_err *err)
{
	return inart_ctlsrv_open_opt(path, fn, ctx, NULL, err);
}

/* The timer: every quarter of the shortest limit (at least 10 ms). */
static int timer_start(struct inart_ctlsrv *s)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &timer_tag};
	int ms = s->opt.idle_ms < s->opt.request_ms ? s->opt.idle_ms : s->opt.request_ms;
	struct itimerspec it;

	ms = ms / 4 < 10 ? 10 : ms / 4;
	it.it_interval.tv_sec = ms / 1000;
	it.it_interval.tv_nsec = (long)(ms % 1000) * 1000000;
	it.it_value = it.it_interval;
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->tfd < 0 || timerfd_settime(s->tfd, 0, &it, NULL) < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->tfd, &ev) < 0)
		return -errno;
	return 0;
}
/* The optional TCP listener (opt->tcp, with opt->key).  0 or -errno. */
static int tcp_listen(struct inart_ctlsrv *s, const struct inart_ctlsrv_opt *opt,
		      struct inart_err *err)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &tcp_tag};
	int one = 1, rc;

	if (opt->key == NULL || opt->key->len < INART_AUTH_KEY_MIN)
		return inart_err_set(err, -EINVAL, "%s: a TCP control listener needs a key",
				     opt->tcp);
	if ((rc = inart_ctl_addr_tcp(opt->tcp, &a)) < 0)
		return inart_err_set(err, rc, "%s: not HOST:PORT (an IPv4 address or name)",
				     opt->tcp);
	s->key = *opt->key;
	s->tcp_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->tcp_fd < 0 ||
	    setsockopt(s->tcp_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(s->tcp_fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s->tcp_fd, 16) < 0 ||
	    getsockname(s->tcp_fd, (struct sockaddr *)&a, &alen) < 0 ||
	    epoll_ctl(s->ep, EPOLL_CTL_ADD, s->tcp_fd, &ev) < 0)
		return inart_err_set(err, -errno, "%s: %s", opt->tcp, strerror(errno));
	s->tcp_port = ntohs(a.sin_port);
	return 0;
}

int inart_ctlsrv_tcp_port(const struct inart_ctlsrv *s)
{
	return s->tcp_fd >= 0 ? s->tcp_port : -1;
}

uint64_t inart_ctlsrv_auth_failures(const struct inart_ctlsrv *s)
{
	return s->auth_failures;
}

/* Release what a server holds (its descriptors that are open, its key);
 * neither its clients nor its socket file. */
static void srv_free(struct inart_ctlsrv *s)
{
	inart_fd_close(s->tcp_fd);
	inart_fd_close(s->lfd);
	inart_fd_close(s->ep);
	inart_fd_close(s->tfd);
	OPENSSL_cleanse(&s->key, sizeof(s->key));
	free(s);
}

struct inart_ctlsrv *inart_ctlsrv_open_opt(const char *path, inart_ctl_handler_fn fn, void *ctx,
					   const struct inart_ctlsrv_opt *opt,
					   struct inart_err *err)
{
	struct inart_ctlsrv *s;
	struct sockaddr_un a;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	struct stat st;
	int rc;

	if (inart_ctl_addr_unix(&a, path) < 0) {
		inart_err_set(err, -ENAMETOOLONG, "%s: control socket path too long (at most %zu)",
			      path, sizeof(a.sun_path) - 1);
		return inart_null_errno(ENAMETOOLONG);
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->lfd = s->ep = s->tfd = s->tcp_fd = -1;
	s->fn = fn;
	s->ctx = ctx;
	inart_ctlsrv_opt_default(&s->opt);
	if (opt != NULL) {
		if (opt->max_clients >= 1 && opt->max_clients <= INART_CTLSRV_MAX_CLIENTS)
			s->opt.max_clients = opt->max_clients;
		if (opt->idle_ms > 0)
			s->opt.idle_ms = opt->idle_ms;
		if (opt->request_ms > 0)
			s->opt.request_ms = opt->request_ms;
	}
	strcpy(s->path, path);
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			inart_err_set(err, -EEXIST, "%s: exists and is not a socket", path);
			rc = EEXIST;
			goto fail;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(probe);
			inart_err_set(err, -EADDRINUSE, "%s: another daemon is listening there",
				      path);
			rc = EADDRINUSE;
			goto fail;
		}
		inart_fd_close(probe);
		unlink(path); /* stale: its daemon is gone */
	}
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s->lfd, 16) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "%s: %s", path, strerror(rc));
		goto fail;
	}
	chmod(path, 0600);
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0 || timer_start(s) < 0) {
		rc = errno;
		inart_err_set(err, -rc, "%s: epoll: %s", path, strerror(rc));
		unlink(path);
		goto fail;
	}
	if (opt != NULL && opt->tcp != NULL && (rc = -tcp_listen(s, opt, err)) > 0) {
		unlink(path);
		goto fail;
	}
	return s;
fail:
	srv_free(s);
	return inart_null_errno(rc);
}

static void conn_close(struct inart_ctlsrv *s, int i)
{
	struct conn *c = s->conns[i];

	if (c == NULL)
		return;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
	s->conns[i] = NULL;
}

void inart_ctlsrv_close(struct inart_ctlsrv *s)
{
	if (s == NULL)
		return;
	for (int i = 0; i < INART_CTLSRV_MAX_CLIENTS; i++)
		conn_close(s, i);
	unlink(s->path);
	srv_free(s);
}

int inart_ctlsrv_fd(const struct inart_ctlsrv *s)
{
	return s->ep;
}

static void conn_events(struct inart_ctlsrv *s, struct conn *c)
{
	struct epoll_event ev = {.events = c->out_len > c->out_off ? EPOLLOUT : EPOLLIN,
				 .data.ptr = c};

	epoll_ctl(s->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Queue a reply frame (body may be NULL: out of memory). */
static void conn_reply(struct conn *c, char *body)
{
	static const char oom[] = "{\"ok\":false,\"reason\":\"out of memory\"}";
	const char *b = body ? body : oom;
	size_t n = strlen(b), mac = c->tcp ? INART_AUTH_MAC : 0;
	uint8_t *o = malloc(n + INART_CTL_HDR_LEN + mac);

	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (o == NULL) {
		c->closing = 1;
	} else {
		inart_ctl_frame_hdr(o, (uint32_t)n);
		memcpy(o + INART_CTL_HDR_LEN, b, n);
		c->out = o;
		c->out_len = n + INART_CTL_HDR_LEN + mac;
		if (c->tcp && inart_ctlauth_mac(c->ks, 1, c->seq_out++, o, n + INART_CTL_HDR_LEN,
						o + n + INART_CTL_HDR_LEN) < 0)
			c->closing = 1;
	}
	c->begun_ms = inart_now_ms(); /* the reply must leave within request_ms */
	free(body);
}

/* Write pending output; 0, or -1 if the connection must be closed. */
static int conn_flush(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		c->out_off += (size_t)w;
		c->last_ms = inart_now_ms();
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	c->begun_ms = c->in_len > 0 ? c->last_ms : 0;
	return c->closing ? -1 : 0;
}

/* Handle the first whole request in the input buffer.  Returns 1 if one was
 * handled (its reply queued), else 0. */
static int conn_dispatch(struct inart_ctlsrv *s, struct conn *c)
{
	uint32_t n;
	int rc = inart_ctl_frame_check(c->in, c->in_len, &n);
	size_t total;

	if (rc < 0) {
		conn_reply(c, inart_ctl_reply_err("bad frame: length 0 or above the limit"));
		c->closing = 1;
		return 0;
	}
	if (rc == 0)
		return 0;
	total = INART_CTL_HDR_LEN + (size_t)n;
	if (c->tcp) { /* the frame's MAC follows it (conn_read waited for it) */
		if (inart_ctlauth_verify(c->ks, 0, c->seq_in++, c->in, total, c->in + total) < 0) {
			s->auth_failures++;
			c->dead = 1;
			return 0;
		}
		total += INART_AUTH_MAC;
		n = (uint32_t)(total - INART_CTL_HDR_LEN - INART_AUTH_MAC);
	}
	conn_reply(c, s->fn(s->ctx, (const char *)c->in + INART_CTL_HDR_LEN, n));
	memmove(c->in, c->in + total, c->in_len - total);
	c->in_len -= total;
	if (c->in_len == 0 && c->out_len == c->out_off)
		c->begun_ms = 0;
	return 1;
}

/* A TCP client's answer to the hello (the first INART_AUTH_ANSWER bytes of
 * its input): the proof queued and the session key kept, or -EACCES
 * (counted; the connection is to be closed, nothing of it is read). */
static int conn_auth(struct inart_ctlsrv *s, struct conn *c)
{
	uint8_t *o = malloc(INART_AUTH_MAC);

	if (o == NULL)
		return -ENOMEM;
	if (inart_ctlauth_check(&s->key, c->ns, c->in, o, c->ks) < 0) {
		free(o);
		s->auth_failures++;
		return -EACCES;
	}
	c->authed = 1;
	memmove(c->in, c->in + INART_AUTH_ANSWER, c->in_len - INART_AUTH_ANSWER);
	c->in_len -= INART_AUTH_ANSWER;
	free(c->out);
	c->out = o;
	c->out_len = INART_AUTH_MAC;
	c->out_off = 0;
	c->begun_ms = c->in_len > 0 ? inart_now_ms() : 0;
	return 0;
}

/* Read what is available and handle whole requests.  Returns requests
 * handled; sets c->dead when the connection must be closed. */
static int conn_read(struct inart_ctlsrv *s, struct conn *c)
{
	int handled = 0;

	for (;;) {
		uint32_t n = 0;
		size_t want;
		ssize_t r;
		int rc;

		if (c->out_len > c->out_off)
			return handled; /* reply pending: read later */
		if (c->tcp && !c->authed) {
			if (c->in_len >= INART_AUTH_ANSWER) {
				if (conn_auth(s, c) < 0 || conn_flush(c) < 0) {
					c->dead = 1;
					return handled;
				}
				continue;
			}
			want = INART_AUTH_ANSWER;
			rc = 0;
		} else {
			rc = inart_ctl_frame_check(c->in, c->in_len, &n);
			if (rc > 0 && c->tcp &&
			    c->in_len < INART_CTL_HDR_LEN + (size_t)n + INART_AUTH_MAC)
				rc = 0; /* its MAC is not all here yet */
			want = c->in_len < INART_CTL_HDR_LEN
				   ? 0
				   : INART_CTL_HDR_LEN + (size_t)n + (c->tcp ? INART_AUTH_MAC : 0);
		}
		if (rc != 0) {
			handled += conn_dispatch(s, c);
			if (c->dead || conn_flush(c) < 0) {
				c->dead = 1;
				return handled;
			}
			continue;
		}
		/* need more: grow to the header or to the whole message */
		if (want < 4096)
			want = 4096;
		if (c->in_cap < want) {
			uint8_t *b = realloc(c->in, want);

			if (b == NULL) {
				c->dead = 1;
				return handled;
			}
			c->in = b;
			c->in_cap = want;
		}
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
				c->dead = 1;
			return handled;
		}
		c->last_ms = inart_now_ms();
		if (c->in_len == 0)
			c->begun_ms = c->last_ms;
		c->in_len += (size_t)r;
	}
}

/* A free connection slot: an empty one, else the place of the client idle
 * the longest (nothing in progress), which is closed; -1 if all are busy. */
static int free_slot(struct inart_ctlsrv *s)
{
	int best = -1;

	for (int i = 0; i < s->opt.max_clients; i++) {
		const struct conn *c = s->conns[i];

		if (c == NULL)
			return i;
		if (c->tcp && !c->authed) { /* a stranger gives way first */
			if (best < 0 || !(s->conns[best]->tcp && !s->conns[best]->authed) ||
			    c->last_ms < s->conns[best]->last_ms)
				best = i;
			continue;
		}
		if (best >= 0 && s->conns[best]->tcp && !s->conns[best]->authed)
			continue;
		if (c->begun_ms == 0 && c->out_len == c->out_off && c->in_len == 0 &&
		    (best < 0 || c->last_ms < s->conns[best]->last_ms))
			best = i;
	}
	if (best >= 0)
		conn_close(s, best);
	return best;
}

static void accept_all(struct inart_ctlsrv *s, int tcp)
{
	for (;;) {
		int fd =
			accept4(tcp ? s->tcp_fd : s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC),
		    i;
		struct conn *c;
		struct epoll_event ev;

		if (fd < 0)
			return;
		i = free_slot(s);
		c = i >= 0 ? calloc(1, sizeof(*c)) : NULL;
		if (c != NULL && tcp) { /* the hello goes first */
			c->tcp = 1;
			c->out = malloc(INART_AUTH_HELLO);
			if (c->out == NULL || inart_ctlauth_hello(c->out, c->ns) < 0) {
				free(c->out);
				free(c);
				c = NULL;
			} else {
				c->out_len = INART_AUTH_HELLO;
			}
		}
		if (c == NULL) {
			close(fd); /* every client is in the middle of a request */
			continue;
		}
		c->fd = fd;
		c->last_ms = inart_now_ms();
		c->accepted_ms = c->last_ms;
		c->begun_ms = tcp ? c->last_ms : 0; /* the handshake is in progress */
		ev.events = c->out_len > 0 ? EPOLLOUT : EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		s->conns[i] = c;
	}
}

/* Close clients idle for idle_ms; answer a request not complete within
 * request_ms with an error and close its client; drop a reply its client did
 * not read within request_ms. */
static void expire(struct inart_ctlsrv *s)
{
	int64_t now = inart_now_ms();

	for (int i = 0; i < INART_CTLSRV_MAX_CLIENTS; i++) {
		struct conn *c = s->conns[i];

		if (c == NULL)
			continue;
		if (c->tcp && !c->authed && now - c->accepted_ms >= AUTH_MS) {
			s->auth_failures++; /* no valid answer in time */
			conn_close(s, i);
			continue;
		}
		if (c->out_len > c->out_off) {
			if (now - c->begun_ms >= s->opt.request_ms)
				conn_close(s, i);
		} else if (c->in_len > 0) {
			if (now - c->begun_ms >= s->opt.request_ms) {
				conn_reply(c, inart_ctl_reply_err("request not complete in time"));
				c->closing = 1;
				if (conn_flush(c) < 0 || c->out_len > c->out_off)
					conn_close(s, i);
			}
		} else if (now - c->last_ms >= s->opt.idle_ms) {
			conn_close(s, i);
		}
	}
}

int inart_ctlsrv_clients(const struct inart_ctlsrv *s)
{
	int n = 0;

	for (int i = 0; i < INART_CTLSRV_MAX_CLIENTS; i++)
		n += s->conns[i] != NULL;
	return n;
}

int inart_ctlsrv_service(struct inart_ctlsrv *s)
{
	struct epoll_event evs[16];
	int n, handled = 0;

	n = epoll_wait(s->ep, evs, 16, 0);
	for (int k = 0; k < n; k++) {
		struct conn *c = evs[k].data.ptr;
		int i;

		if (evs[k].data.ptr == &timer_tag) {
			uint64_t ticks;

			if (read(s->tfd, &ticks, sizeof(ticks)) < 0) {
				/* nothing to read: a spurious wake-up */
			}
			expire(s);
			continue;
		}
		if (c == NULL || evs[k].data.ptr == &tcp_tag) {
			accept_all(s, c != NULL);
			continue;
		}
		for (i = 0; i < INART_CTLSRV_MAX_CLIENTS && s->conns[i] != c; i++)
			;
		if (i == INART_CTLSRV_MAX_CLIENTS)
			continue; /* closed earlier in this round */
		if (c->out_len > c->out_off && conn_flush(c) < 0)
			c->dead = 1;
		if (!c->dead && !(c->out_len > c->out_off))
			handled += conn_read(s, c);
		if (c->dead || (evs[k].events & (EPOLLERR | EPOLLHUP) && c->out_len == c->out_off))
			conn_close(s, i);
		else
			conn_events(s, c);
	}
	return handled;
}
