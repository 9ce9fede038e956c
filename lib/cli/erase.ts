/**
 * `ratelane erase`: erase a source in one region lane (a thin wrapper of `lib/erasure`, `eraseSource`).
 *
 * ```
 * ratelane erase --lane eu --source-id X [--by NAME] [--account ID] [--endpoints '<json>'] [--json]
 * ```
 *
 * It lays the source's tombstone in the lane (from then on the lane does not run a job of it), then removes
 * what the lane holds of it: each claimed job's result, ledger entries and status, and the source's documents.
 * It prints a receipt: the lane, each job, the documents removed, the tombstone, and what the lane does with
 * a new submission of the source. It touches the named lane only; never prints document text.
 * Exit codes: see {@link ERASE_EXIT}.
 */
import type { LaneSet } from '../config/lanes.js';
import { type ErasureReceipt, ErasureError, eraseSource, laneEraseDeps } from '../erasure/erase.js';
import { createAwsClients } from '../platform/clients.js';
import { errorName } from '../platform/errors.js';
import { ReviewError } from '../review/errors.js';
import { type Reviewer, type ReviewerLookup, reviewerOf } from '../review/reviewer.js';
import { type Command, type CommandIo, type CommandOutcome, UsageError, writeOutcome } from './command.js';
import { endpointsFrom, jsonFlag, parseFlags, stringFlag } from './flags.js';
import { namedLane, type SubmitWiring } from './submit.js';

/**
 * Exit codes of `ratelane erase`: 0 done (whether the lane held anything of the source or not); 1 a store or
 * the bucket failed (what was removed stays removed: run it again to finish); 2 bad usage (an unknown lane, a
 * missing or too long source id, a bad `--by`).
 */
export const ERASE_EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A source id as a job carries one (`lib/contract/job.ts`). */
const MAX_SOURCE_ID = 512;

/** Usage text of `ratelane erase`. */
export const ERASE_USAGE = `usage: ratelane erase --lane <name> --source-id <id> [--by <name>] [--account <id>] [--endpoints '<json>'] [--json]

  Erases a source in one lane: lays its tombstone (from then on the lane runs no job of it: a job still
  queued is stopped at its receive, one in flight at its commit), then removes every job of it the lane
  claimed (its result, its ledger entries) and its documents. Running it again removes what appeared since.
  It touches this lane only: a source submitted to several lanes is erased in each.

  --lane        the region lane (us, eu, ...): every read and delete stays in its region, tables and bucket
  --source-id   the source's id, as it was submitted (1-${MAX_SOURCE_ID} characters)
  --by          who erases, recorded on the tombstone and the jobs' markers (default: in AWS your STS caller
                ARN, else your OS user name)
  --account     the lane's AWS account (its bucket is named after it); else env RATELANE_ACCOUNT; else the
                account of your credentials. Not used with local endpoints.
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --json        print exactly one JSON object on stdout (the receipt, with ok)

Exit codes: 0 done (the lane held something of the source or not: the receipt says which); 1 a store or the
bucket failed (what was removed stays removed: run it again to finish); 2 bad usage (unknown lane, missing
or too long --source-id, a bad --by).
`;

/** The options of one `ratelane erase`. */
export interface EraseOptions {
  lane: string;
  sourceId: string;
  by: string | undefined;
  account: string | undefined;
  /** `--endpoints` as given (parsed in `run`, where `RATELANE_ENDPOINTS` is the fallback). */
  endpoints: string | undefined;
  json: boolean;
}

/** What a test (or another entry point) may inject; all optional. */
export interface EraseWiring {
  /** Lane set (default: the lane config file's, `configuredLanes`). */
  lanes?: LaneSet;
  now?: () => Date;
  /** Overrides how the lane's account is found in AWS (default: STS `GetCallerIdentity`). */
  callerAccount?: SubmitWiring['callerAccount'];
  /** The caller's ARN in AWS, for the default `--by` (default: STS `GetCallerIdentity` in the lane's region). */
  callerArn?: ReviewerLookup['callerArn'];
  /** The OS user's name, for the default `--by` (default: `os.userInfo()`). */
  osUser?: ReviewerLookup['osUser'];
}

const ERASE_FLAGS = { lane: stringFlag(), 'source-id': stringFlag(), by: stringFlag(), account: stringFlag(), endpoints: stringFlag(), json: jsonFlag() };

/** Parses the flags of `ratelane erase` (pure). @throws {UsageError} */
function parseEraseArgs(argv: readonly string[]): EraseOptions {
  const v = parseFlags(argv, ERASE_FLAGS);
  if (!v.lane) throw new UsageError('--lane is required (a lane name such as us or eu)');
  const sourceId = v['source-id'];
  if (sourceId === undefined || sourceId === '') throw new UsageError('--source-id is required: the id the source was submitted under');
  if (sourceId.length > MAX_SOURCE_ID) throw new UsageError(`--source-id is ${sourceId.length} characters; a source id is 1-${MAX_SOURCE_ID}`);
  if (v.account !== undefined && !/^\d{12}$/.test(v.account)) throw new UsageError(`--account "${v.account}" is not a 12-digit AWS account id`);
  return { lane: v.lane, sourceId, by: v.by, account: v.account, endpoints: v.endpoints, json: v.json };
}

type Outcome = CommandOutcome;

/** A source id as text prints it: quoted, its control characters escaped. */
function quoted(sourceId: string): string {
  return JSON.stringify(sourceId);
}

/** What the lane does with a new submission of the source, in words. */
function afterErasureText(receipt: ErasureReceipt): string {
  return receipt.afterErasure === 'refuse'
    ? 'new submissions of the source: refused (erasure.afterErasure: refuse): a job of it is stopped at its receive, nothing kept'
    : 'new submissions of the source: accepted (erasure.afterErasure: accept): a job created after this erasure runs; older ones never commit';
}

/** The receipt as text: ids, counts, keys, times and names only; never document text. */
function formatReceipt(receipt: ErasureReceipt, reviewer?: Reviewer): string {
  const lane = `lane ${receipt.lane} (${receipt.region})`;
  const by = `${receipt.by}${reviewer ? ` (${reviewer.source})` : ''}`;
  const t = receipt.tombstone;
  const tombstone = `tombstone: first erased ${t.erasedAt} by ${t.erasedBy}; ${t.erasures} erasure(s) so far`;
  if (!receipt.found) {
    const future =
      receipt.afterErasure === 'refuse'
        ? 'From now on this lane will not run a job of it.'
        : 'From now on this lane will not run a job of it created before now (erasure.afterErasure: accept: a new submission runs).';
    return `${[
      `${lane} holds nothing of source ${quoted(receipt.sourceId)} (no job claimed, no document recorded): nothing removed. If the source's jobs are in another lane, erase there. ${future}`,
      `  erased by ${by} at ${receipt.at}`,
      `  ${tombstone}`,
    ].join('\n')}\n`;
  }
  const lines = [`erased source ${quoted(receipt.sourceId)} in ${lane}, by ${by} at ${receipt.at}`];
  lines.push(`  ${receipt.jobs.length} job(s)${receipt.jobs.length === 0 ? ' (none claimed since the last erasure)' : ':'}`);
  for (const job of receipt.jobs) {
    lines.push(
      `    ${job.jobId}  result ${job.resultRemoved ? 'removed' : 'none (not committed)'}, ${job.ledgerItemsRemoved} ledger item(s) removed (its erased marker left)`,
    );
  }
  if (receipt.batchItems !== null) {
    lines.push(`  ${receipt.batchItems.length} batch item(s)${receipt.batchItems.length > 0 ? ':' : ''}`);
    for (const item of receipt.batchItems) {
      lines.push(`    ${item.batchId}/${item.itemId} (job ${item.jobId})  result ${item.resultRemoved ? 'removed' : 'none (not committed)'}`);
    }
  }
  for (const files of receipt.batchFiles ?? []) {
    const large = files.tooLarge.length > 0 ? `; ${files.tooLarge.length} file(s) too large to rewrite here: ${files.tooLarge.join(', ')}` : '';
    lines.push(`  batch ${files.batchId}: ${files.linesRemoved} line(s) removed from ${files.filesRewritten.length} file(s)${large}`);
  }
  if (receipt.batchRecordsPending?.length) {
    lines.push(
      `  the provider's files of batch(es) ${receipt.batchRecordsPending.join(', ')}: the lane's reconciler removes the source's records there once the jobs holding them have ended`,
    );
  }
  lines.push(`  ${receipt.documents.length} document(s) removed${receipt.documents.length > 0 ? ':' : ''}`);
  for (const key of receipt.documents) lines.push(`    ${key}`);
  lines.push(`  ${tombstone}`, `  ${afterErasureText(receipt)}`);
  return `${lines.join('\n')}\n`;
}

/** Erases the source in the lane; resolves the outcome. @throws {UsageError} for an unknown lane, bad endpoints or account */
async function erase(options: EraseOptions, io: CommandIo, wiring: EraseWiring): Promise<Outcome> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const lane = await namedLane(options, io, endpoints, wiring);
  const reviewer = await reviewerOf({
    given: options.by,
    region: lane.region,
    local: endpoints !== undefined,
    callerArn: wiring.callerArn,
    osUser: wiring.osUser,
  });
  const clients = createAwsClients(lane.region, endpoints);
  const now = wiring.now ?? (() => new Date());
  try {
    const receipt = await eraseSource(laneEraseDeps(lane, clients, { now, local: endpoints !== undefined }), { sourceId: options.sourceId, by: reviewer.name });
    return { code: ERASE_EXIT.ok, json: { ok: true, ...receipt }, text: formatReceipt(receipt, reviewer) };
  } finally {
    clients.destroy();
  }
}

/** A failure as the command's outcome. */
function failureOf(error: unknown): Outcome {
  if (error instanceof ReviewError) {
    const message = error.message.replace('--reviewer', '--by');
    return { code: ERASE_EXIT.usage, json: { ok: false, error: { kind: 'usage', code: 'invalid_by', message } }, text: `ratelane erase: --by: ${message}\n` };
  }
  if (error instanceof ErasureError) {
    return {
      code: ERASE_EXIT.failed,
      json: { ok: false, error: { kind: 'unavailable', retryable: true, message: error.message } },
      text: `ratelane erase: ${error.message}. What was removed stays removed: run the same command again.\n`,
    };
  }
  const message = `unexpected ${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
  return { code: ERASE_EXIT.failed, json: { ok: false, error: { kind: 'internal', message } }, text: `ratelane erase: ${message}; run it again\n` };
}

/** `ratelane erase` with its wiring (lanes, clock, identity); {@link eraseCommand} is the default one. */
export function createEraseCommand(wiring: EraseWiring = {}): Command<EraseOptions> {
  return {
    name: 'erase',
    usage: ERASE_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseEraseArgs,
    run: (options, io) => writeOutcome(options.json, io, () => erase(options, io, wiring), failureOf),
  };
}

/** `ratelane erase` on the configured lanes and real AWS clients. */
export const eraseCommand: Command<EraseOptions> = createEraseCommand();
