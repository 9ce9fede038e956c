/**
 * `ratelane jobs`: look a job up, or list a lane's jobs in one state (thin wrappers of `lib/jobs`).
 *
 * ```
 * ratelane jobs show <jobId> --lane us [--account ID] [--endpoints '<json>'] [--json]
 * ratelane jobs list --lane us --state waiting|needs_review|dead_lettered|cancelled [--tenant T] [--limit N] [--cursor C] [--json]
 * ```
 *
 * Ids, reasons, times and counts only: never document text. Exit codes: see {@link JOBS_EXIT}.
 */
import type { LaneSet } from '../config/lanes.js';
import { LIST_STATES, listJobs, type JobList, type ListState } from '../jobs/list.js';
import { showJob, type JobRecord } from '../jobs/show.js';
import { createAwsClients } from '../platform/clients.js';
import { errorName } from '../platform/errors.js';
import { laneStores } from '../store/lane-stores.js';
import { type Command, type CommandIo, type CommandOutcome, UsageError, writeOutcome } from './command.js';
import { endpointsFrom, jsonFlag, numberFlag, parseFlags, stringFlag } from './flags.js';
import { namedLane, type SubmitWiring } from './submit.js';

/** Exit codes of `ratelane jobs`: 0 done (an unknown job is shown as `unknown`); 1 a table could not be read; 2 bad usage. */
export const JOBS_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

const SUBCOMMANDS = ['show', 'list'] as const;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** Usage text of `ratelane jobs`. */
export const JOBS_USAGE = `usage: ratelane jobs show <jobId> --lane <name> [--account <id>] [--endpoints '<json>'] [--json]
       ratelane jobs list --lane <name> --state <${LIST_STATES.join('|')}> [--tenant <tenant>] [--limit N] [--cursor <c>] [--json]

  show   one job's whole story: its state, tenant, source, created/eligible/deadline, attempt, deferrals and
         receive count at its latest delivery, every ledger line, where its result is, its cancel or
         erasure, and a timeline of all of it.
  list   the lane's jobs in one state (waiting: deferred, to come back by themselves), each read as the live
         API reads it, so a job that has moved on is left out. needs_review reads the open-reviews index; the
         other states scan the lane's ledger table (an operator's tool: every item is read and billed), at
         most --limit jobs (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}) per run; --cursor goes on where it stopped.

  --lane        the region lane (us, eu, ...)
  --account     the lane's AWS account; else env RATELANE_ACCOUNT; else your credentials' account
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --json        print exactly one JSON object on stdout

Exit codes: 0 done; 1 a table could not be read (run it again); 2 bad usage.
`;

/** The options of one `ratelane jobs`. */
export interface JobsOptions {
  subcommand: (typeof SUBCOMMANDS)[number];
  jobId: string | undefined;
  lane: string;
  state: ListState | undefined;
  tenant: string | undefined;
  limit: number;
  cursor: string | undefined;
  account: string | undefined;
  endpoints: string | undefined;
  json: boolean;
}

/** What a test may inject. */
export interface JobsWiring {
  lanes?: LaneSet;
  callerAccount?: SubmitWiring['callerAccount'];
}

const JOBS_FLAGS = {
  lane: stringFlag(),
  state: stringFlag(),
  tenant: stringFlag(),
  limit: numberFlag({ min: 1, max: MAX_LIMIT, integer: true }),
  cursor: stringFlag(),
  account: stringFlag(),
  endpoints: stringFlag(),
  json: jsonFlag(),
};

/** Parses `ratelane jobs <show|list> [<jobId>] [flags]` (pure). @throws {UsageError} */
function parseJobsArgs(argv: readonly string[]): JobsOptions {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h') throw UsageError.help();
  if (first === undefined || !(SUBCOMMANDS as readonly string[]).includes(first)) {
    throw new UsageError(`${first === undefined ? 'give a subcommand' : `unknown jobs subcommand "${first}"`}; known: ${SUBCOMMANDS.join(', ')}`);
  }
  const subcommand = first as JobsOptions['subcommand'];
  const jobId = subcommand === 'show' && rest[0] !== undefined && !rest[0].startsWith('-') ? rest.shift() : undefined;
  const v = parseFlags(rest, JOBS_FLAGS);
  if (!v.lane) throw new UsageError('--lane is required (a lane name such as us or eu)');
  if (v.account !== undefined && !/^\d{12}$/.test(v.account)) throw new UsageError(`--account "${v.account}" is not a 12-digit AWS account id`);
  if (subcommand === 'show') {
    if (jobId === undefined) throw new UsageError('give the job id: ratelane jobs show <jobId> --lane <name>');
    if (v.state !== undefined || v.tenant !== undefined || v.limit !== undefined || v.cursor !== undefined) {
      throw new UsageError('--state, --tenant, --limit and --cursor are for jobs list');
    }
  } else if (v.state === undefined || !(LIST_STATES as readonly string[]).includes(v.state)) {
    throw new UsageError(`--state is required: one of ${LIST_STATES.join(', ')}${v.state !== undefined ? ` (got "${v.state}")` : ''}`);
  }
  return {
    subcommand,
    jobId,
    lane: v.lane,
    state: v.state as ListState | undefined,
    tenant: v.tenant,
    limit: v.limit ?? DEFAULT_LIMIT,
    cursor: v.cursor,
    account: v.account,
    endpoints: v.endpoints,
    json: v.json,
  };
}

/** A job's story as text. */
function formatShow(record: JobRecord, lane: string): string {
  const { status, claim } = record;
  const facts = claim?.facts;
  const lines = [`job ${record.jobId} in lane ${lane}: ${status.state}`];
  if (claim) {
    lines.push(
      `  tenant ${claim.tenant ?? '(none)'}, priority ${claim.facts?.priority ?? 'bulk'}, submitted by ${claim.submittedBy ?? '(unknown)'}, source ${claim.sourceId ?? '(not recorded)'}`,
    );
  }
  if (facts) {
    lines.push(
      `  created ${facts.createdAt}, eligible ${facts.eligibleAt}, deadline ${facts.deadline ?? '(none)'}; ${facts.schemaVersion} / ${facts.promptVersion}`,
      `  latest delivery ${claim?.at}: receive ${facts.receiveCount}, attempt ${facts.attempt}, deferrals ${facts.deferrals}`,
    );
  }
  if (status.state === 'pending' && status.eligibleAt) lines.push(`  waiting: ${status.reason}, eligible again at ${status.eligibleAt}`);
  if (record.result)
    lines.push(`  result: table ${record.result.table}, key ${record.result.key} (committed ${record.result.committedAt} by ${record.result.committedBy})`);
  lines.push(`  ledger: ${record.entries.length} line(s)`);
  for (const e of record.entries) {
    const extra = [
      e.receiveCount !== undefined ? `receive ${e.receiveCount}` : '',
      e.eligibleAt ? `eligible ${e.eligibleAt}` : '',
      e.failingFields?.length ? `fields ${e.failingFields.join(',')}` : '',
      e.details ? `— ${e.details}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    lines.push(`    ${e.at}  ${e.kind.padEnd(19)} ${e.reason} (attempt ${e.attempt}, deferrals ${e.deferrals})${extra ? ` ${extra}` : ''}`);
  }
  lines.push('  timeline:');
  for (const t of record.timeline) lines.push(`    ${t.at}  ${t.event.padEnd(19)} ${t.detail}`);
  return `${lines.join('\n')}\n`;
}

/** A list as text. */
function formatList(list: JobList): string {
  const lines = list.jobs.map(
    (j) => `  ${j.jobId}  since ${j.at}  ${j.reason}${j.eligibleAt ? `, eligible ${j.eligibleAt}` : ''}${j.tenant ? `  tenant ${j.tenant}` : ''}`,
  );
  const more = list.nextCursor ? `; more: --cursor ${list.nextCursor}` : '';
  return `${[...lines, `${list.jobs.length} job(s) ${list.state} in lane ${list.lane}${list.tenant ? ` of tenant ${list.tenant}` : ''} (${list.read} ledger item(s) read)${more}`].join('\n')}\n`;
}

/** Runs one subcommand. @throws {UsageError} for an unknown lane, bad endpoints or a cursor this command did not print */
async function jobs(options: JobsOptions, io: CommandIo, wiring: JobsWiring): Promise<CommandOutcome> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const lane = await namedLane(options, io, endpoints, wiring);
  const clients = createAwsClients(lane.region, endpoints);
  try {
    const stores = laneStores(lane, clients.dynamodb);
    if (options.subcommand === 'show') {
      const record = await showJob(options.jobId ?? '', stores);
      return { code: JOBS_EXIT.ok, json: { ok: true, lane: lane.name, ...record }, text: formatShow(record, lane.name) };
    }
    const source = { lane: lane.name, dynamodb: clients.dynamodb, ledgerTable: lane.resources.ledgerTable, stores };
    const list = await listJobs(source, { state: options.state as ListState, tenant: options.tenant, limit: options.limit, cursor: options.cursor }).catch(
      (error: unknown) => {
        throw error instanceof TypeError ? new UsageError(error.message) : error;
      },
    );
    return { code: JOBS_EXIT.ok, json: { ok: true, ...list }, text: formatList(list) };
  } finally {
    clients.destroy();
  }
}

/** A table that could not be read, as the command's outcome (exit 1). */
function failureOf(error: unknown): CommandOutcome {
  const message = `${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
  return {
    code: JOBS_EXIT.failed,
    json: { ok: false, error: { kind: 'unavailable', retryable: true, message } },
    text: `ratelane jobs: ${message}; run it again\n`,
  };
}

/** `ratelane jobs` with its wiring; {@link jobsCommand} is the default one. */
export function createJobsCommand(wiring: JobsWiring = {}): Command<JobsOptions> {
  return {
    name: 'jobs',
    usage: JOBS_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseJobsArgs,
    run: (options, io) => writeOutcome(options.json, io, () => jobs(options, io, wiring), failureOf),
  };
}

/** `ratelane jobs` on the configured lanes and real AWS clients. */
export const jobsCommand: Command<JobsOptions> = createJobsCommand();
