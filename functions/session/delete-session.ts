import { agentLogIdsIn } from '../stores/agent-log.ts';
import { deletePrefix } from '../stores/delete-prefix.ts';
import { leaseIsDead, type SessionRecord, type SessionStore } from '../stores/session-store.ts';
import { sessionPrefixes } from '../runner-client/purge-credentials.ts';
import type { Deps } from '../deps/deps.ts';
import type { MessageStore } from '../stores/message-store.ts';
import { runOp, type WorkspaceClientDeps } from '../runner-client/workspace-client.ts';
import { errorMessage } from '../shared/errors.ts';

export type DeleteSessionDeps = Pick<
  Deps,
  | 'sessions'
  | 'messages'
  | 'events'
  | 'approvals'
  | 'continuations'
  | 'workspaceStorage'
  | 'workspaceCredentials'
  | 'purgeCredentials'
  | 'clock'
  | 'log'
  | 'tenantUsage'
> &
  WorkspaceClientDeps & {
    config: { bucket: string };
  };

/** How long the purge waits for a running turn to stop before it removes what the turn writes to. */
const WAIT_FOR_TURN_MS = 120_000;
const WAIT_POLL_MS = 250;

/**
 * DELETE /v1/sessions/:id: the session is marked deleted (it answers 404 from now on, takes no
 * turn, and a running turn is asked to stop), then its data is removed asynchronously by an
 * invocation of the API function (`purge_session`), as continuations are: on Lambda the request's
 * own invocation ends with its response; locally the same event goes through the local Lambda
 * Invoke server to this process.
 */
export async function deleteSession(deps: DeleteSessionDeps, opts: { sessionId: string; tenantId: string }): Promise<void> {
  await deps.sessions.getForTenant(opts.sessionId, opts.tenantId);
  await deps.sessions.markDeleted(opts.sessionId, deps.clock());
  deps.log.info('session deleted; removing its data', { sessionId: opts.sessionId });
  await deps.continuations.schedule({ kind: 'purge_session', sessionId: opts.sessionId });
}

/**
 * Removes a deleted session's messages (its sub-agents' logs first), events, approvals,
 * persisted results and spilled payloads (harness prefixes), and its workspace's objects (with
 * the session-purge role's credentials, minted for this one session), then the session record. Waits first for a running turn to stop, so
 * nothing is written after it. Safe to run again: each step deletes what is left.
 */
export async function purgeSession(deps: DeleteSessionDeps, sessionId: string): Promise<void> {
  const until = deps.clock() + WAIT_FOR_TURN_MS;
  let session = await deps.sessions.get(sessionId);
  if (!session) return;
  if (session.deletedAt === undefined) throw new Error(`Refusing to purge session ${sessionId}: it is not deleted.`);
  while (session?.lease && !leaseIsDead(session.lease, deps.clock()) && deps.clock() < until) {
    await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
    session = await deps.sessions.get(sessionId);
  }
  if (!session) return;
  const warmCopyRemoved = await discardWarmCopy(deps, session);
  // Listing and deleting in the bucket is this path's alone: credentials of the session-purge role, narrowed to this session.
  const s3 = await deps.workspaceStorage(await deps.purgeCredentials.forSession({ sessionId, workspaceId: session.workspace.id }));
  const [toolResults, spill, workspace] = sessionPrefixes({ sessionId, workspaceId: session.workspace.id });
  const removed = {
    agentMessages: await deleteAgentLogs(deps, sessionId),
    messages: await deps.messages.deleteAll(sessionId),
    events: await deps.events.deleteAll(sessionId),
    approvals: await deps.approvals.deleteAll(sessionId),
    toolResults: await deletePrefix(s3, deps.config.bucket, toolResults!),
    spilled: await deletePrefix(s3, deps.config.bucket, spill!),
    workspaceObjects: await deletePrefix(s3, deps.config.bucket, workspace!),
  };
  // Its stored bytes stop counting against the tenant's quota once they are gone from S3.
  const releasedBytes = await deps.tenantUsage.releaseSession(session.tenantId, sessionId);
  await deps.sessions.remove(sessionId);
  deps.log.info('deleted session purged', { sessionId, warmCopyRemoved, releasedBytes, ...removed });
}

/**
 * Asks the runner, under the workspace's tenant id, to remove its warm copy of the workspace
 * (docs/workspaces.md), so the files leave the runner's disk with the session rather than when
 * the copy is evicted. A runner that cannot be reached does not stop the purge: its copy goes
 * when its environment does.
 */
async function discardWarmCopy(deps: DeleteSessionDeps, session: SessionRecord): Promise<boolean | 'failed'> {
  try {
    return (await runOp(deps, { sessionId: session.sessionId, workspace: session.workspace }, { type: 'discard_copy' })).result.removed;
  } catch (err) {
    deps.log.warn("could not remove the runner's warm copy of a deleted session's workspace", { sessionId: session.sessionId, error: errorMessage(err) });
    return 'failed';
  }
}

/**
 * Deletes every sub-agent log of a session, found through the logs that name them (the
 * session's own, then each sub-agent's, for sub-agents that spawned their own). A log is deleted
 * only after the logs it names, so a purge cut short finds the rest when it runs again. A fork's
 * log repeats its parent's messages, its own Agent call among them: each log is visited once.
 */
async function deleteAgentLogs(
  deps: { messages: Pick<MessageStore, 'loadFrom' | 'deleteAll'>; sessions: Pick<SessionStore, 'remove'> },
  sessionId: string,
): Promise<number> {
  const { messages } = deps;
  const visited = new Set<string>([sessionId]);
  const purge = async (logId: string): Promise<number> => {
    let removed = 0;
    for (const agentLog of agentLogIdsIn(sessionId, await messages.loadFrom(logId))) {
      if (visited.has(agentLog)) continue;
      visited.add(agentLog);
      removed += await purge(agentLog);
      // A background agent's record sits in the sessions table under its log's id; removing it
      // also stops one still running (its next heartbeat finds its lease gone).
      await deps.sessions.remove(agentLog);
      removed += await messages.deleteAll(agentLog);
    }
    return removed;
  };
  return purge(sessionId);
}
