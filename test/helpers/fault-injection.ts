/**
 * Fault injection around the consumer's dependencies, for the fault tests. The wrappers themselves
 * live in workbench/drivers/soak/faults.ts ({@link withDepFaults}), so the tests and `npm run soak` inject the same
 * faults; this file adds what only a test needs: a crash that makes the invocation reject at once
 * (instead of hanging until a function timeout), a results store that is unavailable for N commits,
 * and an SQS middleware that fails chosen commands.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import type { SqsHandler } from '../../lib/lanes/queue/handler.js';
import type { ConsumerDeps } from '../../lib/lanes/queue/process-record.js';
import { neverSettles, sqsUnavailableError, withDepFaults, type CrashPoint, type DepFaults } from '../../workbench/drivers/soak/faults.js';
import type { ResultRecord } from '../../lib/store/results.js';

export { withDepFaults, type CrashPoint, type DepFaults } from '../../workbench/drivers/soak/faults.js';
export { withOverrides } from '../../workbench/drivers/overrides.js';

/** The invocation died (a simulated crash of the Lambda execution environment). */
export class SimulatedCrashError extends Error {
  override name = 'SimulatedCrashError';
  constructor(readonly point: CrashPoint) {
    super(`simulated crash ${point}`);
  }
}

/**
 * One crash of one invocation. `deps()` wraps a consumer's dependencies so that the first time the
 * consumer passes `point`, that call never returns (the record's work stops there, as in a dead
 * process) and {@link crashingHandler} rejects the invocation: the event source mapping deletes
 * nothing, and the whole batch comes back after its visibility timeout.
 */
export class Crash {
  readonly crashed: Promise<never>;
  /** Points where it crashed (at most one). */
  readonly at: CrashPoint[] = [];
  #reject!: (error: SimulatedCrashError) => void;

  constructor(readonly point: CrashPoint) {
    this.crashed = new Promise<never>((_, reject) => {
      this.#reject = reject;
    });
    this.crashed.catch(() => undefined);
  }

  /** The faults that crash once at `point`. */
  faults(): DepFaults {
    return {
      crash: (point) => point === this.point && this.at.length === 0,
      onCrash: (point) => {
        this.at.push(point);
        this.#reject(new SimulatedCrashError(point));
        return neverSettles();
      },
    };
  }

  deps(deps: ConsumerDeps): ConsumerDeps {
    return withDepFaults(deps, this.faults());
  }
}

/**
 * The handler, except that the invocation rejects as soon as `crash` happens. A dead execution
 * environment keeps no clock: the invocation is given no deadline of its own (a context without
 * `getRemainingTimeInMillis`, see `startInvocation`), so nothing of it wakes up after the crash, as its
 * deadline's timers would, seconds later, in another test.
 */
export function crashingHandler(handler: SqsHandler, crash: Crash): SqsHandler {
  return (event, context) => {
    const withoutClock = Object.create(context, { getRemainingTimeInMillis: { value: undefined } }) as Context;
    return Promise.race([handler(event, withoutClock), crash.crashed]);
  };
}

/** Counts commit attempts that reached the store, by outcome and by idempotency key. */
export interface CommitLog {
  attempts: number;
  /** Injected `StoreUnavailableError`s. */
  unavailable: number;
  committed: Map<string, number>;
  duplicates: number;
}

/**
 * Faults for a results store whose commit throws `StoreUnavailableError` (without writing) for the
 * first `failures` calls, then works; every commit that reached the store is logged.
 */
export function unavailableCommits(failures: number): { faults: DepFaults; log: CommitLog } {
  const log: CommitLog = { attempts: 0, unavailable: 0, committed: new Map(), duplicates: 0 };
  const faults: DepFaults = {
    outage: (point) => {
      if (point !== 'commit') return false;
      log.attempts += 1;
      if (log.unavailable >= failures) return false;
      log.unavailable += 1;
      return true;
    },
    onCommit: (record: ResultRecord, status) => {
      if (status === 'committed') log.committed.set(record.idempotencyKey, (log.committed.get(record.idempotencyKey) ?? 0) + 1);
      else log.duplicates += 1;
    },
  };
  return { faults, log };
}

/** A switch on an SQS client's commands (an SDK middleware). */
export interface SqsFaultSwitch {
  /** Failures still to inject (decremented per failure); set it to change the plan. */
  remaining: number;
  /** Calls seen per command name (`SendMessageCommand`, …). */
  calls: Record<string, number>;
  /** Failures injected per command name. */
  failed: Record<string, number>;
}

/**
 * Makes `commands` on `sqs` fail `times` times. `when: 'before'` fails without sending (SQS
 * unavailable); `when: 'after'` sends, then throws as if the answer was lost (the call took effect
 * but the caller cannot know).
 */
export function failSqsCommands(sqs: SQSClient, options: { commands: readonly string[]; times: number; when?: 'before' | 'after' }): SqsFaultSwitch {
  const state: SqsFaultSwitch = { remaining: options.times, calls: {}, failed: {} };
  const when = options.when ?? 'before';
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      state.calls[name] = (state.calls[name] ?? 0) + 1;
      const inject = options.commands.includes(name) && state.remaining > 0;
      if (inject) {
        state.remaining -= 1;
        state.failed[name] = (state.failed[name] ?? 0) + 1;
      }
      if (inject && when === 'before') throw sqsUnavailableError(name);
      const out = await next(args);
      if (inject) throw Object.assign(new Error(`injected: the answer to ${name} was lost`), { name: 'TimeoutError', $metadata: {} });
      return out;
    },
    { step: 'initialize', name: `failSqsCommands-${Math.random().toString(36).slice(2, 8)}` },
  );
  return state;
}
