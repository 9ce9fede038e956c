/**
 * The live lane's HTTP handler (API Gateway HTTP API, payload format 2.0, IAM auth):
 * - `POST /v1/extractions`: the request checked (content type, body, deadline, lane, the producer's
 *   document checks), then the job through the extraction core inside one total deadline
 *   (`executor.ts`); answered committed, needs review, rejected, or pending after a hand-over to the
 *   queue lane;
 * - `GET /v1/extractions/{jobId}`: the job's state, the same view a queue job gets (`status.ts`), to its
 *   tenant or a lane-wide reader only (`caller.ts`);
 * - `DELETE /v1/extractions/{jobId}`: the job's tenant erases the job's source in this lane and gets the
 *   receipt (`erase.ts`); to anyone else the job is what `GET` answers them.
 * - `POST /v1/extractions/{jobId}/cancel`: the job's tenant cancels it unless it is committed (`cancel.ts`).
 * A job belongs to its caller's IAM principal (the tenant); a request that names none is refused (403).
 * middy with Powertools Logger and Metrics around it; one answer metric per request.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy from '@middy/core';
import { traceInvocation } from '../../platform/tracing.js';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { count, log } from '../../extraction/index.js';
import { prepareDocument } from '../../intake/checks.js';
import { errorName, shortMessage } from '../../platform/errors.js';
import { LIVE_ROUTES } from '../../platform/resources.js';
import type { LiveMetricName } from '../../platform/telemetry.js';
import { callerTenant, readerFor } from './caller.js';
import { answerResponse, jsonResponse, refusalResponse, unavailableResponse, type LiveAnswer } from './answer.js';
import { effectiveDeadlineMs, liveBudget, overDeadline, type LiveBudget } from './deadline.js';
import { readReferencedText } from './document-ref.js';
import type { LiveDeps } from './deps.js';
import { cancelResponse } from './cancel.js';
import { eraseResponse } from './erase.js';
import { runLive } from './executor.js';
import { handOver } from './handover.js';
import { checkDeadline, checkLane, parseLiveRequest, type LiveRefusal } from './request.js';
import { statusResponse } from './status.js';

/** A live API handler. */
export type LiveHttpHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** How late an answer may be, past its deadline, before it counts as `LiveOverDeadline` (ms). */
export const LIVE_ANSWER_SLACK_MS = 250;

/** Options of {@link createLiveHandler}. */
export interface LiveHandlerOptions {
  /**
   * Says what is wrong with the lane's configuration (an unusable provider secret), or `undefined`.
   * While it is wrong, a checked job is handed over at once (the queue lane waits for the fix).
   */
  checkConfiguration?: (() => Promise<string | undefined>) | undefined;
  /** Traces each invocation (X-Ray, in Lambda: `lib/platform/tracing.ts`). */
  tracer?: Tracer | undefined;
}

/** Builds the live handler from its dependencies. */
export function createLiveHandler(deps: LiveDeps, options: LiveHandlerOptions = {}): LiveHttpHandler {
  const base = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const method = event.requestContext?.http?.method ?? 'GET';
    const route = event.routeKey ?? `${method} ${event.rawPath}`;
    const routes = [`POST ${LIVE_ROUTES.extractions}`, `GET ${LIVE_ROUTES.extraction}`, `DELETE ${LIVE_ROUTES.extraction}`, `POST ${LIVE_ROUTES.cancel}`];
    if (!routes.includes(route)) {
      return jsonResponse(404, { message: 'Not Found', code: 'route_not_found' });
    }
    const tenant = callerTenant(event);
    if (tenant === undefined) {
      // API Gateway's IAM authorizer always names the caller: without one the route is not authorized as deployed.
      log(deps, 'error', 'live request without an IAM principal', { lane: deps.lane.name, outcome: 'rejected', detail: route });
      return jsonResponse(403, { status: 'rejected', code: 'no_principal', reason: 'no_principal', detail: 'the request names no IAM principal' });
    }
    if (route === `GET ${LIVE_ROUTES.extraction}`) {
      deps.metrics.addMetric('LiveStatusReads', MetricUnit.Count, 1);
      return statusResponse(event.pathParameters?.jobId, deps, readerFor(tenant, deps.lane.live.readers));
    }
    if (route === `DELETE ${LIVE_ROUTES.extraction}`) return eraseResponse(event.pathParameters?.jobId, tenant, deps);
    if (route === `POST ${LIVE_ROUTES.cancel}`) return cancelResponse(event.pathParameters?.jobId, tenant, deps);
    try {
      return await extraction(event, tenant, deps, options);
    } catch (error) {
      // Nothing was handed over: the caller repeats the request (same source, same idempotency key).
      deps.metrics.addMetric('LiveRequests', MetricUnit.Count, 1);
      deps.metrics.addMetric('LiveServerError', MetricUnit.Count, 1);
      log(deps, 'error', 'live request failed before a job could be run', {
        lane: deps.lane.name,
        outcome: 'failed',
        error: errorName(error),
        detail: shortMessage(error),
      });
      return unavailableResponse();
    }
  };
  const handler = middy(base);
  if (options.tracer) handler.use(traceInvocation(options.tracer));
  return handler.use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics)) as unknown as LiveHttpHandler;
}

/** `POST /v1/extractions`. */
async function extraction(
  event: APIGatewayProxyEventV2,
  tenant: string,
  deps: LiveDeps,
  options: LiveHandlerOptions,
): Promise<APIGatewayProxyStructuredResultV2> {
  const startedAt = deps.now().getTime();
  const live = deps.lane.live;
  const parsed = parseLiveRequest(event);
  const refused = parsed.ok ? (checkDeadline(parsed.request, live) ?? checkLane(parsed.request, deps.lane)) : parsed.refusal;
  const deadlineMs = effectiveDeadlineMs(parsed.ok ? parsed.request.deadlineMs : undefined, live);
  const budget = liveBudget({ arrivedAt: event.requestContext?.timeEpoch, startedAt, deadlineMs, handoverMarginMs: live.handoverMarginMs });
  if (refused || !parsed.ok) return refuse(refused ?? { reason: 'bad_input', detail: 'unreadable request' }, budget, deps);
  const request = parsed.request;

  let text = request.text;
  if (request.documentRef) {
    const read = await readReferencedText(deps, request.documentRef, budget);
    if (!read.ok) return refuse(read.refusal, budget, deps);
    text = read.text;
  }
  const prepared = await prepareDocument(
    {
      text,
      sourceId: request.sourceId ?? request.documentRef?.key,
      region: deps.lane.name,
      tenant,
      schemaVersion: request.schemaVersion,
      promptVersion: request.promptVersion,
    },
    0,
    { lanes: { [deps.lane.name]: deps.lane } },
    deps.now(),
  );
  if (!('job' in prepared)) return refuse({ reason: prepared.reason, detail: prepared.detail }, budget, deps);

  const problem = await options.checkConfiguration?.().catch(() => undefined);
  const answer: LiveAnswer =
    problem === undefined
      ? await runLive({ job: prepared.job, text: prepared.text }, budget, event.requestContext?.requestId ?? prepared.job.jobId, deps)
      : await handOver({ job: prepared.job, delaySeconds: 0, reason: 'configuration', detail: problem }, budget, deps);
  return answered(answer, budget, deps, event.requestContext?.domainName);
}

/** A refusal before any job existed (no model call). */
function refuse(refusal: LiveRefusal, budget: LiveBudget, deps: LiveDeps): APIGatewayProxyStructuredResultV2 {
  if (refusal.reason === 'region_mismatch') count(deps, 'RegionMismatch');
  log(deps, 'warn', 'live request refused', { lane: deps.lane.name, outcome: 'rejected', reason: refusal.reason, detail: refusal.detail });
  record(deps, 'LiveRejected', budget);
  return refusalResponse(refusal);
}

const ANSWER_METRICS: Readonly<Record<LiveAnswer['status'], LiveMetricName>> = {
  committed: 'LiveCommitted',
  pending: 'LivePending',
  needs_review: 'LiveNeedsReview',
  rejected: 'LiveRejected',
  error: 'LiveServerError',
};

function answered(answer: LiveAnswer, budget: LiveBudget, deps: LiveDeps, domainName: string | undefined): APIGatewayProxyStructuredResultV2 {
  const latency = record(deps, ANSWER_METRICS[answer.status], budget);
  log(deps, answer.status === 'error' ? 'error' : 'info', 'live answer', {
    lane: deps.lane.name,
    jobId: answer.jobId,
    outcome: answer.status === 'committed' ? 'committed' : answer.status === 'pending' ? 'deferred' : answer.status === 'error' ? 'failed' : answer.status,
    // An error's detail is for the log only (the caller gets a code: `answer.ts`); a hand-over's is logged where it is sent.
    detail: `${answer.status} in ${latency} ms of ${budget.deadlineMs}${answer.status === 'error' ? `: ${answer.detail}` : ''}`,
  });
  return answerResponse(answer, domainName);
}

/** Counts one answer, its latency and whether it was late; returns the latency (ms). */
function record(deps: LiveDeps, metric: LiveMetricName, budget: LiveBudget): number {
  const now = deps.now().getTime();
  const latency = Math.max(0, now - budget.arrivedAt);
  deps.metrics.addMetric('LiveRequests', MetricUnit.Count, 1);
  deps.metrics.addMetric(metric, MetricUnit.Count, 1);
  deps.metrics.addMetric('LiveLatencyMs', MetricUnit.Milliseconds, latency);
  deps.metrics.addMetric('LiveOverDeadline', MetricUnit.Count, overDeadline(budget, now, LIVE_ANSWER_SLACK_MS) ? 1 : 0);
  return latency;
}
