/**
 * One long-lived consumer process of a lane against given endpoints (`ratelane consume`): the local
 * stack's consumer (`local-stack/consumer.ts`: the poller that plays the event source mapping, the
 * real handler, admission on the lane's rate-state table) without starting any service, the provider at
 * a given URL. Several such processes share one lane as a fleet does: the keys' quota through the
 * rate-state table, and the lane's pause and limit, which each process follows from that table
 * (whichever claimed it). It runs until its stop signal (SIGTERM or SIGINT in the command): then it
 * receives no more, lets the invocations in flight finish (at most the function timeout), and stops —
 * a record it had not settled comes back after its visibility timeout, as one of a Lambda function
 * that went away; nothing is lost.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLaneAdmission, type LaneAdmission } from '../../../lib/admission/index.js';
import { SharedKeyPool } from '../../../lib/admission/drivers/shared-key-pool.js';
import type { RateStateStore } from '../../../lib/admission/model/store.js';
import type { LaneConfig } from '../../../lib/config/lanes.js';
import type { ConsumerDeps, RecordTiming } from '../../../lib/lanes/queue/process-record.js';
import { createAwsClients, type ServiceEndpoints } from '../../../lib/platform/clients.js';
import { createModelAdapter } from '../../../lib/providers/index.js';
import { laneStores } from '../../../lib/store/lane-stores.js';
import { startLaneConsumer } from '../../local-stack/consumer.js';
import { TelemetrySink } from '../../local-stack/lambda/telemetry.js';
import { LocalLanePauseController, laneChangeLine } from '../../local-stack/pause.js';
import type { PollerEvent } from '../../local-stack/poller/events.js';
import { provisionLane } from '../../local-stack/services/provision.js';
import { localAdmissionSettings, localLaneKeys } from '../../local-stack/stack.js';
import { timedAcquires } from '../overrides.js';

/** What one consumer process runs with. */
export interface ConsumeOptions {
  /** The lane, as configured (its resources must exist at `endpoints`, or are created). */
  lane: LaneConfig;
  endpoints: ServiceEndpoints;
  /** The provider's base URL (absent: the lane's own). */
  providerUrl: string | undefined;
  /** The provider's minute and day as admission's buckets count them (ms). */
  minuteMs: number;
  dayMs: number | undefined;
  /** Invocations at once (the process's share of the lane's mapping). */
  concurrency: number;
  /** Admission off: round robin over the keys, no pause. */
  admission: boolean;
  /** How often the lane's pause and limit are read from the rate-state table (ms). */
  followMs: number;
  logFile: string | undefined;
  /** Every poller event, record timing, take and log line as one JSON object per line, for a supervising process. */
  onEvent?: ((event: ConsumerEvent) => void) | undefined;
  /** A line for the person running it (progress, changes). */
  say: (line: string) => void;
  /**
   * Poll only once this resolves (`--hold`): the process is ready — the lane's resources and queue
   * checked, admission set up — and waits, so a supervisor can start several processes at one moment.
   */
  startWhen?: Promise<void> | undefined;
}

/** What a consumer process reports while it runs (`--events`). */
export type ConsumerEvent =
  | { type: 'ready'; lane: string; pid: number; held: boolean }
  | { type: 'poller'; event: PollerEvent }
  | { type: 'timing'; timing: RecordTiming }
  | { type: 'take'; ms: number; at: number }
  | { type: 'log'; line: string }
  | { type: 'counts'; takes: number; conditionFailures: number };

/** What one consumer process did, for its summary. */
export interface ConsumeSummary {
  lane: string;
  pid: number;
  batches: number;
  records: number;
  deleted: number;
  failedRecords: number;
  committed: number;
  /** The invocations still running when it was told to stop (they finished, or were cut at the function timeout). */
  inFlightAtStop: number;
  /** Admission takes and the conditional bucket writes lost to another consumer. */
  takes: number;
  conditionFailures: number;
  runMs: number;
}

/** A {@link TelemetrySink} that also hands every line on. */
class ForwardingSink extends TelemetrySink {
  constructor(
    file: string | undefined,
    private readonly forward: (line: string) => void,
  ) {
    super(file);
  }

  override line(text: string): void {
    super.line(text);
    this.forward(text);
  }
}

/**
 * Applies the lane's pause and limit as recorded in the rate-state table to this process's poller:
 * the process that claimed one applied it already; the others learn it here.
 */
export async function followLane(store: RateStateStore, pause: LocalLanePauseController, now: number): Promise<void> {
  const [paused, limited] = await Promise.all([store.readPause(), store.readLimit()]);
  if (paused && paused.until > now && (!pause.state.paused || pause.state.until?.getTime() !== paused.until))
    await pause.pause(new Date(paused.until), paused.reason);
  if (limited && limited.until > now && (pause.state.share !== limited.share || pause.state.limitedUntil?.getTime() !== limited.until)) {
    await pause.limit(limited.share, new Date(limited.until), limited.reason);
  }
}

/** Runs one consumer process until `stop` aborts; resolves with what it did. */
export async function consume(options: ConsumeOptions, stop: AbortSignal): Promise<ConsumeSummary> {
  const started = Date.now();
  const emit = options.onEvent ?? (() => undefined);
  const lane: LaneConfig = options.providerUrl ? { ...options.lane, provider: { ...options.lane.provider, baseUrl: options.providerUrl } } : options.lane;
  const clients = createAwsClients(lane.region, options.endpoints);
  const telemetry = options.onEvent ? new ForwardingSink(options.logFile, (line) => emit({ type: 'log', line })) : new TelemetrySink(options.logFile);
  const counts: SharedKeyPool['counts'][] = [];
  let pause: LocalLanePauseController | undefined;
  let follower: NodeJS.Timeout | undefined;
  try {
    const provisioned = await provisionLane(lane, clients);
    const keys = localLaneKeys(lane);
    let poller: Awaited<ReturnType<typeof startLaneConsumer>>['poller'] | undefined;
    pause = options.admission ? new LocalLanePauseController(() => poller, { onChange: (state) => options.say(laneChangeLine(lane.name, state)) }) : undefined;
    const admission: LaneAdmission | undefined = options.admission
      ? createLaneAdmission({ lane, dynamodb: clients.dynamodb, keys, settings: localAdmissionSettings(options.minuteMs, options.dayMs), controller: pause })
      : undefined;
    const consumer = await startLaneConsumer({
      lane,
      provisioned,
      clients,
      endpoints: options.endpoints,
      keys,
      model: createModelAdapter(lane),
      stores: laneStores(lane, clients.dynamodb),
      admission,
      telemetry,
      maximumConcurrency: options.concurrency,
      overrideDeps: (deps: ConsumerDeps) => {
        if (deps.keys instanceof SharedKeyPool) counts.push(deps.keys.counts);
        if (!options.onEvent) return deps;
        return {
          ...deps,
          keys: timedAcquires(deps.keys, (ms, at) => emit({ type: 'take', ms, at })),
          onRecordTiming: (timing) => emit({ type: 'timing', timing }),
        };
      },
      onPollerEvent: (event) => emit({ type: 'poller', event }),
      startWhen: options.startWhen,
    });
    poller = consumer.poller;
    if (admission && pause) {
      const controller = pause;
      follower = setInterval(() => void followLane(admission.store, controller, Date.now()).catch(() => undefined), options.followMs);
    }
    emit({ type: 'ready', lane: lane.name, pid: process.pid, held: options.startWhen !== undefined });
    options.say(
      `ratelane consume: lane ${lane.name} (pid ${process.pid}), ${options.concurrency} invocation(s) x batch ${lane.queue.batchSize}, provider ${lane.provider.baseUrl ?? lane.provider.kind}; ` +
        `${options.startWhen ? 'held: polls once a line comes on stdin; ' : ''}SIGTERM or Ctrl-C stops it`,
    );
    const progress = setInterval(() => {
      const s = consumer.poller.stats;
      options.say(
        `  [${Math.round((Date.now() - started) / 1000)} s] ${s.records} record(s) in ${s.batches} batch(es), ${s.deleted} deleted, ${s.inFlight} invocation(s) in flight, committed ${telemetry.totals.total.Completed ?? 0}`,
      );
    }, 10_000);
    progress.unref();
    await new Promise<void>((resolve) => {
      if (stop.aborted) resolve();
      else stop.addEventListener('abort', () => resolve(), { once: true });
    });
    clearInterval(progress);
    if (follower) clearInterval(follower);
    const inFlightAtStop = consumer.poller.stats.inFlight;
    options.say(`ratelane consume: stopping — no more receives; ${inFlightAtStop} invocation(s) in flight finish (at most ${lane.consumer.timeoutSeconds} s)`);
    // Stop pulling and let what runs finish; past the function timeout, stop() cuts it as Lambda would.
    await Promise.race([consumer.poller.pause(), sleep(lane.consumer.timeoutSeconds * 1000 + 1000)]);
    await consumer.stop();
    const s = consumer.poller.stats;
    const takes = counts.reduce((n, c) => n + c.takes, 0);
    const conditionFailures = counts.reduce((n, c) => n + c.conditionFailures, 0);
    emit({ type: 'counts', takes, conditionFailures });
    return {
      lane: lane.name,
      pid: process.pid,
      batches: s.batches,
      records: s.records,
      deleted: s.deleted,
      failedRecords: s.failedRecords,
      committed: telemetry.totals.total.Completed ?? 0,
      inFlightAtStop,
      takes,
      conditionFailures,
      runMs: Date.now() - started,
    };
  } finally {
    if (follower) clearInterval(follower);
    pause?.dispose();
    await telemetry.close();
    clients.destroy();
  }
}
