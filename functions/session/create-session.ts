import { VIRTUAL_ROOT } from '../../sandbox-runner/common/virtual-paths.ts';
import type { Deps } from '../deps/deps.ts';
import type { SessionSettings } from '../session-settings/session-settings.ts';
import { WorkspaceInputError } from '../runner-client/runner-errors.ts';
import { runOp, type WorkspaceClientDeps } from '../runner-client/workspace-client.ts';
import { UserError } from '../shared/errors.ts';
import type { Budgets } from '../stores/budgets.ts';
import type { SessionRecord, SessionSource } from '../stores/session-store.ts';

export interface CreateSessionInput {
  tenantId: string;
  title?: string;
  /** Relative path → text, or `{ base64 }` for binary content. */
  files?: Record<string, string | { base64: string }>;
  settings?: SessionSettings;
  /** The session's own budgets (over the tenant's defaults). */
  budgets?: Budgets;
  source?: SessionSource;
  /** A GitHub run's repository instructions (docs/context.md). */
  repositoryInstructions?: SessionRecord['repositoryInstructions'];
  /** A GitHub run's base branch. */
  baseBranch?: string;
}

/** What creating a session uses: ids, the clock, the session store, a log and the workspace client. */
export type CreateSessionDeps = Pick<Deps, 'newId' | 'clock' | 'sessions' | 'log' | 'tenantUsage'> & WorkspaceClientDeps;

/** Creates a session and its workspace (seeded through the runner, which owns the S3 layout). */
export async function createSession(deps: CreateSessionDeps, input: CreateSessionInput): Promise<SessionRecord> {
  const sessionId = deps.newId('ses');
  const workspace = { id: deps.newId('ws'), version: 0 };
  // Seeds are stored before the session record exists, so they are counted once it does.
  let seededBytes = 0;
  if (input.files && Object.keys(input.files).length > 0) {
    await deps.tenantUsage.assertRoom(input.tenantId);
    try {
      const seeded = await runOp(deps, { sessionId, workspace, cwd: VIRTUAL_ROOT, tenantId: input.tenantId }, { type: 'create_workspace', files: input.files });
      workspace.version = seeded.version;
      seededBytes = seeded.bytesUploaded;
    } catch (err) {
      // The runner refuses bad seeds (a path outside, a file where a folder is) with a message for the caller.
      if (err instanceof WorkspaceInputError) throw new UserError(`Invalid "files": ${err.message}`);
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
    workspace,
    cwd: VIRTUAL_ROOT,
    usage: { inputTokens: 0, outputTokens: 0 },
    turnCount: 0,
    ...(input.settings ? { settings: input.settings } : {}),
    ...(input.budgets && Object.keys(input.budgets).length > 0 ? { budgets: input.budgets } : {}),
    ...(input.source ? { source: input.source } : {}),
    ...(input.repositoryInstructions ? { repositoryInstructions: input.repositoryInstructions } : {}),
    ...(input.baseBranch ? { baseBranch: input.baseBranch } : {}),
  };
  await deps.sessions.create(record);
  await deps.tenantUsage.add(input.tenantId, sessionId, seededBytes);
  deps.log.info('session created', { sessionId, workspaceId: workspace.id, files: Object.keys(input.files ?? {}).length });
  return record;
}
