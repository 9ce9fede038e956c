/**
 * Following one job across the lane with AWS X-Ray: the lane functions run with active tracing and a
 * Powertools Tracer (their invocation, their AWS SDK calls and their HTTP calls to the provider as
 * subsegments; no request or response bodies), and a job's trace context travels with it — the producer
 * sends each job's message with the `AWSTraceHeader` system attribute of its own trace (its Lambda's
 * `_X_AMZN_TRACE_ID`, or the header it was given), SQS hands it to the consumer (the record's
 * `attributes.AWSTraceHeader`, which X-Ray links the consumer's trace to), and every message the lane sends
 * on for the job (a deferral's re-send, a repair, a hand-over, the DLQ) carries the same header. The trace
 * id is on every log line and ledger entry of the job, and on its committed result. The Tracer itself is
 * made by the functions' entry points only (`lane-tracer.ts`): this module loads no X-Ray SDK.
 */
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type middy from '@middy/core';

/** The SQS message system attribute of a trace header (the only one SQS takes). */
const TRACE_HEADER_ATTRIBUTE = 'AWSTraceHeader';

/** An X-Ray trace header: `Root=1-<8 hex>-<24 hex>`, then `;Parent=…;Sampled=…` and such, in at most 256 characters. */
const TRACE_HEADER = /^Root=1-[0-9a-f]{8}-[0-9a-f]{24}(;[A-Za-z]+=[A-Za-z0-9=_.-]{1,64}){0,8}$/;

/** `header` when it is a well-formed X-Ray trace header (anything from outside is checked), else `undefined`. */
export function traceHeaderOf(header: string | undefined): string | undefined {
  return header !== undefined && header.length <= 256 && TRACE_HEADER.test(header) ? header : undefined;
}

/** The trace id (`1-<8 hex>-<24 hex>`) of a well-formed trace header, else `undefined`. */
export function traceIdOf(header: string | undefined): string | undefined {
  return traceHeaderOf(header)?.slice('Root='.length, 'Root='.length + 35);
}

/** The trace header of the running Lambda invocation (`_X_AMZN_TRACE_ID`), when there is a well-formed one. */
export function currentTraceHeader(env: Record<string, string | undefined> = process.env): string | undefined {
  return traceHeaderOf(env._X_AMZN_TRACE_ID);
}

/** The `MessageSystemAttributes` of a message sent with `header` (none without one). */
export function traceSystemAttributes(header: string | undefined): {
  MessageSystemAttributes?: { AWSTraceHeader: { DataType: 'String'; StringValue: string } };
} {
  const checked = traceHeaderOf(header);
  return checked ? { MessageSystemAttributes: { [TRACE_HEADER_ATTRIBUTE]: { DataType: 'String', StringValue: checked } } } : {};
}

/**
 * The middy middleware that traces a lane function's invocation: its segment, cold start and errors, never
 * its response (a live answer carries the extracted result).
 */
export function traceInvocation(tracer: Tracer): middy.MiddlewareObj {
  return captureLambdaHandler(tracer, { captureResponse: false });
}
