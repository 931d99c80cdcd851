import { gitImportRefusal } from '../../../sandbox-runner/common/egress-mode.ts';
import type { Deps } from '../../deps/deps.ts';
import { createSession } from '../../session/create-session.ts';
import { deleteSession } from '../../session/delete-session.ts';
import type { PermissionMode } from '../../permissions/types.ts';
import { UserError } from '../../shared/errors.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import { importIntoWorkspace } from '../../workspaces/workspace-ops.ts';
import { assertSeedFiles } from '../seed-files.ts';

/**
 * The A2A and MCP adapters (functions/api/a2a, functions/api/mcp) drive the same sessions and
 * turns as the REST API, with the same deps: these helpers are what both need of them.
 */
export type RemoteDeps = Deps;

/** Where a remote caller's new session starts: an empty workspace, seed files, or a git clone. */
export interface RemoteSource {
  title?: string;
  files?: Record<string, string>;
  git?: { url: string; ref?: string };
  permissionMode?: PermissionMode;
}

/**
 * Creates a session for a remote caller, as POST /v1/sessions (plus POST …/workspace/git for a
 * clone) would. A clone that fails leaves no session behind: the caller gets the error only.
 */
export async function openRemoteSession(deps: RemoteDeps, tenantId: string, source: RemoteSource): Promise<SessionRecord> {
  if (source.files && source.git) throw new UserError('Give either files or a git URL, not both.');
  assertSeedFiles(source.files, 'files');
  const gitRefusal = source.git && gitImportRefusal(deps.config.egress);
  if (gitRefusal) throw new UserError(gitRefusal, 'egress_unavailable');
  const record = await createSession(deps, {
    tenantId,
    ...(source.title ? { title: source.title } : {}),
    ...(source.files ? { files: source.files } : {}),
    ...(source.permissionMode ? { settings: { permissionMode: source.permissionMode } } : {}),
  });
  if (!source.git) return record;
  try {
    await importIntoWorkspace(deps, record, { type: 'import_git', url: source.git.url, ...(source.git.ref ? { ref: source.git.ref } : {}) });
  } catch (err) {
    await deleteSession(deps, { sessionId: record.sessionId, tenantId }).catch(() => undefined);
    throw err;
  }
  return (await deps.sessions.get(record.sessionId)) ?? record;
}
