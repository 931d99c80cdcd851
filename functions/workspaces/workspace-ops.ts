import type { Readable } from 'node:stream';
import type { RunnerOp } from '../../sandbox-runner/protocol.ts';
import { SHORT_LIVED_TAGGING } from '../../sandbox-runner/common/short-lived-tag.ts';
import type { Deps } from '../deps/deps.ts';
import { runOp, type OpTarget, type ResultOf, type WorkspaceClientDeps } from '../runner-client/workspace-client.ts';
import { ConflictError, SessionBusyError } from '../shared/errors.ts';
import type { SessionRecord } from '../stores/session-store.ts';

/**
 * Runs one op on the session's workspace at its current version (read-only ops). A refusal
 * arrives as the workspace client's typed error, which the API answers with its status.
 */
export async function runWorkspaceOp<T extends RunnerOp['type']>(
  deps: WorkspaceClientDeps,
  session: SessionRecord,
  op: RunnerOp & { type: T },
): Promise<ResultOf<T>> {
  return (await runOp<T>(deps, { sessionId: session.sessionId, workspace: session.workspace, cwd: session.cwd }, op)).result;
}

/** What an import uses: the workspace client, plus the session lease and the ids that name its owner. */
export type ImportDeps = WorkspaceClientDeps & Pick<Deps, 'sessions' | 'clock' | 'instanceId' | 'newId' | 'tenantUsage'>;

/**
 * Fills a session's empty workspace (an archive import or a git clone). Holds the session's
 * lease meanwhile, so no turn runs against a half-imported workspace, and records the new
 * version when it releases it.
 */
export async function importIntoWorkspace<T extends 'import_archive' | 'import_git' | 'git_checkout'>(
  deps: ImportDeps,
  session: SessionRecord,
  op: RunnerOp & { type: T },
  ownReservation = 0,
): Promise<{ version: number; result: ResultOf<T> }> {
  return holdingImportLease(deps, session, () => runOp<T>(deps, importTarget(deps, session, ownReservation), op));
}

/**
 * Runs `fill` while holding the session's lease, which only one caller gets: of concurrent
 * imports into one session one runs `fill` and the others are refused (409) without touching
 * anything, so whatever `fill` consumes (a staged upload) is consumed once, by the holder. An
 * import that finds the workspace filled meanwhile is refused too. The version `fill` answers is
 * recorded when the lease is released.
 */
export async function holdingImportLease<R extends { version: number }>(deps: ImportDeps, session: SessionRecord, fill: () => Promise<R>): Promise<R> {
  assertEmptyWorkspace(session);
  const now = deps.clock();
  const owner = `${deps.instanceId}:${deps.newId('imp')}`;
  const leased = await deps.sessions
    .acquireLease(session.sessionId, { owner, turnId: 'workspace-import', expiresAt: now + 15 * 60_000 }, now)
    .catch((err: unknown) => {
      if (err instanceof SessionBusyError) {
        throw new ConflictError(
          `Session ${session.sessionId} is busy: another import or a turn is using its workspace. Nothing was imported; retry when it is idle.`,
          'session_busy',
          err.retryAfterSeconds,
        );
      }
      throw err;
    });
  let version = 0;
  try {
    assertEmptyWorkspace(leased);
    const outcome = await fill();
    version = outcome.version;
    return outcome;
  } finally {
    await deps.sessions.releaseLease(session.sessionId, owner, { status: 'idle', ...(version ? { workspace: { ...session.workspace, version } } : {}) });
  }
}

/**
 * An import's target: the session's empty workspace, metered against its tenant's storage quota
 * (`ownReservation`: the bytes its staged archive already holds there).
 */
export function importTarget(deps: Pick<Deps, 'tenantUsage'>, session: SessionRecord, ownReservation = 0): OpTarget {
  return {
    sessionId: session.sessionId,
    workspace: { id: session.workspace.id, version: 0 },
    storage: { tenantId: session.tenantId, usage: deps.tenantUsage, ...(ownReservation ? { ownReservation } : {}) },
  };
}

/**
 * Runs `use` with a staged archive (uploads/<name>.tar.gz, `bytes` long) counted against the
 * tenant's storage quota: reserved before `use` (refused with StorageQuotaError past the quota),
 * given back and the object removed afterwards, whatever `use` did. A refused reservation
 * removes the object too, so an upload the tenant has no room for is not left behind.
 */
export async function withStagedArchive<R>(
  deps: StorageDeps & Pick<Deps, 'tenantUsage'>,
  session: SessionRecord,
  archive: { full: string; bytes: number },
  use: () => Promise<R>,
): Promise<R> {
  const removeArchive = () => deleteObject(deps, session.workspace.id, archive.full).catch(() => undefined);
  await deps.tenantUsage.reserve(session.tenantId, session.sessionId, archive.bytes).catch(async (err: unknown) => {
    await removeArchive();
    throw err;
  });
  try {
    return await use();
  } finally {
    await removeArchive();
    await deps.tenantUsage.add(session.tenantId, session.sessionId, -archive.bytes);
  }
}

/** Imports go into an empty workspace only (version 0). */
export function assertEmptyWorkspace(session: SessionRecord): void {
  if (session.workspace.version !== 0) {
    throw new ConflictError(
      `Session ${session.sessionId} already has workspace content (version ${session.workspace.version}); import into a new session.`,
      'workspace_not_empty',
    );
  }
}

export function uploadKey(workspaceId: string, name: string): { full: string; relative: string } {
  const relative = `uploads/${name}.tar.gz`;
  return { full: `workspaces/${workspaceId}/${relative}`, relative };
}

/** What the upload and download helpers use: the bucket, the credential source and an S3 client factory. */
export type StorageDeps = Pick<Deps, 'workspaceCredentials' | 'workspaceStorage'> & { config: { bucket: string } };

/** A client holding only this workspace's minted credentials (the API's role has no workspace access). */
async function workspaceS3(deps: StorageDeps, workspaceId: string) {
  return deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
}

/** A staged upload, tagged short-lived so one left behind by a failed import expires. */
export async function putUpload(deps: StorageDeps, workspaceId: string, key: string, body: Readable, length: number): Promise<void> {
  const [{ PutObjectCommand }, s3] = await Promise.all([import('@aws-sdk/client-s3'), workspaceS3(deps, workspaceId)]);
  await s3.send(new PutObjectCommand({ Bucket: deps.config.bucket, Key: key, Body: body, ContentLength: length, Tagging: SHORT_LIVED_TAGGING }));
}

export async function deleteObject(deps: StorageDeps, workspaceId: string, key: string): Promise<void> {
  const [{ DeleteObjectCommand }, s3] = await Promise.all([import('@aws-sdk/client-s3'), workspaceS3(deps, workspaceId)]);
  await s3.send(new DeleteObjectCommand({ Bucket: deps.config.bucket, Key: key }));
}

export async function getObjectStream(deps: StorageDeps, workspaceId: string, key: string): Promise<ReadableStream> {
  const [{ GetObjectCommand }, s3] = await Promise.all([import('@aws-sdk/client-s3'), workspaceS3(deps, workspaceId)]);
  const out = await s3.send(new GetObjectCommand({ Bucket: deps.config.bucket, Key: key }));
  return out.Body!.transformToWebStream();
}
