/**
 * `ratelane submit`: put documents on a region lane from the command line.
 *
 * ```
 * ratelane submit --region us [--file a.txt ...] [--text "..."] [--dir folder] [--source-id X]
 *                 [--deadline ISO] [--schema-version invoice@1] [--prompt-version invoice-extract@1]
 *                 [--endpoints '{"sqs":"http://127.0.0.1:4566","s3":"http://127.0.0.1:4566"}'] [--all-or-nothing] [--json]
 * ```
 *
 * Local endpoints come from `--endpoints` or env `RATELANE_ENDPOINTS` (JSON `{sqs, s3, dynamodb?}`);
 * without either it talks to real AWS with the default credential chain. Progress goes to stderr, the
 * summary to stdout (`--json`: exactly one JSON object). Invalid documents are never sent; by default
 * the valid ones still are (`--all-or-nothing`: one invalid document stops the whole submission).
 * Exit codes: 0 all sent; 1 some valid document could not be sent; 2 bad usage, or some document
 * was rejected (the others were sent unless `--all-or-nothing`).
 */
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceEndpoints } from '../platform/clients.js';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { configuredLanes } from '../config/file.js';
import { type LaneConfig, laneInAccount, type LaneSet } from '../config/lanes.js';
import { PRIORITIES, type Priority } from '../contract/job.js';
import { decodeText } from '../contract/text.js';
import { RatelaneClient } from '../client/client.js';
import { SubmissionRejectedError, type DocumentInput, type SubmitDeps, type SubmitProgress, type SubmitResult } from '../intake/producer.js';
import { errorName } from '../platform/errors.js';
import { UsageError, type Command, type CommandIo } from './command.js';
import { booleanFlag, endpointsFrom, jsonFlag, parseFlags, repeatedFlag, stringFlag } from './flags.js';

/** Wiring a test (or another entry point) may pass in; all optional. */
export interface SubmitWiring {
  /** Lane set (default: the lane config file's, `configuredLanes`). */
  lanes?: LaneSet;
  now?: () => Date;
  sleep?: SubmitDeps['sleep'];
  /** Overrides how the caller's account is found (default: STS `GetCallerIdentity`). */
  callerAccount?: (region: string | undefined) => Promise<string>;
}

/**
 * Exit codes of `ratelane submit`. When some documents were rejected and some valid ones also
 * failed to send, `notAllSent` wins: retrying may help the failed ones.
 */
export const SUBMIT_EXIT = { ok: 0, notAllSent: 1, rejected: 2 } as const;

/** Usage text of `ratelane submit`. */
export const SUBMIT_USAGE = `usage: ratelane submit --region <lane> [--file <path> ...] [--text <text> ...] [--dir <folder> ...]
                       [--source-id <id>] [--deadline <ISO 8601>] [--schema-version <v>] [--prompt-version <v>]
                       [--tenant <principal ARN or name>] [--priority urgent|bulk] [--account <id>] [--endpoints '<json>'] [--all-or-nothing] [--json]

  --region          region lane name (us, eu, ...) or its AWS region
  --file            a UTF-8 text file (repeatable)
  --text            document text (repeatable); it must be UTF-8 (text holding U+FFFD or a lone surrogate is
                    refused: the shell's bytes were not UTF-8; give such a text as a file)
  --dir             every regular file directly inside a folder, sorted by name (repeatable); hidden files,
                    symlinks and subfolders are skipped and listed. A file's source id is its path in the
                    folder (with --file: its name), never a local path
  --source-id       the document's stable id (only with exactly one document)
  --deadline        process before this instant
  --tenant          who the jobs belong to (e.g. your role's ARN, arn:aws:iam::<account>:role/<name>): that
                    principal (and the lane's readers) reads them through the live API; part of the key.
                    The lane must grant your role that tenant (its producers config), else the consumer
                    rejects the jobs (tenant_not_allowed)
  --priority        urgent or bulk (the default): when the lane's quota binds, urgent jobs start first by
                    the lane's class weights. urgent needs a grant in the lane's producers config, else the
                    consumer rejects the jobs (priority_not_allowed)
  --account         the lane's AWS account (its bucket is named after it); else env RATELANE_ACCOUNT; else the
                    account of your credentials (STS GetCallerIdentity). Not used with local endpoints.
  --endpoints       local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --all-or-nothing  if any document is invalid, send none (default: send the valid ones, report the rest)
  --json            print one JSON object on stdout

Invalid documents (unknown region, not UTF-8 text, empty, too large, ...) are never sent and are listed with their reason.
Exit codes: 0 all sent; 1 some valid document could not be sent; 2 bad usage or some document rejected.
`;

/** The options of one `ratelane submit`. */
export interface SubmitOptions {
  region: string;
  files: string[];
  texts: string[];
  dirs: string[];
  sourceId: string | undefined;
  deadline: string | undefined;
  tenant: string | undefined;
  priority: Priority | undefined;
  schemaVersion: string | undefined;
  promptVersion: string | undefined;
  /** `--endpoints` as given (parsed in `run`, where `RATELANE_ENDPOINTS` is the fallback). */
  endpoints: string | undefined;
  /** `--account` as given (in `run`, `RATELANE_ACCOUNT` then STS are the fallbacks). */
  account: string | undefined;
  allOrNothing: boolean;
  json: boolean;
}

/** The flags of `ratelane submit`. */
const SUBMIT_FLAGS = {
  region: stringFlag(),
  file: repeatedFlag(),
  text: repeatedFlag(),
  dir: repeatedFlag(),
  'source-id': stringFlag(),
  deadline: stringFlag(),
  tenant: stringFlag(),
  priority: stringFlag(),
  'schema-version': stringFlag(),
  'prompt-version': stringFlag(),
  endpoints: stringFlag(),
  account: stringFlag(),
  'all-or-nothing': booleanFlag(),
  json: jsonFlag(),
};

/** `--priority` checked: one of {@link PRIORITIES}, or absent. @throws {UsageError} */
function priorityFlag(value: string | undefined): Priority | undefined {
  if (value === undefined) return undefined;
  const found = PRIORITIES.find((p) => p === value);
  if (!found) throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}, got ${JSON.stringify(value)}`);
  return found;
}

/** Parses the flags of `ratelane submit` (pure). @throws {UsageError} */
function parseSubmitArgs(argv: readonly string[]): SubmitOptions {
  const v = parseFlags(argv, SUBMIT_FLAGS);
  const options: SubmitOptions = {
    region: v.region ?? '',
    files: v.file,
    texts: v.text,
    dirs: v.dir,
    sourceId: v['source-id'],
    deadline: v.deadline,
    tenant: v.tenant,
    priority: priorityFlag(v.priority),
    schemaVersion: v['schema-version'],
    promptVersion: v['prompt-version'],
    endpoints: v.endpoints,
    account: v.account,
    allOrNothing: v['all-or-nothing'],
    json: v.json,
  };
  if (!options.region) throw new UsageError('--region is required (a lane name such as us or eu)');
  if (options.account !== undefined && !/^\d{12}$/.test(options.account))
    throw new UsageError(`--account "${options.account}" is not a 12-digit AWS account id`);
  if (options.deadline !== undefined && Number.isNaN(Date.parse(options.deadline))) {
    throw new UsageError(`--deadline "${options.deadline}" is not a date; use ISO 8601, e.g. 2030-01-31T17:00:00Z`);
  }
  if (options.files.length + options.texts.length + options.dirs.length === 0) {
    throw new UsageError('nothing to submit: give --file, --text or --dir');
  }
  for (const [i, text] of options.texts.entries()) {
    // Node decodes the command line leniently: bytes that are not UTF-8 arrive as U+FFFD, and are refused here.
    const decoded = decodeText(text, { decodedLeniently: true });
    if (!decoded.ok) {
      throw new UsageError(`--text #${i + 1} is not UTF-8 text (${decoded.detail}); nothing was sent. Save the text as a UTF-8 file and give it with --file`);
    }
  }
  return options;
}

/** An entry of a folder that `--dir` did not submit, and why. */
export interface SkippedEntry {
  path: string;
  why: 'hidden' | 'subfolder' | 'symlink' | 'not a regular file';
}

/**
 * The regular, non-hidden files directly inside `dir`, sorted by name, each with its source id (its
 * path relative to the folder), and what was skipped and why. @throws {UsageError}
 */
export async function filesInDir(dir: string): Promise<{ files: { path: string; sourceId: string }[]; skipped: SkippedEntry[] }> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new UsageError(`cannot read folder ${dir} (${typeof code === 'string' ? code : 'error'})`, { cause: error });
  }
  const files: { path: string; sourceId: string }[] = [];
  const skipped: SkippedEntry[] = [];
  for (const entry of [...entries].sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.name.startsWith('.')) skipped.push({ path, why: 'hidden' });
    else if (entry.isSymbolicLink()) skipped.push({ path, why: 'symlink' });
    else if (entry.isDirectory()) skipped.push({ path, why: 'subfolder' });
    else if (!entry.isFile()) skipped.push({ path, why: 'not a regular file' });
    else files.push({ path, sourceId: entry.name });
  }
  return { files, skipped };
}

/**
 * The documents the flags name: files, then each folder's files, then texts; and what the folders'
 * listings skipped. A file's source id is its name (`--file`) or its path relative to its folder
 * (`--dir`), never a local path. @throws {UsageError}
 */
async function documentsFrom(options: SubmitOptions): Promise<{ documents: DocumentInput[]; skipped: SkippedEntry[] }> {
  const files: { path: string; sourceId?: string }[] = options.files.map((path) => ({ path }));
  const skipped: SkippedEntry[] = [];
  for (const dir of options.dirs) {
    const found = await filesInDir(dir);
    skipped.push(...found.skipped);
    if (found.files.length === 0)
      throw new UsageError(`folder ${dir} has no files${found.skipped.length ? ` (skipped ${found.skipped.length}: ${describeSkipped(found.skipped)})` : ''}`);
    files.push(...found.files);
  }
  const common = {
    region: options.region,
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    ...(options.priority !== undefined ? { priority: options.priority } : {}),
    ...(options.schemaVersion !== undefined ? { schemaVersion: options.schemaVersion } : {}),
    ...(options.promptVersion !== undefined ? { promptVersion: options.promptVersion } : {}),
  };
  const documents: DocumentInput[] = [
    ...files.map((f) => ({ ...common, path: f.path, ...(f.sourceId !== undefined ? { sourceId: f.sourceId } : {}) })),
    ...options.texts.map((text) => ({ ...common, text })),
  ];
  if (options.sourceId !== undefined) {
    if (documents.length !== 1) throw new UsageError(`--source-id names one document, but ${documents.length} were given`);
    documents[0]!.sourceId = options.sourceId;
  }
  return { documents, skipped };
}

/** `a (hidden), b (subfolder)`. */
function describeSkipped(skipped: readonly SkippedEntry[]): string {
  return skipped.map((s) => `${s.path} (${s.why})`).join(', ');
}

/** One progress line (stderr). */
function describeProgress(event: SubmitProgress): string {
  switch (event.type) {
    case 'validated':
      return `validated ${event.total} document(s)${
        Object.keys(event.lanes).length
          ? `: ${Object.entries(event.lanes)
              .map(([lane, n]) => `${lane} ${n}`)
              .join(', ')}`
          : ''
      }${event.rejected ? `; ${event.rejected} rejected, not sent` : ''}`;
    case 'stored':
      return `[${event.region}] stored ${event.stored} document(s)${event.failed ? `, ${event.failed} could not be stored` : ''}`;
    case 'batch':
      return `[${event.region}] batch ${event.batch} try ${event.attempt}: ${event.threw ? `call failed (${event.threw})` : `${event.sent} sent, ${event.failed} failed`}${event.retrying ? `, ${event.retrying} to retry` : ''}`;
    case 'retry':
      return `[${event.region}] batch ${event.batch}: retrying ${event.entries} in ${event.delayMs} ms (${event.reason})`;
  }
}

/** The readable summary (stdout without `--json`). */
function summarize(result: SubmitResult): string {
  const lines = [
    `submitted ${result.total} document(s): ${result.sent} sent, ${result.failed} failed${result.rejected ? `, ${result.rejected} rejected` : ''}`,
  ];
  for (const r of result.results) {
    if (r.status === 'sent') lines.push(`  sent    #${r.index} ${r.sourceId} -> ${r.region} job ${r.jobId}`);
    else if (r.status === 'rejected') lines.push(`  REJECTED #${r.index}${r.sourceId ? ` ${r.sourceId}` : ''}: ${r.error?.code}: ${r.error?.message}`);
    else {
      lines.push(
        `  FAILED  #${r.index} ${r.sourceId} -> ${r.region} job ${r.jobId}: ${r.error?.stage} ${r.error?.code}${r.error?.senderFault ? ' (sender fault)' : ''}${r.error?.message ? ` - ${r.error.message}` : ''}`,
      );
    }
  }
  if (result.rejected) {
    lines.push(
      `${result.rejected} document(s) rejected and not sent; ${result.sent} of ${result.total} sent anyway (--all-or-nothing sends none when any is invalid)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Reports a submission that failed as a whole; resolves the exit code. */
function reportFailure(error: unknown, options: SubmitOptions, io: CommandIo): number {
  const fail = (code: number, failure: { kind: string; message: string; items?: unknown }): number => {
    if (options.json) io.stdout.write(`${JSON.stringify({ ok: false, error: failure })}\n`);
    else io.stderr.write(`ratelane submit: ${failure.message}\n`);
    return code;
  };
  if (error instanceof SubmissionRejectedError) {
    const message = `rejected ${error.items.length} of ${error.total} document(s); nothing was sent`;
    if (options.json) return fail(SUBMIT_EXIT.rejected, { kind: 'rejected', message, items: error.items });
    io.stderr.write(`ratelane submit: ${message}\n`);
    for (const item of error.items) io.stderr.write(`  #${item.index}${item.sourceId ? ` ${item.sourceId}` : ''}: ${item.reason}: ${item.detail}\n`);
    return SUBMIT_EXIT.rejected;
  }
  return fail(SUBMIT_EXIT.notAllSent, {
    kind: 'internal',
    message: `unexpected ${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`,
  });
}

/**
 * The account the producer's lanes live in (each lane's bucket is named after it): `--account`,
 * `RATELANE_ACCOUNT`, or the caller's own account; `undefined` with local endpoints (the config's names).
 */
async function accountToSubmitTo(
  options: Pick<SubmitOptions, 'account' | 'region'>,
  io: CommandIo,
  endpoints: ServiceEndpoints | undefined,
  wiring: SubmitWiring,
  lanes: LaneSet,
): Promise<string | undefined> {
  if (endpoints) return undefined;
  const env = io.env ?? process.env;
  const account = options.account ?? env.RATELANE_ACCOUNT ?? (await (wiring.callerAccount ?? callerAccount)(lanes[options.region]?.region));
  if (!/^\d{12}$/.test(account)) throw new UsageError(`the lane's account "${account}" is not a 12-digit AWS account id (set --account or RATELANE_ACCOUNT)`);
  return account;
}

/**
 * The lanes as the producer addresses them: locally the config's names; in AWS each lane's bucket is
 * named after the lane's account (`laneInAccount`), from `--account`, `RATELANE_ACCOUNT`, or the
 * caller's own account.
 */
export async function lanesToSubmitTo(
  lanes: LaneSet,
  options: Pick<SubmitOptions, 'account' | 'region'>,
  io: CommandIo,
  endpoints: ServiceEndpoints | undefined,
  wiring: SubmitWiring,
): Promise<LaneSet> {
  const account = await accountToSubmitTo(options, io, endpoints, wiring, lanes);
  if (account === undefined) return lanes;
  return Object.fromEntries(Object.entries(lanes).map(([name, lane]) => [name, laneInAccount(lane, account)]));
}

/**
 * The one lane an operator's command names (`--lane`), as addressed (its bucket named after its account in
 * AWS): `erase`, `cancel`.
 *
 * @throws {UsageError} for a lane the config does not have
 */
export async function namedLane(
  options: { lane: string; account: string | undefined },
  io: CommandIo,
  endpoints: ServiceEndpoints | undefined,
  wiring: { lanes?: LaneSet | undefined; callerAccount?: SubmitWiring['callerAccount'] | undefined },
): Promise<LaneConfig> {
  const lanes = wiring.lanes ?? configuredLanes({ env: io.env ?? process.env }).lanes;
  const found = Object.hasOwn(lanes, options.lane) ? lanes[options.lane] : undefined;
  if (!found) {
    const known = Object.keys(lanes);
    throw new UsageError(`unknown lane "${options.lane}"; known lanes: ${known.length > 0 ? known.join(', ') : '(none)'}`);
  }
  const addressed = await lanesToSubmitTo({ [found.name]: found }, { region: found.name, account: options.account }, io, endpoints, {
    ...(wiring.callerAccount ? { callerAccount: wiring.callerAccount } : {}),
  });
  return addressed[found.name] as LaneConfig;
}

/** The account of the caller's credentials (STS `GetCallerIdentity`). */
async function callerAccount(region: string | undefined): Promise<string> {
  const sts = new STSClient({ ...(region ? { region } : {}), maxAttempts: 1 });
  try {
    const out = await sts.send(new GetCallerIdentityCommand({}));
    return out.Account ?? '';
  } finally {
    sts.destroy();
  }
}

/** Submits the documents the options name; errors become messages (or `{ ok: false, error }` with `--json`). */
async function runSubmit(options: SubmitOptions, io: CommandIo, wiring: SubmitWiring): Promise<number> {
  const endpoints = endpointsFrom(options.endpoints, io.env ?? process.env);
  const { documents, skipped } = await documentsFrom(options);
  if (skipped.length > 0)
    io.stderr.write(`ratelane submit: skipped ${skipped.length} folder entr${skipped.length === 1 ? 'y' : 'ies'}: ${describeSkipped(skipped)}\n`);
  io.stderr.write(`ratelane submit: ${documents.length} document(s) to lane ${options.region} (${endpoints ? `local endpoints ${endpoints.sqs}` : 'AWS'})\n`);
  const lanes = wiring.lanes ?? configuredLanes({ env: io.env ?? process.env }).lanes;
  let client: RatelaneClient | undefined;
  try {
    const account = await accountToSubmitTo(options, io, endpoints, wiring, lanes);
    client = new RatelaneClient({
      lanes,
      ...(endpoints ? { endpoints } : { account }),
      ...(wiring.now ? { now: wiring.now } : {}),
      ...(wiring.sleep ? { sleep: wiring.sleep } : {}),
    });
    const result = await client.submit(documents, {
      atomic: options.allOrNothing,
      onProgress: (event) => io.stderr.write(`  ${describeProgress(event)}\n`),
    });
    if (options.json) io.stdout.write(`${JSON.stringify({ ok: result.failed === 0 && result.rejected === 0, ...result, skipped })}\n`);
    else io.stdout.write(summarize(result));
    if (result.failed > 0) return SUBMIT_EXIT.notAllSent;
    return result.rejected > 0 ? SUBMIT_EXIT.rejected : SUBMIT_EXIT.ok;
  } catch (error) {
    return reportFailure(error, options, io);
  } finally {
    client?.close();
  }
}

/** `ratelane submit` with its wiring (lanes, clock, clients); {@link submitCommand} is the default one. */
export function createSubmitCommand(wiring: SubmitWiring = {}): Command<SubmitOptions> {
  return {
    name: 'submit',
    usage: SUBMIT_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseSubmitArgs,
    run: (options, io) => runSubmit(options, io, wiring),
  };
}

/** `ratelane submit` on the project's lanes and real clients. */
export const submitCommand: Command<SubmitOptions> = createSubmitCommand();
