// SPDX-License-Identifier: MIT
// needle-canvas.js - the needle editor's drawing surface: the step's whole
// screenshot on a canvas with the draft needle's areas (match, exclude,
// ocr) drawn, moved and resized with the mouse, and the server's live match
// (where each area was found, its similarity) drawn over them. Holds no
// needle logic: areas are {xpos, ypos, width, height, type, ...} objects the
// page owns; every change is reported through onchange.

const COLOURS = {
	match: ['rgba(0, 200, 0, .25)', 'rgb(0, 160, 0)'],
	exclude: ['rgba(220, 30, 30, .25)', 'rgb(200, 20, 20)'],
	ocr: ['rgba(255, 160, 0, .25)', 'rgb(220, 130, 0)'],
};
const HANDLE = 8;   // screen pixels of a corner handle
const MIN = 4;      // smallest area side in image pixels

export class NeedleCanvas {
	// canvas: the element; img: the loaded screenshot; hooks: {onchange(final),
	// onselect(index), newType()} (final: the mouse button is up).
	constructor(canvas, img, hooks) {
		this.canvas = canvas;
		this.img = img;
		this.hooks = hooks;
		this.areas = [];
		this.selected = -1;
		this.result = null;
		this.drag = null;
		canvas.width = img.naturalWidth;
		canvas.height = img.naturalHeight;
		canvas.addEventListener('mousedown', e => this.down(e));
		window.addEventListener('mousemove', e => this.move(e));
		window.addEventListener('mouseup', e => this.up(e));
		this.draw();
	}

	// The image pixel under a mouse event (the canvas is scaled by CSS).
	at(e) {
		const r = this.canvas.getBoundingClientRect();
		const sx = this.canvas.width / r.width, sy = this.canvas.height / r.height;
		return [Math.round((e.clientX - r.left) * sx), Math.round((e.clientY - r.top) * sy), sx];
	}

	hit(x, y, scale) {
		const hs = HANDLE * scale;
		for (let i = this.areas.length - 1; i >= 0; i--) {
			const a = this.areas[i];
			const right = a.xpos + a.width, bottom = a.ypos + a.height;
			if (Math.abs(x - right) <= hs && Math.abs(y - bottom) <= hs) return [i, 'br'];
			if (Math.abs(x - a.xpos) <= hs && Math.abs(y - a.ypos) <= hs) return [i, 'tl'];
			if (x >= a.xpos && x <= right && y >= a.ypos && y <= bottom) return [i, 'move'];
		}
		return [-1, 'new'];
	}

	clamp(a) {
		const W = this.canvas.width, H = this.canvas.height;
		a.width = Math.max(MIN, Math.min(a.width, W));
		a.height = Math.max(MIN, Math.min(a.height, H));
		a.xpos = Math.max(0, Math.min(a.xpos, W - a.width));
		a.ypos = Math.max(0, Math.min(a.ypos, H - a.height));
	}

	down(e) {
		if (e.button !== 0) return;
		e.preventDefault();
		const [x, y, scale] = this.at(e);
		let [i, mode] = this.hit(x, y, scale);
		if (i >= 0 && e.shiftKey && mode === 'move') {
			// Shift+click inside an area: its click point.
			const a = this.areas[i];
			a.click_point = { xpos: Math.max(1, x - a.xpos), ypos: Math.max(1, y - a.ypos) };
			this.select(i);
			this.hooks.onchange(true);
			return;
		}
		if (i < 0) {
			this.areas.push({ xpos: x, ypos: y, width: MIN, height: MIN, type: this.hooks.newType() });
			i = this.areas.length - 1;
			mode = 'br';
			this.clamp(this.areas[i]);
		}
		const a = this.areas[i];
		this.drag = { i, mode, x0: x, y0: y, a0: { ...a } };
		this.select(i);
	}

	move(e) {
		if (!this.drag) return;
		const [x, y] = this.at(e);
		const d = this.drag, a = this.areas[d.i], a0 = d.a0, dx = x - d.x0, dy = y - d.y0;
		if (d.mode === 'move') {
			a.xpos = a0.xpos + dx;
			a.ypos = a0.ypos + dy;
		} else if (d.mode === 'br') {
			a.width = a0.width + dx;
			a.height = a0.height + dy;
		} else {
			a.xpos = Math.min(a0.xpos + dx, a0.xpos + a0.width - MIN);
			a.ypos = Math.min(a0.ypos + dy, a0.ypos + a0.height - MIN);
			a.width = a0.width - (a.xpos - a0.xpos);
			a.height = a0.height - (a.ypos - a0.ypos);
		}
		this.clamp(a);
		if (a.click_point && typeof a.click_point === 'object') {
			a.click_point.xpos = Math.min(a.click_point.xpos, a.width);
			a.click_point.ypos = Math.min(a.click_point.ypos, a.height);
		}
		this.draw();
		this.hooks.onchange(false);
	}

	up() {
		if (!this.drag) return;
		this.drag = null;
		this.draw();
		this.hooks.onchange(true);
	}

	select(i) {
		this.selected = i;
		this.draw();
		this.hooks.onselect(i);
	}

	setAreas(areas) {
		this.areas = areas;
		this.selected = areas.length ? 0 : -1;
		this.result = null;
		this.draw();
	}

	setResult(result) {
		this.result = result;
		this.draw();
	}

	draw() {
		const c = this.canvas.getContext('2d'), W = this.canvas.width;
		const lw = Math.max(1, Math.round(W / 700));
		c.drawImage(this.img, 0, 0);
		this.areas.forEach((a, i) => {
			const [fill, line] = COLOURS[a.type] || COLOURS.match;
			c.fillStyle = fill;
			c.fillRect(a.xpos, a.ypos, a.width, a.height);
			c.strokeStyle = line;
			c.lineWidth = i === this.selected ? 3 * lw : lw;
			c.setLineDash([]);
			c.strokeRect(a.xpos + .5, a.ypos + .5, a.width - 1, a.height - 1);
			if (i === this.selected) {
				c.fillStyle = line;
				const hs = HANDLE * (this.canvas.width / (this.canvas.getBoundingClientRect().width || W));
				c.fillRect(a.xpos - hs / 2, a.ypos - hs / 2, hs, hs);
				c.fillRect(a.xpos + a.width - hs / 2, a.ypos + a.height - hs / 2, hs, hs);
			}
			const cp = a.click_point;
			if (cp) {
				const px = a.xpos + (cp === 'center' ? a.width / 2 : cp.xpos), py = a.ypos + (cp === 'center' ? a.height / 2 : cp.ypos);
				c.strokeStyle = 'rgb(0, 90, 255)';
				c.lineWidth = 2 * lw;
				c.beginPath();
				c.arc(px, py, 6 * lw, 0, 2 * Math.PI);
				c.moveTo(px - 10 * lw, py);
				c.lineTo(px + 10 * lw, py);
				c.moveTo(px, py - 10 * lw);
				c.lineTo(px, py + 10 * lw);
				c.stroke();
			}
		});
		// Where the server found each match area, and how well.
		for (const r of (this.result && this.result.areas) || []) {
			c.strokeStyle = r.result === 'ok' ? 'rgb(0, 110, 255)' : 'rgb(255, 0, 200)';
			c.lineWidth = 2 * lw;
			c.setLineDash([6 * lw, 4 * lw]);
			c.strokeRect(r.x + .5, r.y + .5, r.w - 1, r.h - 1);
			c.setLineDash([]);
			const label = `${r.similarity.toFixed(1)}%`;
			c.font = `${12 * lw}px sans-serif`;
			const tw = c.measureText(label).width + 6 * lw;
			const ly = r.y >= 16 * lw ? r.y - 16 * lw : r.y + r.h;
			c.fillStyle = 'rgba(0, 0, 0, .75)';
			c.fillRect(r.x, ly, tw, 16 * lw);
			c.fillStyle = '#fff';
			c.fillText(label, r.x + 3 * lw, ly + 12 * lw);
		}
	}
}
