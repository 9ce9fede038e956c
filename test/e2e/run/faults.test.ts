/**
 * Faults on the full local stack (poller, real consumer, fake provider over HTTP): the provider
 * answers 5xx or hangs past the call timeout, answers garbage or schema-invalid output, or a key runs
 * out of credit. After each, every job ends in exactly one known state: nothing lost, nothing
 * committed twice. The consumer dying, a service unavailable, one message on two consumers (on the
 * eval harness): faults-consumer.test.ts.
 *
 * Already covered elsewhere (not repeated here): a billing 429 on the eval harness, deferred by the
 * throttle cap with BillingAlarm (consumer-throttle.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveLanes, type LaneConfig, type LaneOverride } from '../../../lib/config/lanes.js';
import { operatorResume } from '../../../workbench/drivers/soak/inputs.js';
import { localKeySecret, startLocalStack, type LocalStack, type LocalStackOptions } from '../../../workbench/local-stack/stack.js';
import { englishDocuments, jobOf, queueCounts, receive, submitTo, waitUntil, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../helpers/endpoints.js';

function stackLane(override: LaneOverride = {}): LaneConfig {
  return resolveLanes({
    us: {
      ...override,
      resources: uniqueLaneResources(),
      queue: { visibilityTimeoutSeconds: 12, receiveWaitTimeSeconds: 1, ...override.queue },
      consumer: { timeoutSeconds: 2, maximumConcurrency: 2, ...override.consumer },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 1, failureBaseSeconds: 1, failureCapSeconds: 1, ...override.backoff },
      provider: { timeoutMs: 1000, ...override.provider },
    },
  }).us!;
}

async function withStack(
  lane: LaneConfig,
  options: Omit<LocalStackOptions, 'lanes' | 'endpoints'>,
  body: (stack: LocalStack, t: TestLane) => Promise<void>,
): Promise<void> {
  const stack = await startLocalStack({ lanes: { us: lane }, endpoints: testEndpoints(), ...options });
  try {
    await body(stack, { ...stack.lanes.us!, destroy: () => undefined });
  } finally {
    await stack.stop();
  }
}

describe('faults on the full local stack', () => {
  it('provider 5xx and timeouts: every receive fails with a visibility backoff, and the DLQ takes each job at maxReceiveCount with the reason in the ledger', async () => {
    // Prepare: every call is a 500/503 or hangs past the 400 ms call timeout; maxReceiveCount 2
    const lane = stackLane({ queue: { maxReceiveCount: 2 }, provider: { timeoutMs: 400 } });
    await withStack(lane, { provider: { faults: { serverError: 0.5, timeout: 0.5 }, seed: 11 } }, async (stack, t) => {
      const docs = englishDocuments(4);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#5xx` })),
      );

      // Act
      await waitUntil(
        '4 jobs in the DLQ',
        async () => {
          const dlq = await queueCounts(t, 'dlq');
          return dlq.visible + dlq.notVisible + dlq.delayed >= 4;
        },
        40_000,
        250,
      );
      await stack.lanes.us!.poller?.stop();

      // Assess
      const stats = stack.provider.stats();
      assert.ok(stats.faults.serverError > 0 && stats.faults.timeout > 0, `both faults drawn: ${JSON.stringify(stats.faults)}`);
      const m = stack.telemetry.totals.total;
      assert.equal(m.Failed, 8, 'two failed receives per job');
      assert.equal(m.RateLimited, undefined, 'a 5xx or a timeout is never a throttle');
      // A record may be deferred by admission while a key's first call hangs (it waits for that call's
      // answer only within its booking window), never for a throttle.
      assert.equal(m.Deferred ?? 0, m.AdmissionDenied ?? 0, 'every deferral is an admission denial');
      assert.equal(m.Completed, undefined);
      assert.equal(await t.results.count(), 0);
      for (const item of items) {
        const ledger = await t.ledger.entriesFor(item.jobId);
        for (const e of ledger.filter((e) => e.kind !== 'dead_letter_pending')) assert.deepEqual([e.kind, e.reason], ['deferred', 'admission_denied']);
        const dead = ledger.filter((e) => e.kind === 'dead_letter_pending');
        assert.deepEqual(
          dead.map((e) => e.receiveCount),
          [2],
          `ledger of ${item.jobId}`,
        );
        assert.ok(['overloaded', 'provider_error', 'transport_failure'].includes(dead[0]!.reason), dead[0]!.reason);
        assert.match(dead[0]!.details ?? '', /HTTP 50\d|timed out/);
      }
      const dead = await receive(t, { max: 10, queueUrl: t.dlqUrl, waitSeconds: 1 });
      assert.deepEqual(new Set(dead.map((d) => jobOf(d).jobId)), new Set(items.map((i) => i.jobId)));
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  it('garbage and schema-invalid answers from the provider: each job is ledgered twice, repaired once, and ends needs_review; none retried or dead-lettered', async () => {
    // Prepare: every answer is either not JSON or breaks the schema
    const lane = stackLane();
    await withStack(lane, { provider: { faults: { garbageJson: 0.5, schemaInvalid: 0.5 }, seed: 5 } }, async (stack, t) => {
      const docs = englishDocuments(4);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#garbage-stack` })),
      );

      // Act
      await waitUntil('4 jobs need review', async () => (stack.telemetry.totals.total.NeedsReview ?? 0) >= 4, 30_000, 200);
      await sleep(300);
      await stack.lanes.us!.poller?.stop();

      // Assess
      const stats = stack.provider.stats();
      assert.ok(stats.faults.garbageJson > 0 && stats.faults.schemaInvalid > 0, `both faults drawn: ${JSON.stringify(stats.faults)}`);
      assert.equal(stats.requests, 8, 'one call and one repair call per job');
      for (const item of items) {
        const ledger = await t.ledger.entriesFor(item.jobId);
        assert.deepEqual(
          ledger.map((e) => e.kind),
          ['validation_failed', 'validation_failed', 'needs_review'],
          `ledger of ${item.jobId}`,
        );
        for (const entry of ledger.slice(0, 2)) {
          assert.ok(['not_json', 'schema_invalid', 'domain_invalid'].includes(entry.parseStatus ?? ''), entry.parseStatus);
          assert.equal(entry.schemaVersion, 'invoice@1');
          assert.equal(entry.promptVersion, 'invoice-extract@1');
        }
      }
      const m = stack.telemetry.totals.total;
      assert.equal(m.NeedsReview, 4);
      assert.equal(m.ValidationFailed, 8);
      assert.equal(m.Failed, undefined);
      assert.equal(await t.results.count(), 0);
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });

  it('an out-of-credit key: jobs wait (deferred with a billing alarm, the lane paused when admission is on), none dead-lettered; once credit is back and the lane resumed, they commit', async () => {
    // Prepare: the lane's only key has no credit; maxReceiveCount 2 and a 1 s failure backoff, so a
    // failure path would dead-letter within a few seconds
    const lane = stackLane({ queue: { maxReceiveCount: 2 } });
    const secret = localKeySecret('us', lane.provider.keys[0]!.id);
    await withStack(lane, { provider: { outOfCreditKeys: [secret], seed: 3 } }, async (stack, t) => {
      const docs = englishDocuments(3);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#credit` })),
      );

      // Act 1: every job is told "not now"; then they wait longer than a failure path would take
      await waitUntil(
        'every job deferred',
        async () => {
          const ledgers = await Promise.all(items.map((i) => t.ledger.entriesFor(i.jobId)));
          return ledgers.every((entries) => entries.some((e) => e.kind === 'deferred'));
        },
        20_000,
        200,
      );
      await sleep(4000);
      const during = { ...stack.telemetry.totals.total };
      const callsDuring = stack.provider.stats().requests;
      const dlqDuring = await queueCounts(t, 'dlq');
      const queueDuring = await queueCounts(t);
      const committedDuring = await t.results.count();

      // Act 2: the bill is paid; an operator resumes the lane (ratelane resume: clears the billing cooldown)
      stack.provider.setKeyOutOfCredit(secret, false);
      await operatorResume(stack, 'us');
      await waitUntil('3 commits', async () => (await t.results.count()) >= 3, 30_000, 200).catch(async (error: unknown) => {
        const ledgers = await Promise.all(items.map((i) => t.ledger.entriesFor(i.jobId)));
        const trail = ledgers.map((entries) => entries.map((e) => `${e.kind}:${e.reason} (${e.details})`).join(' | ')).join('\n');
        throw new Error(`${(error as Error).message}; ledgers:\n${trail}`);
      });
      await sleep(300);
      await stack.lanes.us!.poller?.stop();

      // Assess: while out of credit, the jobs waited in the queue — no commit, no failure, nothing dead-lettered
      assert.equal(committedDuring, 0);
      assert.ok((during.BillingAlarm ?? 0) >= 1, 'a person was alarmed');
      assert.ok((stack.provider.stats().rateLimited.insufficient_quota ?? 0) >= 1);
      assert.equal(during.Failed, undefined, 'out of credit never takes the failure path');
      assert.deepEqual(dlqDuring, { visible: 0, notVisible: 0, delayed: 0 });
      assert.equal(queueDuring.visible + queueDuring.notVisible + queueDuring.delayed, 3, 'all three wait in the queue');
      if (stack.lanes.us!.admission) {
        // With admission, the key is cooled and the lane paused after the first billing 429: no call is spent to learn it again.
        assert.ok((during.LanePaused ?? 0) >= 1, `the lane paused: ${JSON.stringify(during)}`);
        assert.ok(callsDuring <= 3, `${callsDuring} calls while out of credit`);
      }
      // ...and committed once credit was back
      const results = await t.results.scanAll();
      assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(items.map((i) => i.jobId)));
      for (const r of results) {
        assert.equal(r.attempt, 0, 'no retry spent');
        assert.ok(r.deferrals >= 1);
      }
      for (const item of items) {
        const kinds = (await t.ledger.entriesFor(item.jobId)).map((e) => e.kind);
        assert.ok(!kinds.includes('dead_letter_pending'), kinds.join(', '));
      }
      assert.equal(stack.telemetry.totals.total.Failed, undefined);
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 0 });
    });
  });
});
