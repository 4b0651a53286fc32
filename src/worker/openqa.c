/* SPDX-License-Identifier: MIT */
/* openqa.c - `vigil worker` under openQA's own server (Debian's openqa
 * 4.6): the worker WebSocket (grab_job/grab_jobs, accepted/rejected,
 * worker_status with the JOBTOKEN, the stop commands), the test
 * distribution and assets found as openQA's worker finds them (its shared
 * directory or a download), its status format (test_order, per-module
 * details with screenshot md5s) and multipart artefact uploads. The job's
 * life cycle itself is worker.c's. */
#define LOG_MODULE "worker"
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "net/http.h"
#include "net/storable.h"
#include "util/out_files.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/time.h"
#include "worker/live_relay.h"
#include "worker/oq_ws.h"
#include "worker/worker_int.h"
#include "util/banned.h" /* last: after every system header */

#define OQ_DEFAULT_SHARE "/var/lib/openqa/share"
/* worker_status while idle and while working: openQA's worker sends one
 * every 60-300 s; a worker silent for worker_timeout (1800 s) is dead. */
#define OQ_STATUS_IDLE_S 60
#define OQ_STATUS_BUSY_S 30
#define OQ_UPLOAD_TRIES 3
#define OQ_CHUNK_SIZE 1000000LL /* bytes of an asset per chunk, openQA's default */

static const char *share_dir(const struct worker *w)
{
	return w->cfg->share && *w->cfg->share ? w->cfg->share : OQ_DEFAULT_SHARE;
}

/* ------------------------------------------------------------ test distribution */

/* dir, made absolute against base when relative. New string. */
static char *abs_under(const char *base, const char *dir)
{
	return dir[0] == '/' ? strdup(dir) : path_join(base, dir);
}

char *openqa_distribution(struct worker *w, json_t *vars, char *why, size_t whylen)
{
	const char *casedir = json_string_value(json_object_get(vars, "CASEDIR"));
	const char *productdir = json_string_value(json_object_get(vars, "PRODUCTDIR"));
	const char *needles = json_string_value(json_object_get(vars, "NEEDLES_DIR"));
	const char *distri = json_string_value(json_object_get(vars, "DISTRI"));
	const char *version = json_string_value(json_object_get(vars, "VERSION"));
	char *tests = path_join(share_dir(w), "tests"), *def_case = NULL, *def_prod = NULL, *cdir = NULL;
	char *pdir = NULL, *ndir = NULL, *run = NULL, rel[512];

	if (!tests)
		goto nomem;
	/* openQA's testcasedir: share/tests/DISTRI, or DISTRI-VERSION when that exists. */
	if (!distri || !*distri || strchr(distri, '/') || distri[0] == '.') {
		snprintf(why, whylen, "setup failure: the job has neither CASEDIR nor a usable DISTRI ('%s')",
			 distri ? distri : "");
		goto fail;
	}
	snprintf(rel, sizeof(rel), "%s-%s", distri, version ? version : "");
	def_case = path_join(tests, rel);
	if (!def_case)
		goto nomem;
	if (!version || !*version || strchr(version, '/') || !file_is_dir(def_case)) {
		free(def_case);
		def_case = path_join(tests, distri);
	}
	if (!def_case)
		goto nomem;
	snprintf(rel, sizeof(rel), "products/%s", distri);
	def_prod = path_join(def_case, rel);
	if (!def_prod)
		goto nomem;
	if (!file_is_dir(def_prod)) {
		free(def_prod);
		def_prod = strdup(def_case);
	}
	cdir = casedir && *casedir ? abs_under(def_case, casedir) : strdup(def_case);
	if (!cdir || !def_prod)
		goto nomem;
	if (!file_is_dir(cdir)) {
		snprintf(why, whylen,
			 "setup failure: test distribution '%s' is not on this worker (openQA's shared directory is %s: "
			 "mount it or pass --share)", cdir, share_dir(w));
		goto fail;
	}
	pdir = productdir && *productdir ? abs_under(cdir, productdir)
					 : (casedir && *casedir ? strdup(cdir) : strdup(def_prod));
	if (!pdir)
		goto nomem;
	/* A relative NEEDLES_DIR names the default needles (openQA links it);
	 * %CASEDIR%/x is x inside the CASEDIR. */
	if (needles && *needles && needles[0] != '/' && !strstr(needles, "://")) {
		if (!strncasecmp(needles, "%CASEDIR%", 9))
			ndir = path_join(cdir, needles[9] == '/' ? needles + 10 : needles + 9);
		else
			ndir = path_join(def_prod, "needles");
		if (!ndir)
			goto nomem;
	} else if ((!needles || !*needles) && casedir && *casedir && !file_is_dir(pdir)) {
		ndir = path_join(def_prod, "needles");
	}
	/* The runner starts at the directory with main.lua (or main.pm). */
	{
		char *ml = path_join(pdir, "main.lua"), *mp = path_join(pdir, "main.pm");
		run = strdup(file_is_dir(pdir) && ((ml && file_exists(ml)) || (mp && file_exists(mp))) ? pdir : cdir);
		free(ml);
		free(mp);
	}
	if (!run)
		goto nomem;
	/* The test would run from other directories without them. */
	if (json_object_set_new(vars, "CASEDIR", json_string(cdir)) ||
	    json_object_set_new(vars, "PRODUCTDIR", json_string(pdir)) ||
	    (ndir && json_object_set_new(vars, "NEEDLES_DIR", json_string(ndir))))
		goto nomem;
	log_info("test distribution %s (CASEDIR %s, PRODUCTDIR %s%s%s)", run, cdir, pdir, ndir ? ", NEEDLES_DIR " : "",
		 ndir ? ndir : "");
	goto out;
nomem:
	snprintf(why, whylen, "setup failure: out of memory");
fail:
	free(run);
	run = NULL;
out:
	free(tests);
	free(def_case);
	free(def_prod);
	free(cdir);
	free(pdir);
	free(ndir);
	return run;
}

char *openqa_asset(struct worker *w, long long job_id, const char *type, const char *name, char *why, size_t whylen)
{
	char rel[512], target[600], err[400], *path = NULL, *dir = NULL, *part = NULL;
	long st = 0;
	int rc;

	snprintf(rel, sizeof(rel), "factory/%s/%s", type, name);
	if (!(path = path_join(share_dir(w), rel)))
		goto nomem;
	if (file_exists(path))
		return path;
	free(path);
	path = NULL;
	/* Not shared here: downloaded for this job (openQA's web UI serves the
	 * job's assets), into the job's own cache directory. */
	snprintf(rel, sizeof(rel), "cache/openqa-assets/%lld/%s", job_id, type);
	if (!(dir = path_join(w->cfg->pool, rel)) || !(path = path_join(dir, name)))
		goto nomem;
	snprintf(rel, sizeof(rel), ".%s.part", name);
	if (!(part = path_join(dir, rel)))
		goto nomem;
	if (file_mkdir_p(dir, 0700)) {
		snprintf(why, whylen, "setup failure: cannot create '%s'", dir);
		goto fail;
	}
	snprintf(target, sizeof(target), "/tests/%lld/asset/%s/%s", job_id, type, name);
	rc = http_download(&w->http, target, part, WORKER_ASSET_TIMEOUT_S, &st, NULL, NULL, 0, err, sizeof(err));
	if (rc || st != 200) {
		char code[32];
		snprintf(code, sizeof(code), "HTTP %ld", st);
		snprintf(why, whylen, "setup failure: asset %s/%s is neither in %s/factory nor downloadable (%s)", type,
			 name, share_dir(w), rc ? err : code);
		(void)unlink(part);
		goto fail;
	}
	if (rename(part, path)) {
		snprintf(why, whylen, "setup failure: '%s': %s", path, strerror(errno));
		(void)unlink(part);
		goto fail;
	}
	log_info("asset %s/%s downloaded to %s", type, name, path);
	goto out;
nomem:
	snprintf(why, whylen, "setup failure: out of memory");
fail:
	free(path);
	path = NULL;
out:
	free(dir);
	free(part);
	return path;
}

/* ------------------------------------------------------------ uploads */

/* Hex MD5 of the file at path into out (33 bytes); 0 or -1. */
static int file_md5(const char *path, char out[33])
{
	unsigned char md[FILE_HASH_MAX];
	unsigned n;

	if (file_hash(path, FILE_HASH_MD5, md, &n) || n != 16)
		return -1;
	file_hash_hex(md, n, out);
	return 0;
}

struct form {
	const struct http_part *parts;
	size_t n;
};

static int send_form(struct worker *w, const char *target, const void *arg, long *code, char *err, size_t errlen)
{
	const struct form *f = arg;

	return http_upload_form(&w->http, target, f->parts, f->n, 600, code, &w->resp, err, errlen);
}

/* POST the parts to the job's artefact route (worker__post: a few tries
 * on transport errors and 5xx). 0 when accepted. */
static int post_artefact(struct worker *w, struct job_run *r, const struct http_part *parts, size_t n,
			 const char *what)
{
	char target[96], name[300];
	struct form f = { parts, n };

	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/artefact", r->id);
	snprintf(name, sizeof(name), "'%s'", what);
	return worker__post(w, r, target, name, send_form, &f) ? -1 : 0;
}

int openqa_upload(struct worker *w, struct job_run *r, const char *path, const char *filename, bool ulog)
{
	struct http_part p[4] = {
		{ "file", NULL, path, filename }, { "image", "0", NULL, NULL }, { "thumb", "0", NULL, NULL },
		{ "ulog", "1", NULL, NULL },
	};

	return post_artefact(w, r, p, ulog ? 4 : 3, filename);
}

/* A screenshot and its thumbnail (testresults/.thumbs/NAME), as openQA
 * stores images: by md5, the thumbnail under the same name and md5. */
static int upload_image(struct worker *w, struct job_run *r, const char *tr, const char *name, const char *md5)
{
	char rel[400], *shot = path_join(tr, name), *thumb;
	struct http_part p[4] = {
		{ "file", NULL, shot, name }, { "image", "1", NULL, NULL }, { "thumb", "0", NULL, NULL },
		{ "md5", md5, NULL, NULL },
	};
	int rc;

	snprintf(rel, sizeof(rel), ".thumbs/%s", name);
	thumb = path_join(tr, rel);
	if (!shot || !thumb) {
		free(shot);
		free(thumb);
		return -1;
	}
	rc = post_artefact(w, r, p, 4, name);
	if (!rc && file_exists(thumb)) {
		p[0].path = thumb;
		p[2].value = "1";
		rc = post_artefact(w, r, p, 4, rel);
	}
	free(shot);
	free(thumb);
	return rc;
}

int openqa_upload_logs(struct worker *w, struct job_run *r)
{
	/* The runner's files under the names openQA's pages look for. */
	static const struct { const char *from, *to; } files[] = {
		{ "vigil-log.txt", "autoinst-log.txt" }, { "video.webm", "video.webm" }, { "video.ogv", "video.ogv" },
		{ "video_time.vtt", "video_time.vtt" },  { "vars.json", "vars.json" },   { "serial0.txt", "serial0.txt" },
		{ "serial0", "serial0.txt" },           { "virtio_console.log", "serial_terminal.txt" },
		{ "serial_terminal.txt", "serial_terminal.txt" },
	};
	char *tr = path_join(r->out, "testresults"), *ulogs = tr ? path_join(tr, "ulogs") : NULL;
	int failed = 0;
	size_t i;
	DIR *d;
	struct dirent *e;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = path_join(r->out, files[i].from);
		if (p && file_exists(p))
			failed += openqa_upload(w, r, p, files[i].to, false) ? 1 : 0;
		free(p);
	}
	if (r->log && file_exists(r->log))
		failed += openqa_upload(w, r, r->log, "runner-output.txt", false) ? 1 : 0;
	d = ulogs ? opendir(ulogs) : NULL;
	while (d && (e = readdir(d))) {
		char *p;
		if (e->d_name[0] == '.')
			continue;
		p = path_join(ulogs, e->d_name);
		if (p && file_exists(p))
			failed += openqa_upload(w, r, p, e->d_name, true) ? 1 : 0;
		free(p);
	}
	if (d)
		closedir(d);
	free(ulogs);
	free(tr);
	return failed;
}

/* Base64 without padding, as Perl's Digest::SHA b64digest (openQA's
 * chunk checksums). */
static void b64_nopad(const unsigned char *md, unsigned n, char *out, size_t outlen)
{
	unsigned char enc[100];
	int len;

	if (4 * ((n + 2) / 3) + 1 > sizeof(enc)) {
		snprintf(out, outlen, "%s", "");
		return;
	}
	len = EVP_EncodeBlock(enc, md, (int)n);
	while (len > 0 && enc[len - 1] == '=')
		len--;
	snprintf(out, outlen, "%.*s", len, (const char *)enc);
}

/* The whole file's SHA-256 in openQA's form (total_cksum). 0 or -1. */
static int file_sha256_b64(const char *path, char *out, size_t outlen)
{
	unsigned char md[FILE_HASH_MAX];
	unsigned n;

	if (file_hash(path, FILE_HASH_SHA256, md, &n))
		return -1;
	b64_nopad(md, n, out, outlen);
	return 0;
}

/* One chunk as openQA's OpenQA::File record: bytes [start, end) of the
 * file, hex-encoded, with the chunk's SHA-1 and the whole file's SHA-256,
 * frozen in Storable's network order into out. */
static int chunk_record(FILE *f, const char *path, long long index, long long total, long long start, long long end,
			const char *total_cksum, struct buf *out)
{
	static const char hexd[] = "0123456789abcdef";
	size_t n = (size_t)(end - start), i;
	unsigned char *bytes = malloc(n ? n : 1), md[EVP_MAX_MD_SIZE];
	char *hex = malloc(2 * n + 1), cksum[64];
	unsigned mdlen = 0;
	json_t *rec = NULL;
	int rc = ERR_NOMEM;

	if (!bytes || !hex)
		goto out;
	if (fseeko(f, (off_t)start, SEEK_SET) || fread(bytes, 1, n, f) != n) {
		rc = ERR_IO;
		goto out;
	}
	for (i = 0; i < n; i++) {
		hex[2 * i] = hexd[bytes[i] >> 4];
		hex[2 * i + 1] = hexd[bytes[i] & 15];
	}
	hex[2 * n] = '\0';
	EVP_Digest(bytes, n, md, &mdlen, EVP_sha1(), NULL);
	b64_nopad(md, mdlen, cksum, sizeof(cksum));
	rec = json_pack("{s:s,s:I,s:I,s:I,s:I,s:s,s:s,s:s}", "file", path, "index", (json_int_t)index, "total",
			(json_int_t)total, "start", (json_int_t)start, "end", (json_int_t)end, "cksum", cksum, "total_cksum",
			total_cksum, "content", hex);
	rc = rec ? storable_nfreeze_hash(rec, out) : ERR_NOMEM;
out:
	json_decref(rec);
	free(bytes);
	free(hex);
	return rc;
}

int openqa_upload_asset(struct worker *w, struct job_run *r, const char *path, const char *name, const char *scope)
{
	char total_cksum[64], *tmp = NULL;
	long long size, total, index;
	struct stat st;
	FILE *f = NULL;
	struct buf rec;
	int rc = -1;

	/* openQA 4.6 takes an asset as chunks, each an OpenQA::File frozen by
	 * Perl's Storable, in a multipart upload with asset=public|private;
	 * the last chunk makes it check the whole file and register it. */
	buf_init(&rec, 2 * OQ_CHUNK_SIZE + 4096);
	if (stat(path, &st) || !(f = fopen(path, "rb")) || file_sha256_b64(path, total_cksum, sizeof(total_cksum))) {
		log_err("job %lld: asset '%s': cannot read %s: %s", r->id, name, path, strerror(errno));
		goto out;
	}
	tmp = path_join(r->out, ".asset-chunk");
	if (!tmp)
		goto out;
	size = (long long)st.st_size;
	total = size ? (size + OQ_CHUNK_SIZE - 1) / OQ_CHUNK_SIZE : 1;
	log_info("job %lld: uploading %s asset '%s' (%lld bytes) in %lld chunks", r->id, scope, name, size, total);
	for (index = 1; index <= total && !*w->stop; index++) {
		long long start = (index - 1) * OQ_CHUNK_SIZE, end = start + OQ_CHUNK_SIZE < size ? start + OQ_CHUNK_SIZE : size;
		struct http_part p[2] = { { "file", NULL, tmp, name }, { "asset", scope, NULL, NULL } };
		char what[400];
		json_t *ans;
		bool ok;
		buf_reset(&rec);
		if (chunk_record(f, path, index, total, start, end, total_cksum, &rec) ||
		    file_write_all(tmp, rec.data, rec.len)) {
			log_err("job %lld: asset '%s': chunk %lld not prepared", r->id, name, index);
			goto out;
		}
		snprintf(what, sizeof(what), "asset %s chunk %lld/%lld", name, index, total);
		if (post_artefact(w, r, p, 2, what))
			goto out;
		ans = w->resp.data ? json_loads(w->resp.data, 0, NULL) : NULL;
		ok = json_is_string(json_object_get(ans, "status")) &&
		     !strcmp(json_string_value(json_object_get(ans, "status")), "ok");
		json_decref(ans);
		if (!ok) {
			log_err("job %lld: %s not taken: %s", r->id, what, w->resp.data ? w->resp.data : "no answer");
			goto out;
		}
	}
	rc = index > total ? 0 : -1;
out:
	if (f)
		fclose(f);
	if (tmp)
		(void)unlink(tmp);
	free(tmp);
	buf_release(&rec);
	return rc;
}

/* ------------------------------------------------------------ status */

/* The module's result file with each detail's screenshot as openQA's
 * worker sends it: {"name", "md5"} (md5s cached per file name). New
 * reference, or NULL when the module has no result yet (*lost set when
 * memory ran out: a step's screenshot or text would be missing). */
static json_t *module_result(struct job_run *r, const char *tr, const char *name, json_t *texts, bool *lost)
{
	char fn[300];
	json_t *res, *d;
	size_t i;

	snprintf(fn, sizeof(fn), "result-%s.json", name);
	if (!(res = worker__read_json(tr, fn)) || !json_is_object(res)) {
		json_decref(res);
		return NULL;
	}
	json_array_foreach(json_object_get(res, "details"), i, d) {
		const char *shot = json_string_value(json_object_get(d, "screenshot"));
		const char *text = json_string_value(json_object_get(d, "text"));
		if (text && texts && json_array_append_new(texts, json_string(text)))
			*lost = true;
		if (shot && !strchr(shot, '/')) {
			const char *md5 = json_string_value(json_object_get(r->oq_md5, shot));
			char sum[33], *p;
			if (!md5) {
				p = path_join(tr, shot);
				if (p && !file_md5(p, sum)) {
					if (json_object_set_new(r->oq_md5, shot, json_string(sum)))
						*lost = true;
					md5 = json_string_value(json_object_get(r->oq_md5, shot));
				}
				free(p);
			}
			if (md5 && json_object_set_new(d, "screenshot", json_pack("{s:s,s:s}", "name", shot, "md5", md5)))
				*lost = true;
		}
	}
	return res;
}

/* While openQA's live view is open: the runner's new output as the status's
 * "log" (openQA appends it to autoinst-log-live.txt) and its newest frame as
 * "screen" (the live stream's last.png), as openQA's worker sends them. */
static void add_live(struct job_run *r, json_t *status)
{
	/* Display only (openQA's live view; nothing recorded): what cannot be
	 * added when memory runs out is left out, as docs/hardening.md allows. */
	json_t *live = live_relay_update(&r->live, r->out, r->log), *frame = json_object_get(live, "frame");
	const char *text = json_string_value(json_object_get(live, "log"));

	if (text && *text)
		(void)json_object_set_new(status, "log", json_pack("{s:i,s:s}", "offset", 0, "data", text));
	if (json_is_string(json_object_get(frame, "png"))) {
		char name[48];
		snprintf(name, sizeof(name), "live-%lld", (long long)json_integer_value(json_object_get(frame, "seq")));
		(void)json_object_set_new(status, "screen",
					  json_pack("{s:s,s:O}", "name", name, "png", json_object_get(frame, "png")));
	}
	json_decref(live);
}

/* Where openQA's livehandler finds the job's developer-mode WebSocket
 * (cmd_srv_url: it takes the port, the host from worker_hostname, the token
 * from the job), once the runner's command server listens; and whether
 * developer mode holds the job (test_execution_paused: 0 or the reason). */
static int add_devmode(struct job_run *r, json_t *status, const char *host)
{
	const char *token = json_string_value(json_object_get(r->settings, "JOBTOKEN"));
	char *pf = path_join(r->out, CMDSRV_PORT_FILE), url[512];
	json_t *dev = worker__read_json(r->out, DEVMODE_STATE_FILE), *tep = json_object_get(dev, "test_execution_paused");
	struct buf b;
	long port;
	int rc = 0;

	buf_init(&b, 64);
	if (pf && token && !file_read_all(pf, &b) && b.data && (port = strtol(b.data, NULL, 10)) > 0 && port < 65536) {
		snprintf(url, sizeof(url), "http://%s:%ld/%s", host, port, token);
		if (json_object_set_new(status, "cmd_srv_url", json_string(url)))
			rc = ERR_NOMEM;
	}
	if (json_is_string(tep) && json_object_set(status, "test_execution_paused", tep))
		rc = ERR_NOMEM; /* the server would take the job as running on */
	free(pf);
	buf_release(&b);
	json_decref(dev);
	return rc;
}

int openqa_status(struct worker *w, struct job_run *r, bool final)
{
	char *tr = path_join(r->out, "testresults"), target[96], err[512], *text = NULL;
	json_t *order = tr ? worker__read_json(tr, "test_order.json") : NULL, *result = json_object();
	json_t *texts = json_array(), *status = NULL, *reply = NULL, *m, *known, *v;
	const char *current = NULL, *key;
	bool lost = false; /* a part of the status could not be added: not sent so */
	long st = 0;
	size_t i;
	int tries, rc = 0, ret = 0;

	if (!r->oq_md5)
		r->oq_md5 = json_object();
	if (!r->oq_sent)
		r->oq_sent = json_object();
	if (!tr || !result || !texts || !r->oq_md5 || !r->oq_sent)
		goto out;
	json_array_foreach(order, i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		json_t *mr;
		if (!name)
			continue;
		if ((mr = module_result(r, tr, name, texts, &lost))) {
			lost = lost || json_object_set_new(result, name, mr);
		} else if (!current && !final) {
			current = name;
			lost = lost || json_object_set_new(result, name, json_pack("{s:s}", "result", "running"));
		}
	}
	status = json_pack("{s:I,s:s,s:i}", "worker_id", (json_int_t)w->id, "worker_hostname", w->hostname,
			   "test_execution_paused", 0);
	if (!status)
		goto out;
	lost = lost || add_devmode(r, status, w->hostname);
	if (json_array_size(order) && (!r->oq_order_sent || final))
		lost = lost || json_object_set(status, "test_order", order);
	if (r->live.on && !final)
		add_live(r, status);
	lost = lost || json_object_set(status, "result", result);
	if (!lost) {
		json_t *body = json_pack("{s:O}", "status", status);
		text = body ? json_dumps(body, JSON_COMPACT) : NULL;
		json_decref(body);
	}
	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/status", r->id);
	/* openQA asks to try again on 408, 425, 490 ("Failed modules") and 5xx. */
	for (tries = 0; text && tries < (final ? 5 : 1); tries++) {
		rc = http_request(&w->http, "POST", target, "application/json", text, strlen(text), 60, &st, &w->resp, err,
				  sizeof(err));
		if (!rc && st < 500 && st != 408 && st != 425 && st != 490)
			break;
		if (final)
			time_sleep_ms(2000);
	}
	if (!text || rc || st != 200) {
		log_warn("job %lld: status not accepted: %s", r->id,
			 !text ? "out of memory" : rc ? err : w->resp.data && *w->resp.data ? w->resp.data : "HTTP error");
		if (!rc && text && st >= 400 && st < 500 && st != 408 && st != 425 && st != 490)
			ret = -1; /* openQA refuses: the job is not ours any more */
		if (final)
			r->upload_failed = true;
		goto out;
	}
	if (json_object_get(status, "test_order"))
		r->oq_order_sent = true;
	reply = json_loads(w->resp.data ? w->resp.data : "", 0, NULL);
	json_array_foreach(json_object_get(reply, "known_images"), i, known)
		if (json_string_value(known)) /* not noted: uploaded again, nothing lost */
			(void)json_object_set_new(r->oq_sent, json_string_value(known), json_true());
	/* The screenshots of the modules reported that openQA lacks. */
	json_object_foreach(r->oq_md5, key, v) {
		const char *md5 = json_string_value(v);
		if (!md5 || json_object_get(r->oq_sent, md5))
			continue;
		if (upload_image(w, r, tr, key, md5)) {
			if (final)
				r->upload_failed = true;
			continue;
		}
		(void)json_object_set_new(r->oq_sent, md5, json_true()); /* not noted: sent again */
	}
	json_array_foreach(texts, i, known) {
		const char *name = json_string_value(known);
		char *p = name && !strchr(name, '/') ? path_join(tr, name) : NULL;
		json_t *kf = json_object_get(reply, "known_files");
		bool have = false;
		size_t k;
		json_t *f;
		json_array_foreach(kf, k, f)
			if (json_string_value(f) && !strcmp(json_string_value(f), name))
				have = true;
		if (p && !have && file_exists(p) && openqa_upload(w, r, p, name, false) && final)
			r->upload_failed = true;
		free(p);
	}
out:
	free(text);
	free(tr);
	json_decref(order);
	json_decref(result);
	json_decref(texts);
	json_decref(status);
	json_decref(reply);
	return ret;
}

/* ------------------------------------------------------------ the WebSocket */

static void ws_send_msg(struct worker *w, json_t *msg)
{
	int rc;

	if (!msg)
		return;
	if (w->ws && (rc = oq_ws_send(w->ws, msg)))
		log_warn("websocket: sending '%s' failed: %s", json_string_value(json_object_get(msg, "type")),
			 err_str(rc));
	json_decref(msg);
}

/* worker_status: free, or working on r's job (with its JOBTOKEN). */
static void send_worker_status(struct worker *w, struct job_run *r)
{
	json_t *msg = json_pack("{s:s,s:s}", "type", "worker_status", "status", r ? "working" : "free");

	if (msg && r) {
		const char *token = json_string_value(json_object_get(r->settings, "JOBTOKEN"));
		if (json_object_set_new(msg, "job", json_pack("{s:I,s:{s:s?}}", "id", (json_int_t)r->id, "settings",
							      "JOBTOKEN", token))) {
			/* "working" without the job: not sent (the next one comes in OQ_STATUS_BUSY_S) */
			json_decref(msg);
			msg = NULL;
		}
	}
	ws_send_msg(w, msg);
}

static void reject(struct worker *w, json_t *ids, const char *reason)
{
	log_warn("rejecting %zu job(s) offered: %s", json_array_size(ids), reason);
	ws_send_msg(w, json_pack("{s:s,s:o,s:s}", "type", "rejected", "job_ids", ids, "reason", reason));
}

/* The ids a grab_job/grab_jobs message offers (for a rejection); NULL
 * when out of memory (no rejection is sent rather than one missing a job). */
static json_t *offered_ids(const json_t *msg)
{
	const json_t *job = json_object_get(msg, "job"), *info = json_object_get(msg, "job_info");
	json_t *ids = json_array();

	if (ids && ((json_is_integer(json_object_get(job, "id")) && json_array_append(ids, json_object_get(job, "id"))) ||
		    (json_is_array(json_object_get(info, "ids")) && json_array_extend(ids, json_object_get(info, "ids"))))) {
		json_decref(ids);
		ids = NULL;
	}
	return ids;
}

void openqa_poll(struct worker *w, struct job_run *r)
{
	json_t *msg;
	int rc = 0;

	if (!w->ws)
		return;
	if (time_mono() >= r->oq_next_status) {
		send_worker_status(w, r);
		r->oq_next_status = time_mono() + OQ_STATUS_BUSY_S;
	}
	while ((msg = oq_ws_recv(w->ws, 0, &rc))) {
		const char *type = json_string_value(json_object_get(msg, "type"));
		json_int_t jobid = json_integer_value(json_object_get(msg, "jobid"));
		bool ours = !json_object_get(msg, "jobid") || !json_is_integer(json_object_get(msg, "jobid")) ||
			    jobid == r->id;
		if (!type) {
			log_warn("websocket: message without a type ignored");
		} else if (!strcmp(type, "info")) {
			/* the server saw our status */
		} else if (!strcmp(type, "grab_job") || !strcmp(type, "grab_jobs")) {
			char why[64];
			snprintf(why, sizeof(why), "already busy with job %lld", r->id);
			reject(w, offered_ids(msg), why);
		} else if (!ours) {
			log_warn("websocket: '%s' for job %lld ignored: working on job %lld", type, (long long)jobid, r->id);
		} else if (!strcmp(type, "cancel") || !strcmp(type, "obsolete")) {
			log_info("job %lld: %s by openQA", r->id, !strcmp(type, "cancel") ? "cancelled" : "obsoleted");
			r->cancelled = true;
			r->obsoleted = !strcmp(type, "obsolete");
		} else if (!strcmp(type, "abort")) {
			log_info("job %lld: aborted by openQA (no uploads)", r->id);
			r->aborted = true;
		} else if (!strcmp(type, "quit")) {
			log_info("job %lld: openQA asks the worker to quit; the job is duplicated", r->id);
			r->aborted = true;
			r->quit = true;
			w->quit = true; /* after the job's last calls: stop cancels transfers */
		} else if (!strcmp(type, "livelog_start") || !strcmp(type, "livelog_stop")) {
			/* openQA's live view: while someone watches, each status (every
			 * second) carries the runner's new output and newest frame. */
			r->oq_livelog += !strcmp(type, "livelog_start") ? 1 : r->oq_livelog > 0 ? -1 : 0;
			live_relay_set(&r->live, r->out, r->log, r->oq_livelog > 0);
			log_info("job %lld: %s (%d viewer(s))", r->id, type, r->oq_livelog);
		} else if (!strcmp(type, "developer_session_start")) {
			/* openQA's livehandler talks to the runner's command
			 * server itself (cmd_srv_url in the status). */
			log_info("job %lld: developer_session_start: openQA's developer session is open", r->id);
		} else if (!strcmp(type, "incompatible")) {
			log_err("openQA says this worker is incompatible: stopping");
			r->aborted = true;
			w->quit = true;
		} else {
			log_warn("websocket: unknown message '%s' ignored", type);
		}
		json_decref(msg);
	}
	if (rc == ERR_CLOSED && !r->aborted) {
		/* openQA's own worker carries on and reconnects; the job's REST
		 * calls do not need the socket. */
		log_warn("job %lld: the websocket closed; finishing the job over the REST API", r->id);
		oq_ws_release(w->ws);
		free(w->ws);
		w->ws = NULL;
	}
	if ((r->cancelled || r->aborted) && !r->exited && r->kill_at == 0 && r->pid > 0) {
		kill(-r->pid, r->aborted ? SIGKILL : SIGTERM);
		r->kill_at = time_mono() + WORKER_CANCEL_GRACE_S;
	}
}

/* Run one job of a grab_job/grab_jobs message after telling openQA it is
 * accepted. False when it was not valid (rejected). */
static bool take_job(struct worker *w, json_t *job)
{
	json_t *id = json_object_get(job, "id");

	if (!json_is_integer(id) || !json_is_object(json_object_get(job, "settings"))) {
		json_t *ids = json_array();
		if (ids && json_is_integer(id) && json_array_append(ids, id)) {
			json_decref(ids); /* no rejection rather than one without the job */
			ids = NULL;
		}
		reject(w, ids, "the provided job is invalid");
		return false;
	}
	ws_send_msg(w, json_pack("{s:s,s:O}", "type", "accepted", "jobid", id));
	worker__run_job(w, job);
	return true;
}

/* grab_jobs: a sequence of directly chained jobs; a nested array is a
 * sub-sequence whose rest is skipped when one of it fails (the server
 * sets those skipped itself when the first ends not ok). */
static void take_sequence(struct worker *w, const json_t *data, const json_t *seq)
{
	const json_t *e;
	size_t i;

	json_array_foreach(seq, i, e) {
		char key[32];
		if (*w->stop || w->quit)
			return;
		if (json_is_array(e)) {
			take_sequence(w, data, e);
			continue;
		}
		snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(e));
		if (json_is_object(json_object_get(data, key)))
			take_job(w, json_object_get(data, key));
		else
			log_warn("grab_jobs: job %s is in the sequence but not in the data", key);
	}
}

int openqa_serve(struct worker *w)
{
	char path[64], err[512];
	double next_status = 0;
	int rc;

	if (!(w->ws = calloc(1, sizeof(*w->ws))))
		return ERR_NOMEM;
	snprintf(path, sizeof(path), "/api/v1/ws/%lld", w->id);
	rc = oq_ws_connect(w->ws, w->http.base, path, w->http.key, w->http.secret, 30, err, sizeof(err));
	if (rc) {
		log_warn("%s", err);
		free(w->ws);
		w->ws = NULL;
		return rc;
	}
	while (!*w->stop) {
		json_t *msg;
		const char *type;
		if (time_mono() >= next_status) {
			send_worker_status(w, NULL);
			next_status = time_mono() + OQ_STATUS_IDLE_S;
		}
		if (!(msg = oq_ws_recv(w->ws, 1000, &rc))) {
			if (rc == ERR_CLOSED) {
				log_warn("websocket to openQA closed: registering again");
				break;
			}
			continue;
		}
		type = json_string_value(json_object_get(msg, "type"));
		if (!type) {
			log_warn("websocket: message without a type ignored");
		} else if (!strcmp(type, "grab_job")) {
			take_job(w, json_object_get(msg, "job"));
			next_status = 0; /* free again */
		} else if (!strcmp(type, "grab_jobs")) {
			const json_t *info = json_object_get(msg, "job_info");
			log_info("grab_jobs: %zu job(s) in sequence", json_array_size(json_object_get(info, "ids")));
			take_sequence(w, json_object_get(info, "data"), json_object_get(info, "sequence"));
			next_status = 0;
		} else if (!strcmp(type, "incompatible")) {
			log_err("openQA says this worker is incompatible (websocket_api_version): stopping");
			*w->stop = 1;
		} else if (!strcmp(type, "quit")) {
			log_info("openQA asks the worker to quit");
			*w->stop = 1;
		} else if (strcmp(type, "info") && strcmp(type, "livelog_stop")) {
			log_debug("websocket: '%s' while idle ignored", type);
		}
		json_decref(msg);
		if (w->quit)
			*w->stop = 1;
		if (!w->ws)
			break; /* lost while a job ran */
	}
	if (w->ws) {
		if (*w->stop)
			ws_send_msg(w, json_pack("{s:s}", "type", "quit"));
		oq_ws_release(w->ws);
		free(w->ws);
		w->ws = NULL;
	}
	return *w->stop ? 0 : ERR_CLOSED;
}
