/**
 * What every driver (run, soak, bench) runs on: the lanes of a local run with their time settings
 * scaled to a shorter provider "minute", the documents (the corpus, repeated), and the fastest drain
 * the keys' limits allow.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadCorpus } from '../corpus/index.js';
import { configuredLanes } from '../../lib/config/file.js';
import { LaneConfigError, quotaOwnerCount, resolveLanes, type LaneOverride, type LaneSet } from '../../lib/config/lanes.js';
import { CURRENT_RELEASE, getRelease } from '../../lib/contract/releases.js';
import type { DocumentInput } from '../../lib/intake/producer.js';

/** The provider side of a local run: keys per lane, their limits, and how long a "minute" lasts. */
export interface LocalLaneSettings {
  keys: number;
  providerRpm: number;
  providerTpm: number;
  providerDaily: number;
  /** How long a provider "minute" lasts here; every time setting of the lanes scales with it. */
  minuteMs: number;
  /**
   * The share of each quota owner's limits kept for live requests (default 0: a run without live
   * requests keeps the whole quota for the queue lane, so its figures compare with earlier runs).
   */
  liveReserveShare?: number | undefined;
}

/** Output tokens a call of the local corpus is priced at before admission learns them (measured: about 173). */
const LOCAL_EXPECTED_OUTPUT_TOKENS = 180;

/** Writes `lanes` as a lane config file (`{ "lanes": [...] }`, what `RATELANE_CONFIG` names), so another process runs with exactly them. */
export function writeLanesFile(path: string, lanes: LaneSet): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ lanes: Object.values(lanes) }, null, 2)}\n`);
}

/**
 * The lanes of a local run: the lane config file's (`configuredLanes`: `RATELANE_CONFIG` or
 * `ratelane.config.json`; it must have `us` and `eu`), with provider limits and keys from the settings, and every time setting
 * (function timeout, visibility timeout, backoff) scaled by `minuteMs / 60 s`, so a scaled run
 * behaves like a real one at a faster clock.
 */
export function localRunLanes(options: LocalLaneSettings): LaneSet {
  const scale = options.minuteMs / 60_000;
  const seconds = (s: number): number => Math.max(1, Math.round(s * scale));
  const override = (name: string): LaneOverride => {
    const timeoutSeconds = seconds(60);
    return {
      queue: { visibilityTimeoutSeconds: 6 * timeoutSeconds, receiveWaitTimeSeconds: 1 },
      consumer: { timeoutSeconds, maximumConcurrency: 5 },
      backoff: {
        throttleBaseSeconds: 1,
        throttleCapSeconds: seconds(300),
        failureBaseSeconds: 1,
        failureCapSeconds: seconds(900),
      },
      provider: {
        keys: Array.from({ length: options.keys }, (_, i) => ({ id: `key-${i + 1}`, quotaOwner: `${name}-owner-${i + 1}` })),
        limits: { requestsPerMinute: options.providerRpm, tokensPerMinute: options.providerTpm, requestsPerDay: options.providerDaily },
        timeoutMs: Math.max(1_000, Math.round(25_000 * scale)),
        // What a platform engineer sets from their own schema's output: the corpus's extractions
        // answer with about 173 output tokens per call (measured on the bench's consumer log).
        expectedOutputTokens: LOCAL_EXPECTED_OUTPUT_TOKENS,
      },
      live: { reserveShare: options.liveReserveShare ?? 0 },
    };
  };
  const { lanes: base, source } = configuredLanes();
  const missing = ['us', 'eu'].filter((name) => !(name in base));
  if (missing.length > 0) {
    throw new LaneConfigError(
      `a local run sends its corpus by language to lanes us (English) and eu (German), but the lane config (${source}) has no ${missing.join(' or ')} lane`,
    );
  }
  return resolveLanes(Object.fromEntries(Object.keys(base).map((name) => [name, override(name)])), base);
}

/**
 * The documents of a run: the corpus (English to `us`, German to `eu`), repeated with new source ids up
 * to `jobs` (0: the corpus once), each with the schema and prompt version of the current release.
 */
export function corpusDocuments(jobs: number): DocumentInput[] {
  const corpus = loadCorpus();
  const release = getRelease(CURRENT_RELEASE);
  const total = jobs > 0 ? jobs : corpus.length;
  return Array.from({ length: total }, (_, i) => {
    const doc = corpus[i % corpus.length]!;
    const round = Math.floor(i / corpus.length);
    return {
      text: doc.text,
      sourceId: round === 0 ? doc.sourceId : `${doc.sourceId}#${round}`,
      region: doc.language === 'de' ? 'eu' : 'us',
      schemaVersion: doc.schemaVersion,
      promptVersion: release.prompts[doc.schemaVersion],
    };
  });
}

/** Minutes a perfect scheduler needs for `units` at `perMinute`, the first minute's going at once. */
export function burstMinutes(units: number, perMinute: number): number {
  if (perMinute <= 0) return units > 0 ? Number.POSITIVE_INFINITY : 0;
  return Math.max(0, units - perMinute) / perMinute;
}

/** The slowest lane's figure: `minutes(jobs, perMinute)` scaled minutes, per lane with jobs and a limit. */
function slowestLaneMs(lanes: LaneSet, submitted: readonly { lane: string }[], minuteMs: number, minutes: (jobs: number, perMinute: number) => number): number {
  let slowest = 0;
  for (const lane of Object.values(lanes)) {
    const jobs = submitted.filter((j) => j.lane === lane.name).length;
    const perMinute = quotaOwnerCount(lane) * lane.provider.limits.requestsPerMinute;
    if (jobs > 0 && perMinute > 0) slowest = Math.max(slowest, minutes(jobs, perMinute) * minuteMs);
  }
  return slowest;
}

/**
 * The fastest the run could drain on its keys' per-minute request limits: per lane, its jobs divided
 * by the lane's combined limit (quota owners × requests per minute), in scaled minutes; the slowest lane.
 */
export function quotaBoundMinimumMs(lanes: LaneSet, submitted: readonly { lane: string }[], minuteMs: number): number {
  return slowestLaneMs(lanes, submitted, minuteMs, (jobs, perMinute) => jobs / perMinute);
}

/**
 * The slowest lane's drain time with a perfect scheduler: the provider's buckets start full, so the
 * first minute's requests go at once, then the limit: (jobs − limit) / limit minutes.
 */
export function burstAwareMinimumMs(lanes: LaneSet, submitted: readonly { lane: string }[], minuteMs: number): number {
  return slowestLaneMs(lanes, submitted, minuteMs, burstMinutes);
}
