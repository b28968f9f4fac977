// The browser test's driver (served as /test/drive.js by serve.py, loaded by drive.html): loads
// the playground in a frame, uses its controls as a person would (typing into fields, pressing
// buttons) through the scenario named in ?scenario=, and posts what the page showed at each
// point to /report/SCENARIO for playground/check.py to judge. Until then it holds its own load
// event (an image from /wait/SCENARIO), so a headless browser's screenshot waits for it.
'use strict';

const scenario = new URLSearchParams(location.search).get('scenario');
new Image().src = `/wait/${scenario}`;
const frame = document.getElementById('page');
const errors = [];   // uncaught errors in the page
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Opens the page at `query` (a fresh page: a reload, which the scenarios otherwise never do).
function open(query) {
  return new Promise((resolve) => {
    frame.onload = () => {
      const w = frame.contentWindow;
      w.addEventListener('error', (e) => errors.push(String(e.message)));
      w.addEventListener('unhandledrejection', (e) => errors.push(String(e.reason)));
      resolve();
    };
    frame.src = `/playground/index.html?${query}`;
  });
}

const doc = () => frame.contentDocument;
// A copy: the page's own arrays go on changing.
const state = () => JSON.parse(JSON.stringify(frame.contentWindow.playground.state()));
const click = (id) => doc().getElementById(id).click();

// Types `value` into a field and leaves it, as a person does.
function type(id, value) {
  const input = doc().getElementById(id);
  input.value = value;
  input.dispatchEvent(new Event('change'));
}

async function until(what, ok, seconds = 120) {
  const end = Date.now() + 1000 * seconds;
  for (;;) {
    const s = state();
    if (ok(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; the page: ${s.status} ${s.shown_error}`);
    await sleep(15);
  }
}

const built = (s) => s.info !== null && !s.building;
const idle = (s) => built(s) && !s.running;
const epochs = (n) => (s) => idle(s) && s.history.length === n;
// Mid-epoch: the status line counts steps of an epoch in progress.
const midEpoch = (after) => (s) => s.running && s.history.length >= after && / step \d+\//.test(s.status);

// Waits for `seconds` more so that anything still in flight from an earlier run arrives.
async function settle(seconds = 1) {
  await sleep(1000 * seconds);
  return state();
}

// Every text in the page's plots as a box in its svg's coordinates: [svg id, text, box].
function textBoxes() {
  const out = [];
  for (const id of ['prior', 'curves', 'slopes', 'maps']) {
    const svg = doc().getElementById(id);
    const r = svg.getBoundingClientRect();
    const vb = svg.viewBox.baseVal;
    const k = vb.width / r.width;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent) continue;
      const b = t.getBoundingClientRect();
      out.push([id, t.textContent, [(b.left - r.left) * k, (b.top - r.top) * k, (b.right - r.left) * k, (b.bottom - r.top) * k],
        [vb.width, vb.height]]);
    }
  }
  return out;
}

const SCENARIOS = {
  // Sizes the page refuses, typed into the URL and into the fields: refused in the page's words,
  // the field marked, nothing of an earlier run left on screen, and no trap.
  async refuse(out) {
    await open('task=lagk&len=100000&lag=4&bias=at5&heads=4&lr=0.005&epochs=3&seed=1&train=1');
    out.huge_url = await settle(1.5);
    type('len', '16');
    await until('the run to be built', built);
    click('step');
    out.trained = await until('epoch 1', epochs(1));
    type('len', '100000');
    out.huge = await settle(1.5);
    type('len', '');
    out.empty = state();
    type('len', 'abc');
    out.letters = state();
    type('len', '-5');
    out.negative = state();
    type('len', '16');
    type('lag', '16');
    out.lag = state();
    type('lag', '4');
    type('lr', '');
    out.lr = state();
    type('lr', '0.005');
    type('seed', '1.5');
    out.seed = state();
    type('seed', '1');
    await until('the run to be built again', built);
    click('step');
    out.after = await until('epoch 1 of the run built again', epochs(1));
  },

  // The module traps mid-run (forced through the page's test hook): the page restarts its
  // worker and builds a fresh run by itself, and that run trains as the first one did.
  async trap(out) {
    await open('task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=4&seed=1');
    await until('the run to be built', built);
    click('step');
    out.before = await until('epoch 1', epochs(1));
    frame.contentWindow.playground.trap();
    out.recovered = await until('a restarted worker with a fresh run', (s) => s.traps === 1 && idle(s), 60);
    click('step');
    out.stepped = await until('epoch 1 after the restart', epochs(1));
    click('train');
    out.finished = await until('the run to finish', epochs(4));
  },

  // New run pressed mid-epoch, a field changed mid-epoch and Pause mid-epoch: each run's
  // history holds its own epochs 1..n only.
  async midepoch(out) {
    await open('task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=30&seed=1');
    await until('the run to be built', built);
    click('train');
    out.first = await until('mid-epoch', midEpoch(2));
    click('reset');
    await until('the new run to be built', idle);
    click('step');
    await until('epoch 1 of the new run', epochs(1));
    click('step');
    await until('epoch 2 of the new run', epochs(2));
    out.new_run = await settle();
    click('train');
    await until('mid-epoch', midEpoch(3));
    type('seed', '2');
    await until('the changed run to be built', idle);
    click('step');
    await until('epoch 1 of the changed run', epochs(1));
    out.changed = await settle();
    click('train');
    await until('mid-epoch', midEpoch(2));
    click('pause');
    await until('the pause', (s) => !s.running);
    out.paused = await settle();
    click('step');
    out.paused_step = await until('one more epoch', epochs(out.paused.history.length + 1));
  },

  // A finished run trained on: by Train more (2 epochs) and by raising its epochs field.
  async more(out) {
    await open('task=lagk&len=16&lag=4&bias=at5&heads=4&lr=0.005&epochs=2&seed=3&train=1');
    out.first = await until('2 epochs', (s) => epochs(2)(s) && s.info.epochs === 2);
    type('moreN', '0');
    click('more');
    out.none_more = await settle(0.5);
    type('moreN', '2');
    click('more');
    out.more = await until('2 more epochs', (s) => epochs(4)(s) && s.info.epochs === 4);
    type('epochs', '5');
    await until('the budget of 5', (s) => idle(s) && s.info.epochs === 5);
    click('train');
    out.final = await until('epoch 5', epochs(5));
    // What check.py compares with native `train`.
    out.info = out.final.info;
    out.history = out.final.history;
  },

  // A run is a link: the settings go into the URL as the run starts, and opening the URL
  // restores them.
  async url(out) {
    out.query = 'task=lagk&len=20&lag=5&T=30&bias=t5&init=alive&heads=2&lr=0.01&epochs=3&seed=7';
    await open(out.query);
    out.opened = await until('the run to be built', idle);
    type('task', 'adding');
    type('T', '40');
    type('bias', 'at5');
    type('init', 'alive');
    type('seed', '9');
    out.changed = await until('the changed run to be built', idle);
    out.link = frame.contentWindow.location.href;
    out.copy_button = !doc().getElementById('copy').disabled;
    await open(out.link.split('?')[1]);
    out.reopened = await until('the linked run to be built', idle);
  },

  // Labels never overlap each other or leave their plot, at the sizes' ends and between.
  async labels(out) {
    out.cases = [];
    await open('task=lagk&len=16&lag=4&bias=t5&heads=8&lr=0.005&epochs=30&seed=1');
    await until('the run to be built', idle);
    for (const [task, len, lag, bias, heads] of [
      ['lagk', 5, 1, 't5', 8], ['lagk', 5, 4, 'at5', 1], ['lagk', 24, 8, 't5', 4], ['lagk', 64, 1, 't5', 8],
      ['lagk', 128, 1, 't5', 8], ['lagk', 128, 127, 't5', 8], ['lagk', 128, 60, 'at5', 8], ['lagk', 100, 9, 't5-nob', 2],
      ['adding', 10, 0, 't5', 8], ['adding', 128, 0, 'at5', 4]]) {
      const before = state().run;
      type('task', task);
      if (task === 'lagk') {
        type('len', String(len));
        type('lag', String(lag));
      } else {
        type('T', String(len));
      }
      type('bias', bias);
      type('heads', String(heads));
      const s = await until(`the run at L = ${len} to be built`, (x) => x.run > before && idle(x));
      out.cases.push({ task, len, lag, bias, heads, command: s.command, texts: textBoxes() });
    }
  },
};

(async () => {
  const out = { scenario };
  try {
    await SCENARIOS[scenario](out);
  } catch (e) {
    out.error = `${scenario}: ${e.message}`;
  }
  out.errors = errors;
  await fetch(`/report/${scenario}`, { method: 'POST', body: JSON.stringify(out), headers: { 'Content-Type': 'application/json' } });
})();
