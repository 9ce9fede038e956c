/**
 * `npm run bench -- --provider-share X`: the fake provider serves a share of each per-minute limit the lanes
 * are configured with, and the bounds are worked out on what it serves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../../lib/cli/command.js';
import { benchCommand } from '../../../../workbench/drivers/bench/command.js';
import { requestBound } from '../../../../workbench/drivers/bench/scenarios/bounds.js';
import { laneLoads } from '../../../../workbench/drivers/bench/scenarios/scenarios.js';
import { benchLanes, servedLanes, servedLimit } from '../../../../workbench/drivers/bench/strategies.js';

describe('npm run bench: --provider-share', () => {
  it('is absent by default, read as a share, and refused outside 0.1..1, with a scenario or with --write-docs', () => {
    // Act + Assess
    assert.equal('providerShare' in benchCommand.parse([]), false);
    assert.equal(benchCommand.parse(['--provider-share', '0.75']).providerShare, 0.75);
    assert.equal('providerShare' in benchCommand.parse(['--provider-share', '1']), false, 'the whole limit is the default');
    for (const share of ['0', '0.05', '1.5']) assert.throws(() => benchCommand.parse(['--provider-share', share]), UsageError, share);
    assert.throws(() => benchCommand.parse(['--provider-share', '0.75', '--scenario', 'uneven-tokens']), /the baseline only/);
    assert.throws(() => benchCommand.parse(['--provider-share', '0.75', '--write-docs']), /drop --write-docs/);
  });

  it('serves the share of every per-minute limit, at least one, and the bound is what the provider serves', () => {
    // Prepare: the bench's lanes, 2 keys of 8 requests per 3 s minute
    const lanes = benchLanes({ keys: 2, providerRpm: 8, providerTpm: 1_000_000, minuteMs: 3000 }, 't');
    const sent = Array.from({ length: 160 }, () => ({ lane: 'eu', document: { text: 'x', region: 'eu' } }));
    const plan = { outOfCreditKeyIds: [], boundKind: 'requests' as const };
    // Act
    const served = servedLanes(lanes, 0.75);
    const configured = requestBound(laneLoads(lanes, sent, plan), 3000).ms;
    const actual = requestBound(laneLoads(served, sent, plan), 3000).ms;
    // Assess: 6 of 8 requests a key; 160 jobs on 12 a minute after a burst of 12: 37 s, against 27 s
    assert.equal(served.eu!.provider.limits.requestsPerMinute, 6);
    assert.equal(served.eu!.provider.limits.tokensPerMinute, 750_000);
    assert.equal(servedLimit(1, 0.5), 1, 'at least one');
    assert.equal(servedLanes(lanes, 1), lanes, 'the whole limit: the lanes themselves');
    assert.equal(Math.round(configured), 27_000);
    assert.equal(Math.round(actual), 37_000);
  });
});
