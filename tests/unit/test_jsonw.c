/* SPDX-License-Identifier: MIT */
/* test_jsonw.c - JSON text written by util/jsonw: escapes, invalid UTF-8,
 * integers; jansson reads back what it wrote. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>
#include "unit.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/jsonw.h"

static void check_str(const char *in, const char *want_text, const char *want_value)
{
	struct buf b;
	json_t *j;

	buf_init(&b, 1024);
	CHECK_INT(jsonw_str(&b, in), 0);
	CHECK_STR(b.data, want_text);
	j = json_loads(b.data, JSON_DECODE_ANY, NULL);
	CHECK(j != NULL);
	if (want_value)
		CHECK_STR(json_string_value(j), want_value);
	else
		CHECK(json_is_null(j));
	json_decref(j);
	buf_release(&b);
}

TEST(jsonw_strings)
{
	check_str("plain", "\"plain\"", "plain");
	check_str("", "\"\"", "");
	check_str(NULL, "null", NULL);
	check_str("a\"b\\c/d", "\"a\\\"b\\\\c/d\"", "a\"b\\c/d");
	check_str("\n\r\t\b\f\x01\x1f", "\"\\n\\r\\t\\b\\f\\u0001\\u001f\"", "\n\r\t\b\f\x01\x1f");
	/* valid UTF-8 as is: 2, 3 and 4 bytes */
	check_str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
		  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* not UTF-8: a lone continuation byte, an overlong '/', a surrogate,
	 * beyond U+10FFFF, a sequence cut short by the end */
	check_str("a\x80z", "\"a\xef\xbf\xbdz\"", "a\xef\xbf\xbdz");
	check_str("\xc0\xaf", "\"\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd");
	check_str("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check_str("\xf4\x90\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"",
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	check_str("x\xe2\x82", "\"x\xef\xbf\xbd\xef\xbf\xbd\"", "x\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(jsonw_keys_ints_and_limit)
{
	struct buf b;

	buf_init(&b, 64);
	CHECK_INT(buf_append(&b, "{", 1), 0);
	CHECK_INT(jsonw_key(&b, "k"), 0);
	CHECK_INT(jsonw_int(&b, INT64_MIN), 0);
	CHECK_INT(buf_append(&b, ",", 1), 0);
	CHECK_INT(jsonw_key(&b, "m"), 0);
	CHECK_INT(jsonw_int(&b, 42), 0);
	CHECK_INT(buf_append(&b, "}", 1), 0);
	CHECK_STR(b.data, "{\"k\":-9223372036854775808,\"m\":42}");
	/* over the buffer's limit: an error (the caller drops the text) */
	CHECK_INT(jsonw_str(&b, "0123456789012345678901234567890123456789"), ERR_TOO_BIG);
	buf_release(&b);
}
