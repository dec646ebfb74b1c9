/*
 * log: leveled lines on stderr for the daemons (see log.h).  One fprintf per
 * line (stdio locks the stream, so lines from threads do not interleave).
 * State: the program name and the level, process-wide.
 */
#include "io/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *log_prog = "inart";
static int log_lvl = INART_LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void inart_log_init(const char *prog, int level)
{
	if (prog != NULL)
		log_prog = prog;
	inart_log_set_level(level);
}

void inart_log_set_level(int level)
{
	if (level < INART_LOG_ERROR)
		level = INART_LOG_ERROR;
	if (level > INART_LOG_DEBUG)
		level = INART_LOG_DEBUG;
	log_lvl = level;
}

int inart_log_level(void)
{
	return log_lvl;
}

int inart_log_parse_level(const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(name, level_names[i]) == 0)
			return i;
	if (strcmp(name, "warning") == 0)
		return INART_LOG_WARN;
	return -1;
}

const char *inart_log_level_name(int level)
{
	if (level < 0 || level > INART_LOG_DEBUG)
		return "?";
	return level_names[level];
}

void inart_log(int level, const char *fmt, ...)
{
	char msg[1024];
	struct timespec ts;
	va_list ap;

	if (level > log_lvl)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "[%ld.%03ld] %s: %s: %s\n", (long)ts.tv_sec, ts.tv_nsec / 1000000, log_prog,
		inart_log_level_name(level), msg);
}
