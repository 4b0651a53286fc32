/* SPDX-License-Identifier: MIT */
/* live_relay.c - the worker's live view switch and reader of the runner's
 * live files and output (see live_relay.h). Reads the runner's files;
 * never writes anything but live.on. */
#define LOG_MODULE "worker"
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "worker/live_relay.h"
#include "util/banned.h" /* last: after every system header */

void live_relay_set(struct live_relay *l, const char *out_dir, const char *log, bool on)
{
	struct stat st;
	char *p;

	if (l->on == on)
		return;
	p = path_join(out_dir, "live.on");
	if (!p)
		return;
	if (on) {
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			/* The runner has not made its directory yet: the next
			 * reply saying "live" tries again. */
			log_debug("live view: cannot create '%s' yet: %s", p, strerror(errno));
			free(p);
			return;
		}
		close(fd);
		log_info("live view on: someone watches");
		/* Everything anew for the new viewers: the frame, the note, the
		 * output's tail. */
		l->sent_seq = 0;
		memset(&l->note_mtime, 0, sizeof(l->note_mtime));
		l->log_pos = stat(log, &st) == 0 && st.st_size > (off_t)LIVE_RELAY_LOG_MAX
				     ? st.st_size - (off_t)LIVE_RELAY_LOG_MAX
				     : 0;
	} else {
		unlink(p);
		log_info("live view off");
	}
	l->on = on;
	free(p);
}

/* The runner output after l->log_pos (at most LIVE_RELAY_LOG_MAX bytes,
 * whole lines unless one line alone is that long), as a JSON string; NULL
 * when there is none. Bytes that are not UTF-8 become '?'. */
static json_t *log_text(struct live_relay *l, const char *log)
{
	char buf[LIVE_RELAY_LOG_MAX];
	struct stat st;
	size_t n = 0, skip = 0, i;
	ssize_t got;
	json_t *s;
	int fd;

	if (stat(log, &st) || st.st_size <= l->log_pos)
		return NULL;
	if (st.st_size - l->log_pos > (off_t)sizeof(buf)) {
		l->log_pos = st.st_size - (off_t)sizeof(buf);
		skip = 1; /* the first line is cut: drop it */
	}
	if ((fd = open(log, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	while (n < sizeof(buf) && (got = pread(fd, buf + n, sizeof(buf) - n, l->log_pos + (off_t)n)) > 0)
		n += (size_t)got;
	close(fd);
	if (skip) {
		char *nl = memchr(buf, '\n', n);
		skip = nl ? (size_t)(nl + 1 - buf) : 0;
	}
	/* Whole lines: the rest comes with the next post. */
	while (n > skip && buf[n - 1] != '\n' && n < sizeof(buf))
		n--;
	if (n <= skip) {
		l->log_pos += (off_t)skip;
		return NULL;
	}
	l->log_pos += (off_t)n;
	if (!(s = json_stringn(buf + skip, n - skip))) {
		for (i = skip; i < n; i++)
			if ((unsigned char)buf[i] >= 0x80 || buf[i] == '\0')
				buf[i] = '?';
		s = json_stringn(buf + skip, n - skip);
	}
	return s;
}

/* {"png": base64, "seq", "t", "w"} of live.png, seq and times from the
 * note; NULL when unreadable or too big. */
static json_t *frame_json(const char *out_dir, const json_t *note)
{
	char *p = path_join(out_dir, "live.png"), *b64 = NULL;
	json_t *j = NULL;
	struct buf png;

	buf_init(&png, LIVE_RELAY_FRAME_MAX);
	if (!p || file_read_all(p, &png) || png.len == 0 || !(b64 = malloc((png.len + 2) / 3 * 4 + 1)))
		goto out;
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)png.data, (int)png.len);
	j = json_pack("{s:s,s:O?,s:O?,s:O?}", "png", b64, "seq", json_object_get(note, "seq"), "t",
		      json_object_get(note, "t"), "w", json_object_get(note, "w"));
out:
	buf_release(&png);
	free(p);
	free(b64);
	return j;
}

json_t *live_relay_update(struct live_relay *l, const char *out_dir, const char *log)
{
	char *p = NULL;
	json_t *body, *note = NULL, *text;
	struct stat st;

	if (!l->on || !(body = json_object()))
		return NULL;
	/* The runner replaces live.json by renaming, after live.png: a new
	 * mtime is a new note, maybe naming a new frame. */
	if ((p = path_join(out_dir, "live.json")) && stat(p, &st) == 0 &&
	    (st.st_mtim.tv_sec != l->note_mtime.tv_sec || st.st_mtim.tv_nsec != l->note_mtime.tv_nsec)) {
		l->note_mtime = st.st_mtim;
		note = json_load_file(p, 0, NULL);
	}
	if (json_is_object(note)) {
		uint64_t seq = (uint64_t)json_integer_value(json_object_get(note, "seq"));
		static const char *const keys[] = { "module", "step", "line", "what" };
		size_t i;
		/* What the live view shows, nothing stored: a field that could not
		 * be added when memory runs out is left for the next post (a note
		 * names the step again, the log skips ahead as when it is behind),
		 * which docs/hardening.md allows for display-only data. */
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (json_object_get(note, keys[i]))
				(void)json_object_set(body, keys[i], json_object_get(note, keys[i]));
		if (seq && seq != l->sent_seq) {
			json_t *f = frame_json(out_dir, note);
			/* The frame is sent again with the next post unless it went. */
			if (f && !json_object_set_new(body, "frame", f))
				l->sent_seq = seq;
		}
	}
	if ((text = log_text(l, log)))
		(void)json_object_set_new(body, "log", text);
	json_decref(note);
	free(p);
	if (json_object_size(body) == 0) {
		json_decref(body);
		return NULL;
	}
	return body;
}
