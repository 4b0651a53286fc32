/* SPDX-License-Identifier: MIT */
/* test_server_range.c - the Range header of file answers (api_range_parse):
 * one byte range as a browser sends to seek a video, suffix and open
 * ranges, unsatisfiable ranges, and what is answered whole. */
#include <stdint.h>
#include "server/http/api.h"
#include "unit.h"

TEST(server_range_parse)
{
	uint64_t a = 7, b = 7;

	CHECK_INT(api_range_parse(NULL, 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=0-9", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(a, 0);
	CHECK_INT(b, 9);
	CHECK_INT(api_range_parse("bytes=90-", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(a, 90);
	CHECK_INT(b, 99);
	CHECK_INT(api_range_parse("bytes=50-1000", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(b, 99);
	CHECK_INT(api_range_parse("bytes=-10", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(a, 90);
	CHECK_INT(b, 99);
	CHECK_INT(api_range_parse("bytes=-500", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(a, 0);
	CHECK_INT(b, 99);
	CHECK_INT(api_range_parse("bytes=99-99", 100, &a, &b), API_RANGE_PARTIAL);
	CHECK_INT(a, 99);
	/* Nothing of the file in the range: 416. */
	CHECK_INT(api_range_parse("bytes=100-", 100, &a, &b), API_RANGE_UNSATISFIABLE);
	CHECK_INT(api_range_parse("bytes=200-300", 100, &a, &b), API_RANGE_UNSATISFIABLE);
	CHECK_INT(api_range_parse("bytes=-0", 100, &a, &b), API_RANGE_UNSATISFIABLE);
	CHECK_INT(api_range_parse("bytes=0-", 0, &a, &b), API_RANGE_UNSATISFIABLE);
	/* Several ranges, other units and nonsense: the whole file. */
	CHECK_INT(api_range_parse("bytes=0-1,5-6", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("items=0-1", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=5-2", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=x-2", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=1-2x", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=-", 100, &a, &b), API_RANGE_WHOLE);
	CHECK_INT(api_range_parse("bytes=99999999999999999999999-", 100, &a, &b), API_RANGE_WHOLE);
}
