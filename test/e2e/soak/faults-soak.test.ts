/**
 * `npm run soak`, small: 200 jobs through the local stack (its own DynamoDB Local and fauxqs, as the
 * command runs) with every fault at a raised rate, then the reconciliation: nothing lost, nothing
 * committed twice, every job in exactly one terminal state, and the sentinel of some documents in no
 * log line or metric. Also the command's flags and the pure reconciliation.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { UsageError } from '../../../lib/cli/command.js';
import { soakCommand } from '../../../workbench/drivers/soak/command.js';
import { reconcile, soakExitCode, STATE_PRECEDENCE, type SoakReport } from '../../../workbench/drivers/soak/report.js';
import { runSoak } from '../../../workbench/drivers/soak/soak.js';

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('npm run soak: flags', () => {
  it('has defaults for a 5,000-job run and rejects bad flags with a usage error', () => {
    // Act
    const defaults = soakCommand.parse([]);
    const custom = soakCommand.parse(['--jobs', '200', '--crash', '0.05', '--fault-5xx', '0.1', '--no-admission', '--json']);
    // Assess
    assert.equal(defaults.jobs, 5000);
    assert.equal(defaults.json, false);
    assert.equal(defaults.admission, true);
    assert.ok(defaults.crashes > 0 && defaults.duplicates > 0 && defaults.sentinels > 0 && defaults.creditOutageMinutes > 0);
    assert.ok(Object.values(defaults.faults).every((rate) => rate > 0));
    assert.equal(custom.jobs, 200);
    assert.equal(custom.crashes, 0.05);
    assert.equal(custom.faults.serverError, 0.1);
    assert.equal(custom.admission, false);
    assert.equal(custom.json, true);
    for (const bad of [['--jobs', '0'], ['--crash', 'lots'], ['--fault-5xx', '0.6', '--fault-timeout', '0.6'], ['--bogus'], ['--jobs']]) {
      assert.throws(() => soakCommand.parse(bad), UsageError, bad.join(' '));
    }
    assert.throws(
      () => soakCommand.parse(['--help']),
      (e: unknown) => e instanceof UsageError && e.message === '',
    );
  });
});

describe('npm run soak: reconciliation', () => {
  it('gives each job one final state (a commit wins over a stale copy elsewhere) and counts a job found nowhere as lost', () => {
    // Act
    const out = reconcile([{ jobId: 'a' }, { jobId: 'b' }, { jobId: 'c' }, { jobId: 'd' }, { jobId: 'e' }], {
      committed: ['a', 'b', 'x'],
      needs_review: ['c'],
      rejected: [],
      dead_lettered: ['b', 'd'],
      waiting: [],
    });
    // Assess
    assert.deepEqual(out.states, { committed: 2, needs_review: 1, rejected: 0, dead_lettered: 1, waiting: 0 });
    assert.deepEqual(out.lost, ['e']);
    assert.deepEqual(out.multiState, [{ jobId: 'b', places: ['committed', 'dead_lettered'] }]);
  });
});

describe('npm run soak: 200 jobs with every fault', () => {
  it('ends with every job in exactly one terminal state: lost 0, doubleCommits 0, no sentinel in any log line or metric', async () => {
    // Prepare: raised rates so each fault happens in a small run. The out-of-credit key is left to
    // test/e2e/run/faults.test.ts, which checks that fault on its own.
    const options = soakCommand.parse([
      '--jobs',
      '200',
      '--crash',
      '0.03',
      '--duplicates',
      '0.15',
      '--fault-store',
      '0.04',
      '--fault-sqs',
      '0.04',
      '--fault-5xx',
      '0.05',
      '--fault-timeout',
      '0.03',
      '--fault-garbage',
      '0.05',
      '--fault-invalid',
      '0.05',
      '--sentinels',
      '0.3',
      '--credit-outage',
      '0',
      '--seed',
      '7',
      '--time-limit',
      '150',
      '--log-file',
      `.cache/soak-test/consumer-${process.pid}.log`,
      '--json',
    ]);
    const stdout = capture();
    const stderr = capture();

    // Act
    const report: SoakReport = await runSoak(options, { stdout: stdout.stream, stderr: stderr.stream });

    // Assess: the reconciliation
    const context = JSON.stringify({ states: report.states, injected: report.injected, poller: report.poller, multi: report.multiStateExamples });
    assert.equal(report.timedOut, false, context);
    assert.equal(report.submitted, 200);
    assert.equal(report.lost, 0, context);
    assert.equal(report.doubleCommits, 0, context);
    assert.equal(report.strayResults, 0);
    assert.equal(
      STATE_PRECEDENCE.reduce((n, s) => n + report.states[s], 0),
      200,
      'one final state per job',
    );
    assert.equal(report.states.waiting, 0);
    assert.ok(report.states.committed >= 190, context);
    assert.equal(soakExitCode(report), 0);
    // ...the faults really happened
    assert.ok(report.injected.duplicateMessages > 0, context);
    assert.ok(Object.values(report.injected.crashes).reduce((a, b) => a + b, 0) > 0, context);
    assert.ok(report.injected.outages.commit > 0, context);
    assert.ok(
      Object.values(report.injected.providerFaults).every((n) => n > 0),
      context,
    );
    assert.ok((report.metrics.DuplicateSuppressed ?? 0) > 0);
    // ...no document text and no key secret in any log line or metric
    assert.ok(report.sentinel.documents > 0);
    assert.ok(report.sentinel.logLines > 100);
    assert.equal(report.sentinel.leaks, 0);
    assert.equal(report.sentinel.ledgerLeaks, 0);
    assert.equal(report.sentinel.secretLeaks, 0);
    assert.equal(report.sentinel.unstructuredLines, 0);
    const log = readFileSync(options.logFile!, 'utf8');
    assert.ok(!/SOAK-SENTINEL-/.test(log), 'no sentinel in the log file');
    // ...and the output: progress on stderr, the reconciliation and one JSON object last on stdout
    assert.match(stderr.text(), /\[\s*\d+ s\] committed \d+\/200/);
    assert.match(stdout.text(), /LOST\s+0/);
    assert.match(stdout.text(), /DOUBLE COMMITS\s+0/);
    const last = JSON.parse(stdout.text().trim().split('\n').at(-1)!) as SoakReport;
    assert.equal(last.lost, 0);
    assert.equal(last.doubleCommits, 0);
    assert.deepEqual(last.states, report.states);
  });
});
