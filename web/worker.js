// webgrad's Web Worker: loads Pyodide, installs the webgrad wheel (no micropip), starts the
// `webgpu` backend, then runs Python for the page (webgrad.js is the page's side).
//
// Page -> worker:  {type: "init", pyodideUrl, wheelUrl, packages, interrupt, snapshot}
//                  {type: "run", id, code, async, filename}   async: false runs through runPython (no JSPI)
// Worker -> page:  {type: "status" | "stdout" | "stderr", text}
//                  {type: "post", data}                from Python's webgrad.web.post(obj)
//                  {type: "ready", backend: {name, adapter}, startup, snapshot} | {type: "failed", error}
//                  {type: "result", id, stdout, stderr, error}
//
// Start-up overlaps what it can: the wheel is requested as the worker starts, while Pyodide loads.
// `startup` holds when each step ended, in ms since the Unix epoch (performance.timeOrigin + now):
// worker (this script running), wheel_requested, pyodide_module (pyodide.mjs imported),
// snapshot_read (Cache Storage looked up), wheel (its bytes in), pyodide (loadPyodide resolved),
// installed (unpacked into site-packages), imported (import webgrad), ready (WebGPU started).
// `snapshot` says how the interpreter started: "restored" from the snapshot a first visit kept in
// Cache Storage (see loadInterpreter), "made" (a first visit: it keeps one), or "off" (init's
// snapshot: false, packages to load, or no Cache Storage).
//
// `interrupt` (a Uint8Array on a SharedArrayBuffer, or null) is Pyodide's interrupt buffer: the page
// writes 2 (SIGINT) into it and Python raises KeyboardInterrupt. A run's error is the user's
// traceback (webgrad.web.tracebacks: the runner's frames before the user's code are dropped).

let pyodide = null;
let interrupt = null;               // the interrupt buffer shared with the page, if any
let userTraceback = null;           // webgrad.web.tracebacks.last_traceback, a PyProxy
let capture = null;                 // {stdout: [], stderr: []} of the run in progress
let queue = Promise.resolve();      // runs go one at a time, in order

const status = (text) => postMessage({type: "status", text});
const startup = {};                 // step -> when it ended (ms since the Unix epoch)
let snapshot = "off";               // how the interpreter started: "off" | "made" | "restored"
const mark = (step) => (startup[step] = performance.timeOrigin + performance.now());
mark("worker");

function stream(kind) {
  return {
    batched: (text) => {
      if (capture) capture[kind].push(text);
      postMessage({type: kind, text});
    },
  };
}

// The wheel, requested at once: its bytes, and a tag naming this version of it (the snapshot's key)
function requestWheel(url) {
  const response = fetch(url).then((r) => {
    if (!r.ok) throw new Error(`fetching the webgrad wheel from ${url}: HTTP ${r.status}`);
    return r;
  });
  const bytes = response.then((r) => r.arrayBuffer()).then((b) => (mark("wheel"), b));
  const tag = response.then((r) => ["etag", "last-modified", "content-length"].map((h) => r.headers.get(h)).join(","));
  bytes.catch(() => {});                    // awaited later; a failure is reported there
  return {bytes, tag};
}

// Unpack a zip whose entries are all stored (uncompressed; the site's wheel is) into `dir` with
// Pyodide's FS, in JS: much faster than unpackArchive's Python. Returns false, writing nothing,
// for a zip with a compressed entry (then unpackArchive does it).
function unpackStored(FS, bytes, dir) {
  const data = new Uint8Array(bytes), view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let end = data.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== 0x06054b50) end--;   // end of central directory
  if (end < 0) throw new Error("the wheel is not a zip file");
  const entries = [];
  for (let i = 0, p = view.getUint32(end + 16, true); i < view.getUint16(end + 10, true); i++) {
    if (view.getUint32(p, true) !== 0x02014b50) throw new Error("the wheel's zip directory is damaged");
    const nameLength = view.getUint16(p + 28, true);
    entries.push({method: view.getUint16(p + 10, true), size: view.getUint32(p + 20, true),
                  local: view.getUint32(p + 42, true), name: new TextDecoder().decode(data.subarray(p + 46, p + 46 + nameLength))});
    p += 46 + nameLength + view.getUint16(p + 30, true) + view.getUint16(p + 32, true);
  }
  if (entries.some((e) => e.method !== 0 || e.name.split("/").includes(".."))) return false;
  for (const {size, local, name} of entries) {
    const path = `${dir}/${name}`;
    if (name.endsWith("/")) { FS.mkdirTree(path); continue; }
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    FS.writeFile(path, data.subarray(start, start + size));
  }
  return true;
}

// Pyodide's memory after `import webgrad`, made on a first visit and kept in the browser's Cache
// Storage, so that later visits skip the interpreter's start and webgrad's import (Pyodide's
// _makeSnapshot/_loadSnapshot). One entry, keyed by the Pyodide and the wheel it was made with.
const SNAPSHOTS = "webgrad-pyodide-snapshots";
async function findSnapshot(key) {
  const hit = await (await caches.open(SNAPSHOTS)).match(key);
  return hit ? {bytes: new Uint8Array(await hit.arrayBuffer()), stdlib: hit.headers.get("x-stdlib")} : null;
}

async function keepSnapshot(key, bytes, stdlib) {
  try {
    const cache = await caches.open(SNAPSHOTS);
    for (const old of await cache.keys()) await cache.delete(old);
    await cache.put(key, new Response(bytes, {headers: {"x-stdlib": stdlib}}));
  } catch (e) {        // storage full or refused: later visits start without a snapshot
    console.warn(`webgrad: the start-up snapshot was not stored: ${e}`);
  }
}

// the standard library zip's size and the hash of its central directory: a snapshot holds
// zipimport's table of offsets into it, so it fits only the same file
function stdlibStamp(py) {
  const name = py.FS.readdir("/lib").find((f) => /^python\d+\.zip$/.test(f));
  const data = py.FS.readFile(`/lib/${name}`);
  let h = 2166136261;
  for (let i = Math.max(0, data.length - 65536); i < data.length; i++) h = Math.imul(h ^ data[i], 16777619) >>> 0;
  return `${name}:${data.length}:${h}`;
}

async function loadInterpreter(loadPyodide, version, {pyodideUrl, wheelUrl, packages, snapshot}, wheel) {
  const useSnapshot = snapshot !== false && !(packages && packages.length) && "caches" in self;
  if (!useSnapshot) return {py: await loadPyodide({indexURL: pyodideUrl, packages: packages || []}), how: "off"};
  const key = `${pyodideUrl}webgrad-snapshot?pyodide=${version}&wheel=${encodeURIComponent(wheelUrl)}` +
              `&tag=${encodeURIComponent(await wheel.tag)}`;
  const found = await findSnapshot(key).catch(() => null);
  mark("snapshot_read");
  if (found) {
    try {
      const py = await loadPyodide({indexURL: pyodideUrl, _loadSnapshot: found.bytes});
      if (stdlibStamp(py) === found.stdlib) return {py, how: "restored"};
      console.warn("webgrad: the start-up snapshot was made with another standard library; making a new one");
    } catch (e) {
      console.warn(`webgrad: the start-up snapshot did not load (${e}); making a new one`);
    }
    await caches.delete(SNAPSHOTS);
  }
  return {py: await loadPyodide({indexURL: pyodideUrl, _makeSnapshot: true}), how: "made", key};
}

async function start(options) {
  const {pyodideUrl, wheelUrl, interrupt: buffer} = options;
  const wheel = requestWheel(wheelUrl);     // in parallel with Pyodide's start
  // wake the browser's GPU process while Pyodide loads (gpu.js asks for its own adapter later)
  navigator.gpu?.requestAdapter({powerPreference: "high-performance"}).catch(() => null);
  mark("wheel_requested");
  status("loading Pyodide");
  const {loadPyodide, version} = await import(new URL("pyodide.mjs", pyodideUrl).href);
  mark("pyodide_module");
  const {py, how, key} = await loadInterpreter(loadPyodide, version, options, wheel);
  pyodide = py;
  snapshot = how;
  mark("pyodide");
  status("installing webgrad");
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  const wheelBytes = await wheel.bytes;
  if (!unpackStored(pyodide.FS, wheelBytes, sitePackages)) pyodide.unpackArchive(wheelBytes, "wheel", {extractDir: sitePackages});
  mark("installed");
  pyodide.runPython("import webgrad, webgrad.web.tracebacks, webgrad.backends.gpu.browser");
  mark("imported");
  if (how === "made") {
    try {
      keepSnapshot(key, pyodide.makeMemorySnapshot(), stdlibStamp(pyodide));
    } catch (e) {
      console.warn(`webgrad: no start-up snapshot could be made: ${e}`);
    }
  }
  pyodide.setStdout(stream("stdout"));
  pyodide.setStderr(stream("stderr"));
  if (buffer) {
    interrupt = buffer;
    Atomics.store(interrupt, 0, 0);    // a SIGINT the last worker left unread (stopped while awaiting JS)
    pyodide.setInterruptBuffer(interrupt);
  }
  userTraceback = pyodide.pyimport("webgrad.web.tracebacks").last_traceback;
  status("starting WebGPU");
  const scratch = pyodide.toPy({});         // start-up names stay out of the user's globals
  const backend = await pyodide.runPythonAsync(`
import asyncio
import webgrad
from webgrad.backends.gpu import browser

# A KeyboardInterrupt (Stop) or SystemExit in a run rejects the run's promise, which reports it;
# without these handlers Pyodide's event loop raises it again from a timer, an uncaught error.
loop = asyncio.get_event_loop()
if hasattr(loop, "_keyboard_interrupt_handler"):
    loop._keyboard_interrupt_handler = lambda: None
    loop._system_exit_handler = lambda code: None
try:
    info = await browser.init()
    adapter = " ".join(v for v in (info["vendor"], info["architecture"], info["description"]) if v)
except Exception as e:
    adapter = f"no WebGPU: {e}"
try:
    name = webgrad.get_backend().name
except RuntimeError as e:
    name, adapter = "none", str(e)
{"name": name, "adapter": adapter}
`, {globals: scratch});
  const out = backend.toJs({dict_converter: Object.fromEntries});
  backend.destroy();
  scratch.destroy();
  mark("ready");
  return out;
}

async function run({id, code, async: useAsync = true, filename = "<exec>"}) {
  capture = {stdout: [], stderr: []};
  if (interrupt) Atomics.store(interrupt, 0, 0);     // a Stop meant for an earlier run
  let error = null;
  try {
    const result = useAsync ? await pyodide.runPythonAsync(code, {filename}) : pyodide.runPython(code, {filename});
    if (result && typeof result.destroy === "function") result.destroy();
  } catch (e) {
    error = describe(e, filename);
  }
  const {stdout, stderr} = capture;
  capture = null;
  postMessage({type: "result", id, stdout: joinLines(stdout), stderr: joinLines(stderr), error});
}

// a Python error as the user's traceback; anything else (a JS error) as its message
function describe(e, filename) {
  if (!(e instanceof pyodide.ffi.PythonError)) return String(e && e.message || e);
  try {
    return userTraceback(filename, e.type) ?? e.message;
  } catch (formatting) {       // the formatter itself failed: Pyodide's full traceback, and why
    return `${e.message}\n(webgrad could not shorten this traceback: ${formatting.message})`;
  }
}

const joinLines = (lines) => (lines.length ? lines.join("\n") + "\n" : "");

self.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    queue = queue.then(() => start(msg)).then(
      (backend) => postMessage({type: "ready", backend, startup, snapshot}),
      (e) => postMessage({type: "failed", error: String(e && e.stack || e)}));
  } else if (msg.type === "run") {
    queue = queue.then(() => run(msg));
  }
};
