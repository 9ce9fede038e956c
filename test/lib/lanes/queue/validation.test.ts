/**
 * The consumer's checks of what the model answers, on the local stack through the eval harness
 * (test/helpers/consumer-harness.ts): validation with one repair call, needs_review after two invalid
 * answers, and no source text (nor the provider key) in any log line, metric, ledger entry or re-sent
 * message.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256Hex } from '../../../../lib/contract/job.js';
import { extractInvoice } from '../../../../workbench/fake-provider/extractors/invoice.js';
import {
  correctOutput,
  englishDocuments,
  invoke,
  queueCounts,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  throttle,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { inspectQueue } from '../../../helpers/queue-time.js';

const newLane = trackedLanes();

describe('consumer: validation', () => {
  it('garbage once then a valid answer: one repair call, committed, ledger validation_failed not_json', async () => {
    // Prepare
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#garbage` }]);
    const model = scriptedModel((call) => (call.callNo === 1 ? { content: 'Sure! Here is the invoice: {"invoiceNumber": ' } : undefined));
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1 }));

    // Assess
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(
      model.calls.map((c) => c.repair),
      [false, true],
      'one first call, one repair call',
    );
    const result = await t.results.get(item!.idempotencyKey);
    assert.equal(result?.modelCalls, 2);
    assert.deepEqual(result?.result, JSON.parse(correctOutput(doc!.text)));
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0]!.kind, 'validation_failed');
    assert.equal(ledger[0]!.parseStatus, 'not_json');
    assert.equal(ledger[0]!.schemaVersion, 'invoice@1');
    assert.equal(ledger[0]!.promptVersion, 'invoice-extract@1');
    assert.equal(ledger[0]!.attempt, 0);
    assert.equal(sink.totals.total.ValidationFailed, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.RateLimited, undefined, 'validation never takes the throttle path');
  });

  it('output that always breaks the schema ends needs_review after exactly 2 calls, each failure in the ledger', async () => {
    // Prepare: amounts as strings, a bad currency
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#invalid` }]);
    const bad = { ...extractInvoice(doc!.text), total: 'a lot', currency: 'euro' };
    const model = scriptedModel(() => ({ content: JSON.stringify(bad) }));
    const { handler, sink } = testConsumer(t, model);

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 1 }));

    // Assess
    assert.deepEqual(response.batchItemFailures, [], 'needs_review is terminal: acknowledged');
    assert.equal(model.calls.length, 2);
    assert.equal(await t.results.get(item!.idempotencyKey), undefined);
    const ledger = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      ledger.map((e) => e.kind),
      ['validation_failed', 'validation_failed', 'needs_review'],
    );
    for (const entry of ledger.slice(0, 2)) {
      assert.equal(entry.parseStatus, 'schema_invalid');
      assert.deepEqual([...(entry.failingFields ?? [])].sort(), ['currency', 'total']);
      assert.ok((entry.failingRules ?? []).length > 0);
    }
    assert.equal(sink.totals.total.ValidationFailed, 2);
    assert.equal(sink.totals.total.NeedsReview, 1);
    assert.equal(sink.totals.total.Completed, undefined);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
  });
});

describe('consumer: no source text in logs or metrics', () => {
  it('a sentinel in the documents and in model outputs never appears in a log line, metric or ledger entry', async () => {
    // Prepare: three documents carrying the sentinel in a line-item description
    const SENTINEL = 'SENTINEL-7f3a';
    const docs = englishDocuments(3).map((d) => {
      const description = d.expected.lineItems[0]!.description;
      assert.ok(d.text.includes(description));
      return { ...d, text: d.text.replace(description, `${description} ${SENTINEL}`) };
    });
    const t = await newLane();
    const submitted = await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#sentinel` })),
    );
    const [reviewSha, repairSha, throttleSha] = docs.map((d) => sha256Hex(d.text));
    const model = scriptedModel((call) => {
      const answer = extractInvoice(call.text);
      if (call.sha === reviewSha) {
        // not JSON, then schema-invalid: needs review
        return call.callNo === 1 ? { content: `Here you go: ${SENTINEL} {` } : { content: JSON.stringify({ ...answer, total: SENTINEL }) };
      }
      if (call.sha === repairSha && call.callNo === 1) {
        // domain-invalid (a line amount that does not add up), then correct
        const lineItems = answer.lineItems.map((l, i) => (i === 0 ? { ...l, amount: l.amount + 1 } : l));
        return { content: JSON.stringify({ ...answer, lineItems }) };
      }
      if (call.sha === throttleSha) return throttle({ kind: 'rate_limit', retryAfterMs: 1000 });
      return undefined;
    });
    const { handler, sink } = testConsumer(t, model, { logLevel: 'DEBUG' });

    // Act
    const { response } = await invoke(t, handler, await receive(t, { max: 3 }));

    // Assess: the paths ran (the sentinel reached the model and the committed result)...
    assert.deepEqual(response.batchItemFailures, []);
    assert.ok(model.calls.every((c) => c.text.includes(SENTINEL)));
    const committed = await t.results.get(submitted[1]!.idempotencyKey);
    assert.ok(JSON.stringify(committed?.result).includes(SENTINEL), 'the sentinel is in the committed result');
    assert.equal(sink.totals.total.NeedsReview, 1);
    assert.equal(sink.totals.total.Completed, 1);
    assert.equal(sink.totals.total.Deferred, 1);
    assert.equal(sink.totals.total.ValidationFailed, 3);
    // ...and it is in no captured line (log or EMF), and in no ledger entry
    assert.ok(sink.lines.length >= 6, `captured ${sink.lines.length} lines`);
    assert.equal(sink.unstructuredLines, 0);
    const leaking = sink.lines.filter((line) => line.includes(SENTINEL) || line.includes('SENTINEL'));
    assert.deepEqual(leaking, []);
    assert.deepEqual(
      sink.lines.filter((line) => line.includes('sk-test-key-1')),
      [],
      'nor the provider key',
    );
    const ledger = await t.ledger.scanAll();
    assert.ok(ledger.length >= 4);
    assert.deepEqual(
      ledger.filter((e) => JSON.stringify(e).includes(SENTINEL)),
      [],
    );
    // the deferred job's re-sent message carries no text either (read as fauxqs holds it: its delay is not waited out)
    const held = await inspectQueue(t.queueUrl);
    const [resent] = [...held.ready, ...held.delayed];
    assert.ok(resent && !resent.body.includes(SENTINEL));
  });
});
