import type { Deps } from '../deps/deps.ts';
import { UserError } from '../shared/errors.ts';
import type { ScheduleRecord } from '../stores/schedule-store.ts';

/** The target after a PATCH: `sessionId` moves it to that session (or, null, to a new session per run); `files` reseed new sessions. */
export async function patchedTarget(
  deps: Pick<Deps, 'sessions'>,
  tenantId: string,
  current: ScheduleRecord['target'],
  change: { sessionId?: string | null; files?: Record<string, string | { base64: string }> },
): Promise<ScheduleRecord['target']> {
  if (change.sessionId && change.files) throw new UserError('Give either "sessionId" or "files", not both.');
  if (change.sessionId) {
    await deps.sessions.getForTenant(change.sessionId, tenantId);
    return { sessionId: change.sessionId };
  }
  if (change.sessionId === null || change.files) {
    const files = change.files ?? ('newSession' in current ? current.newSession.files : undefined);
    return { newSession: { ...(files ? { files } : {}) } };
  }
  return current;
}
