/*
 * frame: the daemons' shared frame (see frame.h): the common options and
 * their check, the control handler around each daemon's ops, the control
 * socket opened before and served after the privilege drop, the stop flag.
 */
#include "daemon/frame.h"

#include <errno.h>
#include <grp.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "io/log.h"

volatile sig_atomic_t inart_daemon_stop;

void inart_daemon_cfg_init(struct inart_daemon_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->batch = 64;
	c->level = INART_LOG_INFO;
	c->user = "nobody";
	c->signals = 1;
}

/* The user to become: 0 and *pw, 1 if none (NULL, "root"), -errno. */
static int target_user(const char *user, struct passwd *pw, char *buf, size_t len,
		       struct inart_err *err)
{
	struct passwd *res = NULL;
	int rc;

	if (user == NULL || strcmp(user, "root") == 0)
		return 1;
	rc = getpwnam_r(user, pw, buf, len, &res);
	if (res == NULL) {
		rc = rc ? rc : ENOENT;
		inart_err_set(err, -rc, "--user: no user '%s'%s%s", user, rc == ENOENT ? "" : ": ",
			      rc == ENOENT ? "" : strerror(rc));
		return -rc;
	}
	return 0;
}

int inart_daemon_cfg_check(const struct inart_daemon_cfg *c, struct inart_err *err)
{
	struct inart_ctl_key key;
	struct passwd pw;
	char buf[1024];
	int rc;

	if (c->ctl == NULL || c->ctl[0] == '\0') {
		inart_err_set(err, -EINVAL, "--ctl PATH is required");
		return -EINVAL;
	}
	if (c->batch < 1 || c->batch > 1024) {
		inart_err_set(err, -EINVAL, "--batch: %d is not in 1..1024", c->batch);
		return -EINVAL;
	}
	if ((c->tcp == NULL) != (c->key_file == NULL)) {
		inart_err_set(err, -EINVAL, "--ctl-tcp and --ctl-key go together");
		return -EINVAL;
	}
	if (c->key_file != NULL) {
		rc = inart_ctl_key_load(c->key_file, &key, err);
		memset(&key, 0, sizeof(key));
		if (rc < 0)
			return rc;
	}
	rc = target_user(c->user, &pw, buf, sizeof(buf), err);
	return rc < 0 ? rc : 0;
}

char *inart_daemon_serve(void *daemon, const char *body, size_t len)
{
	const struct inart_daemon_role *d = daemon;
	const char *name = d->name;
	struct inart_ctl_req rq;
	struct inart_err why = {{0}};
	json_t *data = NULL;
	char *reply;
	int rc;

	rc = inart_ctl_req_parse(body, len, &rq, &why);
	if (rc < 0) {
		const char *reason = rc == -ENOMEM ? "out of memory" : why.msg;

		inart_log_warn("control: refused a malformed request: %s", reason);
		return inart_ctl_reply_err(reason);
	}
	if (rq.node[0] && (name == NULL || strcmp(rq.node, name) != 0)) {
		inart_err_set(&why, 0, "this is %s '%s', not '%s'", d->role, name ? name : "",
			      rq.node);
		rc = -EINVAL;
	} else if (rq.op == INART_CTL_LOG_LEVEL) {
		inart_log_set_level(rq.level);
		inart_log_info("log level %s", inart_log_level_name(rq.level));
	} else {
		rc = d->op(d->ctx, &rq, &data, &why);
		if (rc == -EOPNOTSUPP) {
			inart_err_set(&why, 0, "'%s' is a %s request; this is a %s",
				      inart_ctl_op_name(rq.op), d->other, d->role);
			rc = -EINVAL;
		}
	}
	if (rc < 0) {
		inart_log_warn("control: %s refused: %s", inart_ctl_op_name(rq.op), why.msg);
		json_decref(data);
		reply = inart_ctl_reply_err(why.msg);
	} else {
		reply = inart_ctl_reply_ok(data);
	}
	inart_ctl_req_free(&rq);
	return reply;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	inart_daemon_stop = 1;
}

struct inart_ctlthread *inart_daemon_open(const struct inart_daemon_cfg *c,
					  struct inart_daemon_role *d, struct inart_err *err)
{
	struct inart_ctlsrv_opt opt, *o = NULL;
	struct inart_ctl_key key;
	struct inart_ctlthread *ct;

	d->name = c->name;
	if (c->tcp != NULL && c->key_file != NULL) {
		if (inart_ctl_key_load(c->key_file, &key, err) < 0)
			return NULL;
		inart_ctlsrv_opt_default(&opt);
		opt.tcp = c->tcp;
		opt.key = &key; /* copied by the server */
		o = &opt;
	}
	ct = inart_ctlthread_open(c->ctl, inart_daemon_serve, d, o, err);
	memset(&key, 0, sizeof(key));
	return ct;
}

/* Effective and permitted: CAP_BPF alone (keep 1) or nothing; inheritable
 * nothing.  0 or -errno. */
static int caps_set(int keep)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (keep) {
		d[CAP_BPF / 32].effective = d[CAP_BPF / 32].permitted = 1u << (CAP_BPF % 32);
	}
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int inart_daemon_drop_ids(const struct passwd *pw, int keep_bpf, struct inart_err *err)
{
	int rc = 0;

	/* groups first (they need root), then the gid, then the uid;
	   setresuid to a non-root uid clears every capability unless
	   PR_SET_KEEPCAPS, which keep_bpf sets for the moment of the switch and
	   caps_set then narrows to CAP_BPF */
	if (keep_bpf && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
		rc = -errno;
		goto out;
	}
	if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0) {
		rc = -errno;
		goto out;
	}
	if (keep_bpf && ((rc = caps_set(1)) < 0 || prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)) {
		rc = rc < 0 ? rc : -errno;
		goto out;
	}
	if (setuid(0) == 0 || geteuid() == 0) {
		inart_err_set(err, -EPERM, "--user %s: root could be regained", pw->pw_name);
		return -EPERM;
	}
	/* and none to gain through exec */
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
out:
	if (rc < 0)
		inart_err_set(err, rc, "--user %s: cannot drop root%s: %s", pw->pw_name,
			      keep_bpf ? " keeping CAP_BPF" : "", strerror(-rc));
	return rc;
}

int inart_daemon_bpf_refused(const struct passwd *pw, int bpf_fd)
{
	struct bpf_prog_info info;
	union bpf_attr a;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* the child (one thread): drop as inart_daemon_drop_ids, ask, exit */
		if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
		    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
			_exit(2);
		memset(&a, 0, sizeof(a));
		memset(&info, 0, sizeof(info));
		a.info.bpf_fd = (__u32)bpf_fd;
		a.info.info_len = sizeof(info);
		a.info.info = (__u64)(unsigned long)&info;
		if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) == 0)
			_exit(0);
		_exit(errno == EPERM ? 1 : 3);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 2)
		return -EIO;
	return WEXITSTATUS(st) == 1; /* 3: refused, but not for want of privilege */
}

int inart_daemon_drop(const struct inart_daemon_cfg *c, int bpf_fd, struct inart_err *err)
{
	struct passwd pw;
	char buf[1024];
	int keep = 0, rc = geteuid() == 0 ? target_user(c->user, &pw, buf, sizeof(buf), err) : 1;

	if (rc < 0)
		return rc;
	if (rc == 0) {
		if (bpf_fd >= 0) {
			keep = inart_daemon_bpf_refused(&pw, bpf_fd);
			if (keep < 0)
				return inart_err_set(err, keep,
						     "--user %s: cannot check whether BPF stays "
						     "usable: %s",
						     c->user, strerror(-keep));
		}
		rc = inart_daemon_drop_ids(&pw, keep, err);
		if (rc < 0)
			return rc;
		if (keep)
			inart_log_info("running as user %s (uid %u, gid %u), CAP_BPF kept: this "
				       "kernel refuses BPF to other users "
				       "(kernel.unprivileged_bpf_disabled)",
				       c->user, (unsigned)pw.pw_uid, (unsigned)pw.pw_gid);
		else
			inart_log_info("running as user %s (uid %u, gid %u), no capabilities",
				       c->user, (unsigned)pw.pw_uid, (unsigned)pw.pw_gid);
	}
	if (c->signals) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		signal(SIGPIPE, SIG_IGN);
	}
	return 0;
}

int inart_daemon_cpus(int *cpus, struct inart_err *err)
{
	cpu_set_t allowed;
	int n = 0;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return inart_err_set(err, -errno, "sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	return n;
}

void inart_daemon_pin(pthread_t th, int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_setaffinity_np(th, sizeof(one), &one);
}
