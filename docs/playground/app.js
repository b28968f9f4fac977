// The playground page: controls, plots, and the worker that trains.
//
// The URL can preset every control (?task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=20
// &seed=1); train=1 starts training on load; report=PATH posts the page's state as JSON to PATH
// when the run ends (or {error} if it fails); hold=PATH loads PATH as an image, which a test's
// server answers once the report is in, so the page's load event (and a headless browser's
// screenshot) waits for the run. playground/test.sh uses all three. The state is also written
// into <pre id="state">.
'use strict';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
const FIELDS = ['task', 'len', 'lag', 'T', 'bias', 'init', 'heads', 'lr', 'epochs', 'seed'];
const SVGNS = 'http://www.w3.org/2000/svg';

let info = null;      // the run's shape (Playground.info)
let view = null;      // the model now (Playground.view)
let history = [];     // the epoch records
let times = [];       // ms per epoch, measured in the worker
let slopes = [];      // [{epoch, alpha, beta}] from initialisation on
let running = false;
let example = Number(params.get('example') || 0);
let started = 0;
let reported = false;
let headChosen = params.has('head'); // else the heat maps follow the head with the sharpest prior

for (const f of FIELDS) if (params.has(f)) $(f).value = params.get(f);
if (params.has('hold')) new Image().src = params.get('hold');

const worker = new Worker('worker.js');

// The run's flags, exactly as the native `train` binary takes them.
function flags() {
  const task = $('task').value;
  const f = ['--task', task];
  if (task === 'lagk') f.push('--seq-len', $('len').value, '--lag', $('lag').value);
  else f.push('--seq-len', $('T').value);
  f.push('--bias', $('bias').value);
  // AT5's MLP start (docs/why-at5-starts-flat.md); the paper's is the default, so it adds no flag.
  if ($('bias').value === 'at5' && $('init').value !== 'paper') f.push('--at5-init', $('init').value);
  f.push('--heads', $('heads').value, '--lr', $('lr').value,
    '--epochs', $('epochs').value, '--seed', $('seed').value);
  return f;
}

function showInit() {
  for (const el of document.querySelectorAll('.at5')) el.hidden = $('bias').value !== 'at5';
}

function showTask() {
  const lagk = $('task').value === 'lagk';
  for (const el of document.querySelectorAll('.lagk')) el.hidden = !lagk;
  for (const el of document.querySelectorAll('.adding')) el.hidden = lagk;
}

function reset() {
  $('error').textContent = '';
  info = null;
  history = [];
  times = [];
  slopes = [];
  reported = false;
  worker.postMessage({ type: 'init', flags: flags(), example });
}

function setRunning(r) {
  running = r;
  const done = info && history.length >= info.epochs;
  $('train').disabled = running || !info || done;
  $('step').disabled = running || !info || done;
  $('pause').disabled = !running;
}

worker.onmessage = (ev) => {
  const m = ev.data;
  switch (m.type) {
    case 'info':
      info = m.info;
      view = m.view;
      if (view.alpha) slopes.push({ epoch: 0, alpha: view.alpha, beta: view.beta });
      $('command').textContent = info.command;
      fillHeads();
      drawAll();
      if (params.get('train') === '1' && history.length === 0) {
        started = performance.now();
        worker.postMessage({ type: 'train' });
      }
      break;
    case 'progress':
      $('progress').value = m.done / m.total;
      $('epoch').textContent = `epoch ${history.length + 1}/${info.epochs}, step ${m.done}/${m.total}, loss ${m.loss.toFixed(4)}`;
      break;
    case 'epoch':
      view = m.view;
      history.push(view.record);
      times.push(m.ms);
      if (view.alpha) slopes.push({ epoch: view.epoch, alpha: view.alpha, beta: view.beta });
      drawAll();
      if (m.done) finished();
      break;
    case 'view':
      view = m.view;
      drawMaps();
      break;
    case 'state':
      setRunning(m.running);
      break;
    case 'error':
      $('error').textContent = m.message;
      report(JSON.stringify({ error: m.message }));
      break;
  }
};

// The page's state as JSON: what the test reads.
function state() {
  return {
    info, history, times, prior: view.prior, alpha: view.alpha, beta: view.beta,
    seconds: times.reduce((a, b) => a + b, 0) / 1000,
    wall_seconds: started ? (performance.now() - started) / 1000 : null,
  };
}

function finished() {
  const s = JSON.stringify(state());
  $('state').textContent = s;
  report(s);
}

function report(s) {
  const to = params.get('report');
  if (to && !reported) {
    reported = true;
    fetch(to, { method: 'POST', body: s, headers: { 'Content-Type': 'application/json' } });
  }
}

function fillHeads() {
  const sel = $('head');
  const keep = Number(sel.value || 0);
  sel.innerHTML = '';
  for (let h = 0; h < info.heads; h++) {
    const o = document.createElement('option');
    o.value = h;
    o.textContent = h;
    sel.appendChild(o);
  }
  sel.value = String(Math.min(Number(params.get('head') || keep), info.heads - 1));
}

// The head whose prior of the pooled query peaks highest.
function sharpestHead() {
  const peaks = view.prior.map((row) => Math.max(...row));
  return peaks.indexOf(Math.max(...peaks));
}

function drawAll() {
  if (!info || !view) return;
  const e = history.length;
  const last = history[e - 1];
  $('epoch').textContent = e === 0
    ? `epoch 0/${info.epochs} (initialisation): ${info.task}, ${info.family}, ${info.heads} heads`
    : `epoch ${e}/${info.epochs}: train loss ${last.train_loss.toFixed(4)}, dev accuracy ${(100 * last.dev.accuracy).toFixed(1)} %`;
  $('progress').value = e === 0 ? 0 : 1;
  if (times.length) {
    const total = times.reduce((a, b) => a + b, 0) / 1000;
    $('timing').textContent = `${(times[times.length - 1] / 1000).toFixed(2)} s/epoch, ${total.toFixed(1)} s in all`;
  } else {
    $('timing').textContent = '';
  }
  drawPrior();
  drawCurves();
  drawSlopes();
  drawMaps();
  setRunning(running);
}

// ---- SVG helpers ----------------------------------------------------------------------------

function el(name, attrs, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// A plotting frame: maps data to the SVG's box, draws axes with ticks and labels.
function frame(svg, { x0, x1, y0, y1, xlabel, ylabel, ylog, y2, xint }) {
  svg.innerHTML = '';
  const W = 640, H = 300, L = 56, R = y2 ? 56 : 16, T = 14, B = 40;
  const ly = (v) => (ylog ? Math.log(v) : v);
  const sx = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
  const sy = (y) => H - B - ((ly(y) - ly(y0)) / (ly(y1) - ly(y0) || 1)) * (H - T - B);
  const g = el('g', { class: 'axes' });
  g.appendChild(el('rect', { x: L, y: T, width: W - L - R, height: H - T - B, class: 'plotarea' }));
  for (const t of ticks(x0, x1, 8).filter((t) => !xint || Number.isInteger(t))) {
    g.appendChild(el('line', { x1: sx(t), x2: sx(t), y1: H - B, y2: H - B + 4 }));
    g.appendChild(el('text', { x: sx(t), y: H - B + 16, 'text-anchor': 'middle' }, fmt(t)));
  }
  const yt = ylog ? logTicks(y0, y1) : ticks(y0, y1, 5);
  for (const t of yt) {
    g.appendChild(el('line', { x1: L - 4, x2: L, y1: sy(t), y2: sy(t) }));
    g.appendChild(el('text', { x: L - 7, y: sy(t) + 4, 'text-anchor': 'end' }, fmt(t)));
  }
  g.appendChild(el('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', class: 'label' }, xlabel));
  g.appendChild(el('text', { x: 12, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'label',
    transform: `rotate(-90 12 ${(T + H - B) / 2})` }, ylabel));
  let sy2 = null;
  if (y2) {
    sy2 = (y) => H - B - ((y - y2.y0) / (y2.y1 - y2.y0)) * (H - T - B);
    for (const t of ticks(y2.y0, y2.y1, 5)) {
      g.appendChild(el('line', { x1: W - R, x2: W - R + 4, y1: sy2(t), y2: sy2(t) }));
      g.appendChild(el('text', { x: W - R + 7, y: sy2(t) + 4 }, fmt(t)));
    }
    g.appendChild(el('text', { x: W - 10, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'label',
      transform: `rotate(90 ${W - 10} ${(T + H - B) / 2})` }, y2.label));
  }
  svg.appendChild(g);
  return { sx, sy, sy2, L, R, T, B, W, H };
}

function ticks(a, b, n) {
  const span = b - a;
  if (!(span > 0)) return [a];
  const step0 = span / n;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= step0);
  const out = [];
  for (let t = Math.ceil(a / step) * step; t <= b + 1e-9 * span; t += step) out.push(Math.round(t / step) * step);
  return out;
}

function logTicks(a, b) {
  const out = [];
  for (let e = Math.floor(Math.log10(a)); e <= Math.ceil(Math.log10(b)); e++) {
    for (const m of [1, 2, 5]) {
      const t = m * Math.pow(10, e);
      if (t >= a && t <= b) out.push(t);
    }
  }
  return out;
}

function fmt(t) {
  if (Math.abs(t) >= 1000 || (Math.abs(t) < 0.01 && t !== 0)) return t.toExponential(0);
  return String(Math.round(t * 1000) / 1000);
}

function polyline(svg, pts, attrs) {
  svg.appendChild(el('polyline', { points: pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' '), fill: 'none', ...attrs }));
}

function legend(svg, items, x, y) {
  items.forEach(([label, color, dash], i) => {
    const yy = y + 14 * i;
    svg.appendChild(el('line', { x1: x, x2: x + 18, y1: yy, y2: yy, stroke: color, 'stroke-width': 2, 'stroke-dasharray': dash || '' }));
    svg.appendChild(el('text', { x: x + 22, y: yy + 4, class: 'legend' }, label));
  });
}

// ---- the plots ------------------------------------------------------------------------------

function drawPrior() {
  const svg = $('prior');
  const q = info.query, len = info.len;
  const off = (j) => j - q;
  let ymax = 0;
  for (const row of view.prior) for (const p of row) ymax = Math.max(ymax, p);
  ymax = Math.max(ymax * 1.1, 2 / len);
  const f = frame(svg, { x0: off(0) - 0.5, x1: off(len - 1) + 0.5, y0: 0, y1: ymax,
    xlabel: 'offset n = j − i (key minus query position)', ylabel: 'prior softmax(b(n))' });
  if (info.buckets) {
    // T5's buckets under the curves: one band per bucket, merged buckets darker.
    let start = 0;
    let shade = 0;
    for (let j = 1; j <= len; j++) {
      if (j === len || info.buckets[j] !== info.buckets[start]) {
        const wide = j - start > 1;
        svg.insertBefore(el('rect', { x: f.sx(off(start) - 0.5), y: f.T, width: f.sx(off(j) - 0.5) - f.sx(off(start) - 0.5),
          height: f.H - f.T - f.B, class: wide ? 'bucket wide' : (shade % 2 ? 'bucket odd' : 'bucket') }), svg.lastChild);
        if (wide) {
          svg.appendChild(el('text', { x: (f.sx(off(start) - 0.5) + f.sx(off(j) - 0.5)) / 2, y: f.T + 12, 'text-anchor': 'middle', class: 'bucketlabel' },
            `bucket ${info.buckets[start]}`));
        }
        shade++;
        start = j;
      }
    }
  }
  const k = info.task.startsWith('lag') ? Number($('lag').value) : null;
  if (k !== null && q - k >= 0) {
    svg.appendChild(el('line', { x1: f.sx(-k), x2: f.sx(-k), y1: f.T, y2: f.H - f.B, class: 'answer' }));
    svg.appendChild(el('text', { x: f.sx(-k) + 4, y: f.T + 26, class: 'answerlabel' }, `answer at −${k}`));
  }
  svg.appendChild(el('line', { x1: f.L, x2: f.W - f.R, y1: f.sy(1 / len), y2: f.sy(1 / len), class: 'uniform' }));
  view.prior.forEach((row, h) => {
    const pts = row.map((p, j) => [f.sx(off(j)), f.sy(p)]);
    polyline(svg, pts, { stroke: COLORS[h % COLORS.length], 'stroke-width': 2 });
    for (const [x, y] of pts) svg.appendChild(el('circle', { cx: x, cy: y, r: 2.2, fill: COLORS[h % COLORS.length] }));
  });
  legend(svg, view.prior.map((_, h) => [`head ${h}`, COLORS[h % COLORS.length]]).concat([['uniform 1/L', '#888', '4 3']]), f.W - f.R - 96, f.T + 30);
}

function drawCurves() {
  const svg = $('curves');
  const E = info.epochs;
  const lmax = Math.max(0.1, ...history.map((r) => r.train_loss), ...history.map((r) => r.dev.loss));
  const f = frame(svg, { x0: 0, x1: E, y0: 0, y1: lmax * 1.05, xlabel: 'epoch', ylabel: 'loss', xint: true,
    y2: { y0: 0, y1: 1, label: 'dev accuracy' } });
  if (history.length) {
    polyline(svg, history.map((r) => [f.sx(r.epoch), f.sy(r.train_loss)]), { stroke: '#1f77b4', 'stroke-width': 2 });
    polyline(svg, history.map((r) => [f.sx(r.epoch), f.sy(r.dev.loss)]), { stroke: '#1f77b4', 'stroke-width': 1.5, 'stroke-dasharray': '5 3' });
    polyline(svg, history.map((r) => [f.sx(r.epoch), f.sy2(r.dev.accuracy)]), { stroke: '#d62728', 'stroke-width': 2 });
  }
  legend(svg, [['train loss', '#1f77b4'], ['dev loss', '#1f77b4', '5 3'], ['dev accuracy (right axis)', '#d62728']], f.W - f.R - 190, f.T + 14);
}

function drawSlopes() {
  const svg = $('slopes');
  $('slopes-figure').classList.toggle('inactive', !view.alpha);
  if (!view.alpha) {
    frame(svg, { x0: 0, x1: info.epochs, y0: 1, y1: 100, ylog: true, xint: true, xlabel: 'epoch', ylabel: 'saturation distance' });
    svg.appendChild(el('text', { x: 320, y: 150, 'text-anchor': 'middle', class: 'note' }, `${info.family} has no slopes: choose at5`));
    return;
  }
  const inv = (v) => 1 / Math.max(v, 1e-6);
  let lo = Infinity, hi = 0;
  for (const s of slopes) for (const v of s.alpha.concat(s.beta)) { lo = Math.min(lo, inv(v)); hi = Math.max(hi, inv(v)); }
  lo = Math.min(lo, 1) * 0.8;
  hi = Math.max(hi, info.len) * 1.25;
  const f = frame(svg, { x0: 0, x1: info.epochs, y0: lo, y1: hi, ylog: true, xint: true, xlabel: 'epoch', ylabel: 'saturation distance (log)' });
  const k = info.task.startsWith('lag') ? Number($('lag').value) : null;
  if (k) {
    svg.appendChild(el('line', { x1: f.L, x2: f.W - f.R, y1: f.sy(k), y2: f.sy(k), class: 'answer' }));
    svg.appendChild(el('text', { x: f.L + 4, y: f.sy(k) - 4, class: 'answerlabel' }, `k = ${k}`));
  }
  for (let h = 0; h < info.heads; h++) {
    const c = COLORS[h % COLORS.length];
    polyline(svg, slopes.map((s) => [f.sx(s.epoch), f.sy(inv(s.beta[h]))]), { stroke: c, 'stroke-width': 2 });
    polyline(svg, slopes.map((s) => [f.sx(s.epoch), f.sy(inv(s.alpha[h]))]), { stroke: c, 'stroke-width': 1.5, 'stroke-dasharray': '5 3' });
  }
  legend(svg, [['1/β (keys before)', '#444'], ['1/α (keys after)', '#444', '5 3']], f.W - f.R - 150, f.T + 14);
}

function drawMaps() {
  if (!view || !info) return;
  if (!headChosen) $('head').value = String(sharpestHead());
  const h = Math.min(Number($('head').value || 0), info.heads - 1);
  const ex = view.example;
  $('exindex').textContent = ex.index;
  const softmaxRows = (m, prior) => m.map((row, i) => {
    const real = row.map((_, j) => prior[i][j] > 0);
    const mx = Math.max(...row.filter((_, j) => real[j]));
    const e = row.map((v, j) => (real[j] ? Math.exp(v - mx) : 0));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / z);
  });
  const maps = [
    ['prior', ex.prior[h]],
    ['likelihood (content)', softmaxRows(ex.context[h], ex.prior[h])],
    ['posterior (attention)', ex.posterior[h]],
  ];
  const box = $('maps');
  box.innerHTML = '';
  const n = info.len;
  const cell = Math.max(3, Math.floor(200 / n));
  const size = cell * n;
  for (const [title, m] of maps) {
    const svg = el('svg', { viewBox: `0 0 ${size + 2} ${size + 22}`, width: size + 2, height: size + 22, class: 'map' });
    svg.appendChild(el('text', { x: size / 2, y: 12, 'text-anchor': 'middle', class: 'maptitle' }, title));
    const g = el('g', { transform: 'translate(1 18)' });
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const v = Math.sqrt(Math.max(0, Math.min(1, m[i][j])));
        const shade = Math.round(255 * (1 - v));
        g.appendChild(el('rect', { x: j * cell, y: i * cell, width: cell, height: cell,
          fill: `rgb(${shade},${Math.round(255 - 150 * v)},255)` }));
      }
    }
    g.appendChild(el('rect', { x: 0, y: info.query * cell, width: size, height: cell, class: 'pooled' }));
    svg.appendChild(g);
    box.appendChild(svg);
  }
  const p = document.createElement('p');
  p.className = 'example';
  p.textContent = `dev example ${ex.index}: input ${ex.input.join(' ')} → label ${ex.label}` +
    ` (colour: √probability; white 0, blue 1)`;
  box.appendChild(p);
}

// ---- controls -------------------------------------------------------------------------------

// A task switch resets the learning rate: Adding at its quick preset's 3e-3, lag-k at 5e-3
// (faster than the preset's 2e-3; the answer comes in about 15 epochs).
$('task').addEventListener('change', () => {
  $('lr').value = $('task').value === 'adding' ? '0.003' : '0.005';
  showTask();
  reset();
});
for (const f of ['len', 'lag', 'T', 'bias', 'init', 'heads', 'lr', 'epochs', 'seed']) $(f).addEventListener('change', reset);
$('bias').addEventListener('change', showInit);
showInit();
$('reset').addEventListener('click', reset);
$('train').addEventListener('click', () => { if (!started) started = performance.now(); worker.postMessage({ type: 'train' }); });
$('pause').addEventListener('click', () => worker.postMessage({ type: 'pause' }));
$('step').addEventListener('click', () => worker.postMessage({ type: 'step' }));
$('head').addEventListener('change', () => { headChosen = true; drawMaps(); });
$('prev').addEventListener('click', () => { example = Math.max(0, example - 1); worker.postMessage({ type: 'example', index: example }); });
$('next').addEventListener('click', () => { example += 1; worker.postMessage({ type: 'example', index: example }); });

showTask();
setRunning(false);
reset();
