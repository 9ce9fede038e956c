/**
 * Admission on the whole local stack over real time (moved from the unit and contract tier, which runs
 * on a virtual clock): a lane out of credit pauses after one call, makes no call for seconds while
 * paused, and commits every job once a person resumes it. Admission on DynamoDB Local one record at a
 * time: `test/lib/admission/admission-dynamodb.test.ts`; the local stack's load and daily-quota runs:
 * `test/e2e/run/admission.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveLanes } from '../../../lib/config/lanes.js';
import { startLocalStack } from '../../../workbench/local-stack/stack.js';
import { englishDocuments, queueCounts, submitTo, waitUntil, type TestLane } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../helpers/endpoints.js';

describe('admission: billing waits for a person', () => {
  it('an out-of-credit key pauses the lane after one call; a person resumes it and the jobs commit', async () => {
    // Prepare: one lane, one key without credit
    const lane = resolveLanes({
      us: {
        resources: uniqueLaneResources(),
        queue: { visibilityTimeoutSeconds: 12, receiveWaitTimeSeconds: 1, maxReceiveCount: 2 },
        consumer: { timeoutSeconds: 2, maximumConcurrency: 2 },
        backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 1, failureBaseSeconds: 1, failureCapSeconds: 1 },
        provider: { timeoutMs: 1000 },
      },
    }).us!;
    const secret = `sk-local-us-${lane.provider.keys[0]!.id}`;
    const stack = await startLocalStack({ lanes: { us: lane }, endpoints: testEndpoints(), provider: { outOfCreditKeys: [secret], seed: 3 } });
    try {
      const l = stack.lanes.us!;
      const t: TestLane = { ...l, destroy: () => undefined };
      const docs = englishDocuments(3);
      const items = await submitTo(
        t,
        docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#billing-${l.lane.resources.queueName}` })),
      );

      // Act 1: the lane pauses (billing: a day, unless a person resumes it)
      await waitUntil('the lane paused', () => l.pause?.state.paused === true, 10_000, 50);
      await new Promise((r) => setTimeout(r, 1500));
      const callsWhilePaused = stack.provider.stats().requests;
      await new Promise((r) => setTimeout(r, 1500));
      const m = stack.telemetry.totals.total;
      assert.equal(l.pause?.state.reason, 'billing');
      assert.equal(stack.provider.stats().requests, callsWhilePaused, 'no call while paused');
      assert.ok((m.BillingAlarm ?? 0) >= 1, 'billing alarm');
      assert.ok((m.LanePaused ?? 0) >= 1);
      assert.equal(await t.results.count(), 0);

      // Act 2: credit is back; a person resumes the lane
      stack.provider.setKeyOutOfCredit(secret, false);
      const { resumeLaneNow } = await import('../../../lib/cli/resume.js');
      const lifted = await resumeLaneNow({ store: l.admission!.store, controller: l.pause!, reasons: ['billing'] });
      assert.ok(
        lifted.some((x) => x.includes('(billing)')),
        lifted.join(', '),
      );
      await waitUntil('3 commits', async () => (await t.results.count()) >= 3, 20_000, 200).catch(async (e) => {
        for (const i of items) console.log(JSON.stringify((await t.ledger.entriesFor(i.jobId)).map((x) => [x.kind, x.reason, x.details])));
        console.log(JSON.stringify(l.pause?.state), JSON.stringify(await queueCounts(t)), l.poller?.state, JSON.stringify(stack.telemetry.totals.total));
        throw e;
      });
      await l.poller?.stop();

      // Assess: every job committed, none failed or dead-lettered
      const results = await t.results.scanAll();
      assert.deepEqual(new Set(results.map((r) => r.jobId)), new Set(items.map((i) => i.jobId)));
      assert.equal(stack.telemetry.totals.total.Failed, undefined);
      assert.deepEqual(await queueCounts(t, 'dlq'), { visible: 0, notVisible: 0, delayed: 0 });
    } finally {
      await stack.stop();
    }
  });
});
