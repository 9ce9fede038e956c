/**
 * The simulated lane and its consumers: the lane's models (queue + DLQ, provider, key pool, jobs), its
 * random streams and the event heap, and what moves the consumers — polls of the SQS event source
 * mapping (up to `consumers` at once), idle long polls, wake-ups when a message becomes visible — and
 * the lane pause with admission's side effects (cooldowns, pause requests). Each record's own flow and
 * the event loop are `Simulation` in `engine.ts`, which extends {@link SimulatedLane}.
 */
import type { Cooldown, LanePause } from '../../lib/policy/index.js';
import { PayloadSlots, TimeHeap } from './heap.js';
import { JobTable, ST_DEAD } from './jobs.js';
import { ProviderModel } from './provider-model.js';
import { newTally } from './results.js';
import { Rng } from './rng.js';
import type { Scenario } from './scenarios.js';
import { checkSimSettings, type SimProgress, type SimSettings, type Timing } from './settings.js';
import { SimKeyPool } from './sim-key-pool.js';
import { SqsModel } from './sqs-model.js';
import type { Strategy } from './strategies.js';

/** Event types on the heap (an event is `payload * 8 + type`). */
export const EV_DONE = 0;
export const EV_WAKE = 1;
export const EV_SIDE = 2;
export const EV_SETTLE = 3;
export const EV_RESUME = 4;

/** An admission side effect of a record (a cooldown, a lane pause), applied by its own event at the time it happens. */
export interface SideEffect {
  consumer: number;
  key: number;
  cooldown: Cooldown | undefined;
  pauseLane: LanePause | undefined;
}

/** The lane's state and its consumers' mechanics; the subclass handles each received record ({@link SimulatedLane.processRecord}). */
export abstract class SimulatedLane {
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
  private readonly buf = new Int32Array(10);
  private readonly deleteBuf = new Int32Array(10);
  protected kept = false;
  private wakeAt = Infinity;
  private paused = false;
  private pausedUntil = 0;
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
          settings: { outputTokenEstimate: settings.admissionOutputTokenEstimate, dailyResetOffsetMs: scenario.dailyResetOffsetMs },
        })
      : null;
    // The same jobs for every strategy: their sizes come from their own stream.
    this.jobs = new JobTable(N, settings, scenario.start, strategy.admission);
    this.latencyRng = Rng.derive(settings.seed, 2);
    this.policyRng = Rng.derive(settings.seed, 3);
    this.failureRng = Rng.derive(settings.seed, 4);
    this.schedulerRng = Rng.derive(settings.seed, 5);
    this.idle = new Int32Array(settings.consumers);
    this.idleMark = scenario.start;
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

  /** Makes sure a wake-up is queued for when the next message becomes visible. */
  protected armWake(now: number): void {
    if (this.idleCount === 0 || this.paused) return;
    const next = Math.max(now, this.sqs.nextVisibleAt());
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
    while (this.idleCount > 0 && this.sqs.visibleCount > 0) {
      this.accountIdle(now);
      const consumer = this.idle[--this.idleCount]!;
      this.poll(consumer, now);
    }
  }

  protected onBatchDone(consumer: number, now: number): void {
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
    if (now < this.tally.firstReceive) this.tally.firstReceive = now;
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

  protected onResume(now: number): void {
    if (!this.paused || now < this.pausedUntil) return;
    this.accountIdle(now);
    this.paused = false;
    this.wakeAt = Infinity;
    this.pollIdle(now);
    this.armWake(now);
  }

  /** Before a received batch's records are handled (all at `now`): what the records decide together. */
  protected prepareBatch(_consumer: number, _messages: Int32Array, _count: number, _now: number): void {}

  /** Handles one received message at `now`; returns when the record is done. Sets `kept` when the message stays (failure). */
  protected abstract processRecord(consumer: number, message: number, now: number): number;
}
