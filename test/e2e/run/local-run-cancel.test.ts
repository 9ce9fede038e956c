/**
 * `npm run local --cancel N`: the local run (in-process, from its own flags) starts its own stack, cancels N
 * of its jobs not yet committed mid-run (once a twentieth of the jobs committed) in the lanes they were
 * submitted to, and reports how they ended: each `cancelled`, none committed, none left in a queue; every
 * other job committed, nothing lost. Before the stack stops, the stores are read beside the scorecard: the
 * `#cancelled` markers in the ledgers, each such job stopped by a consumer (`rejected`, reason
 * `cancelled`), no result of its idempotency key or job id in the results tables. Beside it: `--cancel`
 * usage errors.
 *
 * The provider's limit (30 requests a minute per key, under the jobs of a lane) keeps jobs deferred at the
 * moment: at the default limits the run drains in one burst, every job left is in flight and commits within
 * a second or so, and whether 20 cancels all land before their commits is a race the run does not always win.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { runCommand, UsageError } from '../../../lib/cli/command.js';
import { runCli } from '../../../lib/cli/index.js';
import { COMMANDS } from '../../../workbench/commands.js';
import { LEDGER_TABLE } from '../../../lib/store/tables.js';
import { localCommand } from '../../../workbench/drivers/run/command.js';
import type { CancellationFigures } from '../../../workbench/drivers/run/cancel-load.js';
import type { LocalLane, LocalStack } from '../../../workbench/local-stack/stack.js';

/** The sort key of a job's cancel marker (lib/store/cancellation.ts). */
const CANCELLED_MARKER = '#cancelled';

/** Matches a usage error (exit code 2) whose message matches `message`. */
function usage(message: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof UsageError && !error.help && message.test(error.message);
}

/** Job ids with a cancel marker in the lane's ledger table. */
async function cancelMarkers(lane: LocalLane): Promise<string[]> {
  const ids: string[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await lane.clients.dynamodb.send(
      new ScanCommand({
        TableName: lane.lane.resources.ledgerTable,
        FilterExpression: '#sk = :marker',
        ExpressionAttributeNames: { '#sk': LEDGER_TABLE.sortKey as string },
        ExpressionAttributeValues: { ':marker': { S: CANCELLED_MARKER } },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) ids.push(String(unmarshall(item)[LEDGER_TABLE.partitionKey]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return ids;
}

/** What the stores hold of the cancelled jobs at the end of the run, read before the stack stops. */
interface StoresSeen {
  /** Job ids with a `#cancelled` marker, every lane. */
  markers: string[];
  /** Of them, jobs with a `rejected` entry of reason `cancelled` (stopped by a consumer). */
  stopped: string[];
  /** Of them, the idempotency keys their claim or entries name. */
  keys: string[];
  /** Every result of every lane: its job id and idempotency key. */
  results: { jobId: string; idempotencyKey: string }[];
  /** Results of the marked jobs read by their idempotency key (GetItem): must be none. */
  resultsByKey: number;
}

/** Runs `ratelane <argv> --endpoints <the stack's>`, as a user would against the kept stack; resolves its exit code and output. */
async function ratelane(stack: LocalStack, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = { stdout: { write: (c: string) => (out += c) }, stderr: { write: (c: string) => (err += c) }, env: {} };
  const code = await runCli(COMMANDS, [...argv, '--endpoints', JSON.stringify(stack.endpoints)], io);
  return { code, out, err };
}

/** Reads {@link StoresSeen} from every lane of `stack`. */
async function readStores(stack: LocalStack): Promise<StoresSeen> {
  const seen: StoresSeen = { markers: [], stopped: [], keys: [], results: [], resultsByKey: 0 };
  for (const lane of Object.values(stack.lanes)) {
    for (const r of await lane.results.scanAll()) seen.results.push({ jobId: r.jobId, idempotencyKey: r.idempotencyKey });
    for (const jobId of await cancelMarkers(lane)) {
      seen.markers.push(jobId);
      const [claim, entries] = await Promise.all([lane.ledger.claimOf(jobId), lane.ledger.entriesFor(jobId)]);
      if (entries.some((e) => e.kind === 'rejected' && e.reason === 'cancelled')) seen.stopped.push(jobId);
      const key = claim?.idempotencyKey ?? entries.at(-1)?.idempotencyKey;
      if (key === undefined) continue;
      seen.keys.push(key);
      if (await lane.results.get(key)) seen.resultsByKey++;
    }
  }
  return seen;
}

describe('npm run local --cancel', () => {
  it('cancels N jobs not committed mid-run: each ends cancelled with no commit, every other job committed, nothing lost', async () => {
    // Prepare
    const options = localCommand.parse([
      '--jobs',
      '100',
      '--cancel',
      '20',
      '--provider-rpm',
      '30',
      '--json',
      '--log-file',
      '.cache/test-local-run-cancel/a.log',
    ]);
    let stores: StoresSeen | undefined;
    let commands: Record<string, { code: number; out: string; err: string }> = {};
    let out = '';
    let err = '';
    const io = { stdout: { write: (c: string) => (out += c) }, stderr: { write: (c: string) => (err += c) } };
    // Act
    const code = await localCommand.run(
      {
        ...options,
        beforeStop: async (stack) => {
          stores = await readStores(stack);
          // ratelane's operator commands against the stack, as `--keep` leaves it for them
          // The cancelled jobs may be any lane's: both are listed, one of them shown in its lane.
          const cancelledUs = await ratelane(stack, ['jobs', 'list', '--lane', 'us', '--state', 'cancelled', '--json']);
          const cancelledEu = await ratelane(stack, ['jobs', 'list', '--lane', 'eu', '--state', 'cancelled', '--json']);
          const jobsOf = (r: { out: string }) => (JSON.parse(r.out) as { jobs: Array<{ jobId: string }> }).jobs;
          const inUs = jobsOf(cancelledUs)[0]?.jobId;
          const [one, oneLane] = inUs !== undefined ? [inUs, 'us'] : [jobsOf(cancelledEu)[0]?.jobId ?? '', 'eu'];
          commands = {
            cancelledUs,
            cancelledEu,
            show: await ratelane(stack, ['jobs', 'show', one, '--lane', oneLane]),
            redrive: await ratelane(stack, ['redrive', '--lane', 'us', '--dry-run']),
          };
        },
        keep: true,
        keepUntil: Promise.resolve(),
      },
      io,
    );
    // Assess: the scorecard
    assert.equal(code, 0, err);
    const card = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, number> & { cancellation: CancellationFigures };
    const cancellation = card.cancellation;
    assert.ok(cancellation, 'the scorecard has a cancellation block');
    assert.equal(cancellation.requested, 20);
    assert.equal(cancellation.cancelled, 20);
    assert.ok(cancellation.atCommits !== null && cancellation.atCommits >= 5, `cancelled once a twentieth committed, at ${cancellation.atCommits}`);
    assert.ok(cancellation.uncommittedThen !== null && cancellation.uncommittedThen >= 20, `${cancellation.uncommittedThen} not committed then`);
    assert.equal(cancellation.cancelledWhile.inFlight + cancellation.cancelledWhile.queued, 20);
    assert.ok(cancellation.cancelledWhile.inFlight > 0 && cancellation.cancelledWhile.queued > 0, 'jobs in flight and still queued both cancelled');
    assert.equal(cancellation.committedAfterCancel, 0);
    assert.equal(cancellation.notEndedCancelled, 0);
    assert.equal(cancellation.endedCancelled, 20);
    assert.equal(cancellation.leftInQueues, 0);
    assert.equal(cancellation.errors, 0);
    assert.deepEqual(cancellation.problems, []);
    assert.equal(card.submitted, 100);
    assert.equal(card.committed, 80, 'every other job committed');
    assert.equal(card.lost, 0);
    assert.equal(card.waiting, 0);
    assert.equal(card.deadLettered, 0);
    assert.equal(card.rejected, 0, 'a cancelled job is no rejection of the queue lane');
    assert.equal(card.doubleCommits, 0);
    assert.match(out, /jobs cancelled\s+20 of 20 at \d+ commits/);
    assert.match(out, /committed after the cancel\s+0/);
    assert.match(err, /cancelling 20 of the \d+ jobs sent and not committed at \d+\/100 committed/);
    // Assess: the stores, read before the stack stopped
    assert.ok(stores, 'the stores were read before the stack stopped');
    const marked = new Set(stores.markers);
    assert.equal(marked.size, 20, 'twenty #cancelled markers in the ledgers');
    assert.equal(stores.stopped.length, 20, 'each cancelled job was stopped by a consumer (rejected, cancelled)');
    assert.equal(stores.keys.length, 20, 'each cancelled job was received: its claim or entry names its idempotency key');
    assert.equal(stores.resultsByKey, 0, 'no result under a cancelled job’s idempotency key');
    const keys = new Set(stores.keys);
    assert.deepEqual(
      stores.results.filter((r) => marked.has(r.jobId) || keys.has(r.idempotencyKey)),
      [],
      'no result of a cancelled job in the results tables',
    );
    assert.equal(stores.results.length, 80, 'the results tables hold the other 80 jobs’ results');
    assert.equal(new Set(stores.results.map((r) => r.jobId)).size, 80);
    // Assess: the commands against the kept stack
    assert.match(err, /the stack stays up for ratelane's commands .*\n\s+--endpoints '\{"sqs":"http/);
    const listed = [commands.cancelledUs!, commands.cancelledEu!].flatMap((r) => {
      assert.equal(r.code, 0, r.err);
      return (JSON.parse(r.out) as { jobs: Array<{ jobId: string; reason: string }> }).jobs;
    });
    assert.deepEqual(listed.map((j) => j.jobId).sort(), [...marked].sort(), 'the two lanes list exactly the cancelled jobs');
    assert.ok(listed.every((j) => j.reason === 'cancelled by ratelane local --cancel'));
    assert.equal(commands.show!.code, 0, commands.show!.err);
    assert.match(commands.show!.out, /in lane (us|eu): cancelled\n[\s\S]*rejected\s+cancelled[\s\S]*timeline:[\s\S]*cancelled\s+by ratelane local --cancel/);
    assert.equal(commands.redrive!.code, 0, commands.redrive!.err);
    assert.match(commands.redrive!.out, /dead-letter queue of lane us: 0 message\(s\)\ndry run: nothing deleted or moved/);
  });

  it('refuses --cancel over the jobs, negative, or with --erase, as a usage error (exit 2) before starting anything', async () => {
    assert.throws(() => localCommand.parse(['--jobs', '10', '--cancel', '11']), usage(/--cancel 11 is more jobs than the 10 jobs/));
    assert.throws(() => localCommand.parse(['--jobs', '10', '--cancel=-1']), usage(/--cancel must be an integer in 0\.\.100000/));
    assert.throws(() => localCommand.parse(['--jobs', '10', '--cancel', '2.5']), usage(/--cancel must be an integer/));
    assert.throws(() => localCommand.parse(['--jobs', '10', '--cancel', '2', '--erase', '2']), usage(/--cancel and --erase cannot be given together/));
    assert.equal(localCommand.parse(['--jobs', '10', '--cancel', '10']).cancel, 10);
    // Without --jobs the corpus (64 documents) is the run.
    let err = '';
    const code = await runCommand(localCommand, ['--cancel', '65'], { stdout: { write: () => true }, stderr: { write: (c: string) => (err += c) } });
    assert.equal(code, 2);
    assert.match(err, /--cancel 65 is more jobs than the 64 jobs of the corpus/);
    assert.match(err, /--cancel N/, 'the usage lists --cancel');
  });
});
