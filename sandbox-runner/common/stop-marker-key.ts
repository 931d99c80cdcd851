/**
 * Where, under a workspace's prefix, the harness puts a running command's stop marker, and how
 * often the runner looks for it. Its own module because the harness imports it too: importing
 * it from the Bash op would pull the runner's image and PDF libraries into the API bundle.
 */

/** How often a running command's stop marker is looked for (a HEAD request each time). */
export const STOP_POLL_MS = 500;

/** What a stop key may be: it becomes part of an S3 key under the workspace's prefix. */
export const STOP_KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function stopMarkerKey(stopKey: string): string {
  return `stops/${stopKey}`;
}
