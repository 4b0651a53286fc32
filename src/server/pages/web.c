/* SPDX-License-Identifier: MIT */
/* web.c - serves the web UI: the embedded files of web/ under /static/,
 * and, for every page URL openQA has (/, /tests, /tests/<id>, /admin/...),
 * the one page shell (web/index.html) whose scripts render the page from
 * the API. Files carry an ETag (If-None-Match answers 304) and every
 * answer the CSP of web.h (server.c adds it when out->web is set).
 *
 * The shell refers to the files as /static/<version>/<file>, version a
 * number made from every file's hash: answers under the current version
 * are cached by browsers for good (immutable), so a returning visitor
 * asks only for the shell and the data; a new build has a new version.
 * A page URL's shell also preloads its page module and the modules that
 * imports (the route's argument names the module; its static imports are
 * read from the files at start), so the browser fetches the page's whole
 * module graph at once instead of one level of imports after another.
 * (Preloading every module of every page was tried: each view then read
 * all of them from the browser's cache first, 15-40 ms slower a page.)
 *
 *   method path                        level   what
 *   GET    /static/<version>/<file>    public  an embedded file of web/ (immutable when version is current)
 *   GET    /static/<file>              public  the same, revalidated each time
 *   GET    / /tests /tests/<id> ...    public  the page shell (see web_routes)
 */
#define LOG_MODULE "web"
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/http/api.h"
#include "server/pages/web.h"
#include "server/pages/web_ssr.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/str.h"
#include "util/banned.h" /* last: after every system header */

/* scripts/embed-web's table, ended by a NULL name. */
extern const struct web_file web_files[];

#define WEB_MAX_FILES 256
static char etags[WEB_MAX_FILES][24];
static pthread_once_t etags_once = PTHREAD_ONCE_INIT;
/* The build's version (from every file's hash), and the shell made from
 * web/index.html with versioned paths: made once, kept for the life of
 * the process. */
static int64_t version;
static struct buf shell;
/* The shell of a first view (web_ssr.h): no module preloads, and the script at
 * the end of <body>, after the data, so the browser parses and shows the
 * data before it turns to the modules (measured: ~20 ms sooner than with
 * them in <head>, for a page whose data is there already); with its marks. */
static struct buf ssr_shell;
static size_t ssr_main_at, ssr_main_len, ssr_islands_at;
static char shell_etag[32];

/* What web_routes' page routes carry: the page module, and the page's
 * first view, which carries the data the page starts with. */
struct web_page {
	const char *module;
	const char *also; /* a module the page imports when it runs (import()), or NULL */
	web_ssr_fn ssr;   /* the page's first view (web_ssr.h), or NULL: the shell alone */
	bool once;        /* ssr is the page: its script adds behaviour only (docs/web.md) */
};

/* The shells of the page modules named by web_routes. */
#define WEB_MAX_SHELLS 32
static struct {
	const struct web_page *page;
	struct buf html;
	char etag[48];
} shells[WEB_MAX_SHELLS];
static size_t nshells;

static void shell_make(void);
static void ssr_shell_make(void);
static void shell_marks(const struct buf *html, size_t *main_at, size_t *main_len, size_t *islands_at);
static void shells_make(void);
static void page(struct api_req *req, struct api_resp *out);

static void etags_make(void)
{
	EVP_MD_CTX *all = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	size_t i;

	if (all)
		EVP_DigestInit_ex(all, EVP_sha256(), NULL);
	for (i = 0; web_files[i].name && i < WEB_MAX_FILES; i++) {
		EVP_Digest(web_files[i].data, web_files[i].len, md, &mdlen, EVP_sha256(), NULL);
		snprintf(etags[i], sizeof(etags[i]), "\"%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x\"", md[0], md[1],
			 md[2], md[3], md[4], md[5], md[6], md[7], md[8], md[9]);
		if (all) {
			EVP_DigestUpdate(all, web_files[i].name, strlen(web_files[i].name) + 1);
			EVP_DigestUpdate(all, md, mdlen);
		}
	}
	if (all && EVP_DigestFinal_ex(all, md, &mdlen) && mdlen >= 6)
		version = (int64_t)md[0] << 40 | (int64_t)md[1] << 32 | (int64_t)md[2] << 24 | (int64_t)md[3] << 16 |
			  (int64_t)md[4] << 8 | md[5];
	if (version <= 0)
		version = 1;
	EVP_MD_CTX_free(all);
	snprintf(shell_etag, sizeof(shell_etag), "\"v%lld\"", (long long)version);
	shell_make();
	ssr_shell_make();
	shells_make();
}

/* The shell: index.html with every "/static/" made "/static/<version>/". */
static void shell_make(void)
{
	const struct web_file *idx = web_find("/index.html");
	char prefix[48];
	const char *p, *end;

	buf_init(&shell, 1u << 20);
	if (!idx)
		return;
	snprintf(prefix, sizeof(prefix), "/static/%lld/", (long long)version);
	p = (const char *)idx->data;
	end = p + idx->len;
	while (p < end) {
		const char *at = memmem(p, (size_t)(end - p), "/static/", 8);
		buf_append(&shell, p, (size_t)((at ? at : end) - p));
		if (!at)
			break;
		buf_append(&shell, prefix, strlen(prefix));
		p = at + 8;
	}
}

/* ssr_shell from the shell, line by line: module preloads left out (the
 * session's data preload stays: a fetch, no work for the parser), the
 * module script's line moved to just before </body> (the islands go
 * before it). */
static void ssr_shell_make(void)
{
	const char *p = shell.data, *end = shell.data + shell.len, *script = NULL;
	size_t script_len = 0, islands_at = 0;

	buf_init(&ssr_shell, 1u << 20);
	while (p && p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) + 1 : (size_t)(end - p);

		if (memmem(p, n, "<script type=\"module\"", 21)) {
			script = p;
			script_len = n;
		} else if (!memmem(p, n, "rel=\"modulepreload\"", 19)) {
			if (script && !memcmp(p, "</body>", 7)) {
				islands_at = ssr_shell.len;
				buf_append(&ssr_shell, script, script_len);
			}
			buf_append(&ssr_shell, p, n);
		}
		p += n;
	}
	shell_marks(&ssr_shell, &ssr_main_at, &ssr_main_len, &ssr_islands_at);
	if (ssr_islands_at && islands_at > ssr_main_at)
		ssr_islands_at = islands_at; /* the islands before the script */
}

/* Marks in seen[] the modules file f imports statically, and theirs:
 * lines "import ... from './name.js';" (dynamic import() is left to load
 * when it runs). */
static void imports_mark(const struct web_file *f, bool *seen)
{
	const char *p = (const char *)f->data, *end = p + f->len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *from;

		if (!eol)
			eol = end;
		if ((size_t)(eol - p) > 7 && !memcmp(p, "import ", 7) &&
		    (from = memmem(p, (size_t)(eol - p), " from './", 9))) {
			const char *name = from + 8, *q = name;
			char path[128];

			while (q < eol && *q != '\'' && *q != '"')
				q++;
			if (q < eol && (size_t)(q - name) < sizeof(path) - 1) {
				const struct web_file *dep;

				path[0] = '/';
				memcpy(path + 1, name + 1, (size_t)(q - name - 1));
				path[q - name] = '\0';
				dep = web_find(path);
				if (dep && !seen[dep - web_files]) {
					seen[dep - web_files] = true;
					imports_mark(dep, seen);
				}
			}
		}
		p = eol + 1;
	}
}

/* Where in the first-view shell the first view goes (the "Loading…"
 * paragraph in <main>, *len bytes) and the data islands (before </body>);
 * both 0 when the shell lacks them. */
static void shell_marks(const struct buf *html, size_t *main_at, size_t *main_len, size_t *islands_at)
{
	static const char loading[] = "<p class=\"loading\">";
	const char *m = html->data ? strstr(html->data, loading) : NULL;
	const char *end = m ? strstr(m, "</p>") : NULL;
	const char *body = html->data ? strstr(html->data, "</body>") : NULL;

	*main_at = *main_len = *islands_at = 0;
	if (!m || !end || !body || body < end)
		return;
	*main_at = (size_t)(m - html->data);
	*main_len = (size_t)(end + 4 - m);
	*islands_at = (size_t)(body - html->data);
}

/* For each page module of web_routes: the shell with a modulepreload of
 * the module and of everything it imports that the shell does not
 * preload already, put before the shell's script. */
static void shells_make(void)
{
	const char *script = "<script type=\"module\"";
	size_t r, i;

	for (r = 0; web_routes[r].method; r++) {
		const struct web_page *pg = web_routes[r].arg;
		const char *module = pg ? pg->module : NULL;
		const struct web_file *f;
		bool seen[WEB_MAX_FILES] = { false };
		const char *at;
		size_t head;

		if (web_routes[r].fn != page || !module || nshells == WEB_MAX_SHELLS || !shell.len)
			continue;
		for (i = 0; i < nshells && shells[i].page != pg; i++)
			;
		if (i < nshells || !(f = web_find(module)))
			continue;
		at = memmem(shell.data, shell.len, script, strlen(script));
		if (!at)
			continue;
		head = (size_t)(at - shell.data);
		seen[f - web_files] = true;
		imports_mark(f, seen);
		if (pg->also && (f = web_find(pg->also))) {
			seen[f - web_files] = true;
			imports_mark(f, seen);
		}
		buf_init(&shells[nshells].html, 1u << 20);
		buf_append(&shells[nshells].html, shell.data, head);
		for (i = 0; web_files[i].name && i < WEB_MAX_FILES; i++) {
			char link[224], href[160];

			snprintf(href, sizeof(href), "/static/%lld%s\"", (long long)version, web_files[i].name);
			if (!seen[i] || memmem(shell.data, head, href, strlen(href)))
				continue;
			snprintf(link, sizeof(link), "<link rel=\"modulepreload\" href=\"%s>\n", href);
			buf_append(&shells[nshells].html, link, strlen(link));
		}
		buf_append(&shells[nshells].html, at, shell.len - head);
		shells[nshells].page = pg;
		snprintf(shells[nshells].etag, sizeof(shells[nshells].etag), "\"v%lld-%zu\"", (long long)version,
			 nshells);
		nshells++;
	}
}

const struct web_file *web_find(const char *name)
{
	size_t i;

	for (i = 0; web_files[i].name; i++)
		if (!strcmp(web_files[i].name, name))
			return &web_files[i];
	return NULL;
}

const char *web_ctype(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" }, { ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },   { ".svg", "image/svg+xml" },
		{ ".png", "image/png" },                  { ".json", "application/json" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (str_ends_with(name, types[i].ext))
			return types[i].type;
	return "application/octet-stream";
}

const char *web_etag(const struct web_file *f)
{
	size_t i = (size_t)(f - web_files);

	pthread_once(&etags_once, etags_make);
	return i < WEB_MAX_FILES ? etags[i] : "\"0\"";
}

/* Answer with bytes of type ctype and etag, or 304 when the client holds them already. */
static void send_bytes(struct api_req *req, struct api_resp *out, const void *data, size_t len, const char *ctype,
		       const char *etag)
{
	out->web = true;
	out->hdr_name = "ETag";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "%s", etag);
	out->ctype = ctype;
	if (req->if_none_match && strstr(req->if_none_match, etag)) {
		out->status = 304;
		out->bytes = (const unsigned char *)"";
		out->bytes_len = 0;
		return;
	}
	out->status = 200;
	out->bytes = data;
	out->bytes_len = len;
}

/* GET /static/<file> and /static/<version>/<file>. */
static void static_file(struct api_req *req, struct api_resp *out)
{
	char name[LIMIT_API_NAME + 2];
	const struct web_file *f;

	pthread_once(&etags_once, etags_make);
	snprintf(name, sizeof(name), "/%s", req->name ? req->name : "");
	f = strcmp(name, "/index.html") ? web_find(name) : NULL;
	if (!f) {
		api_error(out, 404, "no file /static%s", name);
		return;
	}
	send_bytes(req, out, f->data, f->len, web_ctype(f->name), web_etag(f));
	out->immutable = req->id == version;
}

/* The first-view shell with page pg's first view (web_ssr.h) and its data islands, as
 * an owned text answer; false when that could not be made. No ETag: the
 * data changes under the same URL. */
static bool page_ssr(struct api_req *req, struct api_resp *out, const struct web_page *pg)
{
	const struct buf *sh = &ssr_shell;
	struct web_ssr s;
	struct buf html;
	int rc;

	if (!ssr_islands_at)
		return false;
	web_ssr_init(&s, req);
	pg->ssr(&s);
	if (s.main.err || s.islands.err) {
		log_warn("%s: the first view could not be made (%d): the page's script renders it", req->target,
			 s.main.err ? s.main.err : s.islands.err);
		web_ssr_release(&s);
		return false;
	}
	buf_init(&html, sh->len + s.main.buf.len + s.islands.buf.len + 1);
	if (s.main.buf.len) {
		rc = buf_append(&html, sh->data, ssr_main_at);
		rc = rc || buf_append(&html, s.main.buf.data, s.main.buf.len);
		rc = rc || buf_append(&html, sh->data + ssr_main_at + ssr_main_len,
				      ssr_islands_at - ssr_main_at - ssr_main_len);
	} else {
		rc = buf_append(&html, sh->data, ssr_islands_at);
	}
	rc = rc || (s.islands.buf.len && buf_append(&html, s.islands.buf.data, s.islands.buf.len));
	rc = rc || buf_append(&html, sh->data + ssr_islands_at, sh->len - ssr_islands_at);
	web_ssr_release(&s);
	if (rc) {
		buf_release(&html);
		return false;
	}
	/* the data is the user's (the audit log is an administrator's): no shared cache keeps it */
	out->web = true;
	out->status = 200;
	out->ctype = "text/html; charset=utf-8";
	out->hdr_name = "Cache-Control";
	snprintf(out->hdr_value, sizeof(out->hdr_value), "private, no-cache");
	out->text = buf_steal(&html);
	return true;
}

/* VIGIL_WEB_FIRST_VIEW=off: every page whose script renders it from the
 * API (the job page alone now) is the shell alone: the "script only" way
 * that bench/web.py's --js-only measures against the first view
 * (docs/web.md, "Speed"). A page built once (web_page.once) has no other
 * way and ignores it. */
static bool first_view_on(void)
{
	const char *v = getenv("VIGIL_WEB_FIRST_VIEW");

	return !(v && !strcmp(v, "off"));
}

static void page(struct api_req *req, struct api_resp *out)
{
	const struct web_page *pg = req->arg;
	size_t i;

	pthread_once(&etags_once, etags_make);
	if (!shell.len) {
		api_error(out, 500, "the web UI was not built in");
		return;
	}
	for (i = 0; pg && i < nshells; i++)
		if (shells[i].page == pg) {
			if (pg->ssr && (pg->once || first_view_on()) && page_ssr(req, out, pg))
				return;
			send_bytes(req, out, shells[i].html.data, shells[i].html.len, "text/html; charset=utf-8",
				   shells[i].etag);
			return;
		}
	send_bytes(req, out, shell.data, shell.len, "text/html; charset=utf-8", shell_etag);
}

/* Every page URL of openQA that vigil has; the shell's scripts pick the
 * page from location.pathname (web/app.js). */
static const struct web_page p_dashboard = { .module = "/page-dashboard.js", .ssr = web_ssr_dashboard, .once = true };
static const struct web_page p_tests = { .module = "/page-tests.js", .ssr = web_ssr_tests, .once = true };
static const struct web_page p_overview = { .module = "/page-overview.js", .ssr = web_ssr_overview, .once = true };
static const struct web_page p_review = { .module = "/page-review.js" };
static const struct web_page p_job = { .module = "/page-job.js", .ssr = web_ssr_job };
static const struct web_page p_latest = { .module = "/page-job.js", .ssr = web_ssr_job };
static const struct web_page p_live = { .module = "/page-live.js" };
static const struct web_page p_edit = { .module = "/page-needle-edit.js" };
static const struct web_page p_group = { .module = "/page-group.js", .ssr = web_ssr_group, .once = true };
static const struct web_page p_auditlog = { .module = "/page-auditlog.js", .ssr = web_ssr_auditlog, .once = true };
static const struct web_page p_templates = { .module = "/page-templates.js", .ssr = web_ssr_templates, .once = true };
static const struct web_page p_workers = { .module = "/page-admin.js", .also = "/admin-workers.js",
					     .ssr = web_ssr_admin_workers, .once = true };
static const struct web_page p_machines = { .module = "/page-admin.js", .also = "/admin-tables.js",
					      .ssr = web_ssr_admin_table, .once = true };
static const struct web_page p_products = { .module = "/page-admin.js", .also = "/admin-tables.js",
					      .ssr = web_ssr_admin_table, .once = true };
static const struct web_page p_test_suites = { .module = "/page-admin.js", .also = "/admin-tables.js",
						 .ssr = web_ssr_admin_table, .once = true };
static const struct web_page p_assets = { .module = "/page-admin.js", .also = "/admin-assets.js",
					    .ssr = web_ssr_admin_assets, .once = true };
static const struct web_page p_needles = { .module = "/page-admin.js", .also = "/admin-needles.js",
					     .ssr = web_ssr_admin_needles, .once = true };
static const struct web_page p_admin = { .module = "/page-admin.js" };
static const struct web_page p_login = { .module = "/page-login.js" };
static const struct web_page p_apikeys = { .module = "/page-apikeys.js" };

const struct api_route web_routes[] = {
	{ "GET", "/static/*", AUTH_PUBLIC, static_file, NULL },
	{ "GET", "/static/#/*", AUTH_PUBLIC, static_file, NULL },
	{ "GET", "/", AUTH_PUBLIC, page, &p_dashboard },
	{ "GET", "/tests", AUTH_PUBLIC, page, &p_tests },
	{ "GET", "/tests/overview", AUTH_PUBLIC, page, &p_overview },
	{ "GET", "/review", AUTH_PUBLIC, page, &p_review },
	{ "GET", "/tests/latest", AUTH_PUBLIC, page, &p_latest },
	{ "GET", "/tests/#", AUTH_PUBLIC, page, &p_job },
	{ "GET", "/tests/#/live", AUTH_PUBLIC, page, &p_live },
	{ "GET", "/tests/#/modules/*/steps/#/edit", AUTH_PUBLIC, page, &p_edit },
	{ "GET", "/group_overview/#", AUTH_PUBLIC, page, &p_group },
	{ "GET", "/admin/auditlog", AUTH_PUBLIC, page, &p_auditlog },
	{ "GET", "/admin/job_templates/#", AUTH_PUBLIC, page, &p_templates },
	{ "GET", "/admin/workers", AUTH_PUBLIC, page, &p_workers },
	{ "GET", "/admin/machines", AUTH_PUBLIC, page, &p_machines },
	{ "GET", "/admin/products", AUTH_PUBLIC, page, &p_products },
	{ "GET", "/admin/test_suites", AUTH_PUBLIC, page, &p_test_suites },
	{ "GET", "/admin/assets", AUTH_PUBLIC, page, &p_assets },
	{ "GET", "/admin/needles", AUTH_PUBLIC, page, &p_needles },
	{ "GET", "/admin/*", AUTH_PUBLIC, page, &p_admin },
	{ "GET", "/login", AUTH_PUBLIC, page, &p_login },
	{ "GET", "/user/api_keys", AUTH_PUBLIC, page, &p_apikeys },
	{ NULL, NULL, 0, NULL, NULL },
};
