/* SPDX-License-Identifier: MIT */
/* casedir.c - cloning a job's git CASEDIR with the git program (see
 * casedir.h). Writes only below dest. */
#define LOG_MODULE "worker"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"
#include "util/proc.h"
#include "worker/casedir.h"
#include "util/banned.h" /* last: after every system header */

#define CASEDIR_MAX 4096

bool casedir_is_git(const char *c)
{
	const char *hash, *colon, *slash;
	size_t n;

	if (!c || !*c || c[0] == '/')
		return false;
	if (strstr(c, "://"))
		return true;
	hash = strchr(c, '#');
	n = hash ? (size_t)(hash - c) : strlen(c);
	if (n >= 4 && !strncmp(c + n - 4, ".git", 4))
		return true;
	/* user@host:path, as scp and git write it */
	colon = strchr(c, ':');
	slash = strchr(c, '/');
	return strchr(c, '@') && colon && (!slash || colon < slash);
}

/* A commit id: clone everything and check it out (a shallow clone can
 * only name branches and tags). */
static bool is_commit(const char *ref)
{
	size_t n = strlen(ref);

	return n >= 7 && n <= 64 && strspn(ref, "0123456789abcdef") == n;
}

static int git(char *const argv[], char *why, size_t whylen, const char *what)
{
	struct buf out;
	int st = 0, rc;

	buf_init(&out, 8192);
	rc = proc_run(argv, CASEDIR_CLONE_TIMEOUT_MS, &st, &out);
	if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st) != 0))
		rc = ERR_IO;
	if (rc) {
		/* git's last line says why; keep the message on one line. */
		char *msg = out.data ? out.data : "";
		size_t len = strlen(msg);
		while (len && (msg[len - 1] == '\n' || msg[len - 1] == '\r'))
			msg[--len] = '\0';
		snprintf(why, whylen, "setup failure: %s: %s", what,
			 rc == ERR_TIMEOUT ? "timed out" : *msg ? msg : err_str(rc));
		for (char *p = why; *p; p++)
			if (*p == '\n')
				*p = ' ';
	}
	buf_release(&out);
	return rc;
}

int casedir_clone(const char *casedir, const char *dest, char *why, size_t whylen)
{
	char url[CASEDIR_MAX], what[CASEDIR_MAX + 64], *ref;
	int rc;

	if (strlen(casedir) >= sizeof(url)) {
		snprintf(why, whylen, "setup failure: CASEDIR is longer than %d bytes", CASEDIR_MAX - 1);
		return ERR_INVALID;
	}
	snprintf(url, sizeof(url), "%s", casedir);
	ref = strchr(url, '#');
	if (ref) {
		*ref++ = '\0';
		if (!*ref || *ref == '-') {
			snprintf(why, whylen, "setup failure: CASEDIR '%s': bad ref after '#'", casedir);
			return ERR_INVALID;
		}
	}
	snprintf(what, sizeof(what), "cloning CASEDIR '%s'", casedir);
	log_info("cloning %s", casedir);
	if (ref && is_commit(ref)) {
		char *clone[] = { "git", "clone", "--quiet", "--", url, (char *)dest, NULL };
		char *checkout[] = { "git", "-C", (char *)dest, "checkout", "--quiet", "--detach", ref, NULL };
		rc = git(clone, why, whylen, what);
		if (!rc)
			rc = git(checkout, why, whylen, what);
	} else if (ref) {
		char *clone[] = { "git", "clone", "--quiet", "--depth", "1", "--branch", ref, "--", url, (char *)dest, NULL };
		rc = git(clone, why, whylen, what);
	} else {
		char *clone[] = { "git", "clone", "--quiet", "--depth", "1", "--", url, (char *)dest, NULL };
		rc = git(clone, why, whylen, what);
	}
	return rc;
}
