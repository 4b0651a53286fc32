// SPDX-License-Identifier: MIT
// page-dashboard.js - / : every job group's newest builds with the counts
// of their latest jobs. The server builds the page from its data
// (src/server/web_ssr_lists.c, docs/web.md "Pages built once"); this only
// sizes its count bars.
import { sizeBars } from './lists.js';
import { builtByServer } from './dom.js';

export async function render(main) {
	builtByServer(main, '.lp-dashboard');
	sizeBars(main);
}
