/**
 * The bench's HTML page: the drain curve and quota line it draws (pure), `--html`, its markup, and
 * the page in headless Chromium with a screenshot under .cache/report-test/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { benchCommand } from '../../../workbench/drivers/bench/command.js';
import { UsageError } from '../../../lib/cli/command.js';
import { committedSteps, drainCurveOf, quotaAt, quotaLine } from '../../../workbench/drivers/bench/curve.js';
import { benchCharts, renderBenchHtml } from '../../../workbench/drivers/bench/html.js';
import { assertChartsDrawn, assertCleanPage, HOSTILE, openPage, REPORT_TEST_DIR, useChromium, writePage } from './chromium.js';
import { sampleBenchInput } from './fixtures.js';

describe('bench drain curve and quota line', () => {
  it('sums each lane at its own limit until it runs out of jobs; the burst-aware line starts a minute ahead', () => {
    // Prepare: us 36 jobs at 12 per minute (3 minutes), eu 24 at 12 (2 minutes); a minute of 2 s.
    const lanes = [
      { lane: 'us', jobs: 36, requestsPerMinute: 12 },
      { lane: 'eu', jobs: 24, requestsPerMinute: 12 },
    ];
    // Act
    const line = quotaLine(lanes, 2000, 10_000);
    const burst = quotaLine(lanes, 2000, 10_000, true);
    // Assess
    assert.deepEqual(line, [
      { x: 0, y: 0 },
      { x: 4000, y: 48 },
      { x: 6000, y: 60 },
      { x: 10_000, y: 60 },
    ]);
    assert.deepEqual(burst, [
      { x: 0, y: 24 },
      { x: 2000, y: 48 },
      { x: 4000, y: 60 },
      { x: 10_000, y: 60 },
    ]);
    assert.equal(quotaAt(lanes, 2000, 1000), 12);
    assert.equal(quotaAt(lanes, 2000, 5000), 54);
  });

  it('counts each submitted job once, at its first commit, from the first submission', () => {
    // Prepare
    const submitted = [
      { jobId: 'a', lane: 'us', createdAt: 1000 },
      { jobId: 'b', lane: 'us', createdAt: 1000 },
      { jobId: 'c', lane: 'eu', createdAt: 1000 },
    ];
    const results = [
      { jobId: 'b', committedAt: new Date(4000).toISOString() },
      { jobId: 'a', committedAt: 2500 },
      { jobId: 'a', committedAt: 3000 },
      { jobId: 'other', committedAt: 1500 },
    ];
    const lanes = {
      us: { name: 'us', provider: { keys: [{ quotaOwner: 'k1' }, { quotaOwner: 'k2' }, { quotaOwner: 'k2' }], limits: { requestsPerMinute: 5 } } },
      eu: { name: 'eu', provider: { keys: [{ quotaOwner: 'k3' }], limits: { requestsPerMinute: 5 } } },
    } as unknown as Parameters<typeof drainCurveOf>[3];
    // Act
    const curve = drainCurveOf({ id: 'admission', label: '(c) admission' }, submitted, results, lanes, 3000);
    // Assess
    assert.deepEqual(curve.commitOffsetsMs, [1500, 3000]);
    assert.deepEqual(curve.lanes, [
      { lane: 'us', jobs: 2, requestsPerMinute: 10 },
      { lane: 'eu', jobs: 1, requestsPerMinute: 5 },
    ]);
    assert.deepEqual(committedSteps(curve.commitOffsetsMs), [
      { x: 0, y: 0 },
      { x: 1500, y: 1 },
      { x: 3000, y: 2 },
    ]);
    const thinned = committedSteps(
      Array.from({ length: 5000 }, (_, i) => i),
      100,
    );
    assert.equal(thinned.length, 101);
    assert.deepEqual(thinned.at(-1), { x: 4999, y: 5000 });
  });

  it('--html FILE is read; an empty path is a usage error', () => {
    // Act
    const options = benchCommand.parse(['--html', '.cache/bench/report.html']);
    // Assess
    assert.equal(options.html, '.cache/bench/report.html');
    assert.equal('html' in benchCommand.parse([]), false);
    assert.throws(() => benchCommand.parse(['--html', ' ']), UsageError);
  });
});

describe('renderBenchHtml: the markup', () => {
  it('has one chart for all strategies and one per strategy, with the quota line, and escapes labels', () => {
    // Prepare
    const input = sampleBenchInput({ label: HOSTILE });
    // Act
    const charts = benchCharts(input);
    const page = renderBenchHtml(input);
    // Assess
    assert.deepEqual(
      charts.map((c) => c.id),
      ['drain-all', 'drain-naive', 'drain-reschedule', 'drain-admission'],
    );
    assert.deepEqual(
      charts[1]!.series.map((s) => s.label),
      ['(a) naive committed', 'quota line (limit × t)', 'burst-aware line (limit × (1 minute + t))'],
    );
    assert.deepEqual(charts[1]!.series[1]!.data.slice(0, 3), [
      { x: 0, y: 0 },
      { x: 4, y: 48 },
      { x: 6, y: 60 },
    ]);
    assert.match(page, /data-charts-expected="4"/);
    assert.ok(!page.includes('<img') && !page.includes(HOSTILE), 'the hostile label is escaped');
    assert.ok(!/<script[^>]+src=/.test(page));
  });
});

describe('renderBenchHtml: in headless Chromium', () => {
  const browser = useChromium();

  it('draws every drain curve with no error and no network request, and saves a screenshot', { timeout: 60_000 }, async () => {
    // Prepare
    const input = sampleBenchInput();
    const file = writePage('bench-report.html', renderBenchHtml(input));
    // Act
    const check = await openPage(browser(), file, join(REPORT_TEST_DIR, 'bench-report.png'));
    // Assess
    assertCleanPage(check, file);
    assertChartsDrawn(check, 4);
  });

  it('shows a hostile strategy label as text: no element made, no script run', { timeout: 60_000 }, async () => {
    // Prepare
    const file = writePage('bench-report-hostile.html', renderBenchHtml(sampleBenchInput({ label: HOSTILE })));
    const probe = `({ images: document.querySelectorAll('img').length, shown: document.body.textContent.includes(${JSON.stringify(HOSTILE)}) })`;
    // Act
    const check = await openPage(browser(), file, join(REPORT_TEST_DIR, 'bench-report-hostile.png'), probe);
    // Assess
    assert.deepEqual(check.probe, { images: 0, shown: true });
    assert.deepEqual(check.dialogs, []);
    assert.deepEqual(check.pageErrors, []);
    assert.deepEqual(check.consoleErrors, []);
    assert.equal(check.chartsRendered, '4');
  });
});
