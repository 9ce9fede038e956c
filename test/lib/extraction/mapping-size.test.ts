import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LANES, type LaneConfig } from '../../../lib/config/lanes.js';
import { mappingSize, mappingSizeWarning } from '../../../lib/extraction/mapping-size.js';

const base = DEFAULT_LANES.us!;
const lane = (change: { maximumConcurrency?: number; batchSize?: number; owners?: number; requestsPerMinute?: number }): LaneConfig => ({
  ...base,
  consumer: { ...base.consumer, maximumConcurrency: change.maximumConcurrency ?? base.consumer.maximumConcurrency },
  queue: { ...base.queue, batchSize: change.batchSize ?? base.queue.batchSize },
  provider: {
    ...base.provider,
    keys: Array.from({ length: change.owners ?? 1 }, (_, i) => ({ id: `key-${i + 1}`, quotaOwner: `org-${i + 1}` })),
    limits: { ...base.provider.limits, requestsPerMinute: change.requestsPerMinute ?? base.provider.limits.requestsPerMinute },
  },
});

describe('the synth-time sizing check of the event source mapping', () => {
  it('lets the default lanes through: 5 x 10 records against about 225 the quota keeps busy', () => {
    // Act
    const size = mappingSize(base);
    // Assess: 500 rpm starts 16 records in the 2 s wait, and 208.3 are in 25 s calls at that rate
    assert.deepEqual(size, { held: 50, usable: 225, suggestedMaximumConcurrency: 22 });
    for (const l of Object.values(DEFAULT_LANES)) assert.equal(mappingSizeWarning(l), undefined, l.name);
  });

  it('warns from the first invocation past the bound, naming the numbers and the fix', () => {
    // Prepare
    const atBound = lane({ maximumConcurrency: 22 });
    const over = lane({ maximumConcurrency: 23 });
    // Act
    const warning = mappingSizeWarning(over);
    // Assess
    assert.equal(mappingSizeWarning(atBound), undefined, '220 records <= 225');
    assert.match(warning ?? '', /^lane us: the event source mapping holds up to 230 records \(consumer\.maximumConcurrency 23 x queue\.batchSize 10\)/);
    assert.match(warning ?? '', /1 quota owner\(s\) x 500 requests per minute\) keeps at most 225 busy/);
    assert.match(warning ?? '', /a record's 2\.0 s in-process wait.*provider timeout of 25\.0 s/);
    assert.match(warning ?? '', /Lower consumer\.maximumConcurrency to at most 22, or add quota owners$/);
  });

  it('counts each quota owner once: two keys of one owner add nothing, two owners double the bound', () => {
    // Prepare
    const sameOwner = {
      ...base,
      provider: {
        ...base.provider,
        keys: [
          { id: 'a', quotaOwner: 'o' },
          { id: 'b', quotaOwner: 'o' },
        ],
      },
    };
    // Act
    const one = mappingSize(sameOwner).usable;
    const two = mappingSize(lane({ owners: 2 })).usable;
    // Assess: 33 started in the wait + 417 in calls
    assert.equal(one, 225);
    assert.equal(two, 450);
  });

  it("never suggests fewer than AWS's two invocations, even when the quota keeps one record busy", () => {
    // Prepare: 1 request per minute keeps ceil(25 / 60) = 1 record in a call and starts none in the wait
    const tiny = lane({ requestsPerMinute: 1 });
    // Act
    const size = mappingSize(tiny);
    // Assess
    assert.deepEqual(size, { held: 50, usable: 1, suggestedMaximumConcurrency: 2 });
    assert.match(mappingSizeWarning(tiny) ?? '', /at most 2, or add quota owners$/);
  });
});
