// SPDX-License-Identifier: MIT
// job-media.js - the job page's #video tab (video.webm, seeked to a step
// through video_index.json; the server answers byte ranges so the browser
// can seek) and #logs tab (the job's other artefacts and the logs its test
// uploaded: text shown inline as text, everything downloadable).
import { h, replace } from './dom.js';
import { fileUrl, fileText, stepTime } from './job-data.js';

// Text artefacts longer than this are shown from their end (a Range request).
const TEXT_TAIL = 512 * 1024;

function seekTo(video, t) {
	const go = () => { video.currentTime = t; };
	if (video.readyState >= 1) go();
	else video.addEventListener('loadedmetadata', go, { once: true });
}

// Switch to the video tab (a history entry) and seek to t seconds.
export async function seekVideo(ctx, t) {
	if (!ctx.tabs.video) return;
	if (location.hash !== '#video') location.hash = '#video';
	await ctx.selectTab('video');
	const video = ctx.tabs.video.panel.querySelector('video');
	if (!video) return;
	if (video.getBoundingClientRect().top < 0) ctx.tabs.video.link.scrollIntoView({ block: 'start' });
	seekTo(video, t);
}

export async function renderVideo(panel, ctx) {
	const video = h('video', { class: 'job-video', src: fileUrl(ctx, 'video.webm'), controls: true, preload: 'auto',
		muted: true, playsinline: true });
	video.muted = true;
	const steps = ctx.steps.map(st => [st, stepTime(ctx, st)]).filter(([, t]) => t !== null);
	const buttons = steps.map(([st, t]) => h('button', { type: 'button', class: 'job-vstep ' + (st.d.result === 'fail' ? 'r-failed' : ''),
		dataset: { module: st.mod.name, step: st.n, time: t }, onclick: () => seekTo(video, t) },
	h('span', { 'aria-hidden': 'true' }, '▶ '), `${st.mod.name} ${st.n}`, h('span', { class: 'muted' }, ` ${t.toFixed(2)} s`)));
	// Mark the step the video shows (the last one at or before its time).
	video.addEventListener('timeupdate', () => {
		let on = -1;
		steps.forEach(([, t], i) => { if (t <= video.currentTime + 0.01) on = i; });
		buttons.forEach((b, i) => b.classList.toggle('job-vstep-on', i === on));
	});
	replace(panel,
		h('div', { class: 'job-video-wrap' }, video),
		h('p', { class: 'muted' }, 'Steps (click to see each in the video): ',
			h('a', { href: fileUrl(ctx, 'video.webm'), download: `job-${ctx.id}.webm` }, 'download video.webm')),
		h('ol', { class: 'job-vsteps' }, buttons.map(b => h('li', {}, b))));
}

// The job's artefacts in groups: [title, test(name, names of step texts)].
const GROUPS = [
	['Logs', (n, steps) => /\.(txt|log)$/.test(n) && !steps.has(n)],
	['Video', n => /\.(webm|mp4|ogv)$/.test(n)],
	['Results', n => /\.json$/.test(n) && !n.startsWith('needle-')],
	['Needles used', n => n.startsWith('needle-')],
	['Step texts', (n, steps) => steps.has(n)],
];
const TEXT = /\.(txt|log|json)$/;
// Uploaded logs are text unless their name says otherwise (they often have
// no extension: upload_logs('/proc/cmdline')).
const BINARY = /\.(gz|xz|bz2|zst|lz4|tar|tgz|zip|7z|rpm|deb|png|jpe?g|gif|webm|mp4|ogv|qcow2|iso|img|raw|bin)$/i;

function textEntry(ctx, name, open) {
	const pre = h('pre', { class: 'job-log-text' });
	const note = h('p', { class: 'muted job-log-note' });
	const det = h('details', { class: 'job-log', dataset: { file: name }, open },
		h('summary', {}, h('span', { class: 'job-log-name' }, name), ' ',
			h('a', { href: fileUrl(ctx, name), download: name, class: 'job-log-dl' }, 'download')),
		note, pre);
	let loaded = false;
	const load = async () => {
		if (loaded || !det.open) return;
		loaded = true;
		pre.textContent = 'Loading…';
		try {
			const r = await fileText(ctx, name, TEXT_TAIL);
			pre.textContent = r.text === '' ? '(empty)' : r.text;
			pre.classList.toggle('muted', r.text === '');
			if (r.partial) note.textContent = `Showing the last ${Math.round(TEXT_TAIL / 1024)} KiB of ${Math.round(r.size / 1024)} KiB; download it for the whole file.`;
		} catch (e) {
			pre.textContent = `${name} could not be read: ${e.message}`;
		}
	};
	det.addEventListener('toggle', load);
	if (open) load();
	return det;
}

export async function renderLogs(panel, ctx) {
	const names = [...ctx.logs].sort();
	const left = new Set(names);
	const sections = [];
	// Open the serial log, or the runner's when there is no serial output.
	const first = ['serial0.txt', 'vigil-log.txt', 'autoinst-log.txt'].find(n => left.has(n));
	const stepTexts = new Set(ctx.steps.map(st => st.d.text).filter(Boolean));
	for (const [title, test] of GROUPS) {
		const mine = names.filter(n => left.has(n) && test(n, stepTexts));
		mine.forEach(n => left.delete(n));
		if (mine.length) sections.push([title, mine]);
	}
	if (left.size) sections.push(['Other files', [...left]]);
	// The test's own uploads after the job's logs (openQA serves both under /file/).
	const ulogs = [...ctx.ulogs].sort();
	if (ulogs.length) sections.splice(sections.findIndex(([t]) => t === 'Logs') + 1, 0, ['Uploaded logs', ulogs, true]);
	const list = (names, uploaded) => h('div', { class: 'job-logs-list' + (uploaded ? ' job-ulogs' : '') }, names.map(n =>
		((uploaded ? !BINARY.test(n) : TEXT.test(n))
			? textEntry(ctx, n, n === first && !uploaded)
			: h('p', { class: 'job-log', dataset: { file: n } },
				h('a', { href: fileUrl(ctx, n), download: n, class: 'job-log-dl' }, n)))));
	replace(panel,
		sections.length ? sections.map(([t, n, uploaded]) => [h('h3', {}, t), list(n, uploaded)])
			: h('p', { class: 'muted' }, 'This job has no logs.'),
		ctx.pngs.size ? h('p', { class: 'muted' }, `${ctx.pngs.size} screenshots (see the details).`) : null);
}
