/**
 * An AWS SDK client that is built on its first use. The module using it imports the SDK package
 * with `import type` and a dynamic `import()` for its commands, and the composition root builds
 * the client inside the same kind of import (memoized: every call answers the same client), so
 * the package is a chunk of its own, off a Lambda cold start's import path (docs/deploy.md,
 * "Cold start and bundle size").
 */
export type LazyClient<T> = () => Promise<T>;
