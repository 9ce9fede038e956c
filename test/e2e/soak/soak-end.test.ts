/**
 * `npm run soak` always reports: a run that hits its time limit still prints the reconciliation (for
 * people and as JSON) with what is still waiting, and fails. Also the report's verdict on a multiplied
 * queue, and the busy loops of `--starve`, which never outlive their stop.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { soakCommand } from '../../../workbench/drivers/soak/command.js';
import { formatSoakReport, soakExitCode, soakFailures, STATE_PRECEDENCE, type SoakReport } from '../../../workbench/drivers/soak/report.js';
import { runSoak } from '../../../workbench/drivers/soak/soak.js';
import { startBusyLoops } from '../../../workbench/local-stack/services/processes.js';

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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm run soak: the report on its time limit', () => {
  it('prints the reconciliation with what is still waiting, as text and JSON, and fails', async () => {
    // Prepare: far more work than the time limit allows (a slow provider), no faults that need time to show.
    const options = soakCommand.parse([
      '--jobs',
      '400',
      '--provider-rpm',
      '5',
      '--credit-outage',
      '0',
      '--time-limit',
      '10',
      '--seed',
      '3',
      '--log-file',
      `.cache/soak-test/time-limit-${process.pid}.log`,
      '--json',
    ]);
    const stdout = capture();
    const stderr = capture();
    const t0 = Date.now();

    // Act
    const report: SoakReport = await runSoak(options, { stdout: stdout.stream, stderr: stderr.stream });

    // Assess: it ended on its time limit, in bounded time, and says so
    const context = JSON.stringify({ end: report.end, states: report.states, problems: report.problems, queueLeft: report.queueLeft });
    assert.equal(report.end, 'timeLimit', context);
    assert.equal(report.timedOut, true);
    assert.ok(Date.now() - t0 < 55_000, `the run took ${Date.now() - t0} ms`);
    assert.equal(soakExitCode(report), 1);
    assert.ok(
      soakFailures(report).some((f) => /did not drain: TIME LIMIT/.test(f)),
      soakFailures(report).join('; '),
    );
    // ...the reconciliation is whole: every job sent is somewhere, the unfinished ones still waiting
    assert.equal(report.reconciled, true, context);
    assert.equal(report.lost, 0, context);
    assert.equal(report.doubleCommits, 0, context);
    assert.equal(
      STATE_PRECEDENCE.reduce((n, s) => n + report.states[s], 0),
      report.submitted,
    );
    assert.ok(report.states.waiting > 0, context);
    assert.ok(report.queueLeft, 'what is left in the queues is reported');
    assert.ok(report.queueLeft.visible + report.queueLeft.inFlight + report.queueLeft.delayed >= report.states.waiting, context);
    assert.ok(report.queuePeak > 0, 'the queues were sampled');
    if (report.submissionComplete) assert.ok(report.queuePeak <= report.queueBound, `${report.queuePeak} / ${report.queueBound}`);
    assert.deepEqual(report.problems, []);
    // ...printed for people and as one JSON object last on stdout
    const text = stdout.text();
    assert.match(text, /ratelane soak — reconciliation/);
    assert.match(text, /LOST\s+0/);
    assert.match(text, /still waiting\s+\d+ job\(s\); queues: \d+ visible, \d+ in flight, \d+ delayed; DLQs \d+/);
    assert.match(text, /ended\s+TIME LIMIT reached/);
    assert.match(text, /queue peak \/ bound\s+\d+ \/ \d+/);
    assert.match(text, /FAILED:/);
    const last = JSON.parse(text.trim().split('\n').at(-1)!) as SoakReport;
    assert.equal(last.end, 'timeLimit');
    assert.deepEqual(last.states, report.states);
    assert.equal(last.queueBound, report.queueBound);
  });
});

describe('npm run soak: the verdict', () => {
  it('fails a drained run whose queues held more than submitted + injected duplicates, and names why', () => {
    // Prepare
    const report = {
      jobs: 10,
      submitted: 10,
      notSent: 0,
      states: { committed: 10, needs_review: 0, rejected: 0, dead_lettered: 0, waiting: 0 },
      lost: 0,
      doubleCommits: 0,
      multiState: 0,
      multiStateExamples: [],
      strayResults: 0,
      injected: {
        duplicateMessages: 2,
        crashes: { afterModelCall: 0, afterCommit: 0, afterResend: 0 },
        crashCopies: 0,
        outages: { commit: 0, send: 0, visibility: 0 },
        creditOutageMs: 0,
        providerFaults: {},
      },
      poller: { wholeBatchFailures: {}, wholeBatchFailureExamples: {}, deleteFailures: 0 },
      throttled: {},
      metrics: {},
      sentinel: { documents: 0, leaks: 0, ledgerLeaks: 0, secretLeaks: 0, logLines: 0, unstructuredLines: 0 },
      scorecard: {} as SoakReport['scorecard'],
      elapsedMs: 1000,
      timedOut: false,
      end: 'drained',
      stallLimitSeconds: 180,
      submissionComplete: true,
      busyLoops: 3,
      queuePeak: 13,
      queuePeakAtMs: 500,
      queueBound: 12,
      multiplication: { resentWhileQueued: 1, jobsWithSeveralChains: 1, mostCopiesOfOneJob: 3, samples: 5 },
      queueLeft: { visible: 0, inFlight: 0, delayed: 0, deadLettered: 0 },
      reconciled: true,
      problems: [],
      lateLogLines: 0,
    } satisfies SoakReport;
    // Act
    const failures = soakFailures(report);
    const text = formatSoakReport(report);
    // Assess
    assert.deepEqual(failures, ['messages multiplied: the queues held 13 > 12 (submitted + injected duplicates)']);
    assert.equal(soakExitCode(report), 1);
    assert.match(text, /queue peak \/ bound\s+13 \/ 12 \(submitted 10 \+ 2 duplicate messages\) at 1 s — EXCEEDED/);
    assert.match(text, /busy loops \(--starve\)\s+3/);
    assert.equal(soakExitCode({ ...report, queuePeak: 12 }), 0);
    assert.match(formatSoakReport({ ...report, queuePeak: 12 }), /PASSED/);
    assert.equal(soakExitCode({ ...report, queuePeak: 12, end: 'stalled' }), 1);
    assert.equal(soakExitCode({ ...report, queuePeak: 12, problems: ['stopping the pollers did not finish within 33 s'] }), 1);
  });
});

describe('npm run soak --starve', () => {
  it('parses the flag and runs busy loops that are gone after stop()', async () => {
    // Prepare
    assert.equal(soakCommand.parse([]).starve, 0);
    assert.equal(soakCommand.parse(['--starve', '3']).starve, 3);
    // Act
    const loops = startBusyLoops(2);
    await new Promise((r) => setTimeout(r, 200));
    const running = loops.pids.map(alive);
    await loops.stop();
    await loops.stop(); // idempotent
    // Assess
    assert.equal(loops.pids.length, 2);
    assert.deepEqual(running, [true, true]);
    assert.deepEqual(loops.pids.map(alive), [false, false]);
  });
});
