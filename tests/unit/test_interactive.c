/* SPDX-License-Identifier: MIT */
/* test_interactive.c - the --interactive answers: areas typed at the
 * prompt ("X,Y,W,H" lists, "full" or nothing for the whole screen). */
#include "unit.h"
#include "runner/prim/interactive.h"

TEST(interactive_parse_areas_answers)
{
	struct needle_area a[3];
	size_t n = 9;

	CHECK_INT(interactive_parse_areas("", 1024, 768, a, 3, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(a[0].x, 0);
	CHECK_INT(a[0].w, 1024);
	CHECK_INT(a[0].h, 768);
	CHECK_INT(a[0].type, NEEDLE_AREA_MATCH);
	CHECK_NEAR(a[0].match, NEEDLE_DEFAULT_MATCH, 0);
	CHECK_INT(interactive_parse_areas("full", 640, 480, a, 3, &n), 0);
	CHECK_INT(a[0].w, 640);
	CHECK_INT(interactive_parse_areas(" 200,10,320,25;0,128,46,16 ", 1024, 768, a, 3, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(a[0].x, 200);
	CHECK_INT(a[0].h, 25);
	CHECK_INT(a[1].y, 128);
	CHECK_NEAR(a[1].margin, NEEDLE_DEFAULT_MARGIN, 0);
	CHECK(interactive_parse_areas("1,2,3", 1024, 768, a, 3, &n) < 0);
	CHECK(interactive_parse_areas("1,2,3,0", 1024, 768, a, 3, &n) < 0);
	CHECK(interactive_parse_areas("-1,2,3,4", 1024, 768, a, 3, &n) < 0);
	CHECK(interactive_parse_areas("1,2,3,4x", 1024, 768, a, 3, &n) < 0);
	CHECK(interactive_parse_areas("1,2,3,4 5,6,7,8 9,9,9,9 1,1,1,1", 1024, 768, a, 3, &n) < 0);
	CHECK(interactive_parse_areas("whole", 1024, 768, a, 3, &n) < 0);
}
