/**
 * The DynamoDB adapters against the run's DynamoDB Local: commit-once, the ledger, table creation and
 * what an unreachable store looks like to the caller.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { idempotencyKeyFor, sha256Hex, type Job } from '../../../lib/contract/job.js';
import { createAwsClients, LOCAL_CREDENTIALS, type AwsClients } from '../../../lib/platform/clients.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { StoreUnavailableError, TableShapeMismatchError } from '../../../lib/store/errors.js';
import { DEFAULT_LEDGER_RETENTION_DAYS, Ledger, MAX_DETAILS_LENGTH } from '../../../lib/store/ledger.js';
import { DynamoKeyClaims } from '../../../lib/store/claims.js';
import { ResultStore, resultRecordFor, type ResultRecord } from '../../../lib/store/results.js';
import { LEDGER_TABLE, RATE_STATE_TABLE, RESULTS_TABLE } from '../../../lib/store/tables.js';
import { testEndpoints, uniqueName } from '../../helpers/endpoints.js';

function sampleJob(n: number): Job {
  const contentSha256 = sha256Hex(`document ${n}`);
  const schemaVersion = 'invoice@1';
  const promptVersion = 'invoice-extract@3';
  const sourceId = `s3://inbox/doc-${n}.txt`;
  return {
    contractVersion: 1,
    jobId: `job-${n}`,
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, promptVersion, schemaVersion }),
    region: 'us',
    input: { bucket: 'ratelane-us-source', key: `in/doc-${n}.txt`, sourceId, contentSha256, bytes: 1200, estimatedTokens: 300 },
    schemaVersion,
    promptVersion,
    attempt: 0,
    deferrals: 2,
    eligibleAt: '2030-01-01T00:00:00.000Z',
    createdAt: '2030-01-01T00:00:00.000Z',
  };
}

function recordFor(job: Job, jobId = job.jobId): ResultRecord {
  return resultRecordFor(
    { ...job, jobId },
    {
      result: { invoiceNumber: 'INV-1', total: 12.5, lines: [{ sku: 'a', qty: 2 }], note: '' },
      usage: { inputTokens: 310, outputTokens: 42 },
      model: 'fake-1',
      modelCalls: 1,
    },
    new Date('2030-01-01T00:05:00.000Z'),
  );
}

describe('store adapters on DynamoDB Local', () => {
  let clients: AwsClients;

  before(() => {
    clients = createAwsClients('us-east-1', testEndpoints());
  });
  after(() => clients.destroy());

  describe('ensureTable', () => {
    it('creates the table ACTIVE with the key schema and TTL, and is idempotent', async () => {
      // Prepare
      const tableName = uniqueName('ledger');

      // Act
      await ensureTable(clients.dynamodb, tableName, LEDGER_TABLE);
      await ensureTable(clients.dynamodb, tableName, LEDGER_TABLE);

      // Assess
      const described = await clients.dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
      assert.equal(described.Table?.TableStatus, 'ACTIVE');
      assert.deepEqual(
        described.Table?.KeySchema?.map((k) => [k.AttributeName, k.KeyType]),
        [
          ['jobId', 'HASH'],
          ['entryId', 'RANGE'],
        ],
      );
      assert.equal(described.Table?.BillingModeSummary?.BillingMode, 'PAY_PER_REQUEST');
      const ttl = await clients.dynamodb.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
      assert.equal(ttl.TimeToLiveDescription?.TimeToLiveStatus, 'ENABLED');
      assert.equal(ttl.TimeToLiveDescription?.AttributeName, 'expiresAt');
    });

    it('refuses an existing table with another key schema', async () => {
      // Prepare
      const tableName = uniqueName('results');
      await ensureTable(clients.dynamodb, tableName, RESULTS_TABLE);

      // Act + Assess
      await assert.rejects(ensureTable(clients.dynamodb, tableName, LEDGER_TABLE), TableShapeMismatchError);
    });
  });

  describe('ResultStore', () => {
    let store: ResultStore;

    before(async () => {
      const tableName = uniqueName('results');
      await ensureTable(clients.dynamodb, tableName, RESULTS_TABLE);
      store = new ResultStore({ dynamodb: clients.dynamodb, tableName });
    });

    it('commits once; the second write of the key is a duplicate carrying the first record', async () => {
      // Prepare
      const job = sampleJob(1);
      const first = recordFor(job);
      const second = recordFor(job, 'job-1-redelivered');

      // Act
      const a = await store.commitOnce(first);
      const b = await store.commitOnce(second);

      // Assess
      assert.deepEqual(a, { status: 'committed' });
      assert.equal(b.status, 'duplicate');
      assert.ok(b.status === 'duplicate');
      assert.equal(b.existing.jobId, 'job-1');
      assert.deepEqual(b.existing, first);
      assert.deepEqual(await store.get(job.idempotencyKey), first);
    });

    it("completes the key's claim in the commit's transaction, and leaves it held when the commit is a duplicate", async () => {
      // Prepare
      const rateState = uniqueName('rate-state');
      await ensureTable(clients.dynamodb, rateState, RATE_STATE_TABLE);
      const claims = new DynamoKeyClaims({ dynamodb: clients.dynamodb, tableName: rateState, lane: 'us' });
      const job = sampleJob(41);
      const now = Date.parse('2030-01-01T00:05:00.000Z');
      const first = await claims.claim({ idempotencyKey: job.idempotencyKey, jobId: 'job-41', holdMs: 60_000, nowMs: now });
      assert.equal(first.held, true);

      // Act: a commit with the completion; then a redelivery (its hold taken over) commits a duplicate with its own
      const committed = await store.commitOnce(recordFor(job), {}, [claims.completionWrite(job.idempotencyKey, 'job-41', now)]);
      const afterCommit = await claims.claim({ idempotencyKey: job.idempotencyKey, jobId: 'job-41-again', holdMs: 60_000, nowMs: now + 1 });
      const other = sampleJob(42);
      const held = await claims.claim({ idempotencyKey: other.idempotencyKey, jobId: 'job-42', holdMs: 60_000, nowMs: now });
      await store.commitOnce(recordFor(other));
      const duplicate = await store.commitOnce(recordFor(other, 'job-42-redelivered'), {}, [
        claims.completionWrite(other.idempotencyKey, 'job-42-redelivered', now),
      ]);
      const afterDuplicate = await claims.claim({ idempotencyKey: other.idempotencyKey, jobId: 'job-42-again', holdMs: 60_000, nowMs: now + 1 });

      // Assess
      assert.deepEqual(committed, { status: 'committed' });
      assert.deepEqual(afterCommit, { held: false, state: 'completed', committedBy: 'job-41' });
      assert.equal(held.held, true);
      assert.equal(duplicate.status, 'duplicate');
      assert.deepEqual(
        afterDuplicate,
        { held: false, state: 'in_progress', until: now + 60_000, jobId: 'job-42' },
        'nothing of the refused transaction written',
      );
    });

    it("keeps a result for the lane's retention: expiresAt (the table's TTL attribute) is its commit plus resultsDays", async () => {
      // Prepare
      const job = sampleJob(40);
      const record = recordFor(job);
      const kept = new ResultStore({ dynamodb: clients.dynamodb, tableName: store.tableName, retentionDays: 365 });

      // Act
      await kept.commitOnce(record);
      const stored = await kept.get(job.idempotencyKey);

      // Assess
      assert.equal(stored?.expiresAt, Math.floor(Date.parse(record.committedAt) / 1000) + 365 * 86_400);
      assert.equal(RESULTS_TABLE.ttlAttribute, 'expiresAt');
    });

    it('stores every field the consumer needs', async () => {
      // Prepare
      const job = sampleJob(2);

      // Act
      await store.commitOnce(recordFor(job));
      const stored = await store.get(job.idempotencyKey);

      // Assess
      assert.ok(stored);
      assert.equal(stored.idempotencyKey, job.idempotencyKey);
      assert.equal(stored.region, 'us');
      assert.equal(stored.schemaVersion, 'invoice@1');
      assert.equal(stored.promptVersion, 'invoice-extract@3');
      assert.deepEqual(stored.result, { invoiceNumber: 'INV-1', total: 12.5, lines: [{ sku: 'a', qty: 2 }], note: '' });
      assert.deepEqual(stored.usage, { inputTokens: 310, outputTokens: 42 });
      assert.equal(stored.model, 'fake-1');
      assert.equal(stored.attempt, 0);
      assert.equal(stored.deferrals, 2);
      assert.equal(stored.modelCalls, 1);
      assert.equal(stored.committedAt, '2030-01-01T00:05:00.000Z');
      assert.equal(stored.jobCreatedAt, job.createdAt);
      assert.equal(await store.get('0'.repeat(64)), undefined);
    });

    it('lets exactly one of 20 concurrent commits of one key win', async () => {
      // Prepare
      const job = sampleJob(3);
      const records = Array.from({ length: 20 }, (_, i) => recordFor(job, `job-3-delivery-${i}`));

      // Act
      const outcomes = await Promise.all(records.map((r) => store.commitOnce(r)));

      // Assess
      const committed = outcomes.flatMap((o, i) => (o.status === 'committed' ? [i] : []));
      const duplicates = outcomes.filter((o) => o.status === 'duplicate');
      assert.equal(committed.length, 1);
      assert.equal(duplicates.length, 19);
      const winner = `job-3-delivery-${committed[0]}`;
      for (const d of duplicates) assert.equal(d.status === 'duplicate' && d.existing.jobId, winner);
      assert.equal((await store.get(job.idempotencyKey))?.jobId, winner);
    });

    it('scans and counts across pages', async () => {
      // Prepare: a fresh table so the count is exact; ~2.2 MB of items forces more than one Scan page
      const tableName = uniqueName('results');
      await ensureTable(clients.dynamodb, tableName, RESULTS_TABLE);
      const counting = new DynamoDBClient({ region: 'us-east-1', endpoint: testEndpoints().dynamodb, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
      let scanCalls = 0;
      counting.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'ScanCommand') scanCalls += 1;
          return next(args);
        },
        { step: 'initialize', name: 'countScans' },
      );
      const own = new ResultStore({ dynamodb: counting, tableName });
      const padding = 'x'.repeat(100_000);
      const jobs = Array.from({ length: 22 }, (_, i) => sampleJob(100 + i));
      await Promise.all(jobs.map((job) => own.commitOnce({ ...recordFor(job), result: { padding } })));

      // Act
      const all = await own.scanAll();
      const scanPages = scanCalls;
      const count = await own.count();
      counting.destroy();

      // Assess
      assert.ok(scanPages > 1, `scanAll followed LastEvaluatedKey (${scanPages} pages)`);
      assert.equal(all.length, 22);
      assert.equal(count, 22);
      assert.deepEqual(new Set(all.map((r) => r.jobId)), new Set(jobs.map((j) => j.jobId)));
    });

    it('reports an unreachable store as StoreUnavailableError with a cause', async () => {
      // Prepare
      const dead = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
      const unreachable = new ResultStore({ dynamodb: dead, tableName: 'nowhere' });

      // Act
      const error = await unreachable.commitOnce(recordFor(sampleJob(4))).then(
        () => assert.fail('commitOnce should have failed'),
        (e: unknown) => e,
      );
      dead.destroy();

      // Assess
      assert.ok(error instanceof StoreUnavailableError);
      assert.equal(error.name, 'StoreUnavailableError');
      assert.equal(error.operation, 'PutItem');
      assert.equal(error.tableName, 'nowhere');
      assert.ok(error.cause, 'keeps the SDK error as cause');
      assert.doesNotMatch(error.message, /INV-1/, 'no result content in the message');
    });
  });

  describe('Ledger', () => {
    let ledger: Ledger;

    before(async () => {
      const tableName = uniqueName('ledger');
      await ensureTable(clients.dynamodb, tableName, LEDGER_TABLE);
      ledger = new Ledger({ dynamodb: clients.dynamodb, tableName });
    });

    it('records entries with all fields and queries them back in order, with a TTL', async () => {
      // Prepare
      const job = sampleJob(5);
      const base = { jobId: job.jobId, idempotencyKey: job.idempotencyKey, region: 'us', schemaVersion: job.schemaVersion, promptVersion: job.promptVersion };

      // Act: recorded out of time order on purpose; the query must return them by time
      const failed = await ledger.record({
        ...base,
        kind: 'validation_failed',
        reason: 'schema_invalid',
        attempt: 0,
        deferrals: 1,
        receiveCount: 2,
        parseStatus: 'schema_invalid',
        failingFields: ['total', 'lines.0.qty'],
        failingRules: ['total_matches_lines'],
        details: 'expected number, received string',
        at: '2030-01-01T00:00:02.000Z',
      });
      const deferred = await ledger.record({ ...base, kind: 'deferred', reason: 'rate_limited', attempt: 0, deferrals: 0, at: '2030-01-01T00:00:01.000Z' });
      const review = await ledger.record({ ...base, kind: 'needs_review', reason: 'repair_failed', attempt: 0, deferrals: 1, at: '2030-01-01T00:00:03.000Z' });
      const entries = await ledger.entriesFor(job.jobId);

      // Assess
      assert.deepEqual(
        entries.map((e) => e.kind),
        ['deferred', 'validation_failed', 'needs_review'],
      );
      assert.deepEqual(entries, [deferred, failed, review]);
      const stored = entries[1]!;
      assert.match(stored.entryId, /^2030-01-01T00:00:02\.000Z#validation_failed#[a-f0-9]{8}$/);
      assert.equal(stored.parseStatus, 'schema_invalid');
      assert.deepEqual(stored.failingFields, ['total', 'lines.0.qty']);
      assert.deepEqual(stored.failingRules, ['total_matches_lines']);
      assert.equal(stored.receiveCount, 2);
      assert.equal(stored.schemaVersion, 'invoice@1');
      assert.equal(stored.promptVersion, 'invoice-extract@3');
      assert.equal(stored.idempotencyKey, job.idempotencyKey);
      assert.equal(stored.expiresAt, Date.parse('2030-01-01T00:00:02.000Z') / 1000 + DEFAULT_LEDGER_RETENTION_DAYS * 86_400);
    });

    it('keeps recording order for entries of the same millisecond and cuts long details', async () => {
      // Prepare
      const at = '2030-02-01T00:00:00.000Z';
      const kinds = ['validation_failed', 'needs_review', 'dead_letter_pending', 'committed'] as const;

      // Act
      for (const kind of kinds) {
        await ledger.record({ jobId: 'job-same-ms', region: 'us', kind, reason: kind, attempt: 1, deferrals: 0, at, details: 'd'.repeat(5000) });
      }
      const entries = await ledger.entriesFor('job-same-ms');

      // Assess
      assert.deepEqual(
        entries.map((e) => e.kind),
        [...kinds],
      );
      for (const e of entries) {
        assert.equal(e.at, at);
        assert.equal(e.details?.length, MAX_DETAILS_LENGTH);
      }
    });

    it('uses the clock when no time is given, and scanAll sees every entry', async () => {
      // Prepare
      const tableName = uniqueName('ledger');
      await ensureTable(clients.dynamodb, tableName, LEDGER_TABLE);
      const now = new Date('2031-05-05T05:05:05.005Z');
      const clocked = new Ledger({ dynamodb: clients.dynamodb, tableName, retentionDays: 1, now: () => now });

      // Act
      const entry = await clocked.record({
        jobId: 'msg:abc',
        region: 'eu',
        kind: 'rejected',
        reason: 'not_json',
        attempt: 0,
        deferrals: 0,
        parseStatus: 'not_json',
      });
      await clocked.record({ jobId: 'job-other', region: 'eu', kind: 'committed', reason: 'committed', attempt: 0, deferrals: 0 });
      const all = await clocked.scanAll();

      // Assess
      assert.equal(entry.at, now.toISOString());
      assert.equal(entry.expiresAt, Math.floor(now.getTime() / 1000) + 86_400);
      assert.equal(all.length, 2);
      assert.deepEqual(new Set(all.map((e) => e.jobId)), new Set(['msg:abc', 'job-other']));
    });

    it('reports an unreachable ledger as StoreUnavailableError', async () => {
      // Prepare
      const dead = new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
      const unreachable = new Ledger({ dynamodb: dead, tableName: 'nowhere' });

      // Act + Assess
      await assert.rejects(
        unreachable.record({ jobId: 'job-x', region: 'us', kind: 'deferred', reason: 'rate_limited', attempt: 0, deferrals: 0 }),
        (e: unknown) => e instanceof StoreUnavailableError && e.operation === 'PutItem' && e.cause !== undefined,
      );
      await assert.rejects(unreachable.entriesFor('job-x'), StoreUnavailableError);
      dead.destroy();
    });
  });
});
