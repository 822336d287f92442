// webgrad's Web Worker: loads Pyodide, installs the webgrad wheel (no micropip), starts the
// `webgpu` backend, then runs Python for the page (webgrad.js is the page's side).
//
// Page -> worker:  {type: "init", pyodideUrl, wheelUrl, packages, interrupt}
//                  {type: "run", id, code, async, filename}   async: false runs through runPython (no JSPI)
// Worker -> page:  {type: "status" | "stdout" | "stderr", text}
//                  {type: "post", data}                from Python's webgrad.web.post(obj)
//                  {type: "ready", backend: {name, adapter}} | {type: "failed", error}
//                  {type: "result", id, stdout, stderr, error}
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

function stream(kind) {
  return {
    batched: (text) => {
      if (capture) capture[kind].push(text);
      postMessage({type: kind, text});
    },
  };
}

async function start({pyodideUrl, wheelUrl, packages, interrupt: buffer}) {
  status("loading Pyodide");
  const {loadPyodide} = await import(new URL("pyodide.mjs", pyodideUrl).href);
  pyodide = await loadPyodide({indexURL: pyodideUrl});
  pyodide.setStdout(stream("stdout"));
  pyodide.setStderr(stream("stderr"));
  if (buffer) {
    interrupt = buffer;
    Atomics.store(interrupt, 0, 0);    // a SIGINT the last worker left unread (stopped while awaiting JS)
    pyodide.setInterruptBuffer(interrupt);
  }
  if (packages && packages.length) {
    status(`loading ${packages.join(", ")}`);
    await pyodide.loadPackage(packages);
  }
  status("installing webgrad");
  const response = await fetch(wheelUrl, {cache: "no-store"});
  if (!response.ok) throw new Error(`fetching the webgrad wheel from ${wheelUrl}: HTTP ${response.status}`);
  const wheel = await response.arrayBuffer();
  const sitePackages = pyodide.runPython("import sysconfig; sysconfig.get_paths()['purelib']");
  pyodide.unpackArchive(wheel, "wheel", {extractDir: sitePackages});
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
      (backend) => postMessage({type: "ready", backend}),
      (e) => postMessage({type: "failed", error: String(e && e.stack || e)}));
  } else if (msg.type === "run") {
    queue = queue.then(() => run(msg));
  }
};
