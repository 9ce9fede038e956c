/**
 * What a first deploy and a real provider would break, on the consumer's side: a provider
 * secret not set yet or malformed, a revoked key, the invocation's own deadline, failures that must not
 * be silent, job age, a result DynamoDB cannot store. Each test runs the real handler on DynamoDB Local
 * and fauxqs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLaneAdmission } from '../../../../lib/admission/index.js';
import { ProviderKeyRing } from '../../../../lib/admission/keys/key-ring.js';
import type { LanePauseReason } from '../../../../lib/admission/model/store.js';
import type { LanePauseRequester } from '../../../../lib/admission/pause/lane-pause.js';
import { providerSecretCheck } from '../../../../lib/lanes/queue/configuration.js';
import { sha256Hex } from '../../../../lib/contract/job.js';
import { ProviderError } from '../../../../lib/providers/model.js';
import { roundRobinKeys } from '../../../../lib/admission/keys/key-pool.js';
import {
  correctOutput,
  documentOf,
  englishDocuments,
  invoke,
  queueCounts,
  jobOf,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  trackedLanes,
  waitUntil,
} from '../../../helpers/consumer-harness.js';

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
    const { handler, sink } = testConsumer(t, model, {
      keys: roundRobinKeys(ring.keys),
      lanePause: pause,
      checkConfiguration: providerSecretCheck({ ring, readSecret: async () => secret }),
    });

    // Act 1: the unset secret
    const first = await receive(t, { max: 2, waitSeconds: 2 });
    const unset = await invoke(t, handler, first);
    // Act 2: a malformed one (JSON, but key-2 missing)
    secret = JSON.stringify({ 'key-1': 'sk-live-1' });
    const second = await receive(t, { max: 2, waitSeconds: 4 });
    const malformed = await invoke(t, handler, second);

    // Assess: nothing failed, no model call, the lane paused for its configuration each time
    assert.deepEqual(unset.response.batchItemFailures, []);
    assert.deepEqual(malformed.response.batchItemFailures, []);
    assert.equal(first.length, 2);
    assert.equal(second.length, 2, 'the records came back after the re-check delay');
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
    const third = await receive(t, { max: 2, waitSeconds: 4 });
    const fixed = await invoke(t, handler, third);

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
      keys: admission.newPool(),
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
    const [deferred] = await receive(t, { max: 1, waitSeconds: 4 });
    assert.ok(deferred, 'the deferred job comes back');
    await invoke(t, handler, [deferred]);

    // Assess
    assert.equal((await admission.store.readCooldowns(ring.keys)).keys.get('key-1'), undefined, 'lifted');
    assert.equal(await t.results.count(), 4);

    // Act 3: both keys revoked: every key out for auth pauses the lane for a person
    revoked.add('sk-rotated').add('sk-good');
    await submitTo(t, [{ text: docs[0]!.text, sourceId: `${docs[0]!.sourceId}#auth-2` }]);
    for (let i = 0; i < 2 && pause.requests.length === 0; i++) {
      const batch = await receive(t, { max: 1, waitSeconds: 4 });
      await invoke(t, handler, batch);
    }

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

  it('cuts a model call still running when the work must stop, and sends its record back in the time left to wait about half a function timeout: no receive spent', async () => {
    // Prepare: two jobs; the model hangs on the first until its call is aborted
    const t = await newLane();
    const docs = englishDocuments(2);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#hang` })),
    );
    const hangOn = sha256Hex(docs[0]!.text);
    const aborted: boolean[] = [];
    const model = scriptedModel();
    const extract = model.extract.bind(model);
    model.extract = async (request) => {
      if (sha256Hex(documentOf(request)) !== hangOn) return extract(request);
      await new Promise<void>((resolve) => request.signal?.addEventListener('abort', () => resolve(), { once: true }));
      aborted.push(request.signal?.aborted ?? false);
      throw request.signal?.reason ?? new Error('aborted');
    };
    // (jitter 0: a record cut off mid-step waits half a function timeout, 2.5 s here, before it comes back)
    const { handler, sink } = testConsumer(t, model, { random: () => 0 });
    const messages = await receive(t, { max: 2, waitSeconds: 2 });
    const hanging = messages.find((m) => jobOf(m).input.contentSha256 === hangOn)!;

    // Act: the invocation has 4 s (a 2 s call fits), the first call never answers
    const out = await invoke(t, handler, messages, { timeoutMs: 4_000 });
    const waiting = await queueCounts(t);
    const [back] = await receive(t, { max: 1, waitSeconds: 5 });

    // Assess
    assert.ok(out.elapsedMs < 4_000, `returned after ${out.elapsedMs} ms, before Lambda's timeout`);
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.deepEqual(aborted, [true], 'the call saw its signal abort');
    assert.equal(await t.results.count(), 1);
    assert.equal(sink.totals.total.InvocationDeadlineDeferred, 1);
    assert.equal(sink.totals.total.RecordFailed ?? 0, 0);
    assert.deepEqual(waiting, { visible: 0, notVisible: 0, delayed: 1 }, 'the copy waits; nothing else is left');
    assert.equal(jobOf(back!).jobId, jobOf(hanging).jobId, 'sent back');
    assert.equal(back!.Attributes?.ApproximateReceiveCount, '1');
  });

  it('fails a record still unsettled when the time is up (a step that never returns): the batch returns in time, logged and counted', async () => {
    // Prepare: two jobs; the ledger's claim of the first never returns
    const t = await newLane();
    const docs = englishDocuments(2);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#stuck` })),
    );
    const messages = await receive(t, { max: 2, waitSeconds: 2 });
    const stuck = messages[0]!;
    const { handler, deps, sink } = testConsumer(t, scriptedModel());
    const claim = deps.ledger.claimJob.bind(deps.ledger);
    deps.ledger.claimJob = async (input) => (input.jobId === jobOf(stuck).jobId ? new Promise(() => undefined) : claim(input));

    // Act
    const out = await invoke(t, handler, messages, { timeoutMs: 4_000 });

    // Assess
    assert.ok(out.elapsedMs < 4_000, `returned after ${out.elapsedMs} ms, before Lambda's timeout`);
    assert.deepEqual(
      out.response.batchItemFailures.map((f) => f.itemIdentifier),
      [stuck.MessageId],
    );
    assert.equal(await t.results.count(), 1);
    assert.equal(sink.totals.total.RecordFailed, 1);
    assert.equal(sink.totals.total.RecordFailedDeadline, 1);
    const line = logLines(sink.lines).find((l) => l.message === 'record failed: SQS brings it back');
    assert.equal(line?.messageId, stuck.MessageId);
    assert.equal(line?.reason, 'invocation_deadline');
    assert.ok(line?.error);
  });

  it('acknowledges a record whose re-send succeeded even when the time runs out before it returns', async () => {
    // Prepare: a rate limit defers the job; the ledger line after the re-send never returns
    const t = await newLane();
    const [doc] = englishDocuments(1);
    await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#resent` }]);
    const model = scriptedModel(() => new ProviderError('429', 'scripted', 429, { kind: 'rate_limit', retryAfterMs: 1_000, resetAt: null }));
    const { handler, deps } = testConsumer(t, model);
    const record = deps.ledger.record.bind(deps.ledger);
    deps.ledger.record = async (entry) => (entry.kind === 'deferred' ? new Promise(() => undefined) : record(entry));

    // Act
    const out = await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }), { timeoutMs: 3_000 });

    // Assess: acknowledged (not failed back), and exactly one copy of the job waits in the queue
    assert.deepEqual(out.response.batchItemFailures, []);
    await waitUntil('the re-sent copy', async () => (await receive(t, { max: 2, waitSeconds: 2 })).length === 1, 5_000);
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
