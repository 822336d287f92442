// What webgrad's pages share: their query's shared settings, which links to the other pages keep
// (a page opened with ?pyodide=./pyodide/ keeps using the local Pyodide from page to page), and
// where the site's assets are (site.js, written by the site build).
import { PYODIDE_CDN } from "./webgrad.js";
import { SITE } from "./site.js";

export const params = new URLSearchParams(location.search);
export const $ = (id) => document.getElementById(id);

// query parameters that mean the same on every page; the others are one page's own (the demo's
// and the benchmark's `steps` differ), so links leave them behind
export const SHARED = ["pyodide"];

// Pyodide: the query's, else the site's own copy (a built site's hashed folder), else the CDN
export const pyodideUrl = () => params.get("pyodide") || SITE.pyodide || PYODIDE_CDN;
// the wheel: the built site's hashed copy (cached for good), else ./webgrad.whl
export const wheelUrl = () => SITE.wheel;
// the snapshot of Python's memory the site was built with ({url, stdlib}), which fits the site's own
// Pyodide only (null with ?pyodide=, or when the build made none)
export const siteSnapshot = () => (params.get("pyodide") ? null : SITE.snapshot || null);
// what every page passes to startWebgrad
export const siteOptions = () => ({ pyodideUrl: pyodideUrl(), wheelUrl: wheelUrl(), siteSnapshot: siteSnapshot() });

// links to this site's pages carry the shared settings of this page's query
export function keepQuery(root = document) {
  const shared = SHARED.filter((key) => params.has(key));
  for (const a of root.querySelectorAll("a[href]")) {
    const url = new URL(a.getAttribute("href"), location.href);
    if (url.origin !== location.origin || !url.pathname.endsWith(".html")) continue;
    for (const key of shared) url.searchParams.set(key, params.get(key));
    a.href = url.href;
  }
}

// a classic script (a UMD bundle), loaded once its tag is in the page
export function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = Object.assign(document.createElement("script"), { src, onload: resolve });
    s.onerror = () => reject(new Error(`loading ${src} failed`));
    document.head.append(s);
  });
}
