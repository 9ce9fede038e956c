/**
 * The shared parts of ratelane's HTML reports: one self-contained page (no network: Chart.js from
 * node_modules is inlined, nothing loads from a CDN, a Content-Security-Policy forbids any fetch),
 * HTML escaping through the {@link html} tagged template, data embedded as JSON with `<` escaped, and a
 * small bootstrap that turns {@link ChartSpec}s into Chart.js charts.
 *
 * Each chart is a `<canvas data-chart="ID">`; the body carries `data-charts-expected` (the number of
 * specs) and, once the bootstrap ran, `data-charts-rendered` (the charts it drew), so a test can check
 * that every chart rendered.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** HTML that is already safe to insert as is (built by {@link html} or {@link rawHtml}). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes `&`, `<`, `>`, `"` and `'`: safe in element content and in quoted attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Marks trusted markup as safe (only for strings the code wrote itself, never report data). */
export function rawHtml(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Renders one interpolated value: safe HTML as is, arrays item by item, null/undefined/false as nothing, else escaped. */
function interpolate(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(interpolate).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/**
 * Tagged template for markup: every interpolated value is HTML-escaped unless it is {@link SafeHtml}
 * (the result of another `html` template), so report strings can never become markup.
 *
 * ```ts
 * html`<td>${field}</td>`; // field "<b>" renders as &#60;b&#62;
 * ```
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += interpolate(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>`, `&` and the JavaScript line
 * separators escaped as `\uXXXX`, so no string in it can close the element.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One series of a chart. */
interface ChartSeries {
  label: string;
  /** Values by category (bar, line on categories) or `{x, y}` points (line on a numeric x axis). */
  data: (number | null)[] | { x: number; y: number }[];
  /** CSS colour; default from the palette, by position. */
  color?: string;
  dashed?: boolean;
  /** Draw as steps (a count that jumps at each event). */
  stepped?: boolean;
}

/** A chart, as data: the bootstrap turns it into a Chart.js configuration. */
export interface ChartSpec {
  /** The canvas's `data-chart` value (unique in the page; written by code, not taken from report data). */
  id: string;
  type: 'bar' | 'line';
  title: string;
  /** Category labels (bar charts and category line charts). */
  labels?: string[];
  series: ChartSeries[];
  xTitle?: string;
  yTitle?: string;
  /** Numeric x axis (line charts of `{x, y}` points). */
  xLinear?: boolean;
  yMin?: number;
  yMax?: number;
  /** Bars touch (a histogram). */
  histogram?: boolean;
  /** Canvas height in CSS pixels (default 320). */
  height?: number;
}

/** The palette series take their colours from, in order (Okabe–Ito, readable by most colour-blind readers). */
export const PALETTE: readonly string[] = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];

let chartLibrary: string | undefined;

/**
 * Chart.js's UMD build, read from node_modules (resolved from this module) the first time it is
 * needed: its source map comment dropped and any `</script` neutralised, ready to inline.
 */
function chartLibrarySource(): string {
  if (chartLibrary === undefined) {
    const require = createRequire(import.meta.url);
    const dist = dirname(require.resolve('chart.js'));
    let source: string;
    try {
      source = readFileSync(join(dist, 'chart.umd.min.js'), 'utf8');
    } catch {
      source = readFileSync(join(dist, 'chart.umd.js'), 'utf8');
    }
    chartLibrary = source.replace(/\/\/# sourceMappingURL=\S+\s*$/, '').replace(/<\/(script)/gi, '<\\/$1');
  }
  return chartLibrary;
}

/** The canvas of one chart, in a figure with a fixed height. */
export function chartFigure(spec: ChartSpec): SafeHtml {
  return html`<figure class="chart" style="height:${spec.height ?? 320}px"><canvas data-chart="${spec.id}" role="img" aria-label="${spec.title}"></canvas></figure>`;
}

/** A table: a header row and rows of cells (strings are escaped; pass {@link SafeHtml} for markup). */
export function table(headers: readonly unknown[], rows: readonly (readonly unknown[])[], className = 'figures'): SafeHtml {
  return html`<table class="${className}"><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows.map(
    (row) => html`<tr>${row.map((cell) => html`<td>${cell}</td>`)}</tr>`,
  )}</tbody></table>`;
}

/** The bootstrap: draws every spec on its canvas, then sets `data-charts-rendered`. Plain ES5, inlined. */
const BOOTSTRAP = `(function () {
  var drawn = 0;
  try {
    var specs = JSON.parse(document.getElementById('chart-specs').textContent);
    var palette = JSON.parse(document.getElementById('chart-palette').textContent);
    if (typeof Chart !== 'function') throw new Error('Chart.js did not load');
    Chart.defaults.font.family = 'system-ui, sans-serif';
    specs.forEach(function (spec) {
      var canvas = null;
      document.querySelectorAll('canvas[data-chart]').forEach(function (c) { if (c.getAttribute('data-chart') === spec.id) canvas = c; });
      if (!canvas) { console.error('no canvas for chart ' + spec.id); return; }
      var datasets = spec.series.map(function (s, i) {
        var color = s.color || palette[i % palette.length];
        var d = { label: s.label, data: s.data, borderColor: color, backgroundColor: spec.type === 'bar' ? color + 'cc' : color,
          borderDash: s.dashed ? [6, 4] : [], stepped: s.stepped ? 'after' : false, pointRadius: 0,
          borderWidth: spec.type === 'line' ? 2 : 1 };
        if (spec.histogram) { d.barPercentage = 1; d.categoryPercentage = 1; }
        return d;
      });
      var scale = function (title, extra) { return Object.assign({ title: { display: !!title, text: title || '' } }, extra); };
      var y = { beginAtZero: true };
      if (typeof spec.yMin === 'number') y.min = spec.yMin;
      if (typeof spec.yMax === 'number') y.max = spec.yMax;
      try {
        new Chart(canvas, {
          type: spec.type,
          data: { labels: spec.labels, datasets: datasets },
          options: {
            animation: false, responsive: true, maintainAspectRatio: false,
            plugins: { title: { display: true, text: spec.title }, legend: { position: 'bottom' } },
            scales: {
              x: scale(spec.xTitle, spec.xLinear ? { type: 'linear', min: 0 } : {}),
              y: scale(spec.yTitle, y)
            }
          }
        });
        drawn += 1;
      } catch (e) { console.error('chart ' + spec.id + ' failed: ' + (e && e.message)); }
    });
  } catch (e) { console.error('charts failed: ' + (e && e.message)); }
  document.body.dataset.chartsRendered = String(drawn);
})();`;

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #1a1a1a; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; } h3 { font-size: 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.chart { position: relative; margin: 0.5rem 0 1.5rem; width: 100%; }
.bad { color: #b00020; font-weight: 600; } .good { color: #006b3c; font-weight: 600; }
.note { color: #555; font-size: 0.85rem; max-width: 60rem; }
`;

/** What {@link renderPage} needs. */
export interface PageInput {
  title: string;
  /** The page's content, already safe markup (build it with {@link html}). */
  body: SafeHtml;
  charts: readonly ChartSpec[];
  /** Data of the page, embedded as JSON in `<script type="application/json" id="report-data">` (optional). */
  data?: unknown;
}

/**
 * The whole page: a strict Content-Security-Policy (no fetch of any kind, inline script and style
 * only), the content, the data and chart specs as JSON, Chart.js inlined and the bootstrap.
 */
export function renderPage(input: PageInput): string {
  const csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(input.title)}</title>
<style>${STYLE}</style>
</head>
<body data-charts-expected="${input.charts.length}">
${input.body.value}
${input.data === undefined ? '' : `<script type="application/json" id="report-data">${jsonForScript(input.data)}</script>`}
<script type="application/json" id="chart-specs">${jsonForScript(input.charts)}</script>
<script type="application/json" id="chart-palette">${jsonForScript(PALETTE)}</script>
<script>${chartLibrarySource()}</script>
<script>${BOOTSTRAP}</script>
</body>
</html>
`;
}

/** A number for people: null as an en dash, else fixed to `digits` decimals. */
export function num(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/** A share (0..1) as a percentage, null as an en dash. */
export function pct(value: number | null | undefined, digits = 1): string {
  return value === null || value === undefined ? '–' : `${(value * 100).toFixed(digits)}%`;
}

/** Milliseconds for people: seconds from 10 s up. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

/** A histogram's bins: a label per bin and how many values fell in it. */
export interface Histogram {
  labels: string[];
  counts: number[];
}

/**
 * Bins `values` for a histogram: whole numbers (`integer`) one bin per value from the least to the
 * most; otherwise `bins` equal bins from 0 (or the least value, when negative) up to the most.
 */
export function histogram(values: readonly number[], options: { bins?: number; integer?: boolean; unit?: string } = {}): Histogram {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { labels: [], counts: [] };
  const lo = Math.min(0, ...finite);
  const hi = Math.max(...finite);
  if (options.integer) {
    const first = Math.floor(Math.min(...finite));
    const labels = Array.from({ length: Math.floor(hi) - first + 1 }, (_, i) => String(first + i));
    const counts = labels.map(() => 0);
    for (const v of finite) counts[Math.floor(v) - first]! += 1;
    return { labels, counts };
  }
  const bins = Math.max(1, options.bins ?? 20);
  const width = hi > lo ? (hi - lo) / bins : 1;
  const unit = options.unit ?? '';
  const labels = Array.from({ length: bins }, (_, i) => `${Math.round(lo + i * width)}–${Math.round(lo + (i + 1) * width)}${unit}`);
  const counts = labels.map(() => 0);
  for (const v of finite) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]! += 1;
  return { labels, counts };
}
