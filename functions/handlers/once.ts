/**
 * Runs `build` once per container and shares the result. A failure (a secret not yet readable,
 * a throttled call) is not cached: the next invocation tries again instead of the container
 * staying broken until it is recycled.
 */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= build().catch((err: unknown) => {
      pending = undefined;
      throw err;
    });
    return pending;
  };
}
