import { WORKSPACES_PREFIX } from '../../functions/runner-client/sts-credentials.ts';

/**
 * Who owns which prefix of the one bucket. The API and cron roles get the harness prefixes;
 * nobody's own role gets the workspaces: those are reached only with per-workspace STS
 * credentials minted from the workspace-access role.
 */
export const BUCKET_LAYOUT = {
  /** `workspaces/{workspaceId}/…`: content-addressed blobs and manifests (sandbox runner). */
  workspaces: WORKSPACES_PREFIX,
  /** Large tool results persisted by the harness. */
  toolResults: 'tool-results/',
  /** Payloads of DynamoDB items that would pass 400 KB. */
  spill: 'spill/',
} as const;
