import type { Artifact, Message, Task, TaskState, TaskStatus } from '@a2a-js/sdk';
import { waitsForPerson, type PendingApproval } from '../../stores/approval-store.ts';
import type { StoredMessage } from '../../stores/message-store.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import { assistantText, finalAnswer, remoteState, sessionDiff, type RemoteState } from '../remote/remote-view.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { dataPart, taskMessage, textPart } from './a2a-parts.ts';

/**
 * A session's state as the protocol's TaskState number (lf.a2a.v1.TaskState, fixed by its
 * protobuf schema; remote-view.ts names the states as both protocols do). Numbers, not the SDK's
 * enum, so this file needs only the SDK's types (the SDK itself loads on the first A2A request).
 */
export const TASK_STATES: Record<RemoteState, TaskState> = {
  submitted: 1 as TaskState,
  working: 2 as TaskState,
  completed: 3 as TaskState,
  failed: 4 as TaskState,
  canceled: 5 as TaskState,
  'input-required': 6 as TaskState,
};

/** How many of the newest messages a task's history is read from when the client gives no `historyLength`. */
const HISTORY_WINDOW = 100;

/** The calls that wait for a person: permission asks and the agent's questions. */
export async function waitingForPerson(deps: RemoteDeps, sessionId: string): Promise<PendingApproval[]> {
  return (await deps.approvals.listForSession(sessionId)).filter(waitsForPerson);
}

/** The session as an A2A task: its state, what it waits for, its conversation and (once a turn ended) its artifacts. */
export async function taskOf(deps: RemoteDeps, record: SessionRecord, opts: { historyLength?: number } = {}): Promise<Task> {
  const state = remoteState(record, deps.clock());
  const waiting = state === 'input-required' ? await waitingForPerson(deps, record.sessionId) : [];
  const ended = state === 'completed' || state === 'failed' || state === 'canceled';
  const answer = ended ? await finalAnswer(deps, record) : '';
  return {
    id: record.sessionId,
    contextId: record.sessionId,
    status: statusOf(record, state, waiting, answer),
    artifacts: ended ? await artifactsOf(deps, record, answer) : [],
    history: await historyOf(deps, record, opts.historyLength),
    metadata: { title: record.title ?? null, turns: record.turnCount, stopReason: record.lastTurn?.stopReason ?? null },
  };
}

/** The status, with a message saying what waits for an answer (and how to give it), why the task failed, or the answer. */
function statusOf(record: SessionRecord, state: RemoteState, waiting: PendingApproval[], answer: string): TaskStatus {
  const at = record.lastTurn?.turnId ?? record.sessionId;
  const say = (parts: Parameters<typeof taskMessage>[3]) => taskMessage(record.sessionId, `status_${at}_${state}`, 'agent', parts);
  let message: Message | undefined;
  if (state === 'input-required') message = say([textPart(waitingText(waiting)), dataPart({ waiting: waiting.map(waitingView) })]);
  else if (state === 'failed') message = say([textPart(record.lastTurn?.error ?? `The turn ended: ${record.lastTurn?.stopReason ?? 'failed'}.`)]);
  else if (answer) message = say([textPart(answer)]);
  return { state: TASK_STATES[state], message, timestamp: record.updatedAt };
}

/** A waiting call as the client needs it to answer: its id, tool and input, or its questions. */
export function waitingView(p: PendingApproval) {
  if (p.kind === 'question') return { toolUseId: p.toolUseId, kind: 'question' as const, questions: (p.input as { questions: unknown }).questions };
  return { toolUseId: p.toolUseId, kind: 'permission' as const, toolName: p.toolName, input: p.input, message: p.message ?? null };
}

function waitingText(waiting: PendingApproval[]): string {
  const lines = waiting.map((p) =>
    p.kind === 'question'
      ? `- ${p.toolUseId}: a question (answer with {"answers": {question: label}})`
      : `- ${p.toolUseId}: ${p.toolName} waits for permission`,
  );
  return `Waiting for an answer (reply with "allow" or "deny", or a data part {"decision": "allow" | "deny", "toolUseId"?}):\n${lines.join('\n')}`;
}

/** The final answer as text, and what changed in the workspace as one unified diff plus its per-file summary. */
async function artifactsOf(deps: RemoteDeps, record: SessionRecord, answer: string): Promise<Artifact[]> {
  const artifact = (artifactId: string, name: string, description: string, parts: Artifact['parts']): Artifact => ({
    artifactId,
    name,
    description,
    parts,
    metadata: undefined,
    extensions: [],
  });
  const artifacts = answer ? [artifact('answer', 'Final answer', "The agent's last answer", [textPart(answer)])] : [];
  if (record.turnCount === 0) return artifacts;
  const diff = await sessionDiff(deps, record);
  const unified = diff.files.map((f) => f.diff ?? '').join('');
  const summary = { from: diff.from, to: diff.to, totalFiles: diff.totalFiles, truncated: diff.truncated, files: diff.files.map(({ diff: _d, ...f }) => f) };
  const parts = [...(unified ? [textPart(unified, 'text/x-diff')] : []), dataPart(summary)];
  return [...artifacts, artifact('workspace-diff', 'Workspace diff', 'What the agent changed in the workspace since its first turn', parts)];
}

/** The prompts and the agent's text answers, oldest first; `historyLength` 0 leaves them out. */
export async function historyOf(deps: RemoteDeps, record: SessionRecord, historyLength: number | undefined): Promise<Message[]> {
  if (historyLength === 0) return [];
  const window = Math.min(historyLength ?? HISTORY_WINDOW, HISTORY_WINDOW);
  const recent = await deps.messages.loadFrom(record.sessionId, Math.max(0, record.messageCount - HISTORY_WINDOW));
  return recent.flatMap((m) => historyMessage(record.sessionId, m)).slice(-window);
}

function historyMessage(taskId: string, message: StoredMessage): Message[] {
  if (message.kind === 'prompt') {
    // The harness's own blocks (a <system-reminder> with the date, instructions) are not the client's words.
    const text = message.content.flatMap((b) => (b.type === 'text' && !b.text.startsWith('<system-reminder>') ? [b.text] : [])).join('\n');
    return text ? [taskMessage(taskId, message.uuid, 'user', [textPart(text)])] : [];
  }
  if (message.kind !== 'assistant') return [];
  const text = assistantText(message);
  return text ? [taskMessage(taskId, message.uuid, 'agent', [textPart(text)])] : [];
}
