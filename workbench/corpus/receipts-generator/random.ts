/**
 * The receipt generator's own seeded stream of randomness (separate from the invoice generator's, so the
 * two corpora never shift each other). Every draw reads from it in a fixed order: same seed, same bytes.
 */
import { seededDraws } from '../generator/random.js';

/** The receipt corpus seed: changing it (or the order of draws) changes every committed receipt file. */
export const RECEIPT_SEED = 20261104;

/** The receipt corpus stream's draws (see `SeededDraws`). */
export const { int, chance, pick, sample } = seededDraws(RECEIPT_SEED);
