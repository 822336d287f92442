// The playground: run the textarea's Python in webgrad's worker and show stdout, stderr and errors.
// State for tests: window.__playground = {state: "loading"|"ready"|"running"|"error", output, error}.
import { startWebgrad } from "./webgrad.js";

const CDN = "https://cdn.jsdelivr.net/pyodide/v314.0.7/full/";
const EXAMPLE = `import webgrad as wg

x = wg.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = wg.tensor([0.5, -1.0, 2.0], requires_grad=True)
loss = ((x * w).sum() - 1) ** 2        # (x.w - 1)^2
loss.backward()

print("device:", x.device)
print("loss:", loss.item())            # sync readback (JSPI)
print("x.grad:", x.grad.tolist())      # 2 (x.w - 1) w
print("w.grad:", await w.grad.read())  # async readback: works everywhere
`;

const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
const pg = (window.__playground = { state: "loading", output: "", error: null });

function setState(state, text) {
  pg.state = state;
  document.body.dataset.state = state;
  if (text !== undefined) $("status").textContent = text;
}

function show(parts) {
  const out = $("output");
  out.replaceChildren(...parts.filter(([, text]) => text).map(([cls, text]) => {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text.endsWith("\n") ? text : text + "\n";
    return span;
  }));
  pg.output = out.textContent;
}

// output printed while a run is in progress (the run's result replaces it when it ends)
function showLive(msg) {
  if (pg.state !== "running") return;
  const span = document.createElement("span");
  span.className = msg.type;
  span.textContent = msg.text.endsWith("\n") ? msg.text : msg.text + "\n";
  $("output").append(span);
}

async function run(wg) {
  $("run").disabled = true;
  setState("running", "running…");
  show([]);
  const t0 = performance.now();
  const r = await wg.run($("code").value);
  $("timing").textContent = `${(performance.now() - t0).toFixed(0)} ms`;
  pg.error = r.error;
  show([["stdout", r.stdout], ["stderr", r.stderr], ["error", r.error]]);
  setState("ready", r.error ? "finished with an error" : "finished");
  $("run").disabled = false;
}

async function listBackends(wg) {
  const r = await wg.run("import json, webgrad\nprint(json.dumps([webgrad.backends(), webgrad.get_backend().name]))");
  if (r.error) return;
  const [names, current] = JSON.parse(r.stdout);
  const sel = $("device");
  sel.replaceChildren(...names.map((n) => new Option(n, n, false, n === current)));
  sel.disabled = names.length < 2;
  sel.onchange = () => wg.run(`import webgrad\nwebgrad.set_backend(${JSON.stringify(sel.value)})`);
}

async function main() {
  $("code").value = params.get("code") || EXAMPLE;
  const wg = await startWebgrad({
    pyodideUrl: params.get("pyodide") || CDN,
    onStatus: (text) => ($("status").textContent = text),
  });
  $("backend").textContent = wg.backend.name;
  $("adapter").textContent = wg.backend.adapter || "(none)";
  await listBackends(wg);
  wg.onMessage((msg) => (msg.type === "stdout" || msg.type === "stderr") && showLive(msg));
  $("run").onclick = () => run(wg);
  $("code").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !$("run").disabled) { e.preventDefault(); run(wg); }
  });
  $("run").disabled = false;
  setState("ready", "ready");
}

main().catch((err) => {
  pg.error = String(err && err.message || err);
  setState("error", "failed to start");
  show([["error", pg.error]]);
});
