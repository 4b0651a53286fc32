/* SPDX-License-Identifier: MIT */
/* log.h - leveled logging to stderr and an optional log file. Thread-safe.
 * The macros test the level before evaluating their arguments. */
#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern enum log_level log_level_stderr;
extern enum log_level log_level_max; /* max(stderr level, file level) */

/* Also write every message up to LOG_DEBUG to PATH (appending). 0 or -errno. */
int log_open_file(const char *path);
void log_close_file(void);
void log_set_stderr_level(enum log_level lvl);
/* Whether stderr is journald's stream ($JOURNAL_STREAM "DEV:INODE" matches
 * fd 2). log_write asks once, on its first line; log_detect_journal asks
 * again (after stderr was redirected). */
bool log_stderr_is_journal(void);
void log_detect_journal(void);

void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#ifndef LOG_MODULE
#define LOG_MODULE "vigil"
#endif

#define log_at(lvl, ...) do { \
	if ((lvl) <= log_level_max) log_write((lvl), LOG_MODULE, __VA_ARGS__); \
} while (0)
#define log_err(...) log_at(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_at(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_at(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_at(LOG_DEBUG, __VA_ARGS__)

#endif
