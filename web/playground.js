// The playground: run the textarea's Python in webgrad's worker, show its stdout, stderr and errors as
// they come, plot the numbers it posts (webgrad.web.post), stop it on request.
// State for tests: window.__playground = {state: "loading"|"ready"|"running"|"stopping"|"error", output,
// error, series: {name: [numbers]} (the plot), stopped: null|"interrupted"|"restarted" (the last Stop)}.
import { startWebgrad } from "./webgrad.js";
import { EXAMPLES } from "./examples.js";
import { $, keepQuery, params, siteOptions } from "./page.js";
import { drawLines } from "./plot.js";

const FILENAME = "playground.py";      // the file name tracebacks give the code (with its source lines)
const pg = (window.__playground = { state: "loading", output: "", error: null, series: {}, stopped: null });
const busy = () => pg.state === "running" || pg.state === "stopping";

function setState(state, text) {
  pg.state = state;
  document.body.dataset.state = state;
  if (text !== undefined) $("status").textContent = text;
}

function append(cls, text) {
  if (!text) return;
  const span = document.createElement("span");
  span.className = cls;
  span.textContent = text.endsWith("\n") ? text : text + "\n";
  $("output").append(span);
  pg.output = $("output").textContent;
}

function clear() {
  $("output").replaceChildren();
  Object.assign(pg, { output: "", error: null, series: {}, stopped: null });
  $("plot").hidden = true;
}

// a dict whose values are numbers or lists of numbers
const plottable = (data) => data !== null && typeof data === "object" && !Array.isArray(data) &&
  Object.keys(data).length > 0 &&
  Object.values(data).every((v) => [v].flat().every((x) => typeof x === "number"));

function onPost(data) {
  if (!plottable(data)) return append("post", `post: ${JSON.stringify(data)}`);
  for (const [name, values] of Object.entries(data)) (pg.series[name] ??= []).push(...[values].flat());
  $("plot").hidden = false;
  drawLines($("plot"), pg.series);
}

async function run(wg) {
  $("run").disabled = true;
  $("stop").disabled = false;
  clear();
  setState("running", "running…");
  const t0 = performance.now();
  const r = await wg.run($("code").value, { filename: FILENAME });
  $("timing").textContent = `${(performance.now() - t0).toFixed(0)} ms`;
  pg.error = r.error;
  append("error", r.error);
  $("stop").disabled = true;
  if (pg.state === "stopping") return;          // stop() says when Python is back
  setState("ready", r.error ? "finished with an error" : "finished");
  $("run").disabled = false;
}

async function stop(wg) {
  $("stop").disabled = true;
  setState("stopping", "stopping…");
  pg.stopped = await wg.stop();
  if (pg.stopped === "restarted") await showBackend(wg);
  setState("ready", pg.stopped === "restarted" ? "stopped: Python was restarted" : "stopped");
  $("run").disabled = false;
}

async function showBackend(wg) {
  $("backend").textContent = wg.backend.name;
  $("adapter").textContent = wg.backend.adapter || "(none)";
  const r = await wg.run("import json, webgrad\nprint(json.dumps([webgrad.backends(), webgrad.get_backend().name]))");
  if (r.error) return;
  const [names, current] = JSON.parse(r.stdout);
  const sel = $("device");
  sel.replaceChildren(...names.map((n) => new Option(n, n, false, n === current)));
  sel.disabled = names.length < 2;
  sel.onchange = () => wg.run(`import webgrad\nwebgrad.set_backend(${JSON.stringify(sel.value)})`);
}

// the example selector; ?example=ID opens one, ?code=... opens that code
function showExamples() {
  const sel = $("example");
  sel.replaceChildren(...EXAMPLES.map((e) => new Option(e.title, e.id)));
  const code = params.get("code");
  if (code !== null) sel.add(new Option("(from the link)", ""), 0);
  sel.value = code !== null ? "" : (EXAMPLES.find((e) => e.id === params.get("example")) || EXAMPLES[0]).id;
  $("code").value = code ?? EXAMPLES.find((e) => e.id === sel.value).code;
  sel.onchange = () => {
    const example = EXAMPLES.find((e) => e.id === sel.value);
    if (example) $("code").value = example.code;
  };
}

async function main() {
  keepQuery();
  showExamples();
  const wg = await startWebgrad({ ...siteOptions(), onStatus: (text) => ($("status").textContent = text) });
  await showBackend(wg);
  wg.onMessage((msg) => {
    if (!busy()) return;
    if (msg.type === "stdout" || msg.type === "stderr") append(msg.type, msg.text);
    else if (msg.type === "post") onPost(msg.data);
  });
  $("run").onclick = () => run(wg);
  $("stop").onclick = () => stop(wg).catch(fail);
  $("code").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !$("run").disabled) { e.preventDefault(); run(wg); }
  });
  $("run").disabled = false;
  setState("ready", "ready");
}

function fail(err) {
  pg.error = String(err && err.message || err);
  setState("error", pg.state === "loading" ? "failed to start" : "failed");
  append("error", pg.error);
}

main().catch(fail);
