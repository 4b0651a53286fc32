/* SPDX-License-Identifier: MIT */
/* test_hmac.c - openQA's request signature (net/hmac.c) against known
 * vectors: RFC 2202's HMAC-SHA1 case 2 split into target and microtime,
 * and request-shaped ones computed with python3's hmac module and checked
 * with `openssl dgst -sha1 -hmac`; verification and its refusals. */
#include <string.h>
#include "unit.h"
#include "net/hmac.h"
#include "net/http.h"
#include "util/err.h"

TEST(hmac_sign_vectors)
{
	char h[HMAC_HEX_LEN + 1];

	/* RFC 2202 test case 2: key "Jefe", data "what do ya want for nothing?". */
	CHECK_INT(hmac_sign("Jefe", "what do ya want ", "for nothing?", h), 0);
	CHECK_STR(h, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
	CHECK_INT(hmac_sign("1234567890ABCDEF", "/api/v1/jobs?state=done&limit=2", "1712345678", h), 0);
	CHECK_STR(h, "7212112d6b72e39c00543e946028ddc131c23fd6");
	CHECK_INT(hmac_sign("SECRET", "/api/v1/jobs/1/restart", "1712345678.123456", h), 0);
	CHECK_STR(h, "c1633933f8073d1446d60815100c54014c99b218");
	CHECK_INT(hmac_sign("ABCDEF1234567890", "/api/v1/isos", "1588153057", h), 0);
	CHECK_STR(h, "10c454c0e6bc98e05a1056de2442739cd6fe2cbd");
	/* The python client's float microtime, hashed as the text it sent. */
	CHECK_INT(hmac_sign("0F1E2D3C4B5A6978", "/api/v1/workers/7/work?timeout=30", "1764000000.25", h), 0);
	CHECK_STR(h, "939c41ed23e42215520fd1f2f4093fb5e6dfcbe1");
}

TEST(hmac_sign_too_long)
{
	static char target[LIMIT_HMAC_TARGET + 2];
	char h[HMAC_HEX_LEN + 1] = "x";

	memset(target, 'a', sizeof(target) - 1);
	CHECK_INT(hmac_sign("SECRET", target, "1712345678", h), ERR_TOO_BIG);
	CHECK_STR(h, "");
}

TEST(hmac_verify_refusals)
{
	const char *t = "/api/v1/jobs?state=done&limit=2", *good = "7212112d6b72e39c00543e946028ddc131c23fd6";

	CHECK(hmac_verify("1234567890ABCDEF", t, "1712345678", good));
	CHECK(!hmac_verify("1234567890ABCDEF", t, "1712345679", good));
	CHECK(!hmac_verify("1234567890ABCDEF", "/api/v1/jobs?state=done&limit=3", "1712345678", good));
	CHECK(!hmac_verify("WRONG", t, "1712345678", good));
	/* Uppercase hex is not what openQA's clients send. */
	CHECK(!hmac_verify("1234567890ABCDEF", t, "1712345678", "7212112D6B72E39C00543E946028DDC131C23FD6"));
	CHECK(!hmac_verify("1234567890ABCDEF", t, "1712345678", "7212112d6b72e39c"));
	CHECK(!hmac_verify("1234567890ABCDEF", t, "1712345678", NULL));
	CHECK(!hmac_verify("", t, "1712345678", good));
	CHECK(!hmac_verify(NULL, t, "1712345678", good));
}

/* Queries are built with spaces as '+', the form openQA's server checks
 * the signature over (a "%20" there is refused 403). */
TEST(http_query_plus_spaces)
{
	struct buf b;

	buf_init(&b, 4096);
	CHECK_INT(http_query_add(&b, "result", "incomplete"), 0);
	CHECK_INT(http_query_add(&b, "reason", "api failure: a b%20c+d"), 0);
	CHECK_STR(b.data, "?result=incomplete&reason=api+failure%3A+a+b%2520c%2Bd");
	buf_reset(&b);
	CHECK_INT(http_form_add(&b, "my key", "x y"), 0);
	CHECK_STR(b.data, "my+key=x+y");
	buf_release(&b);
}
