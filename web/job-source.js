// SPDX-License-Identifier: MIT
// job-source.js - the job page's #source tab: a test module's source as the
// runner uploaded it (result-<module>.json "source": {file, artefact}),
// lines numbered, each step's line linked to the step (details "line") and
// the failing step's line marked. #source/<module>[/<line>] picks one.
import { h, replace } from './dom.js';
import { fileText } from './job-data.js';

function moduleSource(ctx, mod, box, line) {
	const src = mod.source;
	replace(box, h('p', { class: 'loading' }, 'Loading…'));
	if (!src.artefact || !ctx.logs.has(src.artefact)) {
		replace(box, h('p', { class: 'muted' }, `The source of ${mod.name} (${src.file || '?'}) was not uploaded.`));
		return Promise.resolve();
	}
	return fileText(ctx, src.artefact).then(({ text }) => {
		const steps = new Map();
		for (const st of mod.steps) {
			const n = Number(st.d.line);
			if (!Number.isInteger(n) || n < 1) continue;
			if (!steps.has(n)) steps.set(n, []);
			steps.get(n).push(st);
		}
		const lines = text.replace(/\n$/, '').split('\n');
		const rows = lines.map((l, i) => {
			const n = i + 1, here = steps.get(n) || [];
			const failed = here.some(st => st.d.result === 'fail');
			return h('div', { class: 'job-src-line' + (failed ? ' job-src-fail' : '') + (n === line ? ' job-src-on' : ''),
				id: `job-src-${mod.name}-${n}`, dataset: { line: n } },
			h('span', { class: 'job-ln', 'aria-hidden': 'true' }, String(n)),
			h('code', {}, l === '' ? ' ' : l),
			here.length ? h('span', { class: 'job-src-steps' }, here.map(st => h('a', {
				href: `#step/${encodeURIComponent(mod.name)}/${st.n}`,
				class: 'job-src-step ' + (st.d.result === 'fail' ? 'r-failed' : ''),
				title: `step ${st.n}: ${st.d.result}` }, `step ${st.n}`))) : null);
		});
		replace(box, h('p', { class: 'job-src-file' }, h('code', {}, src.file || src.artefact)),
			h('div', { class: 'job-src', role: 'region', 'aria-label': `source of ${mod.name}` }, rows));
		const target = box.querySelector(line ? '.job-src-on' : '.job-src-fail');
		if (target) target.scrollIntoView({ block: 'center' });
	}).catch(e => replace(box, h('p', { class: 'error' }, `${src.artefact} could not be read: ${e.message}`)));
}

export async function renderSource(panel, ctx) {
	const mods = ctx.modules.filter(m => m.source);
	if (!mods.length) {
		replace(panel, h('p', { class: 'muted job-nosource' }, 'Source not recorded: this run did not upload its test modules.'));
		ctx.showSource = () => {};
		return;
	}
	const box = h('div', { class: 'job-src-box' });
	const nav = h('nav', { class: 'job-src-mods', 'aria-label': 'modules' });
	const show = (name, line) => {
		const mod = mods.find(m => m.name === name) || mods.find(m => m.result === 'failed') || mods[0];
		replace(nav, mods.map(m => h('a', { href: `#source/${encodeURIComponent(m.name)}`,
			class: 'job-src-mod ' + (m === mod ? 'job-tab-on' : ''), 'aria-current': m === mod ? 'true' : null }, m.name)));
		return moduleSource(ctx, mod, box, line);
	};
	ctx.showSource = show;
	replace(panel, nav, box);
	let hash = location.hash;
	try {
		hash = decodeURIComponent(hash);
	} catch (e) { /* taken as it is */ }
	const m = hash.match(/^#source\/([^/]+)(?:\/(\d+))?$/);
	await show(m ? m[1] : null, m && m[2] ? Number(m[2]) : 0);
}
