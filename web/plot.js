// Line plots on a canvas: the demo's loss curve and the series the playground's code posts.
//
//   drawLines(canvas, {loss: [0.9, 0.5, ...], acc: [...]}, {log: false, xMax: 0, caption: ""})
//
// One point per value, at x = its index; `log` draws log10 (decades labelled 1eN); `xMax` fixes the
// x range (else the longest series); a legend names the series when there are several.

export const COLORS = ["#3563e9", "#e8594f", "#2f9e44", "#b86bd6", "#e8a33d", "#1b9aaa"];
const PAD = 44, INK = "#5b6475", GRID = "#d9dde6";

// tick values from lo to hi: decades on a log axis, else steps of 1, 2 or 5 times a power of ten
function ticks(lo, hi, log) {
  if (log) {
    const top = Math.ceil(hi), bottom = Math.min(Math.floor(lo), top - 1);
    return Array.from({length: top - bottom + 1}, (_, i) => bottom + i);
  }
  if (hi - lo < 1e-12) [lo, hi] = [lo - 1, hi + 1];
  const raw = (hi - lo) / 4, unit = 10 ** Math.floor(Math.log10(raw));
  const step = unit * ([1, 2, 5].find((m) => m * unit >= raw) || 10);
  const first = Math.floor(lo / step), last = Math.ceil(hi / step);
  return Array.from({length: last - first + 1}, (_, i) => (first + i) * step);
}

const label = (v, log) => (log ? `1e${v}` : Number(v.toPrecision(6)).toString());

export function drawLines(canvas, series, {log = false, xMax = 0, caption = ""} = {}) {
  const g = canvas.getContext("2d"), W = canvas.width, H = canvas.height;
  g.clearRect(0, 0, W, H);
  g.strokeStyle = GRID;
  g.lineWidth = 1;
  g.strokeRect(PAD, 8, W - PAD - 8, H - PAD - 8);
  const lines = Object.entries(series).filter(([, values]) => values.length);
  if (!lines.length) return;
  const f = log ? (v) => Math.log10(Math.max(v, 1e-12)) : (v) => v;
  const ys = lines.map(([name, values]) => [name, values.map(f)]);
  const all = ys.flatMap(([, values]) => values).filter(Number.isFinite);
  const marks = ticks(all.reduce((a, b) => Math.min(a, b), Infinity), all.reduce((a, b) => Math.max(a, b), -Infinity), log);
  const [bottom, top] = [marks[0], marks.at(-1)];
  const n = Math.max(xMax, ...lines.map(([, values]) => values.length));
  const toX = (i) => PAD + (i / Math.max(n - 1, 1)) * (W - PAD - 8);
  const toY = (v) => 8 + ((top - v) / (top - bottom)) * (H - PAD - 16);
  g.fillStyle = INK;
  g.font = "11px system-ui, sans-serif";
  for (const m of marks) {
    g.fillText(label(m, log), 2, toY(m) + 4);
    g.beginPath(); g.moveTo(PAD, toY(m)); g.lineTo(W - 8, toY(m)); g.stroke();
  }
  if (caption) g.fillText(caption, W - 8 - g.measureText(caption).width, H - 10);
  g.lineWidth = 1.6;
  ys.forEach(([name, values], k) => {
    g.strokeStyle = g.fillStyle = COLORS[k % COLORS.length];
    g.beginPath();
    values.forEach((v, i) => (i ? g.lineTo(toX(i), toY(v)) : g.moveTo(toX(i), toY(v))));
    g.stroke();
    if (lines.length > 1) g.fillText(name, PAD + 8, 22 + 14 * k);
  });
  g.lineWidth = 1;
}
