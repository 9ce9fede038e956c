/**
 * Replacing members of a live object without touching the object: how the drivers and fault tests
 * wrap a consumer's dependencies (a model adapter, a store, a key pool).
 */
import type { KeyPool } from '../../lib/admission/keys/key-pool.js';

/**
 * A view of `target` with some members replaced; every other member is read from `target` (methods
 * bound to it), so it works for classes with private (`#`) fields.
 */
export function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return (overrides as Record<PropertyKey, unknown>)[property];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
}

/**
 * `keys` with every `acquire` timed: `onTake` gets its time (ms) less its in-process wait for a first
 * call's answer, and when it began (epoch ms).
 */
export function timedAcquires(keys: KeyPool, onTake: (ms: number, at: number) => void): KeyPool {
  return withOverrides(keys, {
    acquire: async (request) => {
      const at = Date.now();
      const t0 = performance.now();
      let waitedMs = 0;
      try {
        const answer = await keys.acquire(request);
        waitedMs = answer.waitedMs ?? 0;
        return answer;
      } finally {
        onTake(performance.now() - t0 - waitedMs, at);
      }
    },
  });
}
