/* SPDX-License-Identifier: MIT */
/* cmdsrv.c - the runner's command server (os-autoinst's commands.pm):
 * test data as files or cpio archives, log and asset uploads, save_tmp_file's
 * files, current_script, the job's vars, all under /<JOBTOKEN>/ on
 * 127.0.0.1. Owns its MHD daemon and copies of the paths it serves; it never
 * touches the runner's state (vars come through cmdsrv_set_vars). */
#include "runner/srv/cmdsrv.h"
#include "runner/srv/cmdsrv_ws.h"
#include "runner/prim/hashed.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/err.h"
#include "util/file.h"
#include "util/log.h"
#include "util/path.h"
#include "util/banned.h" /* last: after every system header */

#undef LOG_MODULE
#define LOG_MODULE "cmdsrv"

/* OpenQA::Isotovideo::Interface::version of os-autoinst 4.6: what
 * GET isotovideo/version answers. */
#define CMDSRV_INTERFACE_VERSION 34

struct cmdsrv {
	struct MHD_Daemon *mhd;
	unsigned port;
	char *token, *casedir, *out_dir, *assetdir, *vars_file;
	pthread_mutex_t lock; /* guards vars */
	json_t *vars;
	struct cmdsrv_ws *ws; /* the developer-mode WebSocket's clients */
};

/* One upload request in progress (MHD's con_cls). */
struct upload {
	enum cmdsrv_kind kind;
	char *name;            /* the URL's file name */
	char *tmp;             /* OUT/.cmdsrv-upload-XXXXXX, NULL once renamed */
	int fd;
	int multipart;
	struct MHD_PostProcessor *pp;
	unsigned long long size;
	int got_file;
	int status;            /* 0, or the error to answer */
	char msg[256];
	char upname[LIMIT_CMDSRV_FIELD];
	char target[LIMIT_CMDSRV_FIELD];
};

int cmdsrv_path_allowed(const char *rel)
{
	const char *p = rel;

	if (!rel || rel[0] == '/')
		return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		if (*p == '/')
			p++;
	}
	return 1;
}

/* url after "/token": "/name[/rest]"; name matched, rest after its '/'. */
static int take(const char *p, const char *name, const char **rest)
{
	size_t n = strlen(name);

	if (strncmp(p, name, n))
		return 0;
	if (p[n] == '\0') {
		*rest = "";
		return 1;
	}
	if (p[n] != '/')
		return 0;
	*rest = p + n + 1;
	return 1;
}

int cmdsrv_route_parse(const char *method, const char *url, const char *token, struct cmdsrv_route *rt)
{
	static const struct {
		const char *name;
		enum cmdsrv_kind kind;
		int post;      /* POST only, else GET/HEAD */
		int need_rest; /* a name or path must follow */
		int one;       /* the rest is one component (no '/') */
	} routes[] = {
		{ "data", CMDSRV_DATA, 0, 0, 0 },
		{ "uploadlog", CMDSRV_UPLOADLOG, 1, 1, 1 },
		{ "upload_asset", CMDSRV_UPLOAD_ASSET, 1, 1, 1 },
		{ "current_script", CMDSRV_CURRENT_SCRIPT, 0, 0, 0 },
		{ "files", CMDSRV_FILES, 0, 1, 0 },
		{ "assets", CMDSRV_ASSETS, 0, 1, 0 },
		{ "vars", CMDSRV_VARS, 0, 0, 0 },
		{ "isotovideo", CMDSRV_ISOTOVIDEO, 0, 1, 1 },
		{ "ws", CMDSRV_WS, 0, 0, 0 },
	};
	size_t tl = strlen(token), i;
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD"), post = !strcmp(method, "POST");
	const char *p, *rest;

	if (!tl || url[0] != '/' || strncmp(url + 1, token, tl) || (url[1 + tl] != '/' && url[1 + tl] != '\0'))
		return 403;
	p = url + 1 + tl;
	if (*p == '/')
		p++;
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!take(p, routes[i].name, &rest))
			continue;
		if ((routes[i].need_rest && !*rest) || !cmdsrv_path_allowed(rest) ||
		    (routes[i].one && strchr(rest, '/')))
			return 404;
		if (routes[i].kind == CMDSRV_ISOTOVIDEO && post)
			return 404; /* os-autoinst lists no POST command */
		if (routes[i].post ? !post : !get)
			return 405;
		rt->kind = routes[i].kind;
		rt->rest = rest;
		return 0;
	}
	if (take(p, "broadcast", &rest))
		return 501;
	return 404;
}

int cmdsrv_make_token(char *out, size_t len)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char rnd[64];
	size_t i;

	if (!len)
		return ERR_INVALID;
	if (len - 1 > sizeof(rnd) || getrandom(rnd, len - 1, 0) != (ssize_t)(len - 1))
		return ERR_IO;
	for (i = 0; i + 1 < len; i++)
		out[i] = set[rnd[i] % (sizeof(set) - 1)];
	out[len - 1] = '\0';
	return 0;
}

/* cpio writing */

struct cpio_walk {
	struct archive *a;
	const char *prefix;
	unsigned long ino;
	char *err;
	size_t errlen;
};

static int cpio_file(struct cpio_walk *w, const char *path, const char *rel, const struct stat *st)
{
	struct archive_entry *e = NULL;
	char name[4096], chunk[65536];
	int fd = -1, rc = 0;
	ssize_t n;

	if ((size_t)snprintf(name, sizeof(name), "%s%s", w->prefix, rel) >= sizeof(name)) {
		err_set(w->err, w->errlen, "'%s': path too long", path);
		return ERR_TOO_BIG;
	}
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		/* As commands.pm: an unreadable file is logged and left out. */
		log_warn("data file '%s': %s", path, strerror(errno));
		return 0;
	}
	if (!(e = archive_entry_new())) {
		rc = ERR_NOMEM;
		goto out;
	}
	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, st->st_mode & 0777);
	archive_entry_set_size(e, st->st_size);
	archive_entry_set_mtime(e, st->st_mtime, 0);
	archive_entry_set_nlink(e, 1);
	archive_entry_set_ino(e, (la_int64_t)++w->ino);
	if (archive_write_header(w->a, e) != ARCHIVE_OK) {
		err_set(w->err, w->errlen, "'%s': %s", path, archive_error_string(w->a));
		rc = ERR_IO;
		goto out;
	}
	/* Exactly st_size bytes: a file that changes meanwhile is cut or padded
	 * by libarchive rather than breaking the archive. */
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (archive_write_data(w->a, chunk, (size_t)n) < 0) {
			err_set(w->err, w->errlen, "'%s': %s", path, archive_error_string(w->a));
			rc = ERR_IO;
			goto out;
		}
	if (n < 0) {
		rc = -errno;
		err_set(w->err, w->errlen, "'%s': %s", path, strerror(errno));
	}
out:
	archive_entry_free(e);
	close(fd);
	return rc;
}

static int cpio_walk(struct cpio_walk *w, const char *dir, const char *rel, int depth)
{
	struct dirent **list = NULL;
	int n, i, rc = 0;

	if (depth > 64) {
		err_set(w->err, w->errlen, "'%s': directories nested too deep", dir);
		return ERR_TOO_BIG;
	}
	if ((n = scandir(dir, &list, NULL, alphasort)) < 0) {
		err_set(w->err, w->errlen, "'%s': %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		const char *d = list[i]->d_name;
		char *path = NULL, *sub = NULL;
		struct stat st, lst;

		if (rc || !strcmp(d, ".") || !strcmp(d, ".."))
			goto next;
		path = path_join(dir, d);
		sub = *rel ? path_join(rel, d) : strdup(d);
		if (!path || !sub) {
			rc = ERR_NOMEM;
			goto next;
		}
		if (stat(path, &st) || lstat(path, &lst))
			goto next;
		if (S_ISREG(st.st_mode))
			rc = cpio_file(w, path, sub, &st);
		else if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode)) /* no linked loops */
			rc = cpio_walk(w, path, sub, depth + 1);
next:
		free(path);
		free(sub);
		free(list[i]);
	}
	free(list);
	return rc;
}

int cmdsrv_cpio_dir(const char *dir, const char *prefix, int fd, char *err, size_t errlen)
{
	struct cpio_walk w = { .prefix = prefix, .err = err, .errlen = errlen };
	int rc;

	if (!(w.a = archive_write_new()))
		return ERR_NOMEM;
	if (archive_write_set_format_cpio_newc(w.a) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w.a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(w.a, fd) != ARCHIVE_OK) {
		err_set(err, errlen, "cpio: %s", archive_error_string(w.a));
		rc = ERR_IO;
		goto out;
	}
	rc = cpio_walk(&w, dir, "", 0);
	if (archive_write_close(w.a) != ARCHIVE_OK && !rc) {
		err_set(err, errlen, "cpio: %s", archive_error_string(w.a));
		rc = ERR_IO;
	}
out:
	archive_write_free(w.a);
	return rc;
}

/* responses */

static enum MHD_Result answer(struct MHD_Connection *con, unsigned status, const char *ctype, const char *body)
{
	struct MHD_Response *res = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!res)
		return MHD_NO;
	MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(con, status, res);
	MHD_destroy_response(res);
	return ret;
}

static enum MHD_Result answerf(struct MHD_Connection *con, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum MHD_Result answerf(struct MHD_Connection *con, unsigned status, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return answer(con, status, "text/plain; charset=utf-8", text);
}

static enum MHD_Result answer_json(struct MHD_Connection *con, json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	enum MHD_Result ret;

	if (!text)
		return answerf(con, 500, "out of memory\n");
	ret = answer(con, 200, "application/json", text);
	free(text);
	return ret;
}

static const char *content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ "txt", "text/plain" }, { "json", "application/json" }, { "xml", "application/xml" },
		{ "html", "text/html" }, { "htm", "text/html" }, { "css", "text/css" },
		{ "js", "application/javascript" }, { "png", "image/png" }, { "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" }, { "gif", "image/gif" }, { "svg", "image/svg+xml" },
		{ "gz", "application/x-gzip" }, { "zip", "application/zip" }, { "pdf", "application/pdf" },
		{ "oga", "audio/ogg" }, { "ogg", "audio/ogg" }, { "webm", "video/webm" },
	};
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	size_t i;

	if (dot && (!slash || dot > slash))
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (!strcasecmp(dot + 1, types[i].ext))
				return types[i].type;
	return "application/octet-stream";
}

/* Serve path when it is a regular file: 1 answered, 0 not a file. */
static int serve_file(struct MHD_Connection *con, const char *path, enum MHD_Result *ret)
{
	struct MHD_Response *res;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (!(res = MHD_create_response_from_fd64((uint64_t)st.st_size, fd))) {
		close(fd);
		*ret = MHD_NO;
		return 1;
	}
	MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(path));
	*ret = MHD_queue_response(con, 200, res);
	MHD_destroy_response(res);
	return 1;
}

static enum MHD_Result serve_cpio(struct cmdsrv *s, struct MHD_Connection *con, const char *dir)
{
	struct MHD_Response *res;
	char *tmp = path_join(s->out_dir, ".cmdsrv-cpio-XXXXXX"), err[512] = "";
	enum MHD_Result ret;
	off_t size;
	int fd = tmp ? mkostemp(tmp, O_CLOEXEC) : -1, rc;

	if (fd < 0) {
		free(tmp);
		return answerf(con, 500, "cannot create a temporary file in '%s'\n", s->out_dir);
	}
	unlink(tmp);
	free(tmp);
	if ((rc = cmdsrv_cpio_dir(dir, "data/", fd, err, sizeof(err)))) {
		close(fd);
		log_warn("cpio of '%s': %s", dir, err);
		return answerf(con, 500, "cannot archive '%s': %s\n", dir, err);
	}
	if ((size = lseek(fd, 0, SEEK_END)) < 0 || !(res = MHD_create_response_from_fd64((uint64_t)size, fd))) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(res, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-cpio");
	ret = MHD_queue_response(con, 200, res);
	MHD_destroy_response(res);
	return ret;
}

static enum MHD_Result get_data(struct cmdsrv *s, struct MHD_Connection *con, const char *rel)
{
	char *base = path_join(s->casedir, "data"), *path = base && *rel ? path_join(base, rel) : NULL;
	const char *p = *rel ? path : base;
	enum MHD_Result ret = MHD_NO;

	if (!p)
		ret = answerf(con, 500, "out of memory\n");
	else if (file_is_dir(p))
		ret = serve_cpio(s, con, p);
	else if (!serve_file(con, p, &ret))
		ret = answerf(con, 404, "no test data '%s' under CASEDIR/data\n", *rel ? rel : ".");
	log_info("test data requested: %s (%s)", p ? p : rel, ret == MHD_YES ? "answered" : "failed");
	free(base);
	free(path);
	return ret;
}

/* save_tmp_file's file: Lua keeps OUT/files/<rel>, Perl OUT/<hashed_string(rel)>. */
static enum MHD_Result get_files(struct cmdsrv *s, struct MHD_Connection *con, const char *rel)
{
	char *dir = path_join(s->out_dir, "files"), *path = dir ? path_join(dir, rel) : NULL, *hp = NULL, h[8];
	enum MHD_Result ret = MHD_NO;

	if (!path)
		ret = answerf(con, 500, "out of memory\n");
	else if (!serve_file(con, path, &ret)) {
		if (!hashed_string(rel, strlen(rel), 5, h) && (hp = path_join(s->out_dir, h)) &&
		    serve_file(con, hp, &ret))
			;
		else
			ret = answerf(con, 404, "no file '%s' saved by save_tmp_file\n", rel);
	}
	free(dir);
	free(path);
	free(hp);
	return ret;
}

/* assets/<type>/<name>[/relpath]: OUT/<name> (where a worker's cache puts
 * it), else ASSETDIR/<type>/<name>, as commands.pm. */
static enum MHD_Result get_asset(struct cmdsrv *s, struct MHD_Connection *con, const char *rest)
{
	const char *slash = strchr(rest, '/'), *name, *rel;
	char type[256], nm[256], *path = NULL, *p2 = NULL, *full = NULL;
	enum MHD_Result ret = MHD_NO;
	size_t tl, nl;

	if (!slash || (tl = (size_t)(slash - rest)) >= sizeof(type) || !tl)
		return answerf(con, 404, "asset route is assets/<type>/<name>[/path]\n");
	memcpy(type, rest, tl);
	type[tl] = '\0';
	name = slash + 1;
	nl = strcspn(name, "/");
	rel = name[nl] ? name + nl + 1 : "";
	if (!nl || nl >= sizeof(nm))
		return answerf(con, 404, "asset route is assets/<type>/<name>[/path]\n");
	memcpy(nm, name, nl);
	nm[nl] = '\0';
	path = path_join(s->out_dir, nm);
	if (path && !file_exists(path) && s->assetdir) {
		p2 = path_join(s->assetdir, type);
		free(path);
		path = p2 ? path_join(p2, nm) : NULL;
	}
	full = path && *rel ? path_join(path, rel) : NULL;
	if (!path || (*rel && !full))
		ret = answerf(con, 500, "out of memory\n");
	else if (!serve_file(con, *rel ? full : path, &ret))
		ret = answerf(con, 404, "no asset '%s' of type '%s'%s%s\n", nm, type, *rel ? " with " : "", rel);
	free(path);
	free(p2);
	free(full);
	return ret;
}

static enum MHD_Result get_vars(struct cmdsrv *s, struct MHD_Connection *con)
{
	json_t *vars = NULL, *o;
	enum MHD_Result ret;

	if (s->vars_file) {
		json_error_t je;
		if (!(vars = json_load_file(s->vars_file, 0, &je)) || !json_is_object(vars)) {
			json_decref(vars);
			return answerf(con, 500, "cannot read '%s': %s\n", s->vars_file, je.text);
		}
	} else {
		pthread_mutex_lock(&s->lock);
		vars = s->vars ? json_deep_copy(s->vars) : json_object();
		pthread_mutex_unlock(&s->lock);
	}
	o = vars ? json_pack("{s:o}", "vars", vars) : NULL;
	ret = answer_json(con, o);
	json_decref(o);
	return ret;
}

static enum MHD_Result get_route(struct cmdsrv *s, struct MHD_Connection *con, const struct cmdsrv_route *rt)
{
	enum MHD_Result ret = MHD_NO;
	char *path;

	switch (rt->kind) {
	case CMDSRV_DATA:
		return get_data(s, con, rt->rest);
	case CMDSRV_FILES:
		return get_files(s, con, rt->rest);
	case CMDSRV_ASSETS:
		return get_asset(s, con, rt->rest);
	case CMDSRV_VARS:
		return get_vars(s, con);
	case CMDSRV_WS:
		if (*rt->rest)
			return answerf(con, 404, "no route ws/%s\n", rt->rest);
		return cmdsrv_ws_upgrade(s->ws, con);
	case CMDSRV_CURRENT_SCRIPT:
		if (!(path = path_join(s->out_dir, "current_script")))
			return answerf(con, 500, "out of memory\n");
		if (!serve_file(con, path, &ret))
			ret = answerf(con, 404, "no current_script (script_output writes it)\n");
		free(path);
		return ret;
	case CMDSRV_ISOTOVIDEO:
		if (!strcmp(rt->rest, "version")) {
			json_t *o = json_pack("{s:i}", "version", CMDSRV_INTERFACE_VERSION);
			ret = answer_json(con, o);
			json_decref(o);
			return ret;
		}
		return answerf(con, 404, "isotovideo command '%s' is not served (vigil serves: version)\n", rt->rest);
	default:
		return answerf(con, 405, "method not allowed\n");
	}
}

/* uploads */

static void upload_fail(struct upload *u, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void upload_fail(struct upload *u, int status, const char *fmt, ...)
{
	va_list ap;

	if (u->status)
		return;
	u->status = status;
	va_start(ap, fmt);
	vsnprintf(u->msg, sizeof(u->msg), fmt, ap);
	va_end(ap);
}

static void upload_write(struct upload *u, const char *data, size_t size)
{
	if (u->status || !size)
		return;
	if (u->size + size > LIMIT_CMDSRV_UPLOAD) {
		upload_fail(u, 413, "upload over the limit of %llu bytes\n", (unsigned long long)LIMIT_CMDSRV_UPLOAD);
		return;
	}
	while (size) {
		ssize_t n = write(u->fd, data, size);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			upload_fail(u, 500, "cannot write the upload: %s\n", strerror(n < 0 ? errno : EIO));
			return;
		}
		u->size += (size_t)n;
		data += n;
		size -= (size_t)n;
	}
}

static void field_append(struct upload *u, char *field, const char *key, const char *data, size_t size)
{
	size_t have = strlen(field);

	if (have + size >= LIMIT_CMDSRV_FIELD) {
		upload_fail(u, 400, "form field '%s' too long\n", key);
		return;
	}
	memcpy(field + have, data, size);
	field[have + size] = '\0';
}

static enum MHD_Result post_iter(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
				 const char *ctype, const char *encoding, const char *data, uint64_t off, size_t size)
{
	struct upload *u = cls;

	(void)kind;
	(void)filename;
	(void)ctype;
	(void)encoding;
	if (!strcmp(key, "upload")) {
		u->got_file = 1;
		upload_write(u, data, size);
	} else if (!strcmp(key, "upname") || !strcmp(key, "target")) {
		char *field = !strcmp(key, "upname") ? u->upname : u->target;
		/* a form field overrides the query's (Mojolicious's param: the last) */
		if (off == 0)
			field[0] = '\0';
		field_append(u, field, key, data, size);
	}
	return MHD_YES;
}

static struct upload *upload_new(struct cmdsrv *s, struct MHD_Connection *con, const struct cmdsrv_route *rt)
{
	struct upload *u = calloc(1, sizeof(*u));
	const char *ct = MHD_lookup_connection_value(con, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE), *v;

	if (!u)
		return NULL;
	u->fd = -1;
	u->kind = rt->kind;
	if (!(u->name = strdup(rt->rest)) || !(u->tmp = path_join(s->out_dir, ".cmdsrv-upload-XXXXXX"))) {
		upload_fail(u, 500, "out of memory\n");
		return u;
	}
	if ((u->fd = mkostemp(u->tmp, O_CLOEXEC)) < 0) {
		upload_fail(u, 500, "cannot create a file in '%s': %s\n", s->out_dir, strerror(errno));
		free(u->tmp);
		u->tmp = NULL;
		return u;
	}
	(void)fchmod(u->fd, 0644); /* as any file the job writes; 0600 harms nothing else */
	u->multipart = ct && !strncasecmp(ct, MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA,
					  strlen(MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA));
	/* The fields may come in the query, as os-autoinst's server (its
	 * param) reads them too; a multipart form's own fields override them. */
	if ((v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "upname")))
		field_append(u, u->upname, "upname", v, strlen(v));
	if ((v = MHD_lookup_connection_value(con, MHD_GET_ARGUMENT_KIND, "target")))
		field_append(u, u->target, "target", v, strlen(v));
	if (u->multipart) {
		if (!(u->pp = MHD_create_post_processor(con, 65536, post_iter, u)))
			upload_fail(u, 400, "malformed multipart/form-data request (no boundary?)\n");
	} else {
		/* A raw body (wget --post-file): the file is the body. */
		u->got_file = 1;
	}
	return u;
}

static void upload_free(struct upload *u)
{
	if (!u)
		return;
	if (u->pp)
		MHD_destroy_post_processor(u->pp);
	if (u->fd >= 0)
		close(u->fd);
	if (u->tmp)
		unlink(u->tmp);
	free(u->tmp);
	free(u->name);
	free(u);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static enum MHD_Result upload_finish(struct cmdsrv *s, struct MHD_Connection *con, struct upload *u)
{
	const char *target, *name;
	char *dir = NULL, *path = NULL, *sub = NULL;
	enum MHD_Result ret;

	if (u->pp && !u->status && MHD_destroy_post_processor(u->pp) != MHD_YES)
		upload_fail(u, 400, "malformed multipart/form-data request\n");
	u->pp = NULL;
	if (!u->status && !u->got_file)
		upload_fail(u, 400, "Upload file content missing\n");
	if (u->kind == CMDSRV_UPLOADLOG) {
		target = "ulogs";
	} else {
		target = *u->target ? u->target : "assets_private";
		if (strcmp(target, "assets_private") && strcmp(target, "assets_public"))
			upload_fail(u, 400, "target '%s' is not assets_private or assets_public\n", target);
	}
	name = base_name(*u->upname ? u->upname : u->name);
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		upload_fail(u, 400, "bad upload name '%s'\n", *u->upname ? u->upname : u->name);
	if (u->status)
		goto out;
	if (close(u->fd)) {
		u->fd = -1;
		upload_fail(u, 500, "cannot write the upload: %s\n", strerror(errno));
		goto out;
	}
	u->fd = -1;
	/* os-autoinst keeps logs in the pool's ulogs/, which openQA's
	 * worker uploads; vigil's worker uploads testresults/ulogs/. */
	sub = u->kind == CMDSRV_UPLOADLOG ? path_join(s->out_dir, "testresults") : strdup(s->out_dir);
	dir = sub ? path_join(sub, target) : NULL;
	path = dir ? path_join(dir, name) : NULL;
	if (!path) {
		upload_fail(u, 500, "out of memory\n");
		goto out;
	}
	if (file_mkdir_p(dir, 0755) || rename(u->tmp, path)) {
		upload_fail(u, 500, "cannot store the upload as '%s': %s\n", path, strerror(errno));
		goto out;
	}
	free(u->tmp);
	u->tmp = NULL;
	log_info("upload '%s': %llu bytes -> %s/%s", u->name, u->size, target, name);
out:
	if (u->status) {
		log_warn("upload '%s' refused: %.*s", u->name, (int)strcspn(u->msg, "\n"), u->msg);
		ret = answer(con, (unsigned)u->status, "text/plain; charset=utf-8", u->msg);
	} else {
		ret = answerf(con, 200, "OK: %s\n", name);
	}
	free(sub);
	free(dir);
	free(path);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *con, const char *url, const char *method,
			      const char *version, const char *data, size_t *data_size, void **con_cls)
{
	struct cmdsrv *s = cls;
	struct upload *u = *con_cls;
	struct cmdsrv_route rt;
	int st;

	(void)version;
	if (u) {
		if (*data_size) {
			if (!u->status && u->multipart && MHD_post_process(u->pp, data, *data_size) != MHD_YES)
				upload_fail(u, 400, "malformed multipart/form-data request\n");
			else if (!u->multipart)
				upload_write(u, data, *data_size);
			*data_size = 0;
			return MHD_YES;
		}
		return upload_finish(s, con, u);
	}
	st = cmdsrv_route_parse(method, url, s->token, &rt);
	/* Never the token in the log: a wrong one is only "not the job's". */
	if (st == 403)
		return answerf(con, 403, "not this job's token\n");
	if (st == 404)
		return answerf(con, 404, "no such route or file (routes: data, uploadlog, upload_asset, "
				   "current_script, files, assets, vars, isotovideo/version, ws)\n");
	if (st == 405)
		return answerf(con, 405, "method %s not allowed here\n", method);
	if (st)
		return answerf(con, (unsigned)st, "not served by vigil's command server\n");
	if (rt.kind == CMDSRV_UPLOADLOG || rt.kind == CMDSRV_UPLOAD_ASSET) {
		if (!(u = upload_new(s, con, &rt)))
			return MHD_NO;
		*con_cls = u;
		return MHD_YES;
	}
	return get_route(s, con, &rt);
}

static void completed(void *cls, struct MHD_Connection *con, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)con;
	(void)toe;
	upload_free(*con_cls);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char text[512];

	(void)cls;
	vsnprintf(text, sizeof(text), fmt, ap);
	text[strcspn(text, "\n")] = '\0';
	log_debug("%s", text);
}

int cmdsrv_start(const struct cmdsrv_conf *c, struct cmdsrv **out, char *err, size_t errlen)
{
	struct cmdsrv *s = calloc(1, sizeof(*s));
	struct sockaddr_in sa = { .sin_family = AF_INET };
	const union MHD_DaemonInfo *info;
	int rc = ERR_NOMEM;

	*out = NULL;
	if (!s)
		goto out;
	pthread_mutex_init(&s->lock, NULL);
	if (!(s->token = strdup(c->token)) || !(s->casedir = strdup(c->casedir)) ||
	    !(s->out_dir = strdup(c->out_dir)) || (c->assetdir && !(s->assetdir = strdup(c->assetdir))) ||
	    (c->vars_file && !(s->vars_file = strdup(c->vars_file)))) {
		err_set(err, errlen, "out of memory");
		goto out;
	}
	if (!(s->ws = cmdsrv_ws_new())) {
		err_set(err, errlen, "out of memory");
		goto out;
	}
	sa.sin_addr.s_addr = htonl(c->listen_any ? INADDR_ANY : INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)c->port);
	s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				  MHD_USE_ERROR_LOG | MHD_ALLOW_UPGRADE,
				  0, NULL, NULL, handle, s,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				  MHD_OPTION_CONNECTION_LIMIT, 32u,
				  MHD_OPTION_CONNECTION_TIMEOUT, 300u,
				  MHD_OPTION_NOTIFY_COMPLETED, completed, s,
				  MHD_OPTION_END);
	if (!s->mhd) {
		err_set(err, errlen, "the command server cannot listen on %s:%u", c->listen_any ? "0.0.0.0" : "127.0.0.1",
			c->port);
		rc = ERR_IO;
		goto out;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	log_info("command server on %s:%u", c->listen_any ? "0.0.0.0" : "127.0.0.1", s->port);
	*out = s;
	s = NULL;
	rc = 0;
out:
	cmdsrv_free(s);
	return rc;
}

unsigned cmdsrv_port(const struct cmdsrv *s)
{
	return s->port;
}

int cmdsrv_set_vars(struct cmdsrv *s, const json_t *vars)
{
	json_t *copy = json_deep_copy(vars), *old;

	if (!copy)
		return ERR_NOMEM;
	pthread_mutex_lock(&s->lock);
	old = s->vars;
	s->vars = copy;
	pthread_mutex_unlock(&s->lock);
	json_decref(old);
	return 0;
}

void cmdsrv_set_devmode(struct cmdsrv *s, struct devmode *d)
{
	cmdsrv_ws_set_devmode(s->ws, d);
}

void cmdsrv_free(struct cmdsrv *s)
{
	if (!s)
		return;
	/* The upgraded sockets are closed before the daemon stops. */
	if (s->ws)
		cmdsrv_ws_set_devmode(s->ws, NULL);
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	cmdsrv_ws_free(s->ws);
	pthread_mutex_destroy(&s->lock);
	json_decref(s->vars);
	free(s->token);
	free(s->casedir);
	free(s->out_dir);
	free(s->assetdir);
	free(s->vars_file);
	free(s);
}
