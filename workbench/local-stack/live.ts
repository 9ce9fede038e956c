/**
 * The live lane locally: per lane, the live handler (the same one the lane's live function runs)
 * behind the local HTTP adapter that plays API Gateway's HTTP API on a loopback port, with admission
 * on the lane's live reserve. Like Lambda, one handler instance serves one request at a time; more
 * instances are made for concurrent requests.
 */
import { primedPool, type LaneAdmission } from '../../lib/admission/index.js';
import { roundRobinKeys, type ProviderKey } from '../../lib/admission/keys/key-pool.js';
import type { AwsClients } from '../../lib/platform/clients.js';
import type { LaneConfig } from '../../lib/config/lanes.js';
import { liveFunctionTimeoutSeconds } from '../../lib/config/live.js';
import { createLaneTelemetry } from '../../lib/extraction/deps.js';
import { createLiveDeps } from '../../lib/lanes/live/deps.js';
import { createLiveHandler, type LiveHttpHandler } from '../../lib/lanes/live/handler.js';
import type { ModelAdapter } from '../../lib/providers/model.js';
import { liveServiceName } from '../../lib/platform/telemetry.js';
import type { Ledger } from '../../lib/store/ledger.js';
import type { ResultStore } from '../../lib/store/results.js';
import { startLiveHttpServer, type LiveHttpServer } from './lambda/http-adapter.js';
import { redirectPowertoolsConsole, type TelemetrySink } from './lambda/telemetry.js';

/** What a lane's local live API is built from. */
export interface LocalLiveInput {
  lane: LaneConfig;
  clients: AwsClients;
  queueUrl: string;
  results: ResultStore;
  ledger: Ledger;
  model: ModelAdapter;
  keys: readonly ProviderKey[];
  /** The lane's admission on its live reserve (absent: round robin, no shared state). */
  admission: LaneAdmission | undefined;
  /** Where the live functions' logs and metrics go. */
  telemetry: TelemetrySink;
}

/** Serves one lane's live API on a loopback port. */
export async function startLocalLive(input: LocalLiveInput): Promise<LiveHttpServer> {
  const { lane } = input;
  const make = async (): Promise<LiveHttpHandler> => {
    const { logger, metrics } = createLaneTelemetry(lane, { serviceName: liveServiceName(lane) });
    const sink = input.telemetry.console();
    redirectPowertoolsConsole(logger, sink);
    redirectPowertoolsConsole(metrics, sink);
    const deps = createLiveDeps(lane, input.clients, {
      queueUrl: input.queueUrl,
      results: input.results,
      ledger: input.ledger,
      model: input.model,
      // Primed as the live Lambda's INIT primes its pool (`lambdas/live.ts`).
      keys: input.admission ? await primedPool(input.admission) : roundRobinKeys(input.keys),
      logger,
      metrics,
    });
    return createLiveHandler(deps);
  };
  return startLiveHttpServer({ handler: pooled(make), timeoutMs: liveFunctionTimeoutSeconds(lane.live) * 1000 });
}

/** One handler instance per request in flight, reused when idle (one Lambda environment per concurrent request; `make` is its INIT). */
function pooled(make: () => Promise<LiveHttpHandler>): LiveHttpHandler {
  const idle: LiveHttpHandler[] = [];
  return async (event, context) => {
    const handler = idle.pop() ?? (await make());
    try {
      return await handler(event, context);
    } finally {
      idle.push(handler);
    }
  };
}
