/**
 * How an evaluation sends the corpus through one lane of a running local stack — the queue lane
 * (the real producer), the live lane (its HTTP API; a "pending" answer is finished by the queue lane)
 * or the batch lane (one batch per region lane) — and where each document's job ended.
 */
import { randomUUID } from 'node:crypto';
import type { CorpusDocument } from '../../corpus/index.js';
import type { LaneSet } from '../../../lib/config/lanes.js';
import { estimateTokens, idempotencyKeyFor, sha256Hex, tenantOfPrincipal } from '../../../lib/contract/job.js';
import { localCallerArn } from '../../local-stack/lambda/http-adapter.js';
import type { Release } from '../../../lib/contract/releases.js';
import type { EvaluatedDocument } from './report.js';
import type { EvalLane } from './report-model.js';
import type { EvalOutcomeState } from './score.js';
import type { DocumentInput } from '../../../lib/intake/producer.js';
import type { LocalStack } from '../../local-stack/stack.js';
import { startBatchLoad, type BatchFinal, type BatchLoad } from '../run/batch-load.js';
import { postExtraction, type LiveCall } from '../run/live-load.js';
import type { FinalState } from '../outcome.js';
import { submitToStack } from '../submit.js';

/** One corpus document as an evaluation submits it. */
export interface EvalJob {
  doc: CorpusDocument;
  /** The region lane: English documents go to `us`, the others to `eu`. */
  region: string;
  input: DocumentInput & { sourceId: string; schemaVersion: string; promptVersion: string };
  idempotencyKey: string;
  /** Job ids the job was known by (the producer's, the live API's, the batch manifest's). */
  jobIds: Set<string>;
  /** Why the lane refused it at intake, if it did. */
  refused?: string | undefined;
}

/** The region lane of a corpus document. */
function regionOf(doc: Pick<CorpusDocument, 'language'>): string {
  return doc.language === 'en' ? 'us' : 'eu';
}

/** The jobs of an evaluation: each document with the release's prompt for its schema. */
export function evalJobs(corpus: readonly CorpusDocument[], release: Release): EvalJob[] {
  return corpus.map((doc) => {
    const promptVersion = release.prompts[doc.schemaVersion];
    if (promptVersion === undefined) throw new Error(`release ${release.id} has no prompt for ${doc.schemaVersion}`);
    const input = { text: doc.text, sourceId: doc.sourceId, region: regionOf(doc), schemaVersion: doc.schemaVersion, promptVersion, jobId: randomUUID() };
    const idempotencyKey = idempotencyKeyFor({ sourceId: doc.sourceId, contentSha256: sha256Hex(doc.text), promptVersion, schemaVersion: doc.schemaVersion });
    return { doc, region: input.region, input, idempotencyKey, jobIds: new Set([input.jobId]) };
  });
}

/** What a lane's submission left running: the batch load, when the batch lane ran. */
export interface LaneSubmission {
  batch?: BatchLoad | undefined;
  /** The live answers, when the live lane ran. */
  liveCalls?: LiveCall[] | undefined;
}

/** Options of {@link submitThroughLane}. */
export interface LaneRun {
  say: (line: string) => void;
  /** Epoch ms after which the batch load stops reconciling. */
  deadline: number;
  /** How often the batch load reconciles (ms). */
  reconcileIntervalMs: number;
  /** The deadline each live request states (ms). */
  liveDeadlineMs: number;
  /** Live requests in flight at once. */
  liveConcurrency: number;
}

/** Sends every job through `lane`; refusals at intake are recorded on the job. */
export async function submitThroughLane(stack: LocalStack, lanes: LaneSet, jobs: EvalJob[], lane: EvalLane, run: LaneRun): Promise<LaneSubmission> {
  if (lane === 'queue') {
    const { submission } = await submitToStack(
      stack,
      lanes,
      jobs.map((j) => j.input),
    );
    for (const item of submission.results) {
      const job = jobs[item.index]!;
      if (item.status !== 'sent') job.refused = item.error?.code ?? item.status;
    }
    run.say(
      `  queue lane: sent ${submission.sent} of ${jobs.length} documents${submission.rejected + submission.failed > 0 ? `, ${submission.rejected + submission.failed} refused` : ''}`,
    );
    return {};
  }
  if (lane === 'live') return { liveCalls: await fireLive(stack, jobs, run) };
  const batch = startBatchLoad(
    stack,
    { jobs: jobs.length, dropRate: 0, errorRate: 0, invalidRate: 0, minutes: 1, documents: jobs.map((j) => j.input) },
    { intervalMs: run.reconcileIntervalMs, deadline: run.deadline, say: run.say },
  );
  return { batch };
}

/** The tenant of the local live API's caller. */
const LOCAL_TENANT = tenantOfPrincipal(localCallerArn());

async function fireLive(stack: LocalStack, jobs: EvalJob[], run: LaneRun): Promise<LiveCall[]> {
  const calls: LiveCall[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const url = stack.lanes[job.region]?.live?.url;
      if (!url) {
        job.refused = 'no live API';
        continue;
      }
      const { text, sourceId, schemaVersion, promptVersion } = job.input;
      // A live job belongs to its caller (the local API's fixed one): its key carries that tenant.
      job.idempotencyKey = idempotencyKeyFor({ sourceId, contentSha256: sha256Hex(job.doc.text), promptVersion, schemaVersion, tenant: LOCAL_TENANT });
      const call = await postExtraction(url, job.region, { text, sourceId, schemaVersion, promptVersion, deadlineMs: run.liveDeadlineMs }, run.liveDeadlineMs);
      if (call.jobId) job.jobIds.add(call.jobId);
      if (call.status === 'rejected') job.refused ??= 'rejected by the live API';
      calls.push(call);
      if (calls.length % 25 === 0 || calls.length === jobs.length) run.say(`  live lane: ${calls.length}/${jobs.length} answered`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, run.liveConcurrency) }, worker));
  return calls;
}

/** Adds the batch manifest's job ids to the jobs and returns the keys of items the batch left unresolved. */
export function absorbBatchFinal(jobs: readonly EvalJob[], finals: readonly BatchFinal[]): Set<string> {
  const byKey = new Map(jobs.map((j) => [j.idempotencyKey, j]));
  const unresolved = new Set<string>();
  for (const item of finals.flatMap((f) => f.items)) {
    const job = byKey.get(item.idempotencyKey);
    if (job) job.jobIds.add(item.jobId);
    if (item.state === 'unresolved') unresolved.add(item.idempotencyKey);
  }
  return unresolved;
}

/** Where one job ended, looked up in every place a job can end (a committed result first). */
function stateOf(job: EvalJob, final: FinalState, unresolvedKeys: ReadonlySet<string>, resultKeys: ReadonlySet<string>): EvalOutcomeState {
  if (resultKeys.has(job.idempotencyKey)) return 'committed';
  const terminal = final.ledger.find(
    (e) => (e.kind === 'rejected' || e.kind === 'needs_review') && (e.idempotencyKey === job.idempotencyKey || job.jobIds.has(e.jobId)),
  );
  if (terminal) return terminal.kind === 'rejected' ? 'rejected' : 'needs_review';
  if (job.refused !== undefined) return 'rejected';
  if (final.deadLettered.some((id) => job.jobIds.has(id))) return 'dead_lettered';
  if (final.waiting.some((id) => job.jobIds.has(id))) return 'waiting';
  if (unresolvedKeys.has(job.idempotencyKey)) return 'unresolved';
  return 'lost';
}

/** Every job as the report scores it: its state and, when committed, its object, tokens and model. */
export function evaluatedDocuments(jobs: readonly EvalJob[], final: FinalState, unresolvedKeys: ReadonlySet<string>): EvaluatedDocument[] {
  const results = new Map(final.results.map((r) => [r.idempotencyKey, r]));
  const resultKeys = new Set(results.keys());
  return jobs.map((job) => {
    const record = results.get(job.idempotencyKey);
    return {
      id: job.doc.id,
      language: job.doc.language,
      schemaVersion: job.doc.schemaVersion,
      region: job.region,
      inputTokenEstimate: estimateTokens(job.doc.text),
      expected: job.doc.expected,
      expectedOutcome: job.doc.expectedOutcome,
      state: stateOf(job, final, unresolvedKeys, resultKeys),
      result: record?.result,
      usage: record?.usage,
      model: record?.model,
    };
  });
}
