/**
 * `ratelane redrive`: what is in a lane's dead-letter queue, by reason, then moved back to its queue — never a
 * job already committed, cancelled or erased (a thin wrapper of `lib/lanes/queue/dlq-redrive.ts`).
 *
 * ```
 * ratelane redrive --lane us [--dry-run] [--account ID] [--endpoints '<json>'] [--json]
 * ```
 *
 * Exit codes: see {@link REDRIVE_EXIT}.
 */
import type { LaneSet } from '../config/lanes.js';
import { type DlqRedriveReport, redriveDeadLetters } from '../lanes/queue/dlq-redrive.js';
import { createAwsClients } from '../platform/clients.js';
import { errorName } from '../platform/errors.js';
import { laneStores } from '../store/lane-stores.js';
import { type Command, type CommandIo, type CommandOutcome, UsageError, writeOutcome } from './command.js';
import { booleanFlag, endpointsFrom, jsonFlag, parseFlags, stringFlag } from './flags.js';
import { namedLane, type SubmitWiring } from './submit.js';

/** Exit codes of `ratelane redrive`: 0 done (or nothing to do); 1 SQS or a table failed, or no move could start; 2 bad usage. */
export const REDRIVE_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Usage text of `ratelane redrive`. */
export const REDRIVE_USAGE = `usage: ratelane redrive --lane <name> [--dry-run] [--account <id>] [--endpoints '<json>'] [--json]

  Surveys the lane's dead-letter queue — each message's job, its state and why it was dead-lettered — and
  prints it grouped by reason. Then (not with --dry-run) deletes the messages of jobs already committed,
  cancelled or erased (never re-run), and moves the rest back to the lane's queue with SQS
  StartMessageMoveTask (locally, where the emulator has no move task, by sending each to the queue and
  deleting it from the DLQ). Messages are held while surveyed and released after.

  --lane        the region lane (us, eu, ...)
  --dry-run     survey and report only: nothing deleted or moved
  --account     the lane's AWS account; else env RATELANE_ACCOUNT; else your credentials' account
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --json        print exactly one JSON object on stdout

Exit codes: 0 done; 1 SQS or a table failed, or the move could not start (a move task already running:
the message says so); 2 bad usage.
`;

/** The options of one `ratelane redrive`. */
export interface RedriveOptions {
  lane: string;
  dryRun: boolean;
  account: string | undefined;
  endpoints: string | undefined;
  json: boolean;
}

/** What a test may inject. */
export interface RedriveWiring {
  lanes?: LaneSet;
  callerAccount?: SubmitWiring['callerAccount'];
}

const REDRIVE_FLAGS = { lane: stringFlag(), 'dry-run': booleanFlag(), account: stringFlag(), endpoints: stringFlag(), json: jsonFlag() };

function parseRedriveArgs(argv: readonly string[]): RedriveOptions {
  const v = parseFlags(argv, REDRIVE_FLAGS);
  if (!v.lane) throw new UsageError('--lane is required (a lane name such as us or eu)');
  if (v.account !== undefined && !/^\d{12}$/.test(v.account)) throw new UsageError(`--account "${v.account}" is not a 12-digit AWS account id`);
  return { lane: v.lane, dryRun: v['dry-run'], account: v.account, endpoints: v.endpoints, json: v.json };
}

/** The report as text: the groups, what was deleted, how the rest moved. */
function formatReport(report: DlqRedriveReport, lane: string): string {
  const lines = [`dead-letter queue of lane ${lane}: ${report.found} message(s)`];
  for (const g of report.groups) lines.push(`  ${String(g.count).padStart(6)}  ${g.reason}  (e.g. ${g.jobIds.slice(0, 3).join(', ')})`);
  const { committed, cancelled, erased } = report.settled;
  if (committed + cancelled + erased > 0) {
    lines.push(`  settled, ${report.dryRun ? 'would be deleted' : 'deleted'} (never re-run): ${committed} committed, ${cancelled} cancelled, ${erased} erased`);
  }
  const toMove = report.groups.reduce((n, g) => n + g.count, 0);
  if (report.dryRun) lines.push(`dry run: nothing deleted or moved; ${toMove} message(s) would move back to the lane's queue`);
  else if (report.method.kind === 'move_task') lines.push(`moving ${report.moved} message(s) back with an SQS move task (${report.method.taskHandle})`);
  else if (report.method.kind === 'send_delete') lines.push(`moved ${report.moved} message(s) back to the lane's queue (send, then delete)`);
  else lines.push(report.method.reason ?? 'nothing to move');
  return `${lines.join('\n')}\n`;
}

async function redrive(options: RedriveOptions, io: CommandIo, wiring: RedriveWiring): Promise<CommandOutcome> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const lane = await namedLane(options, io, endpoints, wiring);
  const clients = createAwsClients(lane.region, endpoints);
  try {
    const report = await redriveDeadLetters(
      {
        sqs: clients.sqs,
        queueName: lane.resources.queueName,
        dlqName: lane.resources.dlqName,
        stores: laneStores(lane, clients.dynamodb),
        // The local emulator keeps a queue in one place: a short poll sees all of it.
        ...(endpoints !== undefined ? { receiveWaitSeconds: 0 } : {}),
        ...(options.json ? {} : { onProgress: (line: string) => io.stderr.write(`${line}\n`) }),
      },
      { dryRun: options.dryRun },
    );
    const stalled = !report.dryRun && report.method.kind === 'none' && report.method.reason !== undefined;
    return { code: stalled ? REDRIVE_EXIT.failed : REDRIVE_EXIT.ok, json: { ok: !stalled, lane: lane.name, ...report }, text: formatReport(report, lane.name) };
  } finally {
    clients.destroy();
  }
}

/** SQS or a table that failed, as the command's outcome (exit 1). */
function failureOf(error: unknown): CommandOutcome {
  const message = `${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
  return {
    code: REDRIVE_EXIT.failed,
    json: { ok: false, error: { kind: 'unavailable', retryable: true, message } },
    text: `ratelane redrive: ${message}; messages still held come back by themselves; run it again\n`,
  };
}

/** `ratelane redrive` with its wiring; {@link redriveCommand} is the default one. */
export function createRedriveCommand(wiring: RedriveWiring = {}): Command<RedriveOptions> {
  return {
    name: 'redrive',
    usage: REDRIVE_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseRedriveArgs,
    run: (options, io) => writeOutcome(options.json, io, () => redrive(options, io, wiring), failureOf),
  };
}

/** `ratelane redrive` on the configured lanes and real AWS clients. */
export const redriveCommand: Command<RedriveOptions> = createRedriveCommand();
