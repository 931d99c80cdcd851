import type { StreamResponse, Task, TaskState } from '@a2a-js/sdk';
import { errorMessage } from '../../shared/errors.ts';
import type { StoredTurnEvent } from '../../stores/event-store.ts';
import type { TurnEvent } from '../../stores/turn-event.ts';
import { remoteSession } from '../remote/remote-turns.ts';
import type { RemoteDeps } from '../remote/remote-sessions.ts';
import { taskMessage, textPart } from './a2a-parts.ts';
import { notifyTask } from './a2a-push.ts';
import { TASK_STATES, taskOf } from './a2a-task.ts';

/** A turn an A2A call follows: its events, and whether its end comes in this invocation (then this call pushes it). */
export interface FollowedTurn {
  events: AsyncIterable<StoredTurnEvent>;
  endsHere: Promise<boolean>;
}

/** Where a call runs: the caller's tenant and this invocation's deadline. */
export interface A2aCall {
  tenantId: string;
  deadlineAt?: number;
}

/** A stream following a turn stops this long before the invocation's deadline (the client subscribes again). */
const DEADLINE_MARGIN_MS = 10_000;

/** Whether a follower may keep waiting for a turn's next event in this invocation. */
export function keepGoingFor(call: A2aCall): () => boolean {
  return () => call.deadlineAt === undefined || call.deadlineAt - Date.now() > DEADLINE_MARGIN_MS;
}

/**
 * A turn's events as A2A stream responses: a `working` status update per step (turn started,
 * tool running, tool finished), then, once the turn ended (or the follow stopped near the
 * deadline), the task's artifacts and its final status. When the turn ended in this invocation
 * the task is pushed to the client's webhooks (a turn that ends in a continuation is pushed
 * there: notifyTaskEnd). Returns that task.
 */
export async function* streamOfTurn(deps: RemoteDeps, call: A2aCall, sessionId: string, turn: FollowedTurn): AsyncGenerator<StreamResponse, Task> {
  for await (const { seq, event } of turn.events) {
    const step = stepText(event);
    if (step) yield statusUpdate(sessionId, TASK_STATES.working, `${event.type}_${seq}`, step);
  }
  const record = await remoteSession(deps, sessionId, call.tenantId);
  const task = await taskOf(deps, record, { historyLength: 0 });
  if (await turn.endsHere) await notifyTask(deps, record, task);
  for (const artifact of task.artifacts) {
    yield {
      payload: { $case: 'artifactUpdate', value: { taskId: sessionId, contextId: sessionId, artifact, append: false, lastChunk: true, metadata: undefined } },
    };
  }
  yield { payload: { $case: 'statusUpdate', value: { taskId: sessionId, contextId: sessionId, status: task.status, metadata: undefined } } };
  return task;
}

/**
 * Pushes a task whose turn ended in a continuation (a `returnImmediately` send, or a turn past
 * its first invocation's deadline): that invocation is the one that sees the end. A session
 * without webhooks costs one read.
 */
export async function notifyTaskEnd(deps: RemoteDeps, sessionId: string): Promise<void> {
  try {
    const record = await deps.sessions.get(sessionId);
    if (!record?.pushNotifications?.length) return;
    await notifyTask(deps, record, await taskOf(deps, record, { historyLength: 0 }));
  } catch (err) {
    // The turn is over and recorded: a failed push must not fail (and so redrive) its continuation.
    deps.log.warn('A2A push notification of a continued turn failed', { sessionId, error: errorMessage(err) });
  }
}

function statusUpdate(taskId: string, state: TaskState, messageId: string, text: string): StreamResponse {
  const message = taskMessage(taskId, messageId, 'agent', [textPart(text)]);
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId, contextId: taskId, status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined },
    },
  };
}

/** One line per step a client following the task cares about (as the MCP adapter's progress); nothing for deltas and bookkeeping. */
function stepText(event: TurnEvent): string | undefined {
  switch (event.type) {
    case 'turn_start':
      return 'Turn started';
    case 'tool_use':
      return `Running ${event.name}`;
    case 'tool_result':
      return `${event.toolName} ${event.isError ? 'failed' : 'finished'}`;
    default:
      return undefined;
  }
}
