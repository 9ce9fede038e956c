/**
 * What the live API takes from a caller and what it tells one, through the handler as the live function
 * runs it (DynamoDB Local and fauxqs, a scripted model, a virtual clock): a body that is not UTF-8 text
 * (raw bytes, base64 or as API Gateway decoded them; a JSON string holding a lone surrogate) is refused
 * before any model call and before any job exists; only JSON is taken (415 otherwise); a deadline below
 * the lane's minimum is refused, naming it; every answer that is not a result carries a stable code and
 * the job id once a job exists, never a key id, an error class or an SDK message (those stay in the logs).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { S3Client } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LiveDeps } from '../../../../lib/lanes/live/deps.js';
import { statusResponse } from '../../../../lib/lanes/live/status.js';
import { StoreUnavailableError } from '../../../../lib/store/errors.js';
import { englishDocuments, queueCounts, scriptedModel, throttle, trackedLanes, type TestLane } from '../../../helpers/consumer-harness.js';
import { liveContext, livePost, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();

/** A key id that must never reach a caller. */
const KEY_ID = 'key-internal-7';

/** A live handler of `t`'s lane on a virtual clock; its model, telemetry and deps. */
function liveHandler(t: TestLane, options: { model?: ReturnType<typeof scriptedModel>; queueUrl?: string; s3?: S3Client } = {}) {
  const clock = virtualClock();
  const model = options.model ?? scriptedModel(undefined, { now: clock.nowMs });
  const { handler, deps, sink } = testLiveHandler(t, { ...options, model, clock, keyId: KEY_ID });
  const context = liveContext(t);
  const call = async (event: APIGatewayProxyEventV2) => answerOf(await handler(event, context));
  return { call, model, sink, deps };
}

/** `POST /v1/extractions` with these headers (JSON by default). */
function post(body: string | Buffer, headers?: Record<string, string>): APIGatewayProxyEventV2 {
  return livePost(body, { requestId: 'req-caller-input', ...(headers ? { headers } : {}) });
}

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  raw: string;
  body: Record<string, unknown>;
}

function answerOf(response: APIGatewayProxyStructuredResultV2): Answer {
  const raw = String(response.body);
  return { statusCode: response.statusCode ?? 0, headers: (response.headers ?? {}) as Record<string, unknown>, raw, body: JSON.parse(raw) };
}

/** Nothing of a job: no message on the lane's queue, no ledger line, no result. */
async function assertNoJob(t: TestLane): Promise<void> {
  const counts = await queueCounts(t);
  assert.equal(counts.visible + counts.notVisible + counts.delayed, 0, 'no message on the queue');
  assert.equal((await t.results.scanAll()).length, 0, 'no result');
}

/** The names an error class or SDK exception goes by in a body. */
const ERROR_CLASS = /\b[A-Z][A-Za-z]*(Error|Exception|DoesNotExist|Denied)\b/;

describe('live API: text that is not UTF-8 is refused before any model call', () => {
  const [doc] = englishDocuments(1);
  const json = (text: string) => `{"text":"${text}","sourceId":"strict-text"}`;

  it('raw 0xFF 0xFE bytes in the body (base64, or as API Gateway decoded them to U+FFFD) and a lone surrogate: 400 not_text, no model call, no job', async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveHandler(t);
    const rawBytes = Buffer.concat([Buffer.from('{"text":"Invoice '), Buffer.from([0xff, 0xfe]), Buffer.from(' total 10 EUR","sourceId":"strict-bytes"}')]);
    // Act
    const answers = [
      await call(post(rawBytes)),
      await call(post(rawBytes.toString('utf8'))),
      await call(post(json('Invoice \\ud800 total 10 EUR'))),
      await call(post(json('\\udc00'))),
      await call(post('{"text":"Invoice total 10 EUR","sourceId":"\\ud83d"}')),
    ];
    // Assess
    for (const answer of answers) {
      assert.equal(answer.statusCode, 400, answer.raw);
      assert.equal(answer.body.code, 'not_text', answer.raw);
      assert.equal(answer.body.status, 'rejected');
      assert.match(String(answer.body.detail), /not UTF-8 text/);
    }
    assert.equal(model.calls.length, 0, 'no model call');
    await assertNoJob(t);
  });

  it('binary text (NUL bytes) is not_text too; a well-formed pair and an escaped U+FFFD are text', async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveHandler(t);
    // Act
    const binary = await call(post(json('\\u0000\\u0000\\u0000\\u0000')));
    // A surrogate pair sent as it is, and U+FFFD written as the JSON escape \ufffd: the caller's own text.
    const pair = await call(
      post(JSON.stringify({ text: `${doc!.text}\n\ud83d\ude00 REPLACEMENT`, sourceId: 'strict-pair' }).replace('REPLACEMENT', '\\ufffd')),
    );
    // Assess
    assert.equal(binary.statusCode, 400, binary.raw);
    assert.equal(binary.body.code, 'not_text');
    assert.equal(pair.statusCode, 200, pair.raw);
    assert.equal(pair.body.status, 'committed');
    assert.equal(model.calls.length, 1);
  });
});

describe('live API: content type and deadline', () => {
  const [doc] = englishDocuments(1);

  it('a body that is not application/json (in UTF-8) is 415, saying what is accepted; JSON with or without charset=utf-8 is taken', async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveHandler(t);
    const body = JSON.stringify({ text: doc!.text, sourceId: 'content-type' });
    // Act
    const refused = [
      await call(post(body, { 'content-type': 'text/plain' })),
      await call(post(body, { 'content-type': 'text/plain;charset=UTF-8' })),
      await call(post(Buffer.from(body), { 'content-type': 'application/x-www-form-urlencoded' })),
      await call(post(Buffer.from(body), {})),
      await call(post(body, { 'content-type': 'application/json; charset=iso-8859-1' })),
    ];
    const plain = await call(post(body, { 'content-type': 'application/json' }));
    const withCharset = await call(post(body, { 'Content-Type': 'Application/JSON; charset="utf-8"' }));
    // Assess
    for (const answer of refused) {
      assert.equal(answer.statusCode, 415, answer.raw);
      assert.equal(answer.body.code, 'unsupported_media_type');
      assert.match(String(answer.body.detail), /application\/json/);
      assert.equal(answer.headers['accept-post'], 'application/json; charset=utf-8');
    }
    assert.equal(plain.statusCode, 200, plain.raw);
    assert.equal(withCharset.statusCode, 200, withCharset.raw);
    assert.equal(withCharset.body.duplicate, true);
    assert.equal(model.calls.length, 1, 'no model call for a refused request');
  });

  it('a deadline below the lane minimum is 400 deadline_too_short naming the minimum, not raised to it', async () => {
    // Prepare
    const t = await newLane();
    const { call, model } = liveHandler(t);
    const minimum = t.lane.live.handoverMarginMs + 100;
    // Act
    const answers = [
      await call(post(JSON.stringify({ text: doc!.text, deadlineMs: 1 }))),
      await call(post(JSON.stringify({ text: doc!.text, deadlineMs: 0 }))),
      await call(post(JSON.stringify({ text: doc!.text, deadlineMs: minimum - 1 }))),
    ];
    const atMinimum = await call(post(JSON.stringify({ text: doc!.text, sourceId: 'deadline-at-min', deadlineMs: minimum })));
    // Assess
    for (const answer of answers) {
      assert.equal(answer.statusCode, 400, answer.raw);
      assert.equal(answer.body.code, 'deadline_too_short');
      assert.equal(answer.body.minDeadlineMs, minimum);
      assert.match(String(answer.body.detail), new RegExp(`minimum of ${minimum} ms`));
    }
    assert.ok([200, 202].includes(atMinimum.statusCode), `the minimum itself is taken: ${atMinimum.raw}`);
    assert.ok(model.calls.length <= 1, 'no model call for a refused request');
  });
});

describe('live API: what an answer that is not a result tells the caller', () => {
  const [doc] = englishDocuments(1);

  it('pending: the reason as its code and the job id; no key id, no error class', async () => {
    // Prepare: the provider says the daily quota is out (a wait that never fits)
    const t = await newLane();
    const model = scriptedModel(() => throttle({ kind: 'quota_exhausted', resetAt: new Date(Date.now() + 3_600_000) }));
    const { call, sink } = liveHandler(t, { model });
    // Act
    const answer = await call(post(JSON.stringify({ text: doc!.text, sourceId: 'answer-pending', deadlineMs: 8_000 })));
    // Assess
    assert.equal(answer.statusCode, 202, answer.raw);
    assert.ok(!answer.raw.includes(KEY_ID), `no key id in ${answer.raw}`);
    assert.doesNotMatch(answer.raw, ERROR_CLASS);
    assert.equal(answer.body.status, 'pending');
    assert.equal(answer.body.code, 'quota_exhausted');
    assert.match(String(answer.body.jobId), /.+/);
    assert.ok(
      sink.lines.some((l) => l.includes(KEY_ID)),
      'the detail is in the logs',
    );
  });

  it('error: 503 with code unavailable and the job id; the key id, the error class and the SDK message stay in the logs', async () => {
    // Prepare: the quota is out and the hand-over's queue does not exist
    const t = await newLane();
    const model = scriptedModel(() => throttle({ kind: 'quota_exhausted', resetAt: new Date(Date.now() + 3_600_000) }));
    const missingQueue = `${t.queueUrl}-missing`;
    const { call, sink } = liveHandler(t, { model, queueUrl: missingQueue });
    // Act
    const answer = await call(post(JSON.stringify({ text: doc!.text, sourceId: 'answer-error', deadlineMs: 8_000 })));
    // Assess
    assert.equal(answer.statusCode, 503, answer.raw);
    assert.ok(!answer.raw.includes(KEY_ID), `no key id in ${answer.raw}`);
    assert.doesNotMatch(answer.raw, ERROR_CLASS);
    assert.equal(answer.body.status, 'error');
    assert.equal(answer.body.code, 'unavailable');
    assert.match(String(answer.body.jobId), /.+/);
    assert.equal(answer.headers['retry-after'], '1');
    const failure = sink.lines.find((l) => l.includes('could not hand the job over'));
    assert.ok(failure, 'the failure is logged');
    const logged = JSON.parse(failure) as { error?: string; jobId?: string };
    assert.equal(logged.jobId, answer.body.jobId);
    assert.ok(logged.error && !answer.raw.includes(logged.error), `the error's name (${logged.error}) only in the log`);
  });

  it('a request that fails before a job exists: 503 unavailable, no SDK error name', async () => {
    // Prepare: the document store refuses every read
    const t = await newLane();
    const denied = {
      send: async () => Promise.reject(Object.assign(new Error('Access Denied by bucket policy'), { name: 'AccessDenied' })),
    } as unknown as S3Client;
    const { call, model } = liveHandler(t, { s3: denied });
    // Act
    const answer = await call(post(JSON.stringify({ documentRef: { key: 'documents/abc.txt' } })));
    // Assess
    assert.equal(answer.statusCode, 503, answer.raw);
    assert.doesNotMatch(answer.raw, /AccessDenied|Access Denied|bucket policy/);
    assert.equal(answer.body.code, 'unavailable');
    assert.equal(answer.body.jobId, undefined, 'no job existed');
    assert.equal(model.calls.length, 0);
  });

  it('GET: an unknown job is 404 unknown_job; a read that fails is 503 unavailable with the job id, no store error', async () => {
    // Prepare
    const t = await newLane();
    const { deps } = liveHandler(t);
    const failing = {
      ...deps,
      ledger: {
        claimOf: () =>
          Promise.reject(
            new StoreUnavailableError('GetItem', 'ratelane-us-ledger', {
              cause: Object.assign(new Error('Rate of requests exceeds the allowed throughput'), { name: 'ProvisionedThroughputExceededException' }),
            }),
          ),
        entriesFor: () => Promise.resolve([]),
      },
    } as unknown as LiveDeps;
    // Act
    const unknown = answerOf(await statusResponse('job-never-seen', deps));
    const unreadable = answerOf(await statusResponse('job-unreadable', failing));
    // Assess
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.body.code, 'unknown_job');
    assert.equal(unknown.body.jobId, 'job-never-seen');
    assert.equal(unreadable.statusCode, 503);
    assert.equal(unreadable.body.code, 'unavailable');
    assert.equal(unreadable.body.jobId, 'job-unreadable');
    assert.doesNotMatch(unreadable.raw, ERROR_CLASS);
    assert.doesNotMatch(unreadable.raw, /ledger|GetItem|throughput/i);
  });
});
