/* rank_chart.js - a member's rank over time, drawn as SVG by the page itself
 * (no chart library, no CDN), from a `history` reply (PROTOCOL v1.2:
 * { points: [{ at, seq, score, rank }, ...] }, one point every `step` ms from
 * `from` to `to`).
 *
 * Rank 1 is at the top. The rank holds between changes, so the line is a
 * staircase: flat to the next point, then up or down. A point with rank null
 * (the member was not on the board then) breaks the line. Every point with a
 * rank is a circle carrying data-at, data-seq, data-rank and data-score (and
 * a <title> for the pointer), so scripts and tests read exactly what was
 * drawn; the same points are listed in a table for screen readers.
 */

const NS = 'http://www.w3.org/2000/svg';
const W = 640;
const H = 220;
const PAD = { left: 44, right: 12, top: 14, bottom: 28 };

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text != null) e.textContent = text;
  return e;
}

function clock(ms) {
  return new Date(ms).toTimeString().slice(0, 8);
}

// The x and y of a point: time left to right over [from, to], rank 1 at the top.
export function rankChartScale(from, to, maxRank) {
  const w = W - PAD.left - PAD.right;
  const h = H - PAD.top - PAD.bottom;
  return {
    x: (at) => PAD.left + (to > from ? ((at - from) / (to - from)) * w : w / 2),
    y: (rank) => PAD.top + (maxRank > 1 ? ((rank - 1) / (maxRank - 1)) * h : h / 2),
  };
}

// Draws reply (a history reply; range = { from, to, step } as asked) into svg
// and fills table (a <table> with a <tbody>) with the same points.
export function rankChartDraw(svg, table, reply, range) {
  const pts = reply.points || [];
  const ranked = pts.filter((p) => p.rank != null);
  const maxRank = ranked.reduce((m, p) => Math.max(m, p.rank), 1);
  const { x, y } = rankChartScale(range.from, range.to, maxRank);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.dataset.from = String(range.from);
  svg.dataset.to = String(range.to);
  svg.dataset.step = String(range.step);
  svg.replaceChildren();

  // axes: rank 1 and the worst rank shown on the left, the span's ends below
  const grid = svgEl('g', { class: 'axes', 'aria-hidden': 'true' });
  const ranks = maxRank > 1 ? [1, maxRank] : [1];
  for (const r of ranks) {
    grid.append(svgEl('line', { x1: PAD.left, x2: W - PAD.right, y1: y(r), y2: y(r), class: 'grid' }));
    grid.append(svgEl('text', { x: PAD.left - 6, y: y(r) + 4, 'text-anchor': 'end' }, '#' + r));
  }
  grid.append(svgEl('text', { x: PAD.left, y: H - 8, 'text-anchor': 'start' }, clock(range.from)));
  grid.append(svgEl('text', { x: W - PAD.right, y: H - 8, 'text-anchor': 'end' }, clock(range.to)));
  svg.append(grid);

  // the staircase, broken where the member was off the board
  let d = '';
  let prev = null;
  for (const p of pts) {
    if (p.rank == null) { prev = null; continue; }
    d += prev == null ? `M${x(p.at).toFixed(1)},${y(p.rank).toFixed(1)}`
      : `H${x(p.at).toFixed(1)}V${y(p.rank).toFixed(1)}`;
    prev = p;
  }
  if (d) svg.append(svgEl('path', { d, class: 'line', 'aria-hidden': 'true' }));

  const dots = svgEl('g', { class: 'points' });
  for (const p of ranked) {
    const c = svgEl('circle', { cx: x(p.at).toFixed(1), cy: y(p.rank).toFixed(1), r: 3 });
    c.dataset.at = String(p.at);
    c.dataset.seq = String(p.seq);
    c.dataset.rank = String(p.rank);
    c.dataset.score = String(p.score);
    c.append(svgEl('title', null, `${clock(p.at)}: rank ${p.rank}, score ${p.score} (seq ${p.seq})`));
    dots.append(c);
  }
  svg.append(dots);

  const body = table.tBodies[0];
  body.replaceChildren(...pts.map((p) => {
    const tr = document.createElement('tr');
    for (const v of [clock(p.at), p.rank == null ? 'not on the board' : p.rank, p.score == null ? '' : p.score, p.seq]) {
      const td = document.createElement('td');
      td.textContent = String(v);
      tr.append(td);
    }
    return tr;
  }));

  if (!ranked.length) return 'not on the board in this span';
  const best = ranked.reduce((m, p) => Math.min(m, p.rank), Infinity);
  const last = pts[pts.length - 1];
  return `${pts.length} points; best rank ${best}, worst ${maxRank}` +
    (last.rank != null ? `, now ${last.rank}` : ', not on the board now');
}
