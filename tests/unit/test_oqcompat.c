/* SPDX-License-Identifier: MIT */
/* test_oqcompat.c - what openQA's worker sends, stored the vigil way
 * (server/oqcompat/oqcompat.c, server/store/workers.c): a status with test_order and step
 * details becomes job modules (the script kept as its path) and
 * result-<module>.json (screenshots by name); md5-named screenshots make
 * known_images and are linked under a later step's new name. */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "net/storable.h"
#include "server/store/artefacts.h"
#include "server/db/db.h"
#include "server/store/jobs.h"
#include "server/oqcompat/oqcompat.h"
#include "server/sched/sched.h"
#include "server/store/workers.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/path.h"

#define MD5A "0123456789abcdef0123456789abcdef"
#define MD5B "fedcba9876543210fedcba9876543210"

/* A PNG-named artefact of the job with the given bytes. */
static void put_shot(const char *data, int64_t job, enum artefact_kind kind, const char *name, const char *bytes)
{
	char tmp[512];

	snprintf(tmp, sizeof(tmp), "%s/up-%s-%d", unit_tmpdir(), name, (int)kind);
	CHECK_INT(file_write_all(tmp, bytes, strlen(bytes)), 0);
	CHECK_INT(artefact_store(data, job, kind, name, tmp), 0);
}

static json_t *load(const char *data, int64_t job, const char *name)
{
	char *p = artefact_path(data, job, name);
	json_t *j = json_load_file(p, 0, NULL);

	free(p);
	return j;
}

TEST(oqcompat_status_modules_and_details)
{
	struct db *db = unit_db();
	const char *data = unit_tmpdir();
	json_t *settings = json_pack("{s:s,s:s}", "TEST", "t", "WORKER_CLASS", "c");
	json_t *status, *mods, *res;
	const char *cmd = NULL;
	int64_t w = 0, job = 0, picked = 0;
	char msg[256];

	CHECK_INT(jobs_insert(db, settings, 50, 0, 0, &job), 0);
	json_decref(settings);
	CHECK_INT(workers_register(db, "h", 1, "c", 1000, &w), 0);
	CHECK_INT(sched_pick(db, w, &picked), 0);
	CHECK_INT(picked, job);
	/* As openQA 4.6's worker posts it (Job.pm _upload_results_step_0_prepare). */
	status = json_pack("{s:I,s:[{s:s,s:s,s:s,s:{s:i,s:i}}],s:{s:{s:s,s:i,s:[{s:s,s:{s:s,s:s},s:s,s:[{s:i,s:i,s:i,s:i,s:i}]},"
			   "{s:s,s:{s:s,s:s}}]},s:{s:s}}}",
			   "worker_id", (json_int_t)w, "test_order", "name", "boot", "category", "anchor", "script",
			   "tests/boot.pm", "flags", "fatal", 1, "milestone", 0, "result", "boot", "result", "ok", "dents",
			   0, "details", "result", "ok", "screenshot", "name", "boot-1.png", "md5", MD5A, "needle",
			   "grub-menu", "area", "x", 0, "y", 0, "w", 10, "h", 10, "similarity", 100, "result", "ok",
			   "screenshot", "name", "boot-2.png", "md5", MD5A, "current_module", "result", "running");
	CHECK(status);
	CHECK_INT(workers_job_status(db, job, status, &cmd, msg, sizeof(msg)), 0);
	mods = workers_job_modules(db, job);
	CHECK_INT(json_array_size(mods), 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 0), "script")), "tests/boot.pm");
	CHECK_STR(json_string_value(json_object_get(json_array_get(mods, 0), "result")), "passed");
	json_decref(mods);

	/* boot-1.png arrived (with its md5), boot-2.png is the same picture:
	 * the worker does not send it again once it is known. */
	put_shot(data, job, ARTEFACT_FILE, "boot-1.png", "full picture");
	put_shot(data, job, ARTEFACT_THUMB, "boot-1.png", "thumb");
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", MD5A, false), 0);
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", MD5A, true), 0);
	CHECK_INT(oqcompat_note_image(data, job, "boot-1.png", "not-an-md5", false), ERR_INVALID);
	res = oqcompat_known_images(data, job);
	CHECK_INT(json_array_size(res), 1);
	CHECK_STR(json_string_value(json_array_get(res, 0)), MD5A);
	json_decref(res);

	CHECK_INT(oqcompat_store_details(data, job, status), 0);
	res = load(data, job, "result-boot.json");
	CHECK(res);
	CHECK_STR(json_string_value(json_object_get(res, "result")), "ok");
	CHECK_INT(json_array_size(json_object_get(res, "details")), 2);
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "details"), 0), "screenshot")),
		  "boot-1.png");
	CHECK_STR(json_string_value(json_object_get(json_array_get(json_object_get(res, "details"), 0), "needle")),
		  "grub-menu");
	json_decref(res);
	/* No details, no file: current_module is only a marker. */
	res = load(data, job, "result-current_module.json");
	CHECK(!res);
	/* boot-2.png: linked from the known md5, thumbnail too. */
	{
		char *p2 = artefact_kind_path(data, job, ARTEFACT_FILE, "boot-2.png");
		char *t2 = artefact_kind_path(data, job, ARTEFACT_THUMB, "boot-2.png");
		struct buf b;
		buf_init(&b, 1024);
		CHECK_INT(file_read_all(p2, &b), 0);
		CHECK_STR(b.data, "full picture");
		buf_reset(&b);
		CHECK_INT(file_read_all(t2, &b), 0);
		CHECK_STR(b.data, "thumb");
		buf_release(&b);
		free(p2);
		free(t2);
	}
	json_decref(status);
	db_free(db);
}

TEST(oqcompat_details_refuse_bad_module_names)
{
	const char *data = unit_tmpdir();
	json_t *status = json_pack("{s:{s:{s:s,s:[]}}}", "result", "../evil", "result", "ok", "details");
	char *p;

	CHECK_INT(oqcompat_store_details(data, 7, status), 0);
	p = path_join(data, "testresults/result-../evil.json");
	CHECK(!file_exists(p));
	free(p);
	json_decref(status);
}

/* Base64 without padding of a digest of data, as Perl's Digest::SHA. */
static void digest_b64(const EVP_MD *md, const void *data, size_t len, char *out)
{
	unsigned char d[EVP_MAX_MD_SIZE], enc[100];
	unsigned n = 0;
	int el;

	EVP_Digest(data, len, d, &n, md, NULL);
	el = EVP_EncodeBlock(enc, d, (int)n);
	while (el > 0 && enc[el - 1] == '=')
		el--;
	snprintf(out, 64, "%.*s", el, (const char *)enc);
}

/* A chunk record file for bytes [start, end) of whole, as openQA's worker
 * sends it (the cksum given, or the right one when NULL). */
static void put_chunk(const char *path, const char *whole, long long index, long long total, long long start,
		      long long end, const char *cksum)
{
	char hex[256] = "", sum[64], tsum[64];
	struct buf b;
	json_t *rec;

	for (long long i = start; i < end; i++)
		snprintf(hex + 2 * (i - start), 3, "%02x", (unsigned char)whole[i]);
	digest_b64(EVP_sha1(), whole + start, (size_t)(end - start), sum);
	digest_b64(EVP_sha256(), whole, strlen(whole), tsum);
	rec = json_pack("{s:I,s:I,s:I,s:I,s:s,s:s,s:s,s:s}", "index", (json_int_t)index, "total", (json_int_t)total,
			"start", (json_int_t)start, "end", (json_int_t)end, "content", hex, "cksum", cksum ? cksum : sum,
			"total_cksum", tsum, "file", "/pool/1/assets_public/x.qcow2");
	buf_init(&b, 1 << 20);
	CHECK_INT(storable_nfreeze_hash(rec, &b), 0);
	CHECK_INT(file_write_all(path, b.data, b.len), 0);
	buf_release(&b);
	json_decref(rec);
}

TEST(oqcompat_chunked_asset)
{
	static const char whole[] = "a disk image in three chunks!";
	char rec[512], sha[65] = "", msg[300] = "", *done = NULL;
	const char *data = unit_tmpdir();
	struct buf got;

	snprintf(rec, sizeof(rec), "%s/chunk-rec", data);
	/* Three chunks of 10, 10 and 9 bytes. */
	put_chunk(rec, whole, 1, 3, 0, 10, NULL);
	CHECK_INT(oqcompat_chunk(data, 7, "x.qcow2", rec, &done, sha, msg, sizeof(msg)), 0);
	CHECK(done == NULL);
	put_chunk(rec, whole, 2, 3, 10, 20, NULL);
	CHECK_INT(oqcompat_chunk(data, 7, "x.qcow2", rec, &done, sha, msg, sizeof(msg)), 0);
	CHECK(done == NULL);
	/* A chunk whose checksum does not match its content: refused, named. */
	put_chunk(rec, whole, 3, 3, 20, 29, "AAAAAAAAAAAAAAAAAAAAAAAAAAA");
	CHECK_INT(oqcompat_chunk(data, 7, "x.qcow2", rec, &done, sha, msg, sizeof(msg)), ERR_PROTO);
	CHECK(strstr(msg, "chunk 3 of 3: checksum AAAA") != NULL);
	put_chunk(rec, whole, 3, 3, 20, 29, NULL);
	CHECK_INT(oqcompat_chunk(data, 7, "x.qcow2", rec, &done, sha, msg, sizeof(msg)), 0);
	CHECK(done != NULL);
	buf_init(&got, 1 << 20);
	CHECK_INT(file_read_all(done, &got), 0);
	CHECK_STR(got.data, whole);
	CHECK_STR(sha, "6acf0c6244512f05e8ae155ab2b4cf474fccfe2c43512af811b1615b9a68a39f");
	buf_release(&got);
	free(done);
	/* The whole file not what the worker hashed (a chunk left out). */
	put_chunk(rec, whole, 1, 2, 0, 10, NULL);
	CHECK_INT(oqcompat_chunk(data, 8, "y.qcow2", rec, &done, sha, msg, sizeof(msg)), 0);
	put_chunk(rec, whole, 2, 2, 20, 29, NULL);
	CHECK_INT(oqcompat_chunk(data, 8, "y.qcow2", rec, &done, sha, msg, sizeof(msg)), ERR_PROTO);
	CHECK(strstr(msg, "checksum of the whole file") != NULL);
	CHECK(done == NULL);
	/* Offsets that disagree with the content. */
	put_chunk(rec, whole, 1, 1, 0, 10, NULL);
	{
		struct buf b;
		json_t *r;
		buf_init(&b, 1 << 20);
		r = json_pack("{s:i,s:i,s:i,s:i,s:s,s:s,s:s}", "index", 1, "total", 1, "start", 0, "end", 5, "content",
			      "6869", "cksum", "x", "total_cksum", "y");
		CHECK_INT(storable_nfreeze_hash(r, &b), 0);
		CHECK_INT(file_write_all(rec, b.data, b.len), 0);
		json_decref(r);
		buf_release(&b);
	}
	CHECK_INT(oqcompat_chunk(data, 9, "z.qcow2", rec, &done, sha, msg, sizeof(msg)), ERR_PROTO);
	CHECK(strstr(msg, "do not agree") != NULL);
	/* Not a Storable record. */
	CHECK_INT(file_write_all(rec, "hello", 5), 0);
	CHECK_INT(oqcompat_chunk(data, 9, "z.qcow2", rec, &done, sha, msg, sizeof(msg)), ERR_PROTO);
	CHECK(strstr(msg, "Storable record") != NULL);
}
