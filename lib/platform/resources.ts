/**
 * Names the runtime and the stack must agree on, beyond the tables (`lib/store/tables.ts`): where
 * documents live in a lane's bucket, and the resources a lane pause uses. The stack creates and grants
 * them under these names; the consumer finds them under the same.
 */

/** Key prefix of every stored document in a lane's bucket (the consumer may read only below it). */
export const DOCUMENT_PREFIX = 'documents/';

/** The lane's consumer function name. */
export function consumerFunctionName(lane: string): string {
  return `ratelane-${lane}-consumer`;
}

/** The lane's live API function name. */
export function liveFunctionName(lane: string): string {
  return `ratelane-${lane}-live`;
}

/** The lane's live HTTP API name. */
export function liveApiName(lane: string): string {
  return `ratelane-${lane}-live`;
}

/** The path of the live lane's extraction route, and of one job's state below it (`{jobId}`). */
export const LIVE_ROUTES = { extractions: '/v1/extractions', extraction: '/v1/extractions/{jobId}', cancel: '/v1/extractions/{jobId}/cancel' } as const;

/** The EventBridge Scheduler group that holds a lane's one-time resume schedules. */
export function pauseScheduleGroupName(lane: string): string {
  return `ratelane-${lane}-pause`;
}

/** The SSM parameter holding the UUID of a lane's SQS event source mapping (what a pause disables). */
export function mappingIdParameterName(lane: string): string {
  return `/ratelane/${lane}/consumer/event-source-mapping-id`;
}
