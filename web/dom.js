// SPDX-License-Identifier: MIT
// dom.js - the one way pages put data on screen: elements built with
// createElement, every value set as text (textContent) or as a checked
// attribute, never parsed as markup. Links take http(s) or same-site URLs only.

// A URL safe to put in href/src: same-site paths and http(s) URLs; else null.
export function safeUrl(url) {
	if (typeof url !== 'string' || url === '') return null;
	try {
		const u = new URL(url, location.href);
		if (u.protocol === 'http:' || u.protocol === 'https:') return u.href;
	} catch (e) { /* not a URL */ }
	return null;
}

const URL_ATTRS = new Set(['href', 'src', 'action', 'poster', 'formaction']);

// h('a', {href: '/tests/1', class: 'x', onclick: fn}, 'text', child, [more]):
// an element. Strings and numbers become text nodes, arrays are flattened,
// null/undefined/false are skipped. Attributes starting with "on" take a
// function (addEventListener); URL attributes go through safeUrl (dropped
// when unsafe); "dataset" takes an object.
export function h(tag, attrs, ...children) {
	const el = tag.startsWith('svg:')
		? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
		: document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false) continue;
		if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
		else if (k === 'dataset') Object.assign(el.dataset, v);
		else if (URL_ATTRS.has(k)) {
			const safe = safeUrl(String(v));
			if (safe !== null) el.setAttribute(k, safe);
		} else if (k.startsWith('on')) continue; // never an inline handler
		else el.setAttribute(k, v === true ? '' : String(v));
	}
	append(el, children);
	return el;
}

// Append children to el (strings as text).
export function append(el, children) {
	for (const c of [children].flat(Infinity)) {
		if (c === null || c === undefined || c === false) continue;
		el.append(c instanceof Node ? c : document.createTextNode(String(c)));
	}
	return el;
}

// Replace el's children.
export function replace(el, ...children) {
	el.replaceChildren();
	return append(el, children);
}

// A duration or time shown to people: "3 min ago", "1 h 2 min".
export function ago(iso) {
	if (!iso) return '';
	const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso + 'Z');
	if (Number.isNaN(t)) return String(iso);
	return duration((Date.now() - t) / 1000) + ' ago';
}

export function duration(s) {
	s = Math.max(0, Math.round(s));
	if (s < 60) return s + ' s';
	if (s < 3600) return Math.floor(s / 60) + ' min';
	if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
	return Math.floor(s / 86400) + ' d';
}

// The CSS class of an openQA result or state ("passed", "failed", "running"...).
export function resultClass(result, state) {
	if (state && state !== 'done') return 'st-' + String(state).replace(/[^a-z_]/g, '');
	return 'r-' + String(result || 'none').replace(/[^a-z_]/g, '');
}

// A page built by the server alone (docs/web.md, "Pages built once"): its
// root element in main (selector), or null when the server said there why
// it could not show the page (<p class="error">). Throws when neither is
// there (app.js then says the page could not be shown).
export function builtByServer(main, selector) {
	const root = main.querySelector(selector);
	if (root) return root;
	if (main.querySelector(':scope > p.error')) return null;
	throw new Error('the server sent no page');
}

// The <main> of url as the server builds it (default: this page), for a
// page built by the server to show its data anew after a change: the
// browser parses it (XMLHttpRequest's document; nothing in it runs).
export function serverMain(url = location.href) {
	return new Promise((resolve, reject) => {
		const x = new XMLHttpRequest();
		x.open('GET', url);
		x.responseType = 'document';
		x.onload = () => {
			const m = x.status === 200 && x.response ? x.response.getElementById('main') : null;
			if (m) resolve(m);
			else reject(new Error(`${url}: ${x.status} ${x.statusText}`));
		};
		x.onerror = () => reject(new Error(`${url}: no answer`));
		x.send();
	});
}

// main's content replaced by the server's page anew (serverMain).
export async function reloadMain(main, url) {
	const fresh = await serverMain(url);
	main.replaceChildren(...fresh.childNodes);
}
