import type { S3Client } from '@aws-sdk/client-s3';
import type { StorageCredentials } from '../../sandbox-runner/protocol.ts';
import { stopMarkerKey } from '../../sandbox-runner/common/stop-marker-key.ts';
import { SHORT_LIVED_TAGGING } from '../../sandbox-runner/common/short-lived-tag.ts';
import { workspacePrefix } from '../../sandbox-runner/common/workspace-prefix.ts';
import type { WorkspaceCredentialSource } from './runner-client.ts';

export interface StopMarkerDeps {
  workspaceStorage: (credentials: StorageCredentials) => Promise<S3Client>;
  workspaceCredentials: WorkspaceCredentialSource;
  config: { bucket: string };
}

/**
 * Asks the runner to kill a running command: an empty object at the command's stop marker, which
 * the runner running it polls for (sandbox-runner/ops/bash-op.ts). Written with the workspace's
 * own credentials, like everything under its prefix; wherever the command runs, it sees it.
 * Tagged short-lived: the bucket's lifecycle rule removes it after a day.
 */
export async function putStopMarker(deps: StopMarkerDeps, workspaceId: string, key: string): Promise<void> {
  const { PutObjectCommand } = await import('@aws-sdk/client-s3');
  const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
  await s3.send(
    new PutObjectCommand({
      Bucket: deps.config.bucket,
      Key: `${workspacePrefix(workspaceId)}${stopMarkerKey(key)}`,
      Body: new Uint8Array(0),
      ContentLength: 0,
      Tagging: SHORT_LIVED_TAGGING,
    }),
  );
}
