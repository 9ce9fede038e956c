/**
 * The unit and contract tier's check on real waits. `npm test` loads it into every test process
 * (`--import`, test/run.ts): this tier runs on virtual time (`virtual-clock.ts`, Node's mock timers) and
 * asserts what was asked of fauxqs's clock instead of waiting it out (`queue-time.ts`), so a real wait of
 * more than {@link LIMIT_MS} is a test, or code it drives, waiting in real time. It records:
 *
 * - every timer of more than the limit that *fires* — `setTimeout` and `setInterval` (global and
 *   `node:timers`), `setTimeout` and `setInterval` of `node:timers/promises`, `AbortSignal.timeout` —
 *   with the stack that created it, unless the creating frame is in node_modules (a library's own timer:
 *   the SDK's, an emulator client's) or on the {@link ALLOWED} list. A timer cleared before it fires (a
 *   timeout that was not reached), or a promise timer aborted, never counts;
 * - every SQS `ReceiveMessage` long poll (`WaitTimeSeconds` > 0) that fauxqs held open for more than
 *   {@link LONG_POLL_LIMIT_MS}: a test waiting on the emulator's clock (a message's delay, a visibility timeout, a poll that
 *   ends empty), told by the process's entry (the SDK drops the caller's stack before the request): a test
 *   file, or the generated entry that lists the files test/run.ts runs in one process.
 *
 * After the process's tests, a root `after` hook fails with the list of real waits (what, how long, where,
 * the creating stack), so the failure summary names them; one recorded later still fails the process (the
 * process exits with code 1, the list on stderr). `RATELANE_REAL_WAITS=report` prints without failing;
 * `RATELANE_REAL_WAITS=off` turns the check off. Files under test/e2e/ (whole local runs over real
 * time) are not checked.
 */
import { subscribe } from 'node:diagnostics_channel';
import { ClientRequest } from 'node:http';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { relative, sep } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** A real timer longer than this (ms) is reported. */
const LIMIT_MS = 100;
/**
 * A long poll held open longer than this (ms) is reported. SQS's clock counts whole seconds (a delay, a
 * visibility timeout), so a test waiting on it holds a poll for most of a second or more; a poll answered
 * at once still takes over 100 ms on a loaded machine (130 ms seen on CI's), which is no wait.
 */
const LONG_POLL_LIMIT_MS = 500;

/**
 * Real waits allowed to stay, each with why: `where` is matched against the place a wait is told by —
 * the creating frame's `path:line` (path relative to the repository) for a timer, the test file for a
 * long poll.
 */
const ALLOWED: readonly { where: RegExp; why: string }[] = [
  {
    where: /^lib\/lanes\/queue\/queue-executor\.ts:/,
    why:
      'the bounds of a settle that may outlive its invocation (`settleOutsideInvocation`: AbortSignal.timeout of a function ' +
      'timeout or more, 5 s in tests). Nothing waits on them: they fire seconds after the re-send and the delete they bound ' +
      'have ended, when a file runs that long, and an AbortSignal.timeout cannot be cleared.',
  },
];

const mode = process.env.RATELANE_REAL_WAITS ?? 'fail';
const root = process.cwd();
const self = fileURLToPath(import.meta.url);

/** Where a wait was created: the creating frame (`path:line`) and the frames outside node_modules. */
interface Origin {
  where: string;
  stack: string[];
}

/** One real wait: what waited, how long, where it was created. */
interface RealWait extends Origin {
  what: string;
  ms: number;
}

const found: RealWait[] = [];

/** The test file this process runs, relative to the repository. */
function testFile(): string {
  return relative(root, process.argv[1] ?? '?');
}

/**
 * The frames of the current call that name a file (Node's own, this file's wrappers and frames without
 * a location left out), paths relative to the repository.
 */
function frames(limit: number): string[] {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = limit;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = saved;
  return stack
    .split('\n')
    .slice(1)
    .map((line) => line.trim())
    .filter((line) => /^at .*\/[^/]+:\d+:\d+\)?$/.test(line) && !line.includes(self) && !/\(node:|at node:/.test(line))
    .map((line) => line.replace(`${root}/`, '').replace(`file://${root}/`, ''));
}

/** `path:line` of a stack frame. */
function locationOf(frame: string): string {
  const match = /\(?((?:file:\/\/)?[^\s()]+):(\d+):\d+\)?$/.exec(frame);
  return match ? `${match[1]}:${match[2]}` : frame;
}

/**
 * Where a timer is being created, and the creating stack; undefined when the creating frame is in
 * node_modules (a library's own timer) or on the {@link ALLOWED} list.
 */
function origin(): Origin | undefined {
  const stack = frames(40);
  const first = stack[0];
  if (!first || /(^|[\s(/])node_modules\//.test(first)) return undefined;
  const where = locationOf(first);
  if (ALLOWED.some((a) => a.where.test(where))) return undefined;
  return { where, stack: stack.filter((f) => !/(^|[\s(/])node_modules\//.test(f)) };
}

function record(what: string, ms: number, at: Origin): void {
  found.push({ what, ms, ...at });
}

type Callback = (...args: unknown[]) => void;

const require = createRequire(import.meta.url);
const timers = require('node:timers') as typeof import('node:timers');
const timersPromises = require('node:timers/promises') as typeof import('node:timers/promises');

const realSetTimeout = timers.setTimeout;
const realSetInterval = timers.setInterval;
const realPromiseTimeout = timersPromises.setTimeout;
const realPromiseInterval = timersPromises.setInterval;
const realAbortTimeout = AbortSignal.timeout.bind(AbortSignal);

/** The timer's callback, wrapped so that its first firing records the wait (when it is one). */
function watched(kind: string, callback: unknown, delay: unknown): unknown {
  const ms = Number(delay);
  if (typeof callback !== 'function' || !(ms > LIMIT_MS)) return callback;
  const at = origin();
  if (!at) return callback;
  let fired = false;
  return function (this: unknown, ...args: unknown[]) {
    if (!fired) record(kind, ms, at);
    fired = true;
    return (callback as Callback).apply(this, args);
  };
}

function setTimeoutWatched(this: unknown, callback: unknown, delay?: unknown, ...args: unknown[]) {
  return (realSetTimeout as (...a: unknown[]) => NodeJS.Timeout).call(this, watched('setTimeout', callback, delay), delay, ...args);
}

function setIntervalWatched(this: unknown, callback: unknown, delay?: unknown, ...args: unknown[]) {
  return (realSetInterval as (...a: unknown[]) => NodeJS.Timeout).call(this, watched('setInterval', callback, delay), delay, ...args);
}

async function promiseTimeoutWatched<T>(delay?: number, value?: T, options?: import('node:timers').TimerOptions): Promise<T> {
  const ms = Number(delay);
  const at = ms > LIMIT_MS ? origin() : undefined;
  const out = await realPromiseTimeout(delay, value, options);
  if (at) record('timers/promises setTimeout', ms, at);
  return out as T;
}

async function* promiseIntervalWatched<T>(delay?: number, value?: T, options?: import('node:timers').TimerOptions): AsyncGenerator<T> {
  const ms = Number(delay);
  const at = ms > LIMIT_MS ? origin() : undefined;
  let fired = false;
  for await (const tick of realPromiseInterval(delay, value, options)) {
    if (at && !fired) record('timers/promises setInterval', ms, at);
    fired = true;
    yield tick as T;
  }
}

function abortTimeoutWatched(delay: number): AbortSignal {
  const signal = realAbortTimeout(delay);
  const at = delay > LIMIT_MS ? origin() : undefined;
  if (at) signal.addEventListener('abort', () => record('AbortSignal.timeout', delay, at), { once: true });
  return signal;
}

/**
 * Long polls: an SQS `ReceiveMessage` with a `WaitTimeSeconds` whose answer took longer than the limit.
 * Its body is read as the SDK writes it; its time runs from the end of the request to the end of the answer.
 */
function watchLongPolls(): void {
  const bodies = new WeakMap<ClientRequest, string>();
  const isReceive = (request: ClientRequest) => request.getHeader('x-amz-target') === 'AmazonSQS.ReceiveMessage';
  for (const method of ['write', 'end'] as const) {
    const real = ClientRequest.prototype[method] as (...a: unknown[]) => unknown;
    ClientRequest.prototype[method] = function (this: ClientRequest, ...args: unknown[]) {
      const chunk = args[0];
      if ((typeof chunk === 'string' || chunk instanceof Uint8Array) && isReceive(this))
        bodies.set(this, (bodies.get(this) ?? '') + Buffer.from(chunk).toString());
      return real.apply(this, args);
    } as never;
  }
  const started = new WeakMap<ClientRequest, number>();
  subscribe('http.client.request.start', (message) => {
    const { request } = message as { request: ClientRequest };
    if (isReceive(request)) started.set(request, performance.now());
  });
  subscribe('http.client.response.finish', (message) => {
    const { request } = message as { request: ClientRequest };
    const at = started.get(request);
    if (at === undefined) return;
    const ms = Math.round(performance.now() - at);
    const waitSeconds = Number(/"WaitTimeSeconds":(\d+)/.exec(bodies.get(request) ?? '')?.[1] ?? 0);
    const where = testFile();
    if (waitSeconds > 0 && ms > LONG_POLL_LIMIT_MS && !ALLOWED.some((a) => a.where.test(where))) {
      record(`SQS ReceiveMessage (WaitTimeSeconds ${waitSeconds}) held open by fauxqs`, ms, { where, stack: [] });
    }
  });
}

/** The recorded waits from `from` on, one line each with the creating stack below it. */
function listed(from: number): string {
  const waits = found.slice(from);
  const lines = [
    `real waits (timers over ${LIMIT_MS} ms, long polls over ${LONG_POLL_LIMIT_MS} ms) in ${testFile()} (${waits.length}; see docs/testing.md, "Virtual time"):`,
  ];
  for (const wait of waits) {
    lines.push(`  ${wait.what} of ${Math.round(wait.ms)} ms, created at ${wait.where}`);
    for (const frame of wait.stack.slice(1, 6)) lines.push(`      ${frame}`);
  }
  return lines.join('\n');
}

/** How many waits the `after` hook reported (the exit report lists the ones after them). */
let reported = 0;

/** After the file's tests: fails with the real waits so far (or prints them, when only reporting). */
function failOnWaits(): void {
  if (found.length === 0) return;
  reported = found.length;
  if (mode === 'report') process.stderr.write(`${listed(0)}\n`);
  else throw new Error(listed(0));
}

/** At exit: the real waits recorded after the `after` hook, if any; exit code 1 unless only reporting. */
function reportAtExit(): void {
  if (found.length === reported) return;
  process.stderr.write(`${listed(reported)}\n`);
  if (mode !== 'report') process.exitCode = 1;
}

const e2e = testFile().startsWith(`test${sep}e2e${sep}`);
if (mode !== 'off' && process.env.NODE_TEST_CONTEXT && !e2e) {
  Object.defineProperty(setTimeoutWatched, promisify.custom, { value: promiseTimeoutWatched });
  timers.setTimeout = setTimeoutWatched as typeof timers.setTimeout;
  timers.setInterval = setIntervalWatched as typeof timers.setInterval;
  globalThis.setTimeout = setTimeoutWatched as typeof globalThis.setTimeout;
  globalThis.setInterval = setIntervalWatched as typeof globalThis.setInterval;
  timersPromises.setTimeout = promiseTimeoutWatched;
  timersPromises.setInterval = promiseIntervalWatched;
  AbortSignal.timeout = abortTimeoutWatched;
  syncBuiltinESMExports();
  watchLongPolls();
  // Registered once the file's own hooks are (from a root `before`), so it runs after them: a failing
  // hook skips the root's later hooks, and a file's cleanup (servers, clients) must still run.
  before(() => after(failOnWaits));
  process.on('exit', reportAtExit);
}
