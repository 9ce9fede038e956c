/**
 * Fault points around the consumer's dependencies, for `npm run soak` and the fault tests: crashes
 * between steps (after the model call, after the commit, after a re-send) and outages of the
 * results store and of SQS, decided call by call by a {@link DepFaults}; and the soak's fault log
 * ({@link faultLog}): its seeded decisions and the counters of what they and the poller saw.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { SqsHandler } from '../../../lib/lanes/queue/handler.js';
import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { ConsumerDeps } from '../../../lib/lanes/queue/process-record.js';
import type { ExtractionRequest, ExtractionResponse } from '../../../lib/providers/model.js';
import { StoreUnavailableError } from '../../../lib/store/errors.js';
import type { CommitOutcome, ResultRecord } from '../../../lib/store/results.js';
import type { PollerEvent } from '../../local-stack/poller/events.js';
import { withOverrides } from '../overrides.js';

/** Where a consumer can die between two steps. */
export type CrashPoint = 'afterModelCall' | 'afterCommit' | 'afterResend';

/** A dependency call that can find its service unavailable (the call is not made). */
export type OutagePoint = 'commit' | 'send' | 'visibility';

/** Decides, call by call, where faults happen around a consumer's dependencies. */
export interface DepFaults {
  /** Whether the consumer dies at this point now. */
  crash?(point: CrashPoint): boolean;
  /** Whether this call finds its service unavailable now (it throws as the SDK adapter would). */
  outage?(point: OutagePoint): boolean;
  /**
   * What a crash does. Default: a promise that never settles — a process that died answers nothing,
   * so the invocation ends by the function timeout and its whole batch comes back.
   */
  onCrash?(point: CrashPoint): Promise<never>;
  /** Sees every commit attempt that reached the store, with what it did. */
  onCommit?(record: ResultRecord, status: CommitOutcome['status']): void;
}

/** A crash's default effect: never settle. */
export const neverSettles = (): Promise<never> => new Promise<never>(() => undefined);

/** The consumer's process died in the middle of an invocation (a soak's injected crash). */
class SimulatedProcessCrash extends Error {
  override name = 'SimulatedProcessCrash';
}

const invocationCrash = new AsyncLocalStorage<{ crashed: CrashPoint | undefined; resends: number }>();

/**
 * Makes a crash end the whole invocation, as a dead process does: the handler runs in a scope that a
 * crash marks; when it returns, a marked invocation throws instead (the poller fails the whole
 * batch and every record comes back after its visibility timeout, also those it had settled). A job
 * the crashed invocation had already re-sent is now in the queue twice: `onCopies` is told how many
 * such copies the crash made (they are injected too, like the soak's duplicate deliveries).
 */
export function crashEndsInvocation(handler: SqsHandler, onCopies: (copies: number) => void = () => undefined): SqsHandler {
  return (event, context) => {
    const scope = { crashed: undefined as CrashPoint | undefined, resends: 0 };
    return invocationCrash.run(scope, async () => {
      const response = await handler(event, context);
      if (scope.crashed) {
        onCopies(scope.resends);
        throw new SimulatedProcessCrash(`simulated process crash ${scope.crashed}: the invocation died`);
      }
      return response;
    });
  };
}

/** A crash that ends its invocation (see {@link crashEndsInvocation}): the record's call fails at once. */
function crashInvocation(point: CrashPoint): Promise<never> {
  const scope = invocationCrash.getStore();
  if (scope) scope.crashed ??= point;
  return Promise.reject(new SimulatedProcessCrash(`simulated process crash ${point}`));
}

/** The error an SQS call gets when the service is unavailable. */
export function sqsUnavailableError(command: string): Error {
  return Object.assign(new Error(`injected: SQS unavailable for ${command}`), {
    name: 'ServiceUnavailable',
    $fault: 'server',
    $metadata: { httpStatusCode: 503 },
  });
}

/**
 * The consumer's dependencies with faults: the model (crash after a call), the results store
 * (unavailable, crash after a commit) and the SQS client the consumer sends with (SendMessage or
 * ChangeMessageVisibility unavailable, crash after a SendMessage). Everything else is untouched.
 */
export function withDepFaults(deps: ConsumerDeps, faults: DepFaults): ConsumerDeps {
  const crash = (point: CrashPoint): Promise<never> => (faults.onCrash ?? neverSettles)(point);
  const model = withOverrides(deps.model, {
    extract: async (request: ExtractionRequest): Promise<ExtractionResponse> => {
      const response = await deps.model.extract(request);
      if (faults.crash?.('afterModelCall')) return crash('afterModelCall');
      return response;
    },
  });
  const results = withOverrides(deps.results, {
    commitOnce: async (record: ResultRecord): Promise<CommitOutcome> => {
      if (faults.outage?.('commit')) {
        throw new StoreUnavailableError('PutItem', deps.results.tableName, {
          cause: Object.assign(new Error('injected: DynamoDB unavailable'), { name: 'ServiceUnavailable' }),
        });
      }
      const outcome = await deps.results.commitOnce(record);
      faults.onCommit?.(record, outcome.status);
      if (faults.crash?.('afterCommit')) return crash('afterCommit');
      return outcome;
    },
  });
  const realSend = deps.sqs.send.bind(deps.sqs) as (command: unknown, options?: unknown) => Promise<unknown>;
  const send = async (command: unknown, options?: unknown): Promise<unknown> => {
    const isSend = command instanceof SendMessageCommand;
    const isVisibility = command instanceof ChangeMessageVisibilityCommand;
    if ((isSend && faults.outage?.('send')) || (isVisibility && faults.outage?.('visibility'))) {
      throw sqsUnavailableError(isSend ? 'SendMessage' : 'ChangeMessageVisibility');
    }
    const out = await realSend(command, options);
    const scope = invocationCrash.getStore();
    if (isSend && scope && (command as SendMessageCommand).input.QueueUrl === deps.queueUrl) scope.resends += 1;
    if (isSend && faults.crash?.('afterResend')) return crash('afterResend');
    return out;
  };
  const sqs = withOverrides(deps.sqs, { send: send as unknown as SQSClient['send'] });
  return { ...deps, model, results, sqs };
}

// ---------------------------------------------------------------------------------------------------------
// The soak's fault log

/** What the injected faults did, counted as the run goes. */
export interface FaultLog {
  faults: DepFaults;
  crashes: Record<CrashPoint, number>;
  /** Copies of jobs a crash made: re-sent by an invocation that then died (its originals come back too). */
  crashCopies: number;
  outages: Record<OutagePoint, number>;
  /** Commits that reached the store and committed, per idempotency key. */
  commitsByKey: Map<string, number>;
  wholeBatchFailures: Record<string, number>;
  wholeBatchFailureExamples: Record<string, string>;
  deleteFailures: number;
  onPollerEvent(event: PollerEvent): void;
}

/** How often the consumer faults strike (the soak's `--crash`, `--fault-store` and `--fault-sqs`). */
export interface FaultRates {
  /** Chance of a crash at each crash point the consumer passes. */
  crashes: number;
  /** Share of commits that find DynamoDB unavailable. */
  storeOutages: number;
  /** Share of the consumer's SendMessage / ChangeMessageVisibility calls that find SQS unavailable. */
  sqsOutages: number;
}

/** The fault decisions of a soak (seeded by `chance`), and the counters of what they and the poller saw. */
export function faultLog(rates: FaultRates, chance: (p: number) => boolean): FaultLog {
  const log: FaultLog = {
    crashes: { afterModelCall: 0, afterCommit: 0, afterResend: 0 },
    crashCopies: 0,
    outages: { commit: 0, send: 0, visibility: 0 },
    commitsByKey: new Map(),
    wholeBatchFailures: {},
    wholeBatchFailureExamples: {},
    deleteFailures: 0,
    faults: {
      crash: (point) => {
        const hit = chance(rates.crashes);
        if (hit) log.crashes[point] += 1;
        return hit;
      },
      onCrash: crashInvocation,
      outage: (point) => {
        const hit = chance(point === 'commit' ? rates.storeOutages : rates.sqsOutages);
        if (hit) log.outages[point] += 1;
        return hit;
      },
      onCommit: (record, status) => {
        if (status === 'committed') log.commitsByKey.set(record.idempotencyKey, (log.commitsByKey.get(record.idempotencyKey) ?? 0) + 1);
      },
    },
    onPollerEvent: (event) => {
      if (event.type === 'batchFailed') {
        log.wholeBatchFailures[event.reason] = (log.wholeBatchFailures[event.reason] ?? 0) + 1;
        log.wholeBatchFailureExamples[event.reason] ??= `${(event.error as Error)?.name ?? 'Error'}: ${event.message}`.slice(0, 300);
      }
      if (event.type === 'deleteFailed') log.deleteFailures += event.failures.length;
    },
  };
  return log;
}
