// SPDX-License-Identifier: MIT
// devmode.js - developer mode's panel in the live view (docs/devmode.md):
// pause at a module, on the next failed check or on the next command;
// while paused, the reason, the paused step's screenshot, a link to make
// or fix a needle from it in the needle editor, and resume / retry check /
// skip check. Commands go to POST /api/v1/jobs/<id>/developer (signed-in
// operators); the runner's state comes back in the live stream's status
// events ("developer"), so nothing is polled. mountDevmode(jobId) returns
// {el, update(status), end()}; live.js calls update with every status.
import { h, replace } from './dom.js';
import { send } from './api.js';
import { currentSession, loginHref } from './session.js';

const KIND_TEXT = { module: 'at a module', screen_mismatch: 'on a failed check', next_command: 'before a command' };

export function mountDevmode(jobId) {
	const id = encodeURIComponent(String(jobId));
	const el = h('details', { class: 'devmode', open: true }, h('summary', {}, 'Developer mode'));
	const msg = h('span', { class: 'devmode-msg muted', role: 'status' });
	const atSelect = h('select', { class: 'devmode-at', 'aria-label': 'module to pause at' },
		h('option', { value: '' }, '(no module)'));
	const onFail = h('input', { type: 'checkbox', class: 'devmode-on-fail' });
	const onNext = h('input', { type: 'checkbox', class: 'devmode-on-next' });
	const onModFail = h('input', { type: 'checkbox', class: 'devmode-on-failure' });
	const resume = h('button', { type: 'button', class: 'devmode-resume', disabled: true }, 'Resume');
	const retry = h('button', { type: 'button', class: 'devmode-retry', disabled: true,
		title: 'check again with the needles as the server has them now' }, 'Retry check');
	const skip = h('button', { type: 'button', class: 'devmode-skip', disabled: true,
		title: 'let the check fail as it would have' }, 'Skip check');
	const paused = h('div', { class: 'devmode-paused', hidden: true });
	let modules = [];   // names, as the status lists them
	let state = null;   // the runner's developer state, null before the first
	let over = false;

	async function command(params) {
		msg.textContent = 'sending…';
		try {
			await send('POST', `/api/v1/jobs/${id}/developer`, params);
			msg.textContent = 'sent: the runner takes it within a second';
		} catch (e) {
			msg.textContent = e.message;
		}
	}
	atSelect.addEventListener('change', () => command({ command: 'set_pause_at_test', name: atSelect.value }));
	onFail.addEventListener('change', () => command({ command: 'set_pause_on_screen_mismatch',
		pause_on: onFail.checked ? 'assert_screen' : 'false' }));
	onNext.addEventListener('change', () => command({ command: 'set_pause_on_next_command', flag: onNext.checked ? '1' : '0' }));
	onModFail.addEventListener('change', () => command({ command: 'set_pause_on_failure', flag: onModFail.checked ? '1' : '0' }));
	resume.addEventListener('click', () => command({ command: 'resume_test_execution' }));
	retry.addEventListener('click', () => command({ command: 'resume_test_execution', action: 'retry' }));
	skip.addEventListener('click', () => command({ command: 'resume_test_execution', action: 'skip' }));

	const controls = h('div', { class: 'devmode-controls', hidden: true },
		h('label', {}, 'Pause at module ', atSelect),
		h('label', {}, onFail, ' pause on the next failed check'),
		h('label', {}, onNext, ' pause on the next command'),
		h('label', {}, onModFail, ' pause when a module fails'),
		h('span', { class: 'devmode-buttons' }, resume, ' ', retry, ' ', skip), ' ', msg);
	const signin = h('p', { class: 'devmode-signin muted', hidden: true },
		h('a', { href: loginHref() }, 'Sign in'), ' as an operator to pause this job, fix needles and resume.');
	el.append(paused, controls, signin);
	currentSession().then(s => {
		const u = s && s.user;
		const may = !!u && (u.role === 'operator' || u.role === 'admin');
		controls.hidden = !may || over;
		signin.hidden = may || over;
	});

	function drawModules() {
		const want = state && state.pause_test_name ? state.pause_test_name : '';
		const names = modules.includes(want) || !want ? modules : [...modules, want];
		if (atSelect.options.length === names.length + 1 &&
			names.every((n, i) => atSelect.options[i + 1].value === n)) {
			atSelect.value = want;
			return;
		}
		replace(atSelect, h('option', { value: '' }, '(no module)'), ...names.map(n => h('option', { value: n }, n)));
		atSelect.value = want;
	}

	function drawPaused() {
		const p = state && state.paused;
		el.classList.toggle('is-paused', !!p);
		resume.disabled = !p;
		retry.disabled = skip.disabled = !p || p.kind !== 'screen_mismatch';
		paused.hidden = !p;
		el.dataset.paused = p ? `${p.kind} ${p.module} ${p.step}` : '';
		if (!p) {
			replace(paused);
			return;
		}
		const mod = encodeURIComponent(p.module);
		const parts = [h('p', { class: 'devmode-reason' }, h('strong', {}, `Paused ${KIND_TEXT[p.kind] || ''}: `), p.reason || ''),
			h('p', { class: 'muted' }, 'The live screen below: the machine runs on while the test waits.')];
		if (p.kind === 'screen_mismatch' && p.step > 0) {
			const shot = `/tests/${id}/file/${mod}-${encodeURIComponent(String(p.step))}.png`;
			parts.push(h('figure', { class: 'devmode-shot' },
				h('a', { href: shot }, h('img', { src: shot, alt: `The screen of step ${p.step} of ${p.module}` })),
				h('figcaption', {}, `${p.module}, step ${p.step}: the screen the check saw (tags ${p.tags || '–'})`)));
			parts.push(h('p', {}, h('a', { class: 'devmode-edit', href: `/tests/${id}/modules/${mod}/steps/${p.step}/edit` },
				'Create/fix needle'), ' — save it, then Retry check.'));
		}
		replace(paused, ...parts);
	}

	return {
		el,
		update(s) {
			if (Array.isArray(s.modules) && s.modules.length) modules = s.modules.map(m => m.name).filter(n => typeof n === 'string');
			if (s.developer && typeof s.developer === 'object') {
				state = s.developer;
				if (Array.isArray(state.schedule) && state.schedule.length) modules = state.schedule.filter(n => typeof n === 'string');
				onFail.checked = !!state.pause_on_screen_mismatch;
				onNext.checked = !!state.pause_on_next_command;
				onModFail.checked = !!state.pause_on_failure;
			}
			drawModules();
			drawPaused();
		},
		end() {
			over = true;
			el.hidden = true;
		},
	};
}
