// The training worker: owns the run (the wasm Playground) so the page stays responsive.
// Messages in:  {type: 'init', flags, example} | {type: 'train'} | {type: 'pause'}
//               {type: 'step'} | {type: 'example', index}
// Messages out: {type: 'info', info, view} | {type: 'epoch', view, ms} | {type: 'progress', ...}
//               {type: 'state', running} | {type: 'error', message}
importScripts('pkg/at5.js');

let run = null;
let running = false;
let example = 0;

self.at5Progress = (done, total, loss) => {
  if (done % 4 === 0 || done === total) postMessage({ type: 'progress', done, total, loss });
};
self.at5Panic = (message) => postMessage({ type: 'error', message: 'panic: ' + message });

const ready = wasm_bindgen('pkg/at5_bg.wasm');

function fail(e) {
  running = false;
  postMessage({ type: 'error', message: String(e && e.message ? e.message : e) });
  postMessage({ type: 'state', running });
}

// One epoch, timed; returns whether the run can go on.
function epoch() {
  const t0 = performance.now();
  const view = JSON.parse(run.train_epoch(example));
  postMessage({ type: 'epoch', view, ms: performance.now() - t0, done: run.done() });
  return !run.done();
}

// Epoch after epoch, yielding between them so a pause (or a new run) is heard.
function loop() {
  if (!running || !run) return;
  try {
    if (!epoch()) {
      running = false;
      postMessage({ type: 'state', running });
      return;
    }
  } catch (e) {
    return fail(e);
  }
  setTimeout(loop, 0);
}

onmessage = async (ev) => {
  await ready;
  const m = ev.data;
  try {
    switch (m.type) {
      case 'init':
        running = false;
        if (run) run.free();
        run = null;
        example = m.example || 0;
        run = new wasm_bindgen.Playground(m.flags);
        postMessage({ type: 'info', info: JSON.parse(run.info()), view: JSON.parse(run.view(example)) });
        postMessage({ type: 'state', running });
        break;
      case 'train':
        if (run && !running && !run.done()) {
          running = true;
          postMessage({ type: 'state', running });
          setTimeout(loop, 0);
        }
        break;
      case 'pause':
        running = false;
        postMessage({ type: 'state', running });
        break;
      case 'step':
        if (run && !running && !run.done()) epoch();
        postMessage({ type: 'state', running });
        break;
      case 'example':
        example = m.index;
        if (run) postMessage({ type: 'view', view: JSON.parse(run.view(example)) });
        break;
    }
  } catch (e) {
    fail(e);
  }
};
