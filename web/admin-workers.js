// SPDX-License-Identifier: MIT
// admin-workers.js - /admin/workers: every registered worker (host and
// instance, state, the job it runs linked, its classes, when it was last
// heard from). The server builds the page (src/server/pages/web_ssr_admin.c,
// from the domain's workers_list_all); this makes its column heads sort
// the rows.
import { builtByServer } from './dom.js';
import { liveTable } from './admin-common.js';

export async function render(main) {
	const table = builtByServer(main, 'table.adm-workers');
	if (table) liveTable(table, null);
}
