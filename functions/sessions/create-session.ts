import { VIRTUAL_ROOT } from '../../sandbox-runner/virtual-paths.ts';
import type { Deps } from '../deps/deps.ts';
import type { SessionSettings } from '../permissions/session-settings.ts';
import { UserError } from '../shared/errors.ts';
import type { SessionRecord } from '../stores/session-store.ts';
import { WorkspaceSession } from '../tools/workspace-session.ts';

export interface CreateSessionInput {
  tenantId: string;
  title?: string;
  /** Relative path → text, or `{ base64 }` for binary content. */
  files?: Record<string, string | { base64: string }>;
  settings?: SessionSettings;
}

/** Creates a session and its workspace (seeded through the runner, which owns the S3 layout). */
export async function createSession(deps: Deps, input: CreateSessionInput): Promise<SessionRecord> {
  const sessionId = deps.newId('ses');
  const workspaceId = deps.newId('ws');
  const workspace = new WorkspaceSession(
    { runner: deps.runner, credentials: deps.workspaceCredentials, bucket: deps.config.bucket },
    sessionId,
    { id: workspaceId, version: 0 },
    VIRTUAL_ROOT,
  );
  if (input.files && Object.keys(input.files).length > 0) {
    try {
      await workspace.run({ type: 'create_workspace', files: input.files });
    } catch (err) {
      // The runner refuses bad seeds (paths outside, too many files) with a message for the caller.
      if (err instanceof Error && err.name === 'ToolError') throw new UserError(`Invalid "files": ${err.message}`);
      throw err;
    }
  }
  const now = new Date(deps.clock()).toISOString();
  const record: SessionRecord = {
    sessionId,
    tenantId: input.tenantId,
    createdAt: now,
    updatedAt: now,
    status: 'idle',
    ...(input.title ? { title: input.title } : {}),
    messageCount: 0,
    workspace: workspace.workspace,
    cwd: VIRTUAL_ROOT,
    usage: { inputTokens: 0, outputTokens: 0 },
    turnCount: 0,
    ...(input.settings ? { settings: input.settings } : {}),
  };
  await deps.sessions.create(record);
  deps.log.info('session created', { sessionId, workspaceId, files: Object.keys(input.files ?? {}).length });
  return record;
}
