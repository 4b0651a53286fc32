// SPDX-License-Identifier: MIT
// session.js - who is signed in: currentSession() asks GET /api/v1/session
// once per page load (every page may await it) and hands the CSRF token to
// api.js, so send() signs writes; renderUser() fills the header's user area.
import { h, replace } from './dom.js';
import { get, send, setCsrf } from './api.js';

let pending = null;

// {user: null} or {user: {name, role}, csrf}: the same promise for every caller.
export function currentSession() {
	if (!pending) {
		pending = get('/api/v1/session').then(s => {
			if (!s || !s.user) return { user: null };
			if (s.csrf) setCsrf(s.csrf);
			return s;
		}, () => ({ user: null }));
	}
	return pending;
}

// A path of this site to come back to, else '/'.
export function safeReturn(path) {
	return typeof path === 'string' && path.startsWith('/') && !path.startsWith('//') && !path.includes('\\')
		? path : '/';
}

// The sign-in page's URL, coming back to returnTo (default: this page).
export function loginHref(returnTo) {
	let back = returnTo;
	if (!back) {
		back = location.pathname === '/login'
			? new URLSearchParams(location.search).get('return_to')
			: location.pathname + location.search + location.hash;
	}
	return '/login?' + new URLSearchParams({ return_to: safeReturn(back) }).toString();
}

async function signOut(button) {
	button.disabled = true;
	try {
		await send('POST', '/logout');
	} catch (e) { /* ended already: the reload shows it */ }
	location.reload();
}

// The header's user area: "Sign in", or the name, API keys, (audit log) and "Sign out".
export async function renderUser(el) {
	if (!el) return;
	const s = await currentSession();
	if (!s.user) {
		replace(el, h('a', { href: loginHref(), class: 'signin' }, 'Sign in'));
		return;
	}
	const out = h('button', { type: 'button', class: 'signout link' }, 'Sign out');
	out.addEventListener('click', () => signOut(out));
	replace(el,
		h('span', { class: 'user-name', title: `signed in as ${s.user.name} (${s.user.role})` }, s.user.name),
		h('a', { href: '/user/api_keys', class: 'user-keys' }, 'API keys'),
		s.user.role === 'admin' ? h('a', { href: '/admin/auditlog', class: 'user-audit' }, 'Audit log') : null,
		out);
}
