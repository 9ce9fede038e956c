/**
 * `ratelane erase` and `RatelaneClient.erase` on the run's DynamoDB Local and fauxqs, with the real producer
 * and consumer: a committed source erased (its result, ledger items and document gone, its job no longer
 * committed, the other source untouched), erased again (the tombstone counts it, nothing else changes),
 * erased in a lane that holds nothing of it (said so, exit 0), an unknown lane and bad flags (exit 2), a lane
 * whose tables cannot be reached (exit 1: run it again), and the client's receipt of the same shape.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { RatelaneClient, RatelaneClientError } from '../../../lib/client/client.js';
import { runCommand, type CommandIo } from '../../../lib/cli/command.js';
import { createEraseCommand, ERASE_EXIT, type EraseWiring } from '../../../lib/cli/erase.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { sha256Hex } from '../../../lib/contract/job.js';
import { documentKeyFor } from '../../../lib/store/documents.js';
import { jobStatus } from '../../../lib/store/job-status.js';
import {
  englishDocuments,
  invoke,
  receive,
  scriptedModel,
  submitTo,
  testConsumer,
  testLaneConfig,
  trackedLanes,
  type TestLane,
} from '../../helpers/consumer-harness.js';
import { testEndpoints } from '../../helpers/endpoints.js';

const newLane = trackedLanes();

/** Runs `ratelane erase …` with the test's endpoints; resolves the exit code and the output. */
async function erase(lanes: LaneSet, argv: string[], wiring: EraseWiring = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CommandIo = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: {} };
  const code = await runCommand(
    createEraseCommand({ lanes, osUser: () => 'os-user', ...wiring }),
    [...argv, '--endpoints', JSON.stringify(testEndpoints())],
    io,
  );
  return { code, out, err };
}

/** Whether the lane's bucket still holds the document of `sha`. */
async function documentExists(t: TestLane, sha: string): Promise<boolean> {
  try {
    await t.clients.s3.send(new HeadObjectCommand({ Bucket: t.lane.resources.bucketName, Key: documentKeyFor(sha) }));
    return true;
  } catch {
    return false;
  }
}

/** Two documents of two sources submitted to the lane and committed by the real consumer. */
async function twoCommitted(t: TestLane, tag: string) {
  const docs = englishDocuments(2);
  const sources = docs.map((d, i) => `${d.sourceId}#${tag}-${i}`);
  const items = await submitTo(
    t,
    docs.map((d, i) => ({ text: d.text, sourceId: sources[i]! })),
  );
  const { handler } = testConsumer(t, scriptedModel());
  await invoke(t, handler, await receive(t, { max: 2, waitSeconds: 1 }));
  assert.equal(await t.results.count(), 2, 'both committed');
  return { docs, sources, items, shas: docs.map((d) => sha256Hex(d.text)) };
}

const statusOf = (t: TestLane, jobId: string) => jobStatus(jobId, { results: t.results, ledger: t.ledger });

describe('ratelane erase', () => {
  it("erases a committed source: its result, ledger items and document go, its job is no longer committed, the other source's stays", async () => {
    // Prepare
    const t = await newLane();
    const { docs, sources, items, shas } = await twoCommitted(t, 'cli');
    const [gone, kept] = items;
    const invoiceNumber = String((await t.results.get(gone!.idempotencyKey))?.result.invoiceNumber);
    const ledgerItems = (await t.ledger.entriesFor(gone!.jobId)).length + 1;

    // Act
    const run = await erase({ us: t.lane }, ['--lane', 'us', '--source-id', sources[0]!, '--by', 'alice', '--json']);

    // Assess
    assert.equal(run.code, ERASE_EXIT.ok, run.err);
    const receipt = JSON.parse(run.out);
    assert.equal(receipt.ok, true);
    assert.deepEqual([receipt.lane, receipt.region, receipt.sourceId, receipt.by, receipt.found], ['us', 'us-east-1', sources[0], 'alice', true]);
    assert.deepEqual(
      receipt.jobs,
      [{ jobId: gone!.jobId, idempotencyKey: gone!.idempotencyKey, resultRemoved: true, ledgerItemsRemoved: ledgerItems }],
      'its claim and entries',
    );
    assert.deepEqual(receipt.documents, [documentKeyFor(shas[0]!)]);
    assert.deepEqual([receipt.tombstone.erasedBy, receipt.tombstone.erasures, receipt.afterErasure], ['alice', 1, 'refuse']);
    assert.equal(await t.results.get(gone!.idempotencyKey), undefined);
    assert.deepEqual(await t.ledger.entriesFor(gone!.jobId), []);
    assert.equal(await t.ledger.claimOf(gone!.jobId), undefined);
    assert.equal(await documentExists(t, shas[0]!), false);
    assert.ok(['unknown', 'erased'].includes((await statusOf(t, gone!.jobId)).state), 'no longer committed');
    assert.equal((await statusOf(t, kept!.jobId)).state, 'committed', 'the other source is untouched');
    assert.equal(await documentExists(t, shas[1]!), true);
    assert.ok(!run.out.includes(docs[0]!.text.slice(0, 40)) && !run.out.includes(invoiceNumber), 'no document text, no result');
  });

  it('run again: found (its document recorded), the tombstone counts 2 then 3 erasures, nothing else changes; text names each part', async () => {
    // Prepare
    const t = await newLane();
    const { sources, items, shas } = await twoCommitted(t, 'again');
    const first = JSON.parse((await erase({ us: t.lane }, ['--lane', 'us', '--source-id', sources[0]!, '--by', 'alice', '--json'])).out);

    // Act
    const again = await erase({ us: t.lane }, ['--lane', 'us', '--source-id', sources[0]!, '--json']);
    const text = await erase({ us: t.lane }, ['--lane', 'us', '--source-id', sources[0]!]);

    // Assess
    assert.equal(again.code, ERASE_EXIT.ok, again.err);
    const receipt = JSON.parse(again.out);
    assert.deepEqual([receipt.found, receipt.jobs, receipt.documents, receipt.by], [true, [], [documentKeyFor(shas[0]!)], 'os-user']);
    assert.deepEqual(receipt.tombstone, { ...first.tombstone, erasures: 2 }, 'first erased when and by whom: unchanged');
    assert.equal(text.code, ERASE_EXIT.ok, text.err);
    assert.equal(
      text.out,
      [
        `erased source ${JSON.stringify(sources[0])} in lane us (us-east-1), by os-user (os_user) at ${/ at (\S+)\n/.exec(text.out)?.[1]}`,
        '  0 job(s) (none claimed since the last erasure)',
        '  0 batch item(s)',
        '  1 document(s) removed:',
        `    ${documentKeyFor(shas[0]!)}`,
        `  tombstone: first erased ${first.tombstone.erasedAt} by alice; 3 erasure(s) so far`,
        '  new submissions of the source: refused (erasure.afterErasure: refuse): a job of it is stopped at its receive, nothing kept',
        '',
      ].join('\n'),
    );
    assert.equal((await statusOf(t, items[1]!.jobId)).state, 'committed');
    assert.equal(await t.results.count(), 1);
  });

  it('in a lane that holds nothing of the source: says so, exit 0, and the lane that holds it is untouched', async () => {
    // Prepare: the source committed in lane us; a second lane provisioned
    const t = await newLane();
    const other = await newLane();
    const lanes = { us: t.lane, other: { ...other.lane, name: 'other' } };
    const { sources, items } = await twoCommitted(t, 'wrong-lane');

    // Act
    const text = await erase(lanes, ['--lane', 'other', '--source-id', sources[0]!, '--by', 'alice']);
    const json = await erase(lanes, ['--lane', 'other', '--source-id', sources[0]!, '--by', 'alice', '--json']);

    // Assess
    assert.equal(text.code, ERASE_EXIT.ok, text.err);
    assert.ok(
      text.out.startsWith(
        `lane other (us-east-1) holds nothing of source ${JSON.stringify(sources[0])} (no job claimed, no document recorded): nothing removed. If the source's jobs are in another lane, erase there. From now on this lane will not run a job of it.\n`,
      ),
      text.out,
    );
    assert.match(text.out, /^ {2}tombstone: first erased \S+ by alice; 1 erasure\(s\) so far$/m);
    assert.equal(json.code, ERASE_EXIT.ok);
    const receipt = JSON.parse(json.out);
    assert.deepEqual([receipt.ok, receipt.lane, receipt.found, receipt.jobs, receipt.documents, receipt.tombstone.erasures], [true, 'other', false, [], [], 2]);
    assert.equal((await statusOf(t, items[0]!.jobId)).state, 'committed', 'lane us still holds it');
  });

  it('bad usage exits 2: an unknown lane (naming the known ones), no --source-id, a source id over 512 characters', async () => {
    // Prepare
    const lanes = { us: testLaneConfig(), eu: { ...testLaneConfig(), name: 'eu' } };

    // Act
    const unknown = await erase(lanes, ['--lane', 'ap', '--source-id', 'x']);
    const unknownJson = await erase(lanes, ['--lane', 'ap', '--source-id', 'x', '--json']);
    const missing = await erase(lanes, ['--lane', 'us']);
    const tooLong = await erase(lanes, ['--lane', 'us', '--source-id', 's'.repeat(513)]);

    // Assess
    assert.equal(unknown.code, ERASE_EXIT.usage);
    assert.match(unknown.err, /^error: unknown lane "ap"; known lanes: us, eu\n\nusage: ratelane erase/);
    assert.equal(unknownJson.code, ERASE_EXIT.usage);
    assert.deepEqual(JSON.parse(unknownJson.out), { ok: false, error: { kind: 'usage', message: 'unknown lane "ap"; known lanes: us, eu' } });
    assert.equal(missing.code, ERASE_EXIT.usage);
    assert.match(missing.err, /^error: --source-id is required/);
    assert.equal(tooLong.code, ERASE_EXIT.usage);
    assert.match(tooLong.err, /^error: --source-id is 513 characters; a source id is 1-512\n/);
  });

  it('a lane whose tables cannot be reached exits 1 and says to run it again', async () => {
    // Prepare: a lane config never provisioned (no tables, no bucket)
    const lane = testLaneConfig();

    // Act
    const run = await erase({ us: lane }, ['--lane', 'us', '--source-id', 'src-1', '--by', 'alice']);
    const json = await erase({ us: lane }, ['--lane', 'us', '--source-id', 'src-1', '--by', 'alice', '--json']);

    // Assess
    assert.equal(run.code, ERASE_EXIT.failed);
    assert.match(run.err, /^ratelane erase: erasing a source in lane us stopped: .*\. What was removed stays removed: run the same command again\.\n$/);
    assert.equal(json.code, ERASE_EXIT.failed);
    assert.deepEqual([JSON.parse(json.out).ok, JSON.parse(json.out).error.retryable], [false, true]);
  });
});

describe('RatelaneClient.erase', () => {
  it("returns the command's receipt (the same shape); an unknown lane is the client's unknown_lane", async () => {
    // Prepare
    const t = await newLane();
    const { sources, items, shas } = await twoCommitted(t, 'client');
    const client = new RatelaneClient({ lanes: { us: t.lane }, endpoints: testEndpoints() });
    try {
      // Act
      const receipt = await client.erase({ lane: 'us', sourceId: sources[0]!, by: 'service-team' });
      const cli = JSON.parse((await erase({ us: t.lane }, ['--lane', 'us', '--source-id', sources[1]!, '--by', 'alice', '--json'])).out);
      const unknown = await client.erase({ lane: 'ap', sourceId: sources[0]!, by: 'x' }).catch((e: unknown) => e);

      // Assess
      const { ok, ...cliReceipt } = cli;
      assert.equal(ok, true);
      assert.deepEqual(Object.keys(receipt).sort(), Object.keys(cliReceipt).sort());
      assert.deepEqual(Object.keys(receipt.tombstone).sort(), Object.keys(cliReceipt.tombstone).sort());
      assert.deepEqual(Object.keys(receipt.jobs[0]!).sort(), Object.keys(cliReceipt.jobs[0]).sort());
      assert.deepEqual([receipt.found, receipt.jobs.length, receipt.jobs[0]?.jobId, receipt.jobs[0]?.resultRemoved], [true, 1, items[0]!.jobId, true]);
      assert.deepEqual(receipt.documents, [documentKeyFor(shas[0]!)]);
      assert.deepEqual([receipt.by, receipt.tombstone.erasedBy, receipt.afterErasure], ['service-team', 'service-team', 'refuse']);
      assert.ok(['unknown', 'erased'].includes((await client.status(items[0]!.jobId)).state), 'no longer committed');
      assert.ok(unknown instanceof RatelaneClientError && unknown.code === 'unknown_lane', String(unknown));
    } finally {
      client.close();
    }
  });
});
