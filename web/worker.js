// webgrad's Web Worker: loads Pyodide, installs the webgrad wheel (no micropip), starts the
// `webgpu` backend, then runs Python for the page (webgrad.js is the page's side).
//
// Page -> worker:  {type: "init", pyodideUrl, wheelUrl, packages}
//                  {type: "run", id, code, async}     async: false runs through runPython (no JSPI)
// Worker -> page:  {type: "status" | "stdout" | "stderr", text}
//                  {type: "post", data}                from Python's webgrad.web.post(obj)
//                  {type: "ready", backend: {name, adapter}} | {type: "failed", error}
//                  {type: "result", id, stdout, stderr, error}

let pyodide = null;
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

async function start({pyodideUrl, wheelUrl, packages}) {
  status("loading Pyodide");
  const {loadPyodide} = await import(new URL("pyodide.mjs", pyodideUrl).href);
  pyodide = await loadPyodide({indexURL: pyodideUrl});
  pyodide.setStdout(stream("stdout"));
  pyodide.setStderr(stream("stderr"));
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
  status("starting WebGPU");
  const scratch = pyodide.toPy({});         // start-up names stay out of the user's globals
  const backend = await pyodide.runPythonAsync(`
import webgrad
from webgrad.backends.gpu import browser
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

async function run({id, code, async: useAsync = true}) {
  capture = {stdout: [], stderr: []};
  let error = null;
  try {
    const result = useAsync ? await pyodide.runPythonAsync(code) : pyodide.runPython(code);
    if (result && typeof result.destroy === "function") result.destroy();
  } catch (e) {
    error = String(e.message || e);
  }
  const {stdout, stderr} = capture;
  capture = null;
  postMessage({type: "result", id, stdout: joinLines(stdout), stderr: joinLines(stderr), error});
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
