// Loads a Chrome trace-event JSON file (pto's --swimlane output) in headless Chromium, driven
// over the DevTools protocol on a pipe (no WebSocket module needed), through a real viewer:
//   1. Chromium's built-in trace viewer (chrome://tracing, its tr.importer), when this Chromium
//      has it (debug WebUIs are switched on in the throwaway profile);
//   2. else speedscope's web app (npm package 'speedscope', dist/release) given the file through
//      its file input, as a user would open it.
// usage: node viewer.js CHROMIUM TRACE.json [SPEEDSCOPE_RELEASE_DIR]
// Prints one JSON line {viewer, tracks, tasks?, kernels?} and exits 0 when the viewer took the
// file and shows task events; 1 when it rejected it or shows none; 77 when no viewer could run.
'use strict';
const { spawn } = require('child_process');
const fs = require('fs');
const [, , chromium, file, speedscope] = process.argv;

const profile = fs.mkdtempSync('/tmp/pto-chromium-');
fs.writeFileSync(profile + '/Local State', JSON.stringify({ internal_only_uis_enabled: true }));
const proc = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--remote-debugging-pipe', '--allow-file-access-from-files', '--user-data-dir=' + profile,
  'about:blank'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let buf = Buffer.alloc(0), nextId = 1;
const waiting = new Map(), consoleLines = [];
proc.stdio[4].on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  for (let z; (z = buf.indexOf(0)) >= 0;) {
    const msg = JSON.parse(buf.subarray(0, z).toString());
    buf = buf.subarray(z + 1);
    if (msg.id && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    } else if (msg.method === 'Page.javascriptDialogOpening') {
      /* A viewer that refuses a file says so in an alert, which blocks the page: done. */
      finish(1, { ok: false, rejected: msg.params.message, exceptions: consoleLines });
    } else if (msg.method === 'Runtime.exceptionThrown') {
      consoleLines.push(JSON.stringify(msg.params).slice(0, 400));
    }
  }
});
proc.on('error', (e) => finish(77, { error: 'cannot start ' + chromium + ': ' + e.message }));
function send(method, params = {}, sessionId) {
  const id = nextId++;
  proc.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((res) => waiting.set(id, res));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let finished = false;
function finish(code, result) {
  if (finished) return;
  finished = true;
  console.log(JSON.stringify(result));
  proc.kill('SIGKILL');
  proc.on('exit', () => {
    try { fs.rmSync(profile, { recursive: true, force: true }); } catch (e) { /* best effort */ }
    process.exit(code);
  });
  setTimeout(() => process.exit(code), 5000);
}
setTimeout(() => finish(1, { error: 'timed out after 170 s' }), 170000);
async function evaluate(sid, expression) {
  const r = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sid);
  return r.result && r.result.result ? r.result.result.value : undefined;
}
async function page() {
  const t = await send('Target.createTarget', { url: 'about:blank' });
  const a = await send('Target.attachToTarget', { targetId: t.result.targetId, flatten: true });
  const sid = a.result.sessionId;
  await send('Page.enable', {}, sid);
  await send('Runtime.enable', {}, sid);
  return sid;
}

async function chromeTracing(text) {
  const sid = await page();
  await send('Page.navigate', { url: 'chrome://tracing' }, sid);
  for (let i = 0; i < 20; i++) {
    if (await evaluate(sid, 'typeof tr !== "undefined" && !!tr.importer && !!tr.Model')) {
      return evaluate(sid, `(() => { try {
        const m = new tr.Model();
        new tr.importer.Import(m).importTraces([${JSON.stringify(text)}]);
        let tasks = 0; const tracks = new Set(), kernels = new Set();
        for (const th of m.getAllThreads()) for (const s of th.sliceGroup.slices)
          if (s.category === 'task') { tasks++; tracks.add(th.name); kernels.add(s.title); }
        return {viewer: 'chrome://tracing', ok: true, tasks, tracks: [...tracks].sort(),
                kernels: [...kernels].sort(), warnings: (m.importWarnings || []).length};
      } catch (e) { return {viewer: 'chrome://tracing', ok: false, error: String(e)}; } })()`);
    }
    await sleep(250);
  }
  return null; /* this Chromium has no chrome://tracing importer */
}

async function speedscopeApp(path) {
  const sid = await page();
  await send('DOM.enable', {}, sid);
  await send('Page.navigate', { url: 'file://' + speedscope + '/index.html' }, sid);
  /* Deadlines, not counts: under load (CI runs other tests beside this one) the app can take
   * many seconds to load and to parse the file. */
  /* The file input is in the page before the app's handler may be bound to it: on a loaded
   * machine a file given too early is dropped and the welcome page stays. So the file is given
   * again (to the input then in the page) until a profile shows, within one deadline. */
  const findInput = async () => {
    const doc = await send('DOM.getDocument', { depth: -1, pierce: true }, sid);
    const q = await send('DOM.querySelector', { nodeId: doc.result.root.nodeId, selector: 'input[type=file]' }, sid);
    return q.result && q.result.nodeId ? q.result.nodeId : 0;
  };
  /* The toolbar then names the profile shown, "<process>, <thread> (i/n)": one profile per
   * track that has events. 'n' steps to the next one; '3' shows the sandwich view, a table of
   * the frames (here: kernels) of the profile. */
  const title = () => evaluate(sid, 'document.body.innerText');
  let text = '', given = 0;
  for (const until = Date.now() + 100000; Date.now() < until && !/\(\d+\/\d+\)/.test(text);) {
    await sleep(250);
    text = (await title()) || '';
    if (/\(\d+\/\d+\)/.test(text) || Date.now() < given + 10000) continue;
    const input = await findInput();
    if (!input) continue;
    await send('DOM.setFileInputFiles', { files: [path], nodeId: input }, sid);
    given = Date.now();
  }
  if (!given) return { viewer: 'speedscope', ok: false, error: 'no file input on the page' };
  const m = /\((\d+)\/(\d+)\)/.exec(text);
  if (!m) return { viewer: 'speedscope', ok: false, error: 'no profile shown: ' + text.slice(0, 300), exceptions: consoleLines };
  const n = Number(m[2]), tracks = [], kernels = new Set();
  const key = async (k) => {
    for (const type of ['keyDown', 'keyUp']) await send('Input.dispatchKeyEvent', { type, key: k, text: type === 'keyDown' ? k : undefined }, sid);
    await sleep(150);
  };
  await key('3');
  for (let i = 0; i < n; i++) {
    let t = (await title()) || '';
    /* A busy machine renders slowly: give a core's table a moment to show its kernels. */
    for (let k = 0; k < 20 && /core \d+/.test(t) && !/scale|add_bias|act/.test(t); k++) {
      await sleep(100);
      t = (await title()) || '';
    }
    const line = t.split('\n').find((l) => /\(\d+\/\d+\)/.test(l)) || '';
    tracks.push(line.replace(/\s*\(\d+\/\d+\)\s*$/, ''));
    if (/core \d+/.test(line)) for (const k of ['scale', 'add_bias', 'act']) if (t.includes(k)) kernels.add(k);
    await key('n');
  }
  const cores = tracks.filter((t) => /core \d+/.test(t));
  return { viewer: 'speedscope ' + speedscope, ok: true, tasks: cores.length ? kernels.size : 0,
           tracks, kernels: [...kernels].sort(), exceptions: consoleLines };
}

(async () => {
  const text = fs.readFileSync(file, 'utf8');
  let r = await chromeTracing(text);
  if (!r && speedscope) r = await speedscopeApp(fs.realpathSync(file));
  if (!r) finish(77, { error: 'no trace viewer: this Chromium has no chrome://tracing importer and no speedscope was given' });
  finish(r.ok && r.tasks > 0 ? 0 : 1, r);
})();
