/**
 * One job's state read from a lane's results table and ledger on the run's DynamoDB Local: every state
 * (unknown, received, pending, needs_review, rejected, dead_lettered, committed, a duplicate's commit,
 * erased when the erasure records are read),
 * the precedence (a commit always wins, else the latest entry, a later claim meaning "at work"), the
 * history counts, and no document text in any view.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createAwsClients, LOCAL_CREDENTIALS, type AwsClients } from '../../../lib/platform/clients.js';
import { idempotencyKeyFor, sha256Hex, type Job } from '../../../lib/contract/job.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { ErasureLedger } from '../../../lib/store/erasure.js';
import { StoreUnavailableError } from '../../../lib/store/errors.js';
import { jobStatus, ledgerHistory, type JobStatusView } from '../../../lib/store/job-status.js';
import { Ledger, type LedgerEntryInput, type LedgerKind } from '../../../lib/store/ledger.js';
import { ResultStore, resultRecordFor } from '../../../lib/store/results.js';
import { LEDGER_TABLE, RESULTS_TABLE } from '../../../lib/store/tables.js';
import { testEndpoints, uniqueLaneResources, uniqueName } from '../../helpers/endpoints.js';

const DOCUMENT_TEXT = 'Invoice 4711 from ACME GmbH, total 99.00 EUR';

function sampleJob(jobId: string, document = uniqueName('doc')): Job {
  const contentSha256 = sha256Hex(document);
  const schemaVersion = 'invoice@1';
  const promptVersion = 'invoice-extract@3';
  const sourceId = `s3://inbox/${document}.txt`;
  return {
    contractVersion: 1,
    jobId,
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, promptVersion, schemaVersion }),
    region: 'us',
    input: { bucket: 'ratelane-us-source', key: `documents/${contentSha256}`, sourceId, contentSha256, bytes: 1200, estimatedTokens: 300 },
    schemaVersion,
    promptVersion,
    attempt: 0,
    deferrals: 0,
    eligibleAt: '2030-01-01T00:00:00.000Z',
    createdAt: '2030-01-01T00:00:00.000Z',
  };
}

/** Zero for every kind but those given. */
function historyWith(counts: Partial<Record<LedgerKind, number>>): ReturnType<typeof ledgerHistory> {
  return { ...ledgerHistory([]), ...counts };
}

describe('jobStatus on DynamoDB Local', () => {
  let clients: AwsClients;
  let ledger: Ledger;
  let results: ResultStore;
  let erasure: ErasureLedger;
  /** The ledger's clock: every claim and entry one second after the one before. */
  let clock = Date.parse('2030-01-01T00:00:00.000Z');
  const tick = () => new Date((clock += 1000));

  before(async () => {
    clients = createAwsClients('us-east-1', testEndpoints());
    const names = uniqueLaneResources();
    await Promise.all([ensureTable(clients.dynamodb, names.ledgerTable, LEDGER_TABLE), ensureTable(clients.dynamodb, names.resultsTable, RESULTS_TABLE)]);
    ledger = new Ledger({ dynamodb: clients.dynamodb, tableName: names.ledgerTable, now: tick });
    results = new ResultStore({ dynamodb: clients.dynamodb, tableName: names.resultsTable });
    erasure = new ErasureLedger({ dynamodb: clients.dynamodb, tableName: names.ledgerTable, retentionDays: 90, now: tick });
  });
  after(() => clients.destroy());

  const status = (jobId: string): Promise<JobStatusView> => jobStatus(jobId, { results, ledger });
  const claim = (job: Job) => ledger.claimJob({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us' });
  const record = (job: Job, kind: LedgerKind, reason: string, extra: Partial<LedgerEntryInput> = {}) =>
    ledger.record({
      jobId: job.jobId,
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      kind,
      reason,
      attempt: 0,
      deferrals: 0,
      details: DOCUMENT_TEXT,
      ...extra,
    });
  const commit = (job: Job) =>
    results.commitOnce(
      resultRecordFor(
        job,
        { result: { invoiceNumber: 'INV-1', total: 99 }, usage: { inputTokens: 310, outputTokens: 42 }, model: 'fake-1', modelCalls: 1 },
        tick(),
      ),
    );

  it('is unknown for a job no consumer received, a wrong id, or one rejected only under its message id', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await ledger.record({ jobId: `msg:${uniqueName('m')}`, region: 'us', kind: 'rejected', reason: 'invalid_job', attempt: 0, deferrals: 0 });

    // Act
    const views = await Promise.all([status(job.jobId), status(''), status('x'.repeat(3000))]);

    // Assess
    assert.deepEqual(views[0], { jobId: job.jobId, state: 'unknown', history: historyWith({}) });
    assert.equal(views[1]!.state, 'unknown');
    assert.equal(views[2]!.state, 'unknown');
    assert.equal(await ledger.claimOf(job.jobId), undefined);
  });

  it('is received once claimed, with no outcome yet', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await claim(job);

    // Act
    const view = await status(job.jobId);

    // Assess
    const claimed = await ledger.claimOf(job.jobId);
    assert.deepEqual(claimed, { jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', at: claimed?.at });
    assert.deepEqual(view, {
      jobId: job.jobId,
      state: 'received',
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      history: historyWith({}),
      at: claimed?.at,
    });
  });

  it('keeps who first submitted the job and its tenant on the claim; a claim for another key is refused and changes nothing', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    const tenant = 'arn:aws:iam::000000000000:role/service-a';

    // Act: the producer's delivery, then the lane's own re-sent copy, then a message reusing the id
    const first = await ledger.claimJob({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', tenant, submittedBy: 'AROAPRODUCER:s1' });
    const again = await ledger.claimJob({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', tenant, submittedBy: 'AROACONSUMER:s2' });
    const reused = await ledger.claimJob({ jobId: job.jobId, idempotencyKey: 'f'.repeat(64), region: 'us', submittedBy: 'AROAOTHER:s3' });

    // Assess
    assert.deepEqual([first, again, reused], [{ claimed: true }, { claimed: true }, { claimed: false, idempotencyKey: job.idempotencyKey }]);
    const claimed = await ledger.claimOf(job.jobId);
    assert.deepEqual(claimed, { jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', at: claimed?.at, tenant, submittedBy: 'AROAPRODUCER:s1' });
    assert.equal((await status(job.jobId)).state, 'received');
    const reader = (mine: string) => ({ mayRead: (owner: string | undefined) => owner === mine });
    assert.equal((await jobStatus(job.jobId, { results, ledger }, reader('arn:aws:iam::000000000000:role/service-b'))).state, 'unknown');
    assert.equal((await jobStatus(job.jobId, { results, ledger }, reader(tenant))).state, 'received');
  });

  it('is pending after a deferral, with the eligibleAt the deferral recorded', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    const other = sampleJob(uniqueName('job'));
    await claim(job);
    const deferred = await record(job, 'deferred', 'rate_limited', { deferrals: 1, eligibleAt: '2030-01-01T00:10:00.000Z' });
    await claim(other);
    await record(other, 'deferred', 'admission_denied', { deferrals: 3 });

    // Act
    const [view, withoutEligibleAt] = await Promise.all([status(job.jobId), status(other.jobId)]);

    // Assess
    assert.deepEqual(view, {
      jobId: job.jobId,
      state: 'pending',
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      history: historyWith({ deferred: 1 }),
      reason: 'rate_limited',
      deferrals: 1,
      eligibleAt: '2030-01-01T00:10:00.000Z',
      at: deferred.at,
    });
    assert.equal(withoutEligibleAt.state, 'pending');
    assert.ok(withoutEligibleAt.state === 'pending' && !('eligibleAt' in withoutEligibleAt) && withoutEligibleAt.deferrals === 3);
  });

  it('is received again when the deferred copy comes back (a later claim), and while it is validated', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await claim(job);
    await record(job, 'deferred', 'rate_limited', { deferrals: 1 });
    await claim(job);

    // Act
    const back = await status(job.jobId);
    const failed = await record(job, 'validation_failed', 'schema_invalid', { failingFields: ['total'] });
    const validating = await status(job.jobId);

    // Assess
    assert.equal(back.state, 'received');
    assert.equal(back.state === 'received' && back.at, (await ledger.claimOf(job.jobId))?.at);
    assert.equal(validating.state, 'received');
    assert.equal(validating.state === 'received' && validating.at, failed.at);
    assert.deepEqual(validating.history, historyWith({ deferred: 1, validation_failed: 1 }));
  });

  it('is needs_review after a failed repair', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await claim(job);
    await record(job, 'validation_failed', 'schema_invalid');
    await record(job, 'validation_failed', 'domain_invalid');
    const review = await record(job, 'needs_review', 'validation_failed');

    // Act
    const view = await status(job.jobId);

    // Assess
    assert.deepEqual(view, {
      jobId: job.jobId,
      state: 'needs_review',
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      history: historyWith({ validation_failed: 2, needs_review: 1 }),
      reason: 'validation_failed',
      at: review.at,
    });
  });

  it('is rejected when the latest entry is a rejection, deferrals before it counted', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    for (let i = 1; i <= 2; i++) {
      await claim(job);
      await record(job, 'deferred', 'rate_limited', { deferrals: i });
    }
    await claim(job);
    const rejected = await record(job, 'rejected', 'deadline');

    // Act
    const view = await status(job.jobId);

    // Assess
    assert.equal(view.state, 'rejected');
    assert.ok(view.state === 'rejected');
    assert.equal(view.reason, 'deadline');
    assert.equal(view.at, rejected.at);
    assert.deepEqual(view.history, historyWith({ deferred: 2, rejected: 1 }));
  });

  it('is dead_lettered after its retry budget is spent, and pending again once redriven and deferred', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await claim(job);
    await record(job, 'deferred', 'rate_limited', { deferrals: 1 });
    await claim(job);
    const last = await record(job, 'dead_letter_pending', 'provider_5xx', { attempt: 3 });

    // Act
    const dead = await status(job.jobId);
    await claim(job); // an operator redrives it from the DLQ
    await record(job, 'deferred', 'rate_limited', { deferrals: 2 });
    const redriven = await status(job.jobId);

    // Assess
    assert.deepEqual(dead, {
      jobId: job.jobId,
      state: 'dead_lettered',
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      history: historyWith({ deferred: 1, dead_letter_pending: 1 }),
      reason: 'provider_5xx',
      at: last.at,
    });
    assert.equal(redriven.state, 'pending');
  });

  it('is committed once a result exists, whatever the ledger says after it', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await claim(job);
    await record(job, 'deferred', 'rate_limited', { deferrals: 1 });
    await claim(job);
    await commit(job);
    const stored = await results.get(job.idempotencyKey);
    await record(job, 'needs_review', 'validation_failed'); // a late copy's line

    // Act
    const view = await status(job.jobId);

    // Assess
    assert.deepEqual(view, {
      jobId: job.jobId,
      state: 'committed',
      idempotencyKey: job.idempotencyKey,
      region: 'us',
      history: historyWith({ deferred: 1, needs_review: 1 }),
      result: { invoiceNumber: 'INV-1', total: 99 },
      model: 'fake-1',
      usage: { inputTokens: 310, outputTokens: 42 },
      committedAt: stored?.committedAt,
      committedBy: job.jobId,
    });
  });

  it('shows a duplicate job (same idempotency key, other id) as committed by the first, sharing its result', async () => {
    // Prepare
    const document = uniqueName('doc');
    const first = sampleJob(uniqueName('job'), document);
    const second = sampleJob(uniqueName('job'), document);
    await claim(first);
    await commit(first);
    await claim(second);

    // Act
    const [firstView, secondView] = await Promise.all([status(first.jobId), status(second.jobId)]);

    // Assess
    assert.equal(firstView.state, 'committed');
    assert.ok(firstView.state === 'committed' && !('duplicateOf' in firstView));
    assert.equal(secondView.state, 'committed');
    assert.ok(secondView.state === 'committed');
    assert.equal(secondView.committedBy, first.jobId);
    assert.equal(secondView.duplicateOf, first.jobId);
    assert.deepEqual(secondView.result, { invoiceNumber: 'INV-1', total: 99 });
  });

  it('never shows a ledger entry detail or any document text', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'), DOCUMENT_TEXT);
    const views: JobStatusView[] = [];
    await claim(job);
    for (const [kind, reason] of [
      ['validation_failed', 'schema_invalid'],
      ['needs_review', 'validation_failed'],
      ['rejected', 'deadline'],
      ['dead_letter_pending', 'timeout'],
      ['deferred', 'rate_limited'],
    ] as const) {
      await record(job, kind, reason);
      views.push(await status(job.jobId));
    }

    // Act
    const shown = JSON.stringify(views);

    // Assess
    assert.deepEqual(
      views.map((v) => v.state),
      ['received', 'needs_review', 'rejected', 'dead_lettered', 'pending'],
    );
    assert.ok(!shown.includes('ACME'), shown);
    assert.ok(!shown.includes('details'), shown);
  });

  it('is erased once an erasure removed its records (read with the erasure records; without them unknown, as before)', async () => {
    // Prepare: a committed job of service-a whose source service-a erased (the claim and entries removed, the marker left)
    const job = sampleJob(uniqueName('job'));
    const tenant = 'arn:aws:iam::000000000000:role/service-a';
    const source = { sourceId: job.input.sourceId, contentSha256: job.input.contentSha256 };
    await ledger.claimJob({ jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', tenant, source });
    await record(job, 'validation_failed', 'schema_invalid');
    await commit(job);
    assert.equal((await ledger.claimOf(job.jobId))?.sourceId, job.input.sourceId, 'the claim names its source');
    await results.delete(job.idempotencyKey);
    const removed = await erasure.eraseJob(job.jobId, job.input.sourceId, tenant);
    const reader = (mine: string) => ({ mayRead: (owner: string | undefined) => owner === mine });

    // Act
    const view = await jobStatus(job.jobId, { results, ledger, erasure });
    const withoutErasure = await jobStatus(job.jobId, { results, ledger });
    const toEraser = await jobStatus(job.jobId, { results, ledger, erasure }, reader(tenant));
    const toOther = await jobStatus(job.jobId, { results, ledger, erasure }, reader('arn:aws:iam::000000000000:role/service-b'));
    const neverSeen = await jobStatus(uniqueName('job'), { results, ledger, erasure });

    // Assess
    assert.equal(removed, 2, 'the claim and the entry');
    const marker = await erasure.erasedJob(job.jobId);
    assert.ok(marker);
    assert.deepEqual(view, { jobId: job.jobId, state: 'erased', history: historyWith({}), erasedAt: marker.erasedAt, erasedBy: tenant });
    assert.deepEqual(withoutErasure, { jobId: job.jobId, state: 'unknown', history: historyWith({}) });
    assert.deepEqual(toEraser, view);
    assert.deepEqual(toOther, withoutErasure, 'to a reader who may not read jobs of whoever erased it: a job never seen');
    assert.equal(neverSeen.state, 'unknown');
  });

  it('is not erased while the job has a claim or entries (the id claimed again after an erasure)', async () => {
    // Prepare
    const job = sampleJob(uniqueName('job'));
    await erasure.eraseJob(job.jobId, job.input.sourceId, 'operator');
    await claim(job);

    // Act
    const view = await jobStatus(job.jobId, { results, ledger, erasure });

    // Assess
    assert.equal(view.state, 'received');
    assert.deepEqual(await ledger.entriesFor(job.jobId), [], 'the marker is not an entry');
  });

  it('reports an unreachable store as StoreUnavailableError', async () => {
    // Prepare
    const dead = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    const stores = { results: new ResultStore({ dynamodb: dead, tableName: 'nowhere' }), ledger: new Ledger({ dynamodb: dead, tableName: 'nowhere' }) };

    // Act + Assess
    await assert.rejects(jobStatus('job-1', stores), (error: unknown) => error instanceof StoreUnavailableError && error.cause !== undefined);
    dead.destroy();
  });
});
