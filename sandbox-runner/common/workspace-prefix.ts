/**
 * Every workspace's objects live under `workspaces/{id}/` in the one bucket. The runner writes
 * there; the API's bucket layout, the STS session policy and the CDK grants name the same prefix.
 */
export const WORKSPACES_PREFIX = 'workspaces/';

export function workspacePrefix(workspaceId: string): string {
  return `${WORKSPACES_PREFIX}${workspaceId}/`;
}
