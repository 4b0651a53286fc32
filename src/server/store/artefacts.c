/* SPDX-License-Identifier: MIT */
/* artefacts.c - job artefacts on disk: validated names, uploads moved under
 * DATA/testresults/<id>/ (thumbnails in .thumbs/, uploaded logs in ulogs/),
 * screenshots and thumbnails stored once by sha256 and hard-linked, the
 * lists of them. Test distribution archives are distri.c. */
#define LOG_MODULE "artefacts"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/store/artefacts.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-' || c == '+' || c == '@';
}

bool artefact_name_valid(const char *name, size_t len)
{
	size_t i;

	if (!name || len == 0 || len > LIMIT_ARTEFACT_NAME || strlen(name) != len || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!name_char(name[i]))
			return false;
	return true;
}

char *artefact_path(const char *data_dir, int64_t job_id, const char *name)
{
	char rel[64 + LIMIT_ARTEFACT_NAME];

	if (name)
		snprintf(rel, sizeof(rel), "testresults/%lld/%s", (long long)job_id, name);
	else
		snprintf(rel, sizeof(rel), "testresults/%lld", (long long)job_id);
	return path_join(data_dir, rel);
}

/* The subdirectory of each kind (enum artefact_kind order). */
static const char *const kind_dir[] = { NULL, ".thumbs", "ulogs" };

char *artefact_kind_path(const char *data_dir, int64_t job_id, enum artefact_kind kind, const char *name)
{
	char rel[96 + LIMIT_ARTEFACT_NAME];

	if (!kind_dir[kind])
		return artefact_path(data_dir, job_id, name);
	snprintf(rel, sizeof(rel), "testresults/%lld/%s%s%s", (long long)job_id, kind_dir[kind], name ? "/" : "",
		 name ? name : "");
	return path_join(data_dir, rel);
}

json_t *artefact_list(const char *data_dir, int64_t job_id, enum artefact_kind kind, bool pngs)
{
	json_t *a = json_array();
	char *dir = artefact_kind_path(data_dir, job_id, kind, NULL);
	struct dirent **ents = NULL;
	bool nomem = !a || !dir;
	int n, i;

	if (nomem) {
		json_decref(a);
		free(dir);
		return NULL;
	}
	n = scandir(dir, &ents, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		char *p = NULL;
		struct stat sb;
		/* d_type may be unknown on some file systems: then stat tells. */
		bool file = ents[i]->d_type == DT_REG ||
			    (ents[i]->d_type == DT_UNKNOWN && (p = path_join(dir, nm)) && !stat(p, &sb) &&
			     S_ISREG(sb.st_mode));
		if (ents[i]->d_type == DT_UNKNOWN && !p)
			nomem = true;
		if (nm[0] != '.' && file && (kind != ARTEFACT_FILE || str_ends_with(nm, ".png") == pngs) &&
		    json_array_append_new(a, json_string(nm)))
			nomem = true;
		free(p);
		free(ents[i]);
	}
	free(ents);
	free(dir);
	if (nomem) { /* a name would be missing */
		json_decref(a);
		return NULL;
	}
	return a;
}

static int sha256_fd(int fd, char hex[ARTEFACTS_HASH_HEX])
{
	unsigned char md[FILE_HASH_MAX];
	unsigned mdlen;
	int rc = file_hash_fd(fd, FILE_HASH_SHA256, md, &mdlen);

	if (!rc)
		file_hash_hex(md, mdlen, hex);
	return rc;
}

int artefact_store(const char *data_dir, int64_t job_id, enum artefact_kind kind, const char *name, const char *tmp)
{
	char *dir = artefact_kind_path(data_dir, job_id, kind, NULL);
	char *dest = artefact_kind_path(data_dir, job_id, kind, name);
	char *images = path_join(data_dir, "images"), *img = NULL, hex[ARTEFACTS_HASH_HEX], rel[80];
	int rc, fd = -1;

	if (!dir || !dest || !images) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_mkdir_p(dir, 0700)) || (rc = file_mkdir_p(images, 0700)))
		goto out;
	/* Nothing lands outside the data directory through a planted link. */
	if ((rc = file_dir_within(data_dir, dir)) || (rc = file_dir_within(data_dir, images))) {
		log_err("job %lld: artefact '%s' refused: its directory leads out of the data directory", (long long)job_id,
			name);
		goto out;
	}
	if (kind == ARTEFACT_ULOG || !str_ends_with(name, ".png")) {
		rc = rename(tmp, dest) ? -errno : 0;
		goto out;
	}
	if ((fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = sha256_fd(fd, hex)))
		goto out;
	snprintf(rel, sizeof(rel), "%s.png", hex);
	if (!(img = path_join(images, rel))) {
		rc = ERR_NOMEM;
		goto out;
	}
	/* Identical screenshots (most of them, between steps) are kept once;
	 * thumbnails share the store, their bytes differ from any screenshot's.
	 * The stored copy may go between a look and a link (retention removes
	 * images nothing links): then this upload stores it again. */
	(void)unlink(dest); /* a re-upload replaces the link */
	if (link(img, dest) == 0) {
		(void)unlink(tmp); /* the stored copy has the same bytes */
		goto out;
	}
	if (errno != ENOENT) {
		rc = -errno;
		goto out;
	}
	if (rename(tmp, img)) {
		rc = -errno;
		goto out;
	}
	rc = link(img, dest) ? -errno : 0;
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	free(dest);
	free(images);
	free(img);
	return rc;
}
