// webgrad's Web Worker: loads Pyodide, installs the webgrad wheel (no micropip), starts the
// `webgpu` backend, then runs Python for the page (webgrad.js is the page's side).
//
// Page -> worker:  {type: "init", pyodideUrl, wheelUrl, packages, interrupt, snapshot, siteSnapshot}
//                  {type: "run", id, code, async, filename}   async: false runs through runPython (no JSPI)
//                  {type: "make-snapshot", pyodideUrl, wheelUrl}   (the site build, webgrad.web.snapshot)
// Worker -> page:  {type: "status" | "stdout" | "stderr", text}
//                  {type: "post", data}                from Python's webgrad.web.post(obj)
//                  {type: "ready", backend: {name, adapter}, startup, snapshot} | {type: "failed", error}
//                  {type: "result", id, stdout, stderr, error}
//                  {type: "kept"}                      the site's files are in Cache Storage (siteFiles)
//                  {type: "snapshot", bytes, stdlib, jspi} | {type: "failed", error}   (make-snapshot's reply)
//
// Start-up overlaps what it can: the wheel is requested as the worker starts, while Pyodide loads.
// `startup` holds when each step ended, in ms since the Unix epoch (performance.timeOrigin + now):
// worker (this script running), wheel_requested, pyodide_module (pyodide.mjs imported),
// snapshot_read (the site's snapshot in, or Cache Storage looked up), wheel (its bytes in), pyodide
// (loadPyodide resolved), installed (unpacked into site-packages), imported (import webgrad), ready (WebGPU started).
// `snapshot` says how the interpreter started: "site" from the snapshot the site was built with
// (init's siteSnapshot: {url, stdlib}, fetched as the worker starts; every visit, the first too),
// "restored" from the snapshot a first visit kept in Cache Storage (see loadInterpreter), "made" (a
// first visit without a site snapshot: it keeps one), or "off" (init's snapshot: false, packages to
// load, or neither a site snapshot nor Cache Storage).
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
let snapshot = "off";               // how the interpreter started: "off" | "made" | "restored" | "site"
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
function requestWheel(url, get = fetch) {
  const response = get(url).then((r) => {
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
  const made = new Set();          // folders made: mkdirTree throws (slowly) inside for each one that exists
  const folder = (path) => made.has(path) || (FS.mkdirTree(path), made.add(path));
  for (const {size, local, name} of entries) {
    const path = `${dir}/${name}`;
    if (name.endsWith("/")) { folder(path.slice(0, -1)); continue; }
    folder(path.slice(0, path.lastIndexOf("/")));
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    FS.writeFile(path, data.subarray(start, start + size), {canOwn: true});   // a view of the wheel, not a copy
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
  const name = stdlibName(py), size = py.FS.stat(`/lib/${name}`).size;
  const tail = new Uint8Array(Math.min(size, 65536)), stream = py.FS.open(`/lib/${name}`, "r");
  py.FS.read(stream, tail, 0, tail.length, size - tail.length);     // the end only: no copy of the whole zip
  py.FS.close(stream);
  let h = 2166136261;
  for (const byte of tail) h = Math.imul(h ^ byte, 16777619) >>> 0;
  return `${name}:${size}:${h}`;
}

const stdlibName = (py) => py.FS.readdir("/lib").find((f) => /^python\d+\.zip$/.test(f));
const stdlibBytes = (py) => py.FS.readFile(`/lib/${stdlibName(py)}`);

// A site's big content-hashed files (its snapshot, Pyodide's standard library, the wheel), kept in
// Cache Storage by the first visit that has them, read there by later ones: the browser's HTTP
// cache hands a 16 MB body to a worker 5-8x slower (in chunks, decompressing it again: 150-500 ms
// here) than Cache Storage does (25-40 ms). Used only with a site snapshot, whose files are immutable.
const SITE_FILES = "webgrad-site-files";
function siteFiles() {
  const cache = ("caches" in self ? caches.open(SITE_FILES) : Promise.resolve(null)).catch(() => null);
  const used = new Set(), hits = new Set(), kept = new Map();    // kept: url -> bytes (or () => bytes) to store
  // url's kept Response, or null
  async function match(url) {
    used.add(url);
    const hit = await cache.then((c) => c && c.match(url)).catch(() => null);
    if (hit) hits.add(url);
    return hit || null;
  }
  return {
    match,
    fetched: () => kept.size > 0,           // whether this visit fetched any: a first visit
    get: async (url) => (await match(url)) || fetch(url),       // the kept copy, else the network's
    keep: (url, bytes) => hits.has(url) || kept.set(url, bytes),  // to store, unless it came from there
    // store what this visit fetched, and drop the files of other versions
    async store() {
      const c = await cache;
      if (!c) return;
      for (const [url, bytes] of kept) await c.put(url, new Response(typeof bytes === "function" ? bytes() : bytes));
      for (const old of await c.keys()) if (!used.has(old.url)) await c.delete(old);
    },
  };
}

const STORE_IDLE_MS = 3000;         // the files are stored after the first run, or this long after start-up
let storeFiles = null;              // stores them (once), so that it never delays the first result
function storeFilesNow() {
  const store = storeFiles;
  storeFiles = null;
  if (store) store();
}

// V8 keeps Pyodide's compiled WebAssembly for the next visit (its code cache) only once it has
// optimized about 1 MB of it, which a start from a snapshot never reaches on its own (the
// interpreter's start and webgrad's import, which did, are in the snapshot). So after a first visit's
// first run the worker compiles webgrad's sources (WARM_ROUNDS times, one file at a time and only
// while no run waits), which optimizes Python's parser, compiler and much of its core; later
// visits then start with that code compiled (about 0.2-0.4 s sooner to the first result here).
const WARM_ROUNDS = 2;
const WARM = `
def _warm_up(rounds):
    import glob, os, webgrad
    files = sorted(glob.glob(os.path.join(os.path.dirname(webgrad.__file__), "**", "*.py"), recursive=True))
    for _ in range(rounds):
        for path in files:
            with open(path, encoding="utf-8") as f:
                compile(f.read(), path, "exec", dont_inherit=True)
            yield
_warm_up`;
let pending = 0;                    // runs queued or running: the warm-up waits for them
function warmUp() {
  const scratch = pyodide.toPy({});
  const steps = pyodide.runPython(WARM, {globals: scratch})(WARM_ROUNDS);
  scratch.destroy();
  return new Promise((done) => {
    const step = () => {
      if (pending) return setTimeout(step, 50);
      let finished = true;
      try {
        finished = steps.next().done;
      } catch (e) {                         // e.g. a Stop that came between runs: the warm-up ends
        console.warn(`webgrad: the warm-up stopped: ${e}`);
      }
      if (finished) return (steps.destroy(), done());
      setTimeout(step, 0);
    };
    step();
  });
}

// Restoring a snapshot needs what it was made with: JSPI (WebAssembly.Suspending; Pyodide binds its
// stack switching at start-up), the same Pyodide build (Pyodide checks) and the same standard library
const canRestore = () => typeof WebAssembly.Suspending === "function";

// the site's snapshot ({url, stdlib}), requested at once: {bytes, stdlib}, or null where it cannot be used
function requestSiteSnapshot(site, {snapshot, packages}) {
  if (!site || snapshot === false || (packages && packages.length) || !canRestore()) return null;
  const files = siteFiles();
  const bytes = files.get(site.url).then((r) => {
    if (!r.ok) throw new Error(`fetching the start-up snapshot from ${site.url}: HTTP ${r.status}`);
    return r.arrayBuffer();
  }).then((b) => (mark("snapshot_read"), files.keep(site.url, b), unpackSnapshot(b)));
  bytes.catch(() => {});                    // awaited later; a failure is reported there
  return {bytes, stdlib: site.stdlib, files};
}

// The site's snapshot file is the snapshot without its all-zero pages (webgrad.web.snapshot.pack):
// "WGS1", the snapshot's length, the count of runs, each run's offset and length (uint32 LE), the runs
function unpackSnapshot(buffer) {
  const view = new DataView(buffer);
  if (buffer.byteLength < 12 || view.getUint32(0, true) !== 0x31534757) throw new Error("not a webgrad snapshot file");
  const out = new Uint8Array(view.getUint32(4, true)), count = view.getUint32(8, true);
  for (let i = 0, at = 12 + 8 * count; i < count; i++) {
    const offset = view.getUint32(12 + 8 * i, true), length = view.getUint32(16 + 8 * i, true);
    out.set(new Uint8Array(buffer, at, length), offset);
    at += length;
  }
  return out;
}

// Python's random module was seeded when the snapshot was made: seed it again, as a fresh start does
const RESEED = "import sys\nif 'random' in sys.modules: sys.modules['random'].seed()";

async function restore(loadPyodide, indexURL, bytes, stdlib, stdLibURL = undefined) {
  const py = await loadPyodide({indexURL, _loadSnapshot: bytes, stdLibURL})
    .finally(() => stdLibURL && URL.revokeObjectURL(stdLibURL));
  if (stdlibStamp(py) !== stdlib) throw new Error("it was made with another standard library");
  py.runPython(RESEED);
  return py;
}

// the standard library's kept copy as a blob: URL for loadPyodide's stdLibURL (undefined: none kept)
async function keptStdlib(files, pyodideUrl) {
  const url = `${pyodideUrl}python_stdlib.zip`;
  const hit = await files.match(url);
  return hit ? URL.createObjectURL(await hit.blob()) : undefined;
}

async function loadInterpreter(loadPyodide, version, {pyodideUrl, wheelUrl, packages, snapshot}, wheel, site) {
  if (site) {
    try {
      // the bytes as a promise: Pyodide fetches its own files meanwhile and awaits them last
      const py = await restore(loadPyodide, pyodideUrl, site.bytes, site.stdlib, await keptStdlib(site.files, pyodideUrl));
      return {py, how: "site"};
    } catch (e) {
      console.warn(`webgrad: the site's start-up snapshot did not load (${e}); starting without it`);
    }
  }
  const useSnapshot = snapshot !== false && !(packages && packages.length) && "caches" in self;
  if (!useSnapshot) return {py: await loadPyodide({indexURL: pyodideUrl, packages: packages || []}), how: "off"};
  const key = `${pyodideUrl}webgrad-snapshot?pyodide=${version}&wheel=${encodeURIComponent(wheelUrl)}` +
              `&tag=${encodeURIComponent(await wheel.tag)}`;
  const found = await findSnapshot(key).catch(() => null);
  mark("snapshot_read");
  if (found) {
    try {
      return {py: await restore(loadPyodide, pyodideUrl, found.bytes, found.stdlib), how: "restored"};
    } catch (e) {
      console.warn(`webgrad: the start-up snapshot did not load (${e}); making a new one`);
    }
    await caches.delete(SNAPSHOTS);
  }
  return {py: await loadPyodide({indexURL: pyodideUrl, _makeSnapshot: true}), how: "made", key};
}

// webgrad's wheel unpacked into site-packages, and webgrad imported (already, after a snapshot)
async function installWebgrad(py, wheel) {
  const sitePackages = py.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  const wheelBytes = await wheel.bytes;
  if (!unpackStored(py.FS, wheelBytes, sitePackages)) py.unpackArchive(wheelBytes, "wheel", {extractDir: sitePackages});
  mark("installed");
  py.runPython("import webgrad, webgrad.web.tracebacks, webgrad.backends.gpu.browser");
  mark("imported");
}

// For the site build: Python's memory right after `import webgrad` (what init's siteSnapshot names)
async function makeSiteSnapshot({pyodideUrl, wheelUrl}) {
  const wheel = requestWheel(wheelUrl);
  const {loadPyodide} = await import(new URL("pyodide.mjs", pyodideUrl).href);
  const py = await loadPyodide({indexURL: pyodideUrl, _makeSnapshot: true});
  await installWebgrad(py, wheel);
  const bytes = py.makeMemorySnapshot();
  return {type: "snapshot", bytes, stdlib: stdlibStamp(py), jspi: canRestore()};
}

async function start(options) {
  const {pyodideUrl, wheelUrl, interrupt: buffer} = options;
  const site = requestSiteSnapshot(options.siteSnapshot, options);
  const wheel = requestWheel(wheelUrl, site ? site.files.get : fetch);     // in parallel with Pyodide's start
  // wake the browser's GPU process while Pyodide loads (gpu.js asks for its own adapter later)
  navigator.gpu?.requestAdapter({powerPreference: "high-performance"}).catch(() => null);
  mark("wheel_requested");
  status("loading Pyodide");
  const {loadPyodide, version} = await import(new URL("pyodide.mjs", pyodideUrl).href);
  mark("pyodide_module");
  const {py, how, key} = await loadInterpreter(loadPyodide, version, options, wheel, site);
  pyodide = py;
  snapshot = how;
  mark("pyodide");
  status("installing webgrad");
  await installWebgrad(pyodide, wheel);
  if (how === "site") {
    site.files.keep(wheelUrl, await wheel.bytes);
    site.files.keep(`${pyodideUrl}python_stdlib.zip`, () => stdlibBytes(pyodide));
  }
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
  if (how === "site") {
    storeFiles = () => site.files.store().catch((e) => console.warn(`webgrad: the site's files were not kept: ${e}`))
      .then(() => site.files.fetched() && warmUp()).then(() => postMessage({type: "kept"}));
    setTimeout(storeFilesNow, STORE_IDLE_MS);
  }
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
  storeFilesNow();
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
    pending++;
    queue = queue.then(() => run(msg)).finally(() => pending--);
  } else if (msg.type === "make-snapshot") {
    makeSiteSnapshot(msg).then((reply) => postMessage(reply, [reply.bytes.buffer]),
                               (e) => postMessage({type: "failed", error: String(e && e.stack || e)}));
  }
};
