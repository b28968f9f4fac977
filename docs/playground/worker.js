// The training worker: owns the run (the wasm Playground) so the page stays responsive.
//
// Every message in either direction carries `run`, the id the page gave the run: the worker
// acts only on messages of its current run (an 'init' makes its run current), and the page
// drops any message of another run, so an epoch in flight when the page starts a new run can
// never reach the new one.
// Messages in:  {run, type: 'init', flags, example} | 'train' | 'pause' | 'step'
//               | {run, type: 'epochs', epochs, train} (a new budget, at least the epochs
//                 trained; train: go on training)
//               | {run, type: 'example', index} | {run, type: 'drop'} (forget the run)
//               | {run, type: 'trap'} (a test hook: builds a run too large for the module,
//                 which traps the way an out-of-memory run does)
// Messages out: {run, type: 'info', info, view} | {run, type: 'budget', info}
//               | {run, type: 'epoch', view, ms, done}
//               | {run, type: 'progress', done, total, loss} | {run, type: 'view', view}
//               | {run, type: 'state', running} | {run, type: 'error', message}
//               | {run, type: 'trap', message, building} (the module trapped: it cannot be
//                 used again, and the page replaces this worker)
importScripts('pkg/at5.js');

let run = null;       // the wasm Playground
let id = null;        // its id
let running = false;
let trained = 0;      // its epochs trained
let example = 0;
let loopToken = 0;    // the live training loop's token: a pending loop with another stops
let looping = false;  // whether a loop is live (at most one is)
let panicked = '';    // a panic's message, reported with the trap that follows it
let trapped = false;

const post = (m) => postMessage({ run: id, ...m });

self.at5Progress = (done, total, loss) => {
  if (done % 4 === 0 || done === total) post({ type: 'progress', done, total, loss });
};
self.at5Panic = (message) => { panicked = message; };

const ready = wasm_bindgen('pkg/at5_bg.wasm');

// A trap (WebAssembly.RuntimeError: unreachable, out of memory, ...) leaves the module's memory
// in an unknown state: the worker says so and does nothing more.
function fail(e, building) {
  running = false;
  if (e instanceof WebAssembly.RuntimeError) {
    trapped = true;
    // A panic's message ends with its cause ("capacity overflow"); the location before it
    // means nothing to the page's reader.
    const cause = panicked.split('\n').pop();
    const message = `WebAssembly trap: ${e.message || e}` + (cause ? `, after a panic: ${cause}` : '');
    post({ type: 'trap', message, building });
    return;
  }
  post({ type: 'error', message: String(e && e.message ? e.message : e) });
  post({ type: 'state', running });
}

// One epoch, timed; returns whether the run can go on.
function epoch() {
  const t0 = performance.now();
  const view = JSON.parse(run.train_epoch(example));
  trained += 1;
  post({ type: 'epoch', view, ms: performance.now() - t0, done: run.done() });
  return !run.done();
}

// Epoch after epoch, yielding between them so a pause (or a new run) is heard.
function loop(token) {
  if (token !== loopToken) return;
  if (!running || !run || trapped) {
    looping = false;
    return;
  }
  try {
    if (run.done() || !epoch()) {
      running = false;
      looping = false;
      post({ type: 'state', running });
      return;
    }
  } catch (e) {
    looping = false;
    return fail(e, false);
  }
  setTimeout(() => loop(token), 0);
}

// Training on, by the live loop if one is pending (a Train right after a Pause), else a new one.
function train() {
  if (!run || running || run.done()) return;
  running = true;
  post({ type: 'state', running });
  if (!looping) {
    looping = true;
    const token = ++loopToken;
    setTimeout(() => loop(token), 0);
  }
}

// Forgets the run and stops its loop.
function drop() {
  running = false;
  looping = false;
  loopToken += 1;
  if (run) run.free();
  run = null;
}

onmessage = async (ev) => {
  const m = ev.data;
  try {
    await ready;
  } catch (e) {
    id = m.run;
    post({ type: 'error', message: 'the WebAssembly module did not load: ' + String(e && e.message ? e.message : e) });
    return;
  }
  if (trapped) return;
  if (m.type !== 'init' && m.type !== 'trap' && m.run !== id) return;
  try {
    switch (m.type) {
      case 'init':
        drop();
        id = m.run;
        trained = 0;
        example = m.example || 0;
        run = new wasm_bindgen.Playground(m.flags);
        post({ type: 'info', info: JSON.parse(run.info()), view: JSON.parse(run.view(example)) });
        post({ type: 'state', running });
        break;
      case 'trap':
        // Unchecked sizes: a model width of 40000 asks for more memory than a wasm32 module
        // can address.
        drop();
        id = m.run;
        new wasm_bindgen.Playground(['--task', 'lagk', '--seq-len', '16', '--lag', '4', '--d-model', '40000', '--heads', '1']);
        post({ type: 'error', message: 'the forced trap did not trap' });
        break;
      case 'train':
        train();
        break;
      case 'pause':
        running = false;
        post({ type: 'state', running });
        break;
      case 'step':
        if (run && !running && !run.done()) epoch();
        post({ type: 'state', running });
        break;
      case 'epochs':
        if (run) {
          // The page counts epochs as they arrive; one may be on its way.
          run.set_epochs(Math.max(m.epochs, trained));
          post({ type: 'budget', info: JSON.parse(run.info()) });
          if (m.train) train();
          else post({ type: 'state', running });
        }
        break;
      case 'example':
        example = m.index;
        if (run) post({ type: 'view', view: JSON.parse(run.view(example)) });
        break;
      case 'drop':
        drop();
        id = null;
        break;
    }
  } catch (e) {
    fail(e, m.type === 'init');
  }
};
