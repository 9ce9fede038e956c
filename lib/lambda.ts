/**
 * `ratelane/lambda`: the lane functions' handlers, for teams who bring their own functions (their own
 * runtime settings, layers, wrappers). Two levels:
 * - `*HandlerFromEnvironment()`: the handler as ratelane's own functions build it, from the environment
 *   the lane stack sets (call it once per execution environment, e.g. at module load);
 * - `create*Handler(deps)` with `create*Deps(lane, clients, wiring)`: the same handler from your own
 *   clients, key pool, model adapter or telemetry.
 *
 * ```ts
 * import { consumerHandlerFromEnvironment } from 'ratelane/lambda';
 * const built = consumerHandlerFromEnvironment();
 * export const handler = async (event, context) => (await built)(event, context);
 * ```
 */
export { consumerHandlerFromEnvironment, ConsumerEnvironmentError } from './lanes/queue/from-environment.js';
export { createConsumerHandler, type SqsHandler } from './lanes/queue/handler.js';
export { createConsumerDeps, type ConsumerWiring } from './lanes/queue/deps.js';
export { liveHandlerFromEnvironment, LiveEnvironmentError } from './lanes/live/from-environment.js';
export { createLiveHandler, type LiveHttpHandler } from './lanes/live/handler.js';
export { createLiveDeps, type LiveWiring } from './lanes/live/deps.js';
export { batchReconcilerHandlerFromEnvironment } from './lanes/batch/from-environment.js';
export { type BatchReconcilerHandler, type BatchSweepSummary, createBatchReconcilerHandler } from './lanes/batch/reconciler-handler.js';
export { BatchReconcilerConfigurationError, createBatchReconcilerDeps, type BatchReconcilerWiring } from './lanes/batch/reconciler-deps.js';
export { CONSUMER_ENV, LIVE_ENV } from './platform/environment.js';
