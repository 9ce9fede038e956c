/**
 * The discrete-event simulation: one lane (queue + DLQ, consumers, provider, admission) in virtual
 * time, driven by a binary heap of events. Per record it runs the consumer's flow of
 * `lib/consumer/process-record.ts` with the project's own pure policy (`gateBeforeCall`, `decide`)
 * and, for strategy (c), admission built on `lib/admission`'s pure functions (see
 * `admission-model.ts`).
 *
 * Consumers model the SQS event source mapping with `MaximumConcurrency` = `consumers`: each
 * receives a batch of up to 10, handles its records in parallel (each record: gate, duplicate check,
 * admission, model call, commit or deferral), and polls again when the slowest record is done. A
 * record's effects are applied when its batch is received, stamped with the times they happen at
 * (the re-send at the end of the record, the visibility change when the call failed), because
 * nothing else can observe the record's message in between. What other consumers can observe (a
 * key's cooldown, a lane pause, the token correction after a call) is applied by its own event at
 * the time it happens.
 *
 * Jobs and messages live in typed arrays (no object or closure per job); a run of 1,000,000 jobs
 * holds ~100 MB.
 */
import { DEFAULT_ADMISSION_SETTINGS } from '../admission/settings.js';
import { DEFAULT_LANES } from '../config/lanes.js';
import { decide, gateBeforeCall, isoAt, type Action, type BackoffSettings, type Cooldown, type DeferAction, type JobOutcome, type JobScheduling, type LanePause } from '../policy/index.js';
import { AdmissionModel, type AdmissionCounters } from './admission-model.js';
import { costPerMillionJobs, type CostPerMillion, type Usage } from './cost.js';
import { withFastDates } from './fast-dates.js';
import { TimeHeap } from './heap.js';
import { CALL_OK, CALL_QUOTA, CALL_RATE_LIMIT, ProviderModel, type ProviderCounters } from './provider-model.js';
import { Rng } from './rng.js';
import { quotaBoundMs, type Scenario } from './scenarios.js';
import { SqsModel, type SqsCounters } from './sqs-model.js';
import { outcomeForError, type Strategy } from './strategies.js';

/** How long the steps of a record take (virtual ms). */
export interface Timing {
  /** Receive → the model call starts: parse, gate, duplicate-check GetItem, S3 read, admission. */
  preCallMs: number;
  /** A successful call: triangular between these (mean halfway). */
  okLatencyMinMs: number;
  okLatencyMaxMs: number;
  /** A 429 answer: uniform between these. */
  throttleLatencyMinMs: number;
  throttleLatencyMaxMs: number;
  /** A real failure (5xx or timeout): uniform between these. */
  failureLatencyMinMs: number;
  failureLatencyMaxMs: number;
  /** After the call: the commit or the re-send and ledger write. */
  afterCallMs: number;
  /** A hop (not yet eligible) or an admission denial: receive → re-send done. */
  quickRecordMs: number;
  /** Handler overhead per invocation (middy, batch response). */
  invocationOverheadMs: number;
  /** Between the end of an invocation and the mapping's next receive for that slot. */
  pollGapMs: number;
  /** EventBridge Scheduler's precision: a resume runs up to this late (uniform). */
  schedulerJitterMs: number;
}

/** Everything a run needs besides the scenario and the strategy. */
export interface SimSettings {
  jobs: number;
  /** MaximumConcurrency of the mapping (2..1000 in AWS). */
  consumers: number;
  /** Records per receive (1..10). */
  batchSize: number;
  maxReceiveCount: number;
  visibilityTimeoutSeconds: number;
  backoff: BackoffSettings;
  /** Chance a call admitted by the provider fails for real (5xx / timeout). */
  failureRate: number;
  seed: number;
  /** Message body size (bytes) for SQS's 64 KiB billing chunks. */
  messageBytes: number;
  lambdaMemoryMb: number;
  /** Pollers that keep long-polling (20 s) while the queue has nothing visible. */
  idlePollers: number;
  /** Prompt tokens per job: uniform integer in [min, max]. */
  inputTokensMin: number;
  inputTokensMax: number;
  /** Completion tokens per job: uniform integer in [min, max]. */
  outputTokensMin: number;
  outputTokensMax: number;
  /** Stop after this much virtual time (jobs not done by then count as unfinished). */
  horizonMs: number;
  /**
   * Strategy (c): completion tokens admission assumes before a consumer's first calls answer (lib/admission
   * default 512); each consumer then learns the estimate from the usage its calls report.
   */
  admissionOutputTokenEstimate: number;
  timing: Timing;
}

const LANE_DEFAULTS = DEFAULT_LANES.us!;

export const DEFAULT_TIMING: Timing = Object.freeze({
  preCallMs: 30,
  okLatencyMinMs: 1000,
  okLatencyMaxMs: 3000,
  throttleLatencyMinMs: 100,
  throttleLatencyMaxMs: 400,
  failureLatencyMinMs: 200,
  failureLatencyMaxMs: 3000,
  afterCallMs: 20,
  quickRecordMs: 20,
  invocationOverheadMs: 10,
  pollGapMs: 20,
  schedulerJitterMs: 60_000,
});

/** The defaults: the scale, the lane config's queue, backoff and memory settings. */
export const DEFAULT_SIM_SETTINGS: SimSettings = Object.freeze({
  jobs: 1_000_000,
  consumers: 1000,
  batchSize: LANE_DEFAULTS.queue.batchSize,
  maxReceiveCount: LANE_DEFAULTS.queue.maxReceiveCount,
  visibilityTimeoutSeconds: LANE_DEFAULTS.queue.visibilityTimeoutSeconds,
  backoff: { ...LANE_DEFAULTS.backoff },
  failureRate: 0.001,
  seed: 1,
  messageBytes: 1024,
  lambdaMemoryMb: LANE_DEFAULTS.consumer.memoryMb,
  idlePollers: 5,
  inputTokensMin: 200,
  inputTokensMax: 1000,
  outputTokensMin: 50,
  outputTokensMax: 250,
  horizonMs: 30 * 86_400_000,
  admissionOutputTokenEstimate: DEFAULT_ADMISSION_SETTINGS.outputTokenEstimate,
  timing: DEFAULT_TIMING,
});

/** Progress of a running simulation. */
export interface SimProgress {
  virtualMs: number;
  terminal: number;
  jobs: number;
  events: number;
  modelCalls: number;
}

/** Figures of one strategy in one scenario. */
export interface StrategyResult {
  scenario: string;
  strategy: string;
  label: string;
  jobs: number;
  completed: number;
  deadLettered: number;
  rejected: number;
  /** Jobs neither settled nor in the queue (must be 0). */
  lost: number;
  /** Jobs still queued when the horizon ended the run. */
  unfinished: number;
  /** First job received → last job settled (committed, dead-lettered or rejected), ms. */
  drainMs: number;
  boundMs: number;
  drainOverBound: number;
  modelCalls: number;
  callsPerCompletion: number;
  rateLimited: number;
  quotaExhausted: number;
  failedCalls: number;
  /** Calls that did not produce a completion: 429s and failed calls. */
  wastedCalls: number;
  /** Records delivered to consumers. */
  receives: number;
  /** Re-sends of jobs not yet eligible (waits past 900 s). */
  hops: number;
  /** Re-sends after a throttle or an admission denial. */
  deferrals: number;
  admissionDenials: number;
  lanePauses: number;
  usage: Usage;
  costPerMillion: CostPerMillion;
  sqs: SqsCounters;
  provider: ProviderCounters;
  admission: AdmissionCounters | null;
  events: number;
  wallMs: number;
}

const EV_DONE = 0;
const EV_WAKE = 1;
const EV_SIDE = 2;
const EV_SETTLE = 3;
const EV_RESUME = 4;

const ST_PENDING = 0;
const ST_COMMITTED = 1;
const ST_DEAD = 2;
const ST_REJECTED = 3;

const LANE = 'us';
const LONG_POLL_MS = 20_000;

interface SideEffect {
  consumer: number;
  key: number;
  cooldown: Cooldown | undefined;
  pauseLane: LanePause | undefined;
}

/** Runs one strategy on one scenario. */
export function simulate(
  scenario: Scenario,
  strategy: Strategy,
  settings: SimSettings = DEFAULT_SIM_SETTINGS,
  hooks: { onProgress?: (progress: SimProgress) => void; progressIntervalMs?: number } = {},
): StrategyResult {
  return withFastDates(() => new Simulation(scenario, strategy, settings, hooks).run());
}

class Simulation {
  private readonly N: number;
  private readonly timing: Timing;
  private readonly sqs: SqsModel;
  private readonly provider: ProviderModel;
  private readonly admission: AdmissionModel | null;
  private readonly events = new TimeHeap(4096);
  // jobs
  private readonly attempt: Uint16Array;
  private readonly deferralsOf: Uint32Array;
  private readonly eligibleAt: string[];
  private readonly inputTokens: Uint16Array;
  private readonly outputTokens: Uint16Array;
  private readonly status: Uint8Array;
  private readonly settleKey: Int8Array;
  private readonly settleTaken: Float64Array;
  private readonly settleConsumer: Int32Array;
  private totalTokens = 0;
  // consumers
  private readonly idle: Int32Array;
  private idleCount = 0;
  private readonly buf = new Int32Array(10);
  private readonly deleteBuf = new Int32Array(10);
  private kept = false;
  private wakeAt = Infinity;
  private paused = false;
  private pausedUntil = 0;
  private idleMark: number;
  private idlePollMs = 0;
  // randomness
  private readonly latencyRng: Rng;
  private readonly policyRng: Rng;
  private readonly failureRng: Rng;
  private readonly schedulerRng: Rng;
  private keyCursor = 0;
  private readonly sides: (SideEffect | undefined)[] = [];
  private readonly freeSides: number[] = [];
  // counters
  private completed = 0;
  private deadLettered = 0;
  private rejected = 0;
  private terminal = 0;
  private lastSettled: number;
  private firstReceive = Infinity;
  private receives = 0;
  private hops = 0;
  private deferrals = 0;
  private admissionDenials = 0;
  private lanePauses = 0;
  private schedules = 0;
  private dynamoReads = 0;
  private dynamoWrites = 0;
  private invocations = 0;
  private gbMs = 0;
  private eventCount = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly strategy: Strategy,
    private readonly settings: SimSettings,
    private readonly hooks: { onProgress?: (progress: SimProgress) => void; progressIntervalMs?: number },
  ) {
    const N = settings.jobs;
    if (!Number.isInteger(N) || N < 1 || N >= 2 ** 28) throw new RangeError(`jobs must be an integer in 1..2^28, got ${N}`);
    if (!Number.isInteger(settings.consumers) || settings.consumers < 1) throw new RangeError(`consumers must be a positive integer, got ${settings.consumers}`);
    if (!Number.isInteger(settings.batchSize) || settings.batchSize < 1 || settings.batchSize > 10) throw new RangeError(`batchSize must be 1..10, got ${settings.batchSize}`);
    this.N = N;
    this.timing = settings.timing;
    this.sqs = new SqsModel(
      {
        maxReceiveCount: settings.maxReceiveCount,
        visibilityTimeoutSeconds: settings.visibilityTimeoutSeconds,
        messageBytes: settings.messageBytes,
        onDeadLetter: (job, now) => this.settleJob(job, ST_DEAD, now),
      },
      Math.min(N + settings.consumers * 20 + 1024, 1 << 22),
    );
    this.provider = new ProviderModel({
      keys: scenario.keys,
      limits: scenario.limits,
      dailyResetOffsetMs: scenario.dailyResetOffsetMs,
      failureRate: settings.failureRate,
      start: scenario.start,
    });
    // Admission is configured with the provider's daily reset (the lane's setting; here 00:00 UTC).
    this.admission = strategy.admission
      ? new AdmissionModel({
          keys: scenario.keys,
          limits: scenario.limits,
          consumers: settings.consumers,
          settings: { outputTokenEstimate: settings.admissionOutputTokenEstimate, dailyResetOffsetMs: scenario.dailyResetOffsetMs },
        })
      : null;
    this.attempt = new Uint16Array(N);
    this.deferralsOf = new Uint32Array(N);
    this.eligibleAt = new Array<string>(N).fill(isoAt(scenario.start));
    this.inputTokens = new Uint16Array(N);
    this.outputTokens = new Uint16Array(N);
    this.status = new Uint8Array(N);
    this.settleKey = new Int8Array(strategy.admission ? N : 0);
    this.settleTaken = new Float64Array(strategy.admission ? N : 0);
    this.settleConsumer = new Int32Array(strategy.admission ? N : 0);
    // The same jobs for every strategy: their sizes come from their own stream.
    const jobRng = Rng.derive(settings.seed, 1);
    for (let j = 0; j < N; j++) {
      this.inputTokens[j] = jobRng.int(settings.inputTokensMin, settings.inputTokensMax);
      this.outputTokens[j] = jobRng.int(settings.outputTokensMin, settings.outputTokensMax);
      this.totalTokens += this.inputTokens[j]! + this.outputTokens[j]!;
    }
    this.latencyRng = Rng.derive(settings.seed, 2);
    this.policyRng = Rng.derive(settings.seed, 3);
    this.failureRng = Rng.derive(settings.seed, 4);
    this.schedulerRng = Rng.derive(settings.seed, 5);
    this.idle = new Int32Array(settings.consumers);
    this.idleMark = scenario.start;
    this.lastSettled = scenario.start;
  }

  run(): StrategyResult {
    const wallStart = performance.now();
    const { scenario, settings } = this;
    const start = scenario.start;
    const ids = new Int32Array(this.N);
    for (let j = 0; j < this.N; j++) ids[j] = j;
    this.sqs.sendInitial(ids, start);
    for (let c = settings.consumers - 1; c >= 0; c--) this.idle[this.idleCount++] = c;
    this.armWake(start);
    const horizon = start + settings.horizonMs;
    const interval = this.hooks.progressIntervalMs ?? 1000;
    let nextReport = performance.now() + interval;
    let now = start;
    const events = this.events;
    while (events.size > 0 && this.terminal < this.N) {
      const t = events.peekTime();
      if (t > horizon) break;
      const value = events.pop();
      now = t;
      this.eventCount++;
      const payload = Math.floor(value / 8);
      switch (value & 7) {
        case EV_DONE:
          this.onBatchDone(payload, t);
          break;
        case EV_WAKE:
          this.onWake(t);
          break;
        case EV_SIDE:
          this.onSide(payload, t);
          break;
        case EV_SETTLE:
          this.admission!.settle(this.settleConsumer[payload]!, this.settleKey[payload]!, this.settleTaken[payload]!, this.inputTokens[payload]!, this.outputTokens[payload]!, t);
          break;
        case EV_RESUME:
          this.onResume(t);
          break;
      }
      if ((this.eventCount & 4095) === 0 && this.hooks.onProgress && performance.now() >= nextReport) {
        nextReport = performance.now() + interval;
        this.hooks.onProgress({ virtualMs: t - start, terminal: this.terminal, jobs: this.N, events: this.eventCount, modelCalls: this.provider.counters.calls });
      }
    }
    this.accountIdle(now);
    return this.result(performance.now() - wallStart);
  }

  private schedule(time: number, type: number, payload: number): void {
    this.events.push(time, payload * 8 + type);
  }

  // ---- consumers ----

  /** Accumulates idle pollers' long-poll time up to `now`. */
  private accountIdle(now: number): void {
    if (now <= this.idleMark) return;
    if (!this.paused) this.idlePollMs += Math.min(this.idleCount, this.settings.idlePollers) * (now - this.idleMark);
    this.idleMark = now;
  }

  private goIdle(consumer: number, now: number): void {
    this.accountIdle(now);
    this.idle[this.idleCount++] = consumer;
  }

  /** Makes sure a wake-up is queued for when the next message becomes visible. */
  private armWake(now: number): void {
    if (this.idleCount === 0 || this.paused) return;
    const next = Math.max(now, this.sqs.nextVisibleAt());
    if (next < this.wakeAt) {
      this.wakeAt = next;
      this.schedule(next, EV_WAKE, 0);
    }
  }

  private onWake(now: number): void {
    if (now >= this.wakeAt) this.wakeAt = Infinity;
    if (this.paused) return;
    this.pollIdle(now);
    this.armWake(now);
  }

  private pollIdle(now: number): void {
    this.sqs.release(now);
    while (this.idleCount > 0 && this.sqs.visibleCount > 0) {
      this.accountIdle(now);
      const consumer = this.idle[--this.idleCount]!;
      this.poll(consumer, now);
    }
  }

  private onBatchDone(consumer: number, now: number): void {
    if (this.paused) {
      this.goIdle(consumer, now);
      return;
    }
    this.poll(consumer, now);
    this.armWake(now);
  }

  private poll(consumer: number, now: number): void {
    const n = this.sqs.receive(now, this.settings.batchSize, this.buf, false);
    if (n === 0) {
      this.goIdle(consumer, now);
      return;
    }
    if (now < this.firstReceive) this.firstReceive = now;
    this.invocations++;
    this.receives += n;
    let end = now;
    let deletes = 0;
    for (let i = 0; i < n; i++) {
      const message = this.buf[i]!;
      this.kept = false;
      const recordEnd = this.processRecord(consumer, message, now);
      if (!this.kept) this.deleteBuf[deletes++] = message;
      if (recordEnd > end) end = recordEnd;
    }
    this.sqs.deleteBatch(this.deleteBuf, deletes);
    const duration = Math.ceil(end - now + this.timing.invocationOverheadMs);
    this.gbMs += duration * (this.settings.lambdaMemoryMb / 1024);
    this.schedule(now + duration + this.timing.pollGapMs, EV_DONE, consumer);
  }

  // ---- one record ----

  private jobOf(j: number): JobScheduling {
    return { attempt: this.attempt[j]!, deferrals: this.deferralsOf[j]!, eligibleAt: this.eligibleAt[j]!, region: LANE };
  }

  private decideAt(j: number, job: JobScheduling, receiveCount: number, now: number, outcome: JobOutcome): Action {
    return decide({
      job,
      lane: LANE,
      approximateReceiveCount: receiveCount,
      maxReceiveCount: this.settings.maxReceiveCount,
      now,
      backoff: this.settings.backoff,
      random: this.policyRng.next,
      outcome,
    });
  }

  /** Handles one received message at `now`; returns when the record is done. Sets `kept` when the message stays (failure). */
  private processRecord(consumer: number, message: number, now: number): number {
    const j = this.sqs.jobOfMessage(message);
    const receiveCount = this.sqs.receiveCountOf(message);
    const job = this.jobOf(j);
    const gate = gateBeforeCall(job, LANE, now, receiveCount);
    if (gate.type !== 'proceed') return this.act(j, message, receiveCount, gate, now + this.timing.quickRecordMs);
    // The duplicate check: a strongly consistent GetItem on the results table.
    this.dynamoReads += 1;
    const callAt = now + this.timing.preCallMs;
    let key: number;
    const admission = this.admission;
    if (admission) {
      key = admission.acquire(consumer, this.inputTokens[j]!, callAt);
      if (key < 0) {
        this.admissionDenials++;
        if (admission.laneOut) this.requestPause(admission.laneOut.until, callAt);
        const action = this.decideAt(j, job, receiveCount, callAt, { kind: 'admission_denied', retryAt: admission.retryAt });
        return this.act(j, message, receiveCount, action, callAt + this.timing.quickRecordMs);
      }
    } else {
      key = this.keyCursor;
      this.keyCursor = (this.keyCursor + 1) % this.scenario.keys;
    }
    const tokens = this.inputTokens[j]! + this.outputTokens[j]!;
    const result = this.provider.call(key, tokens, callAt, this.failureRng.uniform());
    const t = this.timing;
    const rng = this.latencyRng;
    if (result === CALL_OK) {
      const answeredAt = callAt + t.okLatencyMinMs + (t.okLatencyMaxMs - t.okLatencyMinMs) * 0.5 * (rng.uniform() + rng.uniform());
      if (admission) {
        this.settleKey[j] = key;
        this.settleTaken[j] = admission.grantedTokens;
        this.settleConsumer[j] = consumer;
        this.schedule(answeredAt, EV_SETTLE, j);
      }
      const action = this.decideAt(j, job, receiveCount, answeredAt, { kind: 'valid_output' });
      return this.act(j, message, receiveCount, action, answeredAt + t.afterCallMs);
    }
    const throttled = result === CALL_RATE_LIMIT || result === CALL_QUOTA;
    const answeredAt = throttled
      ? callAt + rng.between(t.throttleLatencyMinMs, t.throttleLatencyMaxMs)
      : callAt + rng.between(t.failureLatencyMinMs, t.failureLatencyMaxMs);
    let keysLeft: number | undefined;
    if (admission && throttled && !this.strategy.throttleIsFailure) {
      keysLeft = admission.keysLeftAfter(consumer, key, result === CALL_RATE_LIMIT ? { scope: 'key', reason: 'rate_limit' } : { scope: 'quota_owner', reason: 'quota_exhausted' }, answeredAt);
    }
    const outcome = outcomeForError(this.strategy, result, { retryAfterMs: this.provider.retryAfterMs, resetAt: this.provider.resetAt }, keysLeft);
    const action = this.decideAt(j, job, receiveCount, answeredAt, outcome);
    if (admission && action.type === 'defer' && (action.cooldown || action.pauseLane)) {
      this.schedule(answeredAt, EV_SIDE, this.side({ consumer, key, cooldown: action.cooldown, pauseLane: action.pauseLane }));
    }
    return this.act(j, message, receiveCount, action, answeredAt + t.afterCallMs);
  }

  /** Carries out `action` for job `j`; `at` is when the record's last write is done. */
  private act(j: number, message: number, receiveCount: number, action: Action, at: number): number {
    switch (action.type) {
      case 'commit':
        // The conditional PutItem of the result (an item up to 1 KB: 1 write unit).
        this.dynamoWrites += 1;
        this.settleJob(j, ST_COMMITTED, at);
        return at;
      case 'defer':
        this.resend(j, action, at);
        return at;
      case 'fail':
        if (action.lastReceive) this.dynamoWrites += 1; // ledger: dead_letter_pending
        if (action.lastReceive && receiveCount < action.maxReceiveCount) {
          // Failures carried from earlier messages spent the budget: the consumer moves it itself.
          this.sqs.sendToDlq();
          this.settleJob(j, ST_DEAD, at);
          return at;
        }
        this.sqs.changeVisibility(message, action.visibilityTimeoutSeconds, at);
        this.kept = true;
        return at;
      case 'reject':
      case 'needs_review':
        this.dynamoWrites += 1; // ledger
        this.settleJob(j, ST_REJECTED, at);
        return at;
      case 'repair':
        throw new Error('the simulator models valid outputs only: no repair');
    }
  }

  private resend(j: number, action: DeferAction, at: number): void {
    this.attempt[j] = Math.min(65535, action.attempt);
    this.deferralsOf[j] = action.deferrals;
    this.eligibleAt[j] = action.eligibleAt;
    this.sqs.send(j, action.delaySeconds, at);
    if (action.reason === 'not_yet_eligible') {
      this.hops++;
    } else {
      this.deferrals++;
      this.dynamoWrites += 1; // ledger: deferred
    }
  }

  private settleJob(j: number, status: number, at: number): void {
    if (this.status[j] !== ST_PENDING) throw new Error(`job ${j} settled twice`);
    this.status[j] = status;
    this.terminal++;
    if (status === ST_COMMITTED) this.completed++;
    else if (status === ST_DEAD) this.deadLettered++;
    else this.rejected++;
    if (at > this.lastSettled) this.lastSettled = at;
  }

  // ---- admission side effects and the lane pause ----

  private side(effect: SideEffect): number {
    const index = this.freeSides.pop();
    if (index !== undefined) {
      this.sides[index] = effect;
      return index;
    }
    this.sides.push(effect);
    return this.sides.length - 1;
  }

  private onSide(index: number, now: number): void {
    const effect = this.sides[index]!;
    this.sides[index] = undefined;
    this.freeSides.push(index);
    const admission = this.admission!;
    if (effect.cooldown) {
      admission.cool(effect.consumer, effect.key, effect.cooldown, now);
    }
    if (effect.pauseLane) {
      const out = admission.laneOutFor(effect.consumer, now);
      const until = Math.min(Date.parse(effect.pauseLane.until), out ? out.until : Infinity);
      this.requestPause(until, now);
    }
  }

  /** LanePauser.requestPause: claims the pause (a conditional put), disables the mapping, schedules the resume. */
  private requestPause(until: number, now: number): void {
    if (!(until > now)) return;
    this.dynamoWrites += 1; // claimPause
    if (this.paused && this.pausedUntil > now) return;
    this.accountIdle(now);
    this.paused = true;
    this.pausedUntil = until;
    this.lanePauses++;
    this.schedules++;
    this.schedule(until + this.schedulerRng.uniform() * this.timing.schedulerJitterMs, EV_RESUME, 0);
  }

  private onResume(now: number): void {
    if (!this.paused || now < this.pausedUntil) return;
    this.accountIdle(now);
    this.paused = false;
    this.wakeAt = Infinity;
    this.pollIdle(now);
    this.armWake(now);
  }

  // ---- results ----

  private result(wallMs: number): StrategyResult {
    const { scenario, strategy, settings } = this;
    const unsettled = this.N - this.terminal;
    const queued = this.sqs.size;
    const lost = Math.max(0, unsettled - queued);
    const drainMs = this.lastSettled - Math.min(this.firstReceive, this.lastSettled);
    const boundMs = quotaBoundMs(scenario, this.N, this.totalTokens);
    this.sqs.countEmptyReceives(Math.floor(this.idlePollMs / LONG_POLL_MS));
    const usage: Usage = {
      sqsRequests: this.sqs.counters.billedRequests,
      dynamoReadUnits: this.dynamoReads + (this.admission ? this.admission.counters.cooldownReads : 0),
      dynamoWriteUnits:
        this.dynamoWrites + (this.admission ? this.admission.counters.bucketWrites + this.admission.counters.bucketConflicts + this.admission.counters.cooldownWrites : 0),
      lambdaInvocations: this.invocations,
      lambdaGbSeconds: this.gbMs / 1000,
      schedules: this.schedules,
    };
    const provider = { ...this.provider.counters };
    const wasted = provider.rateLimited + provider.quotaExhausted + provider.failures;
    return {
      scenario: scenario.id,
      strategy: strategy.id,
      label: strategy.label,
      jobs: this.N,
      completed: this.completed,
      deadLettered: this.deadLettered,
      rejected: this.rejected,
      lost,
      unfinished: unsettled - lost,
      drainMs,
      boundMs,
      drainOverBound: boundMs > 0 ? drainMs / boundMs : 0,
      modelCalls: provider.calls,
      callsPerCompletion: this.completed > 0 ? provider.calls / this.completed : Infinity,
      rateLimited: provider.rateLimited,
      quotaExhausted: provider.quotaExhausted,
      failedCalls: provider.failures,
      wastedCalls: wasted,
      receives: this.receives,
      hops: this.hops,
      deferrals: this.deferrals,
      admissionDenials: this.admissionDenials,
      lanePauses: this.lanePauses,
      usage,
      costPerMillion: costPerMillionJobs(usage, this.N),
      sqs: { ...this.sqs.counters },
      provider,
      admission: this.admission ? { ...this.admission.counters } : null,
      events: this.eventCount,
      wallMs,
    };
  }
}
