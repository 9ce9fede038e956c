import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_LANES, LaneConfigError, laneByName, resolveLanes } from '../../lib/config/lanes.js';

describe('lane config', () => {
  it('has us in us-east-1 and eu in eu-central-1 by default', () => {
    // Act
    const lanes = resolveLanes();
    // Assess
    assert.equal(lanes.us?.region, 'us-east-1');
    assert.equal(lanes.eu?.region, 'eu-central-1');
    assert.deepEqual(Object.keys(lanes), ['us', 'eu']);
  });

  it('renames the bucket with the region when a region is overridden', () => {
    const lanes = resolveLanes({ eu: { region: 'eu-west-1' } });
    assert.equal(lanes.eu?.resources.bucketName, 'ratelane-eu-source-eu-west-1');
    assert.equal(DEFAULT_LANES.eu?.region, 'eu-central-1');
  });

  it('rejects a batch size over SQS limit of 10', () => {
    assert.throws(() => resolveLanes({ us: { queue: { batchSize: 11 } } }), LaneConfigError);
  });

  it('rejects a visibility timeout under 6x the function timeout', () => {
    assert.throws(() => resolveLanes({ us: { queue: { visibilityTimeoutSeconds: 100 }, consumer: { timeoutSeconds: 60 } } }), /at least 6x/);
  });

  it('takes reserved concurrency only when it covers the mapping maximum concurrency', () => {
    assert.equal(resolveLanes().us?.consumer.reservedConcurrency, undefined);
    assert.equal(resolveLanes({ us: { consumer: { reservedConcurrency: 8, maximumConcurrency: 5 } } }).us?.consumer.reservedConcurrency, 8);
    assert.throws(() => resolveLanes({ us: { consumer: { reservedConcurrency: 3, maximumConcurrency: 5 } } }), /at least maximumConcurrency/);
  });

  it('rejects two lanes in one region and unknown lanes', () => {
    assert.throws(() => resolveLanes({ eu: { region: 'us-east-1' } }), /share a region/);
    assert.throws(() => resolveLanes({ ap: { region: 'ap-south-1' } }), /unknown lane/);
    assert.throws(() => laneByName(resolveLanes(), 'mars'), /unknown region lane "mars"; known lanes: us, eu/);
  });
});
