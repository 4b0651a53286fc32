// SPDX-License-Identifier: MIT
// page-apikeys.js - /user/api_keys: the signed-in user's API keys for
// openqa-cli and other programs: list, create (the secret is shown this
// once), revoke. A key acts with its owner's role.
import { h, replace } from './dom.js';
import { get, send } from './api.js';
import { currentSession, loginHref } from './session.js';

export async function render(main) {
	const s = await currentSession();
	if (!s.user) {
		replace(main, h('h1', {}, 'API keys'),
			h('p', { class: 'apikeys-signin' }, h('a', { href: loginHref('/user/api_keys') }, 'Sign in'),
				' to see and create your API keys.'));
		return;
	}
	const rows = h('tbody', {});
	const fresh = h('div', { class: 'apikey-new', 'aria-live': 'polite' });
	const error = h('p', { class: 'error', role: 'alert' });
	const create = h('button', { type: 'button', class: 'apikey-create' }, 'Create a key');

	let shown = null; // the id of the key whose secret is on screen

	async function revoke(k, button) {
		button.disabled = true;
		replace(error);
		try {
			await send('DELETE', `/api/v1/user/api_keys/${k.id}`);
			if (k.id === shown) replace(fresh);
		} catch (ex) {
			replace(error, ex.message);
		}
		await load();
	}

	function row(k) {
		const b = h('button', { type: 'button', class: 'apikey-revoke' }, 'Revoke');
		b.addEventListener('click', () => revoke(k, b));
		return h('tr', { dataset: { id: k.id } },
			h('td', {}, h('code', { class: 'apikey-key' }, k.key)),
			h('td', {}, (k.t_created || '').replace('T', ' ')),
			h('td', {}, k.t_expiration ? k.t_expiration.replace('T', ' ') : 'never'),
			// docs/signatures.md: an admin may make a key refuse openQA's legacy signatures.
			h('td', { class: 'apikey-sig' }, k.refuse_legacy ? 'vigil only' : 'vigil and openQA'),
			h('td', {}, b));
	}

	async function load() {
		const { api_keys: keys } = await get('/api/v1/user/api_keys');
		replace(rows, keys.length ? keys.map(row)
			: h('tr', { class: 'apikeys-none' }, h('td', { colspan: 5, class: 'muted' }, 'No keys yet.')));
	}

	create.addEventListener('click', async () => {
		create.disabled = true;
		replace(error);
		try {
			const k = await send('POST', '/api/v1/user/api_keys');
			shown = k.id;
			replace(fresh,
				h('p', {}, 'Your new key. Copy the secret now: it is not shown again.'),
				h('dl', {},
					h('dt', {}, 'Key'), h('dd', {}, h('code', { class: 'apikey-new-key' }, k.key)),
					h('dt', {}, 'Secret'), h('dd', {}, h('code', { class: 'apikey-new-secret' }, k.secret))),
				h('p', { class: 'muted' }, 'For openqa-cli, in ~/.config/openqa/client.conf:'),
				h('pre', {}, `[${location.host}]\nkey = ${k.key}\nsecret = ${k.secret}\n`));
			await load();
		} catch (ex) {
			replace(error, ex.message);
		}
		create.disabled = false;
	});

	replace(main, h('h1', {}, 'API keys'),
		h('p', { class: 'muted' }, s.user.role === 'user'
			? `Keys of ${s.user.name}. A user's keys only read, as everyone may; an operator's also change jobs.`
			: `Keys of ${s.user.name}; programs signing with one act as you (${s.user.role}).`),
		create, error, fresh,
		h('div', { class: 'scroll' }, h('table', { class: 'apikeys' },
			h('thead', {}, h('tr', {}, h('th', {}, 'Key'), h('th', {}, 'Created (UTC)'), h('th', {}, 'Expires'), h('th', {}, 'Signatures'), h('th', {}, ''))),
			rows)));
	await load();
}
