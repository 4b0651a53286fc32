// SPDX-License-Identifier: MIT
// job-explain.js - why a screen check failed, under the opened step of
// job-details.js: the best candidate needle, each match area's similarity
// against the level the needle required ("83 % < 96 %", the area's "match"
// from the needle's JSON as the job copied it, default 96) and the
// difference heat-map of each area: the run's own difference PNG when the
// result names one ("diff" on the candidate), else one the server draws
// from the stored screenshot and the distribution's needle as it is now
// (/tests/<id>/images/diff/<screenshot>?needle=&area=), said so.
import { h } from './dom.js';
import { fileUrl, needleJson } from './job-data.js';

const DEFAULT_LEVEL = 96;

// The needle JSON's match areas, in order (the result's "area" list follows them).
function matchAreas(nj) {
	return ((nj && nj.area) || []).filter(a => (a.type || 'match') === 'match');
}

function heatmap(src, alt, caption, missing) {
	const img = h('img', { src, alt, class: 'jx-heat', decoding: 'async' });
	const fig = h('figure', { class: 'jx-fig' }, img, h('figcaption', { class: 'muted' }, caption));
	img.addEventListener('error', () => fig.replaceChildren(h('p', { class: 'muted jx-noheat' }, missing)));
	return fig;
}

// The explanation of step st (a failed or unmatched check with
// candidates), or null when there is nothing to explain.
export async function explainStep(ctx, st) {
	const d = st.d, c = d.needles && d.needles[0];
	if (!c || d.area || !d.screenshot) return null;
	const nj = await needleJson(ctx, c.name);
	const levels = matchAreas(nj);
	const rows = (c.area || []).map((a, k) => {
		const need = levels[k] && levels[k].match !== undefined ? Number(levels[k].match) : DEFAULT_LEVEL;
		const sim = Number(a.similarity);
		const ok = sim >= need;
		return h('li', { class: 'jx-area ' + (ok ? 'jx-ok' : 'jx-miss'), dataset: { area: k } },
			`area ${k + 1} (${a.x},${a.y} ${a.w}×${a.h}): `,
			h('strong', { class: 'jx-fig-text' }, ok ? `${sim} % ≥ ${need} %` : `${sim} % < ${need} %`),
			nj ? null : h('span', { class: 'muted' }, ' (level assumed: the job has no copy of the needle)'));
	});
	let maps;
	if (c.diff) {
		maps = [heatmap(fileUrl(ctx, c.diff), `difference of ${c.name}`,
			'Difference of the best candidate, written by the run.', `${c.diff} could not be loaded.`)];
	} else {
		const base = `/tests/${ctx.id}/images/diff/${encodeURIComponent(d.screenshot)}`;
		maps = (c.area || []).map((a, k) => heatmap(
			`${base}?${new URLSearchParams({ needle: c.name, area: String(k) })}`,
			`difference of ${c.name} area ${k + 1}`,
			`Area ${k + 1}: grey-level difference after the matcher's blur (dim: equal; violet to yellow: ` +
			`more different), against needle ${c.name} as it is now in the distribution, not as it was during the run.`,
			`No heat-map for area ${k + 1}: the distribution has no needle ${c.name} now.`));
	}
	return h('section', { class: 'jx', dataset: { needle: c.name } },
		h('h5', {}, 'Why it failed: best candidate ', h('code', {}, c.name)),
		rows.length ? h('ul', { class: 'jx-areas' }, rows) : h('p', { class: 'muted' }, 'The candidate has no match area.'),
		h('div', { class: 'jx-maps' }, maps));
}
