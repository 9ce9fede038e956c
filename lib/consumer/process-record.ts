/**
 * What the consumer does with one SQS record: parse the job, gate it (region, deadline, eligibility),
 * read the document, call the model, validate, commit once; and for every other outcome, ask the pure
 * policy what to do and carry it out. A record counts as handled (returns) only after the write that
 * settles it returned; anything else throws and is reported as a batch item failure.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import type { LaneConfig } from '../config/lanes.js';
import type { LanePauseReason, LanePauseRequester } from '../admission/pause.js';
import { estimateTokens, InvalidJobError, parseJob, type Job } from '../contract/job.js';
import { getExtractionPrompt, getExtractionSchema, isKnownPromptVersion } from '../contract/schemas/registry.js';
import { decide, gateBeforeCall, type Action, type Cooldown, type DeferAction, type FailAction, type JobOutcome, type RejectAction } from '../policy/index.js';
import { ProviderError, ProviderTransportError, type ModelAdapter, type TokenUsage } from '../providers/model.js';
import { sendToDeadLetterQueue } from '../queue/dead-letter.js';
import { extendVisibility, resendDeferred } from '../queue/reschedule.js';
import { DocumentStoreError, readDocument } from '../store/documents.js';
import { StoreUnavailableError } from '../store/errors.js';
import type { Ledger, LedgerEntryInput } from '../store/ledger.js';
import { resultRecordFor, type ResultStore } from '../store/results.js';
import type { KeyDenial, KeyPool, ProviderKey } from '../admission/keys.js';
import { validateOutput } from './validate.js';

/** Everything the record processor needs; the handler wires real clients, tests may wire others. */
export interface ConsumerDeps {
  lane: LaneConfig;
  queueUrl: string;
  dlqUrl: string;
  sqs: SQSClient;
  s3: S3Client;
  results: ResultStore;
  ledger: Ledger;
  model: ModelAdapter;
  /** Admission: a key for each model call, or when to come back (see lib/admission). */
  keys: KeyPool;
  /** Pauses the lane when every key is out until a long reset; absent: the lane never pauses. */
  lanePause?: LanePauseRequester | undefined;
  logger: Logger;
  metrics: Metrics;
  now: () => Date;
  random: () => number;
  /** Repair calls allowed after a validation failure (default 1). */
  maxRepairAttempts?: number;
  /**
   * Called once per record with its wall time and the time spent inside `model.extract` (for
   * `npm run bench`: the consumer's own overhead is the difference). Absent: nothing is timed.
   */
  onRecordTiming?: ((timing: RecordTiming) => void) | undefined;
}

/** How long one record took in the consumer; see {@link ConsumerDeps.onRecordTiming}. */
export interface RecordTiming {
  /** From the start of {@link processRecord} until it returned or threw (ms). */
  totalMs: number;
  /** Of that, time spent inside `model.extract` (ms). */
  modelMs: number;
  /** Model calls made for the record. */
  modelCalls: number;
  /** The record settled (returned); false: it threw and SQS brings it back. */
  settled: boolean;
}

/** A record the consumer could not settle now: reported as a batch item failure, SQS brings it back. */
export class RecordFailedError extends Error {
  override name = 'RecordFailedError';
  constructor(
    message: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Per-record facts that go on every log line (never document text). */
interface RecordFacts {
  messageId: string;
  /** Not logged: spread `logFacts` instead. */
  receiptHandle: string;
  receiveCount: number;
  queueAgeMs: number;
  /** Time spent inside `model.extract` for this record, and the calls made (for `onRecordTiming`). */
  model: { ms: number; calls: number };
}

const count = (deps: ConsumerDeps, name: string, value = 1): void => {
  deps.metrics.addMetric(name, MetricUnit.Count, value);
};

function recordFacts(record: SQSRecord, now: Date): RecordFacts {
  const receiveCount = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
  const sent = Number(record.attributes.SentTimestamp);
  return {
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    receiveCount,
    queueAgeMs: Number.isFinite(sent) ? Math.max(0, now.getTime() - sent) : 0,
    model: { ms: 0, calls: 0 },
  };
}

/** The facts that go on log lines. */
function logFacts(facts: RecordFacts): { messageId: string; receiveCount: number; queueAgeMs: number } {
  return { messageId: facts.messageId, receiveCount: facts.receiveCount, queueAgeMs: facts.queueAgeMs };
}

function ledgerBase(job: Job, facts: RecordFacts): Omit<LedgerEntryInput, 'kind' | 'reason'> {
  return {
    jobId: job.jobId,
    idempotencyKey: job.idempotencyKey,
    region: job.region,
    schemaVersion: job.schemaVersion,
    promptVersion: job.promptVersion,
    // Real failures so far: those the body carries plus this message's earlier receives.
    attempt: job.attempt + facts.receiveCount - 1,
    deferrals: job.deferrals,
    receiveCount: facts.receiveCount,
  };
}

/**
 * Handles one record. Returns when the record is settled (committed, duplicate, rejected, needs
 * review, deferred by a successful re-send, or moved to the DLQ); throws {@link RecordFailedError}
 * (or a store/queue error) when SQS must bring it back.
 */
export async function processRecord(record: SQSRecord, deps: ConsumerDeps): Promise<void> {
  const onTiming = deps.onRecordTiming;
  const started = onTiming ? performance.now() : 0;
  const facts = recordFacts(record, deps.now());
  if (!onTiming) return handleRecord(record, facts, deps);
  let settled = false;
  try {
    await handleRecord(record, facts, deps);
    settled = true;
  } finally {
    try {
      onTiming({ totalMs: performance.now() - started, modelMs: facts.model.ms, modelCalls: facts.model.calls, settled });
    } catch {
      // A timing listener must not change what happens to the record.
    }
  }
}

async function handleRecord(record: SQSRecord, facts: RecordFacts, deps: ConsumerDeps): Promise<void> {
  const { lane, logger } = deps;
  deps.metrics.addMetric('QueueAgeMs', MetricUnit.Milliseconds, facts.queueAgeMs);

  let job: Job;
  try {
    job = parseJob(record.body);
  } catch (error) {
    if (!(error instanceof InvalidJobError)) throw error;
    const unknownVersion = /contractVersion/.test(error.issues.join(' '));
    await deps.ledger.record({
      jobId: `msg:${record.messageId}`,
      region: lane.name,
      kind: 'rejected',
      reason: unknownVersion ? 'unknown_version' : 'invalid_body',
      attempt: 0,
      deferrals: 0,
      receiveCount: facts.receiveCount,
      details: error.issues.slice(0, 10).join('; '),
    });
    count(deps, 'Rejected');
    logger.warn('record rejected', { lane: lane.name, ...logFacts(facts), outcome: 'rejected', reason: unknownVersion ? 'unknown_version' : 'invalid_body' });
    return;
  }
  if (!isKnownPromptVersion(job.schemaVersion, job.promptVersion)) {
    return reject(job, facts, deps, {
      type: 'reject',
      reason: 'unknown_version',
      detail: `schema ${job.schemaVersion} / prompt ${job.promptVersion} not registered`,
    });
  }

  const gate = gateBeforeCall(job, lane.name, deps.now(), facts.receiveCount);
  if (gate.type === 'reject') return reject(job, facts, deps, gate);
  if (gate.type === 'defer') return defer(job, facts, deps, gate);

  // A redelivered message may have been committed by a receive that crashed before its ack: one read
  // (beside the document read) spares a model call. First deliveries skip it; the conditional write
  // still catches any duplicate.
  const committedBefore = facts.receiveCount > 1 ? deps.results.get(job.idempotencyKey) : undefined;
  const reading = readDocument(deps.s3, { bucket: job.input.bucket, key: job.input.key, expectedSha256: job.input.contentSha256 });
  reading.catch(() => undefined);
  const existing = await committedBefore;
  if (existing) return suppressDuplicate(job, facts, deps, existing.jobId);

  let text: string;
  try {
    text = await reading;
  } catch (error) {
    const code = error instanceof DocumentStoreError ? error.details.code : 'unknown';
    if (code === 'NoSuchKey' || code === 'ContentHashMismatch') {
      return reject(job, facts, deps, { type: 'reject', reason: 'invalid_body', detail: `input ${code}` }, code === 'NoSuchKey' ? 'input_missing' : 'input_hash_mismatch');
    }
    return act(job, facts, deps, decideFor(job, facts, deps, { kind: 'transport_failure', cause: 'unknown' }), `document read failed: ${code}`);
  }
  // The producer's input checks, again for a job someone else put on the queue: never a model call for these.
  if (text.trim().length === 0) return reject(job, facts, deps, { type: 'reject', reason: 'invalid_body', detail: `input document is empty (${job.input.bytes} bytes)` }, 'empty_document');
  if (estimateTokens(text) > lane.provider.limits.tokensPerMinute) return reject(job, facts, deps, { type: 'reject', reason: 'invalid_body', detail: `input is ~${estimateTokens(text)} tokens, over the lane's input budget of ${lane.provider.limits.tokensPerMinute}` }, 'too_large');
  return extractAndCommit(job, text, facts, deps);
}

async function extractAndCommit(job: Job, text: string, facts: RecordFacts, deps: ConsumerDeps): Promise<void> {
  const schema = getExtractionSchema(job.schemaVersion);
  const prompt = getExtractionPrompt(job.schemaVersion, job.promptVersion);
  if (!prompt) throw new RecordFailedError(`prompt ${job.promptVersion} vanished from the registry`, 'unknown_version');
  const maxRepairAttempts = deps.maxRepairAttempts ?? 1;
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
  let messages = prompt.buildMessages(text);
  let modelCalls = 0;
  let repairsUsed = 0;
  for (;;) {
    // Admission before the call: a key that is not cooling and has budget, or "come back at retryAt".
    let admission;
    try {
      const promptTokens = estimateTokens(messages.map((m) => m.content).join('\n'));
      admission = await deps.keys.acquire({ estimatedTokens: Math.max(job.input.estimatedTokens, promptTokens) });
    } catch (error) {
      const action = decideFor(job, facts, deps, { kind: 'transport_failure', cause: 'unknown' });
      return act(job, facts, deps, action, `admission unavailable: ${(error as Error)?.name ?? 'Error'}`);
    }
    if (!admission.admitted) return admissionDenied(job, facts, deps, admission);
    const key = admission.key;
    let response;
    try {
      modelCalls += 1;
      count(deps, 'ModelCalls');
      const callStarted = performance.now();
      try {
        response = await deps.model.extract({ messages, jsonSchemaName: schema.jsonSchemaName, jsonSchema: schema.jsonSchema, apiKey: key.secret });
      } finally {
        facts.model.ms += performance.now() - callStarted;
        facts.model.calls += 1;
      }
    } catch (error) {
      return actOnModelError(job, facts, deps, error, key);
    }
    // Reconcile the tokens admission took with what the call really used (never throws), while the
    // output is validated and committed.
    const settling = admission.settle(response.usage);
    usage.inputTokens += response.usage.inputTokens;
    usage.outputTokens += response.usage.outputTokens;
    const validation = validateOutput(response.content, schema);
    if (validation.ok) {
      const [, committed] = await Promise.all([settling, commit(job, facts, deps, { result: validation.value, usage, model: response.model, modelCalls })]);
      return committed;
    }
    count(deps, 'ValidationFailed');
    await settling;
    await deps.ledger.record({
      ...ledgerBase(job, facts),
      kind: 'validation_failed',
      reason: validation.parseStatus,
      parseStatus: validation.parseStatus,
      failingFields: validation.failingFields,
      failingRules: validation.failingRules,
      details: `model ${response.model}, repair ${repairsUsed} of ${maxRepairAttempts}, output ${response.content.length} chars`,
    });
    const action = decideFor(job, facts, deps, { kind: 'validation_failed', repairAttemptsUsed: repairsUsed, maxRepairAttempts });
    if (action.type === 'repair') {
      repairsUsed += 1;
      messages = prompt.buildRepairMessages(text, response.content, validation.problems);
      deps.logger.info('repairing output', { lane: deps.lane.name, jobId: job.jobId, ...logFacts(facts), parseStatus: validation.parseStatus, outcome: 'repair' });
      continue;
    }
    return act(job, facts, deps, action, validation.parseStatus);
  }
}

async function actOnModelError(job: Job, facts: RecordFacts, deps: ConsumerDeps, error: unknown, key: ProviderKey): Promise<void> {
  const keyId = key.id;
  if (error instanceof ProviderError) {
    if (error.requestTooLarge) {
      return reject(job, facts, deps, { type: 'reject', reason: 'invalid_body', detail: `request larger than the provider's whole per-minute budget (key ${keyId})` }, 'too_large');
    }
    const kind = error.classification.kind;
    const throttle = kind === 'rate_limit' || kind === 'quota_exhausted' || kind === 'billing';
    let keysLeft: number | undefined;
    if (throttle) {
      count(deps, 'RateLimited');
      keysLeft = await deps.keys
        .keysLeftAfter(key, { scope: kind === 'rate_limit' ? 'key' : 'quota_owner', reason: kind })
        .catch(() => undefined);
    }
    const action = decideFor(job, facts, deps, { kind: 'provider_error', classification: error.classification, ...(keysLeft === undefined ? {} : { keysLeft }) });
    if (action.type === 'defer') await applyThrottleAction(job, facts, deps, action, key);
    return act(job, facts, deps, action, `${kind} from key ${keyId} (HTTP ${error.status})`);
  }
  if (error instanceof ProviderTransportError) {
    const action = decideFor(job, facts, deps, { kind: 'transport_failure', cause: error.timedOut ? 'timeout' : 'network' });
    return act(job, facts, deps, action, error.timedOut ? 'model call timed out' : 'model connection failed');
  }
  const action = decideFor(job, facts, deps, { kind: 'transport_failure', cause: 'unknown' });
  return act(job, facts, deps, action, `unexpected error ${(error as Error)?.name ?? 'unknown'}`);
}

const COOLDOWN_METRIC: Record<Cooldown['reason'], string> = {
  rate_limit: 'KeyCooldownRateLimit',
  quota_exhausted: 'KeyCooldownQuotaExhausted',
  billing: 'KeyCooldownBilling',
};

/**
 * What a throttle's deferral asks beyond the re-send: record the key's (or quota owner's) cooldown
 * in the shared rate state, so no consumer spends a call to learn it again, and pause the lane when
 * no key is left. Neither failing stops the deferral (admission learns the limit again, at worst).
 */
async function applyThrottleAction(job: Job, facts: RecordFacts, deps: ConsumerDeps, action: DeferAction, key: ProviderKey): Promise<void> {
  const log = { lane: deps.lane.name, jobId: job.jobId, ...logFacts(facts), keyId: key.id };
  if (action.cooldown) {
    try {
      await deps.keys.cool(key, action.cooldown);
      count(deps, 'KeyCooldown');
      count(deps, COOLDOWN_METRIC[action.cooldown.reason]);
      deps.logger.info('key cooling', { ...log, cooldown: action.cooldown });
    } catch (error) {
      deps.logger.warn('could not record a key cooldown', { ...log, cooldown: action.cooldown, error: (error as Error)?.name });
    }
  }
  if (action.pauseLane) {
    // Resume at the earliest reset of any key, not only this one's.
    const out = await deps.keys.laneOut?.().catch(() => null);
    const until = Math.min(Date.parse(action.pauseLane.until), out ? out.until.getTime() : Infinity);
    await pauseLane(job, facts, deps, new Date(until), action.pauseLane.reason);
  } else if (action.cooldown && action.cooldown.reason !== 'rate_limit') {
    // Two consumers can exhaust the last two keys at the same moment, each still seeing the other's
    // key as usable. Each re-reads after recording its own cooldown, so at least one sees every key out.
    const out = await deps.keys.laneOut?.().catch(() => null);
    if (out) await pauseLane(job, facts, deps, out.until, out.reason);
  }
}

async function pauseLane(job: Job, facts: RecordFacts, deps: ConsumerDeps, until: Date, reason: LanePauseReason): Promise<void> {
  if (!deps.lanePause) return;
  const log = { lane: deps.lane.name, jobId: job.jobId, ...logFacts(facts), until: until.toISOString(), reason };
  try {
    if (await deps.lanePause.requestPause(until, reason)) {
      count(deps, 'LanePaused');
      deps.logger.warn('lane paused: every key is out', { ...log, outcome: 'lane_paused' });
    }
  } catch (error) {
    deps.logger.error('could not pause the lane', { ...log, error: (error as Error)?.name, detail: (error as Error)?.message });
  }
}

/** No key could take the call: defer until the earliest is due, without calling the provider. */
async function admissionDenied(job: Job, facts: RecordFacts, deps: ConsumerDeps, denial: KeyDenial): Promise<void> {
  count(deps, 'AdmissionDenied');
  if (denial.laneOut) await pauseLane(job, facts, deps, denial.laneOut.until, denial.laneOut.reason);
  const action = decideFor(job, facts, deps, { kind: 'admission_denied', retryAt: denial.retryAt });
  return act(job, facts, deps, action, `admission denied: ${denial.detail}, retry at ${denial.retryAt.toISOString()}`);
}

function decideFor(job: Job, facts: RecordFacts, deps: ConsumerDeps, outcome: JobOutcome): Action {
  return decide({
    job,
    lane: deps.lane.name,
    approximateReceiveCount: facts.receiveCount,
    maxReceiveCount: deps.lane.queue.maxReceiveCount,
    now: deps.now(),
    backoff: deps.lane.backoff,
    random: deps.random,
    outcome,
  });
}

async function act(job: Job, facts: RecordFacts, deps: ConsumerDeps, action: Action, detail: string): Promise<void> {
  switch (action.type) {
    case 'reject':
      return reject(job, facts, deps, action);
    case 'defer':
      return defer(job, facts, deps, action, detail);
    case 'fail':
      return fail(job, facts, deps, action, detail);
    case 'needs_review':
      await deps.ledger.record({ ...ledgerBase(job, facts), kind: 'needs_review', reason: detail, details: action.detail });
      count(deps, 'NeedsReview');
      deps.logger.warn('needs review', { lane: deps.lane.name, jobId: job.jobId, ...logFacts(facts), outcome: 'needs_review', reason: detail });
      return;
    case 'repair':
    case 'commit':
      throw new RecordFailedError(`unexpected action ${action.type} here`, 'policy');
  }
}

async function reject(job: Job, facts: RecordFacts, deps: ConsumerDeps, action: RejectAction, reason: string = action.reason): Promise<void> {
  await deps.ledger.record({ ...ledgerBase(job, facts), kind: 'rejected', reason, details: action.detail });
  count(deps, 'Rejected');
  if (action.reason === 'region_mismatch') count(deps, 'RegionMismatch');
  deps.logger.warn('job rejected', { lane: deps.lane.name, jobId: job.jobId, attempt: job.attempt, deferrals: job.deferrals, ...logFacts(facts), outcome: 'rejected', reason });
}

async function defer(job: Job, facts: RecordFacts, deps: ConsumerDeps, action: DeferAction, detail?: string): Promise<void> {
  const next: Job = { ...job, attempt: action.attempt, deferrals: action.deferrals, eligibleAt: action.eligibleAt };
  const sent = await resendDeferred({ sqs: deps.sqs, queueUrl: deps.queueUrl, job: next, delaySeconds: action.delaySeconds });
  const hop = action.reason === 'not_yet_eligible';
  count(deps, hop ? 'EligibilityHops' : 'Deferred');
  if (action.alarm === 'billing') count(deps, 'BillingAlarm');
  deps.logger.info(hop ? 'not yet eligible: hop' : 'deferred', {
    lane: deps.lane.name,
    jobId: job.jobId,
    attempt: next.attempt,
    deferrals: next.deferrals,
    ...logFacts(facts),
    outcome: hop ? 'hop' : 'deferred',
    reason: action.reason,
    basis: action.basis,
    delaySeconds: sent.delaySeconds,
    waitSeconds: action.waitSeconds,
    eligibleAt: action.eligibleAt,
    ...(action.cooldown ? { cooldown: action.cooldown } : {}),
    ...(detail ? { detail } : {}),
  });
  if (hop) return;
  // The re-send is what makes the original safe to acknowledge; the ledger line is an audit trail.
  await deps.ledger
    .record({ ...ledgerBase(next, facts), kind: 'deferred', reason: action.reason, details: `${action.basis}: wait ${action.waitSeconds} s, delay ${sent.delaySeconds} s${detail ? `; ${detail}` : ''}` })
    .catch((error: unknown) => deps.logger.warn('ledger write for a deferral failed', { jobId: job.jobId, error: (error as Error).name }));
}

async function fail(job: Job, facts: RecordFacts, deps: ConsumerDeps, action: FailAction, detail: string): Promise<void> {
  const log = { lane: deps.lane.name, jobId: job.jobId, attempt: action.carriedAttempt + facts.receiveCount, deferrals: job.deferrals, ...logFacts(facts), reason: action.reason, detail };
  if (action.lastReceive) {
    await deps.ledger.record({ ...ledgerBase(job, facts), kind: 'dead_letter_pending', reason: action.reason, details: detail });
    if (facts.receiveCount < action.maxReceiveCount) {
      // Failures carried over from earlier messages exhausted the budget: SQS would not count them.
      const spent: Job = { ...job, attempt: action.carriedAttempt + facts.receiveCount };
      await sendToDeadLetterQueue({ sqs: deps.sqs, dlqUrl: deps.dlqUrl, job: spent, reason: `${action.reason}: ${detail}` });
      count(deps, 'DeadLettered');
      deps.logger.error('retry budget spent: moved to the DLQ', { ...log, outcome: 'dead_lettered' });
      return;
    }
  }
  try {
    await extendVisibility({ sqs: deps.sqs, queueUrl: deps.queueUrl, receiptHandle: facts.receiptHandle, visibilityTimeoutSeconds: action.visibilityTimeoutSeconds });
  } catch (error) {
    deps.logger.warn('could not set the visibility backoff', { ...log, error: (error as Error).name });
  }
  count(deps, 'Failed');
  deps.logger.warn(action.lastReceive ? 'real failure: last receive, the DLQ takes it next' : 'real failure: redelivery after backoff', {
    ...log,
    outcome: 'failed',
    visibilityTimeoutSeconds: action.visibilityTimeoutSeconds,
  });
  throw new RecordFailedError(`${action.reason}: ${detail}`, action.reason);
}

function suppressDuplicate(job: Job, facts: RecordFacts, deps: ConsumerDeps, committedBy: string): void {
  count(deps, 'DuplicateSuppressed');
  deps.logger.info('duplicate suppressed', { lane: deps.lane.name, jobId: job.jobId, committedBy, ...logFacts(facts), outcome: 'duplicate' });
}

async function commit(
  job: Job,
  facts: RecordFacts,
  deps: ConsumerDeps,
  output: { result: Record<string, unknown>; usage: TokenUsage; model: string; modelCalls: number },
): Promise<void> {
  let outcome;
  try {
    outcome = await deps.results.commitOnce(resultRecordFor(job, output, deps.now()));
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // Not acknowledged: the message comes back after a visibility backoff, like any real failure.
    const action = decideFor(job, facts, deps, { kind: 'transport_failure', cause: 'unknown' });
    return act(job, facts, deps, action, `results store unavailable (${error.sdkErrorName ?? 'error'})`);
  }
  const attempts = job.attempt + facts.receiveCount + job.deferrals;
  if (outcome.status === 'duplicate') return suppressDuplicate(job, facts, deps, outcome.existing.jobId);
  count(deps, 'Completed');
  deps.metrics.addMetric('AttemptsPerCompletion', MetricUnit.Count, attempts);
  deps.logger.info('committed', {
    lane: deps.lane.name,
    jobId: job.jobId,
    attempt: job.attempt,
    deferrals: job.deferrals,
    ...logFacts(facts),
    outcome: 'committed',
    modelCalls: output.modelCalls,
    inputTokens: output.usage.inputTokens,
    outputTokens: output.usage.outputTokens,
  });
}
