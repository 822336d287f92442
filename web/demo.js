// The demo page: start webgrad in a worker, run demo.py's train(), draw what it posts.
// State for tests and the curious: window.__demo = {state, losses, accuracy, backend, error, compiled}
// (compiled: the compiled training step's {traces, replays}, when done).
import { startWebgrad } from "./webgrad.js";
import { $, keepQuery, params, siteOptions } from "./page.js";
import { drawLines } from "./plot.js";

const demo = (window.__demo = { state: "loading", losses: [], accuracy: null, backend: null, error: null,
  compiled: null });

const COLORS = [[232, 89, 79], [47, 125, 225]];  // class 0, class 1 (style.css --class0/--class1)
let data = null;                                   // the last "data" message

function setState(state, text) {
  demo.state = state;
  document.body.dataset.state = state;
  if (text !== undefined) $("status").textContent = text;
}

function drawBoundary(probs) {
  const cv = $("boundary"), g = cv.getContext("2d"), W = cv.width, H = cv.height;
  g.clearRect(0, 0, W, H);
  if (!data) return;
  const n = data.grid, [lo, hi] = data.box;
  if (probs) {  // one pixel per grid point, scaled up smoothly
    const img = new ImageData(n, n);
    probs.forEach((p, k) => {
      COLORS[0].forEach((a, i) => (img.data[4 * k + i] = a + (COLORS[1][i] - a) * p));
      img.data[4 * k + 3] = 255 * (0.15 + 0.35 * Math.abs(2 * p - 1));
    });
    const small = new OffscreenCanvas(n, n);
    small.getContext("2d").putImageData(img, 0, 0);
    g.imageSmoothingEnabled = true;
    g.drawImage(small, 0, 0, W, H);
  }
  const toX = (v) => ((v - lo) / (hi - lo)) * W, toY = (v) => H - ((v - lo) / (hi - lo)) * H;
  data.points.forEach(([x, y], i) => {
    g.beginPath();
    g.arc(toX(x), toY(y), 3.2, 0, 2 * Math.PI);
    g.fillStyle = `rgb(${COLORS[data.labels[i]]})`;
    g.fill();
    g.strokeStyle = "white";
    g.lineWidth = 0.8;
    g.stroke();
  });
}

function drawLoss(losses, steps) {
  drawLines($("loss"), {loss: losses}, {log: true, xMax: steps, caption: losses.length ? `step ${losses.length} / ${steps}` : ""});
}

function onPost(msg) {
  if (msg.kind === "data") {
    data = msg;
    demo.losses = [];
    drawBoundary(null);
    drawLoss([], 1);
  } else if (msg.kind === "progress") {
    demo.losses.push(...msg.losses);
    demo.accuracy = msg.accuracy;
    $("progress").value = msg.step / msg.steps;
    $("status").textContent = `step ${msg.step} / ${msg.steps}, loss ${msg.losses.at(-1).toFixed(4)}`;
    $("accuracy").textContent = `training accuracy ${(100 * msg.accuracy).toFixed(1)}%`;
    drawBoundary(msg.probs);
    drawLoss(demo.losses, msg.steps);
  } else if (msg.kind === "done") {
    demo.compiled = { traces: msg.traces, replays: msg.replays };
  }
}

async function train(wg) {
  const steps = parseInt($("steps").value, 10), dataset = $("dataset").value;
  $("train").disabled = true;
  $("error").textContent = "";
  $("progress").value = 0;
  setState("training", "training…");
  const t0 = performance.now();
  const r = await wg.run(`import webgrad.web\nawait train(webgrad.web.post, dataset=${JSON.stringify(dataset)}, steps=${steps})`);
  if (r.error) throw new Error(r.error);
  setState("done", `done: ${steps} steps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  $("train").disabled = false;
}

// ?steps=N&data=moons choose the first run's settings (tests use a short run)
function applyParams() {
  for (const [key, id] of [["steps", "steps"], ["data", "dataset"]]) {
    const value = params.get(key), sel = $(id);
    if (value === null) continue;
    if (![...sel.options].some((o) => o.value === value)) sel.add(new Option(value, value));
    sel.value = value;
  }
}

async function main() {
  applyParams();
  keepQuery();
  const wg = await startWebgrad({
    ...siteOptions(),
    onStatus: (text) => ($("status").textContent = text),
  });
  demo.backend = wg.backend;
  $("backend").textContent = wg.backend.name;
  $("adapter").textContent = wg.backend.adapter || "(none)";
  wg.onMessage((msg) => msg.type === "post" && onPost(msg.data));
  const r = await wg.runFile("demo.py");
  if (r.error) throw new Error(r.error);
  $("train").onclick = () => train(wg).catch(fail);
  await train(wg);
}

function fail(err) {
  demo.error = String(err && err.message || err);
  setState("error", "failed");
  $("error").textContent = demo.error;
  $("train").disabled = false;
}

main().catch(fail);
