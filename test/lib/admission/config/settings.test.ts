/**
 * Admission's settings and errors: the bucket limits taken from a lane (less the safety margin, over
 * the given window), the settings refused, the output-token estimate learned from reported usage, and
 * errors that say what went wrong under their own names. The bucket arithmetic:
 * `bucket/token-bucket.test.ts`; the key pool and key choice: `decisions/choice.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NoProviderKeyError } from '../../../../lib/admission/keys/key-pool.js';
import { RateStateUnavailableError } from '../../../../lib/admission/dynamodb/rate-state.js';
import { admissionSettings, AdmissionSettingsError, bucketLimitsFor, learnOutputEstimate } from '../../../../lib/admission/config/settings.js';
import { resolveLanes } from '../../../../lib/config/lanes.js';
import { createLaneAdmission } from '../../../../lib/admission/index.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { RatelaneError } from '../../../../lib/platform/errors.js';

describe('admission: errors', () => {
  it('say what went wrong in terms a caller can act on, under their own names', () => {
    // Act
    const errors = [
      new AdmissionSettingsError('bad'),
      new NoProviderKeyError('none'),
      new RateStateUnavailableError('GetItem', 'rate-us', { cause: Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }) }),
    ];
    // Assess
    assert.deepEqual(
      errors.map((e) => [e instanceof RatelaneError, e.name, e.kind, e.retryable]),
      [
        [true, 'AdmissionSettingsError', 'config', false],
        [true, 'NoProviderKeyError', 'config', false],
        [true, 'RateStateUnavailableError', 'unavailable', true],
      ],
    );
    assert.equal(errors[2]!.message, 'GetItem on rate-state table rate-us failed: TimeoutError: socket hang up');
  });
});

describe('admission: settings', () => {
  it('takes the lane’s per-minute limits as its rate, its burst less the safety margin and its whole daily quota, over the given window', () => {
    // Prepare
    const lane = resolveLanes({ us: { provider: { limits: { requestsPerMinute: 60, tokensPerMinute: 10_000, requestsPerDay: 1000 } } } }).us!;
    // Act
    const limits = bucketLimitsFor(lane, admissionSettings({ safetyMargin: 0.1, windowMs: 6000, dayMs: 6000 * 1440 }));
    // Assess: and settings admission cannot work with are refused
    assert.deepEqual(limits, {
      requestsPerWindow: 60,
      tokensPerWindow: 10_000,
      burstShare: 0.9,
      windowMs: 6000,
      requestsPerDay: 1000,
      dayMs: 8_640_000,
      dailyWindow: 'fixed',
      dailyResetOffsetMs: 0,
    });
    assert.throws(() => admissionSettings({ safetyMargin: 0.9 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ windowMs: 0 }), AdmissionSettingsError);
    assert.equal(admissionSettings({ windowMs: undefined as unknown as number }).windowMs, 60_000, 'undefined keeps the default');
    assert.throws(() => admissionSettings({ outputTokenEstimateWeight: 1.5 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ outputTokenEstimateMin: 100, outputTokenEstimateMax: 50 }), AdmissionSettingsError);
    assert.throws(() => admissionSettings({ dailyWindow: 'hourly' as 'fixed' }), AdmissionSettingsError);
  });

  it('learns the output-token estimate as a weighted average of reported outputs, within bounds', () => {
    // Prepare
    const settings = admissionSettings();
    let estimate = settings.outputTokenEstimate;
    // Act: 60 calls answering with 150 output tokens
    for (let i = 0; i < 60; i++) estimate = learnOutputEstimate(estimate, 150, settings);
    // Assess
    assert.ok(Math.abs(estimate - 150) < 1, `converges to the real outputs: ${estimate}`);
    assert.equal(learnOutputEstimate(150, 1e9, settings), settings.outputTokenEstimateMax, 'one huge answer is bounded');
    assert.equal(learnOutputEstimate(17, 0, settings), settings.outputTokenEstimateMin, 'never below the minimum');
    assert.equal(learnOutputEstimate(150, Number.NaN, settings), 150, 'a report without a number changes nothing');
    assert.equal(learnOutputEstimate(512, 100, { ...settings, outputTokenEstimateWeight: 0 }), 512, 'weight 0: the fixed estimate');
  });

  it('prices a call with the lane’s expected output tokens until it learns real ones', () => {
    // Prepare
    const lane = resolveLanes({ us: { provider: { expectedOutputTokens: 180 } } }).us!;
    // Act
    const configured = createLaneAdmission({ lane, dynamodb: new DynamoDBClient({}), keys: [] });
    const overridden = createLaneAdmission({ lane, dynamodb: new DynamoDBClient({}), keys: [], settings: { outputTokenEstimate: 300 } });
    const unset = createLaneAdmission({ lane: resolveLanes({}).us!, dynamodb: new DynamoDBClient({}), keys: [] });
    // Assess: the lane's figure, unless the function's settings say otherwise; admission's own guess without one
    assert.deepEqual(
      [configured, overridden, unset].map((a) => a.settings.outputTokenEstimate),
      [180, 300, 512],
    );
    assert.throws(() => resolveLanes({ us: { provider: { expectedOutputTokens: 0 } } }), /expectedOutputTokens/);
  });
});
