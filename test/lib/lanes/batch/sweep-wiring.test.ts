/**
 * How the batch reconciler is wired from its lane and environment: the batch client per provider
 * (OpenAI's Batch API with the lane's first key from the secret, rebuilt only when the key changes;
 * Bedrock batch inference with the service role), refusals that name what to fix and never a secret,
 * the environment schema, and the names the stack and the function share.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { S3Client } from '@aws-sdk/client-s3';
import { ProviderSecretError } from '../../../../lib/admission/keys/key-ring.js';
import { batchProviderFactory, BatchReconcilerConfigurationError, BatchReconcilerEnvironmentSchema } from '../../../../lib/lanes/batch/reconciler-deps.js';
import { DEFAULT_LANES, type LaneConfig, type LaneOverride, resolveLanes } from '../../../../lib/config/lanes.js';
import {
  BATCH_METRICS,
  BATCH_SETTLED_METRICS,
  batchApiOf,
  batchDimensions,
  batchReconcileScheduleName,
  batchReconcilerFunctionName,
} from '../../../../lib/config/names.js';
import { ITEM_STATES } from '../../../../lib/store/manifest-model.js';

const s3 = new S3Client({ region: 'us-east-1' });
const laneWith = (override: LaneOverride): LaneConfig => resolveLanes({ us: override }).us!;
const twoKeys = laneWith({
  provider: {
    keys: [
      { id: 'batch-key', quotaOwner: 'org-a' },
      { id: 'other', quotaOwner: 'org-b' },
    ],
  },
});

describe('the batch reconciler’s batch client', () => {
  it('uses the lane’s first key from the secret for the OpenAI Batch API, and makes a new client only when that key changes', async () => {
    // Prepare
    let secret: unknown = JSON.stringify({ 'batch-key': 'sk-one', other: 'sk-other' });
    const providerFor = batchProviderFactory(twoKeys, { s3, readSecret: async () => secret });
    // Act
    const first = await providerFor();
    const again = await providerFor();
    secret = { 'batch-key': 'sk-two', other: 'sk-other' };
    const rotated = await providerFor();
    // Assess
    assert.equal(first.provider, 'openai');
    assert.equal(again, first, 'the same key: the same client');
    assert.notEqual(rotated, first, 'a rotated key: a new client');
  });

  it('refuses an unusable secret naming the key id, never a value', async () => {
    // Prepare
    const providerFor = batchProviderFactory(twoKeys, { s3, readSecret: async () => JSON.stringify({ other: 'sk-do-not-print' }) });
    // Act / Assess
    await assert.rejects(providerFor(), (error: unknown) => {
      assert.ok(error instanceof ProviderSecretError);
      assert.match(error.message, /no value for key id batch-key/);
      assert.doesNotMatch(error.message, /sk-do-not-print/);
      return true;
    });
  });

  it('runs Bedrock batch inference with the service role, in the lane’s region', async () => {
    // Prepare
    const lane = laneWith({ provider: { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' } });
    // Act
    const provider = await batchProviderFactory(lane, { s3, bedrockServiceRoleArn: 'arn:aws:iam::123456789012:role/batch' })();
    // Assess
    assert.equal(provider.provider, 'bedrock');
  });

  it('refuses what it cannot run, saying what to set: no secret, no service role, no batch client for the provider', () => {
    // Prepare
    const bedrock = laneWith({ provider: { kind: 'bedrock', model: 'anthropic.claude-3-haiku-20240307-v1:0' } });
    const anthropic = laneWith({ provider: { kind: 'anthropic', model: 'claude-sonnet-4-5' } });
    const refused = (lane: LaneConfig, pattern: RegExp) => () =>
      assert.throws(
        () => batchProviderFactory(lane, { s3 }),
        (error: unknown) => error instanceof BatchReconcilerConfigurationError && pattern.test(error.message),
      );
    // Act / Assess
    refused(twoKeys, /RATELANE_PROVIDER_SECRET_ARN is not set/)();
    refused(bedrock, /RATELANE_BATCH_SERVICE_ROLE_ARN is not set/)();
    refused(anthropic, /no batch client for provider anthropic; set batch\.enabled to false/)();
  });

  it('knows which providers have a batch API', () => {
    // Act / Assess
    const base = DEFAULT_LANES.us!.provider;
    assert.equal(batchApiOf(base), 'openai');
    assert.equal(
      batchApiOf({ ...base, kind: 'bedrock', auth: 'api-key' }),
      'bedrock',
      'batch jobs are created with the function role whatever the lane’s auth',
    );
    assert.equal(batchApiOf({ ...base, dialect: 'mistral' }), undefined);
    assert.equal(batchApiOf({ ...base, azure: { endpoint: 'https://x.openai.azure.com', deployment: 'd', apiVersion: '2024-10-21' } }), undefined);
    assert.equal(batchApiOf({ ...base, kind: 'gemini' }), undefined);
  });
});

describe('the batch reconciler’s environment and names', () => {
  it('accepts what the stack sets and refuses a missing lane or queue', () => {
    // Prepare
    const env = {
      RATELANE_LANE_CONFIG: JSON.stringify(DEFAULT_LANES.us),
      RATELANE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/123456789012/ratelane-us-jobs',
      RATELANE_BATCH_SERVICE_ROLE_ARN: 'arn:aws:iam::123456789012:role/batch',
      POWERTOOLS_LOG_LEVEL: 'warn',
      UNRELATED: 'ignored',
    };
    // Act
    const parsed = BatchReconcilerEnvironmentSchema.parse(env);
    // Assess
    assert.equal(parsed.POWERTOOLS_LOG_LEVEL, 'WARN');
    assert.equal(parsed.RATELANE_BATCH_SERVICE_ROLE_ARN, env.RATELANE_BATCH_SERVICE_ROLE_ARN);
    assert.equal(BatchReconcilerEnvironmentSchema.safeParse({ ...env, RATELANE_QUEUE_URL: undefined }).success, false);
    assert.equal(BatchReconcilerEnvironmentSchema.safeParse({ ...env, RATELANE_LANE_CONFIG: undefined }).success, false);
  });

  it('names the function, schedule and metrics per lane, with a settled metric for every state a pass settles an item in', () => {
    // Act / Assess
    assert.equal(batchReconcilerFunctionName('eu'), 'ratelane-eu-batch-reconciler');
    assert.equal(batchReconcileScheduleName('eu'), 'ratelane-eu-batch-reconcile');
    assert.deepEqual(batchDimensions({ name: 'eu', region: 'eu-central-1' }), { service: 'ratelane-batch-eu', lane: 'eu', region: 'eu-central-1' });
    const settled = Object.keys(BATCH_SETTLED_METRICS).sort();
    // `sending` is no settled state: an item passes through it on its way to `redriven`, and a pass counts it there.
    assert.deepEqual(settled, ITEM_STATES.filter((s) => s !== 'prepared' && s !== 'submitted' && s !== 'sending').sort());
    for (const name of Object.values(BATCH_SETTLED_METRICS)) assert.ok((BATCH_METRICS as readonly string[]).includes(name), name);
    assert.equal(new Set(BATCH_METRICS).size, BATCH_METRICS.length);
  });
});
