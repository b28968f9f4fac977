// The playground page: controls, plots, and the worker that trains.
//
// The URL holds every setting (?task=lagk&len=16&lag=4&T=20&bias=at5&init=paper&heads=4
// &lr=0.005&epochs=20&seed=1): the page writes it as each run starts, and opening it restores
// them, so a run is a link. Test hooks: train=1 starts training on load; report=PATH posts the
// page's state as JSON to PATH when the run ends (or {error} if it fails); hold=PATH loads PATH
// as an image, which a test's server answers once the report is in, so the page's load event
// (and a headless browser's screenshot) waits for the run; window.playground.trap() makes the
// worker's WebAssembly module trap. The state is also written into <pre id="state"> after
// every change (playground/test.sh reads both).
'use strict';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];
// The settings a run is made of: what the URL holds.
const SETTINGS = ['task', 'len', 'lag', 'T', 'bias', 'init', 'heads', 'lr', 'epochs', 'seed'];
const SVGNS = 'http://www.w3.org/2000/svg';
const MAX_EPOCHS = 1000;

// The limits a setting must keep, checked in the page before a run is built: each keeps a run
// buildable, and the sizes keep an epoch at seconds in a browser tab. A refusal shows the
// reason for the bound it breaks (`low` or `high`) beside the field.
const LIMITS = {
  len: { name: 'L', min: 5, max: 128,
    low: '6,000 distinct sequences of 8 symbols need 5 slots',
    high: 'attention costs L² per example: at 128 an epoch takes seconds here' },
  // k's upper end is L − 1 once L is within its own limits.
  lag: { name: 'k', min: 1, max: () => (checkWhole('len') ? NaN : Number($('len').value) - 1),
    low: 'the answer is a token before the last one', high: 'the answer is k slots before the last of L' },
  T: { name: 'T', min: 10, max: 128,
    low: 'the first marked number is drawn from the first 10 slots',
    high: 'attention costs T² per example: at 128 an epoch takes seconds here' },
  epochs: { name: 'epochs', min: 1, max: MAX_EPOCHS,
    low: 'a run trains at least one', high: 'a run here should take minutes, not hours' },
  seed: { name: 'seed', min: 0, max: 4294967295,
    low: 'seeds are whole numbers from 0', high: 'the page writes seeds of 32 bits' },
  moreN: { name: 'Train more', min: 1, max: MAX_EPOCHS,
    low: 'the epochs to add', high: `a run holds at most ${MAX_EPOCHS} epochs` },
};
const CHOICES = {
  task: ['lag-k recall or Adding-T', ['lagk', 'adding']],
  bias: ['at5, t5, t5-nob, alibi or none', ['at5', 't5', 't5-nob', 'alibi', 'none']],
  init: ['paper or alive', ['paper', 'alive']],
  heads: ['1, 2, 4 or 8 (they split the model width D = 32)', ['1', '2', '4', '8']],
};

let worker = null;
let workerBroken = false; // the worker failed outside a run: the next run starts a new one
let workers = 0;          // workers started (a trap replaces one)
let traps = 0;
let runId = 0;            // the current run; messages of any other are dropped
let workerRun = null;     // the run the worker was last told to build
let info = null;          // the run's shape (Playground.info)
let view = null;          // the model now (Playground.view)
let records = [];         // the epoch records
let times = [];           // ms per epoch, measured in the worker
let slopes = [];          // [{epoch, alpha, beta}] from initialisation on
let stepNow = null;       // {done, total, loss} of the epoch in progress
let running = false;
let building = false;
let refused = [];         // [{field, message}] of the settings last refused
let notice = '';          // what the page did on its own (a worker restarted)
let autostart = params.get('train') === '1';
let startPending = false;
let example = Number(params.get('example') || 0);
let started = 0;
let reported = false;
let headChosen = params.has('head'); // else the heat maps follow the head with the sharpest prior

for (const f of SETTINGS) if (params.has(f)) $(f).value = params.get(f);
if (params.has('hold')) new Image().src = params.get('hold');

// ---- the worker ---------------------------------------------------------------------------

function startWorker() {
  if (worker) worker.terminate();
  worker = new Worker('worker.js');
  worker.onmessage = onMessage;
  // An error outside the worker's own handling (its script failed to load): say so; the next
  // run starts a fresh worker.
  worker.onerror = (e) => {
    e.preventDefault();
    workerBroken = true;
    building = running = false;
    showError(`the training worker failed: ${e.message || 'no message'}; press New run to start another`);
    updateState();
  };
  workers += 1;
  workerBroken = false;
  workerRun = null;
}

function send(type, extra) {
  worker.postMessage({ run: runId, type, ...extra });
}

// The run's flags, exactly as the native `train` binary takes them.
function flags() {
  const task = $('task').value;
  const f = ['--task', task];
  if (task === 'lagk') f.push('--seq-len', num('len'), '--lag', num('lag'));
  else f.push('--seq-len', num('T'));
  f.push('--bias', $('bias').value);
  // AT5's MLP start (docs/why-at5-starts-flat.md); the paper's is the default, so it adds no flag.
  if ($('bias').value === 'at5' && $('init').value !== 'paper') f.push('--at5-init', $('init').value);
  f.push('--heads', $('heads').value, '--lr', String(Number($('lr').value)),
    '--epochs', num('epochs'), '--seed', num('seed'));
  return f;
}

// A checked whole-number field as the flag writes it ("1e2" is 100).
const num = (id) => String(Number($(id).value.trim()));

// ---- checking the settings ----------------------------------------------------------------

// A whole-number field against its limits: null, or [what is wrong, why].
function checkWhole(id) {
  const lim = LIMITS[id];
  const input = $(id);
  const raw = input.value.trim();
  const x = Number(raw);
  const max = typeof lim.max === 'function' ? lim.max() : lim.max;
  const range = Number.isInteger(max) && max >= lim.min ? ` from ${lim.min} to ${max}` : '';
  if (input.validity.badInput || raw === '' || !Number.isFinite(x) || !Number.isInteger(x)) {
    return [`${lim.name} must be a whole number${range}`, ''];
  }
  if (x < lim.min) return [`${lim.name} must be ≥ ${lim.min}`, lim.low];
  if (Number.isInteger(max) && x > max) return [`${lim.name} must be ≤ ${max}`, lim.high];
  return null;
}

function checkChoice(id) {
  const [words, values] = CHOICES[id];
  return values.includes($(id).value) ? null : [`${id} must be ${words}`, ''];
}

// Every setting of the run the fields describe: [{field, message, why}], empty when it can be
// built.
function check() {
  const bad = [];
  const add = (field, found) => { if (found) bad.push({ field, message: found[0], why: found[1] }); };
  add('task', checkChoice('task'));
  if ($('task').value === 'lagk') {
    add('len', checkWhole('len'));
    add('lag', checkWhole('lag'));
  } else if ($('task').value === 'adding') {
    add('T', checkWhole('T'));
  }
  add('bias', checkChoice('bias'));
  if ($('bias').value === 'at5') add('init', checkChoice('init'));
  add('heads', checkChoice('heads'));
  const lr = Number($('lr').value.trim());
  if ($('lr').validity.badInput || $('lr').value.trim() === '' || !Number.isFinite(lr)) add('lr', ['lr must be a number, 0 < lr ≤ 1', '']);
  else if (!(lr > 0)) add('lr', ['lr must be > 0', "Adam's step size"]);
  else if (lr > 1) add('lr', ['lr must be ≤ 1', 'above 1 the loss diverges']);
  add('epochs', checkWhole('epochs'));
  add('seed', checkWhole('seed'));
  return bad;
}

// Marks the fields in `bad` (and only those) and writes each one's reason beside it.
function mark(bad, fields) {
  for (const id of fields) {
    const input = $(id);
    const b = bad.find((x) => x.field === id);
    input.classList.toggle('invalid', !!b);
    input.setAttribute('aria-invalid', b ? 'true' : 'false');
    let why = input.parentElement.querySelector('.why');
    if (!why) {
      why = document.createElement('span');
      why.className = 'why';
      input.parentElement.appendChild(why);
    }
    why.textContent = b ? (b.why ? `${b.message}: ${b.why}` : b.message) : '';
  }
}

// Writes each limit beside its field (and its reason as the field's tooltip), so they are
// stated where they are typed.
function showLimits() {
  for (const [id, lim] of Object.entries(LIMITS)) {
    const input = $(id);
    input.parentElement.title = `${lim.name} ≥ ${lim.min}: ${lim.low}; ` +
      (typeof lim.max === 'function' ? `k ≤ L − 1: ${lim.high}` : `${lim.name} ≤ ${lim.max}: ${lim.high}`);
    input.min = lim.min;
    if (typeof lim.max !== 'function') input.max = lim.max;
    const hint = document.createElement('small');
    hint.className = 'range';
    hint.textContent = typeof lim.max === 'function' ? `${lim.min}–L−1` : `${lim.min}–${lim.max}`;
    if (id === 'seed') hint.textContent = '≥ 0';
    input.after(hint);
  }
  $('lr').parentElement.title = "Adam's step size: 0 < lr ≤ 1 (above 1 the loss diverges)";
}

// ---- runs ---------------------------------------------------------------------------------

function clearRun() {
  info = null;
  view = null;
  records = [];
  times = [];
  slopes = [];
  stepNow = null;
  running = false;
  building = false;
  started = 0;
  reported = false;
  $('command').textContent = '';
}

// A new run of the settings in the fields, or a refusal that names what is wrong.
function reset(why) {
  runId += 1;
  clearRun();
  notice = why || '';
  const bad = check();
  refused = bad;
  mark(bad, SETTINGS);
  const go = autostart;
  autostart = false;
  if (bad.length) {
    // The old run is dropped too: nothing of it stays on screen or trains on.
    if (worker && workerRun !== null) worker.postMessage({ run: workerRun, type: 'drop' });
    workerRun = null;
    showError(bad.map((b) => b.message).join('; '));
    report(JSON.stringify({ error: bad.map((b) => b.message).join('; ') }));
    drawAll();
    return;
  }
  showError('');
  if (!worker || workerBroken) startWorker();
  building = true;
  startPending = go;
  writeURL();
  workerRun = runId;
  send('init', { flags: flags(), example });
  drawAll();
}

// The settings into the address bar, so the link reproduces the run.
function writeURL() {
  const q = new URLSearchParams();
  for (const f of SETTINGS) q.set(f, $(f).value.trim());
  window.history.replaceState(null, '', `${location.pathname}?${q}`);
}

function showError(text) {
  $('error').textContent = text;
}

function trapped(m) {
  traps += 1;
  const at = m.building ? 'while building the run' : records.length ? `after epoch ${records.length}` : 'at initialisation';
  const what = `The training module trapped ${at} (${m.message}), most likely out of memory; the page restarted its worker`;
  startWorker();
  if (m.building) {
    // These settings trap as they are built: building them again would trap again.
    runId += 1;
    clearRun();
    notice = `${what}. Change a setting or press New run.`;
    drawAll();
  } else {
    reset(`${what} and built a fresh run of these settings.`);
  }
}

function onMessage(ev) {
  const m = ev.data;
  // A trap ends the worker whichever run it was on.
  if (m.type === 'trap') {
    trapped(m);
    updateState();
    return;
  }
  if (m.run !== runId) return;
  switch (m.type) {
    case 'info':
      building = false;
      info = m.info;
      view = m.view;
      if (view.alpha) slopes.push({ epoch: 0, alpha: view.alpha, beta: view.beta });
      fillHeads();
      drawAll();
      if (startPending) {
        startPending = false;
        train();
      }
      break;
    case 'budget':
      info = m.info;
      $('epochs').value = info.epochs;
      writeURL();
      drawAll();
      break;
    case 'progress':
      stepNow = m;
      drawStatus();
      break;
    case 'epoch':
      view = m.view;
      stepNow = null;
      records.push(view.record);
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
      running = m.running;
      setButtons();
      break;
    case 'error':
      building = false;
      showError(m.message);
      report(JSON.stringify({ error: m.message }));
      drawAll();
      break;
  }
  updateState();
}

function train() {
  if (!info) return;
  if (!started) started = performance.now();
  send('train');
}

// The page's state as JSON: what the test reads.
function state() {
  const settings = {};
  for (const f of SETTINGS) settings[f] = $(f).value;
  return {
    run: runId, info, history: records, times, prior: view && view.prior,
    alpha: view && view.alpha, beta: view && view.beta,
    seconds: times.reduce((a, b) => a + b, 0) / 1000,
    wall_seconds: started ? (performance.now() - started) / 1000 : null,
    running, building, refused, notice, traps, workers, settings,
    url: location.search, command: $('command').textContent, status: $('epoch').textContent,
    progress: $('progress').value, timing: $('timing').textContent, shown_error: $('error').textContent,
    invalid: [...document.querySelectorAll('.invalid')].map((e) => e.id),
    drawn: ['prior', 'curves', 'slopes', 'maps'].reduce((n, id) => n + $(id).querySelectorAll('polyline, image').length, 0),
  };
}

function updateState() {
  $('state').textContent = JSON.stringify(state());
}

function finished() {
  updateState();
  report($('state').textContent);
}

function report(s) {
  const to = params.get('report');
  if (to && !reported) {
    reported = true;
    fetch(to, { method: 'POST', body: s, headers: { 'Content-Type': 'application/json' } });
  }
}

// ---- controls -----------------------------------------------------------------------------

function showTask() {
  const lagk = $('task').value !== 'adding';
  for (const el of document.querySelectorAll('.lagk')) el.hidden = !lagk;
  for (const el of document.querySelectorAll('.adding')) el.hidden = lagk;
  for (const el of document.querySelectorAll('.at5')) el.hidden = $('bias').value !== 'at5';
}

function setButtons() {
  const done = info && records.length >= info.epochs;
  const idle = !!info && !running && !building;
  $('train').disabled = !idle || done;
  $('step').disabled = !idle || done;
  $('pause').disabled = !running;
  $('more').disabled = !idle;
  $('copy').disabled = !info;
  $('copylink').disabled = !info;
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

// Train more: the run's budget grows by N epochs and training goes on; the native command
// becomes the one with the new total, which reproduces the longer run.
function trainMore() {
  if (!info) return;
  let found = checkWhole('moreN');
  const total = info.epochs + Number($('moreN').value);
  if (!found && total > MAX_EPOCHS) found = [`Train more ${$('moreN').value} would make ${total} epochs`, LIMITS.moreN.high];
  mark(found ? [{ field: 'moreN', message: found[0], why: found[1] }] : [], ['moreN']);
  if (found) {
    showError(found[0]);
    updateState();
    return;
  }
  showError('');
  if (!started) started = performance.now();
  send('epochs', { epochs: total, train: true });
}

// A new budget typed into `epochs` keeps the run when it can: at least the epochs trained
// (raising it is Train more; lowering it ends the run sooner). Otherwise a new run.
function epochsChanged() {
  const bad = check();
  if (info && !bad.length && refused.length === 0 && Number(num('epochs')) >= Math.max(1, records.length)) {
    mark([], SETTINGS);
    send('epochs', { epochs: Number(num('epochs')), train: running });
  } else {
    reset();
  }
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    // No clipboard API (an insecure context): select the text and copy it the old way.
    const t = document.createElement('textarea');
    t.value = text;
    document.body.appendChild(t);
    t.select();
    document.execCommand('copy');
    t.remove();
  }
  const old = button.textContent;
  button.textContent = 'copied';
  setTimeout(() => { button.textContent = old; }, 1200);
}

// A task switch resets the learning rate: Adding at its quick preset's 3e-3, lag-k at 5e-3
// (faster than the preset's 2e-3; the answer comes in about 15 epochs).
$('task').addEventListener('change', () => {
  $('lr').value = $('task').value === 'adding' ? '0.003' : '0.005';
  showTask();
  reset();
});
for (const f of ['len', 'lag', 'T', 'bias', 'init', 'heads', 'lr', 'seed']) $(f).addEventListener('change', () => reset());
$('epochs').addEventListener('change', epochsChanged);
$('bias').addEventListener('change', showTask);
$('reset').addEventListener('click', () => reset());
$('train').addEventListener('click', train);
$('pause').addEventListener('click', () => send('pause'));
$('step').addEventListener('click', () => { if (!started) started = performance.now(); send('step'); });
$('more').addEventListener('click', trainMore);
$('copy').addEventListener('click', () => copy($('command').textContent, $('copy')));
$('copylink').addEventListener('click', () => copy(location.href, $('copylink')));
$('head').addEventListener('change', () => { headChosen = true; drawMaps(); });
$('prev').addEventListener('click', () => { example = Math.max(0, example - 1); if (info) send('example', { index: example }); });
$('next').addEventListener('click', () => { example += 1; if (info) send('example', { index: example }); });

// The test hooks (see the top of this file).
window.playground = {
  state,
  trap: () => send('trap'),
};

// ---- drawing: status ----------------------------------------------------------------------

function drawStatus() {
  const E = info ? info.epochs : 0;
  const e = records.length;
  let text;
  if (building) text = 'building the run…';
  else if (!info) text = refused.length ? 'no run: fix the field marked in red' : 'no run';
  else if (stepNow) {
    text = `epoch ${e + 1}/${E}, step ${stepNow.done}/${stepNow.total}, loss ${stepNow.loss.toFixed(4)}`;
  } else if (e === 0) {
    text = `epoch 0/${E} (initialisation): ${info.task}, ${info.family}, ${info.heads} heads`;
  } else {
    const last = records[e - 1];
    text = `epoch ${e}/${E}: train loss ${last.train_loss.toFixed(4)}, dev accuracy ${(100 * last.dev.accuracy).toFixed(1)} %`;
    if (e >= E) text += ' (finished: Train more goes on)';
  }
  $('epoch').textContent = text;
  // One bar over the whole run: epochs done plus the share of this one.
  const part = stepNow ? stepNow.done / stepNow.total : 0;
  $('progress').value = E ? Math.min(1, (e + part) / E) : 0;
  if (times.length) {
    const total = times.reduce((a, b) => a + b, 0) / 1000;
    $('timing').textContent = `${(total / times.length).toFixed(2)} s/epoch (mean of ${times.length}), ${total.toFixed(1)} s in all`;
  } else {
    $('timing').textContent = '';
  }
  $('command').textContent = info ? info.command : '';
  $('notice').textContent = notice;
}

function drawAll() {
  showTask();
  drawStatus();
  if (!info || !view) {
    const note = building ? 'building the run…' : refused.length ? `no run: ${refused[0].message}` : 'no run';
    for (const id of ['prior', 'curves', 'slopes']) {
      const svg = $(id);
      svg.innerHTML = '';
      svg.appendChild(el('text', { x: 320, y: 150, 'text-anchor': 'middle', class: 'note' }, note));
    }
    $('maps').innerHTML = '';
    $('example').textContent = '';
    $('slopes-figure').classList.remove('inactive');
  } else {
    drawPrior();
    drawCurves();
    drawSlopes();
    drawMaps();
  }
  setButtons();
}

// ---- SVG helpers --------------------------------------------------------------------------

function el(name, attrs, text) {
  const e = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// Text widths in SVG units (the plots' fonts are set in px of the viewBox).
const measurer = document.createElement('canvas').getContext('2d');
function textWidth(text, size) {
  measurer.font = `${size || 11}px system-ui, sans-serif`;
  return measurer.measureText(text).width;
}

// Legend items [label, colour, dash, box] (box: a swatch, not a line) laid out left to right above the plot, wrapping to a new
// row when the width is used up: it never sits on the data. Items with no colour are notes.
function legendRows(items, width) {
  const rows = [[]];
  let x = 0;
  for (const [label, color, dash, box] of items) {
    const w = (color ? 24 : 0) + textWidth(label) + 16;
    if (x + w > width && rows[rows.length - 1].length) {
      rows.push([]);
      x = 0;
    }
    rows[rows.length - 1].push({ label, color, dash, box, x });
    x += w;
  }
  return rows;
}

// A plotting frame: maps data to the SVG's box, draws axes with ticks and labels, the legend
// in rows above the plot and room for a row of labels (`labelRow`) between them.
function frame(svg, { x0, x1, y0, y1, xlabel, ylabel, ylog, y2, xint, legend, labelRow }) {
  svg.innerHTML = '';
  const W = 640, H = 300, L = 56, R = y2 ? 56 : 16, B = 40;
  const rows = legendRows(legend || [], W - L - R);
  const T = 8 + 15 * rows.length + (labelRow ? 16 : 2);
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
  g.appendChild(el('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'label',
    transform: `rotate(-90 14 ${(T + H - B) / 2})` }, ylabel));
  let sy2 = null;
  if (y2) {
    sy2 = (y) => H - B - ((y - y2.y0) / (y2.y1 - y2.y0)) * (H - T - B);
    for (const t of ticks(y2.y0, y2.y1, 5)) {
      g.appendChild(el('line', { x1: W - R, x2: W - R + 4, y1: sy2(t), y2: sy2(t) }));
      g.appendChild(el('text', { x: W - R + 7, y: sy2(t) + 4 }, fmt(t)));
    }
    g.appendChild(el('text', { x: W - 16, y: (T + H - B) / 2, 'text-anchor': 'middle', class: 'label',
      transform: `rotate(90 ${W - 16} ${(T + H - B) / 2})` }, y2.label));
  }
  // The legend outside the axes' group, whose style would grey its lines.
  const lg = el('g', { class: 'legendbox' });
  rows.forEach((row, r) => {
    const y = 12 + 15 * r;
    for (const it of row) {
      const x = L + it.x;
      if (it.box) {
        lg.appendChild(el('rect', { x, y: y - 9, width: 18, height: 10, fill: it.color }));
      } else if (it.color) {
        lg.appendChild(el('line', { x1: x, x2: x + 18, y1: y - 4, y2: y - 4, stroke: it.color, 'stroke-width': 2,
          'stroke-dasharray': it.dash || '' }));
      }
      lg.appendChild(el('text', { x: it.color ? x + 22 : x, y, class: 'legend' }, it.label));
    }
  });
  svg.appendChild(g);
  svg.appendChild(lg);
  return { sx, sy, sy2, L, R, T, B, W, H };
}

// Labels [{x, text, cls}] in one row at height y, in order of priority: each is centred on its
// x but kept inside [x0, x1]; one that would overlap a placed label tries its short form, and
// is left out if that overlaps too. So labels never collide or clip.
function placeLabels(svg, labels, x0, x1, y) {
  const placed = [];
  for (const l of labels) {
    for (const text of [l.text, l.short].filter(Boolean)) {
      const w = textWidth(text, l.size);
      const left = Math.min(Math.max(l.x - w / 2, x0), x1 - w);
      if (placed.every(([a, b]) => left + w + 4 <= a || left >= b + 4)) {
        placed.push([left, left + w]);
        svg.appendChild(el('text', { x: left, y, class: l.cls }, text));
        break;
      }
    }
  }
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

// Groups of curves (arrays of values) that lie on one another, within `tol` everywhere: the
// index of each curve's group's first curve. Such curves are drawn in turn as dashes of their
// colours, so every one stays visible.
function coincident(curves, tol) {
  const group = curves.map((_, i) => i);
  for (let i = 0; i < curves.length; i++) {
    for (let j = 0; j < i; j++) {
      if (group[j] === j && curves[i].every((y, k) => Math.abs(y - curves[j][k]) <= tol)) {
        group[i] = j;
        break;
      }
    }
  }
  return group;
}

function heads(list) {
  return list.length === 2 ? `heads ${list[0]} and ${list[1]}` : `heads ${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

// ---- the plots ----------------------------------------------------------------------------

function drawPrior() {
  const svg = $('prior');
  const q = info.query, len = info.len;
  const off = (j) => j - q;
  let ymax = 0;
  for (const row of view.prior) for (const p of row) ymax = Math.max(ymax, p);
  ymax = Math.max(ymax * 1.1, 2 / len);
  // Curves closer than a line's width (1.5 of the plot's some 200 units of height) hide one
  // another: they coincide.
  const group = coincident(view.prior, ymax / 130);
  const items = view.prior.map((_, h) => [`head ${h}`, COLORS[h % COLORS.length]]);
  items.push(['uniform 1/L', '#888', '4 3']);
  const members = (g) => group.map((x, h) => (x === g ? h : -1)).filter((h) => h >= 0);
  for (let g = 0; g < group.length; g++) {
    const m = members(g);
    if (group[g] === g && m.length > 1) items.push([`(${heads(m)} coincide)`]);
  }
  if (info.buckets) items.push(['T5 bucket', '#e6e6e6', '', 'box'], ['bucket shared by offsets', '#f7d9a8', '', 'box']);
  const f = frame(svg, { x0: off(0) - 0.5, x1: off(len - 1) + 0.5, y0: 0, y1: ymax, legend: items, labelRow: true,
    xlabel: 'offset n = j − i (key minus query position)', ylabel: 'prior softmax(b(n))' });
  const labels = [];
  if (info.buckets) {
    // T5's buckets under the curves: one band per bucket, merged buckets darker.
    let start = 0;
    let shade = 0;
    for (let j = 1; j <= len; j++) {
      if (j === len || info.buckets[j] !== info.buckets[start]) {
        const wide = j - start > 1;
        const a = f.sx(off(start) - 0.5), b = f.sx(off(j) - 0.5);
        svg.insertBefore(el('rect', { x: a, y: f.T, width: b - a, height: f.H - f.T - f.B,
          class: `bucket${wide ? ' wide' : ''}${shade % 2 ? ' odd' : ''}` }), svg.firstChild);
        if (wide) labels.push({ x: (a + b) / 2, text: `bucket ${info.buckets[start]}`, short: `${info.buckets[start]}`, cls: 'bucketlabel', size: 10 });
        shade++;
        start = j;
      }
    }
  }
  const k = info.task.startsWith('lag') ? Number($('lag').value) : null;
  if (k !== null && q - k >= 0) {
    svg.appendChild(el('line', { x1: f.sx(-k), x2: f.sx(-k), y1: f.T - 4, y2: f.H - f.B, class: 'answer' }));
    labels.unshift({ x: f.sx(-k), text: `answer at −${k}`, short: `−${k}`, cls: 'answerlabel' });
  }
  placeLabels(svg, labels, f.L, f.W - f.R, f.T - 6);
  svg.appendChild(el('line', { x1: f.L, x2: f.W - f.R, y1: f.sy(1 / len), y2: f.sy(1 / len), class: 'uniform' }));
  const pts = view.prior.map((row) => row.map((p, j) => [f.sx(off(j)), f.sy(p)]));
  view.prior.forEach((_, h) => {
    const c = COLORS[h % COLORS.length];
    const m = members(group[h]);
    const dash = m.length > 1 ? { 'stroke-dasharray': `6 ${6 * (m.length - 1)}`, 'stroke-dashoffset': -6 * m.indexOf(h) } : {};
    polyline(svg, pts[h], { stroke: c, 'stroke-width': 2, ...dash });
    if (len <= 40 && m.length === 1) for (const [x, y] of pts[h]) svg.appendChild(el('circle', { cx: x, cy: y, r: 2.2, fill: c }));
  });
}

function drawCurves() {
  const svg = $('curves');
  const E = info.epochs;
  const lmax = Math.max(0.1, ...records.map((r) => r.train_loss), ...records.map((r) => r.dev.loss));
  const f = frame(svg, { x0: 0, x1: E, y0: 0, y1: lmax * 1.05, xlabel: 'epoch', ylabel: 'loss', xint: true,
    y2: { y0: 0, y1: 1, label: 'dev accuracy' },
    legend: [['train loss', '#1f77b4'], ['dev loss', '#1f77b4', '5 3'], ['dev accuracy (right axis)', '#d62728']] });
  if (records.length) {
    polyline(svg, records.map((r) => [f.sx(r.epoch), f.sy(r.train_loss)]), { stroke: '#1f77b4', 'stroke-width': 2 });
    polyline(svg, records.map((r) => [f.sx(r.epoch), f.sy(r.dev.loss)]), { stroke: '#1f77b4', 'stroke-width': 1.5, 'stroke-dasharray': '5 3' });
    polyline(svg, records.map((r) => [f.sx(r.epoch), f.sy2(r.dev.accuracy)]), { stroke: '#d62728', 'stroke-width': 2 });
  }
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
  const items = [];
  for (let h = 0; h < info.heads; h++) items.push([`head ${h}`, COLORS[h % COLORS.length]]);
  items.push(['1/β (keys before)', '#444'], ['1/α (keys after)', '#444', '5 3']);
  const f = frame(svg, { x0: 0, x1: info.epochs, y0: lo, y1: hi, ylog: true, xint: true, xlabel: 'epoch',
    ylabel: 'saturation distance (log)', legend: items });
  const k = info.task.startsWith('lag') ? Number($('lag').value) : null;
  if (k) {
    svg.appendChild(el('line', { x1: f.L, x2: f.W - f.R, y1: f.sy(k), y2: f.sy(k), class: 'answer' }));
    svg.appendChild(el('text', { x: f.L + 4, y: f.sy(k) - 4, class: 'answerlabel' }, `k = ${k}`));
  }
  for (let h = 0; h < info.heads; h++) {
    const c = COLORS[h % COLORS.length];
    polyline(svg, slopes.map((s) => [f.sx(s.epoch), f.sy(inv(s.beta[h]))]), { stroke: c, 'stroke-width': 2 });
    polyline(svg, slopes.map((s) => [f.sx(s.epoch), f.sy(inv(s.alpha[h]))]), { stroke: c, 'stroke-width': 1.5, 'stroke-dasharray': '5 3' });
    // The latest values as dots: at initialisation they are all there is.
    const last = slopes[slopes.length - 1];
    for (const v of [last.alpha[h], last.beta[h]]) svg.appendChild(el('circle', { cx: f.sx(last.epoch), cy: f.sy(inv(v)), r: 2.5, fill: c }));
  }
}

// The colour of a probability: √p from white (0) to blue (1).
function shade(p) {
  const v = Math.sqrt(Math.max(0, Math.min(1, p)));
  return [Math.round(255 * (1 - v)), Math.round(255 - 150 * v), 255];
}

// An n × m grid of values as an image (one pixel a cell, scaled up without smoothing): a few
// thousand cells draw as fast as a few, whatever L.
function heatImage(rows) {
  const n = rows.length, m = rows[0].length;
  const canvas = document.createElement('canvas');
  canvas.width = m;
  canvas.height = n;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(m, n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      const [r, g, b] = shade(rows[i][j]);
      const o = 4 * (i * m + j);
      img.data[o] = r;
      img.data[o + 1] = g;
      img.data[o + 2] = b;
      img.data[o + 3] = 255;
    }
  }
  ctx.putImageData(img, 0, 0);
  return canvas.toDataURL();
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
  const svg = $('maps');
  svg.innerHTML = '';
  const n = info.len;
  // Three maps of S units with room for their axes, then the colour scale.
  const S = 176, ML = 40, GAP = 12, TOP = 20, BOTTOM = 36, BAR = 12;
  const W = 3 * (ML + S + GAP) + BAR + 64, H = TOP + S + BOTTOM;
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const cell = S / n;
  const at = (i) => (i + 0.5) * cell;
  const tickAt = ticks(0, n - 1, 5).filter((t) => Number.isInteger(t));
  maps.forEach(([title, m], k) => {
    const x0 = k * (ML + S + GAP) + ML;
    const g = el('g', { transform: `translate(${x0} ${TOP})` });
    g.appendChild(el('text', { x: S / 2, y: -7, 'text-anchor': 'middle', class: 'maptitle' }, title));
    g.appendChild(el('image', { href: heatImage(m), x: 0, y: 0, width: S, height: S, preserveAspectRatio: 'none', class: 'heat' }));
    g.appendChild(el('rect', { x: 0, y: 0, width: S, height: S, class: 'plotarea' }));
    g.appendChild(el('rect', { x: 0, y: info.query * cell, width: S, height: cell, class: 'pooled' }));
    const axes = el('g', { class: 'axes' });
    for (const t of tickAt) {
      axes.appendChild(el('line', { x1: at(t), x2: at(t), y1: S, y2: S + 4 }));
      axes.appendChild(el('text', { x: at(t), y: S + 14, 'text-anchor': 'middle' }, String(t)));
      axes.appendChild(el('line', { x1: -4, x2: 0, y1: at(t), y2: at(t) }));
      axes.appendChild(el('text', { x: -6, y: at(t) + 4, 'text-anchor': 'end' }, String(t)));
    }
    axes.appendChild(el('text', { x: S / 2, y: S + 30, 'text-anchor': 'middle', class: 'label' }, 'key j'));
    axes.appendChild(el('text', { x: -ML + 14, y: S / 2, 'text-anchor': 'middle', class: 'label',
      transform: `rotate(-90 ${-ML + 14} ${S / 2})` }, 'query i'));
    g.appendChild(axes);
    svg.appendChild(g);
  });
  // The colour scale: probability on a √ axis, as the cells are coloured.
  const bx = 3 * (ML + S + GAP) + 4;
  const bar = el('g', { transform: `translate(${bx} ${TOP})` });
  const steps = 64;
  bar.appendChild(el('image', { href: heatImage(Array.from({ length: steps }, (_, i) => [Math.pow(1 - (i + 0.5) / steps, 2)])),
    x: 0, y: 0, width: BAR, height: S, preserveAspectRatio: 'none', class: 'heat' }));
  bar.appendChild(el('rect', { x: 0, y: 0, width: BAR, height: S, class: 'plotarea' }));
  for (const p of [0, 0.05, 0.25, 0.5, 1]) {
    const y = S * (1 - Math.sqrt(p));
    bar.appendChild(el('line', { x1: BAR, x2: BAR + 4, y1: y, y2: y, class: 'tick' }));
    bar.appendChild(el('text', { x: BAR + 6, y: y + 4 }, String(p)));
  }
  bar.appendChild(el('text', { x: BAR / 2, y: -7, 'text-anchor': 'middle', class: 'maptitle' }, 'p'));
  bar.appendChild(el('text', { x: BAR + 40, y: S / 2, 'text-anchor': 'middle', class: 'label',
    transform: `rotate(90 ${BAR + 40} ${S / 2})` }, 'probability (√ scale)'));
  svg.appendChild(bar);
  $('example').textContent = `dev example ${ex.index} (head ${h}): input ${ex.input.join(' ')} → label ${ex.label}`;
}

// The head whose prior of the pooled query peaks highest.
function sharpestHead() {
  const peaks = view.prior.map((row) => Math.max(...row));
  return peaks.indexOf(Math.max(...peaks));
}

// ---- start --------------------------------------------------------------------------------

showLimits();
showTask();
startWorker();
reset();
