/**
 * `ratelane cancel`: cancel a job in its lane (a thin wrapper of `lib/store/cancellation.ts`, as
 * `RatelaneClient.cancel`).
 *
 * ```
 * ratelane cancel <jobId> --lane us [--by NAME] [--account ID] [--endpoints '<json>'] [--json]
 * ```
 *
 * A job that is not committed gets its cancel marker: from then on it makes no model call and is never
 * committed (a job still queued or waiting is stopped at its receive, one in flight before its next call or
 * at its commit). A committed job is said to be committed and nothing changes; a job cancelled before is said
 * to be, with who and when. Exit codes: see {@link CANCEL_EXIT}.
 */
import type { LaneSet } from '../config/lanes.js';
import { createAwsClients } from '../platform/clients.js';
import { errorName } from '../platform/errors.js';
import { ReviewError } from '../review/errors.js';
import { type ReviewerLookup, reviewerOf } from '../review/reviewer.js';
import type { CancelOutcome } from '../store/cancellation.js';
import { laneStores } from '../store/lane-stores.js';
import { type Command, type CommandIo, type CommandOutcome, UsageError, writeOutcome } from './command.js';
import { endpointsFrom, jsonFlag, parseFlags, stringFlag } from './flags.js';
import { namedLane, type SubmitWiring } from './submit.js';

/**
 * Exit codes of `ratelane cancel`: 0 cancelled (now or before); 1 a store failed (nothing may be assumed:
 * run it again); 2 bad usage; 3 the job is committed (nothing changed).
 */
export const CANCEL_EXIT = { ok: 0, failed: 1, usage: 2, committed: 3 } as const;

/** Usage text of `ratelane cancel`. */
export const CANCEL_USAGE = `usage: ratelane cancel <jobId> --lane <name> [--by <name>] [--account <id>] [--endpoints '<json>'] [--json]

  Cancels a job that is not committed: from then on it makes no model call and is never committed (a job
  still queued or waiting is stopped when it is received, one in flight before its next call or at its
  commit). A committed job stays committed and is reported as such.

  --lane        the job's region lane (us, eu, ...)
  --by          who cancels, recorded on the job (default: in AWS your STS caller ARN, else your OS user name)
  --account     the lane's AWS account; else env RATELANE_ACCOUNT; else the account of your credentials.
                Not used with local endpoints.
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --json        print exactly one JSON object on stdout

Exit codes: 0 cancelled (now, or before: said so); 1 a store failed (run it again); 2 bad usage; 3 the job
is committed (nothing changed).
`;

/** The options of one `ratelane cancel`. */
export interface CancelOptions {
  jobId: string;
  lane: string;
  by: string | undefined;
  account: string | undefined;
  endpoints: string | undefined;
  json: boolean;
}

/** What a test may inject; all optional. */
export interface CancelWiring {
  lanes?: LaneSet;
  now?: () => Date;
  callerAccount?: SubmitWiring['callerAccount'];
  callerArn?: ReviewerLookup['callerArn'];
  osUser?: ReviewerLookup['osUser'];
}

const CANCEL_FLAGS = { lane: stringFlag(), by: stringFlag(), account: stringFlag(), endpoints: stringFlag(), json: jsonFlag() };

/** Parses `ratelane cancel <jobId> [flags]` (pure). @throws {UsageError} */
function parseCancelArgs(argv: readonly string[]): CancelOptions {
  const rest = [...argv];
  const jobId = rest[0] !== undefined && !rest[0].startsWith('-') ? rest.shift() : undefined;
  const v = parseFlags(rest, CANCEL_FLAGS);
  if (jobId === undefined || jobId === '') throw new UsageError('give the job id: ratelane cancel <jobId> --lane <name>');
  if (Buffer.byteLength(jobId, 'utf8') > 2048) throw new UsageError('the job id is over 2048 bytes: no job has such an id');
  if (!v.lane) throw new UsageError("--lane is required (the job's lane, such as us or eu)");
  if (v.account !== undefined && !/^\d{12}$/.test(v.account)) throw new UsageError(`--account "${v.account}" is not a 12-digit AWS account id`);
  return { jobId, lane: v.lane, by: v.by, account: v.account, endpoints: v.endpoints, json: v.json };
}

type Outcome = CommandOutcome;

/** The cancel's outcome in words (ids, times and names only). */
function outcomeOf(jobId: string, lane: string, outcome: CancelOutcome): Outcome {
  const where = `job ${jobId} in lane ${lane}`;
  const json = { jobId, lane, ...outcome };
  switch (outcome.status) {
    case 'cancelled':
      return {
        code: CANCEL_EXIT.ok,
        json: { ok: true, ...json },
        text: `${where} cancelled by ${outcome.marker.cancelledBy} at ${outcome.marker.cancelledAt}: ${
          outcome.received ? 'it makes no further model call and is never committed' : 'not received yet: it is stopped when it is, with no model call'
        }\n`,
      };
    case 'already_cancelled':
      return {
        code: CANCEL_EXIT.ok,
        json: { ok: true, ...json },
        text: `${where} was already cancelled, by ${outcome.marker.cancelledBy} at ${outcome.marker.cancelledAt}: nothing changed\n`,
      };
    case 'committed':
      return {
        code: CANCEL_EXIT.committed,
        json: { ok: false, ...json },
        text: `${where} is committed (${outcome.committedBy === jobId ? 'by itself' : `its result committed by ${outcome.committedBy}`} at ${outcome.committedAt}): nothing changed\n`,
      };
  }
}

async function cancel(options: CancelOptions, io: CommandIo, wiring: CancelWiring): Promise<Outcome> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const lane = await namedLane(options, io, endpoints, wiring);
  const who = await reviewerOf({
    given: options.by,
    region: lane.region,
    local: endpoints !== undefined,
    callerArn: wiring.callerArn,
    osUser: wiring.osUser,
  });
  const clients = createAwsClients(lane.region, endpoints);
  try {
    const { cancellations } = laneStores(lane, clients.dynamodb, wiring.now ? { now: wiring.now } : {});
    return outcomeOf(options.jobId, lane.name, await cancellations.cancel(options.jobId, who.name));
  } finally {
    clients.destroy();
  }
}

function failureOf(error: unknown): Outcome {
  if (error instanceof ReviewError) {
    const message = error.message.replace('--reviewer', '--by');
    return { code: CANCEL_EXIT.usage, json: { ok: false, error: { kind: 'usage', code: 'invalid_by', message } }, text: `ratelane cancel: --by: ${message}\n` };
  }
  const message = `${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
  return {
    code: CANCEL_EXIT.failed,
    json: { ok: false, error: { kind: 'unavailable', retryable: true, message } },
    text: `ratelane cancel: ${message}; nothing may be assumed: run it again\n`,
  };
}

/** `ratelane cancel` with its wiring; {@link cancelCommand} is the default one. */
export function createCancelCommand(wiring: CancelWiring = {}): Command<CancelOptions> {
  return {
    name: 'cancel',
    usage: CANCEL_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseCancelArgs,
    run: (options, io) => writeOutcome(options.json, io, () => cancel(options, io, wiring), failureOf),
  };
}

/** `ratelane cancel` on the configured lanes and real AWS clients. */
export const cancelCommand: Command<CancelOptions> = createCancelCommand();
