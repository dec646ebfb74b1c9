/*
 * frame: what the two daemons (daemon/switchd, daemon/psd) share around
 * their packet loops: the options common to both (struct inart_daemon_cfg),
 * their check, the control side of every request (parsing, the node check,
 * log_level, the reply; each daemon's own ops behind), the control thread
 * (ctlproto/ctlthread: the UNIX socket and, with a key, TCP), the stop flag
 * set by SIGINT/SIGTERM, giving up root once the sockets are open, and
 * pinning packet threads to CPUs.
 *
 * Nothing here prints but through io/log, and nothing exits: every failure
 * is returned (an errno and a message in struct inart_err) to the caller,
 * the CLI, which exits.
 */
#ifndef INART_DAEMON_FRAME_H
#define INART_DAEMON_FRAME_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>

#include "common/err.h"
#include "ctlproto/ctlauth.h"
#include "ctlproto/ctlmsg.h"
#include "ctlproto/ctlsock.h"
#include "ctlproto/ctlthread.h"

/* The options of both daemons. */
struct inart_daemon_cfg {
	const char *name;	    /* node id (NULL: none; requests naming a node refused) */
	const char *ctl;	    /* the UNIX control socket (required) */
	const char *tcp, *key_file; /* --ctl-tcp HOST:PORT with --ctl-key FILE, or both NULL */
	int batch;		    /* frames / datagrams per batch, 1..1024 */
	int level;		    /* log level (io/log.h) */
	const char *user;	    /* drop root to this user after the sockets are open;
				       NULL or "root": keep the process's identity */
	int signals;		    /* 1: SIGINT/SIGTERM set inart_daemon_stop, SIGPIPE
				       ignored (the programs); 0: left alone (tests) */
	const char *deployment;	    /* a deployment file whose entry for name the
				       configuration must agree with (daemon/nodecfg;
				       checked with the rest); NULL: none */
};

/* Defaults: batch 64, log level info, user "nobody", signals on. */
void inart_daemon_cfg_init(struct inart_daemon_cfg *c);

/* c's values: --ctl given, batch in range, the TCP options together, the key
 * file readable and valid, the user known.  0 or -errno with err naming the
 * option at fault. */
int inart_daemon_cfg_check(const struct inart_daemon_cfg *c, struct inart_err *err);

/* The work of one request addressed to this daemon: 0 with the reply's data
 * in *data (stolen; NULL = none), or -errno with the reason in err (then
 * *data stays NULL); -EOPNOTSUPP for a request of the other daemon. */
typedef int inart_daemon_op_fn(void *ctx, struct inart_ctl_req *rq, json_t **data,
			       struct inart_err *err);

/* A daemon as its control handler sees it. */
struct inart_daemon_role {
	const char *role;  /* "switch", "PS" */
	const char *other; /* the other daemon's role */
	const char *name;  /* its --name (NULL: none) */
	inart_daemon_op_fn *op;
	void *ctx; /* op's */
};

/* A daemon's control handler (inart_ctl_handler_fn; daemon: a struct
 * inart_daemon_role): parse body, refuse a request addressed to another node
 * ("this is ROLE 'NAME', not 'X'") or meant for the other daemon ("'OP' is
 * a OTHER request; this is a ROLE"), answer log_level, hand anything else to
 * op; a refusal is logged.  Returns the reply to send. */
char *inart_daemon_serve(void *daemon, const char *body, size_t len);

/* Set by SIGINT and SIGTERM (with cfg.signals) or by the caller: a daemon's
 * loop ends when it is set (within a second).  A process runs each daemon
 * at most once at a time; clear it before starting again. */
extern volatile sig_atomic_t inart_daemon_stop;

/* Open c's control socket(s) for d, without serving yet (so that a
 * request is parsed only after inart_daemon_drop).  NULL with err. */
struct inart_ctlthread *inart_daemon_open(const struct inart_daemon_cfg *c,
					  struct inart_daemon_role *d, struct inart_err *err);

/* Give up root (c->user; nothing if NULL, "root" or not root): supplementary
 * groups, gid, uid, in that order, no capability kept (every socket the
 * daemons use is open by then) and no way back (checked).  bpf_fd >= 0: the
 * daemon keeps using BPF objects (maps, test runs) after the drop, bpf_fd one
 * of them: where the kernel refuses bpf() to the target user (kernels
 * 5.19..6.4 with kernel.unprivileged_bpf_disabled refuse every command,
 * later ones only loading; inart_daemon_bpf_refused asks), CAP_BPF alone is
 * kept, and the log line says so.  Then install the signal handlers
 * (c->signals).  0 or -errno with err. */
int inart_daemon_drop(const struct inart_daemon_cfg *c, int bpf_fd, struct inart_err *err);

struct passwd;
/* inart_daemon_drop's two parts (tests call them alone).  _drop_ids: become
 * pw's user, keeping CAP_BPF (effective and permitted) if keep_bpf, root out
 * of reach (checked), no new privileges by exec; 0 or -errno with err.
 * _bpf_refused: in a child process dropped to pw's user, is
 * BPF_OBJ_GET_INFO_BY_FD on bpf_fd refused (EPERM)?  1 yes, 0 no, -errno
 * if the child could not tell. */
int inart_daemon_drop_ids(const struct passwd *pw, int keep_bpf, struct inart_err *err);
int inart_daemon_bpf_refused(const struct passwd *pw, int bpf_fd);

/* The packet threads' CPUs (--cores): the CPUs this process may run on, in
 * order, into cpus[0..CPU_SETSIZE); their count, or -errno with err. */
int inart_daemon_cpus(int *cpus, struct inart_err *err);
/* Pin thread th to cpu (best effort: a failure leaves it unpinned). */
void inart_daemon_pin(pthread_t th, int cpu);

#endif
