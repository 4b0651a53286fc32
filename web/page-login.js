// SPDX-License-Identifier: MIT
// page-login.js - /login: the sign-in form. Posts to /login (JSON answer),
// shows a refusal as text, and goes back to return_to once signed in.
import { h, replace } from './dom.js';
import { send } from './api.js';
import { currentSession, safeReturn } from './session.js';

export async function render(main, match, query) {
	const returnTo = safeReturn(query.get('return_to'));
	const s = await currentSession();
	const error = h('p', { class: 'error login-error', role: 'alert' });
	const user = h('input', { name: 'user', id: 'login-user', autocomplete: 'username', required: true,
		autocapitalize: 'none', spellcheck: 'false' });
	const password = h('input', { name: 'password', id: 'login-password', type: 'password',
		autocomplete: 'current-password', required: true });
	const submit = h('button', { type: 'submit' }, 'Sign in');
	const form = h('form', { class: 'login', method: 'post', action: '/login' },
		h('input', { type: 'hidden', name: 'return_to', value: returnTo }),
		h('label', { for: 'login-user' }, 'User'), user,
		h('label', { for: 'login-password' }, 'Password'), password,
		submit, error);
	form.addEventListener('submit', async e => {
		e.preventDefault();
		submit.disabled = true;
		replace(error);
		try {
			const r = await send('POST', '/login', { user: user.value, password: password.value, return_to: returnTo });
			location.assign(safeReturn(r.return_to));
		} catch (ex) {
			replace(error, String(ex.message || ex).replace(/^\/login: /, ''));
			password.value = '';
			password.focus();
			submit.disabled = false;
		}
	});
	replace(main, h('h1', {}, 'Sign in'),
		s.user ? h('p', { class: 'muted login-already' }, `You are signed in as ${s.user.name}. `,
			h('a', { href: returnTo }, 'Continue'), ', or sign in as someone else:') : null,
		form);
	user.focus();
}
