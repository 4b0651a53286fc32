/* SPDX-License-Identifier: MIT */
/* artefacts.c - job artefacts on disk: validated names, uploads moved under
 * DATA/testresults/<id>/, screenshots stored once by sha256 and hard-linked.
 * Test distribution archives are distri.c. */
#define LOG_MODULE "artefacts"
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server/artefacts.h"
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

static int sha256_fd(int fd, char hex[ARTEFACTS_HASH_HEX])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[32], chunk[65536];
	unsigned mdlen = 0, i;
	ssize_t n;
	int rc = 0;

	if (!ctx)
		return ERR_NOMEM;
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		EVP_DigestUpdate(ctx, chunk, (size_t)n);
	if (n < 0)
		rc = -errno;
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	EVP_MD_CTX_free(ctx);
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return rc;
}

int artefact_store(const char *data_dir, int64_t job_id, const char *name, const char *tmp)
{
	char *dir = artefact_path(data_dir, job_id, NULL), *dest = artefact_path(data_dir, job_id, name);
	char *images = path_join(data_dir, "images"), *img = NULL, hex[ARTEFACTS_HASH_HEX], rel[80];
	int rc, fd = -1;

	if (!dir || !dest || !images) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_mkdir_p(dir, 0700)))
		goto out;
	if (!str_ends_with(name, ".png")) {
		rc = rename(tmp, dest) ? -errno : 0;
		goto out;
	}
	if ((fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = sha256_fd(fd, hex)))
		goto out;
	if ((rc = file_mkdir_p(images, 0700)))
		goto out;
	snprintf(rel, sizeof(rel), "%s.png", hex);
	if (!(img = path_join(images, rel))) {
		rc = ERR_NOMEM;
		goto out;
	}
	/* Identical screenshots (most of them, between steps) are kept once. */
	if (file_exists(img))
		(void)unlink(tmp); /* the stored copy has the same bytes */
	else if (rename(tmp, img)) {
		rc = -errno;
		goto out;
	}
	(void)unlink(dest); /* a re-upload replaces the link */
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
