// webgrad in a web page: Pyodide and webgrad run in a Web Worker (worker.js), on the browser's
// WebGPU (backend `webgpu`) when an adapter is granted.
//
//   import { startWebgrad } from "./webgrad.js";
//   const wg = await startWebgrad({
//     pyodideUrl,                 // default: the public CDN, PYODIDE_CDN below; or e.g. "./pyodide/"
//                                 // (the local copy `python -m webgrad.web.serve` offers)
//     wheelUrl: "./webgrad.whl",  // the webgrad wheel (installed with unpackArchive, no micropip)
//     packages: [],               // Pyodide packages to load first, e.g. ["numpy"] (needs a package source)
//     onStatus: (text) => {},     // start-up progress: "loading Pyodide", "installing webgrad", ...
//   });
//   wg.backend                    // {name: "webgpu" | "cpu" | "none", adapter: "description string"}
//   await wg.run(code)            // -> {stdout, stderr, error: string | null}; runs through runPythonAsync
//                                 //    (top-level await works; sync readback such as t.tolist() uses JSPI)
//   await wg.run(code, {async: false})  // through runPython instead: no JSPI, so only `await`-free code
//                                 //    and no sync readback (t.tolist() raises, naming `await t.read()`)
//   await wg.runFile(url)         // fetch a .py file and run it
//   wg.onMessage((msg) => {})     // msg: {type: "stdout" | "stderr" | "status", text} or {type: "post", data};
//                                 //    Python's webgrad.web.post(obj) arrives as {type: "post", data: obj}.
//                                 //    Returns a function that removes the listener.
//   wg.terminate()                // stop the worker
//
// Runs execute one at a time, in order, in one persistent Python namespace.
// Relative URLs are resolved against the page.

export const PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/";

export async function startWebgrad({pyodideUrl = PYODIDE_CDN, wheelUrl = "./webgrad.whl", packages = [],
                                    onStatus = () => {}} = {}) {
  const base = globalThis.document ? document.baseURI : location.href;
  const absolute = (url) => new URL(url, base).href;
  let pyodideBase = absolute(pyodideUrl);
  if (!pyodideBase.endsWith("/")) pyodideBase += "/";

  const worker = new Worker(new URL("./worker.js", import.meta.url), {type: "module"});
  const listeners = new Set();
  const pending = new Map();
  let nextId = 0;
  let ready, failed;
  const started = new Promise((res, rej) => { ready = res; failed = rej; });

  worker.onmessage = (event) => {
    const msg = event.data;
    if (msg.type === "ready") ready(msg.backend);
    else if (msg.type === "failed") failed(new Error(`webgrad failed to start: ${msg.error}`));
    else if (msg.type === "result") {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    } else {
      if (msg.type === "status") onStatus(msg.text);
      for (const fn of listeners) fn(msg);
    }
  };
  worker.onerror = (event) => failed(new Error(`webgrad's worker failed: ${event.message || event}`));
  worker.postMessage({type: "init", pyodideUrl: pyodideBase, wheelUrl: absolute(wheelUrl), packages});
  const backend = await started;
  onStatus("ready");

  function run(code, {async = true} = {}) {
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, ({stdout, stderr, error}) => resolve({stdout, stderr, error}));
      worker.postMessage({type: "run", id, code, async});
    });
  }

  async function runFile(url) {
    const response = await fetch(absolute(url), {cache: "no-store"});
    if (!response.ok) return {stdout: "", stderr: "", error: `fetching ${url}: HTTP ${response.status}`};
    return run(await response.text());
  }

  function onMessage(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  }

  return {backend, run, runFile, onMessage, terminate: () => worker.terminate()};
}
