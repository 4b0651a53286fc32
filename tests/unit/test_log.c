/* SPDX-License-Identifier: MIT */
/* test_log.c - log lines on stderr: a time stamp and the level's name for a
 * terminal or file; sd-daemon's "<N>" priority prefix, and no stamp, when
 * stderr is the stream systemd's $JOURNAL_STREAM names (as under a unit). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "util/log.h"

/* Point fd 2 at a fresh file; its content after the calls. */
static void capture(const char *name, bool as_journal, char *out, size_t len)
{
	char path[512], js[64];
	struct stat st;
	ssize_t n;
	int fd, saved;

	snprintf(path, sizeof(path), "%s/%s", unit_tmpdir(), name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0);
	fflush(stderr);
	saved = dup(2);
	CHECK(dup2(fd, 2) == 2);
	if (as_journal) {
		snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
		setenv("JOURNAL_STREAM", js, 1);
	} else {
		setenv("JOURNAL_STREAM", "1:1", 1); /* some other stream: not ours */
	}
	log_detect_journal();
	log_set_stderr_level(LOG_INFO);
	log_write(LOG_ERR, "unit", "broken %d", 1);
	log_write(LOG_WARN, "unit", "odd");
	log_write(LOG_INFO, "unit", "fine");
	log_write(LOG_DEBUG, "unit", "not shown");
	fflush(stderr);
	CHECK(dup2(saved, 2) == 2);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	log_detect_journal();
	n = pread(fd, out, len - 1, 0);
	CHECK(n >= 0);
	out[n] = '\0';
	close(fd);
}

TEST(log_journal_stream_gets_priority_prefixes)
{
	char buf[1024];

	capture("journal.txt", true, buf, sizeof(buf));
	CHECK_STR(buf, "<3>unit: broken 1\n<4>unit: odd\n<6>unit: fine\n");
}

TEST(log_other_stderr_keeps_stamp_and_level)
{
	char buf[1024];
	int h, m, s, ms;
	char lvl[16], rest[64];

	capture("plain.txt", false, buf, sizeof(buf));
	CHECK(strstr(buf, "<3>") == NULL);
	CHECK(sscanf(buf, "%2d:%2d:%2d.%3d %15s unit: %63[^\n]", &h, &m, &s, &ms, lvl, rest) == 6);
	CHECK_STR(lvl, "error");
	CHECK_STR(rest, "broken 1");
	CHECK(strstr(buf, " warn unit: odd\n") != NULL);
	CHECK(strstr(buf, " info unit: fine\n") != NULL);
	CHECK(strstr(buf, "not shown") == NULL);
}
