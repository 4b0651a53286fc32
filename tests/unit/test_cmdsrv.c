/* SPDX-License-Identifier: MIT */
/* test_cmdsrv.c - the runner's command server without a VM: route
 * parsing, path checks, hashed_string, the cpio of data/ read back with
 * libarchive, and a live server on 127.0.0.1 driven with libcurl, its
 * developer-mode WebSocket with net/ws.c's client. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "net/http.h"
#include "net/ws.h"
#include "runner/prim/hashed.h"
#include "runner/srv/cmdsrv.h"
#include "runner/srv/devmode.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/path.h"

TEST(cmdsrv_routes)
{
	struct cmdsrv_route rt;

	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_DATA);
	CHECK_STR(rt.rest, "");
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data/sub/a.txt", "tok", &rt), 0);
	CHECK_STR(rt.rest, "sub/a.txt");
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/uploadlog/x.log", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_UPLOADLOG);
	CHECK_STR(rt.rest, "x.log");
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/upload_asset/disk.qcow2", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_UPLOAD_ASSET);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/vars", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_VARS);
	CHECK_INT(cmdsrv_route_parse("HEAD", "/tok/current_script", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_CURRENT_SCRIPT);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/files/autoyast/a.xml", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_FILES);
	CHECK_STR(rt.rest, "autoyast/a.xml");
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/assets/iso/x.iso", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_ASSETS);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/isotovideo/version", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_ISOTOVIDEO);
	CHECK_STR(rt.rest, "version");

	/* the token: exact, as the first component */
	CHECK_INT(cmdsrv_route_parse("GET", "/toke/data", "tok", &rt), 403);
	CHECK_INT(cmdsrv_route_parse("GET", "/to/data", "tok", &rt), 403);
	CHECK_INT(cmdsrv_route_parse("GET", "/data", "tok", &rt), 403);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data", "", &rt), 403);
	/* no such route, a missing name, traversal, wrong methods */
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/nothing", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/datax", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/uploadlog/", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/uploadlog/a/b", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data/../../etc/passwd", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data/a/..", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/data//etc/passwd", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/files/../x", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/uploadlog/..", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/data", "tok", &rt), 405);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/uploadlog/x", "tok", &rt), 405);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/isotovideo/version", "tok", &rt), 404);
	CHECK_INT(cmdsrv_route_parse("GET", "/tok/ws", "tok", &rt), 0);
	CHECK_INT(rt.kind, CMDSRV_WS);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/ws", "tok", &rt), 405);
	CHECK_INT(cmdsrv_route_parse("POST", "/tok/broadcast", "tok", &rt), 501);
}

TEST(cmdsrv_paths_and_hash)
{
	char h[32];

	CHECK_INT(cmdsrv_path_allowed("a/b.txt"), 1);
	CHECK_INT(cmdsrv_path_allowed("a/..b/c"), 1);
	CHECK_INT(cmdsrv_path_allowed(""), 1);
	CHECK_INT(cmdsrv_path_allowed(".."), 0);
	CHECK_INT(cmdsrv_path_allowed("a/../b"), 0);
	CHECK_INT(cmdsrv_path_allowed("/etc"), 0);
	/* perl -MDigest::MD5=md5_base64 -e 'print md5_base64("autoyast/autoinst.xml")'
	 * = m2zOXw6Jrm60SFdCaSG4IA */
	CHECK_INT(hashed_string("autoyast/autoinst.xml", 21, 5, h), 0);
	CHECK_STR(h, "m2zOX");
	CHECK_INT(hashed_string("autoyast/autoinst.xml", 21, 40, h), 0);
	CHECK_STR(h, "m2zOXw6Jrm60SFdCaSG4IA");
	CHECK_INT(cmdsrv_make_token(h, 11), 0);
	CHECK_INT(strlen(h), 10);
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *p = path_join(dir, rel), *d = path_dir(p);
	CHECK_INT(file_mkdir_p(d, 0755), 0);
	CHECK_INT(file_write_all(p, text, strlen(text)), 0);
	free(p);
	free(d);
}

static char *make_casedir(void)
{
	char *c = path_join(unit_tmpdir(), "case");
	put(c, "data/a.txt", "alpha\n");
	put(c, "data/sub/b.bin", "b\001\002\003");
	put(c, "data/sub/deeper/c", "");
	return c;
}

TEST(cmdsrv_cpio)
{
	char *c = make_casedir(), *d = path_join(c, "data"), *f = path_join(unit_tmpdir(), "out.cpio"), err[256] = "";
	const char *want[] = { "data/a.txt", "data/sub/b.bin", "data/sub/deeper/c" };
	const char *body[] = { "alpha\n", "b\001\002\003", "" };
	struct archive *a;
	struct archive_entry *e;
	int fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0600), n = 0;

	CHECK(fd >= 0);
	CHECK_INT(cmdsrv_cpio_dir(d, "data/", fd, err, sizeof(err)), 0);
	close(fd);
	a = archive_read_new();
	archive_read_support_format_cpio(a);
	CHECK_INT(archive_read_open_filename(a, f, 4096), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		char got[64] = "";
		la_ssize_t len;
		CHECK_STR(archive_format_name(a), "ASCII cpio (SVR4 with no CRC)");
		CHECK(n < 3);
		CHECK_STR(archive_entry_pathname(e), want[n]);
		CHECK_INT(archive_entry_filetype(e), AE_IFREG);
		len = archive_read_data(a, got, sizeof(got));
		CHECK_INT(len, strlen(body[n]));
		CHECK(!memcmp(got, body[n], (size_t)len));
		n++;
	}
	CHECK_INT(n, 3);
	archive_read_free(a);
	free(c);
	free(d);
	free(f);
}

struct live {
	struct cmdsrv *s;
	struct http_client c;
	char *out;
	struct buf resp;
	long status;
};

static void live_start(struct live *l, const char *vars_file)
{
	char *c = make_casedir(), base[64], err[256] = "";
	struct cmdsrv_conf conf = { .token = "tok", .casedir = c, .vars_file = vars_file };

	l->out = path_join(unit_tmpdir(), "out");
	CHECK_INT(file_mkdir_p(l->out, 0755), 0);
	conf.out_dir = l->out;
	CHECK_INT(cmdsrv_start(&conf, &l->s, err, sizeof(err)), 0);
	snprintf(base, sizeof(base), "http://127.0.0.1:%u", cmdsrv_port(l->s));
	CHECK_INT(http_client_init(&l->c, base, NULL, NULL), 0);
	buf_init(&l->resp, 1u << 20);
	free(c);
}

static void live_stop(struct live *l)
{
	buf_release(&l->resp);
	http_client_release(&l->c);
	cmdsrv_free(l->s);
	free(l->out);
}

static long req(struct live *l, const char *method, const char *target, const char *ctype, const char *body,
		size_t len)
{
	char err[256] = "";
	CHECK_INT(http_request(&l->c, method, target, ctype, body, len, 30, &l->status, &l->resp, err, sizeof(err)),
		  0);
	CHECK_INT(buf_append(&l->resp, "", 1), 0); /* a terminated string */
	return l->status;
}

static void check_file(const char *dir, const char *rel, const char *text, size_t len)
{
	char *p = path_join(dir, rel);
	struct buf b;
	buf_init(&b, 1u << 20);
	CHECK_INT(file_read_all(p, &b), 0);
	CHECK_INT(b.len, len);
	CHECK(!len || !memcmp(b.data, text, len));
	buf_release(&b);
	free(p);
}

TEST(cmdsrv_live_get)
{
	struct live l;
	json_t *v = json_pack("{s:s}", "DISTRI", "shell");

	live_start(&l, NULL);
	CHECK_INT(req(&l, "GET", "/tok/data/a.txt", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "alpha\n");
	CHECK_INT(req(&l, "GET", "/tok/data/sub", NULL, NULL, 0), 200);
	CHECK(l.resp.len > 110 && !memcmp(l.resp.data, "070701", 6));
	CHECK_INT(req(&l, "GET", "/wrong/data/a.txt", NULL, NULL, 0), 403);
	CHECK_INT(req(&l, "GET", "/tok/data/missing", NULL, NULL, 0), 404);
	CHECK_INT(req(&l, "GET", "/tok/data/%2e%2e/%2e%2e/etc/passwd", NULL, NULL, 0), 404);
	CHECK_INT(req(&l, "GET", "/tok/isotovideo/version", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "{\"version\":34}");
	CHECK_INT(req(&l, "GET", "/tok/isotovideo/pause", NULL, NULL, 0), 404);
	CHECK_INT(req(&l, "GET", "/tok/vars", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "{\"vars\":{}}");
	CHECK_INT(cmdsrv_set_vars(l.s, v), 0);
	CHECK_INT(req(&l, "GET", "/tok/vars", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "{\"vars\":{\"DISTRI\":\"shell\"}}");
	/* save_tmp_file's two places: Lua's files/, Perl's hashed name */
	put(l.out, "files/a/b.xml", "<lua/>");
	put(l.out, "m2zOX", "<perl/>");
	CHECK_INT(req(&l, "GET", "/tok/files/a/b.xml", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "<lua/>");
	CHECK_INT(req(&l, "GET", "/tok/files/autoyast/autoinst.xml", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "<perl/>");
	CHECK_INT(req(&l, "GET", "/tok/current_script", NULL, NULL, 0), 404);
	put(l.out, "current_script", "echo hi\n");
	CHECK_INT(req(&l, "GET", "/tok/current_script", NULL, NULL, 0), 200);
	CHECK_STR(l.resp.data, "echo hi\n");
	json_decref(v);
	live_stop(&l);
}

TEST(cmdsrv_live_upload)
{
	static const char mp[] =
		"--XyZ\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"x.log\"\r\n"
		"Content-Type: application/octet-stream\r\n\r\nline1\r\n\001bin\r\n"
		"--XyZ\r\nContent-Disposition: form-data; name=\"upname\"\r\n\r\nboot-x.log\r\n--XyZ--\r\n";
	static const char mpa[] =
		"--XyZ\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"d.img\"\r\n\r\nDISK\r\n"
		"--XyZ\r\nContent-Disposition: form-data; name=\"target\"\r\n\r\nassets_public\r\n--XyZ--\r\n";
	static const char bad[] =
		"--XyZ\r\nContent-Disposition: form-data; name=\"target\"\r\n\r\nassets_private\r\n--XyZ--\r\n";
	const char *ct = "multipart/form-data; boundary=XyZ";
	struct live l;
	char *tr;

	live_start(&l, NULL);
	tr = path_join(l.out, "testresults");
	CHECK_INT(req(&l, "POST", "/tok/uploadlog/x.log", ct, mp, sizeof(mp) - 1), 200);
	CHECK_STR(l.resp.data, "OK: boot-x.log\n");
	check_file(tr, "ulogs/boot-x.log", "line1\r\n\001bin", 11);
	/* a raw body (busybox wget --post-file), upname in the query */
	CHECK_INT(req(&l, "POST", "/tok/uploadlog/y.txt?upname=mod-y.txt", "application/x-www-form-urlencoded",
		      "a=b&c", 5), 200);
	check_file(tr, "ulogs/mod-y.txt", "a=b&c", 5);
	CHECK_INT(req(&l, "POST", "/tok/upload_asset/d.img", ct, mpa, sizeof(mpa) - 1), 200);
	check_file(l.out, "assets_public/d.img", "DISK", 4);
	/* a form with upname in the query (os-autoinst's param reads both);
	 * the form's own field wins over the query's */
	CHECK_INT(req(&l, "POST", "/tok/uploadlog/q.log?upname=mod-q.log", ct, mpa, sizeof(mpa) - 1), 200);
	check_file(tr, "ulogs/mod-q.log", "DISK", 4);
	CHECK_INT(req(&l, "POST", "/tok/uploadlog/r.log?upname=query-r.log", ct, mp, sizeof(mp) - 1), 200);
	CHECK_STR(l.resp.data, "OK: boot-x.log\n");
	CHECK_INT(req(&l, "POST", "/tok/upload_asset/e.img?target=assets_private", "application/octet-stream", "E", 1),
		  200);
	check_file(l.out, "assets_private/e.img", "E", 1);
	/* refused: no file, a bad target, a wrong token; nothing left behind */
	CHECK_INT(req(&l, "POST", "/tok/upload_asset/f.img", ct, bad, sizeof(bad) - 1), 400);
	CHECK(strstr(l.resp.data, "Upload file content missing"));
	CHECK_INT(req(&l, "POST", "/tok/upload_asset/g.img?target=etc", "application/octet-stream", "G", 1), 400);
	CHECK_INT(req(&l, "POST", "/bad/upload_asset/h.img", "application/octet-stream", "H", 1), 403);
	{
		DIR *d = opendir(l.out);
		struct dirent *de;
		CHECK(d);
		while ((de = readdir(d)))
			CHECK(strncmp(de->d_name, ".cmdsrv-", 8)); /* no temporary file left */
		closedir(d);
	}
	{
		char *g = path_join(l.out, "assets_private/g.img"), *f = path_join(l.out, "assets_private/f.img");
		CHECK(!file_exists(g) && !file_exists(f));
		free(g);
		free(f);
	}
	free(tr);
	live_stop(&l);
}

/* The developer-mode WebSocket: a net/ws.c client on a plain socket. */
struct wsc {
	struct ws *ws;
	struct ws_transport t;
	json_t *got; /* the messages, in order */
	int closed;
};

static void wsc_msg(void *ud, enum ws_opcode op, const uint8_t *data, size_t len, uint16_t status)
{
	struct wsc *c = ud;
	json_t *j;

	(void)status;
	if (op == WS_OP_CLOSE)
		c->closed = 1;
	if (op == WS_OP_TEXT && (j = json_loadb((const char *)data, len, 0, NULL)))
		json_array_append_new(c->got, j);
}

/* Open GET /<token>/ws on port; 0 or the HTTP status when not upgraded. */
static int wsc_open(struct wsc *c, unsigned port, const char *token)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char key[WS_KEY_LEN + 1], acc[WS_ACCEPT_LEN + 1], req[512], resp[2048], *end;
	size_t have = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), st = 0;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0);
	CHECK_INT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	CHECK_INT(ws_client_key(key), 0);
	CHECK_INT(ws_accept_key(key, acc), 0);
	snprintf(req, sizeof(req),
		 "GET /%s/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 token, key);
	CHECK_INT(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (!(end = have ? strstr(resp, "\r\n\r\n") : NULL)) {
		ssize_t n = read(fd, resp + have, sizeof(resp) - 1 - have);
		CHECK(n > 0);
		have += (size_t)n;
		resp[have] = '\0';
	}
	CHECK(sscanf(resp, "HTTP/1.1 %d", &st) == 1);
	if (st != 101) {
		close(fd);
		return st;
	}
	CHECK(strstr(resp, acc) != NULL);
	c->got = json_array();
	ws_transport_fd(&c->t, fd);
	c->ws = ws_new(WS_ROLE_CLIENT, &c->t, end + 4, have - (size_t)(end + 4 - resp), wsc_msg, c);
	CHECK(c->ws);
	return 0;
}

/* Pump until a message with key arrives (bounded: 300 waits of 100 ms);
 * that message, borrowed. */
static json_t *wsc_wait(struct wsc *c, const char *key)
{
	size_t seen = 0;

	for (int i = 0; i < 300; i++) {
		for (; seen < json_array_size(c->got); seen++)
			if (json_object_get(json_array_get(c->got, seen), key))
				return json_array_get(c->got, seen);
		if (ws_wait(c->ws, 100) && seen == json_array_size(c->got))
			break;
	}
	return NULL;
}

TEST(cmdsrv_live_ws)
{
	struct live l;
	struct devmode *d = NULL;
	struct devmode_opts o = { .pause_at = "boot" };
	struct wsc c = { 0 };
	json_t *m;

	live_start(&l, NULL);
	/* No developer mode attached: not served. */
	CHECK_INT(req(&l, "GET", "/tok/ws", NULL, NULL, 0), 501);
	CHECK_INT(devmode_start(l.out, &o, &d), 0);
	cmdsrv_set_devmode(l.s, d);
	CHECK_INT(req(&l, "GET", "/tok/ws", NULL, NULL, 0), 400); /* no handshake */
	CHECK_INT(wsc_open(&c, cmdsrv_port(l.s), "wrong"), 403);
	CHECK_INT(wsc_open(&c, cmdsrv_port(l.s), "tok"), 0);
	CHECK_INT(ws_send_text(c.ws, "{\"cmd\":\"status\"}"), 0);
	m = wsc_wait(&c, "running");
	CHECK(m != NULL);
	CHECK_INT(json_integer_value(json_object_get(m, "devel_mode_major_version")), 1);
	CHECK_STR(json_string_value(json_object_get(m, "pause_test_name")), "boot");
	CHECK_INT(json_integer_value(json_object_get(m, "test_execution_paused")), 0);
	CHECK_INT(ws_send_text(c.ws, "{\"cmd\":\"set_pause_at_test\",\"name\":\"menu\"}"), 0);
	m = wsc_wait(&c, "set_pause_at_test");
	CHECK(m != NULL);
	CHECK_STR(json_string_value(json_object_get(m, "set_pause_at_test")), "menu");
	json_array_clear(c.got);
	CHECK_INT(ws_send_text(c.ws, "{\"cmd\":\"status\"}"), 0);
	m = wsc_wait(&c, "running");
	CHECK(m != NULL);
	CHECK_STR(json_string_value(json_object_get(m, "pause_test_name")), "menu");
	json_array_clear(c.got);
	CHECK_INT(ws_send_text(c.ws, "not json"), 0);
	m = wsc_wait(&c, "error");
	CHECK(m != NULL);
	CHECK_INT(json_integer_value(json_object_get(m, "ret")), 0);
	/* The server's end closes its clients. */
	live_stop(&l);
	for (int i = 0; i < 100 && !c.closed && ws_is_open(c.ws); i++)
		(void)ws_wait(c.ws, 100);
	CHECK(c.closed || !ws_is_open(c.ws));
	devmode_stop(d);
	ws_free(c.ws);
	close(c.t.fd);
	json_decref(c.got);
}
