/**
 * The evaluation report's HTML page: its markup (every string escaped, the data embedded safely) and
 * the page itself in headless Chromium (every chart drawn, nothing requested from the network, no
 * error), with a screenshot under .cache/report-test/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { evalCharts, renderEvalHtml } from '../../../workbench/drivers/eval/html.js';
import { escapeHtml, histogram, html, jsonForScript } from '../../../workbench/drivers/html-page.js';
import { assertChartsDrawn, assertCleanPage, externalRequests, HOSTILE, openPage, REPORT_TEST_DIR, useChromium, writePage } from './chromium.js';
import { sampleEvalReport } from './fixtures.js';

describe('report pages: the shared helpers', () => {
  it('escapes every interpolated value, keeps nested templates, and embeds JSON that cannot close its script', () => {
    // Prepare
    const value = `<b a="1" b='2'>&</b>`;
    // Act
    const markup = html`<td>${value}</td>${html`<i>${value}</i>`}${[value, null, undefined, false]}`.value;
    const json = jsonForScript({ s: HOSTILE });
    // Assess
    assert.equal(escapeHtml(value), '&#60;b a=&#34;1&#34; b=&#39;2&#39;&#62;&#38;&#60;/b&#62;');
    assert.ok(!markup.includes('<b'), markup);
    assert.match(markup, /^<td>&#60;b .*<\/td><i>&#60;b .*<\/i>&#60;b .*&#62;$/);
    assert.ok(!json.includes('<') && !json.includes('>'));
    assert.deepEqual(JSON.parse(json), { s: HOSTILE });
  });

  it('bins whole numbers one per value and measures into equal bins', () => {
    // Act
    const attempts = histogram([1, 1, 2, 4], { integer: true });
    const latency = histogram([0, 50, 99, 100], { bins: 2 });
    // Assess
    assert.deepEqual(attempts, { labels: ['1', '2', '3', '4'], counts: [2, 1, 0, 1] });
    assert.deepEqual(latency.counts, [1, 3], 'bins [0, 50) and [50, 100], the most in the last');
    assert.deepEqual(histogram([]), { labels: [], counts: [] });
  });
});

describe('renderEvalHtml: the markup', () => {
  it('is one self-contained page: Chart.js inlined, no external URL, a strict CSP, the report as JSON', () => {
    // Prepare
    const report = sampleEvalReport();
    // Act
    const page = renderEvalHtml(report);
    // Assess
    assert.ok(page.length > 150_000, 'Chart.js is inlined');
    assert.ok(!/\b(src|href)="(https?:)?\/\//.test(page), 'no external src or href');
    assert.ok(!/<script[^>]+src=/.test(page), 'no external script');
    assert.match(page, /Content-Security-Policy" content="default-src &#39;none&#39;/);
    const data = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)?.[1];
    assert.deepEqual(JSON.parse(data!), report);
    assert.match(page, /r2026-11-30/);
    assert.match(page, /data-charts-expected="9"/);
    assert.match(page, /data-regressed="true"/);
    assert.match(page, /data-gate="failed"/);
  });

  it('draws a chart per bucketed dimension, the distributions, tokens, and the baseline only when there is one', () => {
    // Prepare
    const withBaseline = sampleEvalReport();
    const without = sampleEvalReport({ baseline: false });
    // Act
    const ids = evalCharts(withBaseline).map((c) => c.id);
    const idsWithout = evalCharts(without).map((c) => c.id);
    // Assess
    assert.deepEqual(ids, [
      'accuracy-language',
      'accuracy-length',
      'accuracy-schema',
      'accuracy-region',
      'latency',
      'queue-age',
      'attempts',
      'tokens',
      'baseline',
    ]);
    assert.deepEqual(idsWithout, ids.slice(0, -1));
    const language = evalCharts(withBaseline)[0]!;
    assert.equal(language.series.length, 3, 'one series per language bucket');
    assert.ok(language.labels!.includes('invoice@1 issueDate'), 'fields are "schemaVersion field"');
    assert.ok(!renderEvalHtml(without).includes('data-gate'));
  });

  it('escapes a hostile field name everywhere it appears', () => {
    // Prepare
    const report = sampleEvalReport({ fieldName: HOSTILE });
    // Act
    const page = renderEvalHtml(report);
    // Assess
    assert.ok(!page.includes('<img'), 'no img tag in the markup');
    assert.ok(!page.includes(HOSTILE));
    assert.ok(page.includes('&#60;/script&#62;&#60;img src=x onerror=alert(1)&#62;'), 'shown as text');
  });
});

describe('renderEvalHtml: in headless Chromium', () => {
  const browser = useChromium();

  it('draws every chart with no error and no network request, and saves a screenshot', { timeout: 60_000 }, async () => {
    // Prepare
    const report = sampleEvalReport();
    const expected = evalCharts(report).length;
    const file = writePage('eval-report.html', renderEvalHtml(report));
    // Act
    const check = await openPage(browser(), file, join(REPORT_TEST_DIR, 'eval-report.png'), 'document.querySelectorAll("[data-regressed]").length');
    // Assess
    assertCleanPage(check, file);
    assert.equal(expected, 9);
    assertChartsDrawn(check, expected);
    assert.ok((check.probe as number) >= 1, 'the regression is marked');
  });

  it('shows a hostile field name as text: no element made, no script run', { timeout: 60_000 }, async () => {
    // Prepare
    const report = sampleEvalReport({ fieldName: HOSTILE });
    const file = writePage('eval-report-hostile.html', renderEvalHtml(report));
    const probe = `({
      images: document.querySelectorAll('img').length,
      scripts: document.querySelectorAll('script').length,
      shown: document.body.textContent.includes(${JSON.stringify(HOSTILE)}),
      data: JSON.parse(document.getElementById('report-data').textContent).overall.fields[0].field
    })`;
    // Act
    const check = await openPage(browser(), file, join(REPORT_TEST_DIR, 'eval-report-hostile.png'), probe);
    // Assess
    assert.deepEqual(check.probe, { images: 0, scripts: 5, shown: true, data: HOSTILE });
    assert.deepEqual(check.dialogs, []);
    assert.deepEqual(check.pageErrors, []);
    assert.deepEqual(check.consoleErrors, []);
    assert.deepEqual(externalRequests(check, file), []);
    assert.equal(check.chartsRendered, check.chartsExpected);
  });
});
