// SPDX-License-Identifier: MIT
// page-auditlog.js - /admin/auditlog: who changed what and when, newest
// first, a page at a time (?before=ID older, ?after=ID newer), for
// administrators as in openQA. The server builds the page
// (src/server/web_ssr_admin.c, docs/web.md "Pages built once"): its
// table, its paging links, or why it is not shown; nothing to add here.
import { builtByServer } from './dom.js';

export async function render(main) {
	builtByServer(main, 'h1');
}
