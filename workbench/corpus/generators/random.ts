/**
 * The corpus generators' seeded streams of randomness: every draw of every layout comes from one stream,
 * in a fixed order, so the same seed renders the same bytes. Each generator makes its own stream from its
 * own seed (`invoices/draw.ts`, `receipts/draw.ts`), so the two corpora never shift each other.
 */
import { type RandomSource, seededRandom } from '../../../lib/platform/random.js';

/** The draws of one seeded stream; each call reads the stream in order. */
export interface SeededDraws {
  /** The stream every draw reads from. */
  random: RandomSource;
  /** A uniform integer in [min, max] (inclusive). */
  int: (min: number, max: number) => number;
  /** True with probability `p`. */
  chance: (p: number) => boolean;
  /** One item of a non-empty list, uniformly. */
  pick: <T>(items: readonly T[]) => T;
  /** Up to `count` distinct items of a list, in drawn order. */
  sample: <T>(items: readonly T[], count: number) => T[];
  /** `value()` with probability `p`, else null. */
  maybe: <T>(p: number, value: () => T) => T | null;
}

/**
 * The draws of a new stream seeded with `seed`: two calls give two independent streams.
 *
 * @param seed the stream's seed (see `seededRandom`)
 */
export function seededDraws(seed: number): SeededDraws {
  const random = seededRandom(seed);
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const chance = (p: number): boolean => random() < p;
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(random() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  };
  const sample = <T>(items: readonly T[], count: number): T[] => {
    const pool = [...items];
    const chosen: T[] = [];
    while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0] as T);
    return chosen;
  };
  const maybe = <T>(p: number, value: () => T): T | null => (chance(p) ? value() : null);
  return { random, int, chance, pick, sample, maybe };
}
