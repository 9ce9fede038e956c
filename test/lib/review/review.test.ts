/**
 * The review path (lib/review) on the run's DynamoDB Local: a job the real consumer sent to review is
 * listed (no document text) and resolved with a corrected object that passes the pipeline's validation,
 * committed once under its idempotency key with a ledger entry naming the reviewer; two resolutions at
 * once commit once; bad input (no such job, another state, an object failing the schema or the domain
 * rules, an unknown lane) is refused and writes nothing; the list pages with a cursor and skips jobs no
 * longer in review; every read and write stays in the lane's region and tables.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { resolveLanes, type LaneConfig } from '../../../lib/config/lanes.js';
import { idempotencyKeyFor, sha256Hex } from '../../../lib/contract/job.js';
import { createAwsClients } from '../../../lib/platform/clients.js';
import { ReviewError, ReviewValidationError } from '../../../lib/review/errors.js';
import { openReviewLane, type ReviewLane } from '../../../lib/review/lane.js';
import { listReviews } from '../../../lib/review/list.js';
import { REVIEW_MODEL, REVIEW_RESOLVED_REASON, resolveReview } from '../../../lib/review/resolve.js';
import type { Reviewer } from '../../../lib/review/reviewer.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { jobStatus } from '../../../lib/store/job-status.js';
import { Ledger } from '../../../lib/store/ledger.js';
import { ResultStore, resultRecordFor } from '../../../lib/store/results.js';
import { LEDGER_TABLE, RESULTS_TABLE } from '../../../lib/store/tables.js';
import { extractInvoice } from '../../../workbench/fake-provider/extractors/invoice.js';
import { englishDocuments, invoke, receive, scriptedModel, submitTo, testConsumer, trackedLanes } from '../../helpers/consumer-harness.js';
import { testEndpoints, uniqueLaneResources, uniqueName } from '../../helpers/endpoints.js';

const newLane = trackedLanes();
const REVIEWER: Reviewer = { name: 'alice@example.test', source: 'given' };

const opened: { close(): void }[] = [];
after(() => {
  for (const lane of opened) lane.close();
});

/**
 * The `eu` lane with tables of its own (no queues: a review never touches them), made in eu-central-1:
 * DynamoDB Local keeps each region's tables apart, so a read in another region would not find them.
 */
async function euLane(): Promise<{ lane: LaneConfig; ledger: Ledger; results: ResultStore }> {
  const lane = resolveLanes({ eu: { resources: uniqueLaneResources() } }).eu!;
  const clients = createAwsClients(lane.region, testEndpoints());
  opened.push({ close: () => clients.destroy() });
  await Promise.all([
    ensureTable(clients.dynamodb, lane.resources.ledgerTable, LEDGER_TABLE),
    ensureTable(clients.dynamodb, lane.resources.resultsTable, RESULTS_TABLE),
  ]);
  return {
    lane,
    ledger: new Ledger({ dynamodb: clients.dynamodb, tableName: lane.resources.ledgerTable }),
    results: new ResultStore({ dynamodb: clients.dynamodb, tableName: lane.resources.resultsTable }),
  };
}

/** A review lane on the local services, closed after the file. */
function open(lane: LaneConfig, now?: () => Date): ReviewLane {
  const review = openReviewLane({ lanes: { [lane.name]: lane }, lane: lane.name, endpoints: testEndpoints(), ...(now ? { now } : {}) });
  opened.push(review);
  return review;
}

/** A corpus invoice's correct extraction (a valid `invoice@1` object). */
function correctInvoice(index = 0): Record<string, unknown> {
  return extractInvoice(englishDocuments(index + 1)[index]!.text) as unknown as Record<string, unknown>;
}

/**
 * Writes what the pipeline writes for a job whose answer stayed invalid: its claim, two
 * `validation_failed` entries and the `needs_review` entry. Returns the job's id and key.
 */
async function jobInReview(ledger: Ledger, lane: string, options: { tenant?: string; at?: string } = {}): Promise<{ jobId: string; idempotencyKey: string }> {
  const jobId = uniqueName('job');
  const idempotencyKey = idempotencyKeyFor({
    sourceId: jobId,
    contentSha256: sha256Hex(jobId),
    promptVersion: 'invoice-extract@1',
    schemaVersion: 'invoice@1',
  });
  const tenant = options.tenant !== undefined ? { tenant: options.tenant } : {};
  const base = { jobId, idempotencyKey, region: lane, ...tenant, schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@1', attempt: 0, deferrals: 0 };
  await ledger.claimJob({ jobId, idempotencyKey, region: lane, ...tenant });
  const failed = { ...base, kind: 'validation_failed' as const, reason: 'schema_invalid', parseStatus: 'schema_invalid' as const };
  await ledger.record({ ...failed, failingFields: ['total'], failingRules: ['schema:invalid_type'] });
  await ledger.record({ ...failed, failingFields: ['total', 'currency'], failingRules: ['schema:invalid_type', 'schema:invalid_format'] });
  await ledger.record({
    ...base,
    kind: 'needs_review',
    reason: 'validation_failed',
    details: 'output still invalid after 1 of 1 repair attempt(s)',
    ...(options.at ? { at: options.at } : {}),
  });
  return { jobId, idempotencyKey };
}

describe('review: a job the consumer sent to review', () => {
  it('is listed without document text, resolved with a valid object, committed once with the reviewer in the ledger', async () => {
    // Prepare: the model answers an invalid object twice: the consumer ends the job in needs_review
    const t = await newLane();
    const [doc] = englishDocuments(1);
    const [item] = await submitTo(t, [{ text: doc!.text, sourceId: `${doc!.sourceId}#review` }]);
    const bad = { ...extractInvoice(doc!.text), total: 'a lot', currency: 'euro' };
    const { handler } = testConsumer(
      t,
      scriptedModel(() => ({ content: JSON.stringify(bad) })),
    );
    await invoke(t, handler, await receive(t, { max: 1 }));
    const lane = open(t.lane);
    const corrected = JSON.parse(JSON.stringify(extractInvoice(doc!.text))) as unknown;

    // Act
    const before = await listReviews(lane);
    const resolved = await resolveReview(lane, { jobId: item!.jobId, corrected, reviewer: REVIEWER });
    const afterwards = await listReviews(lane);

    // Assess: the list
    assert.equal(before.reviews.length, 1);
    const listed = before.reviews[0]!;
    assert.equal(listed.jobId, item!.jobId);
    assert.equal(listed.idempotencyKey, item!.idempotencyKey, "the source's hash");
    assert.equal(listed.schemaVersion, 'invoice@1');
    assert.equal(listed.promptVersion, 'invoice-extract@1');
    assert.equal(listed.reason, 'schema_invalid');
    assert.match(listed.detail ?? '', /repair/);
    assert.equal(listed.parseStatus, 'schema_invalid');
    assert.deepEqual([...listed.failingFields].sort(), ['currency', 'total']);
    assert.ok(!Number.isNaN(Date.parse(listed.at)));
    const shown = JSON.stringify(before);
    for (const line of doc!.text.split('\n').filter((l) => l.trim().length >= 12)) assert.ok(!shown.includes(line.trim()), 'no document text in the list');
    // Assess: the commit, through the pipeline's conditional write, and the ledger
    assert.equal(resolved.jobId, item!.jobId);
    assert.equal(resolved.idempotencyKey, item!.idempotencyKey);
    const stored = await t.results.get(item!.idempotencyKey);
    assert.deepEqual(stored?.result, corrected);
    assert.equal(stored?.model, REVIEW_MODEL);
    assert.equal(stored?.jobId, item!.jobId);
    assert.equal(stored?.region, 'us');
    assert.equal(stored?.modelCalls, 0);
    const status = await jobStatus(item!.jobId, { results: t.results, ledger: t.ledger });
    assert.equal(status.state, 'committed');
    const committed = (await t.ledger.entriesFor(item!.jobId)).filter((e) => e.kind === 'committed');
    assert.equal(committed.length, 1);
    assert.equal(committed[0]!.reason, REVIEW_RESOLVED_REASON);
    assert.match(committed[0]!.details ?? '', /alice@example\.test/);
    assert.equal(committed[0]!.entryId, resolved.ledgerEntryId);
    assert.deepEqual(afterwards.reviews, [], 'a resolved job is no longer listed');
    assert.equal(afterwards.candidates, 0, 'it left the open-reviews index');
    assert.equal((await t.ledger.entriesFor(item!.jobId)).filter((e) => e.kind === 'needs_review').length, 1, "its review entry stays in the job's history");
  });
});

describe('review: resolve', () => {
  it('resolutions of one job at once commit exactly once; the others say it is already committed', async () => {
    // Prepare: five reviewers, each with their own clients (as five processes), held at the commit until
    // every one of them has read the job in review and validated its object: the conditional write decides
    const t = await newLane();
    const { jobId, idempotencyKey } = await jobInReview(t.ledger, 'us');
    const reviewers = 5;
    let arrived = 0;
    let release: () => void = () => undefined;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    class HeldResults extends ResultStore {
      override async commitOnce(record: Parameters<ResultStore['commitOnce']>[0]) {
        if (++arrived === reviewers) release();
        await allArrived;
        return super.commitOnce(record);
      }
    }
    const lanes = Array.from({ length: reviewers }, () => {
      const lane = open(t.lane);
      return { ...lane, results: new HeldResults({ dynamodb: lane.dynamodb, tableName: t.lane.resources.resultsTable }) };
    });
    const objects = lanes.map((_, i) => correctInvoice(i));

    // Act
    const settled = await Promise.allSettled(
      lanes.map((lane, i) => resolveReview(lane, { jobId, corrected: objects[i], reviewer: { name: `reviewer-${i}`, source: 'given' } })),
    );

    // Assess
    assert.equal(arrived, reviewers, 'every reviewer reached the conditional write');
    const won = settled.flatMap((s, i) => (s.status === 'fulfilled' ? [i] : []));
    assert.equal(won.length, 1, 'exactly one commit');
    for (const s of settled) {
      if (s.status === 'fulfilled') continue;
      assert.ok(s.reason instanceof ReviewError, String(s.reason));
      assert.equal(s.reason.code, 'already_committed');
      assert.equal(s.reason.state, 'committed');
      assert.match(s.reason.message, /already resolved: .* \(by another review\)/);
    }
    assert.deepEqual((await t.results.get(idempotencyKey))?.result, objects[won[0]!], "the winner's object");
    const committed = (await t.ledger.entriesFor(jobId)).filter((e) => e.kind === 'committed');
    assert.equal(committed.length, 1, 'one ledger entry: the winner');
    assert.match(committed[0]!.details ?? '', new RegExp(`reviewer-${won[0]}$`));
  });

  it('refuses an object that fails the schema or a domain rule with the paths and messages, and writes nothing', async () => {
    // Prepare
    const t = await newLane();
    const { jobId, idempotencyKey } = await jobInReview(t.ledger, 'us');
    const lane = open(t.lane);
    const valid = correctInvoice();
    const wrongTypes = { ...valid, total: 'a lot', currency: 'euro' };
    const wrongTotal = { ...valid, total: Math.round(((valid.total as number) + 10) * 100) / 100 };
    const entriesBefore = (await t.ledger.entriesFor(jobId)).length;

    // Act
    const schemaError = await resolveReview(lane, { jobId, corrected: wrongTypes, reviewer: REVIEWER }).catch((e: unknown) => e);
    const domainError = await resolveReview(lane, { jobId, corrected: wrongTotal, reviewer: REVIEWER }).catch((e: unknown) => e);
    const notAnObject = await resolveReview(lane, { jobId, corrected: [1, 2], reviewer: REVIEWER }).catch((e: unknown) => e);

    // Assess
    assert.ok(schemaError instanceof ReviewValidationError);
    assert.equal(schemaError.code, 'invalid_object');
    assert.equal(schemaError.kind, 'input');
    assert.equal(schemaError.parseStatus, 'schema_invalid');
    assert.deepEqual([...schemaError.failingFields].sort(), ['currency', 'total']);
    assert.ok(schemaError.problems.some((p) => p.startsWith('total: ')));
    assert.ok(schemaError.problems.some((p) => p.startsWith('currency: ')));
    assert.ok(!schemaError.message.includes('a lot') && !schemaError.message.includes('euro'), 'no value of the object in the message');
    assert.ok(domainError instanceof ReviewValidationError);
    assert.equal(domainError.parseStatus, 'domain_invalid');
    assert.ok(domainError.failingRules.includes('total_sum'));
    assert.ok(domainError.problems.some((p) => p.startsWith('total: ')));
    assert.ok(notAnObject instanceof ReviewValidationError && notAnObject.parseStatus === 'schema_invalid');
    assert.equal(await t.results.get(idempotencyKey), undefined, 'nothing committed');
    assert.equal((await t.ledger.entriesFor(jobId)).length, entriesBefore, 'nothing ledgered');
    assert.equal((await jobStatus(jobId, { results: t.results, ledger: t.ledger })).state, 'needs_review');
  });

  it('refuses a job it does not know, and a job in another state (naming it), writing nothing', async () => {
    // Prepare: a rejected job, a pending job, and a job whose key another job committed
    const t = await newLane();
    const lane = open(t.lane);
    const rejected = uniqueName('job');
    const base = { idempotencyKey: 'a'.repeat(64), region: 'us', attempt: 0, deferrals: 0 };
    await t.ledger.record({ ...base, jobId: rejected, kind: 'rejected', reason: 'deadline' });
    const pending = uniqueName('job');
    await t.ledger.record({ ...base, idempotencyKey: 'b'.repeat(64), jobId: pending, kind: 'deferred', reason: 'rate_limited' });
    const reviewed = await jobInReview(t.ledger, 'us');
    const job = { jobId: 'other-job', idempotencyKey: reviewed.idempotencyKey, region: 'us', schemaVersion: 'invoice@1', promptVersion: 'invoice-extract@1' };
    await t.results.commitOnce(
      resultRecordFor({ ...job, attempt: 0, deferrals: 0, createdAt: new Date().toISOString() } as never, {
        result: correctInvoice(),
        usage: { inputTokens: 1, outputTokens: 1 },
        model: 'm',
        modelCalls: 1,
      }),
    );
    const attempt = (jobId: string) =>
      resolveReview(lane, { jobId, corrected: correctInvoice(), reviewer: REVIEWER }).then(
        (): ReviewError => assert.fail(`job ${jobId} was resolved`),
        (e: unknown) => e as ReviewError,
      );

    // Act
    const [missing, wasRejected, isPending, duplicate] = await Promise.all([
      attempt('no-such-job'),
      attempt(rejected),
      attempt(pending),
      attempt(reviewed.jobId),
    ]);

    // Assess
    assert.deepEqual(
      [missing, wasRejected, isPending, duplicate].map((e) => [e.code, e.state]),
      [
        ['job_not_found', 'unknown'],
        ['not_in_review', 'rejected'],
        ['not_in_review', 'pending'],
        ['already_committed', 'committed'],
      ],
    );
    assert.match(wasRejected.message, /is not in needs_review: it is rejected/);
    assert.match(duplicate.message, /by job other-job/);
    assert.equal(await t.results.count(), 1, 'only the commit made before');
  });

  it('opens only a configured lane (the error names the known ones), in its own region and tables', async () => {
    // Prepare
    const eu = await euLane();
    const us = await newLane();
    const regions: string[] = [];
    const inEu = await jobInReview(eu.ledger, 'eu');
    await jobInReview(us.ledger, 'us');
    const lanes = { us: us.lane, eu: eu.lane };

    // Act
    const unknown = (() => {
      try {
        return openReviewLane({ lanes, lane: 'ap', endpoints: testEndpoints() });
      } catch (error) {
        return error;
      }
    })();
    const lane = openReviewLane({
      lanes,
      lane: 'eu',
      endpoints: testEndpoints(),
      dynamodbFor: (region, endpoints) => {
        regions.push(region);
        return createAwsClients(region, endpoints);
      },
    });
    opened.push(lane);
    const list = await listReviews(lane);
    const resolved = await resolveReview(lane, { jobId: inEu.jobId, corrected: correctInvoice(), reviewer: REVIEWER });

    // Assess
    assert.ok(unknown instanceof ReviewError);
    assert.equal(unknown.code, 'unknown_lane');
    assert.equal(unknown.name, 'ReviewError');
    assert.match(unknown.message, /unknown lane "ap"; known lanes: us, eu/);
    assert.deepEqual(regions, ['eu-central-1'], "one client, in the lane's region");
    assert.deepEqual(
      list.reviews.map((r) => r.jobId),
      [inEu.jobId],
      "the eu lane's job only",
    );
    assert.equal(list.region, 'eu-central-1');
    assert.equal(resolved.lane, 'eu');
    assert.equal((await eu.results.get(inEu.idempotencyKey))?.region, 'eu', "committed in the eu lane's table");
    assert.equal((await eu.ledger.entriesFor(inEu.jobId)).at(-1)?.kind, 'committed');
    assert.equal(await us.results.count(), 0, "nothing in the us lane's table");
  });
});

describe('review: list', () => {
  it('pages with a cursor: every job once, oldest review first within a page, jobs no longer in review left out', async () => {
    // Prepare: five jobs in review, one of them since committed
    const t = await newLane();
    const jobs: { jobId: string; idempotencyKey: string }[] = [];
    for (let i = 0; i < 5; i++) jobs.push(await jobInReview(t.ledger, 'us', { tenant: `tenant-${i}`, at: `2030-01-01T00:0${i}:00.000Z` }));
    const lane = open(t.lane);
    await resolveReview(lane, { jobId: jobs[4]!.jobId, corrected: correctInvoice(), reviewer: REVIEWER });

    // Act
    const pages = [await listReviews(lane, { limit: 2 })];
    while (pages.at(-1)!.nextCursor !== undefined && pages.length < 10) pages.push(await listReviews(lane, { limit: 2, cursor: pages.at(-1)!.nextCursor }));
    const bad = await listReviews(lane, { cursor: 'not-a-cursor' }).catch((e: unknown) => e);
    const tooMany = await listReviews(lane, { limit: 5000 }).catch((e: unknown) => e);

    // Assess
    const listed = pages.flatMap((p) => p.reviews.map((r) => r.jobId));
    assert.deepEqual(
      [...listed].sort(),
      jobs
        .slice(0, 4)
        .map((j) => j.jobId)
        .sort(),
      'the four in review, each once',
    );
    assert.ok(
      pages.every((p) => p.candidates <= 2),
      'at most the limit looked at per page',
    );
    assert.equal(
      pages.reduce((n, p) => n + p.candidates, 0),
      4,
      'every open review looked at once (the resolved one left the index)',
    );
    for (const page of pages)
      assert.deepEqual(
        page.reviews.map((r) => r.at),
        [...page.reviews.map((r) => r.at)].sort(),
      );
    const first = pages.flatMap((p) => p.reviews).find((r) => r.jobId === jobs[0]!.jobId)!;
    assert.equal(first.tenant, 'tenant-0');
    assert.equal(first.at, '2030-01-01T00:00:00.000Z');
    assert.deepEqual(first.failingFields, ['total', 'currency']);
    assert.ok(bad instanceof ReviewError && bad.code === 'bad_cursor');
    assert.ok(tooMany instanceof ReviewError && tooMany.code === 'bad_limit');
  });
});
