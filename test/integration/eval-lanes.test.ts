/**
 * `npm run eval` through the live and batch lanes (the same corpus, the same release, the same fake
 * model: the same per-field figures as the queue lane; each lane's own operations), and against a
 * "real" provider given by URL with keys from the environment (here a separate fake provider, so the
 * wiring is proven without a network: every call lands there, with the given keys).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { extractForSchema } from '../../lib/local/fake-provider/extractors.js';
import { startFakeProvider, type FakeProvider } from '../../lib/local/fake-provider/index.js';
import { EVAL_TEST_DIR, lastJson, runEvalCli } from '../helpers/eval-cli.js';

describe('npm run eval: lanes and providers', () => {
  const external: FakeProvider[] = [];
  before(() => mkdirSync(EVAL_TEST_DIR, { recursive: true }));
  after(async () => {
    await Promise.all(external.map((p) => p.stop()));
  });

  it('the live and the batch lane score the corpus as the queue lane does, each with its own operations', async () => {
    // Act
    const queue = await runEvalCli(['--json']);
    const live = await runEvalCli(['--lane', 'live', '--json']);
    const batch = await runEvalCli(['--lane', 'batch', '--json']);
    // Assess
    for (const run of [queue, live, batch]) assert.equal(run.code, 0, run.stderr);
    const [q, l, b] = [lastJson(queue.stdout), lastJson(live.stdout), lastJson(batch.stdout)];
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
    // Prepare: a provider that knows only these keys, and answers with the rule-based extractor alone
    const keys = { us: { 'key-1': 'sk-us-one', 'key-2': 'sk-us-two' }, eu: { 'key-1': 'sk-eu-one', 'key-2': 'sk-eu-two' } };
    const provider = await startFakeProvider({
      keys: Object.values(keys).flatMap((lane) => Object.values(lane).map((key) => ({ key }))),
      extract: (text, schemaName) => extractForSchema(text, schemaName),
      minuteMs: 6_000,
    });
    external.push(provider);
    // Act
    const run = await runEvalCli(['--provider-url', provider.baseUrl, '--minute-ms', '6000', '--json'], {
      RATELANE_US_PROVIDER_KEYS: JSON.stringify(keys.us),
      RATELANE_EU_PROVIDER_KEYS: JSON.stringify(keys.eu),
    });
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
    const run = await runEvalCli(['--provider-url', 'http://127.0.0.1:9/v1'], { RATELANE_US_PROVIDER_KEYS: '', RATELANE_PROVIDER_KEYS_FILE: '' });
    // Assess
    assert.equal(run.code, 1);
    assert.match(run.stderr, /RATELANE_US_PROVIDER_KEYS/);
  });
});
