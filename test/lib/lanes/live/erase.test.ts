/**
 * `DELETE /v1/extractions/{jobId}` through the handler as the live function runs it (DynamoDB Local and
 * fauxqs, a scripted model, a virtual clock): the job's tenant erases the job's source in the lane — its
 * result, ledger items and document — and is answered the receipt; a `GET` then answers `erased`.
 * Another tenant's `DELETE` is answered exactly as its `GET` (404, the same body) and changes nothing; a
 * lane-wide reader may read but not erase; a job id never seen is 404; a claim that names no source, or
 * a source another tenant shares, is refused; a store that fails is a 503 the same request finishes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { sha256Hex, tenantOfPrincipal } from '../../../../lib/contract/job.js';
import { createLiveHandler } from '../../../../lib/lanes/live/handler.js';
import { documentKeyFor } from '../../../../lib/store/documents.js';
import { StoreUnavailableError } from '../../../../lib/store/errors.js';
import { ResultStore } from '../../../../lib/store/results.js';
import { englishDocuments, type ModelScript, scriptedModel, trackedLanes, type TestLane } from '../../../helpers/consumer-harness.js';
import { liveContext, liveDelete, liveGet, livePost, TEST_PRINCIPAL, testLiveHandler } from '../../../helpers/live-harness.js';
import { virtualClock } from '../../../helpers/virtual-clock.js';

const newLane = trackedLanes();
const OWNER = tenantOfPrincipal(TEST_PRINCIPAL);
const OWNER_OTHER_SESSION = 'arn:aws:sts::000000000000:assumed-role/service-a/session-2';
const OTHER_TENANT = 'arn:aws:sts::000000000000:assumed-role/service-b/session-1';
const LANE_READER = 'arn:aws:iam::000000000000:role/ops/ratelane-readers';
const LANE_READER_SESSION = 'arn:aws:sts::000000000000:assumed-role/ratelane-readers/ops-session';

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  raw: string;
  body: Record<string, unknown>;
}

function answerOf(response: APIGatewayProxyStructuredResultV2): Answer {
  const raw = String(response.body);
  return { status: response.statusCode ?? 0, headers: (response.headers ?? {}) as Record<string, unknown>, raw, body: JSON.parse(raw) };
}

/** A live handler of `t`'s lane (a model that answers correctly unless `script` says otherwise): `call(event)` answers as the function would. */
function liveLane(t: TestLane, script?: ModelScript) {
  const { handler, deps } = testLiveHandler(t, { model: scriptedModel(script), clock: virtualClock() });
  const context = liveContext(t);
  return { deps, call: async (event: APIGatewayProxyEventV2) => answerOf(await handler(event, context)) };
}

/** Whether the lane's bucket holds the document of `text`. */
async function documentExists(t: TestLane, text: string): Promise<boolean> {
  try {
    await t.clients.s3.send(new HeadObjectCommand({ Bucket: t.lane.resources.bucketName, Key: documentKeyFor(sha256Hex(text)) }));
    return true;
  } catch {
    return false;
  }
}

/** What the lane holds of one job: its result, claim, ledger entries. */
async function heldOf(t: TestLane, jobId: string, idempotencyKey: string) {
  const [result, claim, entries] = await Promise.all([t.results.get(idempotencyKey), t.ledger.claimOf(jobId), t.ledger.entriesFor(jobId)]);
  return { result: result !== undefined, claim: claim !== undefined, entries: entries.length };
}

/** A committed live job of `principal` (the test's caller unless named). */
async function committedJob(call: ReturnType<typeof liveLane>['call'], tag: string, body: Record<string, unknown> = {}, principal?: string) {
  const [doc] = englishDocuments(1);
  const text = `${doc!.text}\n${tag}`;
  const posted = await call(livePost({ text, sourceId: `${doc!.sourceId}#${tag}`, ...body }, principal ? { principal } : {}));
  assert.equal(posted.status, 200, posted.raw);
  const jobId = String(posted.body.jobId);
  const read = await call(liveGet(jobId, principal ? { principal } : {}));
  return { jobId, text, sourceId: `${doc!.sourceId}#${tag}`, idempotencyKey: String(read.body.idempotencyKey) };
}

// The tests run at once (each on its own lane): each live request leaves the executor's AbortSignal.timeout
// of its deadline behind, which must not fire while the file still runs (test/helpers/real-waits.ts).
describe('live lane: DELETE /v1/extractions/{jobId} erases the job’s source', { concurrency: true }, () => {
  it("the owner's DELETE removes the job's result, ledger items and document and answers the receipt; GET then answers erased", async () => {
    // Prepare: a job of service-a committed after its repair (a validation_failed entry in the ledger)
    const t = await newLane();
    const { call } = liveLane(t, (c) => (c.repair ? undefined : { content: 'not json' }));
    const job = await committedJob(call, 'owner-erases');
    assert.deepEqual(await heldOf(t, job.jobId, job.idempotencyKey), { result: true, claim: true, entries: 1 });
    assert.equal(await documentExists(t, job.text), true);

    // Act: another session of the owner's role
    const erased = await call(liveDelete(job.jobId, { principal: OWNER_OTHER_SESSION }));
    const read = await call(liveGet(job.jobId));
    const again = await call(liveDelete(job.jobId));

    // Assess
    assert.equal(erased.status, 200, erased.raw);
    assert.deepEqual(
      { ...erased.body, at: '', tombstone: { ...(erased.body.tombstone as object), erasedAt: '' } },
      {
        status: 'erased',
        jobId: job.jobId,
        lane: t.lane.name,
        region: t.lane.region,
        sourceId: job.sourceId,
        by: OWNER,
        at: '',
        found: true,
        jobs: [{ jobId: job.jobId, idempotencyKey: job.idempotencyKey, resultRemoved: true, ledgerItemsRemoved: 2 }],
        // The live function does not read the batch manifest (an operator's erase does).
        batchItems: null,
        batchFiles: null,
        batchRecordsPending: null,
        documents: [documentKeyFor(sha256Hex(job.text))],
        tombstone: {
          sourceId: job.sourceId,
          sourceKey: (erased.body.tombstone as { sourceKey: string }).sourceKey,
          erasedAt: '',
          erasedBy: OWNER,
          contentSha256s: [sha256Hex(job.text)],
          erasures: 1,
        },
        afterErasure: 'refuse',
      },
    );
    assert.equal(erased.raw.includes(job.text.slice(0, 40)), false, 'no document text');
    assert.deepEqual(await heldOf(t, job.jobId, job.idempotencyKey), { result: false, claim: false, entries: 0 });
    assert.equal(await documentExists(t, job.text), false);
    assert.equal(read.status, 200, read.raw);
    assert.deepEqual({ ...read.body, erasedAt: '' }, { status: 'erased', jobId: job.jobId, history: read.body.history, erasedAt: '', erasedBy: OWNER });
    assert.ok(Object.values(read.body.history as Record<string, number>).every((n) => n === 0));
    assert.deepEqual([again.status, again.body.status, again.body.code, again.body.erasedBy], [200, 'erased', 'already_erased', OWNER]);
  });

  it("another tenant's DELETE is answered exactly as its GET (404, a job never seen) and changes nothing", async () => {
    // Prepare
    const t = await newLane();
    const { call } = liveLane(t);
    const job = await committedJob(call, 'other-tenant');

    // Act
    const deleted = await call(liveDelete(job.jobId, { principal: OTHER_TENANT }));
    const read = await call(liveGet(job.jobId, { principal: OTHER_TENANT }));

    // Assess
    assert.equal(deleted.status, 404);
    assert.deepEqual(deleted.body, read.body, 'the same answer as GET gives them');
    assert.deepEqual([deleted.body.status, deleted.body.code, deleted.body.jobId], ['unknown', 'unknown_job', job.jobId]);
    assert.deepEqual(await heldOf(t, job.jobId, job.idempotencyKey), { result: true, claim: true, entries: 0 });
    assert.equal(await documentExists(t, job.text), true);
    assert.equal((await call(liveGet(job.jobId))).body.status, 'committed', 'the owner still reads it committed');
  });

  it('a job id never seen, or one DynamoDB could not hold, is 404 unknown_job as GET answers it; no job id is 400', async () => {
    // Prepare
    const t = await newLane();
    const { call } = liveLane(t);
    const tooLong = 'j'.repeat(2049);

    // Act
    const unknown = await call(liveDelete('job-never-seen'));
    const unknownRead = await call(liveGet('job-never-seen'));
    const malformed = await call(liveDelete(tooLong));
    const malformedRead = await call(liveGet(tooLong));
    const noId = await call({ ...liveDelete('x'), pathParameters: {} } as APIGatewayProxyEventV2);

    // Assess
    assert.deepEqual([unknown.status, unknown.body], [404, unknownRead.body]);
    assert.equal(unknown.body.code, 'unknown_job');
    assert.deepEqual([malformed.status, malformed.body], [404, malformedRead.body]);
    assert.deepEqual([noId.status, noId.body.code], [400, 'bad_input']);
  });

  it('a lane-wide reader reads the job but may not erase it (403 not_owner); nothing changes', async () => {
    // Prepare
    const t = await newLane({ live: { readers: [LANE_READER] } });
    const { call } = liveLane(t);
    const job = await committedJob(call, 'reader');

    // Act
    const read = await call(liveGet(job.jobId, { principal: LANE_READER_SESSION }));
    const deleted = await call(liveDelete(job.jobId, { principal: LANE_READER_SESSION }));

    // Assess
    assert.equal(read.body.status, 'committed');
    assert.deepEqual([deleted.status, deleted.body.code, deleted.body.jobId], [403, 'not_owner', job.jobId]);
    assert.deepEqual(await heldOf(t, job.jobId, job.idempotencyKey), { result: true, claim: true, entries: 0 });
  });

  it('a claim that names no source (claimed before erasure existed) is refused 409 source_not_recorded, pointing to ratelane erase', async () => {
    // Prepare: the owner's job claimed the way a claim was written before erasure
    const t = await newLane();
    const { call } = liveLane(t);
    await t.ledger.claimJob({ jobId: 'job-old-claim', idempotencyKey: 'a'.repeat(64), region: 'us', tenant: OWNER, submittedBy: OWNER });

    // Act
    const deleted = await call(liveDelete('job-old-claim'));

    // Assess
    assert.deepEqual([deleted.status, deleted.body.code], [409, 'source_not_recorded']);
    assert.match(String(deleted.body.detail), /ratelane erase --source-id/);
    assert.ok(await t.ledger.claimOf('job-old-claim'), 'the claim stays');
  });

  it("a source another tenant's job shares is not erased through the API (409 source_shared): neither job changes", async () => {
    // Prepare: the same text, no source id given (the source is the text's hash) from two tenants
    const t = await newLane();
    const { call } = liveLane(t);
    const [doc] = englishDocuments(1);
    const text = `${doc!.text}\nshared-source`;
    const mine = await call(livePost({ text }));
    const theirs = await call(livePost({ text }, { principal: OTHER_TENANT }));
    assert.deepEqual([mine.status, theirs.status], [200, 200]);

    // Act
    const deleted = await call(liveDelete(String(mine.body.jobId)));

    // Assess
    assert.deepEqual([deleted.status, deleted.body.code], [409, 'source_shared']);
    assert.equal(deleted.raw.includes(String(theirs.body.jobId)), false, "the other job's id is not named");
    assert.equal((await t.results.scanAll()).length, 2);
    assert.equal((await call(liveGet(String(theirs.body.jobId), { principal: OTHER_TENANT }))).body.status, 'committed');
    assert.equal(await documentExists(t, text), true);
  });

  it('a store that fails mid-erasure is 503 with retry-after; the same DELETE then finishes it', async () => {
    // Prepare: a results table that refuses deletes for the first request
    const t = await newLane();
    const { call, deps } = liveLane(t);
    const job = await committedJob(call, 'store-fails');
    class RefusingDeletes extends ResultStore {
      override delete(): Promise<boolean> {
        return Promise.reject(new StoreUnavailableError('DeleteItem', this.tableName, { cause: new Error('ThrottlingException') }));
      }
    }
    const failing = createLiveHandler({
      ...deps,
      results: new RefusingDeletes({ dynamodb: t.clients.dynamodb, tableName: t.lane.resources.resultsTable }),
    });

    // Act
    const first = answerOf(await failing(liveDelete(job.jobId), liveContext(t)));
    const held = await heldOf(t, job.jobId, job.idempotencyKey);
    const second = await call(liveDelete(job.jobId));

    // Assess
    assert.deepEqual([first.status, first.body.code, first.body.jobId, first.headers['retry-after']], [503, 'unavailable', job.jobId, '1']);
    assert.doesNotMatch(first.raw, /DeleteItem|Throttling|Erasure/);
    assert.deepEqual(held, { result: true, claim: true, entries: 0 }, 'nothing of the job removed yet');
    assert.equal(second.status, 200, second.raw);
    assert.deepEqual(await heldOf(t, job.jobId, job.idempotencyKey), { result: false, claim: false, entries: 0 });
    assert.equal((second.body.tombstone as { erasures: number }).erasures, 2, 'the first erasure laid the tombstone');
  });

  it('the same source posted again after its erasure is refused (erased), and nothing of it is kept', async () => {
    // Prepare
    const t = await newLane();
    const { call } = liveLane(t);
    const job = await committedJob(call, 'post-again');
    assert.equal((await call(liveDelete(job.jobId))).status, 200);

    // Act
    const again = await call(livePost({ text: job.text, sourceId: job.sourceId }));

    // Assess
    assert.deepEqual([again.status, again.body.code], [422, 'erased'], again.raw);
    assert.equal((await t.results.scanAll()).length, 0);
    assert.equal(await documentExists(t, job.text), false);
  });
});
