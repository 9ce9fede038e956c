/**
 * The producer's intake: each document is checked — its fields, its lane, its versions, its deadline,
 * its job id, its content, the job contract and the message size — and either becomes a job ready to
 * store and send, or a {@link RejectedItem} with its reason. The checks on the caller's input are zod
 * schemas; the first failing check, in a fixed order, names the reason. Nothing here logs or quotes
 * document text: details name fields, sizes and limits.
 */
import { randomUUID } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { AWS_LIMITS, type LaneConfig, type LaneSet } from '../config/lanes.js';
import {
  JOB_CONTRACT_VERSION,
  JobSchema,
  PRIORITIES,
  TENANT_PATTERN,
  estimateTokens,
  tenantOfPrincipal,
  idempotencyKeyFor,
  jobMessageAttributes,
  sha256Hex,
  type Job,
  type Priority,
} from '../contract/job.js';
import { DEFAULT_PROMPT_VERSION, DEFAULT_SCHEMA_VERSION, isKnownPromptVersion } from '../contract/schemas/registry.js';
import { decodeText, textOf } from '../contract/text.js';
import { documentKeyFor } from '../store/documents.js';
import type { SubmitDeps } from './model.js';

/** Default largest document accepted (UTF-8 bytes): 1 MiB. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 1024 * 1024;

/** Why a document was rejected before anything was sent. */
export type RejectionReason =
  | 'unknown_region'
  | 'empty_document'
  | 'not_text'
  | 'document_too_large'
  | 'unknown_version'
  | 'deadline_passed'
  | 'bad_input'
  | 'message_too_large'
  /** A batch holds one schema and prompt version: a document with others goes in a batch of its own. */
  | 'mixed_versions';

/** One rejected document. `detail` names sizes, limits and fields — never the text. */
export interface RejectedItem {
  index: number;
  sourceId?: string;
  reason: RejectionReason;
  detail: string;
}

/** A validated document, ready to store and send. */
export interface Prepared {
  index: number;
  lane: LaneConfig;
  text: string;
  job: Job;
  body: string;
  attributes: ReturnType<typeof jobMessageAttributes>;
  messageBytes: number;
}

/** The issue parameter that carries a check's rejection reason (default `bad_input`). */
const reason = (r: RejectionReason): { params: { reason: RejectionReason } } => ({ params: { reason: r } });

/** An optional field that must be a string when given. */
const optionalString = (field: string) => z.string({ error: `${field} must be a string` }).optional();

/** The fields of a document as given (read by property access, so any object works). */
const DOCUMENT_FIELDS = ['text', 'path', 'sourceId', 'region', 'schemaVersion', 'promptVersion', 'deadline', 'jobId', 'tenant', 'priority'] as const;

const SOURCE_ID_MESSAGE = 'sourceId must be a string of 1 to 512 characters';

/**
 * A document's own fields, checked in this order (the first failure is the reason): an object; exactly
 * one of `text` or `path`; `text` a string, `path` a non-empty string, `sourceId` 1 to 512 characters
 * of well-formed text (no lone surrogate), `region`, `schemaVersion`, `promptVersion` and `jobId`
 * strings (all `bad_input`); then a region is given (`unknown_region`).
 */
const DocumentFieldsSchema = z
  .custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null, { error: 'document is not an object' })
  .transform((doc) => Object.fromEntries(DOCUMENT_FIELDS.map((field) => [field, doc[field]])) as Partial<Record<(typeof DOCUMENT_FIELDS)[number], unknown>>)
  .refine((doc) => !(doc.text !== undefined && doc.path !== undefined), { error: 'give exactly one of text or path, not both', abort: true })
  .refine((doc) => doc.text !== undefined || doc.path !== undefined, { error: 'give exactly one of text or path', abort: true })
  .pipe(
    z.object({
      text: z.string({ error: 'text must be a string' }).optional(),
      path: z.string({ error: 'path must be a non-empty string' }).min(1, { error: 'path must be a non-empty string' }).optional(),
      sourceId: z
        .string({ error: SOURCE_ID_MESSAGE })
        .min(1, { error: SOURCE_ID_MESSAGE })
        .max(512, { error: SOURCE_ID_MESSAGE })
        .refine((id) => decodeText(id).ok, { error: 'sourceId must be UTF-8 text (it holds a lone surrogate)' })
        .optional(),
      region: optionalString('region'),
      schemaVersion: optionalString('schemaVersion'),
      promptVersion: optionalString('promptVersion'),
      jobId: optionalString('jobId'),
      tenant: optionalString('tenant'),
      priority: z.enum(PRIORITIES, { error: `priority must be one of ${PRIORITIES.join(', ')}` }).optional(),
      deadline: z.unknown().optional(),
    }),
  )
  .refine((doc) => doc.region !== undefined && doc.region.length > 0, { error: 'region is missing', ...reason('unknown_region') });

/** A schema or prompt version: `name@N`. */
const VersionSchema = z.string().regex(/^[a-z][a-z0-9-]*@\d+$/);

const DEADLINE_MESSAGE = 'deadline is not a valid date (use ISO 8601)';

/** A deadline: a `Date` or an ISO 8601 string, as a valid `Date`. */
const DeadlineSchema = z
  .union([z.date(), z.string()], { error: DEADLINE_MESSAGE })
  .transform((value) => (value instanceof Date ? value : new Date(value)))
  .refine((date) => !Number.isNaN(date.getTime()), { error: DEADLINE_MESSAGE });

/** The limits a document's text must fit. */
interface TextLimits {
  maxBytes: number;
  maxTokens: number;
}

/**
 * A document's text, decoded (a given string by the same rules as a file's bytes: `lib/contract/text.ts`):
 * UTF-8 text with no lone surrogate, not binary (`not_text`), with a visible character
 * (`empty_document`), within the byte and estimated-token limits (`document_too_large`) — the checks
 * the consumer repeats. Its output is the text a job carries (a leading byte order mark dropped).
 */
function documentTextSchema(limits: TextLimits) {
  return z.string().transform((given, ctx) => {
    const fail = (r: RejectionReason, message: string): typeof z.NEVER => {
      ctx.addIssue({ code: 'custom', message, ...reason(r) });
      return z.NEVER;
    };
    const verdict = textOf(given);
    if (!verdict.ok) return fail(verdict.problem, verdict.detail);
    const { text } = verdict;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > limits.maxBytes) return fail('document_too_large', `document has ${bytes} bytes, over the limit of ${limits.maxBytes}`);
    const estimatedTokens = estimateTokens(text);
    if (estimatedTokens > limits.maxTokens)
      return fail('document_too_large', `document is ~${estimatedTokens} tokens, over the input budget of ${limits.maxTokens}`);
    return text;
  });
}

/** The first issue of a failed check, as a rejection (`fallback` when the issue names no reason). */
function firstIssue(error: z.ZodError, fallback: RejectionReason = 'bad_input'): { reason: RejectionReason; detail: string } {
  const issue = error.issues[0];
  const named = issue && 'params' in issue ? (issue.params as { reason?: RejectionReason } | undefined)?.reason : undefined;
  return { reason: named ?? fallback, detail: issue?.message ?? 'invalid document' };
}

/** Finds a lane by its name or by its AWS region. */
export function findLane(lanes: LaneSet, region: string): LaneConfig | undefined {
  return lanes[region] ?? Object.values(lanes).find((lane) => lane.region === region);
}

function reject(index: number, sourceId: string | undefined, why: RejectionReason, detail: string): RejectedItem {
  return sourceId === undefined ? { index, reason: why, detail } : { index, sourceId, reason: why, detail };
}

/** The deps the intake reads. */
export type IntakeDeps = Pick<SubmitDeps, 'lanes' | 'isKnownVersion' | 'defaultVersions' | 'maxDocumentBytes' | 'maxInputTokens' | 'newJobId'>;

/**
 * The source id of a file given without one: its file name. A local path never travels in a message
 * (`a.txt` and `./a.txt` are one source); a caller naming files from a folder gives the path relative
 * to that folder as the source id (`ratelane submit --dir` does).
 */
function fileSourceId(path: string): string {
  return basename(path);
}

/** The source id a rejection names before the text is read: the given one, else the file's, else the text's hash. */
function provisionalSourceId(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const doc = raw as Record<string, unknown>;
  if (typeof doc.sourceId === 'string') return doc.sourceId;
  if (typeof doc.path === 'string') return fileSourceId(doc.path);
  return typeof doc.text === 'string' ? `text:${sha256Hex(doc.text)}` : undefined;
}

/**
 * Reads a document's text from its file (size-checked first), decoded strictly as UTF-8 (bytes that
 * are not text are `not_text`, never replacement characters); a rejection when it cannot.
 */
async function readText(path: string, maxBytes: number): Promise<string | { reason: RejectionReason; detail: string }> {
  let bytes: Uint8Array;
  try {
    const info = await stat(path);
    if (!info.isFile()) return { reason: 'bad_input', detail: 'path is not a regular file' };
    if (info.size > maxBytes) return { reason: 'document_too_large', detail: `file has ${info.size} bytes, over the limit of ${maxBytes}` };
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { reason: 'bad_input', detail: `cannot read file (${typeof code === 'string' ? code : 'error'})` };
  }
  const decoded = decodeText(bytes);
  return decoded.ok ? decoded.text : { reason: decoded.problem, detail: decoded.detail };
}

/**
 * Checks one document and builds its job: fields, lane, versions (default and known ones from the
 * extraction schema registry unless `deps` overrides them), deadline, job id, content, job contract,
 * message size. Returns the prepared job, or the first reason it is rejected.
 */
export async function prepareDocument(raw: unknown, index: number, deps: IntakeDeps, now: Date): Promise<Prepared | RejectedItem> {
  const provisionalId = provisionalSourceId(raw);
  const bad = (why: RejectionReason, detail: string) => reject(index, provisionalId, why, detail);
  const fields = DocumentFieldsSchema.safeParse(raw);
  if (!fields.success) {
    const issue = firstIssue(fields.error);
    return bad(issue.reason, issue.detail);
  }
  const doc = fields.data;
  const region = doc.region!;
  const lane = findLane(deps.lanes, region);
  if (!lane) return bad('unknown_region', `unknown region "${region}"; known lanes: ${Object.keys(deps.lanes).join(', ')}`);

  const defaults = deps.defaultVersions ?? { schemaVersion: DEFAULT_SCHEMA_VERSION, promptVersion: DEFAULT_PROMPT_VERSION };
  const schemaVersion = doc.schemaVersion ?? defaults.schemaVersion;
  const promptVersion = doc.promptVersion ?? defaults.promptVersion;
  if (!VersionSchema.safeParse(schemaVersion).success || !VersionSchema.safeParse(promptVersion).success) {
    return bad('unknown_version', `versions must look like name@N (schemaVersion "${schemaVersion}", promptVersion "${promptVersion}")`);
  }
  if (!(deps.isKnownVersion ?? isKnownPromptVersion)(schemaVersion, promptVersion)) {
    return bad('unknown_version', `unknown schemaVersion/promptVersion pair ${schemaVersion} / ${promptVersion}`);
  }

  let deadline: string | undefined;
  if (doc.deadline !== undefined) {
    const parsed = DeadlineSchema.safeParse(doc.deadline);
    if (!parsed.success) return bad('bad_input', DEADLINE_MESSAGE);
    if (parsed.data.getTime() <= now.getTime()) return bad('deadline_passed', `deadline ${parsed.data.toISOString()} is not after now (${now.toISOString()})`);
    deadline = parsed.data.toISOString();
  }

  const jobId = doc.jobId ?? (deps.newJobId ?? randomUUID)();
  if (!JobSchema.shape.jobId.safeParse(jobId).success) return bad('bad_input', 'jobId must be 1 to 128 of A-Z a-z 0-9 . _ : -');
  if (doc.tenant !== undefined && !TENANT_PATTERN.test(doc.tenant)) return bad('bad_input', 'tenant must be 1 to 256 of A-Z a-z 0-9 + = , . @ _ : / -');

  const maxBytes = deps.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const read = doc.path !== undefined ? await readText(doc.path, maxBytes) : doc.text!;
  if (typeof read !== 'string') return bad(read.reason, read.detail);
  const checked = documentTextSchema({ maxBytes, maxTokens: deps.maxInputTokens ?? lane.provider.limits.tokensPerMinute }).safeParse(read);
  const text = checked.success ? checked.data : read;
  const contentSha256 = sha256Hex(text);
  const sourceId = doc.sourceId ?? (doc.path !== undefined ? fileSourceId(doc.path) : `text:${contentSha256}`);
  const badDoc = (why: RejectionReason, detail: string) => reject(index, sourceId, why, detail);
  if (!checked.success) {
    const issue = firstIssue(checked.error);
    return badDoc(issue.reason, issue.detail);
  }
  return buildJob(
    {
      index,
      lane,
      text,
      jobId,
      tenant: doc.tenant === undefined ? undefined : tenantOfPrincipal(doc.tenant),
      priority: doc.priority,
      sourceId,
      contentSha256,
      schemaVersion,
      promptVersion,
      deadline,
      now,
    },
    badDoc,
  );
}

/** The job of a checked document, checked against the job contract and SQS's message size. */
function buildJob(
  d: {
    index: number;
    lane: LaneConfig;
    text: string;
    jobId: string;
    tenant: string | undefined;
    priority: Priority | undefined;
    sourceId: string;
    contentSha256: string;
    schemaVersion: string;
    promptVersion: string;
    deadline: string | undefined;
    now: Date;
  },
  badDoc: (why: RejectionReason, detail: string) => RejectedItem,
): Prepared | RejectedItem {
  const { lane, text, sourceId, contentSha256, schemaVersion, promptVersion } = d;
  const candidate: Job = {
    contractVersion: JOB_CONTRACT_VERSION,
    jobId: d.jobId,
    ...(d.tenant !== undefined ? { tenant: d.tenant } : {}),
    ...(d.priority !== undefined ? { priority: d.priority } : {}),
    idempotencyKey: idempotencyKeyFor({ sourceId, contentSha256, promptVersion, schemaVersion, tenant: d.tenant }),
    region: lane.name,
    input: {
      bucket: lane.resources.bucketName,
      key: documentKeyFor(contentSha256),
      sourceId,
      contentSha256,
      bytes: Buffer.byteLength(text, 'utf8'),
      estimatedTokens: estimateTokens(text),
    },
    schemaVersion,
    promptVersion,
    attempt: 0,
    deferrals: 0,
    eligibleAt: d.now.toISOString(),
    ...(d.deadline !== undefined ? { deadline: d.deadline } : {}),
    createdAt: d.now.toISOString(),
  };
  const parsed = JobSchema.safeParse(candidate);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).slice(0, 3);
    return badDoc('bad_input', `job contract invalid: ${fields.join('; ')}`);
  }
  const job = parsed.data;
  const body = JSON.stringify(job);
  const attributes = jobMessageAttributes(job);
  const messageBytes = messageSizeBytes(body, attributes);
  if (messageBytes > AWS_LIMITS.maxMessageBytes) {
    return badDoc('message_too_large', `job message is ${messageBytes} bytes, over SQS's ${AWS_LIMITS.maxMessageBytes}`);
  }
  return { index: d.index, lane, text, job, body, attributes, messageBytes };
}

/**
 * Size of an SQS message as SQS counts it: the body plus every attribute's name, data type and
 * value (UTF-8 bytes).
 */
function messageSizeBytes(body: string, attributes: Readonly<Record<string, { DataType: string; StringValue?: string }>>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value.DataType, 'utf8') + Buffer.byteLength(value.StringValue ?? '', 'utf8');
  }
  return size;
}
