import { WORKSPACES_PREFIX } from '../../sandbox-runner/common/workspace-prefix.ts';
import { ENVIRONMENTS_PREFIX } from '../../sandbox-runner/common/environment-layer-key.ts';

/**
 * Who owns which prefix of the one bucket, for the code that writes the keys and for the CDK
 * app's grants and lifecycle rules (which can only match key prefixes). The API and cron roles get the harness prefixes;
 * nobody's own role gets the workspaces: those are reached only with per-workspace STS
 * credentials minted from the workspace-access role.
 */
export const BUCKET_LAYOUT = {
  /** `workspaces/{workspaceId}/…`: content-addressed blobs and manifests (sandbox runner). */
  workspaces: WORKSPACES_PREFIX,
  /**
   * `environments/{tenantId}/github/{owner}/{name}/{fingerprint}.tar.gz`: cached environment
   * layers (docs/workspaces.md), reached like workspaces only with minted, narrowed credentials.
   */
  environments: ENVIRONMENTS_PREFIX,
  /** Large tool results persisted by the harness. */
  toolResults: 'tool-results/',
  /** Payloads of DynamoDB items that would pass 400 KB. */
  spill: 'spill/',
} as const;

/** Where a persisted tool result of a session lives (expires with the tool-results lifecycle rule). */
export function toolResultKey(sessionId: string, fileName: string): string {
  return `${BUCKET_LAYOUT.toolResults}${sessionId}/${fileName}`;
}

/** Where the payload of a message too big for DynamoDB lives (kept as long as the session). */
export function spilledMessageKey(sessionId: string, seq: number, uuid: string): string {
  return `${BUCKET_LAYOUT.spill}${sessionId}/messages/${String(seq).padStart(10, '0')}-${uuid}.json`;
}
