/**
 * The local stack as a library: DynamoDB Local and fauxqs on free loopback ports, every lane's
 * resources created in its own region, the fake model provider, and per lane one or more consumer
 * processes (`consumer.ts`: a poller that plays the Lambda SQS event source mapping in front of the
 * real consumer handler). `stop()` (also run on Ctrl-C) stops everything it started.
 */
import { createLaneAdmission, type AdmissionSettings, type LaneAdmission } from '../../lib/admission/index.js';
import { LocalLanePauseController, type LocalPauseState } from './pause.js';
import type { LaneConfig, LaneSet } from '../../lib/config/lanes.js';
import type { SqsHandler } from '../../lib/lanes/queue/handler.js';
import type { ProviderKey } from '../../lib/admission/keys/key-pool.js';
import type { ConsumerDeps } from '../../lib/lanes/queue/process-record.js';
import { createModelAdapter } from '../../lib/providers/index.js';
import { laneKeysVariable, loadLocalProviderKeys, PROVIDER_KEYS_FILE_VARIABLE } from './keys.js';
import type { Ledger } from '../../lib/store/ledger.js';
import type { ResultStore } from '../../lib/store/results.js';
import { createAwsClients, type AwsClients, type ServiceEndpoints } from '../../lib/platform/clients.js';
import { RatelaneError } from '../../lib/platform/errors.js';
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from '../fake-provider/index.js';
import { extractForSchema } from '../fake-provider/extractors/extractors.js';
import type { EventSourcePoller } from './poller/poller.js';
import { startLaneConsumer } from './consumer.js';
import type { PollerEvent } from './poller/events.js';
import { onShutdown } from './services/processes.js';
import { provisionLane, type ProvisionedLane } from './services/provision.js';
import { startDynamoLocal, startFauxqsLocal, type DynamoLocal, type FauxqsLocal } from './services/services.js';
import { TelemetrySink } from './lambda/telemetry.js';
import type { LiveHttpServer } from './lambda/http-adapter.js';
import { startLocalLive } from './live.js';
import { marginForSkew } from '../../lib/admission/config/settings.js';
import { laneStores } from '../../lib/store/lane-stores.js';

/**
 * The skew between admission's buckets and the fake provider's that a local run absorbs (ms): this
 * machine's timers, event loop and DynamoDB Local writes drift by up to a few hundred ms under load
 * (the bench's event-loop delay reaches 80-100 ms, a take's p99 100 ms and more), where a real
 * minute's 5 % margin absorbs 3 s.
 */
const LOCAL_SKEW_TOLERANCE_MS = 500;

/**
 * How long a lease lasts on the local stack (`AdmissionSettings.leaseMs`): its margin absorbs this on
 * top of {@link LOCAL_SKEW_TOLERANCE_MS}, since a leased call may reach the provider this much later.
 */
export const LOCAL_LEASE_MS = 250;

/**
 * Admission's settings on the local stack: the buckets' window and day follow the fake provider's
 * scaled minute and day; the margin keeps the skew tolerance a real minute's 5 % gives at least
 * {@link LOCAL_SKEW_TOLERANCE_MS} on a scaled one, plus the lease's validity (a leased call may reach
 * the provider that much later); `given` on top.
 */
export function localAdmissionSettings(windowMs: number, dayMs: number | undefined, given: Partial<AdmissionSettings> = {}): Partial<AdmissionSettings> {
  const safetyMargin = marginForSkew(windowMs, LOCAL_SKEW_TOLERANCE_MS + LOCAL_LEASE_MS);
  return { windowMs, dayMs: dayMs ?? windowMs * 1440, safetyMargin, leaseMs: LOCAL_LEASE_MS, ...given };
}

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  lanes: LaneSet;
  /**
   * Fake provider settings; keys are derived from each lane's configured key ids, and the model is
   * {@link extractForSchema}. `modelErrors` makes it err on hard shapes per prompt version (absent: never).
   */
  provider?: Omit<FakeProviderOptions, 'keys' | 'extract'> & { outOfCreditKeys?: string[] };
  /** Start the pollers and consumers (default true). */
  consumers?: boolean;
  /**
   * Consumer processes per lane (default 1): each its own poller, AWS clients, admission store and
   * handler instances, sharing the lane's queue, keys and tables, the lane's `maximumConcurrency` split
   * between them, each at least 2 (AWS's minimum per mapping; the bench's `two-consumers` scenario). A
   * lane pause pauses them all.
   */
  consumerProcesses?: number;
  /** Copy every consumer log line and EMF document to this file. */
  logFile?: string;
  /** Reuse services already running (tests share one DynamoDB Local and fauxqs per run). */
  endpoints?: ServiceEndpoints;
  /** Replace a lane's consumer dependencies (tests inject a failing adapter or clock). */
  overrideDeps?: (lane: LaneConfig, deps: ConsumerDeps) => ConsumerDeps;
  /** Wraps each lane's handler as the poller invokes it (the soak's crashes end an invocation so). */
  wrapHandler?: (lane: LaneConfig, handler: SqsHandler) => SqsHandler;
  /** Poller events, per lane. */
  onPollerEvent?: (lane: string, event: PollerEvent) => void;
  /**
   * Admission (shared key pool, token buckets, lane pause): on by default, with the buckets' window
   * and day taken from the fake provider's `minuteMs` and `dayMs`, so a scaled run scales both.
   * `false`: every call is admitted round robin (no shared state, no pause).
   */
  admission?: false | { settings?: Partial<AdmissionSettings> };
  /** Lane pause changes, per lane. */
  onLanePause?: (lane: string, state: LocalPauseState) => void;
  /** Serve each lane's live API on a loopback port (default false). */
  live?: boolean;
  /**
   * Call the provider each lane is configured with (its kind, base URL and model) instead of the fake
   * provider, with the keys from `RATELANE_<LANE>_PROVIDER_KEYS` or the keys file (required: no local
   * key is ever sent to a real provider). The fake provider still starts, unused.
   */
  realProvider?: boolean;
}

/** One running lane. */
export interface LocalLane extends ProvisionedLane {
  clients: AwsClients;
  results: ResultStore;
  ledger: Ledger;
  /** The lane's poller (the first consumer process's, with {@link LocalStackOptions.consumerProcesses}). */
  poller: EventSourcePoller | undefined;
  /** Every consumer process's poller. */
  pollers: EventSourcePoller[];
  /** The lane's admission (absent with `admission: false`). */
  admission: LaneAdmission | undefined;
  /** The local lane pause (poller pause + timed resume). */
  pause: LocalLanePauseController | undefined;
  /** The lane's live API (with `live: true`). */
  live?: LiveHttpServer | undefined;
}

/** A running local stack. */
export interface LocalStack {
  endpoints: ServiceEndpoints;
  provider: FakeProvider;
  telemetry: TelemetrySink;
  lanes: Record<string, LocalLane>;
  /** The fauxqs server, for non-destructive queue inspection. */
  fauxqs: FauxqsLocal | undefined;
  /** PIDs of the child processes this stack started (DynamoDB Local), for operators and tests. */
  childPids: number[];
  stop(): Promise<void>;
}

/** The local secret of a lane's key id (what the lane's Secrets Manager secret holds in AWS). */
export function localKeySecret(lane: string, keyId: string): string {
  return `sk-local-${lane}-${keyId}`;
}

/**
 * A lane's provider keys locally: from `RATELANE_<LANE>_PROVIDER_KEYS` or the keys file when one is
 * set (as for a real provider; see `loadLocalProviderKeys`), else generated local secrets. The fake
 * provider accepts exactly these keys.
 */
export function localLaneKeys(lane: LaneConfig, env: Readonly<Record<string, string | undefined>> = process.env): ProviderKey[] {
  const given = env[laneKeysVariable(lane.name)] !== undefined || env[PROVIDER_KEYS_FILE_VARIABLE] !== undefined;
  if (given) return loadLocalProviderKeys(lane, env);
  return lane.provider.keys.map((k) => ({ id: k.id, quotaOwner: k.quotaOwner, secret: localKeySecret(lane.name, k.id) }));
}

/** Raised when a lane's provider kind has no local stand-in. */
class UnsupportedLocalProviderError extends RatelaneError {
  override name = 'UnsupportedLocalProviderError';
  readonly kind = 'config' as const;
  readonly retryable = false;
}

/**
 * Points a lane's provider at the fake provider, which speaks the OpenAI-compatible wire format
 * (under `/v1`) and Gemini's (under `/v1beta`).
 */
function withFakeProvider(lane: LaneConfig, provider: Pick<FakeProvider, 'baseUrl' | 'port'>): LaneConfig {
  const kind = lane.provider.kind;
  if (kind !== 'openai-compatible' && kind !== 'gemini') {
    throw new UnsupportedLocalProviderError(`lane ${lane.name}: the local fake provider speaks openai-compatible and gemini, not ${kind}`);
  }
  const baseUrl = kind === 'gemini' ? `http://127.0.0.1:${provider.port}` : provider.baseUrl;
  return { ...lane, provider: { ...lane.provider, baseUrl } };
}

/** Starts the local stack; on failure, stops whatever it had started. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const stoppers: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const fn of stoppers.splice(0).reverse()) {
      await fn().catch(() => undefined);
    }
  };
  const unregister = onShutdown(stop);
  try {
    let endpoints = options.endpoints;
    let fauxqs: FauxqsLocal | undefined;
    const childPids: number[] = [];
    if (!endpoints) {
      const [dynamo, sqs]: [DynamoLocal, FauxqsLocal] = await Promise.all([startDynamoLocal(), startFauxqsLocal()]);
      stoppers.push(
        () => dynamo.stop(),
        () => sqs.stop(),
      );
      if (dynamo.pid !== undefined) childPids.push(dynamo.pid);
      fauxqs = sqs;
      endpoints = { sqs: sqs.endpoint, s3: sqs.endpoint, dynamodb: dynamo.endpoint };
    }

    const laneList = Object.values(options.lanes);
    const laneKeys = new Map(laneList.map((lane) => [lane.name, options.realProvider ? loadLocalProviderKeys(lane) : localLaneKeys(lane)]));
    const outOfCredit = new Set(options.provider?.outOfCreditKeys ?? []);
    const provider = await startFakeProvider({
      ...options.provider,
      // A real provider's secrets never go to the (unused) fake provider.
      keys: options.realProvider
        ? [{ key: 'sk-local-unused' }]
        : laneList.flatMap((lane) =>
            (laneKeys.get(lane.name) ?? []).map((k) => ({ key: k.secret, quotaOwner: `${lane.name}:${k.quotaOwner}`, outOfCredit: outOfCredit.has(k.secret) })),
          ),
      extract: (text, schemaName) => extractForSchema(text, schemaName),
    });
    stoppers.push(() => provider.stop());

    const telemetry = new TelemetrySink(options.logFile);
    stoppers.push(() => telemetry.close());
    const lanes: Record<string, LocalLane> = {};
    for (const configured of laneList) {
      const lane = options.realProvider ? configured : withFakeProvider(configured, provider);
      const clients = createAwsClients(lane.region, endpoints);
      stoppers.push(async () => clients.destroy());
      const provisioned = await provisionLane(lane, clients);
      const { results, ledger } = laneStores(lane, clients.dynamodb);
      const keys: ProviderKey[] = laneKeys.get(lane.name) ?? [];
      const pollers: EventSourcePoller[] = [];
      const allPollers = {
        pause: async () => void (await Promise.all(pollers.map((p) => p.pause()))),
        resume: () => {
          for (const p of pollers) p.resume();
        },
        limit: (share: number) => {
          for (const p of pollers) p.limit(share);
        },
      };
      const pause =
        options.admission === false
          ? undefined
          : new LocalLanePauseController(() => (pollers.length > 0 ? allPollers : undefined), {
              ...(options.onLanePause ? { onChange: (state) => options.onLanePause?.(lane.name, state) } : {}),
            });
      if (pause) stoppers.push(async () => pause.dispose());
      const settings = localAdmissionSettings(
        options.provider?.minuteMs ?? 60_000,
        options.provider?.dayMs,
        options.admission === false ? undefined : options.admission?.settings,
      );
      const admissionOf = (side: 'queue' | 'live', controller?: LocalLanePauseController, aws: AwsClients = clients): LaneAdmission | undefined =>
        options.admission === false
          ? undefined
          : createLaneAdmission({
              lane,
              dynamodb: aws.dynamodb,
              keys,
              side,
              settings,
              controller,
            });
      const admission = admissionOf('queue', pause);
      lanes[lane.name] = { ...provisioned, lane, clients, results, ledger, poller: undefined, pollers, admission, pause };
      if (options.consumers === false) continue;

      const model = createModelAdapter(lane);
      if (options.live) {
        // The live lane never pauses the lane: no controller on its side.
        const live = await startLocalLive({
          lane,
          clients,
          queueUrl: provisioned.queueUrl,
          results,
          ledger,
          model,
          keys,
          admission: admissionOf('live'),
          telemetry: new TelemetrySink(options.logFile),
        });
        stoppers.push(() => live.stop());
        lanes[lane.name] = { ...lanes[lane.name]!, live };
      }
      // One consumer process: its own AWS clients (the first uses the lane's), stores, admission and handlers.
      const processes = Math.max(1, Math.floor(options.consumerProcesses ?? 1));
      const total = lane.consumer.maximumConcurrency;
      for (let index = 0; index < processes; index++) {
        const aws = index === 0 ? clients : createAwsClients(lane.region, endpoints);
        if (index > 0) stoppers.push(async () => aws.destroy());
        const consumer = await startLaneConsumer({
          lane,
          provisioned,
          clients: aws,
          endpoints,
          keys,
          model,
          stores: index === 0 ? { results, ledger } : laneStores(lane, aws.dynamodb),
          admission: index === 0 ? admission : admissionOf('queue', pause, aws),
          telemetry,
          // The lane's concurrency, split between its processes (each at least AWS's minimum per mapping, 2).
          maximumConcurrency: Math.max(2, Math.floor(total / processes) + (index < total % processes ? 1 : 0)),
          ...(options.overrideDeps ? { overrideDeps: (deps: ConsumerDeps) => options.overrideDeps!(lane, deps) } : {}),
          ...(options.wrapHandler ? { wrapHandler: (handler: SqsHandler) => options.wrapHandler!(lane, handler) } : {}),
          ...(options.onPollerEvent ? { onPollerEvent: (event: PollerEvent) => options.onPollerEvent?.(lane.name, event) } : {}),
        });
        stoppers.push(() => consumer.stop());
        pollers.push(consumer.poller);
      }
      lanes[lane.name] = { ...lanes[lane.name]!, poller: pollers[0] };
    }
    return {
      endpoints,
      provider,
      telemetry,
      lanes,
      fauxqs,
      childPids,
      stop: async () => {
        unregister();
        await stop();
      },
    };
  } catch (error) {
    unregister();
    await stop();
    throw error;
  }
}
