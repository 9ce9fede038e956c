/**
 * The intake steps of the pipeline (`pipeline.ts`), none of which calls the model: parse the message
 * body as a job with the lane's counter limits, check its versions are registered and pass the gate,
 * then read its document — after checking a redelivery was not committed already — and repeat the
 * producer's input checks, so a job someone else put on the queue gets no call for a document that is
 * not text, empty or over the lane's budget.
 */
import { estimateTokens, InvalidJobError, parseJob, type Job } from '../contract/job.js';
import { isKnownPromptVersion } from '../contract/schemas/registry.js';
import { textOf } from '../contract/text.js';
import { endpointProblem, modelEndpointHost } from '../config/endpoints.js';
import { gateBeforeCall } from '../policy/index.js';
import { readDocumentBytes } from '../store/documents.js';
import { count, log, runLogFields, type Delivery, type ExtractionDeps, type JobRun, type Next } from './context.js';
import { decideFor, outOfTime, rejectRun, resolveAction, settleFailure, suppressDuplicate } from './settle.js';
import { rejectUnverified } from './verify.js';

/** The body as a job, or its rejection under the message id (`unknown_version`, `invalid_body`). */
export async function parseBody(body: string, delivery: Delivery, deps: ExtractionDeps): Promise<Next<Job>> {
  try {
    return { go: parseJob(body, { maxAttempt: deps.lane.queue.maxReceiveCount, maxDeferrals: deps.lane.bounds.maxDeferrals }) };
  } catch (error) {
    if (!(error instanceof InvalidJobError)) throw error;
    const reason = /contractVersion/.test(error.issues.join(' ')) ? 'unknown_version' : 'invalid_body';
    return { end: await rejectUnverified(delivery, deps, reason, error.issues.slice(0, 10).join('; ')) };
  }
}

/**
 * Whether the job may go on: its versions registered, the gate's verdict (region, horizon, deadline,
 * eligibility), and a model endpoint approved for the lane's geography — else the job waits without a
 * call (`EndpointMismatch`), whatever the function's environment says the endpoint is.
 */
export async function admissible(run: JobRun): Promise<Next<void>> {
  const { job, delivery, deps } = run;
  if (!isKnownPromptVersion(job.schemaVersion, job.promptVersion)) {
    const detail = `schema ${job.schemaVersion} / prompt ${job.promptVersion} not registered`;
    return { end: await rejectRun(run, { type: 'reject', reason: 'unknown_version', detail }) };
  }
  const gate = gateBeforeCall(job, deps.lane.name, deps.now(), delivery.receiveCount, deps.lane.bounds.horizonSeconds * 1000);
  if (gate.type === 'reject') return { end: await rejectRun(run, gate) };
  if (gate.type === 'defer') return { end: { type: 'deferred', job, action: gate } };
  const refused = endpointRefusal(deps);
  if (refused) {
    count(deps, 'EndpointMismatch');
    log(deps, 'error', 'model endpoint not approved for the lane: no call', { ...runLogFields(run), host: refused.host, detail: refused.problem });
    return { end: await resolveAction(run, decideFor(run, { kind: 'endpoint_not_approved' }), refused.problem) };
  }
  return { go: undefined };
}

/** The endpoint verdict of each lane's dependencies (the lane and its adapter do not change). */
const endpointVerdicts = new WeakMap<ExtractionDeps, { host: string; problem: string } | null>();

/** Why the lane's model host may not receive its text (`config/endpoints.ts`), or null when it may. */
function endpointRefusal(deps: ExtractionDeps): { host: string; problem: string } | null {
  let verdict = endpointVerdicts.get(deps);
  if (verdict === undefined) {
    const host = deps.model.host ?? modelEndpointHost(deps.lane);
    const problem = endpointProblem(deps.lane, host);
    verdict = problem === undefined ? null : { host, problem };
    endpointVerdicts.set(deps, verdict);
  }
  return verdict;
}

/** Starts reading the job's document (now known to be the lane's own); {@link readText} awaits it. */
export function startReading(run: JobRun): Promise<Uint8Array> {
  const { job, deps } = run;
  const reading = readDocumentBytes(deps.s3, { bucket: job.input.bucket, key: job.input.key, expectedSha256: job.input.contentSha256 });
  reading.catch(() => undefined);
  return reading;
}

/**
 * The document's text: a redelivery's duplicate check first (a receive that crashed before its ack may
 * have committed it: one read beside the document read spares a model call; first deliveries skip it,
 * the conditional commit still catches any duplicate), then the read, then the input checks.
 */
export async function readText(run: JobRun, reading: Promise<Uint8Array>): Promise<Next<string>> {
  const { job, delivery, deps } = run;
  const committedBefore = delivery.receiveCount > 1 ? deps.results.get(job.idempotencyKey) : undefined;
  const checked = await cutOffInTime(run, 'duplicate check', async () => committedBefore);
  if ('end' in checked) return checked;
  if (checked.go) return { end: suppressDuplicate(run, checked.go.jobId) };
  let bytes: Uint8Array;
  try {
    bytes = await reading;
  } catch (error) {
    return { end: await settleFailure(run, 'document_read', error) };
  }
  return inputChecked(run, bytes);
}

/**
 * The producer's input checks, again: bytes that are not UTF-8 text or binary (`not_text`), no visible
 * character (`empty_document`), or more than the lane's input budget (`too_large`).
 */
async function inputChecked(run: JobRun, bytes: Uint8Array): Promise<Next<string>> {
  const verdict = textOf(bytes);
  if (!verdict.ok) {
    return { end: await rejectRun(run, { type: 'reject', reason: 'invalid_body', detail: `input ${verdict.detail}` }, verdict.problem) };
  }
  const tokens = estimateTokens(verdict.text);
  const budget = run.deps.lane.provider.limits.tokensPerMinute;
  if (tokens > budget) {
    const detail = `input is ~${tokens} tokens, over the lane's input budget of ${budget}`;
    return { end: await rejectRun(run, { type: 'reject', reason: 'invalid_body', detail }, 'too_large') };
  }
  return { go: verdict.text };
}

/**
 * Runs an intake step; when it fails because the record's time was up (its work was stopped), the job
 * is sent back as out of time (a cut-off: it waits the lane's cut-off wait) instead of failing the
 * record: a slow table or machine then costs a re-send, not a receive of the retry budget. Any other
 * failure is thrown on.
 */
async function cutOffInTime<T>(run: JobRun, step: string, work: () => Promise<T>): Promise<Next<T>> {
  try {
    return { go: await work() };
  } catch (error) {
    if (!run.delivery.stopWork?.aborted) throw error;
    return { end: await outOfTime(run, `${step} cut off by the record's time`, { cutOff: true }) };
  }
}
