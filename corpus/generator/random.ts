/**
 * The corpus generator's one seeded stream of randomness: every draw of every layout comes from it,
 * in a fixed order, so the same seed renders the same bytes.
 */
import { seededRandom } from '../../lib/shared/random.js';

/** The corpus seed: changing it (or the order of draws) changes every committed corpus file. */
export const SEED = 20260304;

/** The stream every draw reads from. */
export const random = seededRandom(SEED);
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

/** `value()` with probability `p`, else null. */
export const maybe = <T>(p: number, value: () => T): T | null => (chance(p) ? value() : null);
