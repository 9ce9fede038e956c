/**
 * A call booked on a near slot waits for it in-process; when the instance learns during that wait that
 * the key's owner is cooling (another record's 429), the call is not made: admission is asked again and
 * the job takes another key, or is deferred without a call when none is left. Real handler, DynamoDB
 * Local and fauxqs; the key pool books the first take and records what it is asked. The wait runs on a
 * virtual clock (`virtual-clock.ts`): it moves the consumer's and the pool's time at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KeyAdmission, KeyPool, KeyUsage, ProviderKey } from '../../../../lib/admission/keys/key-pool.js';
import type { ModelAdapter } from '../../../../lib/providers/model.js';
import { englishDocuments, invoke, queueCounts, receive, scriptedModel, submitTo, testConsumer, trackedLanes } from '../../../helpers/consumer-harness.js';
import { virtualClock, type VirtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
const KEYS: ProviderKey[] = [
  { id: 'key-1', quotaOwner: 'us-org-1', secret: 'sk-test-key-1' },
  { id: 'key-2', quotaOwner: 'us-org-2', secret: 'sk-test-key-2' },
];
const BOOKED_MS = 300;
const COOLS_AFTER_MS = 100;

/**
 * A key pool on `clock` whose first take is booked `BOOKED_MS` ahead on key-1, whose owner this instance
 * learns is cooling `COOLS_AFTER_MS` into the wait; later takes get key-2 at once (`secondKeyFree`) or are denied.
 */
function bookingKeys(secondKeyFree: boolean, clock: VirtualClock): KeyPool & { taken: string[]; settled: Array<KeyUsage | null> } {
  const taken: string[] = [];
  const settled: Array<KeyUsage | null> = [];
  const settle = async (usage: KeyUsage | null) => {
    settled.push(usage);
  };
  return {
    size: KEYS.length,
    taken,
    settled,
    async acquire(): Promise<KeyAdmission> {
      if (taken.length === 0) {
        taken.push(KEYS[0]!.id);
        const coolsAt = clock.nowMs() + COOLS_AFTER_MS;
        const cooling = new Date(clock.nowMs() + 60_000);
        return {
          admitted: true,
          key: KEYS[0]!,
          startAt: new Date(clock.nowMs() + BOOKED_MS),
          settle,
          coolingUntil: () => (clock.nowMs() >= coolsAt ? cooling : undefined),
        };
      }
      if (!secondKeyFree) return { admitted: false, retryAt: new Date(clock.nowMs() + 5_000), detail: 'every key cooling' };
      taken.push(KEYS[1]!.id);
      return { admitted: true, key: KEYS[1]!, settle, coolingUntil: () => undefined };
    },
    keysLeftAfter: async () => undefined,
    cool: async () => undefined,
  };
}

/** The scripted model, also recording the secret of the key each call used. */
function keyRecordingModel(): ModelAdapter & { secrets: string[] } {
  const model = scriptedModel();
  const secrets: string[] = [];
  return {
    provider: model.provider,
    secrets,
    extract: (request) => {
      secrets.push(request.apiKey ?? '');
      return model.extract(request);
    },
  };
}

describe('a booked call whose key starts cooling during the wait', () => {
  it('is not made on that key: admission is asked again and the call goes to the key it gives', async () => {
    // Prepare: one job from the real producer
    const t = await newLane();
    const doc = englishDocuments(1)[0]!;
    await submitTo(t, [{ text: doc.text, sourceId: doc.sourceId }]);
    const clock = virtualClock({ at: Date.now() });
    const keys = bookingKeys(true, clock);
    const model = keyRecordingModel();
    const { handler, sink } = testConsumer(t, model, { keys, now: clock.now, sleep: clock.sleep });
    // Act
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));
    // Assess: one call, on key-2, after waiting for the booked slot; the booked grant given back unused
    assert.deepEqual(clock.slept, [BOOKED_MS]);
    assert.equal(sink.totals.total.Completed, 1);
    assert.deepEqual(model.secrets, ['sk-test-key-2']);
    assert.deepEqual(keys.taken, ['key-1', 'key-2']);
    assert.equal(keys.settled[0], null, 'the booked grant given back unused');
    assert.notEqual(keys.settled[1], null);
  });

  it('with no other key, defers the job without a call', async () => {
    // Prepare
    const t = await newLane();
    const doc = englishDocuments(2)[1]!;
    await submitTo(t, [{ text: doc.text, sourceId: doc.sourceId }]);
    const clock = virtualClock({ at: Date.now() });
    const keys = bookingKeys(false, clock);
    const model = keyRecordingModel();
    const { handler, sink } = testConsumer(t, model, { keys, now: clock.now, sleep: clock.sleep });
    // Act
    await invoke(t, handler, await receive(t, { max: 1, waitSeconds: 2 }));
    // Assess: no call after the booked slot's wait; the job is back on the queue, delayed
    assert.deepEqual(clock.slept, [BOOKED_MS]);
    assert.deepEqual(model.secrets, []);
    assert.equal(sink.totals.total.AdmissionDenied, 1);
    assert.equal(sink.totals.total.Completed, undefined);
    assert.deepEqual(keys.settled, [null]);
    assert.deepEqual(await queueCounts(t, 'queue'), { visible: 0, notVisible: 0, delayed: 1 });
  });
});
