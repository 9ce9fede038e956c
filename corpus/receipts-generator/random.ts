/**
 * The receipt generator's own seeded stream of randomness (separate from the invoice generator's, so the
 * two corpora never shift each other). Every draw reads from it in a fixed order: same seed, same bytes.
 */
import { seededRandom } from '../../lib/shared/random.js';

/** The receipt corpus seed: changing it (or the order of draws) changes every committed receipt file. */
export const RECEIPT_SEED = 20261104;

const random = seededRandom(RECEIPT_SEED);

/** A uniform integer in [min, max] (inclusive). */
export const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

/** True with probability `p`. */
export const chance = (p: number): boolean => random() < p;

/** One item of a non-empty list, uniformly. */
export function pick<T>(items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** Up to `count` distinct items of a list, in drawn order. */
export function sample<T>(items: readonly T[], count: number): T[] {
  const pool = [...items];
  const chosen: T[] = [];
  while (chosen.length < count && pool.length > 0) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0] as T);
  return chosen;
}
