/**
 * What the local run's mid-run loads share (`--erase`, `--cancel`): waiting for their moment — a number of
 * commits, or the stack going quiet first — and store lookups a bounded number at a time.
 */

/** How often the commit count is looked at while waiting for the moment (ms). */
const POLL_MS = 20;
/** Store lookups in flight at once. */
export const LOOKUPS_AT_ONCE = 32;

/** Maps `items` through `fn`, at most {@link LOOKUPS_AT_ONCE} at a time, in order. */
export async function mapLimited<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(LOOKUPS_AT_ONCE, items.length) }, worker));
  return out;
}

/** A mid-run load under way, `R` what it did. */
export interface MidRunLoad<R> {
  /** True once it ran, or can no longer run (the deadline passed). */
  readonly ended: boolean;
  /** Run now if not done yet (the stack went quiet before the threshold was reached). */
  now(): void;
  /** The progress line's part. */
  progress(): string;
  readonly done: Promise<R>;
}

/** A load's moment: reached once `commits()` reaches the threshold, or when forced (the stack went quiet). */
export interface Moment {
  /** Resolves with the commits then, or null when the deadline passed first. */
  reached(): Promise<number | null>;
  /** Reach it now (the stack went quiet before the threshold). */
  force(): void;
}

/** The moment `threshold` commits are counted by `commits`, polled every 20 ms until `deadline` (epoch ms). */
export function momentAt(threshold: number, commits: () => number | Promise<number>, deadline: number): Moment {
  let force: () => void = () => undefined;
  const forced = new Promise<'forced'>((resolve) => {
    force = () => resolve('forced');
  });
  return {
    force: () => force(),
    async reached() {
      for (;;) {
        const now = await commits();
        if (now >= threshold) return now;
        if (Date.now() > deadline) return null;
        let timer: NodeJS.Timeout | undefined;
        const tick = new Promise<'tick'>((resolve) => {
          timer = setTimeout(() => resolve('tick'), POLL_MS);
        });
        const why = await Promise.race([tick, forced]);
        clearTimeout(timer);
        if (why === 'forced') return now;
      }
    },
  };
}
