/**
 * One consumer process of a lane on the local services: the poller that plays the Lambda SQS event
 * source mapping (on AWS clients of its own) in front of the real consumer handler, one handler
 * instance per concurrent invocation as Lambda keeps one execution environment per invocation in
 * flight. The local stack starts one or more per lane; `ratelane consume` runs one on its own.
 */
import { randomUUID } from 'node:crypto';
import { primedPool, type LaneAdmission } from '../../lib/admission/index.js';
import { roundRobinKeys, type ProviderKey } from '../../lib/admission/keys/key-pool.js';
import type { LaneConfig } from '../../lib/config/lanes.js';
import { createConsumerDeps, createConsumerTelemetry } from '../../lib/lanes/queue/deps.js';
import { createConsumerHandler, type SqsHandler } from '../../lib/lanes/queue/handler.js';
import type { ConsumerDeps } from '../../lib/lanes/queue/process-record.js';
import { createAwsClients, type AwsClients, type ServiceEndpoints } from '../../lib/platform/clients.js';
import { invocationAbortSignalOf } from '../../lib/platform/invocation.js';
import type { ModelAdapter } from '../../lib/providers/model.js';
import type { Ledger } from '../../lib/store/ledger.js';
import type { ResultStore } from '../../lib/store/results.js';
import { redirectPowertoolsConsole, type TelemetrySink } from './lambda/telemetry.js';
import type { PollerEvent } from './poller/events.js';
import { createEventSourcePoller, type EventSourcePoller } from './poller/poller.js';
import type { ProvisionedLane } from './services/provision.js';
import { FAUXQS_SENDER_ID } from './services/services.js';

/** Options of {@link startLaneConsumer}. */
export interface LaneConsumerOptions {
  /** The lane, its provider pointing where the calls go. */
  lane: LaneConfig;
  provisioned: Pick<ProvisionedLane, 'queueUrl' | 'queueArn' | 'dlqUrl'>;
  /** The consumer's own AWS clients (its stores, admission and re-sends). */
  clients: AwsClients;
  /** Where the poller's own clients connect (absent: AWS). */
  endpoints: ServiceEndpoints | undefined;
  keys: readonly ProviderKey[];
  model: ModelAdapter;
  stores: { results: ResultStore; ledger: Ledger };
  /** The lane's admission on these clients (absent: round robin over the keys, no pause). */
  admission: LaneAdmission | undefined;
  /** Where every handler instance's log lines and EMF documents go. */
  telemetry: TelemetrySink;
  /** This process's share of the mapping's maximum concurrency. */
  maximumConcurrency: number;
  /** Replaces each handler instance's dependencies (tests and the bench). */
  overrideDeps?: ((deps: ConsumerDeps) => ConsumerDeps) | undefined;
  /** Wraps the handler as the poller invokes it (the soak's crashes). */
  wrapHandler?: ((handler: SqsHandler) => SqsHandler) | undefined;
  onPollerEvent?: ((event: PollerEvent) => void) | undefined;
  /** Poll only once this resolves (the poller is checked and held until then: `EventSourcePoller.start`). */
  startWhen?: Promise<void> | undefined;
}

/** A running consumer process. */
export interface LaneConsumer {
  poller: EventSourcePoller;
  /** Stops the poller (running invocations are aborted and awaited, as `EventSourcePoller.stop`) and its clients. */
  stop(): Promise<void>;
}

/**
 * Several consumer instances behind one handler, as Lambda runs one execution environment per
 * concurrent invocation: each instance has its own Logger and Metrics, so nothing is shared between
 * two invocations in flight. A new instance is made (its INIT: `make`, awaited before it is handed
 * the batch) when all are busy or one was discarded.
 */
function pooledHandler(make: () => Promise<SqsHandler>): SqsHandler {
  const idle: SqsHandler[] = [];
  return async (event, context) => {
    const handler = idle.pop() ?? (await make());
    const response = await handler(event, context);
    // Only an instance whose invocation ended cleanly is reused: after a crash or timeout its work may
    // still be running, and Lambda would not hand that environment another batch either.
    if (!invocationAbortSignalOf(context)?.aborted) idle.push(handler);
    return response;
  };
}

/** Starts one consumer process of `options.lane`: resolves once its poller polls (with `startWhen`: once it is checked and held). */
export async function startLaneConsumer(options: LaneConsumerOptions): Promise<LaneConsumer> {
  const { lane, provisioned, clients, admission, telemetry } = options;
  const makeHandler = async (): Promise<SqsHandler> => {
    const { logger, metrics } = createConsumerTelemetry(lane);
    const sink = telemetry.console();
    redirectPowertoolsConsole(logger, sink);
    redirectPowertoolsConsole(metrics, sink);
    const deps = createConsumerDeps(lane, clients, {
      queueUrl: provisioned.queueUrl,
      dlqUrl: provisioned.dlqUrl,
      laneSenders: [FAUXQS_SENDER_ID],
      results: options.stores.results,
      ledger: options.stores.ledger,
      model: options.model,
      // Primed as the consumer Lambda's INIT primes its pool (`lambdas/consumer.ts`).
      keys: admission ? await primedPool(admission) : roundRobinKeys(options.keys),
      lanePause: admission?.pauser,
      logger,
      metrics,
    });
    return createConsumerHandler(options.overrideDeps ? options.overrideDeps(deps) : deps);
  };
  // The mapping is AWS's, not the function's: its receives and deletes never queue behind the
  // consumers' requests on their client's sockets.
  const pollerClients = createAwsClients(lane.region, options.endpoints);
  const handler = pooledHandler(makeHandler);
  const poller = createEventSourcePoller({
    sqs: pollerClients.sqs,
    queueUrl: provisioned.queueUrl,
    queueArn: provisioned.queueArn,
    awsRegion: lane.region,
    handler: options.wrapHandler ? options.wrapHandler(handler) : handler,
    batchSize: lane.queue.batchSize,
    maximumBatchingWindowSeconds: lane.queue.maxBatchingWindowSeconds,
    maximumConcurrency: options.maximumConcurrency,
    waitTimeSeconds: Math.max(1, lane.queue.receiveWaitTimeSeconds),
    functionTimeoutMs: lane.consumer.timeoutSeconds * 1000,
    functionName: `ratelane-${lane.name}-consumer-${randomUUID().slice(0, 8)}`,
    memoryLimitInMB: lane.consumer.memoryMb,
    ...(options.onPollerEvent ? { onEvent: options.onPollerEvent } : {}),
  });
  try {
    await poller.start(options.startWhen);
  } catch (error) {
    pollerClients.destroy();
    throw error;
  }
  return {
    poller,
    stop: async () => {
      await poller.stop();
      pollerClients.destroy();
    },
  };
}
