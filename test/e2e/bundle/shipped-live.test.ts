/**
 * The shipped live function (`ratelane-us-live`: its bundle from the `cdk.out` of a real offline synth,
 * run in its own Node process with the function's synthesized environment on the local services,
 * behind the local HTTP API stand-in: test/e2e/bundle/shipped-live-support.ts) answering callers: a text
 * document is committed once with the key from the lane's secret (200), the same request again is
 * answered from the results table without a model call (200 `duplicate`), a request for another
 * region is refused before any call (409), `GET` shows the committed job, and a daily quota spent at
 * the provider hands the job over to the lane's queue at once (202 pending) with the same job contract
 * and idempotency key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { hasOwnIdempotencyKey, idempotencyKeyFor, JOB_CONTRACT_VERSION, jobMessageAttributes, JobSchema, sha256Hex } from '../../../lib/contract/job.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION } from '../../../lib/contract/schemas/registry.js';
import { LIVE_ENV } from '../../../lib/platform/environment.js';
import { englishDocuments, queueCounts } from '../../helpers/consumer-harness.js';
import { SHIPPED_ACCOUNT } from '../../helpers/shipped-lane.js';
import { localCallerArn } from '../../../workbench/local-stack/lambda/http-adapter.js';
import {
  assertStubCallsSane,
  DAILY_KEY,
  dailyProvider,
  deployLiveLane,
  GOOD_KEY,
  inspectQueue,
  type LiveLane,
  metric,
  problems,
  provider,
  request,
  shipped,
  stub,
  useShippedLive,
} from './shipped-live-support.js';

useShippedLive();

/** A deadline that holds a cold start of the bundle on a busy machine (the lane allows up to 25 s). */
const DEADLINE_MS = 20_000;
const EXTRACTIONS = '/v1/extractions';
const EMPTY_QUEUE = { visible: 0, notVisible: 0, delayed: 0 };

/** The tenant of the local HTTP API's caller (its fixed IAM user). */
const CALLER_TENANT = localCallerArn(SHIPPED_ACCOUNT);

/** The idempotency key of a text document the local caller sends with the default versions. */
const keyOf = (sourceId: string, text: string) =>
  idempotencyKeyFor({
    sourceId,
    contentSha256: sha256Hex(text),
    promptVersion: DEFAULT_PROMPT_VERSION,
    schemaVersion: DEFAULT_SCHEMA_VERSION,
    tenant: CALLER_TENANT,
  });

describe('the shipped live bundle (cdk.out) behind the local HTTP API', () => {
  it('is the synthesized live function, its environment naming the lane queue and the provider secret', () => {
    // prepare
    const fn = shipped.function;
    const resourceOf = (name: string) => shipped.template.Resources[(fn.environment[name] as { Ref?: string }).Ref ?? ''];

    // assess
    assert.equal(fn.functionName, 'ratelane-us-live');
    assert.equal(fn.handler, 'index.handler');
    assert.ok(fn.timeoutSeconds < 30, `the function timeout (${fn.timeoutSeconds} s) stays below the HTTP API's 30 s`);
    assert.deepEqual(
      Object.keys(fn.environment).sort(),
      [
        'NODE_OPTIONS',
        LIVE_ENV.metricsNamespace,
        LIVE_ENV.logLevel,
        LIVE_ENV.serviceName,
        LIVE_ENV.laneConfig,
        LIVE_ENV.providerSecretArn,
        LIVE_ENV.queueUrl,
      ].sort(),
    );
    assert.equal(resourceOf(LIVE_ENV.queueUrl)?.Type, 'AWS::SQS::Queue');
    assert.equal(resourceOf(LIVE_ENV.queueUrl)?.Properties?.QueueName, 'ratelane-us-jobs', 'the hand-over goes to the lane queue, not the DLQ');
    assert.equal(resourceOf(LIVE_ENV.providerSecretArn)?.Type, 'AWS::SecretsManager::Secret');
  });

  describe('a text document', () => {
    const [doc] = englishDocuments(1);
    const sourceId = `${doc!.sourceId}#shipped-live`;
    const body = { text: doc!.text, sourceId, deadlineMs: DEADLINE_MS };
    let t: LiveLane;
    let jobId: string;
    let committed: Record<string, unknown>;

    before(async () => {
      t = await deployLiveLane(provider, GOOD_KEY);
    });
    after(() => t?.close());

    it('POST → 200 committed with the result, once, in the results table', async () => {
      // prepare
      stub.clearCalls();
      const successes = provider.stats().perKey[GOOD_KEY]?.successes ?? 0;

      // act
      const answer = await request(t, 'POST', EXTRACTIONS, body);

      // assess
      const why = problems(answer.invocation);
      assert.equal(answer.status, 200, `${JSON.stringify(answer.body)}\n${why}`);
      assert.equal(answer.body.status, 'committed');
      assert.equal(answer.body.attempts, 1);
      assert.equal(answer.body.duplicate, undefined);
      assert.ok(answer.body.result && typeof answer.body.result === 'object', 'the answer carries the result');
      jobId = String(answer.body.jobId);
      committed = answer.body.result as Record<string, unknown>;
      const results = await t.results.scanAll();
      assert.equal(results.length, 1);
      assert.equal(results[0]?.jobId, jobId);
      assert.equal(results[0]?.idempotencyKey, keyOf(sourceId, doc!.text));
      assert.deepEqual(results[0]?.result, committed, 'the table holds the result the caller got');
      assert.equal((provider.stats().perKey[GOOD_KEY]?.successes ?? 0) - successes, 1, 'one model call, with the key from the secret');
      assert.equal(metric(answer.invocation, 'LiveCommitted'), 1, why);
      assert.equal(metric(answer.invocation, 'LiveOverDeadline'), 0);
      assert.deepEqual(
        stub.callsOf('secretsmanager').map((c) => [c.operation, c.input.SecretId]),
        [['GetSecretValue', t.secretArn]],
      );
      assert.deepEqual(await queueCounts(t), EMPTY_QUEUE, 'nothing handed over');
      assertStubCallsSane(t);
    });

    it('the same POST again → 200 committed, duplicate, without a model call', async () => {
      // prepare
      assert.ok(jobId, 'runs after the commit');
      const calls = provider.stats().requests;

      // act
      const answer = await request(t, 'POST', EXTRACTIONS, body);

      // assess
      assert.equal(answer.status, 200, `${JSON.stringify(answer.body)}\n${problems(answer.invocation)}`);
      assert.equal(answer.body.status, 'committed');
      assert.equal(answer.body.duplicate, true);
      assert.equal(answer.body.attempts, 0);
      assert.equal(answer.body.jobId, jobId, 'the job that committed it');
      assert.deepEqual(answer.body.result, committed);
      assert.equal(provider.stats().requests - calls, 0, 'no provider request');
      assert.equal(await t.results.count(), 1, 'the results table still holds one item');
      assert.equal(metric(answer.invocation, 'DuplicateSuppressed'), 1);
      assert.deepEqual(await queueCounts(t), EMPTY_QUEUE);
      assertStubCallsSane(t);
    });

    it('POST with region "eu" → 409 region_mismatch, without a model call', async () => {
      // prepare
      const calls = provider.stats().requests;

      // act
      const answer = await request(t, 'POST', EXTRACTIONS, { ...body, sourceId: `${sourceId}#eu`, region: 'eu' });

      // assess
      assert.equal(answer.status, 409, `${JSON.stringify(answer.body)}\n${problems(answer.invocation)}`);
      assert.equal(answer.body.status, 'rejected');
      assert.equal(answer.body.reason, 'region_mismatch');
      assert.equal(provider.stats().requests - calls, 0, 'no provider request');
      assert.equal(metric(answer.invocation, 'RegionMismatch'), 1);
      assert.equal(metric(answer.invocation, 'LiveRejected'), 1);
      assert.equal(await t.results.count(), 1, 'nothing stored');
      assert.deepEqual(await queueCounts(t), EMPTY_QUEUE, 'nothing handed over');
    });

    it('GET /v1/extractions/{jobId} → 200 committed with the result', async () => {
      // prepare
      assert.ok(jobId, 'runs after the commit');
      const calls = provider.stats().requests;

      // act
      const answer = await request(t, 'GET', `${EXTRACTIONS}/${encodeURIComponent(jobId)}`);

      // assess
      assert.equal(answer.status, 200, `${JSON.stringify(answer.body)}\n${problems(answer.invocation)}`);
      assert.equal(answer.body.status, 'committed');
      assert.equal(answer.body.jobId, jobId);
      assert.equal(answer.body.committedBy, jobId);
      assert.equal(answer.body.idempotencyKey, keyOf(sourceId, doc!.text));
      assert.deepEqual(answer.body.result, committed);
      assert.equal(provider.stats().requests - calls, 0);
    });
  });

  describe('the provider’s daily quota spent', () => {
    const docs = englishDocuments(2);
    let t: LiveLane;

    before(async () => {
      t = await deployLiveLane(dailyProvider, DAILY_KEY);
    });
    after(() => t?.close());

    it('429 with a reset about a day away → 202 pending at once, the job on the lane queue with the same contract and key', async () => {
      // prepare: the day's only request goes to a first document (committed)
      const spent = await request(t, 'POST', EXTRACTIONS, { text: docs[0]!.text, sourceId: `${docs[0]!.sourceId}#day`, deadlineMs: DEADLINE_MS });
      assert.equal(spent.status, 200, `${JSON.stringify(spent.body)}\n${problems(spent.invocation)}`);
      const sourceId = `${docs[1]!.sourceId}#quota`;
      const text = docs[1]!.text;
      const was = dailyProvider.stats().perKey[DAILY_KEY]!;
      const askedAt = Date.now();

      // act
      const answer = await request(t, 'POST', EXTRACTIONS, { text, sourceId, deadlineMs: DEADLINE_MS });

      // assess: the answer
      const why = `${JSON.stringify(answer.body)}\n${problems(answer.invocation)}`;
      assert.equal(answer.status, 202, why);
      assert.equal(answer.body.status, 'pending');
      assert.equal(answer.body.reason, 'quota_exhausted', why);
      const jobId = String(answer.body.jobId);
      const eligibleAt = Date.parse(String(answer.body.eligibleAt));
      assert.ok(eligibleAt >= askedAt + 12 * 3_600_000, `eligible at the daily reset, not sooner: ${String(answer.body.eligibleAt)}`);
      assert.match(String(answer.body.statusUrl), new RegExp(`^https://[^/]+\\.execute-api\\.us-east-1\\.amazonaws\\.com/v1/extractions/${jobId}$`));
      assert.equal(answer.headers.get('location'), answer.body.statusUrl);
      const now = dailyProvider.stats().perKey[DAILY_KEY]!;
      assert.equal(now.requests - was.requests, 1, 'one call: the quota wait is not waited out in the request');
      assert.equal(now.rateLimited.rpd - was.rateLimited.rpd, 1, 'answered 429 requests per day');
      assert.equal(metric(answer.invocation, 'LivePending'), 1, why);
      assert.equal(metric(answer.invocation, 'LiveInRequestRetries'), 0);
      assert.equal(metric(answer.invocation, 'LiveOverDeadline'), 0);
      assert.equal(await t.results.count(), 1, 'only the first document is committed');

      // assess: the job on the lane queue (delayed: SQS hides it, so it is read with fauxqs's inspection)
      assert.deepEqual(await queueCounts(t), { visible: 0, notVisible: 0, delayed: 1 });
      assert.deepEqual(await queueCounts(t, 'dlq'), EMPTY_QUEUE);
      const { delayed } = await inspectQueue(t);
      assert.equal(delayed.length, 1);
      const job = JobSchema.parse(JSON.parse(delayed[0]!.body));
      assert.equal(job.contractVersion, JOB_CONTRACT_VERSION);
      assert.equal(job.jobId, jobId);
      assert.equal(job.region, 'us');
      assert.equal(job.idempotencyKey, keyOf(sourceId, text), 'the same idempotency key as the request');
      assert.ok(hasOwnIdempotencyKey(job));
      assert.equal(job.input.sourceId, sourceId);
      assert.equal(job.input.bucket, t.lane.resources.bucketName);
      assert.equal(job.eligibleAt, answer.body.eligibleAt);
      assert.equal(job.attempt, 0, 'a throttle is not a failure');
      assert.deepEqual(delayed[0]!.messageAttributes, jobMessageAttributes(job));
      assert.equal((delayed[0]!.delayUntil ?? 0) - delayed[0]!.sentTimestamp, 900_000, 'hidden for SQS’s longest delay (the queue lane hops until the reset)');
      const stored = await t.clients.s3.send(new GetObjectCommand({ Bucket: job.input.bucket, Key: job.input.key }));
      assert.equal(sha256Hex(await stored.Body!.transformToString('utf8')), job.input.contentSha256, 'the document is stored where the job says');
      assertStubCallsSane(t);

      // act + assess: the caller's status URL shows it pending
      const status = await request(t, 'GET', `${EXTRACTIONS}/${encodeURIComponent(jobId)}`);
      assert.equal(status.status, 200, JSON.stringify(status.body));
      assert.equal(status.body.status, 'pending');
      assert.equal(status.body.eligibleAt, answer.body.eligibleAt);
    });
  });
});
