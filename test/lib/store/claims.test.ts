/**
 * The idempotency-key claims (lib/store/claims.ts) on the run's DynamoDB Local: one holder at a time,
 * a passed hold taken over, completing and giving back only by the holder, five claims at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAwsClients, type AwsClients } from '../../../lib/platform/clients.js';
import { DynamoKeyClaims, type HeldClaim } from '../../../lib/store/claims.js';
import { ensureTable } from '../../../lib/store/ensure-table.js';
import { RATE_STATE_TABLE } from '../../../lib/store/tables.js';
import { testEndpoints, uniqueName } from '../../helpers/endpoints.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

describe('idempotency-key claims on DynamoDB Local', () => {
  let clients: AwsClients;
  let claims: DynamoKeyClaims;

  before(async () => {
    clients = createAwsClients('us-east-1', testEndpoints());
    const tableName = uniqueName('rate-state');
    await ensureTable(clients.dynamodb, tableName, RATE_STATE_TABLE);
    claims = new DynamoKeyClaims({ dynamodb: clients.dynamodb, tableName, lane: 'us' });
  });
  after(() => clients.destroy());

  it('of five claims at once, one holds the key; the others see it held by that job until its hold ends', async () => {
    // Prepare
    const key = uniqueName('key');

    // Act
    const found = await Promise.all([1, 2, 3, 4, 5].map((n) => claims.claim({ idempotencyKey: key, jobId: `job-${n}`, holdMs: 60_000, nowMs: T0 })));

    // Assess
    const holders = found.filter((f) => f.held);
    assert.equal(holders.length, 1);
    const waiting = found.filter((f) => !f.held);
    const holderJob = `job-${found.findIndex((f) => f.held) + 1}`;
    assert.deepEqual(
      waiting.map((w) => (w.held ? undefined : w.state === 'in_progress' ? [w.jobId, w.until] : w.state)),
      Array.from({ length: 4 }, () => [holderJob, T0 + 60_000]),
    );
  });

  it('a hold that has passed (a crashed holder) is taken over; the old holder can then neither complete nor give back the new claim', async () => {
    // Prepare
    const key = uniqueName('key');
    const old = (await claims.claim({ idempotencyKey: key, jobId: 'job-old', holdMs: 5_000, nowMs: T0 })) as HeldClaim;
    assert.equal(old.held, true);

    // Act
    const early = await claims.claim({ idempotencyKey: key, jobId: 'job-new', holdMs: 5_000, nowMs: T0 + 4_000 });
    const late = await claims.claim({ idempotencyKey: key, jobId: 'job-new', holdMs: 5_000, nowMs: T0 + 5_001 });
    await claims.release(key, old);
    await claims.complete(key, old, 'job-old', T0 + 5_002);

    // Assess: still held by the new holder
    assert.equal(early.held, false, 'not before the hold ends');
    assert.equal(late.held, true, 'taken over after it');
    const third = await claims.claim({ idempotencyKey: key, jobId: 'job-third', holdMs: 5_000, nowMs: T0 + 6_000 });
    assert.deepEqual(third, { held: false, state: 'in_progress', until: T0 + 5_001 + 5_000, jobId: 'job-new' });
  });

  it('a completed key answers who committed it; a key given back is free for the next claim', async () => {
    // Prepare
    const done = uniqueName('key');
    const given = uniqueName('key');
    const a = (await claims.claim({ idempotencyKey: done, jobId: 'job-a', holdMs: 5_000, nowMs: T0 })) as HeldClaim;
    const b = (await claims.claim({ idempotencyKey: given, jobId: 'job-b', holdMs: 5_000, nowMs: T0 })) as HeldClaim;

    // Act
    await claims.complete(done, a, 'job-a', T0 + 1_000);
    await claims.release(given, b);

    // Assess
    assert.deepEqual(await claims.claim({ idempotencyKey: done, jobId: 'job-c', holdMs: 5_000, nowMs: T0 + 2_000 }), {
      held: false,
      state: 'completed',
      committedBy: 'job-a',
    });
    assert.equal((await claims.claim({ idempotencyKey: given, jobId: 'job-d', holdMs: 5_000, nowMs: T0 + 2_000 })).held, true);
  });
});
