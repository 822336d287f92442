// The start-up page: navigation -> first result read back, for webgrad (Pyodide in a worker, the
// `webgpu` backend) or, with ?lib=tfjs, for TensorFlow.js (its `webgpu` backend; its UMD bundles are
// served at ./tfjs/, a node_modules folder holding @tensorflow/tfjs and @tensorflow/tfjs-backend-webgpu).
// Times are ms since navigation start (performance.now()).
// window.__startup = {done, lib, backend, result, first_result_ms, ready_ms, phases, error}; phases are
// webgrad's start-up steps (wg.startup: ms since navigation when each ended); kept turns true once the
// worker has stored the site's files for the next visit (after the first result; see worker.js).
import { startWebgrad } from "./webgrad.js";
import { $, keepQuery, loadScript as script, params, siteOptions } from "./page.js";

const out = (window.__startup = { done: false, lib: params.get("lib") || "webgrad", backend: null, result: null,
                                  first_result_ms: null, ready_ms: null, phases: null, error: null, kept: false });

async function webgrad() {
  const wg = await startWebgrad({ ...siteOptions(), onStatus: (t) => ($("status").textContent = t) });
  wg.onMessage((m) => m.type === "kept" && (out.kept = true));
  out.ready_ms = performance.now();
  const r = await wg.run("import webgrad as wg\nprint(await (wg.ones(4) * 2).sum().read())");
  if (r.error) throw new Error(r.error);
  out.first_result_ms = performance.now();
  out.phases = wg.startup;
  out.backend = wg.backend.name;
  return r.stdout.trim();
}

async function tfjs() {
  const base = params.get("tfjs") || "./tfjs/";
  await script(`${base}@tensorflow/tfjs/dist/tf.min.js`);
  await script(`${base}@tensorflow/tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js`);
  const tf = globalThis.tf;
  if (!(await tf.setBackend("webgpu"))) throw new Error("TensorFlow.js: the webgpu backend did not start");
  await tf.ready();
  out.ready_ms = performance.now();
  const value = await tf.ones([4]).mul(2).sum().data();
  out.first_result_ms = performance.now();
  out.backend = tf.getBackend();
  return String(value[0]);
}

async function main() {
  keepQuery();
  $("lib").textContent = out.lib;
  const run = { webgrad, tfjs }[out.lib];
  if (!run) throw new Error(`unknown lib ${out.lib}: webgrad or tfjs`);
  out.result = await run();
  $("backend").textContent = out.backend;
  $("output").textContent = `${out.result}\nfirst result after ${out.first_result_ms.toFixed(0)} ms ` +
    `(ready after ${out.ready_ms.toFixed(0)} ms)`;
  $("status").textContent = "done";
  out.done = true;
}

main().catch((err) => {
  out.error = String(err && err.message || err);
  $("error").textContent = out.error;
  $("status").textContent = "failed";
  out.done = true;
});
