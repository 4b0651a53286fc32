// SPDX-License-Identifier: MIT
// api.js - the pages' only way to the server: JSON from /api/v1 (the same
// API programs use), errors as exceptions carrying the server's text.

export class ApiError extends Error {
	constructor(status, message, body) {
		super(message);
		this.status = status;
		this.body = body; // the server's answer as parsed (openQA's {"error": ...})
	}
}

let csrf = null;

// The answers the server put into the page with its first view (data
// islands, src/server/pages/web_ssr.h), by URL: each is taken once, by the
// first get() of the same path and parameters, instead of asking again.
const islands = new Map();
for (const el of document.querySelectorAll('script[type="application/json"][data-url]')) {
	islands.set(urlKey(el.dataset.url), el.textContent);
	el.remove();
}

// A URL as a key: its path and its parameters in sorted order.
function urlKey(url) {
	const u = new URL(url, location.origin);
	const q = [...u.searchParams].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
	return u.pathname + '?' + new URLSearchParams(q).toString();
}

// The CSRF token of the signed-in session (set by the session code).
export function setCsrf(token) { csrf = token; }

async function answer(r, path) {
	const type = r.headers.get('Content-Type') || '';
	const body = type.startsWith('application/json') ? await r.json() : await r.text();
	if (!r.ok) {
		const err = body && body.error;
		const msg = Array.isArray(err) ? err.join('; ') : err || `${r.status} ${r.statusText}`;
		throw new ApiError(r.status, `${path}: ${msg}`, body);
	}
	return body;
}

// GET path (a string, or [path, {param: value}] with params made into a query).
export async function get(path, params) {
	const url = withQuery(path, params);
	const key = urlKey(url);
	if (islands.has(key)) {
		const text = islands.get(key);
		islands.delete(key);
		return JSON.parse(text);
	}
	return answer(await fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' } }), path);
}

// A write with a form body (as openQA's API takes), sent with the session's CSRF token.
export async function send(method, path, params) {
	const headers = { Accept: 'application/json' };
	if (csrf) headers['X-CSRF-Token'] = csrf;
	const body = params ? new URLSearchParams(params) : undefined;
	return answer(await fetch(path, { method, credentials: 'same-origin', headers, body }), path);
}

export function withQuery(path, params) {
	if (!params) return path;
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(params))
		if (v !== undefined && v !== null && v !== '') q.append(k, String(v));
	const s = q.toString();
	return s ? `${path}?${s}` : path;
}
