/* SPDX-License-Identifier: MIT */
/* oqcompat_chunk.c - openQA 4.6's chunked asset upload received (see
 * oqcompat.h): each chunk a Perl Storable record of an OpenQA::File
 * (index, total, start, end, content as hex, cksum = base64 SHA-1 of the
 * chunk, total_cksum = base64 SHA-256 of the whole file), written at its
 * offset into DATA/factory/.chunks/<job>-<name>; the last one checks the
 * whole file and hands it back to be stored as the asset. */
#define LOG_MODULE "oqcompat"
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "net/storable.h"
#include "server/store/assets.h"
#include "server/oqcompat/oqcompat.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

/* Base64 without padding, as Perl's Digest::SHA b64digest writes it. */
static void b64_nopad(const unsigned char *md, unsigned n, char *out, size_t outlen)
{
	unsigned char enc[100];
	int len;

	if (4 * ((n + 2) / 3) + 1 > sizeof(enc) || outlen == 0) {
		if (outlen)
			*out = '\0';
		return;
	}
	len = EVP_EncodeBlock(enc, md, (int)n);
	while (len > 0 && enc[len - 1] == '=')
		len--;
	snprintf(out, outlen, "%.*s", len, (const char *)enc);
}

/* A whole number field of the record (an integer, or its decimal text). */
static int num_field(const json_t *rec, const char *key, int64_t *v, char *msg, size_t msglen)
{
	const json_t *f = json_object_get(rec, key);
	char *end;

	if (json_is_integer(f)) {
		*v = json_integer_value(f);
		return 0;
	}
	if (json_is_string(f)) {
		errno = 0;
		*v = strtoll(json_string_value(f), &end, 10);
		if (!errno && end != json_string_value(f) && !*end)
			return 0;
	}
	err_set(msg, msglen, "chunk record: '%s' missing or not a number", key);
	return ERR_PROTO;
}

static int hex_nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The whole file's SHA-256: base64 (openQA's form) and hex (vigil's). */
static int file_sha256(const char *path, char *b64, size_t b64len, char hex[65])
{
	unsigned char md[FILE_HASH_MAX];
	unsigned n;
	int rc = file_hash(path, FILE_HASH_SHA256, md, &n);

	if (!rc) {
		b64_nopad(md, n, b64, b64len);
		file_hash_hex(md, n, hex);
	}
	return rc;
}

int oqcompat_chunk(const char *data_dir, int64_t job_id, const char *name, const char *rec_path, char **assembled,
		   char sha256_hex[65], char *msg, size_t msglen)
{
	char rel[LIMIT_ARTEFACT_NAME + 64], b64[64], tb64[64];
	unsigned char md[EVP_MAX_MD_SIZE], *bytes = NULL;
	int64_t index, total, start, end;
	const char *hex, *cksum, *total_cksum;
	char *dir = NULL, *part = NULL;
	unsigned mdlen = 0;
	size_t hexlen, n, i;
	json_t *rec = NULL;
	struct buf b;
	int fd = -1, rc;

	*assembled = NULL;
	buf_init(&b, OQCOMPAT_CHUNK_MAX);
	if ((rc = file_read_all(rec_path, &b))) {
		if (rc == ERR_TOO_BIG)
			err_set(msg, msglen, "chunk record over %u MiB", (unsigned)(OQCOMPAT_CHUNK_MAX >> 20));
		goto out;
	}
	if ((rc = storable_thaw(b.data, b.len, &rec, msg, msglen)))
		goto out;
	rc = ERR_PROTO;
	if (!json_is_object(rec)) {
		err_set(msg, msglen, "chunk record: not a hash");
		goto out;
	}
	if (num_field(rec, "index", &index, msg, msglen) || num_field(rec, "total", &total, msg, msglen) ||
	    num_field(rec, "start", &start, msg, msglen) || num_field(rec, "end", &end, msg, msglen))
		goto out;
	hex = json_string_value(json_object_get(rec, "content"));
	cksum = json_string_value(json_object_get(rec, "cksum"));
	total_cksum = json_string_value(json_object_get(rec, "total_cksum"));
	if (!hex || !cksum || !total_cksum) {
		err_set(msg, msglen, "chunk record: content, cksum or total_cksum missing");
		goto out;
	}
	hexlen = strlen(hex);
	if (total < 1 || index < 1 || index > total || start < 0 || end < start || (uint64_t)end > LIMIT_ASSET ||
	    hexlen % 2 || (uint64_t)(end - start) != hexlen / 2) {
		err_set(msg, msglen, "chunk record: chunk %lld of %lld, bytes %lld..%lld with %zu hex digits do not agree",
			(long long)index, (long long)total, (long long)start, (long long)end, hexlen);
		goto out;
	}
	n = hexlen / 2;
	if (!(bytes = malloc(n ? n : 1))) {
		rc = ERR_NOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			err_set(msg, msglen, "chunk record: content is not hex at digit %zu", 2 * i);
			goto out;
		}
		bytes[i] = (unsigned char)(hi << 4 | lo);
	}
	EVP_Digest(bytes, n, md, &mdlen, EVP_sha1(), NULL);
	b64_nopad(md, mdlen, b64, sizeof(b64));
	if (strcmp(b64, cksum)) {
		err_set(msg, msglen, "chunk %lld of %lld: checksum %s, the content's is %s", (long long)index,
			(long long)total, cksum, b64);
		goto out;
	}
	snprintf(rel, sizeof(rel), "factory/.chunks/%08lld-%s", (long long)job_id, name);
	part = path_join(data_dir, rel);
	dir = part ? path_dir(part) : NULL;
	if (!part || !dir) {
		rc = ERR_NOMEM;
		goto out;
	}
	if ((rc = file_mkdir_p(dir, 0700)))
		goto out;
	/* The first chunk starts the file anew (a retried or abandoned upload). */
	fd = open(part, O_WRONLY | O_CREAT | O_CLOEXEC | (index == 1 ? O_TRUNC : 0), 0644);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	for (i = 0; i < n;) {
		ssize_t w = pwrite(fd, bytes + i, n - i, (off_t)start + (off_t)i);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : ERR_IO;
			goto out;
		}
		i += (size_t)w;
	}
	if (close(fd)) {
		fd = -1;
		rc = -errno;
		goto out;
	}
	fd = -1;
	rc = 0;
	if (index < total)
		goto out;
	/* The last chunk: the whole file as the worker hashed it. */
	if ((rc = file_sha256(part, tb64, sizeof(tb64), sha256_hex)))
		goto out;
	if (strcmp(tb64, total_cksum)) {
		err_set(msg, msglen, "asset %s: checksum of the whole file %s, the chunks make %s", name, total_cksum, tb64);
		(void)unlink(part);
		rc = ERR_PROTO;
		goto out;
	}
	*assembled = part;
	part = NULL;
out:
	if (fd >= 0)
		close(fd);
	free(bytes);
	free(part);
	free(dir);
	json_decref(rec);
	buf_release(&b);
	return rc;
}
