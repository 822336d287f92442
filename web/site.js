// Where the site's hashed assets are. This is the unbuilt default (the wheel under its stable name,
// Pyodide from the public CDN); `python -m webgrad.web.site` and `python -m webgrad.web.serve` write
// the built site's own, e.g. {pyodide: "./assets/pyodide-314.0.7-<hash>/", wheel: "./assets/webgrad-<hash>/webgrad-...whl"}.
export const SITE = {pyodide: null, wheel: "./webgrad.whl", snapshot: null};
