/**
 * `npm run eval` as a user runs it: a child process per release on its own local stack. The current
 * release's report names every field of both schemas by bucket beside the operations; a candidate
 * with a seeded regression of one field fails the gate (exit 1, that field alone), and a candidate
 * without one passes (exit 0). The live and batch lanes score the corpus as the queue lane does (the
 * fake model errs on the same documents whatever the lane), each with its own operations; against a
 * "real" provider given by URL with keys from the environment (here a separate fake provider, so the
 * wiring is proven without a network) every call lands there, with the given keys. The runs begin
 * together, two at a time (each keeps about one core busy), and each test awaits its own.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { scoredFields } from '../../../workbench/drivers/eval/score.js';
import { extractForSchema } from '../../../workbench/fake-provider/extractors/extractors.js';
import { startFakeProvider, type FakeProvider } from '../../../workbench/fake-provider/index.js';
import { EVAL_TEST_DIR, lastJson, runEvalCli, twoAtATime, type EvalCliRun } from '../../helpers/eval-cli.js';
import { externalRequests, launchChromium, openPage } from '../report/chromium.js';

const DIR = EVAL_TEST_DIR;

/** A provider that knows only these keys (the `--provider-url` run's). */
const EXTERNAL_KEYS = { us: { 'key-1': 'sk-us-one', 'key-2': 'sk-us-two' }, eu: { 'key-1': 'sk-eu-one', 'key-2': 'sk-eu-two' } };

describe('npm run eval', () => {
  const external: FakeProvider[] = [];
  let runs: Record<'current' | 'rc1' | 'rc2' | 'live' | 'batch' | 'external' | 'noKeys', Promise<EvalCliRun>>;
  after(async () => {
    await Promise.allSettled(Object.values(runs));
    await Promise.all(external.map((p) => p.stop()));
  });

  before(() => {
    rmSync(DIR, { recursive: true, force: true });
    mkdirSync(DIR, { recursive: true });
    const pair = twoAtATime();
    const current = pair(() => runEvalCli(['--release', '2026.11', '--out', `${DIR}/current.json`, '--json']));
    runs = {
      current,
      // The release id form, as a user gates a prompt change (its baseline is run too)
      rc1: pair(() => runEvalCli(['--release', '2026.12-rc1', '--baseline', '2026.11', '--json', '--html', `${DIR}/rc1.html`])),
      // Against the report the current release's run wrote
      rc2: pair(async () => {
        await current;
        return runEvalCli(['--release', '2026.12-rc2', '--baseline', `${DIR}/current.json`, '--json']);
      }),
      live: pair(() => runEvalCli(['--lane', 'live', '--json'])),
      batch: pair(() => runEvalCli(['--lane', 'batch', '--json'])),
      external: pair(async () => {
        // A provider that answers with the rule-based extractor alone
        const provider = await startFakeProvider({
          keys: Object.values(EXTERNAL_KEYS).flatMap((lane) => Object.values(lane).map((key) => ({ key }))),
          extract: (text, schemaName) => extractForSchema(text, schemaName),
          minuteMs: 6_000,
        });
        external.push(provider);
        return runEvalCli(['--provider-url', provider.baseUrl, '--minute-ms', '6000', '--json'], {
          RATELANE_US_PROVIDER_KEYS: JSON.stringify(EXTERNAL_KEYS.us),
          RATELANE_EU_PROVIDER_KEYS: JSON.stringify(EXTERNAL_KEYS.eu),
        });
      }),
      noKeys: pair(() => runEvalCli(['--provider-url', 'http://127.0.0.1:9/v1'], { RATELANE_US_PROVIDER_KEYS: '', RATELANE_PROVIDER_KEYS_FILE: '' })),
    };
  });

  it('reports per-field accuracy for every field of both schemas, by language, length, schema and region, beside the operations and the release', async () => {
    // Act
    const current = await runs.current;
    // Assess
    assert.equal(current.code, 0, current.stderr);
    const report = lastJson(current.stdout);
    assert.equal(report.release.id, '2026.11');
    assert.deepEqual(report.release.prompts, { 'invoice@1': 'invoice-extract@1', 'receipt@1': 'receipt-extract@1' });
    for (const schema of ['invoice@1', 'receipt@1']) {
      const fields = report.overall.fields.filter((f) => f.schemaVersion === schema);
      assert.deepEqual(
        fields.map((f) => f.field),
        scoredFields(schema),
      );
      assert.ok(fields.every((f) => f.total > 0 && f.accuracy !== null));
    }
    const bucketsOf = (dimension: string) => report.buckets.filter((b) => b.dimension === dimension).map((b) => b.bucket);
    assert.deepEqual(bucketsOf('language'), ['de', 'en', 'fr']);
    assert.deepEqual(bucketsOf('schema'), ['invoice@1', 'receipt@1']);
    assert.deepEqual(bucketsOf('region'), ['eu', 'us']);
    assert.equal(bucketsOf('length').length, 3);
    // The error model errs, so accuracy is neither perfect nor broken; nothing is lost.
    assert.ok(report.overall.wholeObjectAccuracy! > 0.5 && report.overall.wholeObjectAccuracy! < 1, String(report.overall.wholeObjectAccuracy));
    assert.equal(report.operations.lost, 0);
    assert.equal(report.operations.waiting, 0);
    assert.equal(
      report.operations.submitted,
      report.buckets.filter((b) => b.dimension === 'schema').reduce((n, b) => n + b.documents, 0) + report.overall.reviewExpected.total,
    );
    assert.ok(report.operations.latencyMs.p50 !== null && report.operations.queueAgeMs.p95 !== null && report.operations.attemptsPerCompletion !== null);
    assert.ok(report.tokens.inputTokens > 0 && report.tokens.costUsd !== null);
    assert.ok(report.overall.reviewExpected.total >= 4 && report.overall.reviewExpected.correct > 0);
    assert.match(current.stdout, /per-field accuracy/);
  });

  it('fails the gate on a candidate with a seeded regression of one field, and names that field alone', async () => {
    // Act
    const run = await runs.rc1;
    // Assess
    assert.equal(run.code, 1, run.stderr);
    const report = lastJson(run.stdout);
    assert.equal(report.baseline?.gate.passed, false);
    assert.deepEqual(
      report.baseline?.fields.filter((f) => f.regressed).map((f) => `${f.schemaVersion} ${f.field}`),
      ['invoice@1 currency'],
    );
    assert.match(run.stderr, /gate failed: invoice@1 currency/);
    assert.ok(
      report.baseline!.bucketRegressions.every((r) => r.field === 'currency'),
      'inside the buckets too, only currency regressed',
    );
    assert.ok(report.baseline!.tokens.candidateInput < report.baseline!.tokens.baselineInput, 'the shorter prompt spends fewer input tokens');
  });

  it("writes the run's HTML report, which renders every chart in headless Chromium without an error or a request", async () => {
    // Prepare
    await runs.rc1;
    const file = resolve(`${DIR}/rc1.html`);
    assert.ok(existsSync(file), 'the gated run wrote --html');
    const chromium = await launchChromium();
    try {
      // Act
      const check = await openPage(chromium.browser, file, resolve(`${DIR}/rc1.png`));
      // Assess
      assert.deepEqual([...check.consoleErrors, ...check.pageErrors, ...check.failedRequests], []);
      assert.deepEqual(externalRequests(check, file), []);
      assert.equal(check.chartsExpected, String(check.canvases.length));
      assert.equal(check.chartsRendered, check.chartsExpected);
      assert.ok(check.canvases.length >= 9 && check.canvases.every((c) => c.drawn));
      assert.match(readFileSync(file, 'utf8'), /REGRESSED/);
    } finally {
      await chromium.close();
    }
  });

  it('passes the gate on a candidate without a regression (against a report written earlier)', async () => {
    // Act
    const run = await runs.rc2;
    // Assess
    assert.equal(run.code, 0, run.stderr);
    const report = lastJson(run.stdout);
    assert.equal(report.baseline?.gate.passed, true);
    assert.equal(report.baseline?.baseline.id, '2026.11');
    const improved = report.baseline!.fields.filter((f) => (f.delta ?? 0) > 0).map((f) => f.field);
    assert.ok(improved.includes('issueDate'), `rc2 reads ambiguous dates better: ${improved.join(', ')}`);
  });

  it('the live and the batch lane score the corpus as the queue lane does, each with its own operations', async () => {
    // Act
    const [current, live, batch] = await Promise.all([runs.current, runs.live, runs.batch]);
    // Assess: beside the current release's queue-lane run
    for (const run of [current, live, batch]) assert.equal(run.code, 0, run.stderr);
    const [q, l, b] = [lastJson(current.stdout), lastJson(live.stdout), lastJson(batch.stdout)];
    assert.deepEqual(l.overall.fields, q.overall.fields, 'the fake model errs on the same documents whatever the lane');
    assert.deepEqual(b.overall.fields, q.overall.fields);
    assert.equal(l.lane, 'live');
    assert.equal(b.lane, 'batch');
    assert.equal(b.operations.unresolvedBatchItems, 0);
    assert.equal(q.operations.unresolvedBatchItems, null, 'the queue lane has no batch items');
    assert.match(batch.stderr, /batch: submitted 171 of 171 documents as 4 batch\(es\)/, 'one batch per lane and schema');
    assert.ok(b.tokens.costUsd! < q.tokens.costUsd!, 'the batch price is lower');
    for (const r of [l, b]) assert.equal(r.operations.lost + r.operations.deadLettered + r.operations.waiting, 0);
  });

  it('--provider-url sends every call to that provider with the keys from the environment, and no model error is injected there', async () => {
    // Act
    const run = await runs.external;
    const provider = external[0]!;
    // Assess
    assert.equal(run.code, 0, run.stderr);
    const report = lastJson(run.stdout);
    assert.ok(report.provider.includes(provider.baseUrl), report.provider);
    assert.ok(provider.stats().requests >= report.operations.submitted, `${provider.stats().requests} calls reached the given provider`);
    assert.equal(provider.stats().unauthorized, 0, 'only the given keys were used');
    assert.equal(report.overall.wholeObjectAccuracy, 1, 'the extractor alone is right on every document');
    assert.equal(report.overall.reviewExpected.correct, report.overall.reviewExpected.total);
  });

  it('--provider-url without keys in the environment stops with the variable to set', async () => {
    // Act
    const run = await runs.noKeys;
    // Assess
    assert.equal(run.code, 1);
    assert.match(run.stderr, /RATELANE_US_PROVIDER_KEYS/);
  });
});
