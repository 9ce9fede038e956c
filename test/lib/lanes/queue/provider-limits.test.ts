/**
 * What a provider says of its limits, as the queue lane's consumer tells operators. An answer that states
 * lower per-minute limits than the lane's config: the consumer hands the figures to admission with the
 * call's usage (the owner's bucket keeps them), counts each such answer (`ProviderLimitsBelowConfig`, the
 * lane's alarm) and logs the figures once while they stay the same; figures at or above the config are
 * neither counted nor kept. Rate limits met again within three windows: admission cuts the owner's rates,
 * and the consumer counts the cut (`RateCut`) and logs it. The real handler on DynamoDB Local and fauxqs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admissionSettings, bucketLimitsFor } from '../../../../lib/admission/config/settings.js';
import { SharedKeyPool } from '../../../../lib/admission/drivers/shared-key-pool.js';
import type { ExtractionResponse, ModelAdapter } from '../../../../lib/providers/model.js';
import type { StatedLimits } from '../../../../lib/providers/stated-limits.js';
import {
  englishDocuments,
  invoke,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  throttle,
  trackedLanes,
  type TestLane,
} from '../../../helpers/consumer-harness.js';
import { MemoryRateStateStore } from '../../../helpers/memory-rate-state.js';

const newLane = trackedLanes();
const KEY = { id: 'key-1', quotaOwner: 'us-org', secret: 'sk-test-key-1' };

/** The scripted model, its answers stating `stated`. */
function statingModel(stated: StatedLimits): ModelAdapter {
  const model = scriptedModel();
  return { provider: model.provider, extract: async (request): Promise<ExtractionResponse> => ({ ...(await model.extract(request)), statedLimits: stated }) };
}

/** Three jobs through one invocation of a consumer whose admission keeps its buckets in `store`. */
async function consumeThree(t: TestLane, model: ModelAdapter, store: MemoryRateStateStore) {
  await submitTo(
    t,
    englishDocuments(3).map((d) => ({ text: d.text, sourceId: d.sourceId })),
  );
  const settings = admissionSettings({ probeFirstCalls: false, leaseCalls: 0 });
  const keys = new SharedKeyPool({ keys: [KEY], store, limits: bucketLimitsFor(t.lane, settings), settings });
  const consumer = testConsumer(t, model, { keys });
  const out = await invoke(t, consumer.handler, await receive(t, { max: 10, waitSeconds: 2 }));
  return { ...consumer, out };
}

describe('queue lane: limits the provider states on its answers', () => {
  it('keeps figures below the config in the owner bucket, counts every such answer and logs the figures once', async () => {
    // Prepare: answers stating half the configured requests a minute, and the configured tokens
    const t = await newLane();
    const { requestsPerMinute, tokensPerMinute } = t.lane.provider.limits;
    const store = new MemoryRateStateStore();
    // Act
    const { out, sink } = await consumeThree(t, statingModel({ requestsPerMinute: requestsPerMinute / 2, tokensPerMinute }), store);
    // Assess
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.equal(sink.totals.total.ModelCalls, 3, 'three jobs called');
    assert.equal(sink.totals.total.ProviderLimitsBelowConfig, 3, 'each answer counted');
    const lines = sink.lines.filter((l) => l.includes('the provider states lower limits'));
    assert.equal(lines.length, 1, 'logged once while the figures stay the same');
    assert.match(
      lines[0]!,
      new RegExp(`stated ${requestsPerMinute / 2} requests and ${tokensPerMinute} tokens a minute; configured ${requestsPerMinute} and ${tokensPerMinute}`),
    );
    const bucket = await store.readBucket(KEY.quotaOwner);
    assert.deepEqual([bucket?.statedRequests, bucket?.statedTokens], [requestsPerMinute / 2, undefined], 'the lower figure kept, the configured one not');
  });

  it('counts, logs and keeps nothing when the answers state the configured limits', async () => {
    // Prepare
    const t = await newLane();
    const { requestsPerMinute, tokensPerMinute } = t.lane.provider.limits;
    const store = new MemoryRateStateStore();
    // Act
    const { out, sink } = await consumeThree(t, statingModel({ requestsPerMinute, tokensPerMinute }), store);
    // Assess
    assert.deepEqual(out.response.batchItemFailures, []);
    assert.equal(sink.totals.total.ModelCalls, 3);
    assert.equal(sink.totals.total.ProviderLimitsBelowConfig ?? 0, 0);
    assert.equal(sink.lines.filter((l) => l.includes('the provider states lower limits')).length, 0);
    const bucket = await store.readBucket(KEY.quotaOwner);
    assert.deepEqual([bucket?.statedRequests, bucket?.statedTokens], [undefined, undefined]);
  });

  it("counts and logs a cut of the owner's rates when the provider refuses again within three windows, once a window", async () => {
    // Prepare: a provider that answers every call with a rate limit of 1 ms
    const t = await newLane();
    const store = new MemoryRateStateStore();
    const model = scriptedModel(() => throttle({ kind: 'rate_limit', retryAfterMs: 1 }));
    // Act
    const { sink } = await consumeThree(t, model, store);
    // Assess: the second 429 cut the rates to 3/4; later ones within the same window cut nothing more
    assert.ok((sink.totals.total.RateLimited ?? 0) >= 2, `${sink.totals.total.RateLimited} rate limits`);
    assert.equal(sink.totals.total.RateCut, 1);
    const lines = sink.lines.filter((l) => l.includes("the quota owner's rates cut"));
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /quota owner us-org: 75 % of provider\.limits/);
    assert.equal((await store.readBucket(KEY.quotaOwner))?.rateCut, 0.75);
  });
});
