/* SPDX-License-Identifier: MIT */
/* log.c - leveled logging: stderr for people, a file (vigil-log.txt) for the
 * record. One mutex keeps lines whole across threads. When stderr is the
 * journal's stream (systemd's $JOURNAL_STREAM names its device and inode),
 * lines carry sd-daemon's "<N>" priority prefix instead of a time stamp,
 * so journald keeps each message's level and its own time. */
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include "util/log.h"
#include "util/banned.h" /* last: after every system header */

enum log_level log_level_stderr = LOG_WARN;
enum log_level log_level_max = LOG_WARN;
static FILE *log_file;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const level_names[] = { "error", "warn", "info", "debug" };
/* syslog priorities of the levels: err, warning, info, debug */
static const int level_prio[] = { 3, 4, 6, 7 };
static int journal_stderr = -1; /* -1 not yet looked at */

bool log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!js || sscanf(js, "%llu:%llu%c", &dev, &ino, &end) != 2)
		return false;
	if (fstat(2, &st) != 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_detect_journal(void)
{
	pthread_mutex_lock(&log_lock);
	journal_stderr = log_stderr_is_journal();
	pthread_mutex_unlock(&log_lock);
}

static void update_max(void)
{
	log_level_max = log_file ? LOG_DEBUG : log_level_stderr;
}

void log_set_stderr_level(enum log_level lvl)
{
	log_level_stderr = lvl;
	update_max();
}

int log_open_file(const char *path)
{
	FILE *f = fopen(path, "a");
	if (!f)
		return -errno;
	pthread_mutex_lock(&log_lock);
	if (log_file)
		fclose(log_file);
	log_file = f;
	setvbuf(log_file, NULL, _IOLBF, 0);
	update_max();
	pthread_mutex_unlock(&log_lock);
	return 0;
}

void log_close_file(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_file)
		fclose(log_file);
	log_file = NULL;
	update_max();
	pthread_mutex_unlock(&log_lock);
}

void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char stamp[32];
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(stamp, sizeof(stamp), "%02d:%02d:%02d.%03ld", tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	pthread_mutex_lock(&log_lock);
	if (journal_stderr < 0)
		journal_stderr = log_stderr_is_journal();
	if (lvl <= log_level_stderr) {
		if (journal_stderr)
			fprintf(stderr, "<%d>%s: ", level_prio[lvl], module);
		else
			fprintf(stderr, "%s %s %s: ", stamp, level_names[lvl], module);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	if (log_file) {
		fprintf(log_file, "%s %s %s: ", stamp, level_names[lvl], module);
		va_start(ap, fmt);
		vfprintf(log_file, fmt, ap);
		va_end(ap);
		fputc('\n', log_file);
	}
	pthread_mutex_unlock(&log_lock);
}
