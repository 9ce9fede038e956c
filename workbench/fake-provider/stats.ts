/** Counters of the fake provider, for the whole server and per key. */
import { HARD_SHAPE_NAMES, type HardShapeName } from './extractors/hard-shapes.js';
import type { FakeProviderBatchStats, FakeProviderCounters, FakeProviderStats } from './types.js';

function noModelErrors(): Record<HardShapeName, number> {
  return Object.fromEntries(HARD_SHAPE_NAMES.map((shape) => [shape, 0])) as Record<HardShapeName, number>;
}

/** Adds one to the counter of each shape in `applied`. */
export function countModelErrors(counters: Record<HardShapeName, number>, applied: readonly HardShapeName[]): void {
  for (const shape of applied) counters[shape] += 1;
}

function emptyCounters(): FakeProviderCounters {
  return {
    requests: 0,
    successes: 0,
    unauthorized: 0,
    badRequests: 0,
    rateLimited: { rpm: 0, tpm: 0, rpd: 0, insufficient_quota: 0, too_large: 0 },
    faults: { serverError: 0, timeout: 0, garbageJson: 0, schemaInvalid: 0 },
    tokensIn: 0,
    tokensOut: 0,
    modelErrors: noModelErrors(),
  };
}

function copyCounters(counters: FakeProviderCounters): FakeProviderCounters {
  return { ...counters, rateLimited: { ...counters.rateLimited }, faults: { ...counters.faults }, modelErrors: { ...counters.modelErrors } };
}

function emptyBatchStats(): FakeProviderBatchStats {
  return {
    created: 0,
    completed: 0,
    failed: 0,
    expired: 0,
    cancelled: 0,
    filesDeleted: 0,
    linesAnswered: 0,
    linesErrored: 0,
    linesDropped: 0,
    linesExpired: 0,
    linesCancelled: 0,
    droppedCustomIds: [],
    erroredCustomIds: [],
    invalidCustomIds: [],
    modelErrors: noModelErrors(),
  };
}

/** Keeps the totals and each known key's counters in step. */
export class StatsRecorder {
  private readonly total = emptyCounters();
  private readonly perKey = new Map<string, FakeProviderCounters>();
  private readonly batches = emptyBatchStats();

  constructor(keys: string[]) {
    for (const key of keys) this.perKey.set(key, emptyCounters());
  }

  /** Applies `change` to the totals and, when `key` is a known key, to that key's counters. */
  record(key: string | null, change: (counters: FakeProviderCounters) => void): void {
    change(this.total);
    const own = key === null ? undefined : this.perKey.get(key);
    if (own) change(own);
  }

  /** Applies `change` to the Batch API's counters. */
  recordBatch(change: (batches: FakeProviderBatchStats) => void): void {
    change(this.batches);
  }

  /** A deep copy of every counter. */
  snapshot(): FakeProviderStats {
    const b = this.batches;
    const batches = {
      ...b,
      droppedCustomIds: [...b.droppedCustomIds],
      erroredCustomIds: [...b.erroredCustomIds],
      invalidCustomIds: [...b.invalidCustomIds],
      modelErrors: { ...b.modelErrors },
    };
    return { ...copyCounters(this.total), perKey: Object.fromEntries([...this.perKey].map(([key, c]) => [key, copyCounters(c)])), batches };
  }
}
