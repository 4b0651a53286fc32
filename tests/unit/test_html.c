/* SPDX-License-Identifier: MIT */
/* test_html.c - the server's HTML writer (server/pages/html.h): every value
 * escaped, links only same-site or http(s), query parameters encoded as
 * URLSearchParams does, data islands that nothing in the data can end. */
#include <string.h>
#include "unit.h"
#include "server/pages/html.h"

TEST(html_text_escapes_markup)
{
	struct html h;

	html_init(&h, 1 << 16);
	HTML(&h, "<td>");
	html_text(&h, "<script>alert('x')</script> & \"q\"");
	html_textf(&h, " %s", "<b>");
	HTML(&h, "</td>");
	CHECK(!h.err);
	CHECK_STR(h.buf.data, "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot; &lt;b&gt;</td>");
	html_release(&h);
}

TEST(html_attr_escapes_value)
{
	struct html h;

	html_init(&h, 1 << 16);
	HTML(&h, "<a");
	HTML_ATTR(&h, "title", "\"><img src=x onerror=alert(1)>");
	HTML_ATTRF(&h, "data-id", "%d", 7);
	HTML(&h, ">");
	CHECK_STR(h.buf.data, "<a title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\" data-id=\"7\">");
	html_release(&h);
}

TEST(html_href_same_site_or_http)
{
	static const char *const bad[] = { "javascript:alert(1)", "//evil.example/x", "/\\evil.example", "data:text/html,x",
					   "x", "", " /tests/1", "JAVASCRIPT:alert(1)" };
	struct html h;
	size_t i;

	html_init(&h, 1 << 16);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		html_href(&h, bad[i]);
		CHECK_INT((int)h.buf.len, 0);
	}
	html_href(&h, NULL);
	CHECK_INT((int)h.buf.len, 0);
	html_href(&h, "/tests/1?a=1&b=\"");
	html_href(&h, "https://bugzilla.example/1");
	html_hreff(&h, "/tests/%d", 2);
	html_href(&h, "#details");
	CHECK_STR(h.buf.data, " href=\"/tests/1?a=1&amp;b=&quot;\" href=\"https://bugzilla.example/1\" href=\"/tests/2\""
			      " href=\"#details\"");
	html_release(&h);
}

TEST(html_query_add_encodes_as_urlsearchparams)
{
	struct buf b;

	buf_init(&b, 4096);
	CHECK(!buf_puts(&b, "/api/v1/jobs"));
	CHECK(!html_query_add(&b, "state", "done,cancelled"));
	CHECK(!html_query_add(&b, "test", "a b&c=d/é"));
	CHECK(!html_query_add(&b, "empty", ""));
	CHECK(!html_query_add(&b, "none", NULL));
	CHECK(!html_query_add(&b, "x", "-_.*~"));
	CHECK_STR(b.data, "/api/v1/jobs?state=done%2Ccancelled&test=a+b%26c%3Dd%2F%C3%A9&x=-_.*%7E");
	buf_release(&b);
}

TEST(html_uri_component_as_encodeuricomponent)
{
	struct buf b;

	buf_init(&b, 4096);
	CHECK(!buf_puts(&b, "/tests/1#step/"));
	CHECK(!html_uri_component(&b, "a b/c?d=é&-_.!~*'()"));
	CHECK_STR(b.data, "/tests/1#step/a%20b%2Fc%3Fd%3D%C3%A9%26-_.!~*'()");
	buf_release(&b);
}

TEST(html_errors_are_sticky)
{
	struct html h;

	html_init(&h, 8);
	HTML(&h, "<table>");
	html_text(&h, "more than eight bytes");
	CHECK(h.err != 0);
	HTML(&h, "x");
	CHECK(h.err != 0);
	CHECK_STR(h.buf.data, "<table>");
	html_release(&h);
}
