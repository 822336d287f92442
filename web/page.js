// What webgrad's pages share: their query's shared settings, which links to the other pages keep
// (a page opened with ?pyodide=./pyodide/ keeps using the local Pyodide from page to page).
import { PYODIDE_CDN } from "./webgrad.js";

export const params = new URLSearchParams(location.search);
export const $ = (id) => document.getElementById(id);

// query parameters that mean the same on every page; the others are one page's own (the demo's
// and the benchmark's `steps` differ), so links leave them behind
export const SHARED = ["pyodide"];

export const pyodideUrl = () => params.get("pyodide") || PYODIDE_CDN;

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
