/* SPDX-License-Identifier: MIT */
/* dev_relay.c - the runner's developer state read and its channel written
 * (see dev_relay.h). Writes nothing to the runner's directory. */
#define LOG_MODULE "worker"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "util/out_files.h"
#include "util/err.h"
#include "util/path.h"
#include "util/time.h"
#include "worker/dev_relay.h"
#include "util/banned.h" /* last: after every system header */

#define DEV_RELAY_REPLY_MAX 8192

json_t *dev_relay_state(struct dev_relay *d, const char *out_dir)
{
	char *p = path_join(out_dir, DEVMODE_STATE_FILE);
	json_t *j = NULL;
	struct stat st;

	if (p && stat(p, &st) == 0 &&
	    (st.st_mtim.tv_sec != d->mtime.tv_sec || st.st_mtim.tv_nsec != d->mtime.tv_nsec)) {
		d->mtime = st.st_mtim;
		j = json_load_file(p, 0, NULL);
		if (!json_is_object(j)) {
			json_decref(j);
			j = NULL;
		}
	}
	free(p);
	return j;
}

int dev_relay_send(const char *out_dir, const json_t *cmd, json_t **reply, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char *p = path_join(out_dir, DEVMODE_SOCK_FILE), *text = json_dumps(cmd, JSON_COMPACT), buf[DEV_RELAY_REPLY_MAX];
	size_t n = 0, len;
	int fd = -1, rc = 0;
	int64_t until = time_mono_ms() + DEV_RELAY_TIMEOUT_MS;

	*reply = NULL;
	if (!p || !text) {
		rc = ERR_NOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (strlen(p) >= sizeof(a.sun_path) || access(p, F_OK)) {
		rc = ERR_NOT_FOUND;
		snprintf(err, errlen, "the runner has no developer channel ('%s')", p);
		goto out;
	}
	memcpy(a.sun_path, p, strlen(p) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		snprintf(err, errlen, "cannot reach the runner's channel '%s': %s", p, strerror(errno));
		goto out;
	}
	len = strlen(text);
	text[len] = '\n'; /* json_dumps' terminator: the line's end */
	if (send(fd, text, len + 1, MSG_NOSIGNAL) != (ssize_t)(len + 1)) {
		rc = ERR_IO;
		snprintf(err, errlen, "cannot write to the runner's channel");
		goto out;
	}
	while (!memchr(buf, '\n', n)) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t left = until - time_mono_ms();
		ssize_t got;
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
			rc = ERR_TIMEOUT;
			snprintf(err, errlen, "the runner did not answer");
			goto out;
		}
		if (n == sizeof(buf) || (got = recv(fd, buf + n, sizeof(buf) - n, 0)) <= 0) {
			rc = ERR_PROTO;
			snprintf(err, errlen, "the runner's answer was cut or too long");
			goto out;
		}
		n += (size_t)got;
	}
	if (!(*reply = json_loadb(buf, (size_t)((char *)memchr(buf, '\n', n) - buf), 0, NULL))) {
		rc = ERR_PROTO;
		snprintf(err, errlen, "the runner's answer is no JSON");
	}
out:
	if (fd >= 0)
		close(fd);
	free(text);
	free(p);
	return rc;
}
