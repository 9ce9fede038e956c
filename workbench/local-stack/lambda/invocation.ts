/**
 * One Lambda-like invocation as the local stand-ins run it (the SQS event source poller, the live HTTP
 * adapter): its `Context` (the remaining time, the invocation's abort signal) and its function timeout,
 * which ends it as Lambda does ("Task timed out") and aborts its signal.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { RatelaneError, type ErrorKind } from '../../../lib/platform/errors.js';
import { INVOCATION_ABORT_SIGNAL } from '../../../lib/platform/invocation.js';

/** The handler ran longer than the function timeout (what Lambda reports as "Task timed out"). */
export class FunctionTimeoutError extends RatelaneError {
  override name = 'FunctionTimeoutError';
  readonly kind: ErrorKind = 'unavailable';
  readonly retryable: boolean = true;
}

/** Why an invocation's signal was aborted: its function timeout passed, or its stand-in (the poller, the HTTP adapter) was stopped. */
export type InvocationAbortCause = 'timeout' | 'stopped';

/**
 * The reason an invocation's abort signal carries (`signal.reason`). Named `AbortError`, as an aborted
 * `fetch` or SDK call is, so code that treats an abort as an abort treats this one so too.
 */
export class InvocationAbortError extends RatelaneError {
  override name = 'AbortError';
  readonly kind: ErrorKind = 'unavailable';
  readonly retryable: boolean = true;
  /** What ended the invocation. */
  readonly abortCause: InvocationAbortCause;

  constructor(abortCause: InvocationAbortCause, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.abortCause = abortCause;
  }
}

/** What a Lambda-like context needs to know about the function and this invocation. */
export interface LambdaContextOptions {
  functionName: string;
  awsRegion: string;
  /** Account of the function (the queue's account for a local run). */
  accountId: string;
  partition?: string;
  memoryLimitInMB: number;
  /** When the invocation times out, in `now()` milliseconds. */
  deadline: number;
  /** The clock `getRemainingTimeInMillis()` counts on: the one that times the invocation out (real time for the poller). */
  now: () => number;
  awsRequestId?: string;
  /**
   * The invocation's abort signal, put on the context (not enumerable) under
   * {@link INVOCATION_ABORT_SIGNAL}: the stand-in aborts it when the invocation is over.
   */
  abortSignal?: AbortSignal;
}

/**
 * A Lambda-like `Context`. `getRemainingTimeInMillis()` counts down to `deadline` and stays at 0 after
 * it. The deprecated `done`/`fail`/`succeed` callbacks throw: handlers here are async and answer by
 * resolving their promise. With `abortSignal`, the context also carries it (see `lib/platform/invocation.ts`).
 */
export function createLambdaContext(options: LambdaContextOptions): Context {
  const { functionName, awsRegion, accountId, partition = 'aws', memoryLimitInMB, deadline, now } = options;
  const day = new Date(now()).toISOString().slice(0, 10).replaceAll('-', '/');
  const unsupported = (name: string) => () => {
    throw new Error(`context.${name}() is not supported by the local poller: return (or throw from) an async handler`);
  };
  const context: Context = {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:${partition}:lambda:${awsRegion}:${accountId}:function:${functionName}`,
    memoryLimitInMB: String(memoryLimitInMB),
    awsRequestId: options.awsRequestId ?? randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: `${day}/[$LATEST]${randomBytes(16).toString('hex')}`,
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: unsupported('done'),
    fail: unsupported('fail'),
    succeed: unsupported('succeed'),
  };
  if (options.abortSignal) {
    Object.defineProperty(context, INVOCATION_ABORT_SIGNAL, { value: options.abortSignal, enumerable: false, writable: false, configurable: false });
  }
  return context;
}

/**
 * Runs `fn` and rejects with {@link FunctionTimeoutError} when `deadline` (epoch ms, real time) passes.
 * At that moment `controller` (when given) is aborted with an {@link InvocationAbortError} naming the
 * timeout, so work that listens to its signal stops as it would when Lambda ends an invocation. A
 * handler that ignores the signal cannot be killed: it keeps running in the background, its result
 * ignored.
 */
export async function runWithTimeout<T>(fn: () => Promise<T>, deadline: number, controller?: AbortController): Promise<T> {
  const timeoutMs = Math.max(0, deadline - Date.now());
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new FunctionTimeoutError(`Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`);
      controller?.abort(new InvocationAbortError('timeout', `invocation aborted: ${error.message} (the function timeout)`, { cause: error }));
      reject(error);
    }, timeoutMs);
  });
  try {
    const run = new Promise<T>((resolve) => resolve(fn()));
    run.catch(() => undefined); // a late rejection after a timeout is not unhandled
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
