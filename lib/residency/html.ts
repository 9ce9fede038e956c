/**
 * The residency map as one self-contained HTML page (`ratelane residency --html FILE`): no script runs,
 * nothing is fetched (a Content-Security-Policy forbids it), every string of the map is escaped through
 * the {@link html} tagged template, and the map itself is embedded as JSON that cannot close its element.
 * Flagged places are marked (`data-flagged`) in the lanes' tables and listed above them.
 */
import { describeSource, summaryLine } from './format.js';
import type { LaneResidency, ResidencyMap, ResidencyPlace } from './model.js';

/** Markup that is safe to insert as is (only {@link html} makes it). */
class SafeHtml {
  constructor(readonly value: string) {}
}

/** Escapes `&`, `<`, `>`, `"` and `'`: safe in element content and in quoted attribute values. */
function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** One interpolated value: markup from {@link html} as is, arrays item by item, null/undefined/false as nothing, anything else escaped. */
function interpolate(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(interpolate).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/** Tagged template for markup: every interpolated value is escaped unless it is another `html` template's result. */
function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += interpolate(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** JSON for a `<script type="application/json">` element: `<`, `>`, `&` and the line separators as `\uXXXX`. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1b1b1b; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 6px; }
p.summary { margin: 0 0 16px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid #d0d0d0; padding: 4px 6px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
th { background: #f2f2f2; white-space: nowrap; }
td:nth-child(1), td:nth-child(5), td:nth-child(6), td:nth-child(7) { white-space: nowrap; }
tr.flagged td { background: #fde8e4; }
td.no { color: #a3290f; font-weight: 600; }
ul.flagged { color: #a3290f; }
.ok { color: #0b6b3a; }
code { font-size: 12px; }
`;

/** The page's Content-Security-Policy: nothing may be fetched and no script may run. */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** One place's row. */
function placeRow(place: ResidencyPlace): SafeHtml {
  const flagged = !place.inLaneGeography;
  return html`<tr class="${flagged ? 'flagged' : 'inside'}"${flagged ? html` data-flagged="true"` : ''}><td>${place.kind}</td><td><code>${place.name}</code></td><td>${
    place.logicalId ?? '–'
  }</td><td>${place.holds}</td><td>${place.region ?? '–'}</td><td>${place.geography ?? '?'}</td><td class="${flagged ? 'no' : 'yes'}">${
    flagged ? 'no' : 'yes'
  }</td><td>${place.encryption}</td><td>${place.retention}</td></tr>`;
}

/** One lane's section: heading, flagged list, places table. */
function laneSection(lane: LaneResidency): SafeHtml {
  const flagged =
    lane.flagged.length === 0
      ? html`<p class="ok">Nothing flagged: every place is inside geography ${lane.geography}.</p>`
      : html`<ul class="flagged">${lane.flagged.map((f) => html`<li data-flag="${f.kind}"><strong>${f.kind} ${f.name}</strong>: ${f.why}</li>`)}</ul>`;
  return html`<section data-lane="${lane.lane}">
<h2>Lane ${lane.lane}: ${lane.region}, geography ${lane.geography}</h2>
<p>${describeSource(lane)}</p>
${flagged}
<table><thead><tr><th>kind</th><th>name</th><th>logical id</th><th>holds</th><th>region</th><th>geography</th><th>in lane</th><th>encryption</th><th>retention</th></tr></thead>
<tbody>${lane.places.map(placeRow)}</tbody></table>
</section>`;
}

/** The whole page of a residency map. */
export function renderResidencyHtml(map: ResidencyMap): string {
  const flagged = map.lanes.reduce((n, lane) => n + lane.flagged.length, 0);
  // No charts: the counts say so to a reader of the page (the report tests read them).
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>ratelane residency map</title>
<style>${STYLE}</style>
</head>
<body data-charts-expected="0" data-charts-rendered="0" data-flagged-count="${flagged}">
${
  html`<h1>Where a job's bytes go</h1>
<p class="summary">${summaryLine(map)}</p>
${map.lanes.map(laneSection)}`.value
}
<script type="application/json" id="residency-data">${jsonForScript(map)}</script>
</body>
</html>
`;
}
