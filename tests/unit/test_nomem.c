/* SPDX-License-Identifier: MIT */
/* test_nomem.c - the out-of-memory policy (docs/hardening.md): for every
 * N until the call succeeds, the Nth allocation of a parser fails
 * (alloc_fail.h); the parser returns ERR_NOMEM, crashes nowhere and leaks
 * nothing (LeakSanitizer checks each test's process under SAN=1). Needle
 * JSON, form/query parameters, job group YAML, QMP messages and the
 * signature headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "unit.h"
#include "alloc_fail.h"
#include "image/needle.h"
#include "net/hmac.h"
#include "server/api.h"
#include "server/auth.h"
#include "server/jt_yaml.h"
#include "util/err.h"
#include "util/time.h"
#include "vm/qmp.h"

/* Run call with the 1st, 2nd, ... allocation failing until one run makes
 * no allocation fail; each failed run must return ERR_NOMEM, the last 0.
 * A call checks its whole result and returns 0 only when it is complete:
 * a failed run may also return 0 where a library (jansson's dump)
 * recovered from the failure by itself. The number of runs. */
static long every_n(const char *what, int (*call)(void))
{
	long n;

	for (n = 1; n < 200000; n++) {
		int rc;
		bool fired;

		alloc_fail_arm(n);
		rc = call();
		fired = alloc_fail_disarm();
		if (!fired) {
			if (getenv("VIGIL_ALLOC_FAIL_TRACE"))
				fprintf(stderr, "%s: %ld runs\n", what, n);
			if (rc != 0)
				FAIL("%s: no allocation failed, yet %d (%s)", what, rc, err_str(rc));
			return n;
		}
		if (rc != ERR_NOMEM && rc != 0)
			FAIL("%s: allocation %ld failed: %d (%s), expected ERR_NOMEM", what, n, rc, err_str(rc));
	}
	FAIL("%s: still allocating after %ld runs", what, n);
	return n;
}

static int needle_call(void)
{
	static const char json[] =
		"{\"tags\": [\"grub-menu\", \"ENV-X\"], \"properties\": [\"workaround\"],"
		" \"area\": [{\"xpos\": 1, \"ypos\": 2, \"width\": 30, \"height\": 40, \"type\": \"match\", \"match\": 95},"
		" {\"xpos\": 5, \"ypos\": 5, \"width\": 3, \"height\": 4, \"type\": \"exclude\"},"
		" {\"xpos\": 7, \"ypos\": 8, \"width\": 9, \"height\": 10, \"type\": \"ocr\"}]}";
	struct needle *n = NULL;
	char err[256];
	int rc = needle_parse(json, strlen(json), "sub/x.json", &n, err, sizeof(err));

	if (!rc && (n->ntags != 2 || n->nareas != 3 || strcmp(n->tags[1], "ENV-X")))
		rc = ERR_INVALID;
	needle_free(n);
	return rc;
}

static int params_call(void)
{
	static const char q[] = "DISTRI=grub&VERSION=1&TEST=a+b&BUILD=%C3%A9t%C3%A9&EMPTY=&K%20Y=v%2Bw&_GROUP=x";
	struct params p;
	char msg[256];
	int rc;

	params_init(&p);
	rc = params_parse(&p, q, strlen(q), msg, sizeof(msg));
	if (!rc && (p.n != 7 || strcmp(params_get(&p, "K Y"), "v+w") || strcmp(params_get(&p, "TEST"), "a b")))
		rc = ERR_INVALID;
	params_release(&p);
	return rc;
}

static int yaml_call(void)
{
	static const char doc[] =
		"products:\n"
		"  p:\n"
		"    distri: sle\n"
		"    flavor: DVD\n"
		"    version: '15'\n"
		".common: &common\n"
		"  FOO: '1'\n"
		"defaults:\n"
		"  x86_64:\n"
		"    machine: 64bit\n"
		"    priority: 40\n"
		"    settings:\n"
		"      <<: *common\n"
		"scenarios:\n"
		"  x86_64:\n"
		"    p:\n"
		"      - textmode\n"
		"      - gnome:\n"
		"          machine: [uefi, 64bit]\n"
		"          settings: {BAR: c}\n";
	struct jt_list l;
	char err[512];
	int rc;

	jt_list_init(&l);
	rc = jt_yaml_parse(doc, strlen(doc), &l, err, sizeof(err));
	/* textmode on 64bit, gnome on uefi and 64bit, each with FOO; gnome with BAR too */
	if (!rc && (l.n != 3 || !l.v[0].settings || !json_object_get(l.v[0].settings, "FOO") ||
		    !json_object_get(l.v[2].settings, "BAR") || strcmp(l.v[1].machine, "uefi")))
		rc = ERR_INVALID;
	jt_list_release(&l);
	return rc;
}

/* QEMU's side written ahead into the socket: greeting, the answer to
 * qmp_capabilities, an event, the answer to query-status. */
static int qmp_call(void)
{
	static const char peer[] =
		"{\"QMP\": {\"version\": {\"qemu\": {\"major\": 7}}, \"capabilities\": [\"oob\"]}}\r\n"
		"{\"return\": {}}\r\n"
		"{\"event\": \"RESUME\", \"timestamp\": {\"seconds\": 1, \"microseconds\": 2}}\r\n"
		"{\"return\": {\"status\": \"running\", \"running\": true}}\r\n";
	struct qmp *q = NULL;
	char err[256], status[32];
	int sv[2], rc;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CHECK_INT(write(sv[1], peer, strlen(peer)), (long)strlen(peer));
	rc = qmp_connect_fd(sv[0], &q, err, sizeof(err)); /* takes sv[0] */
	if (!rc)
		rc = qmp_query_status(q, status, sizeof(status), err, sizeof(err));
	if (!rc && strcmp(status, "running"))
		rc = ERR_INVALID;
	qmp_close(q);
	close(sv[1]);
	return rc;
}

static int auth_call(void)
{
	char msg[256], sha[HMAC2_HEX_LEN + 1] = "", sig[HMAC2_HEX_LEN + 1] = "";
	int rc;

	/* A legacy signature (openQA's vector, as the server checks it), then
	 * scheme 2's body hash and signature. */
	rc = auth_verify("1234567890ABCDEF", "/api/v1/jobs?state=done&limit=2", "1712345678",
			 "7212112d6b72e39c00543e946028ddc131c23fd6", 1712345678.0, msg, sizeof(msg));
	if (!rc)
		rc = hmac_sha256_hex("x", 1, sha);
	if (!rc)
		rc = hmac2_sign("S", "POST", "/api/v1/jobs", "1712345678", "00112233445566778899aabbccddeeff", sha, sig);
	return rc;
}

TEST(nomem_needle_parse)
{
	CHECK(every_n("needle_parse", needle_call) > 1);
}

TEST(nomem_params_parse)
{
	CHECK(every_n("params_parse", params_call) > 1);
}

TEST(nomem_jt_yaml_parse)
{
	CHECK(every_n("jt_yaml_parse", yaml_call) > 1);
}

TEST(nomem_qmp_messages)
{
	CHECK(every_n("qmp", qmp_call) > 1);
}

TEST(nomem_auth_headers)
{
	CHECK(every_n("auth", auth_call) > 1);
}
