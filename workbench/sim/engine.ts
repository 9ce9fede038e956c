/**
 * The discrete-event simulation: one lane (queue + DLQ, consumers, provider, admission) in virtual
 * time, driven by a binary heap of events. Per record it runs the consumer's flow of
 * the extraction core (`lib/extraction/`) and the queue lane (`lib/lanes/queue/`) with the project's own pure policy (`gateBeforeCall`, `decide`)
 * and, for strategy (c), the key pool's own decisions (`lib/admission/decisions/pool-core.ts`, run by
 * `sim-key-pool.ts`).
 *
 * Consumers model the SQS event source mapping with `MaximumConcurrency` = `consumers`, within the
 * account's Lambda concurrency, scaled up as AWS documents it (5 concurrent batches when messages become
 * available, then up to 300 more a minute; from 5 again after the lane was paused or had nothing to receive
 * for a minute: `SimSettings.eventSource`), and within the lane limit while some quota owners are out or
 * the slots lie more than a minute ahead (as the consumer claims it, `SimSettings.laneLimit`). Each
 * receives a batch of up to 10, handles its records in parallel (each record: the job id's claim and
 * the document's read, gate, a redelivery's duplicate check, admission — the batch's takes made
 * together, as `SharedKeyPool` groups them — model call, commit or deferral with its ledger line), and
 * polls again when the slowest record is done. A
 * record's effects are applied when its batch is received, stamped with the times they happen at
 * (the re-send at the end of the record, the visibility change when the call failed), because
 * nothing else can observe the record's message in between. What other consumers can observe (a
 * key's cooldown, a lane pause, the token correction after a call) is applied by its own event at
 * the time it happens.
 *
 * Jobs and messages live in typed arrays (`jobs.ts`, `sqs-model.ts`: no object or closure per job);
 * a run of 1,000,000 jobs holds ~100 MB.
 *
 * The module holds the lane and its consumers first ({@link SimulatedLane}: the lane's models, its
 * random streams and the event heap, the polls, idle long polls and wake-ups, the lane pause and limit with
 * admission's side effects), then the event loop and each record's flow (`Simulation`, which extends it).
 */
import { shardsFor } from '../../lib/admission/config/settings.js';
import { limitedConcurrency } from '../../lib/admission/pause/lane-pause.js';
import type { LaneCapacity } from '../../lib/admission/decisions/choice.js';
import type { CoreAdmission } from '../../lib/admission/decisions/pool-core.js';
import { replacesLimit } from '../../lib/admission/model/store.js';
import type { KeyRef } from '../../lib/admission/model/cooldowns.js';
import { returnWaitMs } from '../../lib/extraction/budget.js';
import {
  decide,
  gateBeforeCall,
  type Action,
  type DeferAction,
  type JobOutcome,
  type JobScheduling,
  type Cooldown,
  type LanePause,
} from '../../lib/policy/index.js';
import { withFastDates } from './fast-dates.js';
import { PayloadSlots, TimeHeap } from './heap.js';
import { ST_COMMITTED, ST_DEAD, ST_REJECTED, JobTable } from './jobs.js';
import { CALL_OK, CALL_QUOTA, CALL_RATE_LIMIT, ProviderModel } from './provider-model.js';
import { strategyResult, type StoppedBy, type StrategyResult, newTally } from './results.js';
import { Rng } from './rng.js';
import { withOwners, type Scenario } from './scenarios.js';
import { DEFAULT_SIM_SETTINGS, type SimProgress, type SimSettings, checkSimSettings, type Timing } from './settings.js';
import { SimKeyPool } from './sim-key-pool.js';
import { SqsModel } from './sqs-model.js';
import { outcomeForError, type Strategy } from './strategies.js';

/** Event types on the heap (an event is `payload * 8 + type`). */
const EV_DONE = 0;
const EV_WAKE = 1;
const EV_SIDE = 2;
const EV_SETTLE = 3;
const EV_RESUME = 4;
const EV_RESTORE = 5;

/** An admission side effect of a record (a cooldown, a lane pause), applied by its own event at the time it happens. */
interface SideEffect {
  consumer: number;
  key: number;
  cooldown: Cooldown | undefined;
  pauseLane: LanePause | undefined;
}

/** The lane's state and its consumers' mechanics; the subclass handles each received record ({@link SimulatedLane.processRecord}). */
abstract class SimulatedLane {
  protected readonly N: number;
  protected readonly timing: Timing;
  protected readonly sqs: SqsModel;
  protected readonly provider: ProviderModel;
  protected readonly admission: SimKeyPool | null;
  protected readonly events = new TimeHeap(4096);
  protected readonly jobs: JobTable;
  // consumers
  protected readonly idle: Int32Array;
  protected idleCount = 0;
  /** Consumers that can run at all: the settings' within the account's concurrency. */
  protected readonly fleet: number;
  /** When the event source's current scale-up began (epoch ms). */
  private rampFrom: number;
  /** The last receive that returned messages (epoch ms). */
  private lastReceiveAt = -Infinity;
  private readonly buf = new Int32Array(10);
  private readonly deleteBuf = new Int32Array(10);
  protected kept = false;
  private wakeAt = Infinity;
  private paused = false;
  private pausedUntil = 0;
  /**
   * The lane limit (`LanePauser.requestCapacity` with a share between 0 and 1, while some quota owners are
   * out or the slots lie more than a minute ahead): the mapping runs at `limitedConcurrency(fleet, limit.share)` until
   * the restore schedule fires after `limit.until`; share 1 when not limited.
   */
  private limit: LaneCapacity = { share: 1, until: 0, reason: 'quota_exhausted' };
  /** Per consumer instance, the limit it last claimed or found (`LanePauser`'s `known`): one it does not replace costs no write. */
  private readonly knownLimit: (LaneCapacity | undefined)[];
  private idleMark: number;
  // randomness
  protected readonly latencyRng: Rng;
  protected readonly policyRng: Rng;
  protected readonly failureRng: Rng;
  private readonly schedulerRng: Rng;
  protected keyCursor = 0;
  protected readonly sides = new PayloadSlots<SideEffect>();
  protected readonly tally = newTally();
  protected idlePollMs = 0;

  constructor(
    protected readonly scenario: Scenario,
    protected readonly strategy: Strategy,
    protected readonly settings: SimSettings,
    protected readonly hooks: { onProgress?: (progress: SimProgress) => void; progressIntervalMs?: number },
  ) {
    checkSimSettings(settings);
    const N = settings.jobs;
    this.N = N;
    this.timing = settings.timing;
    const { maxReceiveCount, visibilityTimeoutSeconds, messageBytes, failureRate } = settings;
    const onDeadLetter = (job: number, now: number): void => this.jobs.settle(job, ST_DEAD, now);
    this.sqs = new SqsModel({ maxReceiveCount, visibilityTimeoutSeconds, messageBytes, onDeadLetter }, Math.min(N + settings.consumers * 20 + 1024, 1 << 22));
    const { keys, limits, dailyResetOffsetMs, start } = scenario;
    this.provider = new ProviderModel({ keys, limits, dailyResetOffsetMs, failureRate, start });
    // Admission is configured with the provider's daily reset (the lane's setting; here 00:00 UTC).
    this.admission = strategy.admission
      ? new SimKeyPool({
          keys: scenario.keys,
          limits: scenario.limits,
          consumers: settings.consumers,
          settings: {
            outputTokenEstimate: settings.admissionOutputTokenEstimate,
            dailyResetOffsetMs: scenario.dailyResetOffsetMs,
            bucketShards: settings.bucketShards ?? shardsFor(Math.min(settings.consumers, settings.accountConcurrency), scenario.keys),
            // The records the mapping holds, as the lane's admission knows them (a denial's slot more than a minute ahead limits it then).
            mappingRecords: settings.laneLimit ? Math.min(settings.consumers, settings.accountConcurrency) * settings.batchSize : 0,
          },
          random: Rng.derive(settings.seed, 6).next,
        })
      : null;
    // Every consumer instance is primed at its INIT, as the lane's are (`primedPool`), its first key drawn from a
    // stream of its own (the admission's stream, which chooses shards, stays as it was).
    if (this.admission) {
      const startRandom = Rng.derive(settings.seed, 7).next;
      for (let c = 0; c < settings.consumers; c++) this.admission.prime(c, startRandom);
    }
    // The same jobs for every strategy: their sizes come from their own stream.
    this.jobs = new JobTable(N, settings, scenario.start, strategy.admission, scenario.longJobs);
    this.latencyRng = Rng.derive(settings.seed, 2);
    this.policyRng = Rng.derive(settings.seed, 3);
    this.failureRng = Rng.derive(settings.seed, 4);
    this.schedulerRng = Rng.derive(settings.seed, 5);
    this.fleet = Math.min(settings.consumers, settings.accountConcurrency);
    this.idle = new Int32Array(this.fleet);
    this.knownLimit = new Array<LaneCapacity | undefined>(this.fleet);
    this.idleMark = scenario.start;
    this.rampFrom = scenario.start;
  }

  protected schedule(time: number, type: number, payload: number): void {
    this.events.push(time, payload * 8 + type);
  }

  // ---- consumers ----

  /** Accumulates idle pollers' long-poll time up to `now`. */
  protected accountIdle(now: number): void {
    if (now <= this.idleMark) return;
    if (!this.paused) this.idlePollMs += Math.min(this.idleCount, this.settings.idlePollers) * (now - this.idleMark);
    this.idleMark = now;
  }

  private goIdle(consumer: number, now: number): void {
    this.accountIdle(now);
    this.idle[this.idleCount++] = consumer;
  }

  /** Consumers in an invocation now. */
  private get busy(): number {
    return this.fleet - this.idleCount;
  }

  /** The most consumers the mapping runs now: the fleet, or its share while the lane is limited. */
  private get cap(): number {
    return this.limit.share < 1 ? limitedConcurrency(this.fleet, this.limit.share) : this.fleet;
  }

  /** How many consumers the event source runs at once at `now`, as scaled up since {@link rampFrom}, within the lane limit. */
  private scaledTo(now: number): number {
    const { initialConcurrency, scaleUpPerMinute } = this.settings.eventSource;
    return Math.min(this.cap, initialConcurrency + Math.floor(((now - this.rampFrom) * scaleUpPerMinute) / 60_000));
  }

  /** When the event source has scaled up to one more consumer than are busy now. */
  private nextScaleAt(): number {
    const { initialConcurrency, scaleUpPerMinute } = this.settings.eventSource;
    return this.rampFrom + Math.ceil(((this.busy + 1 - initialConcurrency) * 60_000) / scaleUpPerMinute);
  }

  /** Makes sure a wake-up is queued for when the next message becomes visible (and the event source can take it). */
  protected armWake(now: number): void {
    // At the lane limit no wake-up can start a consumer: a batch's end or the limit's restore polls again.
    if (this.idleCount === 0 || this.paused || this.busy >= this.cap) return;
    let next = Math.max(now, this.sqs.nextVisibleAt());
    if (this.busy >= this.scaledTo(next)) next = Math.max(next, this.nextScaleAt());
    if (next < this.wakeAt) {
      this.wakeAt = next;
      this.schedule(next, EV_WAKE, 0);
    }
  }

  protected onWake(now: number): void {
    if (now >= this.wakeAt) this.wakeAt = Infinity;
    if (this.paused) return;
    this.pollIdle(now);
    this.armWake(now);
  }

  private pollIdle(now: number): void {
    this.sqs.release(now);
    // Nothing to receive for a while: the event source scales up from its start again.
    if (this.busy === 0 && now - this.lastReceiveAt >= this.settings.eventSource.scaleDownAfterMs) this.rampFrom = now;
    while (this.idleCount > 0 && this.sqs.visibleCount > 0 && this.busy < this.scaledTo(now)) {
      this.accountIdle(now);
      const consumer = this.idle[--this.idleCount]!;
      this.poll(consumer, now);
    }
  }

  protected onBatchDone(consumer: number, now: number): void {
    // Paused, or more consumers running than the lane limit allows: this one stops (the others run on).
    if (this.paused || this.busy > this.scaledTo(now)) {
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
    if (now < this.tally.firstReceive) this.tally.firstReceive = now;
    this.lastReceiveAt = now;
    if (this.busy > this.tally.peakConsumers) {
      this.tally.peakConsumers = this.busy;
      this.tally.peakConsumersAt = now;
    }
    this.tally.invocations++;
    this.tally.receives += n;
    let end = now;
    let deletes = 0;
    this.prepareBatch(consumer, this.buf, n, now);
    for (let i = 0; i < n; i++) {
      const message = this.buf[i]!;
      this.kept = false;
      const recordEnd = this.processRecord(consumer, message, now);
      if (!this.kept) this.deleteBuf[deletes++] = message;
      if (recordEnd > end) end = recordEnd;
    }
    this.sqs.deleteBatch(this.deleteBuf, deletes);
    const duration = Math.ceil(end - now + this.timing.invocationOverheadMs);
    this.tally.gbMs += duration * (this.settings.lambdaMemoryMb / 1024);
    this.schedule(now + duration + this.timing.pollGapMs, EV_DONE, consumer);
  }

  // ---- admission side effects and the lane pause ----

  protected onSide(index: number, now: number): void {
    const effect = this.sides.take(index);
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
  protected requestPause(until: number, now: number): void {
    if (!(until > now)) return;
    this.tally.dynamoWrites += 1; // claimPause
    if (this.paused && this.pausedUntil > now) return;
    this.accountIdle(now);
    this.paused = true;
    this.pausedUntil = until;
    this.tally.lanePauses++;
    this.tally.schedules++;
    this.schedule(until + this.schedulerRng.uniform() * this.timing.schedulerJitterMs, EV_RESUME, 0);
  }

  /**
   * `LanePauser.requestCapacity` for a share between 0 and 1 (some quota owners out until `until`, or the
   * slots booked too far ahead), from consumer instance `consumer`: claims the limit (a conditional put, won
   * as `replacesLimit` says), lowers the mapping's maximum concurrency and schedules its restore. Running
   * invocations run on; the event source starts no more than the limit allows.
   */
  protected requestLimit(consumer: number, next: LaneCapacity, now: number): void {
    const { share, until } = next;
    if (!(until > now) || !(share > 0 && share < 1)) return;
    if (!replacesLimit(this.knownLimit[consumer], next, now)) return;
    this.knownLimit[consumer] = next;
    this.tally.dynamoWrites += 1; // claimLimit
    if (!replacesLimit(this.limit, next, now)) return;
    this.limit = next;
    this.tally.laneLimits++;
    this.tally.schedules++;
    this.schedule(until + this.schedulerRng.uniform() * this.timing.schedulerJitterMs, EV_RESTORE, 0);
  }

  /** The restore schedule: the mapping's maximum concurrency back to the lane's, unless a later limit replaced this one. */
  protected onRestore(now: number): void {
    if (this.limit.share === 1 || this.limit.until > now) return;
    this.accountIdle(now);
    this.limit = { ...this.limit, share: 1 };
    // The event source scales up from the consumers running now, at its usual rate.
    const { initialConcurrency, scaleUpPerMinute } = this.settings.eventSource;
    this.rampFrom = now - (Math.max(0, this.busy - initialConcurrency) * 60_000) / scaleUpPerMinute;
    this.wakeAt = Infinity;
    if (!this.paused) {
      this.pollIdle(now);
      this.armWake(now);
    }
  }

  protected onResume(now: number): void {
    if (!this.paused || now < this.pausedUntil) return;
    this.accountIdle(now);
    this.paused = false;
    this.wakeAt = Infinity;
    this.rampFrom = now; // the mapping is enabled again: its pollers start from the event source's initial concurrency
    this.pollIdle(now);
    this.armWake(now);
  }

  /** Before a received batch's records are handled (all at `now`): what the records decide together. */
  protected prepareBatch(_consumer: number, _messages: Int32Array, _count: number, _now: number): void {}

  /** Handles one received message at `now`; returns when the record is done. Sets `kept` when the message stays (failure). */
  protected abstract processRecord(consumer: number, message: number, now: number): number;
}

// ---------------------------------------------------------------------------------------------------------
// The simulation: the event loop and each record's flow

const LANE = 'us';
const LONG_POLL_MS = 20_000;

/** Runs one strategy on one scenario. */
export function simulate(
  scenario: Scenario,
  strategy: Strategy,
  settings: SimSettings = DEFAULT_SIM_SETTINGS,
  hooks: { onProgress?: (progress: SimProgress) => void; progressIntervalMs?: number } = {},
): StrategyResult {
  return withFastDates(() => new Simulation(withOwners(scenario, settings.owners), strategy, settings, hooks).run());
}

/** The event loop and each record's flow, over the lane's state and consumers ({@link SimulatedLane}). */
class Simulation extends SimulatedLane {
  run(): StrategyResult {
    const wallStart = performance.now();
    const { scenario, settings } = this;
    const start = scenario.start;
    const ids = new Int32Array(this.N);
    for (let j = 0; j < this.N; j++) ids[j] = j;
    this.sqs.sendInitial(ids, start);
    for (let c = this.fleet - 1; c >= 0; c--) this.idle[this.idleCount++] = c;
    this.armWake(start);
    const horizon = start + settings.horizonMs;
    const receiveLimit = settings.maxReceivesPerJob > 0 ? settings.maxReceivesPerJob * this.N : Infinity;
    let stoppedBy: StoppedBy = 'done';
    const interval = this.hooks.progressIntervalMs ?? 1000;
    let nextReport = performance.now() + interval;
    let now = start;
    const events = this.events;
    while (events.size > 0 && this.jobs.terminal < this.N) {
      const t = events.peekTime();
      if (t > horizon) {
        stoppedBy = 'horizon';
        break;
      }
      if (this.tally.receives >= receiveLimit) {
        stoppedBy = 'receive-limit';
        break;
      }
      const value = events.pop();
      now = t;
      this.tally.events++;
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
          this.admission!.settle(
            this.jobs.settleConsumer[payload]!,
            this.jobs.settleShard[payload]!,
            this.jobs.settleKey[payload]!,
            this.jobs.settleTaken[payload]!,
            this.jobs.inputTokens[payload]!,
            this.jobs.outputTokens[payload]!,
            this.jobs.settleCallAt[payload]!,
            t,
          );
          break;
        case EV_RESUME:
          this.onResume(t);
          break;
        case EV_RESTORE:
          this.onRestore(t);
          break;
      }
      if ((this.tally.events & 4095) === 0 && this.hooks.onProgress && performance.now() >= nextReport) {
        nextReport = performance.now() + interval;
        this.hooks.onProgress({
          virtualMs: t - start,
          terminal: this.jobs.terminal,
          jobs: this.N,
          events: this.tally.events,
          modelCalls: this.provider.counters.calls,
        });
      }
    }
    this.accountIdle(now);
    this.sqs.countEmptyReceives(Math.floor(this.idlePollMs / LONG_POLL_MS));
    const { jobs, tally, sqs, provider, admission } = this;
    return strategyResult({
      scenario,
      strategy: this.strategy,
      jobs,
      submitted: this.N,
      tally,
      sqs,
      provider,
      admission,
      wallMs: performance.now() - wallStart,
      fleet: { configured: settings.consumers, cap: this.fleet },
      stoppedBy,
      stoppedAt: now,
    });
  }

  // ---- one record ----

  /** The policy's decision for a record of `job` received `receiveCount` times, at `now`, after `outcome`. */
  private decideAt(job: JobScheduling, receiveCount: number, now: number, outcome: JobOutcome): Action {
    const { maxReceiveCount, backoff } = this.settings;
    return decide({ job, lane: LANE, approximateReceiveCount: receiveCount, maxReceiveCount, now, backoff, random: this.policyRng.next, outcome });
  }

  /** The admission answers of the batch being handled, by message (strategy (c): its takes are made together). */
  private readonly batchAdmission = new Map<number, CoreAdmission<KeyRef>>();
  /** The bucket shard the batch's takes were made on. */
  private batchShard = 0;

  /** Strategy (c): the takes of the batch's records that go to the model, made together at their call time. */
  protected override prepareBatch(consumer: number, messages: Int32Array, count: number, now: number): void {
    this.batchAdmission.clear();
    if (!this.admission) return;
    const calling: number[] = [];
    const tokens: number[] = [];
    for (let i = 0; i < count; i++) {
      const message = messages[i]!;
      const j = this.sqs.jobOfMessage(message);
      if (gateBeforeCall(this.jobs.scheduling(j, LANE), LANE, now, this.sqs.receiveCountOf(message)).type !== 'proceed') continue;
      calling.push(message);
      tokens.push(this.jobs.inputTokens[j]!);
    }
    if (calling.length === 0) return;
    const answers = this.admission.acquireGroup(consumer, tokens, now + this.timing.preCallMs, this.settings.bookWithinMs);
    this.batchShard = this.admission.takenShard;
    for (const [i, message] of calling.entries()) this.batchAdmission.set(message, answers[i]!);
  }

  /** Handles one received message at `now`; returns when the record is done. Sets `kept` when the message stays (failure). */
  protected override processRecord(consumer: number, message: number, now: number): number {
    const j = this.sqs.jobOfMessage(message);
    const receiveCount = this.sqs.receiveCountOf(message);
    const job = this.jobs.scheduling(j, LANE);
    // Intake (`lib/extraction/intake.ts`): the job id's claim (a conditional PutItem on the ledger,
    // 1 write unit) while the document is read (an S3 GET), its source's erasure tombstone and the job's
    // cancel marker (one strongly consistent BatchGetItem, 1 read unit each: `Cancellations.atReceive`),
    // for every receive; then the gate.
    this.tally.dynamoWrites += 1;
    this.tally.dynamoReads += 2;
    this.tally.s3Gets += 1;
    const gate = gateBeforeCall(job, LANE, now, receiveCount);
    if (gate.type !== 'proceed') return this.act(j, message, receiveCount, gate, now + this.timing.quickRecordMs);
    // Past the gate the job's idempotency key is claimed (a conditional PutItem: `lib/store/claims.ts`),
    // ended by its commit or given back (`act`).
    this.tally.dynamoWrites += 1;
    // The duplicate check of a redelivered message: a strongly consistent GetItem on the results table.
    if (receiveCount > 1) this.tally.dynamoReads += 1;
    let callAt = now + this.timing.preCallMs;
    let key: number;
    let grantedTokens = 0;
    const admission = this.admission;
    if (admission) {
      const answer = this.batchAdmission.get(message)!;
      // As the consumer (`fitLane`): some owners out limits the lane to the share left; none left pauses it (below).
      if (answer.capacity && answer.capacity.share > 0 && this.settings.laneLimit) this.requestLimit(consumer, answer.capacity, callAt);
      if (!answer.admitted) {
        this.tally.admissionDenials++;
        if (answer.laneOut) this.requestPause(answer.laneOut.until, callAt);
        // As the consumer: the job may come back early and wait for its slot.
        const mayWaitMs = returnWaitMs(this.settings.bookWithinMs);
        const action = this.decideAt(job, receiveCount, callAt, { kind: 'admission_denied', retryAt: answer.retryAt, mayWaitMs });
        return this.act(j, message, receiveCount, action, callAt + this.timing.quickRecordMs, true);
      }
      key = answer.index;
      grantedTokens = answer.cost.tokens;
      // A booked slot: the record waits for it in-process, as the consumer does (its invocation runs on).
      if (answer.startAt > callAt) callAt = answer.startAt;
    } else {
      key = this.keyCursor;
      this.keyCursor = (this.keyCursor + 1) % this.scenario.keys;
    }
    const tokens = this.jobs.inputTokens[j]! + this.jobs.outputTokens[j]!;
    const result = this.provider.call(key, tokens, callAt, this.failureRng.uniform());
    const t = this.timing;
    const rng = this.latencyRng;
    if (result === CALL_OK) {
      const answeredAt = callAt + t.okLatencyMinMs + (t.okLatencyMaxMs - t.okLatencyMinMs) * 0.5 * (rng.uniform() + rng.uniform());
      if (admission) {
        this.jobs.settleKey[j] = key;
        this.jobs.settleTaken[j] = grantedTokens;
        this.jobs.settleConsumer[j] = consumer;
        this.jobs.settleShard[j] = this.batchShard;
        this.jobs.settleCallAt[j] = callAt;
        this.schedule(answeredAt, EV_SETTLE, j);
      }
      const action = this.decideAt(job, receiveCount, answeredAt, { kind: 'valid_output' });
      return this.act(j, message, receiveCount, action, answeredAt + t.afterCallMs, true);
    }
    const throttled = result === CALL_RATE_LIMIT || result === CALL_QUOTA;
    const answeredAt = throttled
      ? callAt + rng.between(t.throttleLatencyMinMs, t.throttleLatencyMaxMs)
      : callAt + rng.between(t.failureLatencyMinMs, t.failureLatencyMaxMs);
    let keysLeft: number | undefined;
    if (admission && throttled && !this.strategy.throttleIsFailure) {
      keysLeft = admission.keysLeftAfter(
        consumer,
        key,
        result === CALL_RATE_LIMIT ? { scope: 'key', reason: 'rate_limit' } : { scope: 'quota_owner', reason: 'quota_exhausted' },
        answeredAt,
      );
    }
    const outcome = outcomeForError(this.strategy, result, { retryAfterMs: this.provider.retryAfterMs, resetAt: this.provider.resetAt }, keysLeft);
    const action = this.decideAt(job, receiveCount, answeredAt, outcome);
    if (admission && action.type === 'defer' && (action.cooldown || action.pauseLane)) {
      this.schedule(answeredAt, EV_SIDE, this.sides.put({ consumer, key, cooldown: action.cooldown, pauseLane: action.pauseLane }));
    }
    return this.act(j, message, receiveCount, action, answeredAt + t.afterCallMs, true);
  }

  /**
   * Carries out `action` for job `j`; `at` is when the record's last write is done. `keyClaimed`: the
   * record claimed its idempotency key; anything but a commit gives it back (a DeleteItem).
   */
  private act(j: number, message: number, receiveCount: number, action: Action, at: number, keyClaimed = false): number {
    if (keyClaimed && action.type !== 'commit') this.tally.dynamoWrites += 1;
    switch (action.type) {
      case 'commit':
        // The result's conditional put, the checks that its source has no tombstone and the job no cancel
        // marker, and the key claim's completion, as one transaction (`ResultStore.commitOnce`): DynamoDB
        // bills each item of a transaction twice (prepare and commit), so 2 write units for the put, 2 for
        // the completion and, counted as writes too (an upper bound), 2 for each check.
        this.tally.dynamoWrites += 8;
        this.jobs.settle(j, ST_COMMITTED, at);
        return at;
      case 'defer':
        this.resend(j, action, at);
        return at;
      case 'fail':
        if (action.lastReceive) this.tally.dynamoWrites += 1; // ledger: dead_letter_pending
        if (action.lastReceive && receiveCount < action.maxReceiveCount) {
          // Failures carried from earlier messages spent the budget: the consumer moves it itself.
          this.sqs.sendToDlq();
          this.jobs.settle(j, ST_DEAD, at);
          return at;
        }
        this.sqs.changeVisibility(message, action.visibilityTimeoutSeconds, at);
        this.kept = true;
        return at;
      case 'reject':
      case 'needs_review':
        this.tally.dynamoWrites += 1; // ledger
        this.jobs.settle(j, ST_REJECTED, at);
        return at;
      case 'repair':
        throw new Error('the simulator models valid outputs only: no repair');
    }
  }

  private resend(j: number, action: DeferAction, at: number): void {
    this.jobs.deferred(j, action);
    this.sqs.send(j, action.delaySeconds, at);
    if (action.reason === 'not_yet_eligible') this.tally.hops++;
    else this.tally.deferrals++;
    this.tally.dynamoWrites += 1; // ledger: every deferral and every hop (`lib/lanes/queue/queue-executor.ts`)
  }
}
