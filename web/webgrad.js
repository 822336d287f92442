// webgrad in a web page: Pyodide and webgrad run in a Web Worker (worker.js), on the browser's
// WebGPU (backend `webgpu`) when an adapter is granted.
//
//   import { startWebgrad } from "./webgrad.js";
//   const wg = await startWebgrad({
//     pyodideUrl,                 // default: the public CDN, PYODIDE_CDN below; or e.g. "./pyodide/"
//                                 // (the local copy `python -m webgrad.web.serve` offers)
//     wheelUrl: "./webgrad.whl",  // the webgrad wheel (installed with unpackArchive, no micropip)
//     packages: [],               // Pyodide packages to load with it, e.g. ["numpy"] (needs a package source);
//                                 //    webgrad itself needs none (no numpy, no micropip)
//     onStatus: (text) => {},     // start-up progress: "loading Pyodide", "installing webgrad", ...
//     snapshot: true,             // keep Python's memory after `import webgrad` in the browser's Cache
//                                 //    Storage on a first visit (~30 MB) and start later visits from it;
//                                 //    off with packages (their files are not in it)
//     siteSnapshot: null,         // {url, stdlib}: a snapshot made when the site was built (site.js's
//                                 //    SITE.snapshot, webgrad.web.snapshot), for this pyodideUrl and wheelUrl:
//                                 //    every visit starts from it, the first too (where the browser has
//                                 //    JSPI; else, or if it fails to load, as without it)
//   });
//   wg.backend                    // {name: "webgpu" | "cpu" | "none", adapter: "description string"}
//   wg.startup                    // when each start-up step ended, ms since this page's navigation:
//                                 //    {worker, wheel_requested, pyodide_module, snapshot_read, wheel,
//                                 //    pyodide, installed, imported, ready} (worker.js says what each is)
//                                 //    (the wheel is fetched while Pyodide loads: wheel_requested < pyodide),
//                                 //    and snapshot: "site" | "made" | "restored" | "off" (the two options above)
//   await wg.run(code)            // -> {stdout, stderr, error: string | null}; runs through runPythonAsync
//                                 //    (top-level await works; sync readback such as t.tolist() uses JSPI).
//                                 //    error is the traceback from the user's code on (the runner's frames
//                                 //    before it are dropped)
//   await wg.run(code, {async: false})  // through runPython instead: no JSPI, so only `await`-free code
//                                 //    and no sync readback (t.tolist() raises, naming `await t.read()`)
//   await wg.run(code, {filename: "main.py"})  // the file name tracebacks show (with source lines
//                                 //    unless it is <like-this>); default "<exec>"
//   await wg.runFile(url)         // fetch a .py file and run it (tracebacks name the file)
//   wg.onMessage((msg) => {})     // msg: {type: "stdout" | "stderr" | "status", text} or {type: "post", data};
//                                 //    Python's webgrad.web.post(obj) arrives as {type: "post", data: obj}.
//                                 //    Returns a function that removes the listener.
//   await wg.stop({graceMs: 3000}) // stop the running code: KeyboardInterrupt through Pyodide's interrupt
//                                 //    buffer; where the page is not cross-origin isolated (no
//                                 //    SharedArrayBuffer) or Python does not stop within graceMs, the
//                                 //    worker is terminated and started again (a fresh namespace).
//                                 //    -> "idle" | "interrupted" | "restarted"
//   wg.interruptible              // whether stop() can interrupt (the page is cross-origin isolated)
//   await wg.restart()            // a new worker and namespace; runs in progress end with an error
//   wg.terminate()                // stop the worker
//
// Runs execute one at a time, in order, in one persistent Python namespace.
// Relative URLs are resolved against the page.

export const PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/";
const SIGINT = 2;

// the worker's epoch times as ms since this page's navigation start (performance.now()'s origin)
const sincePageStart = (times) =>
  Object.fromEntries(Object.entries(times || {}).map(([step, t]) => [step, t - performance.timeOrigin]));

export async function startWebgrad({pyodideUrl = PYODIDE_CDN, wheelUrl = "./webgrad.whl", packages = [],
                                    onStatus = () => {}, snapshot = true, siteSnapshot = null} = {}) {
  const base = globalThis.document ? document.baseURI : location.href;
  const absolute = (url) => new URL(url, base).href;
  let pyodideBase = absolute(pyodideUrl);
  if (!pyodideBase.endsWith("/")) pyodideBase += "/";
  // Pyodide's interrupt buffer needs a SharedArrayBuffer, which needs cross-origin isolation
  const interrupt = globalThis.crossOriginIsolated ? new Uint8Array(new SharedArrayBuffer(1)) : null;
  const site = siteSnapshot && {url: absolute(siteSnapshot.url), stdlib: siteSnapshot.stdlib};
  const init = {type: "init", pyodideUrl: pyodideBase, wheelUrl: absolute(wheelUrl), packages, interrupt, snapshot,
                siteSnapshot: site};

  const listeners = new Set();
  const runs = new Map();           // id -> {resolve, result}, oldest first: the first is running
  let worker = null;
  let nextId = 0;

  // a new worker, started: resolves to its backend
  function connect() {
    worker = new Worker(new URL("./worker.js", import.meta.url), {type: "module"});
    return new Promise((ready, failed) => {
      worker.onmessage = (event) => {
        const msg = event.data;
        if (msg.type === "ready") {
          api.startup = {...sincePageStart(msg.startup), snapshot: msg.snapshot};
          ready(msg.backend);
        }
        else if (msg.type === "failed") failed(new Error(`webgrad failed to start: ${msg.error}`));
        else if (msg.type === "result") finish(msg.id, msg);
        else {
          if (msg.type === "status") onStatus(msg.text);
          for (const fn of listeners) fn(msg);
        }
      };
      worker.onerror = (event) => failed(new Error(`webgrad's worker failed: ${event.message || event}`));
      worker.postMessage(init);
    });
  }

  function finish(id, {stdout, stderr, error}) {
    runs.get(id).resolve({stdout, stderr, error});
    runs.delete(id);
  }

  function run(code, {async = true, filename = "<exec>"} = {}) {
    const id = nextId++;
    let resolve;
    const result = new Promise((res) => (resolve = res));
    runs.set(id, {resolve, result});
    worker.postMessage({type: "run", id, code, async, filename});
    return result;
  }

  async function runFile(url) {
    const response = await fetch(absolute(url));
    if (!response.ok) return {stdout: "", stderr: "", error: `fetching ${url}: HTTP ${response.status}`};
    return run(await response.text(), {filename: new URL(absolute(url)).pathname.split("/").pop()});
  }

  function onMessage(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  }

  async function restart(error = "Python was restarted: variables and imports are gone") {
    worker.terminate();
    for (const id of [...runs.keys()]) finish(id, {stdout: "", stderr: "", error});
    onStatus("restarting Python");
    api.backend = await connect();
    onStatus("ready");
  }

  async function stop({graceMs = 3000} = {}) {
    const running = runs.values().next().value;
    if (!running) return "idle";
    if (interrupt) {
      Atomics.store(interrupt, 0, SIGINT);
      const timer = new Promise((res) => setTimeout(() => res(false), graceMs));
      if (await Promise.race([running.result.then(() => true), timer])) return "interrupted";
    }
    await restart(interrupt
      ? `Stopped: Python did not stop within ${graceMs / 1000} s, so it was restarted (variables and imports are gone)`
      : "Stopped: Python was restarted, as this page cannot interrupt it (it is not cross-origin isolated); " +
        "variables and imports are gone");
    return "restarted";
  }

  const api = {backend: null, startup: null, run, runFile, onMessage, stop, restart, interruptible: interrupt !== null,
               terminate: () => worker.terminate()};
  api.backend = await connect();
  onStatus("ready");
  return api;
}
