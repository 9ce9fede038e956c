/**
 * Replacing members of a live object without touching the object: how the drivers and fault tests
 * wrap a consumer's dependencies (a model adapter, a store, a key pool).
 */

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
