/**
 * `ratelane review`: the jobs of a lane that wait for a person (`needs_review`), and a reviewer's
 * corrected object committed for one of them. A thin wrapper of `lib/review` (`listReviews`,
 * `resolveReview`).
 *
 * ```
 * ratelane review list --lane eu [--limit 100] [--cursor C] [--endpoints '<json>'] [--json]
 * ratelane review resolve <jobId> --lane eu --file corrected.json [--reviewer NAME] [--endpoints '<json>'] [--json]
 * ```
 *
 * Everything is read and written in the lane's region, in its own ledger and results tables. Output never
 * holds document text nor the corrected object's values. Exit codes: see {@link REVIEW_EXIT}.
 */
import { readFile } from 'node:fs/promises';
import { configuredLanes } from '../config/file.js';
import type { LaneSet } from '../config/lanes.js';
import type { ServiceEndpoints } from '../platform/clients.js';
import { errorName } from '../platform/errors.js';
import { ReviewError, type ReviewErrorCode, ReviewValidationError } from '../review/errors.js';
import { type OpenReviewLaneOptions, openReviewLane, type ReviewLane } from '../review/lane.js';
import { DEFAULT_REVIEW_LIMIT, listReviews, MAX_REVIEW_LIMIT, type ReviewItem, type ReviewList } from '../review/list.js';
import { resolveReview, type ReviewResolution } from '../review/resolve.js';
import { type ReviewerLookup, reviewerOf } from '../review/reviewer.js';
import { UsageError, type Command, type CommandIo } from './command.js';
import { endpointsFrom, jsonFlag, numberFlag, parseFlags, stringFlag } from './flags.js';

/**
 * Exit codes of `ratelane review`: 0 done; 1 a table could not be read or written (try again), or the
 * result was committed but its ledger entry was not; 2 bad usage (an unknown lane, a bad flag, a file
 * that cannot be read or is not JSON); 3 refused, nothing written (no such job, not in needs_review,
 * already committed, a corrected object that fails validation or cannot be stored).
 */
export const REVIEW_EXIT = { ok: 0, failed: 1, usage: 2, refused: 3 } as const;

/** Usage text of `ratelane review`. */
export const REVIEW_USAGE = `usage: ratelane review list --lane <name> [--limit <n>] [--cursor <c>] [--endpoints '<json>'] [--json]
       ratelane review resolve <jobId> --lane <name> --file <corrected.json> [--reviewer <name>] [--endpoints '<json>'] [--json]

  list      the lane's jobs in needs_review: job id, tenant, schema and prompt versions, the reason and its
            detail, when, the fields and rules that failed, the idempotency key (the source's hash); never
            document text. Looks at up to --limit jobs; --cursor goes on where a list stopped
  resolve   commit a corrected object for a job in needs_review: it must pass the job's schema and domain
            rules (as the pipeline's answers do), and is committed once under the job's idempotency key; the
            ledger records the commit with the reviewer. A job resolved at the same time by someone else is
            refused (already committed); nothing is written for an object that fails validation

  --lane        the region lane (us, eu, ...): every read and write stays in its region and its tables
  --limit       list: jobs to look at (1..${MAX_REVIEW_LIMIT}, default ${DEFAULT_REVIEW_LIMIT})
  --cursor      list: go on from where a list stopped (its nextCursor)
  --file        resolve: the corrected object, a JSON file
  --reviewer    resolve: who reviewed (default: in AWS your STS caller ARN, else your OS user name)
  --endpoints   local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --json        print exactly one JSON object on stdout

Exit codes: 0 done; 1 a table could not be read or written (try again), or the result was committed but its
ledger entry was not; 2 bad usage (unknown lane, bad flag, a file that cannot be read or is not JSON);
3 refused, nothing written (no such job, not in needs_review, already committed, the object fails validation).
`;

/** The subcommands of `ratelane review`. */
const REVIEW_SUBCOMMANDS = ['list', 'resolve'] as const;

/** The options of one `ratelane review`. */
export interface ReviewOptions {
  subcommand: (typeof REVIEW_SUBCOMMANDS)[number];
  lane: string;
  /** resolve: the job. */
  jobId: string | undefined;
  /** resolve: the corrected object's file. */
  file: string | undefined;
  reviewer: string | undefined;
  limit: number;
  cursor: string | undefined;
  /** `--endpoints` as given (parsed in `run`, where `RATELANE_ENDPOINTS` is the fallback). */
  endpoints: string | undefined;
  json: boolean;
}

/** What a test (or another entry point) may inject; all optional. */
export interface ReviewWiring {
  /** Lane set (default: the lane config file's, `configuredLanes`). */
  lanes?: LaneSet;
  /** The lane's DynamoDB client (default: one in the lane's region, with the endpoints). */
  dynamodbFor?: OpenReviewLaneOptions['dynamodbFor'];
  now?: () => Date;
  /** The caller's ARN in AWS (default: STS `GetCallerIdentity` in the lane's region). */
  callerArn?: ReviewerLookup['callerArn'];
  /** The OS user's name (default: `os.userInfo()`). */
  osUser?: ReviewerLookup['osUser'];
}

const REVIEW_FLAGS = {
  lane: stringFlag(),
  limit: numberFlag({ min: 1, max: MAX_REVIEW_LIMIT, integer: true }),
  cursor: stringFlag(),
  file: stringFlag(),
  reviewer: stringFlag(),
  endpoints: stringFlag(),
  json: jsonFlag(),
};

/** Parses `ratelane review <list|resolve> [<jobId>] [flags]` (pure). @throws {UsageError} */
function parseReviewArgs(argv: readonly string[]): ReviewOptions {
  const [first, ...rest] = argv;
  if (first === '--help' || first === '-h') throw UsageError.help();
  if (first === undefined || !(REVIEW_SUBCOMMANDS as readonly string[]).includes(first)) {
    throw new UsageError(`${first === undefined ? 'give a subcommand' : `unknown review subcommand "${first}"`}; known: ${REVIEW_SUBCOMMANDS.join(', ')}`);
  }
  const subcommand = first as ReviewOptions['subcommand'];
  const jobId = subcommand === 'resolve' && rest[0] !== undefined && !rest[0].startsWith('-') ? rest.shift() : undefined;
  const v = parseFlags(rest, REVIEW_FLAGS);
  if (!v.lane) throw new UsageError('--lane is required (a lane name such as us or eu)');
  if (subcommand === 'resolve') {
    if (jobId === undefined) throw new UsageError('give the job id: ratelane review resolve <jobId> --lane <name> --file <corrected.json>');
    if (!v.file) throw new UsageError('--file is required: the corrected object as a JSON file');
    if (v.limit !== undefined || v.cursor !== undefined) throw new UsageError('--limit and --cursor are for review list');
  } else if (v.file !== undefined || v.reviewer !== undefined) {
    throw new UsageError('--file and --reviewer are for review resolve');
  }
  return {
    subcommand,
    lane: v.lane,
    jobId,
    file: v.file,
    reviewer: v.reviewer,
    limit: v.limit ?? DEFAULT_REVIEW_LIMIT,
    cursor: v.cursor,
    endpoints: v.endpoints,
    json: v.json,
  };
}

/** What one subcommand prints, and its exit code. */
interface Outcome {
  code: number;
  json: Record<string, unknown>;
  text: string;
}

/** The corrected object of `--file`, or the outcome of a file that cannot be read or is not JSON (exit 2). */
async function readCorrected(path: string): Promise<{ value: unknown } | { failure: Outcome }> {
  const fail = (code: 'file_unreadable' | 'not_json', message: string) => ({
    failure: { code: REVIEW_EXIT.usage, json: { ok: false, error: { kind: 'input', code, message } }, text: `ratelane review resolve: ${message}\n` },
  });
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return fail('file_unreadable', `cannot read --file ${path} (${typeof code === 'string' ? code : 'error'}); nothing was written`);
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    // The parser's message may quote the file: keep only where it stopped.
    const where = /position \d+(?: \(line \d+ column \d+\))?/.exec(error instanceof Error ? error.message : '')?.[0];
    return fail('not_json', `--file ${path} is not JSON${where ? ` (at ${where})` : ''}; nothing was written`);
  }
}

/** One job of a list, as text (no document text: ids, versions, reasons, field paths, rule names). */
function describeItem(item: ReviewItem): string {
  const lines = [
    `  ${item.jobId}  since ${item.at}  ${item.reason}${item.parseStatus && item.parseStatus !== item.reason ? ` (${item.parseStatus})` : ''}`,
    `      schema ${item.schemaVersion ?? '?'}, prompt ${item.promptVersion ?? '?'}, attempt ${item.attempt}, deferrals ${item.deferrals}${item.tenant ? `, tenant ${item.tenant}` : ''}`,
    `      source hash (idempotency key) ${item.idempotencyKey}`,
  ];
  if (item.detail) lines.push(`      detail: ${item.detail}`);
  if (item.failingFields.length > 0) lines.push(`      failing fields: ${item.failingFields.join(', ')}`);
  if (item.failingRules.length > 0) lines.push(`      failing rules: ${item.failingRules.join(', ')}`);
  return lines.join('\n');
}

/** A list as text: the jobs, then the summary line. */
function formatList(list: ReviewList): string {
  const lines = list.reviews.map(describeItem);
  const more = list.nextCursor ? `; more may wait: go on with --cursor ${list.nextCursor}` : '';
  lines.push(`lane ${list.lane} (${list.region}): ${list.reviews.length} job(s) in needs_review (${list.candidates} looked at)${more}`);
  if (list.reviews.length > 0) lines.push(`resolve one with: ratelane review resolve <jobId> --lane ${list.lane} --file <corrected.json>`);
  return `${lines.join('\n')}\n`;
}

/** A resolution as text. */
function formatResolution(resolved: ReviewResolution): string {
  return `job ${resolved.jobId} resolved in lane ${resolved.lane}: committed at ${resolved.committedAt} (${resolved.schemaVersion}), reviewer ${resolved.reviewer.name} (${resolved.reviewer.source}); the job is committed\n`;
}

/** The exit code of a review error. */
function exitOf(code: ReviewErrorCode): number {
  switch (code) {
    case 'unknown_lane':
    case 'invalid_reviewer':
    case 'bad_limit':
    case 'bad_cursor':
      return REVIEW_EXIT.usage;
    case 'store_unavailable':
    case 'ledger_not_recorded':
      return REVIEW_EXIT.failed;
    default:
      return REVIEW_EXIT.refused;
  }
}

/** A review error as the command's outcome: a message (and the problems), or one JSON object. */
function failureOf(error: ReviewError, subcommand: string): Outcome {
  const json: Record<string, unknown> = { ok: false, error: { kind: error.kind, code: error.code, message: error.message } };
  const body = json.error as Record<string, unknown>;
  if (error.state !== undefined) body.state = error.state;
  let text = `ratelane review ${subcommand}: ${error.message}\n`;
  if (error instanceof ReviewValidationError) {
    Object.assign(body, {
      parseStatus: error.parseStatus,
      problems: error.problems,
      failingFields: error.failingFields,
      failingRules: error.failingRules,
    });
    text = `ratelane review ${subcommand}: the corrected object of job ${error.jobId} fails ${error.schemaVersion} (${error.parseStatus}); nothing was written\n${error.problems
      .map((p) => `  ${p}\n`)
      .join('')}`;
  }
  return { code: exitOf(error.code), json, text };
}

async function runList(lane: ReviewLane, options: ReviewOptions): Promise<Outcome> {
  const list = await listReviews(lane, { limit: options.limit, cursor: options.cursor });
  return { code: REVIEW_EXIT.ok, json: { ok: true, ...list }, text: formatList(list) };
}

async function runResolve(
  lane: ReviewLane,
  options: ReviewOptions,
  corrected: unknown,
  endpoints: ServiceEndpoints | undefined,
  wiring: ReviewWiring,
): Promise<Outcome> {
  const reviewer = await reviewerOf({
    given: options.reviewer,
    region: lane.lane.region,
    local: endpoints !== undefined,
    callerArn: wiring.callerArn,
    osUser: wiring.osUser,
  });
  const resolved = await resolveReview(lane, { jobId: options.jobId ?? '', corrected, reviewer });
  return { code: REVIEW_EXIT.ok, json: { ok: true, ...resolved }, text: formatResolution(resolved) };
}

/** Runs one subcommand; review errors become messages (or `{ ok: false, error }` with `--json`). */
async function runReview(options: ReviewOptions, io: CommandIo, wiring: ReviewWiring): Promise<number> {
  const env = io.env ?? process.env;
  const endpoints = endpointsFrom(options.endpoints, env);
  // The file first: a file that is not JSON stops here, before any read of the lane.
  const corrected = options.subcommand === 'resolve' ? await readCorrected(options.file ?? '') : { value: undefined };
  if ('failure' in corrected) return report(corrected.failure, options, io);
  let lane: ReviewLane | undefined;
  let outcome: Outcome;
  try {
    lane = openReviewLane({
      lanes: wiring.lanes ?? configuredLanes({ env }).lanes,
      lane: options.lane,
      endpoints,
      ...(wiring.dynamodbFor ? { dynamodbFor: wiring.dynamodbFor } : {}),
      ...(wiring.now ? { now: wiring.now } : {}),
    });
    outcome = options.subcommand === 'list' ? await runList(lane, options) : await runResolve(lane, options, corrected.value, endpoints, wiring);
  } catch (error) {
    if (error instanceof ReviewError) outcome = failureOf(error, options.subcommand);
    else {
      const message = `unexpected ${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
      outcome = {
        code: REVIEW_EXIT.failed,
        json: { ok: false, error: { kind: 'internal', message } },
        text: `ratelane review ${options.subcommand}: ${message}\n`,
      };
    }
  } finally {
    lane?.close();
  }
  return report(outcome, options, io);
}

/** Writes the outcome (one JSON object on stdout with `--json`; else text, errors on stderr); returns its exit code. */
function report(outcome: Outcome, options: ReviewOptions, io: CommandIo): number {
  if (options.json) io.stdout.write(`${JSON.stringify(outcome.json)}\n`);
  else (outcome.code === REVIEW_EXIT.ok ? io.stdout : io.stderr).write(outcome.text);
  return outcome.code;
}

/** `ratelane review` with its wiring (lanes, clients, clock, identity); {@link reviewCommand} is the default one. */
export function createReviewCommand(wiring: ReviewWiring = {}): Command<ReviewOptions> {
  return {
    name: 'review',
    usage: REVIEW_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseReviewArgs,
    run: (options, io) => runReview(options, io, wiring),
  };
}

/** `ratelane review` on the configured lanes and real AWS clients. */
export const reviewCommand: Command<ReviewOptions> = createReviewCommand();
