/**
 * `ratelane consume` as a child process of this one (the bench's `two-consumers` scenario, tests): its
 * `--events` read line by line, its readiness awaited (held, with `hold`, until started: several
 * start at one moment), stopped with SIGTERM as an orchestrator stops a container. The child cannot
 * outlive this process (a SIGKILL when this one exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { ServiceEndpoints } from '../../../lib/platform/clients.js';
import type { ConsumeSummary, ConsumerEvent } from './consume.js';

/** What a consumer process is started with. */
export interface ConsumerProcessOptions {
  /** The lane config file the child reads (`RATELANE_CONFIG`): the lanes as the services have them. */
  lanesFile: string;
  lane: string;
  endpoints: ServiceEndpoints;
  /** The provider's base URL (absent: the lane's, as the file has it). */
  providerUrl?: string | undefined;
  minuteMs: number;
  dayMs?: number | undefined;
  concurrency: number;
  logFile?: string | undefined;
  /** Every event the child reports. */
  onEvent?: ((event: ConsumerEvent) => void) | undefined;
  /** Each line the child writes on stderr (its progress). */
  onStderr?: ((line: string) => void) | undefined;
  /** Hold its polling until {@link ConsumerProcess.start} (`--hold`). */
  hold?: boolean | undefined;
}

/** A running consumer process. */
export interface ConsumerProcess {
  child: ChildProcess;
  /** Resolves when its poller polls, or with `hold` is ready to (epoch ms); rejects when it exits before. */
  ready: Promise<number>;
  /** With `hold`: lets it poll (a line on its stdin). */
  start(): void;
  /** Sends SIGTERM and resolves with its exit code and summary once it exited. */
  stop(): Promise<{ code: number | null; summary: (ConsumeSummary & { ok: true }) | undefined }>;
}

/** The repository's CLI, as `npm run consume` runs it. */
const CLI = ['--import', 'tsx', 'bin/ratelane.ts', 'consume'];

/** Starts `ratelane consume --events --json` as a child process. */
export function spawnConsumer(options: ConsumerProcessOptions): ConsumerProcess {
  const args = [
    ...CLI,
    '--lane',
    options.lane,
    '--endpoints',
    JSON.stringify(options.endpoints),
    '--minute-ms',
    String(options.minuteMs),
    '--concurrency',
    String(options.concurrency),
    '--events',
    '--json',
    ...(options.providerUrl ? ['--provider-url', options.providerUrl] : []),
    ...(options.dayMs !== undefined ? ['--day-ms', String(options.dayMs)] : []),
    ...(options.logFile ? ['--log-file', options.logFile] : []),
    ...(options.hold ? ['--hold'] : []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: [options.hold ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    env: { ...process.env, RATELANE_CONFIG: options.lanesFile },
  });
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let summary: (ConsumeSummary & { ok: true }) | undefined;
  let markReady!: (at: number) => void;
  let failReady!: (error: Error) => void;
  const ready = new Promise<number>((resolve, reject) => {
    markReady = resolve;
    failReady = reject;
  });
  // A process stopped after it was ready, or never awaited, is no unhandled rejection.
  ready.catch(() => undefined);
  let stderrTail = '';
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    const event = parsed as ConsumerEvent | (ConsumeSummary & { ok: true });
    if ('ok' in event) summary = event;
    else {
      if (event.type === 'ready') markReady(Date.now());
      options.onEvent?.(event);
    }
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail = `${stderrTail}\n${line}`.slice(-2000);
    options.onStderr?.(line);
  });
  const exited = new Promise<number | null>((resolve) => {
    // 'close': after its stdout ended, so its last line (the summary) is read.
    child.once('close', (code) => {
      process.off('exit', killOnExit);
      failReady(new Error(`ratelane consume (lane ${options.lane}) exited with ${code} before it was ready:${stderrTail}`));
      resolve(code);
    });
  });
  return {
    child,
    ready,
    start: () => {
      if (child.stdin?.writable) child.stdin.end('start\n');
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      return { code, summary };
    },
  };
}
