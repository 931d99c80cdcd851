import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import type { OpResult, RunnerOp, RunnerResponse } from '../../sandbox-runner/protocol.ts';
import type { Deps } from '../deps/deps.ts';
import { SessionBusyError, StratusError, SystemError, UserError } from '../shared/errors.ts';
import type { SessionRecord } from '../stores/session-store.ts';

/** The runner's refusal, as the HTTP caller should see it. */
function failure(deps: Deps, response: Extract<RunnerResponse, { ok: false }>): StratusError {
  switch (response.error.kind) {
    case 'tool_error':
      return new UserError(response.error.message);
    case 'limit':
      return new StratusError(response.error.message, 413, 'workspace_limit');
    case 'conflict':
      return new StratusError(response.error.message, 409, 'workspace_conflict');
    case 'bad_request':
      // Our request did not match the runner's protocol: a bug on this side, whose details (the
      // runner's schema errors) are for the logs, not the caller.
      deps.log.error('the runner refused a request', { error: response.error.message });
      return new SystemError('The sandbox runner refused the request; see the server logs.');
  }
}

/** Runs one op on the session's workspace at its current version (read-only ops). */
export async function runWorkspaceOp<T extends OpResult['type']>(
  deps: Deps,
  session: SessionRecord,
  op: RunnerOp & { type: T },
): Promise<Extract<OpResult, { type: T }>> {
  const credentials = await deps.workspaceCredentials.forWorkspace(session.workspace.id);
  const response = await deps.runner.invoke({
    sessionId: session.sessionId,
    workspace: { bucket: deps.config.bucket, id: session.workspace.id, version: session.workspace.version, credentials },
    cwd: session.cwd,
    op,
  });
  if (!response.ok) throw failure(deps, response);
  return response.result as Extract<OpResult, { type: T }>;
}

/**
 * Fills a session's empty workspace (an archive import or a git clone). Holds the session's
 * lease meanwhile, so no turn runs against a half-imported workspace, and records the new
 * version when it releases it.
 */
export async function importIntoWorkspace<T extends 'import_archive' | 'import_git'>(
  deps: Deps,
  session: SessionRecord,
  op: RunnerOp & { type: T },
): Promise<{ version: number; result: Extract<OpResult, { type: T }> }> {
  if (session.workspace.version !== 0) {
    throw new StratusError(
      `Session ${session.sessionId} already has workspace content (version ${session.workspace.version}); import into a new session.`,
      409,
      'workspace_not_empty',
    );
  }
  const now = deps.clock();
  const owner = `${deps.instanceId}:${deps.newId('imp')}`;
  const leased = await deps.sessions.acquireLease(session.sessionId, { owner, turnId: 'workspace-import', expiresAt: now + 15 * 60_000 }, now);
  if (leased.workspace.version !== 0) {
    await deps.sessions.releaseLease(session.sessionId, owner, { status: 'idle' });
    throw new SessionBusyError(session.sessionId);
  }
  let version = 0;
  try {
    const credentials = await deps.workspaceCredentials.forWorkspace(session.workspace.id);
    const response = await deps.runner.invoke({
      sessionId: session.sessionId,
      workspace: { bucket: deps.config.bucket, id: session.workspace.id, version: 0, credentials },
      op,
    });
    if (!response.ok) throw failure(deps, response);
    version = response.version;
    return { version, result: response.result as Extract<OpResult, { type: T }> };
  } finally {
    await deps.sessions.releaseLease(session.sessionId, owner, { status: 'idle', ...(version ? { workspace: { ...session.workspace, version } } : {}) });
  }
}

export function uploadKey(workspaceId: string, name: string): { full: string; relative: string } {
  const relative = `uploads/${name}.tar.gz`;
  return { full: `workspaces/${workspaceId}/${relative}`, relative };
}

/** A client holding only this workspace's minted credentials (the API's role has no workspace access). */
async function workspaceS3(deps: Deps, workspaceId: string) {
  return deps.workspaceStorage(await deps.workspaceCredentials.forWorkspace(workspaceId));
}

export async function putUpload(deps: Deps, workspaceId: string, key: string, body: Readable, length: number): Promise<void> {
  const s3 = await workspaceS3(deps, workspaceId);
  await s3.send(new PutObjectCommand({ Bucket: deps.config.bucket, Key: key, Body: body, ContentLength: length }));
}

export async function deleteObject(deps: Deps, workspaceId: string, key: string): Promise<void> {
  const s3 = await workspaceS3(deps, workspaceId);
  await s3.send(new DeleteObjectCommand({ Bucket: deps.config.bucket, Key: key }));
}

export async function getObjectStream(deps: Deps, workspaceId: string, key: string): Promise<ReadableStream> {
  const s3 = await workspaceS3(deps, workspaceId);
  const out = await s3.send(new GetObjectCommand({ Bucket: deps.config.bucket, Key: key }));
  return out.Body!.transformToWebStream();
}
