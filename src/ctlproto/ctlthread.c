/*
 * ctlthread: the control thread and its command mailbox (see ctlthread.h).
 *
 * Mailbox: one command at a time (the control thread is single-threaded):
 * fn/arg, an atomic state (IDLE -> POSTED by the control thread, POSTED ->
 * DONE by the packet thread, DONE -> IDLE by the control thread; release on
 * every store, acquire on every load, so fn's effects are visible to the
 * waiter), an eventfd that wakes the packet thread and one that wakes the
 * waiter.  A third eventfd asks the control thread to stop; `exited` tells
 * the stopping packet thread that no command can come any more.
 */
#include "ctlproto/ctlthread.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/err.h"
#include "common/file.h"

enum { IDLE = 0, POSTED = 1, DONE = 2 };

struct inart_ctlthread {
	struct inart_ctlsrv *srv;
	pthread_t th;
	int to_data, to_ctl, stop_fd;
	atomic_int state, exited;
	int serving; /* the thread runs (inart_ctlthread_serve) */
	inart_ctl_cmd_fn fn;
	void *arg;
};

static void ev_signal(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

static void ev_drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

static void *loop(void *arg)
{
	struct inart_ctlthread *t = arg;

	/* below the packet thread on a busy machine (errors ignored: only a
	 * matter of priority) */
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), 10) < 0) {
		/* not allowed: run at the same priority */
	}
	for (;;) {
		struct pollfd p[2] = {{inart_ctlsrv_fd(t->srv), POLLIN, 0},
				      {t->stop_fd, POLLIN, 0}};

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents & POLLIN)
			break;
		/* a large request's parse is freed by now: give the memory back
		 * (the resident size then says what the daemon holds) */
		if ((p[0].revents & POLLIN) && inart_ctlsrv_service(t->srv) > 0)
			malloc_trim(0);
	}
	atomic_store_explicit(&t->exited, 1, memory_order_release);
	ev_signal(t->to_data); /* wake a stopping packet thread */
	return NULL;
}

/* Close the socket and the event descriptors that are open, free t. */
static void thread_free(struct inart_ctlthread *t)
{
	inart_ctlsrv_close(t->srv);
	inart_fd_close(t->to_data);
	inart_fd_close(t->to_ctl);
	inart_fd_close(t->stop_fd);
	free(t);
}

struct inart_ctlthread *inart_ctlthread_open(const char *path, inart_ctl_handler_fn fn, void *ctx,
					     const struct inart_ctlsrv_opt *opt,
					     struct inart_err *err)
{
	struct inart_ctlthread *t = calloc(1, sizeof(*t));
	int rc;

	if (t == NULL) {
		inart_err_set(err, -ENOMEM, "out of memory");
		return inart_null_errno(ENOMEM);
	}
	t->to_data = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	t->to_ctl = eventfd(0, EFD_CLOEXEC);
	t->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (t->to_data < 0 || t->to_ctl < 0 || t->stop_fd < 0) {
		rc = errno;
		inart_err_set(err, -rc, "eventfd: %s", strerror(rc));
		goto fail;
	}
	t->srv = inart_ctlsrv_open_opt(path, fn, ctx, opt, err);
	if (t->srv == NULL) {
		rc = errno;
		goto fail;
	}
	return t;
fail:
	thread_free(t);
	return inart_null_errno(rc);
}

int inart_ctlthread_serve(struct inart_ctlthread *t, struct inart_err *err)
{
	int rc = pthread_create(&t->th, NULL, loop, t);

	if (rc != 0) {
		inart_err_set(err, -rc, "control thread: %s", strerror(rc));
		return -rc;
	}
	t->serving = 1;
	return 0;
}

struct inart_ctlthread *inart_ctlthread_start(const char *path, inart_ctl_handler_fn fn, void *ctx,
					      const struct inart_ctlsrv_opt *opt,
					      struct inart_err *err)
{
	struct inart_ctlthread *t = inart_ctlthread_open(path, fn, ctx, opt, err);
	int rc;

	if (t == NULL)
		return NULL;
	rc = inart_ctlthread_serve(t, err);
	if (rc < 0) {
		thread_free(t);
		return inart_null_errno(-rc);
	}
	return t;
}

void inart_ctlthread_stop(struct inart_ctlthread *t)
{
	if (t == NULL)
		return;
	if (!t->serving) {
		thread_free(t);
		return;
	}
	ev_signal(t->stop_fd);
	/* a request in progress may still need the packet thread */
	while (!atomic_load_explicit(&t->exited, memory_order_acquire)) {
		struct pollfd p = {t->to_data, POLLIN, 0};

		poll(&p, 1, 10);
		inart_ctlthread_run(t);
	}
	pthread_join(t->th, NULL);
	thread_free(t);
}

uint64_t inart_ctlthread_auth_failures(const struct inart_ctlthread *t)
{
	return t == NULL ? 0 : inart_ctlsrv_auth_failures(t->srv);
}

int inart_ctlthread_fd(const struct inart_ctlthread *t)
{
	return t->to_data;
}

int inart_ctlthread_run(struct inart_ctlthread *t)
{
	ev_drain(t->to_data); /* non-blocking: the state decides */
	if (atomic_load_explicit(&t->state, memory_order_acquire) != POSTED)
		return 0;
	t->fn(t->arg);
	atomic_store_explicit(&t->state, DONE, memory_order_release);
	ev_signal(t->to_ctl);
	return 1;
}

void inart_ctlthread_call(struct inart_ctlthread *t, inart_ctl_cmd_fn fn, void *arg)
{
	t->fn = fn;
	t->arg = arg;
	atomic_store_explicit(&t->state, POSTED, memory_order_release);
	ev_signal(t->to_data);
	while (atomic_load_explicit(&t->state, memory_order_acquire) != DONE)
		ev_drain(t->to_ctl);
	atomic_store_explicit(&t->state, IDLE, memory_order_relaxed);
}
