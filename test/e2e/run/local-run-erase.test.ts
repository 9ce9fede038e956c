/**
 * `npm run local --erase N`: a child process that starts its own stack, erases N sources of its jobs
 * mid-run (once a third of the jobs committed) in the lanes they were submitted to, and reports what is
 * left of them, read from the stores: no result, document, ledger item (but the jobs' `#erased` markers)
 * or job status; every other job committed, nothing lost. Beside it, in-process: `--erase` usage errors.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { runCommand, UsageError } from '../../../lib/cli/command.js';
import { localCommand } from '../../../workbench/drivers/run/command.js';
import type { ErasureFigures } from '../../../workbench/drivers/run/erase-load.js';

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

describe('npm run local --erase', () => {
  it('erases N sources mid-run: nothing of them left, none committed after, every other job committed, nothing lost', async () => {
    // Act
    const run = await runLocal(['--jobs', '30', '--erase', '6', '--json', '--log-file', '.cache/test-local-run-erase/a.log']);
    // Assess
    assert.equal(run.code, 0, run.err);
    const card = JSON.parse(run.out.trim().split('\n').at(-1) ?? '{}') as Record<string, number> & { erasure: ErasureFigures };
    const erasure = card.erasure;
    assert.ok(erasure, 'the scorecard has an erasure block');
    assert.equal(erasure.requested, 6);
    assert.equal(erasure.erased, 6);
    assert.equal(erasure.jobs, 6, 'one job per source in this run');
    assert.equal(erasure.erasedJobs, 6, 'each job of an erased source ended erased');
    assert.ok(erasure.atCommits !== null && erasure.atCommits >= 10, `erased once a third committed, at ${erasure.atCommits}`);
    assert.equal(erasure.erasedWhile.committed + erasure.erasedWhile.inFlight + erasure.erasedWhile.queued, 6);
    assert.equal(erasure.resultsRemoved + erasure.stoppedByConsumer >= 6, true, 'each removed by the erasure or stopped by a consumer');
    assert.equal(erasure.committedAfterErase, 0);
    assert.equal(erasure.leftoverDocuments, 0);
    assert.equal(erasure.leftoverResults, 0);
    assert.equal(erasure.leftoverLedgerItems, 0);
    assert.equal(erasure.leftoverStatuses, 0);
    assert.equal(erasure.documentsSharedWithKeptJobs, 0);
    assert.deepEqual(erasure.problems, []);
    assert.equal(card.submitted, 30);
    assert.equal(card.committed, 30 - erasure.erasedJobs, 'every other job committed');
    assert.equal(card.lost, 0);
    assert.equal(card.waiting, 0);
    assert.equal(card.deadLettered, 0);
    assert.equal(card.rejected, 0, 'an erased job is no rejection');
    assert.equal(card.doubleCommits, 0);
    assert.match(run.out, /sources erased\s+6 of 6 at \d+ commits/);
    assert.match(run.out, /leftover ledger items\s+0/);
    assert.match(run.err, /erasing 6 sources at \d+\/30 committed/);
  });

  it('refuses --erase over the jobs, or negative, as a usage error (exit 2) before starting anything', async () => {
    assert.throws(() => localCommand.parse(['--jobs', '10', '--erase', '11']), usage(/--erase 11 is more sources than the 10 jobs/));
    assert.throws(() => localCommand.parse(['--jobs', '10', '--erase=-1']), usage(/--erase must be an integer in 0\.\.100000/));
    assert.throws(() => localCommand.parse(['--jobs', '10', '--erase', '2.5']), usage(/--erase must be an integer/));
    assert.throws(() => localCommand.parse(['--jobs', '0', '--batch-jobs', '5', '--erase', '1']), usage(/more sources than the 0 jobs/));
    assert.equal(localCommand.parse(['--jobs', '10', '--erase', '10']).erase, 10);
    // Without --jobs the corpus (64 documents) is the run.
    let err = '';
    const code = await runCommand(localCommand, ['--erase', '65'], { stdout: { write: () => true }, stderr: { write: (c: string) => (err += c) } });
    assert.equal(code, 2);
    assert.match(err, /--erase 65 is more sources than the 64 jobs of the corpus/);
    assert.match(err, /--erase N/, 'the usage lists --erase');
  });
});
