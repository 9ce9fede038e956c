/**
 * A Lambda handler built once per execution environment, its build begun at import: in the
 * environment's INIT phase, before the first event arrives (where AWS recommends setting up clients
 * and reading what every invocation needs). A build that fails is begun again by the next
 * invocation, which then sees its error.
 */

/**
 * Begins `build` now and returns the getter each invocation awaits: the one build of the environment,
 * or a new one after a failed build.
 */
export function buildInInit<H>(build: () => Promise<H>): () => Promise<H> {
  let built: Promise<H> | undefined;
  const get = (): Promise<H> => {
    built ??= build().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
  // INIT must not fail for it: the first invocation builds again and reports the error.
  get().catch(() => undefined);
  return get;
}
