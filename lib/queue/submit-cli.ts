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
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_LANES, type LaneSet } from '../config/lanes.js';
import { createAwsClients, type AwsClients, type ServiceEndpoints } from '../aws/clients.js';
import {
  SubmissionRejectedError,
  submitDocuments,
  type DocumentInput,
  type LaneClients,
  type SubmitDeps,
  type SubmitProgress,
  type SubmitResult,
} from './producer.js';

/** Where a command writes, and its environment. */
export interface CommandIo {
  stdout: { write(chunk: string): unknown };
  stderr: { write(chunk: string): unknown };
  /** Environment (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Wiring the CLI entry point (or a test) may pass in; all optional. */
export interface SubmitCommandOptions {
  /** Lane set (default {@link DEFAULT_LANES}). */
  lanes?: LaneSet;
  /** Known (schemaVersion, promptVersion) pairs: wire the extraction schema registry here. */
  isKnownVersion?: SubmitDeps['isKnownVersion'];
  defaultVersions?: SubmitDeps['defaultVersions'];
  now?: () => Date;
  sleep?: SubmitDeps['sleep'];
  /** Overrides client creation (default: {@link createAwsClients} per region, with the endpoints). */
  clientsFor?: (region: string, endpoints: ServiceEndpoints | undefined) => LaneClients;
}

/**
 * Exit codes of `ratelane submit`. When some documents were rejected and some valid ones also
 * failed to send, `notAllSent` wins: retrying may help the failed ones.
 */
export const SUBMIT_EXIT = { ok: 0, notAllSent: 1, rejected: 2 } as const;

/** Usage text of `ratelane submit`. */
export const SUBMIT_USAGE = `usage: ratelane submit --region <lane> [--file <path> ...] [--text <text> ...] [--dir <folder> ...]
                       [--source-id <id>] [--deadline <ISO 8601>] [--schema-version <v>] [--prompt-version <v>]
                       [--endpoints '<json>'] [--all-or-nothing] [--json]

  --region          region lane name (us, eu, ...) or its AWS region
  --file            a UTF-8 text file (repeatable)
  --text            document text (repeatable)
  --dir             every regular file directly inside a folder, sorted by name (repeatable)
  --source-id       the document's stable id (only with exactly one document)
  --deadline        process before this instant
  --endpoints       local endpoints as JSON {"sqs","s3","dynamodb"}; else env RATELANE_ENDPOINTS; else real AWS
  --all-or-nothing  if any document is invalid, send none (default: send the valid ones, report the rest)
  --json            print one JSON object on stdout

Invalid documents (unknown region, empty, too large, ...) are never sent and are listed with their reason.
Exit codes: 0 all sent; 1 some valid document could not be sent; 2 bad usage or some document rejected.`;

/** Raised for bad command-line usage; the message is meant for the user. */
export class SubmitUsageError extends Error {
  override name = 'SubmitUsageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const EndpointsSchema = z
  .object({ sqs: z.string().url(), s3: z.string().url(), dynamodb: z.string().url().optional() })
  .strict();

/** Parses endpoints JSON (`--endpoints` or `RATELANE_ENDPOINTS`); throws {@link SubmitUsageError}. */
export function parseEndpoints(raw: string, origin: string): ServiceEndpoints {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new SubmitUsageError(`${origin} is not valid JSON; expected {"sqs":"http://...","s3":"http://..."}`, { cause: error });
  }
  const parsed = EndpointsSchema.safeParse(value);
  if (!parsed.success) {
    throw new SubmitUsageError(`${origin}: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
  }
  // The producer never touches DynamoDB; the clients factory still wants an endpoint for it.
  return { sqs: parsed.data.sqs, s3: parsed.data.s3, dynamodb: parsed.data.dynamodb ?? parsed.data.sqs };
}

interface ParsedCommand {
  region: string;
  files: string[];
  texts: string[];
  dirs: string[];
  sourceId?: string;
  deadline?: string;
  schemaVersion?: string;
  promptVersion?: string;
  endpoints?: string;
  allOrNothing: boolean;
  json: boolean;
  help: boolean;
}

function parseCommand(argv: string[]): ParsedCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        region: { type: 'string' },
        file: { type: 'string', multiple: true },
        text: { type: 'string', multiple: true },
        dir: { type: 'string', multiple: true },
        'source-id': { type: 'string' },
        deadline: { type: 'string' },
        'schema-version': { type: 'string' },
        'prompt-version': { type: 'string' },
        endpoints: { type: 'string' },
        'all-or-nothing': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    throw new SubmitUsageError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const parsed: ParsedCommand = {
    region: values.region ?? '',
    files: values.file ?? [],
    texts: values.text ?? [],
    dirs: values.dir ?? [],
    allOrNothing: values['all-or-nothing'] ?? false,
    json: values.json ?? false,
    help: values.help ?? false,
  };
  if (values['source-id'] !== undefined) parsed.sourceId = values['source-id'];
  if (values.deadline !== undefined) parsed.deadline = values.deadline;
  if (values['schema-version'] !== undefined) parsed.schemaVersion = values['schema-version'];
  if (values['prompt-version'] !== undefined) parsed.promptVersion = values['prompt-version'];
  if (values.endpoints !== undefined) parsed.endpoints = values.endpoints;
  if (parsed.help) return parsed;
  if (!parsed.region) throw new SubmitUsageError('--region is required (a lane name such as us or eu)');
  if (parsed.deadline !== undefined && Number.isNaN(Date.parse(parsed.deadline))) {
    throw new SubmitUsageError(`--deadline "${parsed.deadline}" is not a date; use ISO 8601, e.g. 2030-01-31T17:00:00Z`);
  }
  if (parsed.files.length + parsed.texts.length + parsed.dirs.length === 0) {
    throw new SubmitUsageError('nothing to submit: give --file, --text or --dir');
  }
  return parsed;
}

async function filesInDir(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new SubmitUsageError(`cannot read folder ${dir} (${typeof code === 'string' ? code : 'error'})`, { cause: error });
  }
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .map((name) => join(dir, name));
}

async function documentsFrom(cmd: ParsedCommand): Promise<DocumentInput[]> {
  const paths = [...cmd.files];
  for (const dir of cmd.dirs) {
    const found = await filesInDir(dir);
    if (found.length === 0) throw new SubmitUsageError(`folder ${dir} has no files`);
    paths.push(...found);
  }
  const common = {
    region: cmd.region,
    ...(cmd.deadline !== undefined ? { deadline: cmd.deadline } : {}),
    ...(cmd.schemaVersion !== undefined ? { schemaVersion: cmd.schemaVersion } : {}),
    ...(cmd.promptVersion !== undefined ? { promptVersion: cmd.promptVersion } : {}),
  };
  const documents: DocumentInput[] = [...paths.map((path) => ({ ...common, path })), ...cmd.texts.map((text) => ({ ...common, text }))];
  if (cmd.sourceId !== undefined) {
    if (documents.length !== 1) throw new SubmitUsageError(`--source-id names one document, but ${documents.length} were given`);
    documents[0]!.sourceId = cmd.sourceId;
  }
  return documents;
}

function describeProgress(event: SubmitProgress): string {
  switch (event.type) {
    case 'validated':
      return `validated ${event.total} document(s)${Object.keys(event.lanes).length ? `: ${Object.entries(event.lanes).map(([lane, n]) => `${lane} ${n}`).join(', ')}` : ''}${event.rejected ? `; ${event.rejected} rejected, not sent` : ''}`;
    case 'stored':
      return `[${event.region}] stored ${event.stored} document(s)${event.failed ? `, ${event.failed} could not be stored` : ''}`;
    case 'batch':
      return `[${event.region}] batch ${event.batch} try ${event.attempt}: ${event.threw ? `call failed (${event.threw})` : `${event.sent} sent, ${event.failed} failed`}${event.retrying ? `, ${event.retrying} to retry` : ''}`;
    case 'retry':
      return `[${event.region}] batch ${event.batch}: retrying ${event.entries} in ${event.delayMs} ms (${event.reason})`;
  }
}

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
    lines.push(`${result.rejected} document(s) rejected and not sent; ${result.sent} of ${result.total} sent anyway (--all-or-nothing sends none when any is invalid)`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Runs `ratelane submit` with the arguments after `submit`.
 *
 * @returns the exit code ({@link SUBMIT_EXIT}); errors become messages (or `{ ok: false, error }` with `--json`), never throws
 */
export async function runSubmitCommand(argv: string[], io: CommandIo, options: SubmitCommandOptions = {}): Promise<number> {
  const env = io.env ?? process.env;
  let json = argv.includes('--json');
  const fail = (code: number, error: { kind: string; message: string; items?: unknown }): number => {
    if (json) io.stdout.write(`${JSON.stringify({ ok: false, error })}\n`);
    else io.stderr.write(`ratelane submit: ${error.message}\n`);
    return code;
  };

  let cmd: ParsedCommand;
  let documents: DocumentInput[];
  let endpoints: ServiceEndpoints | undefined;
  try {
    cmd = parseCommand(argv);
    json = cmd.json;
    if (cmd.help) {
      io.stdout.write(`${SUBMIT_USAGE}\n`);
      return SUBMIT_EXIT.ok;
    }
    const rawEndpoints = cmd.endpoints ?? env.RATELANE_ENDPOINTS;
    endpoints = rawEndpoints ? parseEndpoints(rawEndpoints, cmd.endpoints !== undefined ? '--endpoints' : 'RATELANE_ENDPOINTS') : undefined;
    documents = await documentsFrom(cmd);
  } catch (error) {
    if (error instanceof SubmitUsageError) {
      const code = fail(SUBMIT_EXIT.rejected, { kind: 'usage', message: error.message });
      if (!json) io.stderr.write(`\n${SUBMIT_USAGE}\n`);
      return code;
    }
    throw error;
  }

  const clients = new Map<string, AwsClients | LaneClients>();
  const clientsFor = (region: string): LaneClients => {
    let c = clients.get(region);
    if (!c) {
      c = options.clientsFor ? options.clientsFor(region, endpoints) : createAwsClients(region, endpoints);
      clients.set(region, c);
    }
    return c;
  };
  io.stderr.write(`ratelane submit: ${documents.length} document(s) to lane ${cmd.region} (${endpoints ? `local endpoints ${endpoints.sqs}` : 'AWS'})\n`);
  try {
    const result = await submitDocuments(
      { documents },
      {
        lanes: options.lanes ?? DEFAULT_LANES,
        clientsFor,
        now: options.now ?? (() => new Date()),
        ...(options.isKnownVersion ? { isKnownVersion: options.isKnownVersion } : {}),
        ...(options.defaultVersions ? { defaultVersions: options.defaultVersions } : {}),
        ...(options.sleep ? { sleep: options.sleep } : {}),
        atomic: cmd.allOrNothing,
        onProgress: (event) => io.stderr.write(`  ${describeProgress(event)}\n`),
      },
    );
    if (json) io.stdout.write(`${JSON.stringify({ ok: result.failed === 0 && result.rejected === 0, ...result })}\n`);
    else io.stdout.write(summarize(result));
    if (result.failed > 0) return SUBMIT_EXIT.notAllSent;
    return result.rejected > 0 ? SUBMIT_EXIT.rejected : SUBMIT_EXIT.ok;
  } catch (error) {
    if (error instanceof SubmissionRejectedError) {
      if (!json) {
        io.stderr.write(`ratelane submit: rejected ${error.items.length} of ${error.total} document(s); nothing was sent\n`);
        for (const item of error.items) {
          io.stderr.write(`  #${item.index}${item.sourceId ? ` ${item.sourceId}` : ''}: ${item.reason}: ${item.detail}\n`);
        }
        return SUBMIT_EXIT.rejected;
      }
      return fail(SUBMIT_EXIT.rejected, { kind: 'rejected', message: `rejected ${error.items.length} of ${error.total} document(s); nothing was sent`, items: error.items });
    }
    const name = error instanceof Error ? error.name : 'Error';
    return fail(SUBMIT_EXIT.notAllSent, { kind: 'internal', message: `unexpected ${name}: ${error instanceof Error ? error.message : String(error)}` });
  } finally {
    for (const c of clients.values()) {
      if ('destroy' in c && typeof c.destroy === 'function') c.destroy();
    }
  }
}
