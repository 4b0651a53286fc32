/* SPDX-License-Identifier: MIT */
/* git.c - `git rev-parse HEAD` of a work tree (see git.h). Runs git with a
 * short time limit; writes nothing. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/git.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/banned.h" /* last: after every system header */

#define GIT_HEAD_TIMEOUT_MS 10000

int git_head(const char *dir, char out[GIT_HASH_MAX])
{
	char *dotgit = path_join(dir, ".git");
	char *argv[] = { "git", "-C", (char *)dir, "rev-parse", "--verify", "-q", "HEAD", NULL };
	struct buf b;
	size_t n;
	int st = 0, rc = ERR_NOT_FOUND;

	out[0] = '\0';
	if (!dotgit)
		return ERR_NOMEM;
	buf_init(&b, 4096);
	if (!(file_is_dir(dotgit) || file_exists(dotgit)) || proc_run(argv, GIT_HEAD_TIMEOUT_MS, &st, &b) || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0 || !b.data)
		goto out;
	n = strspn(b.data, "0123456789abcdef");
	if (n < 40 || n >= GIT_HASH_MAX)
		goto out;
	memcpy(out, b.data, n);
	out[n] = '\0';
	rc = 0;
out:
	buf_release(&b);
	free(dotgit);
	return rc;
}
