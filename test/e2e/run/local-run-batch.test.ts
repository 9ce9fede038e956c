/**
 * `npm run local` with the batch lane: a child process that starts its own stack, sends
 * corpus documents through the fake provider's Batch API with dropped and errored lines, reconciles
 * them while the queue lane runs, and reports figures counted from the stores: every item accounted
 * for, the unresolved items exactly the lines the provider dropped or errored, none of them with an
 * object, nothing lost; with lines answered with output that fails the schema, each of them handed to
 * the queue lane, which repairs it (the fake's single-call extraction answers correctly) and commits it
 * or sends it to review, none left waiting; with `--batch-redrive`, the unresolved items redriven to the
 * queue lane once every batch is done and committed there, each once. Batches are answered in a fifth of
 * a provider minute to keep the runs short, and run two at a time.
 * Beside it, in-process: the `--batch-*` flags' usage errors, and the figures flagging what does not add up.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { UsageError } from '../../../lib/cli/command.js';
import { localCommand } from '../../../workbench/drivers/run/command.js';
import { computeBatchFigures, type BatchScorecardBatch } from '../../../workbench/drivers/run/batch-scorecard.js';
import { itemIdFor } from '../../../lib/store/manifest-model.js';

const CLI = ['--import', 'tsx', 'bin/ratelane.ts', 'local'];

/** Runs `npm run local` with `args`; resolves with its exit code and output. */
function runLocal(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RATELANE_TEST_ENDPOINTS: '' } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out, err })));
}

/** Matches a usage error (exit code 2) whose message matches `message`. */
function usage(message: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof UsageError && !error.help && message.test(error.message);
}

/** The JSON scorecard: the last line of stdout. */
function scorecard(
  out: string,
): Record<string, unknown> &
  Record<
    | 'batchItems'
    | 'batchCommitted'
    | 'batchUnresolved'
    | 'batchNeedsReview'
    | 'batchRejected'
    | 'batchWaiting'
    | 'batchRepaired'
    | 'batchRepairNeedsReview'
    | 'batchRedriven'
    | 'batchRedriveCommitted'
    | 'batchRedriveNeedsReview'
    | 'batchRedriveWaiting'
    | 'batchUnresolvedAfterRedrive'
    | 'lost',
    number
  > {
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}');
}

// Each run keeps about one core busy: two at a time on the e2e tier's two cores.
describe('npm run local --batch-jobs', { concurrency: 2 }, () => {
  it('accounts for every batch item; the unresolved ones are exactly the dropped and errored lines, without an object; nothing lost', async () => {
    // Act
    const run = await runLocal([
      '--jobs',
      '0',
      '--batch-jobs',
      '40',
      '--batch-drop',
      '0.15',
      '--batch-error',
      '0.1',
      '--batch-minutes',
      '0.2',
      '--json',
      '--log-file',
      '.cache/test-local-run-batch/a.log',
    ]);
    // Assess
    assert.equal(run.code, 0, run.err);
    const card = scorecard(run.out);
    assert.equal(card.submitted, 0, 'no queue jobs');
    assert.equal(card.batchItems, 40);
    assert.equal(card.batchWaiting, 0);
    assert.equal(card.batchCommitted + card.batchUnresolved + card.batchNeedsReview + card.batchRejected, card.batchItems, JSON.stringify(card));
    const providerLost = [...(card.batchDropped as string[]), ...(card.batchErrored as string[])].sort();
    assert.ok(providerLost.length > 0, 'the fake provider dropped or errored some lines');
    assert.deepEqual(card.batchUnresolvedIds, providerLost, 'unresolved = dropped ∪ errored');
    assert.equal(card.batchUnresolved, providerLost.length);
    assert.equal(card.batchUnresolvedCommitted, 0, 'no committed object for an unresolved item');
    assert.equal(card.batchLost, 0);
    assert.equal(card.lost, 0);
    assert.deepEqual(card.batchProblems, []);
    assert.match(run.out, /batch LOST\s+0/);
    assert.match(run.err, /reconciled to the end/);
    assert.match(run.err, /\[\s*\d+ s\] .*batch \d+\/40 settled/);
  });

  it('hands every invalid output to the queue lane, which commits it (or sends it to review): none waiting, nothing lost', async () => {
    // Act
    const run = await runLocal([
      '--jobs',
      '0',
      '--batch-jobs',
      '40',
      '--batch-invalid',
      '0.1',
      '--batch-minutes',
      '0.2',
      // A seed whose batch sequence makes 8 of the 40 lines invalid (the default one makes 1).
      '--seed',
      '10',
      '--json',
      '--log-file',
      '.cache/test-local-run-batch/c.log',
    ]);
    // Assess
    assert.equal(run.code, 0, run.err);
    const card = scorecard(run.out);
    const invalid = card.batchInvalid as string[];
    assert.ok(invalid.length >= 4, `the fake provider answered some lines with invalid output: ${invalid.length}`);
    assert.deepEqual(card.batchRepairIds, invalid, 'the items sent for a repair are exactly the invalid lines');
    assert.equal(card.batchRepairMatchesProvider, true);
    assert.equal(card.batchRepaired + card.batchRepairNeedsReview, invalid.length, 'every invalid item committed by the queue lane or sent to review');
    assert.equal(card.batchRepaired, invalid.length, "the fake's single-call extraction answers the repair correctly");
    assert.equal(card.batchItems, 40);
    assert.equal(card.batchCommitted + card.batchUnresolved + card.batchNeedsReview + card.batchRejected + card.batchWaiting, card.batchItems);
    assert.equal(card.batchWaiting, 0);
    assert.equal(card.batchCommitted, 40);
    assert.equal(card.batchLost, 0);
    assert.equal(card.lost, 0);
    assert.deepEqual(card.batchProblems, []);
    assert.match(run.out, new RegExp(`provider invalid / repaired\\s+${invalid.length} / ${invalid.length} .* exactly the items sent to the queue lane`));
  });

  it('with --batch-redrive, commits every unresolved item through the queue lane, each once; the batch figures are those before the redrive', async () => {
    // Act
    const run = await runLocal([
      '--jobs',
      '0',
      '--batch-jobs',
      '30',
      '--batch-drop',
      '0.15',
      '--batch-error',
      '0.1',
      '--batch-minutes',
      '0.2',
      '--batch-redrive',
      // A seed whose batch sequence drops 7 and errors 3 of the 30 lines.
      '--seed',
      '7',
      '--json',
      '--log-file',
      '.cache/test-local-run-batch/d.log',
    ]);
    // Assess
    assert.equal(run.code, 0, run.err);
    const card = scorecard(run.out);
    const providerLost = [...(card.batchDropped as string[]), ...(card.batchErrored as string[])].sort();
    assert.ok(card.batchUnresolved > 0, 'the fake provider dropped or errored some lines');
    assert.deepEqual(card.batchUnresolvedIds, providerLost, 'the batch figures describe the batch before the redrive');
    assert.equal(card.batchRedriven, card.batchUnresolved, 'the redrive sent every unresolved item');
    assert.equal(card.batchRedriveCommitted, card.batchRedriven, 'each committed by the queue lane: one result, under its own job id');
    assert.equal(card.batchRedriveNeedsReview, 0);
    assert.equal(card.batchRedriveWaiting, 0);
    assert.equal(card.batchUnresolvedAfterRedrive, 0);
    assert.equal(card.doubleCommits, 0);
    assert.equal(card.batchLost, 0);
    assert.equal(card.lost, 0);
    assert.deepEqual(card.batchProblems, []);
    assert.match(run.out, new RegExp(`batch redriven\\s+${card.batchUnresolved} of the ${card.batchUnresolved} unresolved`));
    assert.match(run.out, /unresolved after redrive\s+0/);
  });

  it('runs the batch lane alongside queue jobs', async () => {
    // Act
    const run = await runLocal(['--jobs', '5', '--batch-jobs', '10', '--batch-minutes', '0.2', '--json', '--log-file', '.cache/test-local-run-batch/b.log']);
    // Assess
    assert.equal(run.code, 0, run.err);
    const card = scorecard(run.out);
    assert.equal(card.submitted, 5);
    assert.equal(card.committed, 5);
    assert.equal(card.batchItems, 10);
    assert.equal(card.batchCommitted, 10);
    assert.equal(card.batchUnresolved + card.batchNeedsReview + card.batchRejected + card.batchWaiting, 0);
    assert.equal(card.lost, 0);
  });

  it('refuses batch settings that cannot hold with a usage error; parses the batch load', () => {
    // Prepare
    const parse = (args: string[]) => localCommand.parse(args);
    // Act
    const parsed = parse(['--jobs', '0', '--batch-jobs', '200', '--batch-drop', '0.03']);
    // Assess
    assert.equal(parsed.jobs, 0);
    assert.deepEqual(parsed.batch, { jobs: 200, dropRate: 0.03, errorRate: 0, invalidRate: 0, minutes: 1 });
    assert.equal(parse(['--batch-jobs', '5', '--batch-invalid', '0.1']).batch?.invalidRate, 0.1);
    assert.equal(parse(['--batch-jobs', '5', '--batch-redrive']).batch?.redrive, true);
    assert.equal(parse([]).jobs, 'corpus');
    const together = usage(/--batch-drop, --batch-error and --batch-invalid together must not exceed 1/);
    assert.throws(() => parse(['--batch-jobs', '5', '--batch-drop', '0.6', '--batch-error', '0.5']), together);
    assert.throws(() => parse(['--batch-jobs', '5', '--batch-drop', '0.5', '--batch-error', '0.3', '--batch-invalid', '0.3']), together);
    assert.throws(() => parse(['--batch-jobs', '5', '--batch-invalid', '1.5']), usage(/--batch-invalid must be a number/));
    assert.throws(() => parse(['--batch-drop', '0.1']), usage(/--batch-drop needs --batch-jobs/));
    assert.throws(() => parse(['--batch-invalid', '0.1']), usage(/--batch-invalid needs --batch-jobs/));
    assert.throws(() => parse(['--batch-redrive']), usage(/--batch-redrive needs --batch-jobs/));
    assert.throws(() => parse(['--batch-jobs', '5', '--batch-minutes', '0']), usage(/--batch-minutes must be a number/));
    assert.throws(() => parse(['--jobs', '0']), usage(/--jobs 0 submits no queue jobs/));
  });
});

describe('the batch figures of the scorecard', () => {
  const key = (i: number) => `key-${i}`;
  /** A batch of `n` items: `unresolved` item indexes unresolved, the rest committed. */
  function batch(n: number, unresolved: number[]): BatchScorecardBatch {
    const ids = Array.from({ length: n }, (_, i) => itemIdFor(i));
    return {
      lane: 'us',
      batchId: 'b-1',
      documents: n,
      items: n,
      rejectedAtSubmit: 0,
      outcome: { committed: n - unresolved.length, needsReview: 0, rejected: 0, unresolved: unresolved.length, waiting: 0 },
      unresolved: unresolved.map((i) => ({ itemId: itemIdFor(i), reason: 'no_result' })),
      manifestItems: ids.map((itemId, i) => ({
        itemId,
        state: unresolved.includes(i) ? 'unresolved' : 'committed',
        jobId: `job-${i}`,
        idempotencyKey: key(i),
      })),
    };
  }
  const committedKeys = (n: number, except: number[]) =>
    new Set(
      Array.from({ length: n }, (_, i) => i)
        .filter((i) => !except.includes(i))
        .map(key),
    );
  const none = new Set<string>();

  it('holds when every item is accounted for and the unresolved ones are the dropped and errored lines', () => {
    // Act
    const f = computeBatchFigures({
      batches: [batch(5, [1, 3])],
      providerDropped: [itemIdFor(3)],
      providerErrored: [itemIdFor(1)],
      providerInvalid: [],
      committedKeys: committedKeys(5, [1, 3]),
      terminalJobIds: none,
      needsReviewJobIds: none,
      queuedJobIds: none,
    });
    // Assess
    assert.deepEqual(
      [f.batchItems, f.batchCommitted, f.batchUnresolved, f.batchLost, f.batchUnresolvedMatchesProvider, f.batchProblems],
      [5, 3, 2, 0, true, []],
    );
    assert.deepEqual(f.batchUnresolvedIds, [itemIdFor(1), itemIdFor(3)]);
  });

  it('counts the invalid outputs the queue lane repaired or sent to review, and flags repairs that are not the invalid lines', () => {
    // Prepare: items 0 and 2 sent to the queue lane for a repair; it committed 0 and sent 2 to review
    const b = batch(4, []);
    b.outcome = { committed: 3, needsReview: 1, rejected: 0, unresolved: 0, waiting: 0 };
    b.manifestItems[0] = { ...b.manifestItems[0]!, state: 'redriven', reason: 'repair: schema_invalid' };
    b.manifestItems[2] = { ...b.manifestItems[2]!, state: 'redriven', reason: 'repair: not_json' };
    const review = new Set(['job-2']);
    const inputs = {
      batches: [b],
      providerDropped: [],
      providerErrored: [],
      committedKeys: committedKeys(4, [2]),
      terminalJobIds: review,
      needsReviewJobIds: review,
    };
    // Act
    const f = computeBatchFigures({ ...inputs, providerInvalid: [itemIdFor(2), itemIdFor(0)], queuedJobIds: none });
    const off = computeBatchFigures({ ...inputs, providerInvalid: [itemIdFor(0)], queuedJobIds: none });
    // Assess
    const both = [itemIdFor(0), itemIdFor(2)];
    assert.deepEqual(
      [f.batchInvalid, f.batchRepairIds, f.batchRepaired, f.batchRepairNeedsReview, f.batchRepairMatchesProvider, f.batchLost, f.batchProblems],
      [both, both, 1, 1, true, 0, []],
    );
    assert.equal(off.batchRepairMatchesProvider, false);
    assert.match(off.batchProblems.join('\n'), /sent to the queue lane for a repair \(2\) are not the lines the provider answered with invalid output \(1\)/);
  });

  it('flags a mismatch with the provider, an unresolved item with an object, a committed item without one, and missing items', () => {
    // Prepare: item 1 unresolved but committed; item 2 "committed" with no object; the submission recorded 6 items
    const b = { ...batch(5, [1]), items: 6 };
    // Act
    const f = computeBatchFigures({
      batches: [b],
      providerDropped: [itemIdFor(4)],
      providerErrored: [],
      providerInvalid: [],
      committedKeys: committedKeys(5, [2]),
      terminalJobIds: none,
      needsReviewJobIds: none,
      queuedJobIds: none,
    });
    // Assess
    assert.equal(f.batchUnresolvedMatchesProvider, false);
    assert.equal(f.batchUnresolvedCommitted, 1);
    assert.equal(f.batchLost, 2, 'the committed item without an object and the item missing from the manifest');
    assert.equal(f.batchProblems.length, 4, f.batchProblems.join('\n'));
    assert.match(f.batchProblems.join('\n'), /not the 6 items submitted/);
  });
});
