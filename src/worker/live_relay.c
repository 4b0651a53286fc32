/* SPDX-License-Identifier: MIT */
/* live_relay.c - the worker's live view switch and frame reader (see
 * live_relay.h). Reads the runner's live.png; never writes anything but
 * live.on. */
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

void live_relay_set(struct live_relay *l, const char *out_dir, bool on)
{
	char *p;

	if (l->on == on)
		return;
	p = path_join(out_dir, "live.on");
	if (!p)
		return;
	if (on) {
		int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		else
			log_warn("live view: cannot create '%s': %s", p, strerror(errno));
		log_info("live view on: someone watches");
	} else {
		unlink(p);
		log_info("live view off");
	}
	l->on = on;
	free(p);
}

json_t *live_relay_frame(struct live_relay *l, const char *out_dir)
{
	char *p = NULL, *b64 = NULL;
	json_t *j = NULL;
	struct stat st;
	struct buf png;

	buf_init(&png, LIVE_RELAY_FRAME_MAX);
	if (!l->on || !(p = path_join(out_dir, "live.png")) || stat(p, &st))
		goto out;
	/* The runner replaces live.png by renaming: a new mtime is a new frame. */
	if (st.st_mtim.tv_sec == l->sent.tv_sec && st.st_mtim.tv_nsec == l->sent.tv_nsec)
		goto out;
	if (file_read_all(p, &png) || png.len == 0 || !(b64 = malloc((png.len + 2) / 3 * 4 + 1)))
		goto out;
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)png.data, (int)png.len);
	j = json_pack("{s:s,s:s}", "name", "live.png", "png", b64);
	l->sent = st.st_mtim;
out:
	buf_release(&png);
	free(p);
	free(b64);
	return j;
}
