/**
 * Runs `ratelane eval` as a user does: a child process on its own local stack (no shared test
 * services), its output captured; the last stdout line of a `--json` run is the report. A run keeps
 * about one core busy: {@link twoAtATime} runs the e2e tier's runs in pairs on its two cores.
 */
import { spawn } from 'node:child_process';
import type { EvalReport } from '../../workbench/drivers/eval/report-model.js';

/** Where the eval tests write their reports, pages and logs. */
export const EVAL_TEST_DIR = '.cache/eval-test';
const CLI = ['--import', 'tsx', 'bin/ratelane.ts', 'eval'];
/** Runs begun so far: each writes a log of its own. */
let runs = 0;

/** What {@link runEvalCli} resolves: the exit code and the output. */
export type EvalCliRun = { code: number | null; stdout: string; stderr: string };

/** Runs `ratelane eval <args>` with `env` added to the environment. */
export function runEvalCli(args: string[], env: Record<string, string> = {}): Promise<EvalCliRun> {
  runs += 1;
  const child = spawn(process.execPath, [...CLI, ...args, '--log-file', `${EVAL_TEST_DIR}/consumer-${runs}.log`], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RATELANE_TEST_ENDPOINTS: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** The report a `--json` run printed on its last stdout line. */
export function lastJson(stdout: string): EvalReport {
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as EvalReport;
}

/** A runner of tasks, two at a time, each begun in the order given (a task may await another's promise). */
export function twoAtATime(): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const queued: (() => void)[] = [];
  return async (task) => {
    if (running >= 2) await new Promise<void>((resolve) => queued.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      queued.shift()?.();
    }
  };
}
