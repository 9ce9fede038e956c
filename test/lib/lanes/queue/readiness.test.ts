/**
 * What a first deploy and a real provider would break, on the consumer's side: a provider
 * secret not set yet or malformed, a revoked key, the invocation's own deadline, failures that must not
 * be silent, job age, a result DynamoDB cannot store. Each test runs the real handler on DynamoDB Local
 * and fauxqs; a message's delay is recorded and passes at once (`queue-time.ts`). The invocation
 * deadline cutting work in real time is `test/e2e/lanes/queue/readiness.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLaneAdmission } from '../../../../lib/admission/index.js';
import { ProviderKeyRing } from '../../../../lib/admission/keys/key-ring.js';
import type { LanePauseReason } from '../../../../lib/admission/model/store.js';
import type { LanePauseRequester } from '../../../../lib/admission/pause/lane-pause.js';
import { providerSecretCheck } from '../../../../lib/lanes/queue/configuration.js';
import { ProviderError } from '../../../../lib/providers/model.js';
import { roundRobinKeys } from '../../../../lib/admission/keys/key-pool.js';
import {
  correctOutput,
  englishDocuments,
  freshSqsClient,
  invoke,
  jobOf,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
} from '../../../helpers/consumer-harness.js';
import { skipDelays } from '../../../helpers/queue-time.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();

/** A lane pause that records its requests. */
function recordingPause(): LanePauseRequester & { requests: { until: Date; reason: LanePauseReason }[] } {
  const requests: { until: Date; reason: LanePauseReason }[] = [];
  return {
    requests,
    async requestPause(until, reason) {
      requests.push({ until, reason });
      return true;
    },
    async requestCapacity() {
      return undefined;
    },
  };
}

/** The parsed JSON log lines of a sink. */
const logLines = (lines: readonly string[]): Record<string, unknown>[] =>
  lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : []));

describe('consumer readiness: the provider secret', () => {
  it('an unset, then malformed secret pauses the lane for its configuration, fails no record and sends the batch back; a right secret runs it', async () => {
    // Prepare: two keys; the secret first holds what a new stack's secret holds (a generated password)
    const t = await newLane({
      provider: {
        keys: [
          { id: 'key-1', quotaOwner: 'org' },
          { id: 'key-2', quotaOwner: 'org' },
        ],
      },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 2, failureBaseSeconds: 1, failureCapSeconds: 5 },
    });
    const docs = englishDocuments(2);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#config` })),
    );
    let secret: unknown = 'Xq3!generated-password-not-json';
    const ring = new ProviderKeyRing(t.lane.provider.keys);
    const pause = recordingPause();
    const model = scriptedModel();
    // (the re-check delay is asked of SQS and recorded, not waited out)
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const { handler, sink } = testConsumer(t, model, {
      sqs,
      keys: roundRobinKeys(ring.keys),
      lanePause: pause,
      checkConfiguration: providerSecretCheck({ ring, readSecret: async () => secret }),
    });

    // Act 1: the unset secret
    const first = await receive(t, { max: 2, waitSeconds: 2 });
    const unset = await invoke(t, handler, first);
    // Act 2: a malformed one (JSON, but key-2 missing)
    secret = JSON.stringify({ 'key-1': 'sk-live-1' });
    const second = await receive(t, { max: 2 });
    const malformed = await invoke(t, handler, second);

    // Assess: nothing failed, no model call, the lane paused for its configuration each time
    assert.deepEqual(unset.response.batchItemFailures, []);
    assert.deepEqual(malformed.response.batchItemFailures, []);
    assert.equal(first.length, 2);
    assert.equal(second.length, 2, 'the records came back');
    assert.deepEqual(
      waits.delays.map((d) => [d.queueUrl, d.delaySeconds]),
      [t.queueUrl, t.queueUrl, t.queueUrl, t.queueUrl].map((url) => [url, 2]),
      'each batch sent back to the lane queue with the re-check delay (the throttle cap, 2 s)',
    );
    assert.deepEqual(
      second.map((m) => m.Attributes?.ApproximateReceiveCount),
      ['1', '1'],
      'sent back as new messages: no receive spent',
    );
    assert.equal(model.calls.length, 0);
    assert.deepEqual(
      pause.requests.map((r) => r.reason),
      ['configuration', 'configuration'],
    );
    assert.equal(sink.totals.total.ConfigurationError, 2);
    assert.equal(sink.totals.total.LaneWaitingForPerson, 2);
    const lines = logLines(sink.lines).filter((l) => l.reason === 'configuration' && l.level === 'ERROR');
    assert.equal(lines.length, 2);
    assert.match(String(lines[0]?.detail), /not JSON.*key ids key-1, key-2.*put-secret-value/);
    assert.match(String(lines[1]?.detail), /no value for key id key-2/);
    assert.ok(!sink.lines.some((l) => l.includes('sk-live-1') || l.includes('generated-password')), 'no secret in any log line');

    // Act 3: the secret is right: the same records run and commit
    secret = JSON.stringify({ 'key-1': 'sk-live-1', 'key-2': ' sk-live-2\n' });
    const third = await receive(t, { max: 2 });
    const fixed = await invoke(t, handler, third);
    sqs.destroy();

    // Assess
    assert.deepEqual(fixed.response.batchItemFailures, []);
    assert.equal(await t.results.count(), 2);
    assert.deepEqual(
      ring.keys.map((k) => k.secret),
      ['sk-live-1', 'sk-live-2'],
      'trimmed',
    );
    assert.equal(sink.totals.total.LaneWaitingForPerson, 2, 'a working invocation reports 0');
  });
});

describe('consumer readiness: a revoked key', () => {
  it('a 401 cools that key for auth while the other carries on; a replaced secret lifts it; every key out pauses the lane for a person', async () => {
    // Prepare: two keys of one owner, the shared pool on the lane's rate-state table; key-1's secret is revoked
    const t = await newLane({
      provider: {
        keys: [
          { id: 'key-1', quotaOwner: 'org' },
          { id: 'key-2', quotaOwner: 'org' },
        ],
      },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 1, failureBaseSeconds: 1, failureCapSeconds: 5 },
    });
    const docs = englishDocuments(4);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#auth` })),
    );
    let secret = { 'key-1': 'sk-revoked', 'key-2': 'sk-good' };
    const ring = new ProviderKeyRing(t.lane.provider.keys);
    const admission = createLaneAdmission({ lane: t.lane, dynamodb: t.clients.dynamodb, keys: ring.keys });
    // (a deferral's delay is recorded and passes at once on the consumer's virtual clock)
    const clock = virtualClock();
    const sqs = freshSqsClient(t);
    const waits = skipDelays(sqs);
    const revoked = new Set(['sk-revoked']);
    const usedKeys: string[] = [];
    const model = scriptedModel();
    const extract = model.extract.bind(model);
    model.extract = async (request) => {
      usedKeys.push(request.apiKey);
      if (revoked.has(request.apiKey)) throw new ProviderError('401', 'scripted', 401, { kind: 'auth', retryAfterMs: null, resetAt: null });
      return extract(request);
    };
    const pause = recordingPause();
    const { handler, sink } = testConsumer(t, model, {
      sqs,
      now: clock.now,
      sleep: clock.sleep,
      keys: admission.newPool(clock.nowMs, clock.sleep),
      lanePause: pause,
      checkConfiguration: providerSecretCheck({ ring, readSecret: async () => JSON.stringify(secret), store: admission.store }),
    });

    // Act 1: one job (round robin starts at key-1), then the other three
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));
    await invoke(t, handler, await receive(t, { max: 3, waitSeconds: 2 }));

    // Assess: key-1 answered 401 once, was cooled for auth (key scope, with its secret's fingerprint); key-2 committed the rest
    const cooldowns = await admission.store.readCooldowns(ring.keys);
    assert.equal(cooldowns.keys.get('key-1')?.reason, 'auth');
    assert.ok(cooldowns.keys.get('key-1')?.fingerprint, 'the refused secret is fingerprinted');
    assert.equal(cooldowns.owners.size, 0, 'the owner is not cooled: the other key carries on');
    assert.equal(usedKeys.filter((k) => k === 'sk-revoked').length, 1, 'the bad key is asked once');
    assert.equal(await t.results.count(), 3);
    assert.equal(sink.totals.total.AuthAlarm, 1);
    assert.equal(sink.totals.total.KeyCooldownAuth, 1);
    assert.equal(sink.totals.total.Failed ?? 0, 0, 'no job failed for a bad key');
    assert.equal(pause.requests.length, 0);

    // Act 2: the operator replaces key-1's secret; the next batch lifts its auth cooldown
    secret = { 'key-1': 'sk-rotated', 'key-2': 'sk-good' };
    assert.ok(waits.letDelaysPass(clock) > 0, 'the job was deferred with a delay');
    const [deferred] = await receive(t, { max: 1 });
    assert.ok(deferred, 'the deferred job comes back');
    await invoke(t, handler, [deferred]);

    // Assess
    assert.equal((await admission.store.readCooldowns(ring.keys)).keys.get('key-1'), undefined, 'lifted');
    assert.equal(await t.results.count(), 4);

    // Act 3: both keys revoked: every key out for auth pauses the lane for a person
    revoked.add('sk-rotated').add('sk-good');
    await submitTo(t, [{ text: docs[0]!.text, sourceId: `${docs[0]!.sourceId}#auth-2` }]);
    for (let i = 0; i < 2 && pause.requests.length === 0; i++) {
      waits.letDelaysPass(clock);
      const batch = await receive(t, { max: 1 });
      await invoke(t, handler, batch);
    }
    sqs.destroy();

    // Assess
    assert.deepEqual(
      pause.requests.map((r) => r.reason),
      ['auth'],
    );
    assert.ok(sink.totals.values.LaneWaitingForPerson?.includes(1), 'the invocation reports the lane waiting for a person');
  });
});

describe('consumer readiness: the invocation deadline', () => {
  it('starts no model call that cannot end in the invocation time: the record is sent back at once, no receive spent', async () => {
    // Prepare: a 2 s model call; the invocation has 1.5 s
    const t = await newLane();
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#no-time` }]);
    const model = scriptedModel();
    const { handler, sink } = testConsumer(t, model);

    // Act
    const out = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }), { timeoutMs: 1_500 });
    const [back] = await receive(t, { max: 1, waitSeconds: 2 });

    // Assess
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.equal(model.calls.length, 0);
    assert.equal(sink.totals.total.InvocationDeadlineDeferred, 1);
    assert.ok(back, 'sent back to come back at once');
    assert.equal(back.Attributes?.ApproximateReceiveCount, '1');
    assert.equal(jobOf(back).deferrals, 0, 'not a throttle');
    assert.equal(jobOf(back).attempt, 0, 'not a failure');
  });
});

describe('consumer readiness: what must be seen', () => {
  it('reports the age of the oldest job and the age at completion, and a lane not waiting for a person', async () => {
    // Prepare: a job created an hour ago (its createdAt travels across re-sends)
    const t = await newLane();
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#age` }]);
    const { handler, sink } = testConsumer(t, scriptedModel(), { now: () => new Date(Date.now() + 3_600_000) });

    // Act
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));

    // Assess
    const [oldest] = sink.totals.values.OldestJobAgeMs ?? [];
    const [atCompletion] = sink.totals.values.JobAgeAtCompletionMs ?? [];
    assert.ok(oldest !== undefined && oldest >= 3_600_000 && oldest < 3_700_000, `oldest ${oldest}`);
    assert.ok(atCompletion !== undefined && atCompletion >= 3_600_000, `at completion ${atCompletion}`);
    assert.deepEqual(sink.totals.values.LaneWaitingForPerson, [0]);
  });

  it('a result DynamoDB cannot store goes to review after one model call, not round the queue', async () => {
    // Prepare: a valid invoice whose seller name is 450 KB (over DynamoDB's 400 KB item)
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#huge` }]);
    const model = scriptedModel((call) => {
      const output = JSON.parse(correctOutput(call.text)) as { seller: { name: string } };
      output.seller.name = 'S'.repeat(450 * 1024);
      return { content: JSON.stringify(output) };
    });
    const { handler, sink } = testConsumer(t, model);

    // Act
    const out = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));

    // Assess
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.equal(model.calls.length, 1);
    assert.equal(await t.results.count(), 0);
    assert.equal(sink.totals.total.NeedsReview, 1);
    const entries = await t.ledger.entriesFor(item!.jobId);
    assert.deepEqual(
      entries.map((e) => [e.kind, e.reason]),
      [['needs_review', 'result_unstorable']],
    );
  });
});
