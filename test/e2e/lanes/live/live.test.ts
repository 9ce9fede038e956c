/**
 * The live lane on the local services: the live handler behind the local API Gateway
 * adapter, the fake provider, DynamoDB Local and fauxqs, with the queue lane's poller finishing what
 * a request hands over. Each case states its deadline and checks the answer arrived within it: a whole
 * local stack over real time (the e2e tier). The live lane's arithmetic: `test/lib/lanes/live/`.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { loadCorpus } from '../../../../workbench/corpus/index.js';
import { resolveLanes, type LaneOverride } from '../../../../lib/config/lanes.js';
import { LIVE_ANSWER_SLACK_MS } from '../../../../lib/lanes/live/handler.js';
import { LOCAL_CALLER_HEADER } from '../../../../workbench/local-stack/lambda/http-adapter.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../../../workbench/local-stack/stack.js';
import { LIVE_ROUTES } from '../../../../lib/platform/resources.js';
import { waitUntil } from '../../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources } from '../../../helpers/endpoints.js';

const english = loadCorpus().filter((d) => d.language === 'en');

/** A us lane with short timeouts and unique resources. */
function laneWith(override: LaneOverride = {}) {
  return resolveLanes({
    us: {
      resources: uniqueLaneResources(),
      queue: { visibilityTimeoutSeconds: 12, receiveWaitTimeSeconds: 1 },
      consumer: { timeoutSeconds: 2, maximumConcurrency: 2 },
      backoff: { throttleBaseSeconds: 1, throttleCapSeconds: 2, failureBaseSeconds: 1, failureCapSeconds: 2 },
      provider: { timeoutMs: 1_000 },
      ...override,
    },
  }).us!;
}

const stacks: LocalStack[] = [];
after(async () => {
  await Promise.all(stacks.map((s) => s.stop()));
});

async function liveStack(options: Omit<LocalStackOptions, 'endpoints' | 'live'>): Promise<LocalStack> {
  const stack = await startLocalStack({ ...options, endpoints: testEndpoints(), live: true });
  stacks.push(stack);
  return stack;
}

interface Answer {
  httpStatus: number;
  ms: number;
  body: Record<string, unknown> & { status?: string; jobId?: string };
}

async function post(stack: LocalStack, body: unknown, contentType = 'application/json'): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${stack.lanes.us!.live!.url}${LIVE_ROUTES.extractions}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  return { httpStatus: response.status, body: (await response.json()) as Answer['body'], ms: performance.now() - started };
}

/** `GET` a job's state, as the local caller or as `principal` (the local adapter's caller header). */
async function get(stack: LocalStack, jobId: string, principal?: string): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${stack.lanes.us!.live!.url}${LIVE_ROUTES.extraction.replace('{jobId}', jobId)}`, {
    headers: principal ? { [LOCAL_CALLER_HEADER]: principal } : {},
  });
  return { httpStatus: response.status, body: (await response.json()) as Answer['body'], ms: performance.now() - started };
}

const requests = (stack: LocalStack) => stack.provider.stats().requests;

describe('live lane: answers inside one deadline', () => {
  it('a 429 whose wait fits is retried in the request and committed; a repeat gets the result without a model call', async () => {
    // Prepare: one request per 1.5 s minute, no admission (the provider's own 429 decides)
    const stack = await liveStack({ lanes: { us: laneWith() }, admission: false, provider: { limits: { requestsPerMinute: 1 }, minuteMs: 1_500, seed: 5 } });
    const doc = english[0]!;
    const first = await post(stack, { text: doc.text, sourceId: 'live-429-a', deadlineMs: 8_000 });
    // Act
    const second = await post(stack, { text: english[1]!.text, sourceId: 'live-429-b', deadlineMs: 8_000 });
    const callsBefore = requests(stack);
    const repeat = await post(stack, { text: doc.text, sourceId: 'live-429-a', deadlineMs: 8_000 });
    // Assess
    assert.equal(first.httpStatus, 200);
    assert.equal(second.httpStatus, 200, JSON.stringify(second.body));
    assert.equal(second.body.status, 'committed');
    assert.equal(second.body.attempts, 2, 'one 429, one in-request retry');
    assert.ok(stack.provider.stats().rateLimited.rpm >= 1);
    assert.ok(second.ms < 8_000 + LIVE_ANSWER_SLACK_MS, `${second.ms} ms`);
    assert.equal(repeat.httpStatus, 200);
    assert.equal(repeat.body.duplicate, true);
    assert.equal(repeat.body.jobId, first.body.jobId);
    assert.deepEqual(repeat.body.result, first.body.result);
    assert.equal(requests(stack), callsBefore, 'no model call for a repeat');
    const status = await get(stack, String(second.body.jobId));
    assert.equal(status.httpStatus, 200);
    assert.equal(status.body.status, 'committed');
    assert.deepEqual(status.body.result, second.body.result);
  });

  it('a daily quota answers 202 at once; the queue lane commits the job after the reset', async () => {
    // Prepare: one request a day, a 6 s day
    const stack = await liveStack({
      lanes: { us: laneWith() },
      admission: false,
      provider: { limits: { requestsPerDay: 1 }, minuteMs: 1_000, dayMs: 6_000, seed: 6 },
    });
    stack.provider.resetDay();
    await post(stack, { text: english[2]!.text, sourceId: 'live-daily-a', deadlineMs: 4_000 });
    // Act
    const pending = await post(stack, { text: english[3]!.text, sourceId: 'live-daily-b', deadlineMs: 4_000 });
    // Assess: answered pending well before the deadline, then committed by the queue lane
    assert.equal(pending.httpStatus, 202, JSON.stringify(pending.body));
    assert.equal(pending.body.status, 'pending');
    assert.equal(pending.body.reason, 'quota_exhausted');
    assert.ok(pending.ms < 2_000, `pending after ${pending.ms} ms`);
    assert.match(String(pending.body.statusUrl), /\/v1\/extractions\//);
    const jobId = String(pending.body.jobId);
    const view = await get(stack, jobId);
    assert.equal(view.body.status, 'pending');
    assert.ok(view.body.eligibleAt, 'the pending view says when');
    await waitUntil('the queue lane commits the handed-over job', async () => (await get(stack, jobId)).body.status === 'committed', 30_000, 250);
    const results = await stack.lanes.us!.results.scanAll();
    assert.equal(results.filter((r) => r.jobId === jobId).length, 1, 'committed once');
    // the job the queue lane finished is still its caller's: another principal reads a job never seen
    const stranger = await get(stack, jobId, 'arn:aws:sts::000000000000:assumed-role/someone-else/s1');
    const neverSeen = await get(stack, 'no-such-job', 'arn:aws:sts::000000000000:assumed-role/someone-else/s1');
    assert.equal(stranger.httpStatus, 404, JSON.stringify(stranger.body));
    assert.deepEqual(stranger.body, { ...neverSeen.body, jobId });
  });

  it('a hanging provider is cut off in time to answer 202 before the deadline', async () => {
    // Prepare: every call hangs
    const stack = await liveStack({ lanes: { us: laneWith() }, admission: false, consumers: true, provider: { faults: { timeout: 1 }, seed: 7 } });
    // Act
    const answer = await post(stack, { text: english[4]!.text, sourceId: 'live-hang', deadlineMs: 2_500 });
    // Assess
    assert.equal(answer.httpStatus, 202, JSON.stringify(answer.body));
    assert.ok(answer.ms < 2_500 + LIVE_ANSWER_SLACK_MS, `answered after ${answer.ms} ms`);
    assert.ok(['invocation_deadline', 'transport_failure'].includes(String(answer.body.reason)), String(answer.body.reason));
    const view = await get(stack, String(answer.body.jobId));
    assert.ok(['pending', 'received', 'dead_lettered'].includes(String(view.body.status)), `then ${view.body.status}`);
  });

  it('an output still invalid after its repair answers needs_review in the request, recorded in the ledger', async () => {
    // Prepare: every answer breaks the schema
    const stack = await liveStack({ lanes: { us: laneWith() }, admission: false, provider: { faults: { schemaInvalid: 1 }, seed: 9 } });
    // Act
    const answer = await post(stack, { text: english[5]!.text, sourceId: 'live-review', deadlineMs: 8_000 });
    // Assess
    assert.equal(answer.httpStatus, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.status, 'needs_review');
    assert.equal(requests(stack), 2, 'the call and its one repair');
    const view = await get(stack, String(answer.body.jobId));
    assert.equal(view.body.status, 'needs_review');
    assert.equal((await stack.lanes.us!.results.scanAll()).length, 0, 'nothing committed');
  });

  it('bad input, text that is not UTF-8, a body that is not JSON, a deadline under the minimum and another region are refused without a model call', async () => {
    // Prepare
    const stack = await liveStack({ lanes: { us: laneWith() }, admission: false, consumers: true });
    const before = requests(stack);
    // Act
    const otherRegion = await post(stack, { text: english[0]!.text, region: 'eu' });
    const otherBucket = await post(stack, { documentRef: { bucket: 'ratelane-eu-eu-central-1', key: 'documents/x.txt' } });
    const notJson = await post(stack, '{"text": ');
    const both = await post(stack, { text: 'a', documentRef: { key: 'documents/a.txt' } });
    const empty = await post(stack, { text: ' \n\u200b ' });
    const version = await post(stack, { text: english[0]!.text, promptVersion: 'invoice-extract@999' });
    const missing = await post(stack, { documentRef: { key: 'documents/nothing-here.txt' } });
    const rawBytes = await post(stack, Buffer.concat([Buffer.from('{"text":"Invoice '), Buffer.from([0xff, 0xfe]), Buffer.from(' total 10 EUR"}')]));
    const loneSurrogate = await post(stack, '{"text":"Invoice \\ud800 total 10 EUR"}');
    const plainText = await post(stack, { text: english[0]!.text }, 'text/plain');
    const shortDeadline = await post(stack, { text: english[0]!.text, deadlineMs: 1 });
    const unknown = await get(stack, 'no-such-job');
    // Assess
    const answers = [otherRegion, otherBucket, notJson, both, empty, version, missing, rawBytes, loneSurrogate, plainText, shortDeadline];
    assert.deepEqual(
      answers.map((a) => [a.httpStatus, a.body.reason, a.body.code]),
      [
        [409, 'region_mismatch', 'region_mismatch'],
        [409, 'region_mismatch', 'region_mismatch'],
        [400, 'invalid_json', 'invalid_json'],
        [400, 'bad_input', 'bad_input'],
        [422, 'empty_document', 'empty_document'],
        [422, 'unknown_version', 'unknown_version'],
        [404, 'document_not_found', 'document_not_found'],
        [400, 'not_text', 'not_text'],
        [400, 'not_text', 'not_text'],
        [415, 'unsupported_media_type', 'unsupported_media_type'],
        [400, 'deadline_too_short', 'deadline_too_short'],
      ],
    );
    assert.match(String(shortDeadline.body.detail), /minimum of 1100 ms/);
    assert.equal(unknown.httpStatus, 404);
    assert.equal(unknown.body.code, 'unknown_job');
    assert.equal(requests(stack), before, 'no model call');
  });
});

describe('live lane: the reserve', () => {
  it('a backfill saturating the quota does not push live requests within the reserve into 429s or past their deadline', async () => {
    // Prepare: 60 rpm over a 2 s minute, a quarter kept for live requests
    const lane = laneWith({ live: { reserveShare: 0.25 }, provider: { timeoutMs: 1_000, limits: { requestsPerMinute: 60 } } });
    const stack = await liveStack({ lanes: { us: lane }, provider: { limits: { requestsPerMinute: 60 }, minuteMs: 2_000, seed: 8 } });
    const { submitTo } = await import('../../../helpers/consumer-harness.js');
    const t = { ...stack.lanes.us!, destroy: () => undefined };
    await submitTo(
      t,
      Array.from({ length: 200 }, (_, i) => ({ text: english[i % english.length]!.text, sourceId: `backfill-${i}` })),
    );
    await waitUntil('the backfill is running', async () => (await stack.lanes.us!.results.count()) >= 5, 20_000, 100);
    // Act: 10 live requests at 2 per second (the reserve admits ~14 per 2 s minute)
    const answers = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        await new Promise((r) => setTimeout(r, i * 500));
        return post(stack, { text: english[(i + 7) % english.length]!.text, sourceId: `live-reserve-${i}`, deadlineMs: 5_000 });
      }),
    );
    const committedDuringLive = await stack.lanes.us!.results.count();
    // Assess
    assert.deepEqual(
      answers.map((a) => a.body.status),
      answers.map(() => 'committed'),
      JSON.stringify(answers.map((a) => [a.httpStatus, a.body.reason, a.body.detail, Math.round(a.ms)])),
    );
    for (const a of answers) assert.ok(a.ms < 5_000 + LIVE_ANSWER_SLACK_MS, `answered after ${a.ms} ms`);
    assert.ok(committedDuringLive < 200 + 10, `the backfill was still running while the live requests were answered (${committedDuringLive} committed)`);
    assert.equal(stack.provider.stats().rateLimited.rpm ?? 0, 0, 'no 429 for anyone');
  });
});
