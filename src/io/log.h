/*
 * log: leveled log lines on standard error, for the daemons (switchd, ps)
 * only -- libraries never print.  A line is "inart-<prog>: <level>: message"
 * with a monotonic timestamp; the level can be changed at run time (the
 * control socket's "log_level" request).  Not for the per-packet path: the
 * daemons log events (control requests, errors, periodic summaries), never
 * individual packets.
 */
#ifndef INART_LOG_H
#define INART_LOG_H

#include "common/err.h" /* INART_PRINTF */

enum inart_log_level {
	INART_LOG_ERROR = 0,
	INART_LOG_WARN = 1,
	INART_LOG_INFO = 2,
	INART_LOG_DEBUG = 3,
};

/* Program name in every line (a static string; default "inart"). */
void inart_log_init(const char *prog, int level);
void inart_log_set_level(int level);
int inart_log_level(void);

/* Level for a name ("error", "warn", "info", "debug"), or -1. */
int inart_log_parse_level(const char *name);
const char *inart_log_level_name(int level);

void inart_log(int level, const char *fmt, ...) INART_PRINTF(2, 3);

#define inart_log_error(...) inart_log(INART_LOG_ERROR, __VA_ARGS__)
#define inart_log_warn(...) inart_log(INART_LOG_WARN, __VA_ARGS__)
#define inart_log_info(...) inart_log(INART_LOG_INFO, __VA_ARGS__)
#define inart_log_debug(...)                                                                       \
	do {                                                                                       \
		if (inart_log_level() >= INART_LOG_DEBUG)                                          \
			inart_log(INART_LOG_DEBUG, __VA_ARGS__);                                   \
	} while (0)

#endif
