/**
 * An unexpected error leaves the runner as a function error whose message the harness may show
 * to the model or an API client (functions/runner-client/runner-client.ts). Node's file errors
 * name the real path ("ENOENT: no such file or directory, open '/…/workspaces/ws_1/tree/a.ts'"),
 * which is the runner's disk layout, not anything the caller knows. This rewrites such paths in
 * the message (and the stack) to what the caller sees: `shown` for each `real` prefix, the
 * longest first so a workspace's tree wins over the root it lives under.
 */
export function hideHostPaths(err: unknown, mappings: readonly (readonly [real: string, shown: string])[]): unknown {
  if (!(err instanceof Error)) return err;
  const ordered = [...mappings].sort(([a], [b]) => b.length - a.length);
  const rewrite = (text: string) => ordered.reduce((out, [real, shown]) => out.split(real).join(shown), text);
  err.message = rewrite(err.message);
  if (err.stack) err.stack = rewrite(err.stack);
  return err;
}

/** How the runner's own storage (outside any workspace) is named in a rewritten message. */
export const RUNNER_STORAGE = '(runner storage)';
