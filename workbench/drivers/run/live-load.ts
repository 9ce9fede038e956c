/**
 * Live requests during a local run: `--live-requests N` fires N extraction requests at the lanes' live
 * APIs at `--live-rps` while the backfill runs, each with `--live-deadline-ms`, and measures each
 * answer from the caller's side (status, latency, late or not). At the end every job answered
 * "pending" is looked up with `GET /v1/extractions/{jobId}`: the queue lane must have finished it.
 */
import { loadCorpus } from '../../corpus/index.js';
import { LIVE_ANSWER_SLACK_MS } from '../../../lib/lanes/live/handler.js';
import { LIVE_ROUTES } from '../../../lib/platform/resources.js';
import type { LocalStack } from '../../local-stack/stack.js';

/** The live load of a run. */
export interface LiveLoadOptions {
  requests: number;
  /** Requests started per second (across lanes). */
  rps: number;
  /** The deadline each request states (ms). */
  deadlineMs: number;
}

/** What one live request got, seen from the caller. */
export interface LiveCall {
  lane: string;
  /** The answer's `status`, or `transport` when no HTTP answer came. */
  status: 'committed' | 'pending' | 'needs_review' | 'rejected' | 'error' | 'transport';
  httpStatus: number;
  latencyMs: number;
  jobId?: string | undefined;
  /** Answered later than its deadline plus {@link LIVE_ANSWER_SLACK_MS}. */
  late: boolean;
}

/** The states a job can end in (`GET` view). */
const TERMINAL = new Set(['committed', 'needs_review', 'rejected', 'dead_lettered']);

/**
 * Fires the live load: request `i` starts `i / rps` seconds after the call, at the live API of its
 * document's lane (English invoices to `us`, German to `eu`), with a source id of its own so it is no
 * duplicate of the backfill. Resolves when every request was answered.
 */
export async function runLiveLoad(stack: LocalStack, options: LiveLoadOptions, onAnswer?: (call: LiveCall, done: number) => void): Promise<LiveCall[]> {
  const corpus = loadCorpus();
  const started = performance.now();
  const calls: LiveCall[] = [];
  await Promise.all(
    Array.from({ length: options.requests }, async (_, i) => {
      const doc = corpus[i % corpus.length]!;
      const lane = doc.language === 'de' ? 'eu' : 'us';
      const url = stack.lanes[lane]?.live?.url;
      const startAt = started + (i * 1000) / options.rps;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - performance.now())));
      const call = url
        ? await postExtraction(url, lane, { text: doc.text, sourceId: `live:${doc.sourceId}#${i}`, deadlineMs: options.deadlineMs }, options.deadlineMs)
        : { lane, status: 'transport' as const, httpStatus: 0, latencyMs: 0, late: false };
      calls.push(call);
      onAnswer?.(call, calls.length);
    }),
  );
  return calls;
}

/** POSTs one extraction request to a lane's live API and measures the answer from the caller's side. */
export async function postExtraction(baseUrl: string, lane: string, body: Record<string, unknown>, deadlineMs: number): Promise<LiveCall> {
  const t0 = performance.now();
  try {
    const response = await fetch(`${baseUrl}${LIVE_ROUTES.extractions}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(deadlineMs + 30_000),
    });
    const answer = (await response.json().catch(() => ({}))) as { status?: string; jobId?: string };
    const latencyMs = performance.now() - t0;
    const status = (['committed', 'pending', 'needs_review', 'rejected', 'error'] as const).find((s) => s === answer.status) ?? 'error';
    return { lane, status, httpStatus: response.status, latencyMs, jobId: answer.jobId, late: latencyMs > deadlineMs + LIVE_ANSWER_SLACK_MS };
  } catch {
    const latencyMs = performance.now() - t0;
    return { lane, status: 'transport', httpStatus: 0, latencyMs, late: latencyMs > deadlineMs + LIVE_ANSWER_SLACK_MS };
  }
}

/** The state `GET /v1/extractions/{jobId}` shows, or `unreachable`. */
async function liveJobState(stack: LocalStack, lane: string, jobId: string): Promise<string> {
  const url = stack.lanes[lane]?.live?.url;
  if (!url) return 'unreachable';
  try {
    const response = await fetch(`${url}${LIVE_ROUTES.extraction.replace('{jobId}', encodeURIComponent(jobId))}`, { signal: AbortSignal.timeout(10_000) });
    const view = (await response.json()) as { status?: string };
    return view.status ?? 'unknown';
  } catch {
    return 'unreachable';
  }
}

/** The pending jobs that did not reach a terminal state (looked up one by one), with the state each shows. */
export async function unfinishedPending(stack: LocalStack, calls: readonly LiveCall[]): Promise<{ jobId: string; state: string }[]> {
  const pending = calls.filter((c) => c.status === 'pending' && c.jobId);
  const states = await Promise.all(pending.map(async (c) => ({ jobId: c.jobId!, state: await liveJobState(stack, c.lane, c.jobId!) })));
  return states.filter((s) => !TERMINAL.has(s.state));
}

/** The live figures of the scorecard. */
export interface LiveFigures {
  liveRequests: number;
  liveCommitted: number;
  livePending: number;
  liveNeedsReview: number;
  liveRejected: number;
  /** Answered 5xx or not at all. */
  liveErrors: number;
  liveP50Ms: number | null;
  liveP95Ms: number | null;
  /** Answers later than the deadline plus the stated slack ({@link LIVE_ANSWER_SLACK_MS} ms). */
  liveOverDeadline: number;
  liveDeadlineMs: number | null;
  liveSlackMs: number;
  /** Pending jobs that were not committed, reviewed, rejected or dead-lettered by the end. */
  livePendingUnfinished: number;
}

/** The live figures of a run (zeros and nulls without live requests). */
export function liveFigures(calls: readonly LiveCall[], unfinished: number, deadlineMs: number | null): LiveFigures {
  const count = (status: LiveCall['status']) => calls.filter((c) => c.status === status).length;
  const latencies = calls.filter((c) => c.status !== 'transport').map((c) => c.latencyMs);
  return {
    liveRequests: calls.length,
    liveCommitted: count('committed'),
    livePending: count('pending'),
    liveNeedsReview: count('needs_review'),
    liveRejected: count('rejected'),
    liveErrors: count('error') + count('transport'),
    liveP50Ms: percentile(latencies, 0.5),
    liveP95Ms: percentile(latencies, 0.95),
    liveOverDeadline: calls.filter((c) => c.late).length,
    liveDeadlineMs: calls.length > 0 ? deadlineMs : null,
    liveSlackMs: LIVE_ANSWER_SLACK_MS,
    livePendingUnfinished: unfinished,
  };
}

function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
}

/** The live section of the printed scorecard. */
export function formatLiveFigures(f: LiveFigures): string {
  const ms = (v: number | null): string => (v === null ? '-' : `${v} ms`);
  const rows: [string, string][] = [
    ['live requests', `${f.liveRequests} (deadline ${ms(f.liveDeadlineMs)}, slack ${f.liveSlackMs} ms)`],
    ['live committed', String(f.liveCommitted)],
    [
      'live pending (handed over)',
      `${f.livePending}${f.livePendingUnfinished > 0 ? ` — ${f.livePendingUnfinished} NOT finished by the end` : ', all finished by the queue lane'}`,
    ],
    ['live needs review / rejected', `${f.liveNeedsReview} / ${f.liveRejected}`],
    ['live errors (5xx or no answer)', String(f.liveErrors)],
    ['live latency p50 / p95', `${ms(f.liveP50Ms)} / ${ms(f.liveP95Ms)}`],
    ['live answers over the deadline', String(f.liveOverDeadline)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n');
}
