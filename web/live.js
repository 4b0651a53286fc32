// SPDX-License-Identifier: MIT
// live.js - the live view of a running job: one EventSource on
// /tests/<id>/streaming (server-sent events, nothing polled) showing each
// frame as it comes, the module and step the runner is at, the modules'
// results so far and the tail of the runner's output (as text). Events:
//   status  {"job_id", "state", "result", "module", "step", "line", "what", "modules": [{name, result}],
//           "developer": the runner's developer-mode state (devmode.js shows it and its controls)}
//   log     a JSON string: new lines of the runner's output
//   serial  a JSON string: new serial output of the guest (openQA's worker sends it)
//   frame   {"n", "t": ms the VNC update arrived, "w": ms it was written, "src": "data:image/png;base64,..."}
//   end     {"state", "result"}: the job is over; the stream closes
// mountLive(container, jobId, {onEnd}) returns {stop()}. The container's
// data-frames / data-fps / data-age (ms from the VNC capture to on screen) /
// data-age-written (ms from the runner's live.png to on screen) say how it
// goes, for people (the small indicator), tests and bench/live.py.
import { h, replace } from './dom.js';
import { mountDevmode } from './devmode.js';

const LOG_KEEP = 64 * 1024;  // characters of output kept on the page
const RATE_WINDOW = 3000;    // ms of frames the fps figure covers
const FRAME_PREFIX = 'data:image/png;base64,';

export function mountLive(container, jobId, opts = {}) {
	const id = encodeURIComponent(String(jobId));
	const img = h('img', { class: 'live-frame', alt: 'The screen of the running job' });
	const waiting = h('p', { class: 'live-waiting muted' }, 'Waiting for the first frame from the worker…');
	const state = h('span', { class: 'live-state' }, 'connecting');
	const module = h('span', { class: 'live-module' });
	const step = h('span', { class: 'live-step muted' });
	const what = h('span', { class: 'live-what' });
	const rate = h('span', { class: 'live-rate muted', title: 'frames a second · time from the VM\'s screen to yours' }, '– fps');
	const modules = h('ol', { class: 'live-modules' });
	const log = h('pre', { class: 'live-log' });
	const serial = h('pre', { class: 'live-log live-serial' });
	const serialBox = h('details', { class: 'live-more', open: true, hidden: true }, h('summary', {}, 'Serial output'), serial);
	const ended = h('p', { class: 'live-end', hidden: true });
	const screen = h('div', { class: 'live-screen' }, waiting, img);
	const dev = mountDevmode(jobId);
	replace(container,
		h('div', { class: 'live-head' }, state, module, step, rate),
		h('p', { class: 'live-doing' }, what),
		ended, dev.el, screen,
		h('details', { class: 'live-more', open: true }, h('summary', {}, 'Modules'), modules),
		h('details', { class: 'live-more', open: true }, h('summary', {}, 'Runner output'), log), serialBox);
	container.classList.add('live');

	let frames = 0;          // frames on screen
	const loads = [];        // their load times (performance.now)
	let pendingT = 0;        // capture and write times of the frame being decoded
	let pendingW = 0;
	let stopped = false;

	img.addEventListener('load', () => {
		const now = performance.now();
		frames++;
		loads.push(now);
		while (loads.length > 1 && now - loads[0] > RATE_WINDOW) loads.shift();
		const fps = loads.length > 1 ? (loads.length - 1) * 1000 / (now - loads[0]) : 0;
		const age = pendingT ? Math.max(0, Date.now() - pendingT) : 0;
		waiting.hidden = true;
		container.dataset.frames = String(frames);
		container.dataset.fps = fps.toFixed(2);
		container.dataset.age = String(Math.round(age));
		container.dataset.ageWritten = String(pendingW ? Math.max(0, Date.now() - pendingW) : 0);
		rate.textContent = `${fps ? fps.toFixed(1) : '–'} fps · ${age < 10000 ? age + ' ms' : Math.round(age / 1000) + ' s'}`;
	});

	const es = new EventSource(`/tests/${id}/streaming`);
	es.addEventListener('open', () => { if (state.textContent === 'connecting') state.textContent = 'connected'; });
	es.addEventListener('error', () => {
		if (stopped || container.dataset.ended) return;
		// CLOSED: refused (no such job, too many streams); else the browser reconnects.
		if (es.readyState === EventSource.CLOSED) {
			state.textContent = 'unavailable';
			waiting.textContent = 'The live view is not available now (no such job, or too many viewers).';
		} else {
			state.textContent = 'reconnecting';
		}
	});
	es.addEventListener('status', e => {
		const s = JSON.parse(e.data);
		if (s.state) {
			if (s.state === 'scheduled') waiting.textContent = 'The job has not started yet: it waits for a worker…';
			else waiting.textContent = 'Waiting for the first frame from the worker…';
			state.textContent = s.state;
			state.className = `live-state st-${String(s.state).replace(/[^a-z_]/g, '')}`;
		}
		if (s.module) module.textContent = s.module;
		if (s.step !== undefined) step.textContent = `step ${s.step}${s.line ? ` · line ${s.line}` : ''}`;
		if (s.what !== undefined) what.textContent = s.what;
		if (Array.isArray(s.modules)) {
			replace(modules, s.modules.map(m => h('li', { class: m.name === s.module ? 'current' : null },
				h('span', {}, m.name), ' ',
				h('span', { class: `r-${m.result === 'ok' ? 'passed' : m.result === 'fail' ? 'failed' : m.result === 'softfail' ? 'softfailed' : 'none'}` }, m.result))));
		}
		dev.update(s);
	});
	const append = (pre, data) => {
		const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
		let text = pre.textContent + JSON.parse(data);
		if (text.length > LOG_KEEP) {
			text = text.slice(text.length - LOG_KEEP);
			text = text.slice(text.indexOf('\n') + 1);
		}
		pre.textContent = text;
		if (atEnd) pre.scrollTop = pre.scrollHeight;
	};
	es.addEventListener('log', e => append(log, e.data));
	es.addEventListener('serial', e => {
		serialBox.hidden = false;
		append(serial, e.data);
	});
	es.addEventListener('frame', e => {
		const f = JSON.parse(e.data);
		if (typeof f.src !== 'string' || !f.src.startsWith(FRAME_PREFIX)) return;
		container.dataset.events = String(Number(container.dataset.events || 0) + 1);
		pendingT = f.t || 0;
		pendingW = f.w || 0;
		img.src = f.src; // the old frame stays until this one is decoded
	});
	es.addEventListener('end', e => {
		const d = JSON.parse(e.data);
		es.close();
		dev.end();
		state.textContent = d.state || 'done';
		state.className = 'live-state';
		ended.hidden = false;
		replace(ended, 'The job is over', d.result ? ': ' : '.', d.result ? h('span', { class: `r-${String(d.result).replace(/[^a-z_]/g, '')}` }, d.result) : null,
			' ', h('a', { href: `/tests/${id}` }, 'See its results'));
		container.dataset.ended = d.result || d.state || 'done';
		rate.textContent = `${frames} frames`;
		if (!frames) screen.hidden = true;
		if (opts.onEnd) opts.onEnd(d);
	});

	return {
		stop() {
			stopped = true;
			es.close();
		},
	};
}
