import { awaitsPerson, leaseIsDead, type SessionRecord } from '../../stores/session-store.ts';
import type { StoredMessage } from '../../stores/message-store.ts';
import { runWorkspaceOp } from '../../workspaces/workspace-ops.ts';
import type { RemoteDeps } from './remote-sessions.ts';

/** Where a session stands, in the words both remote protocols use for a task. */
export type RemoteState = 'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed';

/** Stop reasons of a turn that ended without doing what it was asked (an error, a crash, a budget). */
const FAILED_STOPS = new Set(['internal_error', 'model_error', 'crashed', 'budget_exceeded', 'aborted']);

/** A session's state: running, waiting for answers, or how its last turn ended. */
export function remoteState(record: SessionRecord, now: number): RemoteState {
  if (record.lease && !leaseIsDead(record.lease, now) && record.lease.turnId.startsWith('turn_')) return 'working';
  if (awaitsPerson(record.status)) return 'input-required';
  const stop = record.lastTurn?.stopReason;
  if (stop === undefined) return 'submitted';
  if (stop === 'interrupted') return 'canceled';
  return FAILED_STOPS.has(stop) || record.status === 'failed' ? 'failed' : 'completed';
}

/** The text of an assistant message (its text blocks, joined). */
export function assistantText(message: StoredMessage): string {
  return message.content
    .flatMap((b) => (b.type === 'text' ? [b.text] : []))
    .join('\n')
    .trim();
}

/** How many of the newest messages are read for a session's last answer. */
const ANSWER_WINDOW = 200;

/** The last thing the agent said in text: the final answer of its last turn (empty before any). */
export async function finalAnswer(deps: RemoteDeps, record: SessionRecord): Promise<string> {
  const recent = await deps.messages.loadFrom(record.sessionId, Math.max(0, record.messageCount - ANSWER_WINDOW));
  for (const message of recent.reverse()) {
    if (message.kind !== 'assistant') continue;
    const text = assistantText(message);
    if (text) return text;
  }
  return '';
}

/** What changed in the session's workspace since its first turn started, as unified diffs (GET …/workspace/diff). */
export async function sessionDiff(deps: RemoteDeps, record: SessionRecord) {
  const to = record.workspace.version;
  const from = record.workspaceBase ?? to;
  const result = await runWorkspaceOp(deps, record, { type: 'workspace_diff', from, to });
  return { from, to, files: result.files, totalFiles: result.totalFiles, truncated: result.truncated };
}
