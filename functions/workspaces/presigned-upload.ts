import { SHORT_LIVED_TAGGING_XML } from '../../sandbox-runner/common/short-lived-tag.ts';
import { isId } from '../shared/ids.ts';
import { LimitError, NotFoundError } from '../shared/errors.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { assertEmptyWorkspace, uploadKey, type StorageDeps } from './workspace-ops.ts';

/**
 * How long a presigned upload may start. Short: the form is signed with the workspace's minted
 * credentials, which the credential source hands out only while at least five more minutes
 * remain (functions/runner-client/sts-credentials.ts), and S3 checks both at the request's start.
 */
export const UPLOAD_EXPIRY_SECONDS = 300;

/** The id prefix of a staged upload (`up_…`, a time-ordered id). */
const UPLOAD_ID_PREFIX = 'up';

export interface PresignedUpload {
  uploadId: string;
  url: string;
  fields: Record<string, string>;
  maxBytes: number;
  expiresAt: string;
}

/**
 * A browser-style POST form that lets a client put one archive straight into S3, under the
 * session's workspace prefix (`workspaces/{id}/uploads/{uploadId}.tar.gz`), at most `maxBytes`,
 * for UPLOAD_EXPIRY_SECONDS. S3 (and the local stand-in's front) enforces the policy (key, size
 * range, expiry, signature); the import checks existence and size again, so even a store that
 * did not evaluate policies could not import more than the limit.
 */
export async function createPresignedUpload(
  deps: StorageDeps & { newId: (prefix: string) => string; clock: () => number },
  session: SessionRecord,
  maxBytes: number,
): Promise<PresignedUpload> {
  assertEmptyWorkspace(session);
  const uploadId = deps.newId(UPLOAD_ID_PREFIX);
  const key = uploadKey(session.workspace.id, uploadId).full;
  const { createPresignedPost } = await import('@aws-sdk/s3-presigned-post');
  const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(session.workspace.id));
  const { url, fields } = await createPresignedPost(s3, {
    Bucket: deps.config.bucket,
    Key: key,
    Conditions: [
      ['content-length-range', 1, maxBytes],
      ['eq', '$tagging', SHORT_LIVED_TAGGING_XML],
    ],
    Fields: { tagging: SHORT_LIVED_TAGGING_XML },
    Expires: UPLOAD_EXPIRY_SECONDS,
  });
  return { uploadId, url, fields, maxBytes, expiresAt: new Date(deps.clock() + UPLOAD_EXPIRY_SECONDS * 1000).toISOString() };
}

/**
 * Finds a staged upload of this session and checks its size: an id of another session (its
 * object lives under that workspace's prefix) is not found here, like an unknown one. An
 * object over the limit is removed and refused. Returns the key relative to the workspace.
 * Called under the import lease (holdingImportLease), which has found the workspace empty.
 */
export async function stagedUpload(
  deps: StorageDeps,
  session: SessionRecord,
  uploadId: string,
  maxBytes: number,
): Promise<{ full: string; relative: string; size: number }> {
  const unknown = () =>
    new NotFoundError(
      `No upload "${uploadId.slice(0, 64)}" for session ${session.sessionId}: an upload id comes from POST …/workspace/uploads of the same session, and the archive must have been uploaded with its form first.`,
    );
  if (!isId(UPLOAD_ID_PREFIX, uploadId)) throw unknown();
  const key = uploadKey(session.workspace.id, uploadId);
  const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
  const s3 = await deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(session.workspace.id));
  let size: number;
  try {
    size = (await s3.send(new HeadObjectCommand({ Bucket: deps.config.bucket, Key: key.full }))).ContentLength ?? 0;
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) throw unknown();
    throw err;
  }
  if (size > maxBytes) throw new LimitError(`The uploaded archive is ${size} bytes; at most ${maxBytes} bytes are accepted.`, 'workspace_limit');
  return { ...key, size };
}
