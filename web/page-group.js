// SPDX-License-Identifier: MIT
// page-group.js - /group_overview/<id>: a job group's description, its
// newest builds with counts, and its comments. The server builds the page
// from its data (src/server/web_ssr_lists.c, docs/web.md "Pages built
// once"); this only sizes its count bars.
import { sizeBars } from './lists.js';
import { builtByServer } from './dom.js';

export async function render(main) {
	const head = builtByServer(main, '.lp-group');
	if (head) document.title = `${head.querySelector('h1').textContent} - vigil`;
	sizeBars(main);
}
