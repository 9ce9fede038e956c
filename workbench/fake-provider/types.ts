/**
 * Public types of the fake model provider: its options, the kinds of refusals and faults it
 * produces, and the counters it keeps.
 */
import type { HardShapeName, ModelErrorRates } from './extractors/hard-shapes.js';

/** One API key the fake provider accepts. */
interface FakeProviderKey {
  /** The bearer token clients send in `Authorization: Bearer <key>`. */
  key: string;
  /**
   * Whose limits this key spends (an OpenAI organization/project). Keys with the same owner share
   * one set of RPM/TPM/RPD budgets. Defaults to the key itself.
   */
  quotaOwner?: string;
  /** Starts the key with no credit left: every call answers 429 `insufficient_quota`. */
  outOfCredit?: boolean;
}

/** Budgets applied to each quota owner. Omit one to leave it unlimited. */
export interface FakeProviderLimits {
  /** Requests per (scaled) minute: RPM. */
  requestsPerMinute?: number;
  /** Tokens per (scaled) minute: TPM (prompt + requested or produced completion tokens). */
  tokensPerMinute?: number;
  /** Requests per (scaled) day: RPD. */
  requestsPerDay?: number;
}

/** Probability (0..1) of each injected fault, per admitted request. Their sum must not exceed 1. */
export interface FakeProviderFaultRates {
  /** 500 or 503 with OpenAI's `server_error` body. */
  serverError?: number;
  /** The request is accepted and never answered, until the client gives up. */
  timeout?: number;
  /** 200 whose message content is not valid JSON (truncated, or wrapped in prose). */
  garbageJson?: number;
  /** 200 whose content is valid JSON that breaks the requested schema. */
  schemaInvalid?: number;
}

/** What the fake model sees of a request besides the document: its prompt, and whether it asks for a repair. */
export interface FakeExtractionContext {
  /** The system message (OpenAI `system`/`developer` message, Gemini `systemInstruction`); `undefined` when none. */
  systemMessage: string | undefined;
  /** Whether the request is a repair call (it holds "Your previous answer was:"). */
  repair: boolean;
}

/**
 * Turns the document text into the extraction result the "model" answers with.
 * `schemaName` is `response_format.json_schema.name` from the request.
 */
export type FakeExtractor = (text: string, schemaName: string, context: FakeExtractionContext) => unknown;

/** Seeded model errors on hard shapes, by prompt version (see `extractors/error-model.ts`). */
export interface FakeModelErrorOptions {
  /** Error rates per prompt version and hard shape; a prompt version without an entry never errs. */
  rates: ModelErrorRates;
  /** Seed of the error draws (independent of {@link FakeProviderOptions.seed}). Default 1. */
  seed?: number;
}

/** How the per-day request budget refills. */
export type DailyWindowKind =
  /** All of the day's requests come back at once when the (scaled) day ends, like a quota that resets at midnight. */
  | 'fixed'
  /** The budget refills continuously at `requestsPerDay / dayMs`, as OpenAI's RPD does ("Limit 1000 … try again in 1m26.4s"). */
  | 'continuous';

/** Options of {@link startFakeProvider}. */
export interface FakeProviderOptions {
  /** The accepted keys; any other bearer token answers 401 `invalid_api_key`. */
  keys: FakeProviderKey[];
  /** Produces the extraction result from the document text. */
  extract: FakeExtractor;
  /** Budgets per quota owner; all unlimited when omitted. */
  limits?: FakeProviderLimits;
  /** Length of a "minute" in ms, so tests can scale it down. Default 60 000. */
  minuteMs?: number;
  /**
   * Whether answers state the owner's per-minute limits (`x-ratelimit-limit-requests`, `-tokens`). Default
   * true; false answers as a gateway that strips them, or a provider that sends none: ratelane then learns the
   * limits from the 429s alone.
   */
  statesLimits?: boolean;
  /** Length of a "day" in ms. Default 86 400 000. */
  dayMs?: number;
  /** How the daily budget refills. Default `'fixed'`. */
  dailyWindow?: DailyWindowKind;
  /**
   * Epoch ms at which a fixed daily window starts (days follow every `dayMs` from there), so a caller
   * can make the provider's day start where its own does; at most now. Default: when the provider starts.
   */
  dayStartMs?: number;
  /** Fault probabilities; none by default. */
  faults?: FakeProviderFaultRates;
  /** Seed of the one pseudo-random sequence that drives faults and latency. Default 1. */
  seed?: number;
  /** Simulated model time per answered request: a fixed ms value or a seeded range. Default 5–20 ms. */
  latencyMs?: number | { min: number; max: number };
  /** Clock in epoch ms; injectable for tests. Default `Date.now`. */
  now?: () => number;
  /** The Batch API (`/v1/files`, `/v1/batches`): its pace, limits and faults. Defaults as documented there. */
  batch?: FakeProviderBatchOptions;
  /** Let the model err on hard shapes at seeded rates per prompt version. Absent: the model is always right. */
  modelErrors?: FakeModelErrorOptions;
}

/**
 * The fake Batch API's pace (scaled like `minuteMs`), OpenAI's per-batch limits, and its seeded
 * faults (drawn from their own sequence of `seed`, so they leave the chat route's faults alone).
 */
export interface FakeProviderBatchOptions {
  /** How long a batch stays `validating`. Default `minuteMs / 6` (10 scaled seconds). */
  validationMs?: number;
  /** From `in_progress` until every request line is answered, spread evenly. Default `3 × minuteMs`. */
  completionMs?: number;
  /** How long a batch stays `finalizing` before `completed`. Default `minuteMs / 6`. */
  finalizingMs?: number;
  /** How long a batch stays `cancelling` before `cancelled`. Default `minuteMs / 6`. */
  cancellingMs?: number;
  /** The `24h` completion window: `expires_at − created_at`. Default `dayMs` when given, else `1440 × minuteMs`. */
  windowMs?: number;
  /**
   * Probability (0..1) that a request line gets no output line and no error line at all. The batch
   * still counts it in `request_counts.completed` (it believes it answered): only a client that
   * reconciles by `custom_id` notices.
   */
  dropRate?: number;
  /** Probability (0..1) that a request line is answered with a 500 in the error file. */
  errorRate?: number;
  /**
   * Probability (0..1) that a request line is answered (status 200, a well-formed chat completion,
   * `finish_reason: 'stop'`) with content that fails the extraction schema: JSON missing a required
   * field, or the JSON wrapped in prose (not JSON). `dropRate + errorRate + invalidRate` ≤ 1.
   */
  invalidRate?: number;
  /** Probability (0..1) that a batch stalls and ends `expired` at `expires_at` with only part of its lines answered. */
  expire?: number;
  /** Share (0..1) of an expiring batch's lines answered before it stalls. Default 0.5. */
  expireAnsweredShare?: number;
  /**
   * Prompt tokens a quota owner may have enqueued per model in unfinished (`in_progress`, `finalizing`,
   * `cancelling`) batches; unlimited when omitted. A batch that would go over it is still created
   * (200, `validating`) and then ends `failed` with `errors.data[0].code = 'token_limit_exceeded'`, as
   * OpenAI's do (sources in `batch/wire.ts`).
   */
  enqueuedTokenLimit?: number;
  /** Request lines per input file. Default 50 000 (OpenAI's documented limit). */
  maxRequestsPerFile?: number;
  /** Bytes per batch input file. Default 209 715 200 (200 MB, OpenAI's documented limit). */
  maxFileBytes?: number;
}

/** The wire dialects the fake provider speaks: OpenAI Chat Completions (`/v1`) and the Gemini API (`/v1beta`). */
export type FakeDialectName = 'openai' | 'gemini';

/**
 * What a request refused by the budgets (429, or Gemini's 400 for a request too large) costs its
 * owner afterwards, as the provider documents it (the rules and their sources: `wire/dialect.ts`).
 */
export interface RefusedRequestRule {
  /** Whether a refused request spends one request of the per-minute request budget (RPM). */
  spendsRequest: boolean;
  /** Whether it also spends its tokens of the per-minute token budget (TPM). Neither dialect's provider documents that. */
  spendsTokens: boolean;
  /** One line for reports: the rule and its source, e.g. "openai: a refused request counts toward RPM (…)". */
  description: string;
}

/** Why a request was refused with 429. */
type RateLimitKind = 'rpm' | 'tpm' | 'rpd' | 'insufficient_quota' | 'too_large';

/** Which fault was injected into an admitted request. */
export type FaultKind = 'serverError' | 'timeout' | 'garbageJson' | 'schemaInvalid';

/** Counters for one key or for the whole server. */
export interface FakeProviderCounters {
  /** Every request that reached the chat completions route. */
  requests: number;
  /** 200 answers without an injected fault (with `modelErrors`, some may still err: see `modelErrors`). */
  successes: number;
  /** 401 answers. */
  unauthorized: number;
  /** 400 answers. */
  badRequests: number;
  /** 429 answers by cause. */
  rateLimited: Record<RateLimitKind, number>;
  /** Injected faults by kind. */
  faults: Record<FaultKind, number>;
  /** Prompt tokens of admitted requests. */
  tokensIn: number;
  /** Completion tokens of answered (200) requests. */
  tokensOut: number;
  /** Answers made to err (with `modelErrors`), by hard shape; one answer may count under several shapes. */
  modelErrors: Record<HardShapeName, number>;
}

/** Counters of the fake Batch API (whole server). Lines count when their answer time has passed. */
export interface FakeProviderBatchStats {
  /** Batches created (`POST /v1/batches` answered 200). */
  created: number;
  /** Batches that ended `completed`. */
  completed: number;
  /** Batches that ended `failed` (validation errors, enqueued-token limit, missing input file). */
  failed: number;
  /** Batches that ended `expired`. */
  expired: number;
  /** Batches that ended `cancelled`. */
  cancelled: number;
  /** Files deleted (`DELETE /v1/files/{id}` answered 200). */
  filesDeleted: number;
  /** Request lines answered with an output line (status 200). */
  linesAnswered: number;
  /** Request lines answered with an error line (injected 500, or a 4xx/5xx of the request itself). */
  linesErrored: number;
  /** Request lines that got neither an output nor an error line (the `dropRate` fault). */
  linesDropped: number;
  /** Request lines never run because their batch expired (`batch_expired` error lines). */
  linesExpired: number;
  /** Request lines never run because their batch was cancelled (`batch_cancelled` error lines). */
  linesCancelled: number;
  /** `custom_id` of every dropped line, in answer order (ids may repeat across batches). */
  droppedCustomIds: string[];
  /** `custom_id` of every errored line, in answer order (ids may repeat across batches). */
  erroredCustomIds: string[];
  /**
   * `custom_id` of every line answered with content that fails the schema (the `invalidRate` fault; also
   * counted in `linesAnswered`), in answer order (ids may repeat across batches); empty until one is.
   */
  invalidCustomIds: string[];
  /** Answered lines made to err (with `modelErrors`), by hard shape. */
  modelErrors: Record<HardShapeName, number>;
}

/** A snapshot of the fake provider's counters. */
export interface FakeProviderStats extends FakeProviderCounters {
  /** The same counters per API key (keys that were never used have zero counters). */
  perKey: Record<string, FakeProviderCounters>;
  /** The Batch API's counters. */
  batches: FakeProviderBatchStats;
}

/** A running fake provider. */
export interface FakeProvider {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  readonly baseUrl: string;
  /** The TCP port it listens on (127.0.0.1). */
  readonly port: number;
  /** A copy of the counters. */
  stats(): FakeProviderStats;
  /** Marks a key out of credit (429 `insufficient_quota`) or gives it credit again. */
  setKeyOutOfCredit(key: string, outOfCredit: boolean): void;
  /** What a refused request costs in `dialect` (the same as `refusedRequestRuleOf` in `wire/dialect.ts`). */
  refusedRequestRule(dialect: FakeDialectName): RefusedRequestRule;
  /** Starts a new (scaled) day now: every owner's daily request budget is full again. */
  resetDay(): void;
  /** Closes the server, destroying open sockets (including hung "timeout" requests). */
  stop(): Promise<void>;
}
