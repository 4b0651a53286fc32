// SPDX-License-Identifier: MIT
// page-overview.js - /tests/overview?distri=…&version=…&build=…&groupid=…:
// the latest job of each scenario of a build as a test × machine matrix,
// one table per distri/version/flavor, each cell the job's result linking
// to /tests/<id>; the counts on top. The server builds the page from its
// data (src/server/web_ssr_lists.c, docs/web.md "Pages built once"); this
// only sizes its count bar.
import { sizeBars } from './lists.js';
import { builtByServer } from './dom.js';

export async function render(main) {
	builtByServer(main, '.lp-overview');
	sizeBars(main);
}
