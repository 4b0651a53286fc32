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
