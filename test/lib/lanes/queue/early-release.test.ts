/**
 * Slowness must not amplify (#12): a record whose fate is written elsewhere — re-sent as a new message
 * or moved to the DLQ — has its original deleted at once by the consumer, not only by the event source
 * mapping after the batch returns. When Lambda then fails the whole batch (a timeout, a crash), the
 * original does not come back beside its copy. Each test invokes the handler and never applies its
 * batch response, as when the invocation dies after its records were settled. The two cases cut by the
 * invocation's own deadline in real time (a re-send answered late, a duplicate check answered late) are
 * `test/e2e/lanes/queue/early-release.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProviderKeyRing } from '../../../../lib/admission/keys/key-ring.js';
import { roundRobinKeys } from '../../../../lib/admission/keys/key-pool.js';
import { providerSecretCheck } from '../../../../lib/lanes/queue/configuration.js';
import { sha256Hex } from '../../../../lib/contract/job.js';
import {
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

const newLane = trackedLanes();

describe('consumer: a settled original is deleted at once', () => {
  it('a deferred record: when the invocation dies, its original is already gone; only the re-sent copy waits', async () => {
    // Prepare: three jobs; the model throttles the second for 30 s and answers the others
    const t = await newLane();
    const docs = englishDocuments(3);
    await submitTo(
      t,
      docs.map((d) => ({ text: d.text, sourceId: `${d.sourceId}#early-release` })),
    );
    const throttledSha = sha256Hex(docs[1]!.text);
    const model = scriptedModel((call) => (call.sha === throttledSha ? throttle({ kind: 'rate_limit', retryAfterMs: 30_000 }) : undefined));
    const { handler } = testConsumer(t, model);
    const messages = await receive(t, { max: 3, waitSeconds: 2 });

    // Act: the handler settles every record; its batch response is never applied
    const { response } = await invoke(t, handler, messages, { ack: false });
    const counts = await queueCounts(t);

    // Assess: nothing failed; the deferred job's original and the committed ones are gone
    assert.equal(messages.length, 3);
    assert.deepEqual(response.batchItemFailures, []);
    assert.equal(await t.results.count(), 2);
    assert.deepEqual(
      counts,
      { visible: 0, notVisible: 2, delayed: 1 },
      'in flight: only the two committed originals (they come back as duplicates, suppressed on receipt); the deferred original is gone',
    );
  });

  it('a batch sent back for the lane configuration: after the invocation dies, only the re-sent copies are left', async () => {
    // Prepare: two jobs; the provider secret is not set yet
    const t = await newLane();
    await submitTo(
      t,
      englishDocuments(2).map((d) => ({ text: d.text, sourceId: `${d.sourceId}#early-release-config` })),
    );
    const ring = new ProviderKeyRing(t.lane.provider.keys);
    const { handler } = testConsumer(t, scriptedModel(), {
      keys: roundRobinKeys(ring.keys),
      checkConfiguration: providerSecretCheck({ ring, readSecret: async () => 'generated-password' }),
    });
    const messages = await receive(t, { max: 2, waitSeconds: 2 });

    // Act
    const { response } = await invoke(t, handler, messages, { ack: false });

    // Assess: two delayed copies; no original in flight to come back
    assert.equal(messages.length, 2);
    assert.deepEqual(response.batchItemFailures, []);
    assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 2 });
  });
});
