/**
 * `ratelane batch`: operate a lane's batch lane from the command line.
 *
 * ```
 * ratelane batch submit --region eu --dir ./backfill [--file a.txt ...] [--json]
 * ratelane batch status <batchId> --region eu [--reconcile] [--json]
 * ratelane batch redrive <batchId> --region eu [--json]
 * ratelane batch cancel <batchId> --region eu [--json]
 * ```
 *
 * Local endpoints come from `--endpoints` or env `RATELANE_ENDPOINTS`, as for `ratelane submit`; the
 * provider key from the variable `--api-key-env` names, else `RATELANE_PROVIDER_KEY` (never printed).
 * Progress goes to stderr, a summary to stdout (`--json`: exactly one JSON object). Exit codes: 0 done;
 * 1 something could not be done (a send, a cancel, a store, an unknown batch); 2 bad usage or a rejected
 * document.
 */
import { batchPass } from '../lanes/batch/index.js';
import { cancelBatch } from '../lanes/batch/cancel.js';
import { reconcileBatch } from '../lanes/batch/reconcile.js';
import { redriveBatch } from '../lanes/batch/redrive.js';
import { BatchNotFoundError, batchStatus } from '../lanes/batch/status.js';
import { submitBatch } from '../lanes/batch/submit.js';
import type { DocumentInput } from '../intake/producer.js';
import { errorName } from '../platform/errors.js';
import { MANIFEST_ID_PATTERN } from '../store/manifest-model.js';
import { formatCancel, formatRedrive, formatStatus, formatSubmit } from './batch-format.js';
import { type BatchContext, type BatchWiring, type LaneFlags, openBatchContext, PROVIDER_KEY_VARIABLE } from './batch-wiring.js';
import { UsageError, type Command, type CommandIo } from './command.js';
import { booleanFlag, jsonFlag, parseFlags, repeatedFlag, stringFlag } from './flags.js';
import { filesInDir } from './submit.js';

export type { BatchWiring } from './batch-wiring.js';

/** Exit codes of `ratelane batch`. */
export const BATCH_EXIT = { ok: 0, failed: 1, usageOrRejected: 2 } as const;

/** The subcommands of `ratelane batch`. */
export const BATCH_SUBCOMMANDS = ['submit', 'status', 'redrive', 'cancel'] as const;
/** One of {@link BATCH_SUBCOMMANDS}. */
export type BatchSubcommand = (typeof BATCH_SUBCOMMANDS)[number];

/** Usage text of `ratelane batch`. */
export const BATCH_USAGE = `usage: ratelane batch submit --region <lane> [--dir <folder> ...] [--file <path> ...] [options]
       ratelane batch status <batchId> --region <lane> [--reconcile] [options]
       ratelane batch redrive <batchId> --region <lane> [options]
       ratelane batch cancel <batchId> --region <lane> [options]

  submit   check the documents as \`ratelane submit\` does, store them, record a batch in the lane's manifest
           and submit it to the provider's batch API in parts (a throttled part waits and is submitted later)
  status   the batch's state, items per state, provider jobs, unresolved items with their reason, and its
           outcome (committed / needs review / rejected / unresolved / waiting, every item counted once,
           items handed to the queue lane followed to what it made of them); read-only unless --reconcile
  redrive  hand every unresolved item whose provider job has ended to the lane's queue as the same job (same
           job id and idempotency key: commit-once keeps a result from being written twice); run twice, it
           sends nothing the second time
  cancel   stop the batch: open provider jobs are asked to stop, parts not yet submitted are cancelled; then
           one reconcile pass keeps what the stopped jobs answered (the rest unresolved, reason cancelled)

  --region             region lane name (us, eu, ...) or its AWS region
  --dir                submit: every regular file directly inside a folder, sorted by name (repeatable); a
                       file's source id is its name in the folder, never a local path
  --file               submit: a UTF-8 text file (repeatable)
  --tenant             submit: who the jobs belong to (e.g. a role's ARN): that principal (and the lane's
                       readers) reads them through the live API; part of each idempotency key
  --reconcile          status: run one reconcile pass first (submit waiting parts when due, poll open jobs,
                       read ended ones); the lane's scheduled reconciler does this in AWS
  --endpoints          local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --account            the lane's AWS account (its bucket is named after it); else env RATELANE_ACCOUNT; else the
                       account of your credentials. Not used with local endpoints.
  --api-key-env        the environment variable holding the provider key (default ${PROVIDER_KEY_VARIABLE});
                       needed by submit, cancel and status --reconcile on OpenAI-compatible lanes. Never printed.
  --provider-base-url  the provider's API base URL (default: the lane's; e.g. the local fake provider's)
  --bedrock-role-arn   Bedrock lanes: the batch inference service role (else env RATELANE_BATCH_SERVICE_ROLE_ARN)
  --json               print exactly one JSON object on stdout

Exit codes: 0 done; 1 something could not be done (a document store or provider call failed, an item could
not be sent, a job could not be cancelled, no such batch); 2 bad usage, or a document was rejected (submit:
the valid ones are still submitted).
`;

/** The options of one `ratelane batch`. */
export interface BatchOptions extends LaneFlags {
  subcommand: BatchSubcommand;
  /** The batch (status, redrive, cancel). */
  batchId: string | undefined;
  files: string[];
  dirs: string[];
  tenant: string | undefined;
  reconcile: boolean;
  json: boolean;
}

const BATCH_FLAGS = {
  region: stringFlag(),
  file: repeatedFlag(),
  dir: repeatedFlag(),
  tenant: stringFlag(),
  reconcile: booleanFlag(),
  endpoints: stringFlag(),
  account: stringFlag(),
  'api-key-env': stringFlag(),
  'provider-base-url': stringFlag(),
  'bedrock-role-arn': stringFlag(),
  json: jsonFlag(),
};

/** Parses `ratelane batch <subcommand> [<batchId>] [flags]` (pure). @throws {UsageError} */
export function parseBatchArgs(argv: readonly string[]): BatchOptions {
  const [first, ...rest] = argv;
  if (first === undefined) throw new UsageError(`give a subcommand: ${BATCH_SUBCOMMANDS.join(', ')}`);
  if (first === '--help' || first === '-h') throw UsageError.help();
  if (!(BATCH_SUBCOMMANDS as readonly string[]).includes(first))
    throw new UsageError(`unknown batch subcommand "${first}"; known: ${BATCH_SUBCOMMANDS.join(', ')}`);
  const subcommand = first as BatchSubcommand;
  let batchId: string | undefined;
  if (subcommand !== 'submit' && rest[0] !== undefined && !rest[0].startsWith('-')) batchId = rest.shift();
  const v = parseFlags(rest, BATCH_FLAGS);
  if (subcommand !== 'submit' && batchId === undefined) throw new UsageError(`give the batch id: ratelane batch ${subcommand} <batchId> --region <lane>`);
  if (batchId !== undefined && !MANIFEST_ID_PATTERN.test(batchId)) throw new UsageError(`"${batchId}" is not a batch id`);
  if (!v.region) throw new UsageError('--region is required (a lane name such as us or eu)');
  if (subcommand === 'submit' && v.file.length + v.dir.length === 0) throw new UsageError('nothing to submit: give --dir or --file');
  if (subcommand !== 'submit' && v.file.length + v.dir.length > 0) throw new UsageError('--dir and --file are for batch submit');
  if (subcommand !== 'status' && v.reconcile) throw new UsageError('--reconcile is for batch status');
  if (v.account !== undefined && !/^\d{12}$/.test(v.account)) throw new UsageError(`--account "${v.account}" is not a 12-digit AWS account id`);
  const keyEnv = v['api-key-env'];
  if (keyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(keyEnv)) throw new UsageError(`--api-key-env "${keyEnv}" is not an environment variable name`);
  const baseUrl = v['provider-base-url'];
  if (baseUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(baseUrl)) throw new UsageError('--provider-base-url must be an http:// or https:// URL');
  return {
    subcommand,
    batchId,
    region: v.region,
    files: v.file,
    dirs: v.dir,
    tenant: v.tenant,
    reconcile: v.reconcile,
    endpoints: v.endpoints,
    account: v.account,
    apiKeyEnv: keyEnv,
    providerBaseUrl: baseUrl,
    bedrockRoleArn: v['bedrock-role-arn'],
    json: v.json,
  };
}

/** The documents `--file` and `--dir` name: files first, then each folder's files. @throws {UsageError} */
async function documentsFrom(options: BatchOptions, io: CommandIo): Promise<Omit<DocumentInput, 'region'>[]> {
  const tenant = options.tenant !== undefined ? { tenant: options.tenant } : {};
  const documents: Omit<DocumentInput, 'region'>[] = options.files.map((path) => ({ path, ...tenant }));
  for (const dir of options.dirs) {
    const found = await filesInDir(dir);
    if (found.skipped.length > 0) io.stderr.write(`ratelane batch: skipped in ${dir}: ${found.skipped.map((s) => `${s.path} (${s.why})`).join(', ')}\n`);
    if (found.files.length === 0) throw new UsageError(`folder ${dir} has no files`);
    documents.push(...found.files.map((f) => ({ path: f.path, sourceId: f.sourceId, ...tenant })));
  }
  return documents;
}

/** One subcommand's result: what stdout gets, and the exit code. */
interface Outcome {
  code: number;
  json: Record<string, unknown>;
  text: string;
}

async function runSubmit(options: BatchOptions, ctx: BatchContext, io: CommandIo): Promise<Outcome> {
  const documents = await documentsFrom(options, io);
  const provider = ctx.provider();
  io.stderr.write(`ratelane batch submit: ${documents.length} document(s) to lane ${ctx.lane.name}\n`);
  const report = await submitBatch(documents, {
    lane: ctx.lane,
    s3: ctx.clients.s3,
    manifest: ctx.manifest,
    provider,
    now: ctx.now,
    onProgress: (event) => io.stderr.write(`  ${event.type}: ${event.detail}\n`),
  });
  const rejected = report.rejected.length > 0 || report.batchId === null;
  return {
    code: rejected ? BATCH_EXIT.usageOrRejected : BATCH_EXIT.ok,
    json: { ok: !rejected, lane: ctx.lane.name, ...report },
    text: formatSubmit(report, ctx.lane.name),
  };
}

async function runStatus(batchId: string, options: BatchOptions, ctx: BatchContext, io: CommandIo): Promise<Outcome> {
  if (options.reconcile) {
    const deps = { ...(await reconcileDeps(ctx)), s3: ctx.clients.s3 };
    io.stderr.write(`ratelane batch status: reconciling ${batchId}\n`);
    const pass = await batchPass(batchId, deps);
    io.stderr.write(`  moved ${JSON.stringify(pass.moved)}, ${pass.jobsOpen} job(s) open, ${pass.jobsEnded} ended\n`);
  }
  const report = await batchStatus(batchId, { manifest: ctx.manifest, results: ctx.results, ledger: ctx.ledger, now: ctx.now });
  return { code: BATCH_EXIT.ok, json: { ok: true, ...report }, text: formatStatus(report) };
}

async function runRedrive(batchId: string, ctx: BatchContext, io: CommandIo): Promise<Outcome> {
  const queueUrl = await ctx.queueUrl();
  io.stderr.write(`ratelane batch redrive: handing the unresolved items of ${batchId} to ${ctx.lane.resources.queueName}\n`);
  const report = await redriveBatch(batchId, { lane: ctx.lane, manifest: ctx.manifest, sqs: ctx.clients.sqs, queueUrl, now: ctx.now });
  const ok = report.failed.length === 0;
  return { code: ok ? BATCH_EXIT.ok : BATCH_EXIT.failed, json: { ok, lane: ctx.lane.name, ...report }, text: formatRedrive(report, ctx.lane.name) };
}

async function runCancel(batchId: string, ctx: BatchContext, io: CommandIo): Promise<Outcome> {
  const provider = ctx.provider();
  io.stderr.write(`ratelane batch cancel: cancelling ${batchId}\n`);
  const report = await cancelBatch(batchId, { lane: ctx.lane, manifest: ctx.manifest, provider, now: ctx.now });
  let state = report.state;
  let reconcileError: string | undefined;
  if (report.state === 'cancelling') {
    io.stderr.write('  one reconcile pass: reading what ended\n');
    try {
      state = (await reconcileBatch(batchId, await reconcileDeps(ctx))).state;
    } catch (error) {
      reconcileError = errorName(error) ?? 'Error';
    }
  }
  const result = { ...report, state, ...(reconcileError ? { reconcileError } : {}) };
  const ok = report.failed.length === 0 && reconcileError === undefined;
  return { code: ok ? BATCH_EXIT.ok : BATCH_EXIT.failed, json: { ok, lane: ctx.lane.name, ...result }, text: formatCancel(result, ctx.lane.name) };
}

async function reconcileDeps(ctx: BatchContext) {
  const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
  return {
    lane: ctx.lane,
    manifest: ctx.manifest,
    provider: ctx.provider(),
    results: ctx.results,
    ledger: ctx.ledger,
    cancellations: ctx.cancellations,
    sqs: ctx.clients.sqs,
    queueUrl: await ctx.queueUrl(),
    logger: quiet,
    now: ctx.now,
  };
}

/** Runs one subcommand; errors other than usage errors become messages (or `{ ok: false, error }` with `--json`). */
async function runBatch(options: BatchOptions, io: CommandIo, wiring: BatchWiring): Promise<number> {
  let ctx: BatchContext | undefined;
  try {
    ctx = await openBatchContext(options, io, wiring);
    const where = ctx.endpoints ? `local endpoints ${ctx.endpoints.sqs}` : 'AWS';
    io.stderr.write(`ratelane batch ${options.subcommand}: lane ${ctx.lane.name} in ${ctx.lane.region} (${where})\n`);
    const batchId = options.batchId as string;
    const outcome =
      options.subcommand === 'submit'
        ? await runSubmit(options, ctx, io)
        : options.subcommand === 'status'
          ? await runStatus(batchId, options, ctx, io)
          : options.subcommand === 'redrive'
            ? await runRedrive(batchId, ctx, io)
            : await runCancel(batchId, ctx, io);
    io.stdout.write(options.json ? `${JSON.stringify({ command: options.subcommand, ...outcome.json })}\n` : outcome.text);
    return outcome.code;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const notFound = error instanceof BatchNotFoundError;
    const message = notFound
      ? `no batch ${error.batchId} in lane ${ctx?.lane.name ?? options.region}`
      : `${errorName(error) ?? 'Error'}: ${error instanceof Error ? error.message : String(error)}`;
    const kind = notFound ? 'not_found' : 'failed';
    if (options.json) io.stdout.write(`${JSON.stringify({ command: options.subcommand, ok: false, error: { kind, message } })}\n`);
    else io.stderr.write(`ratelane batch ${options.subcommand}: ${message}\n`);
    return BATCH_EXIT.failed;
  } finally {
    ctx?.destroy();
  }
}

/** `ratelane batch` with its wiring (lanes, clock, clients, batch client); {@link batchCommand} is the default one. */
export function createBatchCommand(wiring: BatchWiring = {}): Command<BatchOptions> {
  return {
    name: 'batch',
    usage: BATCH_USAGE,
    helpTo: 'stdout',
    jsonUsageErrors: true,
    parse: parseBatchArgs,
    run: (options, io) => runBatch(options, io, wiring),
  };
}

/** `ratelane batch` on the project's lanes and real clients. */
export const batchCommand: Command<BatchOptions> = createBatchCommand();
