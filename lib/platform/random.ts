/**
 * The project's one seeded pseudo-random generator, for everything that must be reproducible from a
 * seed: the sample corpus, the fake provider's faults and latencies, the soak's injected faults and
 * property tests. Not for secrets or ids (use `node:crypto`).
 */

/** A source of uniform numbers in [0, 1), as `Math.random` is. */
export type RandomSource = () => number;

/**
 * mulberry32: a small, fast 32-bit seeded generator. The same seed gives the same sequence on every
 * machine and Node version (the corpus files depend on it: do not change the algorithm).
 *
 * @param seed any number; only its low 32 bits count (`seed >>> 0`)
 * @returns a function returning the next number of the sequence, uniform in [0, 1)
 */
export function seededRandom(seed: number): RandomSource {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
