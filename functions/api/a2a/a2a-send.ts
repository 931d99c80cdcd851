import type { SendMessageRequest } from '@a2a-js/sdk';
import { z } from 'zod';
import { PERMISSION_MODES } from '../../permissions/types.ts';
import { UserError } from '../../shared/errors.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import { startTurn, startTurnAsync, type TurnHandle } from '../../turn/turn.ts';
import { openRemoteSession, type RemoteDeps, type RemoteSource } from '../remote/remote-sessions.ts';
import { remoteSession, turnEventsOf } from '../remote/remote-turns.ts';
import { answerWaiting } from './a2a-answers.ts';
import { keepGoingFor, type A2aCall, type FollowedTurn } from './a2a-follow.ts';
import { messageText } from './a2a-parts.ts';
import { savePushTarget } from './a2a-push.ts';
import { waitingForPerson } from './a2a-task.ts';

/** Where a new task's workspace comes from: the metadata of its first message (or of the request). */
const sourceMetadata = z.object({
  title: z.string().max(200).optional(),
  gitUrl: z.string().min(1).max(2048).optional(),
  ref: z.string().min(1).max(255).optional(),
  files: z.record(z.string(), z.string()).optional(),
  permissionMode: z.enum(PERMISSION_MODES).optional(),
});

/** What a message started: the task's session, and the events of the turn it runs here (none when it still waits, or runs elsewhere). */
export interface Started {
  record: SessionRecord;
  turn?: FollowedTurn;
}

/** A turn this invocation runs: followed live, then through the event log if it continues elsewhere. */
function followed(deps: RemoteDeps, call: A2aCall, turn: TurnHandle): FollowedTurn {
  return { events: turnEventsOf(deps, turn, keepGoingFor(call)), endsHere: turn.done.then((s) => s.stopReason !== 'checkpoint') };
}

/**
 * Acts on a client's message: opens a new task (session) when it names none, records the
 * request's push notification config, then either answers what the task waits for (an
 * input-required task: the message is the answer, and the turn resumes once nothing waits)
 * or runs the message's text as the next turn's prompt.
 */
export async function startFromMessage(deps: RemoteDeps, call: A2aCall, params: SendMessageRequest): Promise<Started> {
  const message = params.message;
  if (!message || message.parts.length === 0) throw new UserError('The request needs a message with at least one part.');
  let record = message.taskId ? await remoteSession(deps, message.taskId, call.tenantId) : await openTask(deps, call, params);
  const push = params.configuration?.taskPushNotificationConfig;
  if (push) {
    await savePushTarget(deps, record, push);
    record = await remoteSession(deps, record.sessionId, call.tenantId);
  }
  const at = { sessionId: record.sessionId, tenantId: call.tenantId, ...(call.deadlineAt ? { deadlineAt: call.deadlineAt } : {}) };
  const waiting = await waitingForPerson(deps, record.sessionId);
  if (waiting.length > 0) {
    if (!(await answerWaiting(deps, record.sessionId, message, waiting))) return { record: await remoteSession(deps, record.sessionId, call.tenantId) };
    const turn = await startTurn(deps, { ...at, resume: true });
    return { record: await remoteSession(deps, record.sessionId, call.tenantId), turn: followed(deps, call, turn) };
  }
  const prompt = messageText(message);
  if (!prompt) throw new UserError('The message has no text part: there is no prompt to run.');
  if (params.configuration?.returnImmediately) {
    await startTurnAsync(deps, { ...at, prompt });
    return { record: await remoteSession(deps, record.sessionId, call.tenantId) };
  }
  const turn = await startTurn(deps, { ...at, prompt });
  return { record: await remoteSession(deps, record.sessionId, call.tenantId), turn: followed(deps, call, turn) };
}

/** A new session for a message that names no task, from the source its metadata gives (an empty workspace by default). */
async function openTask(deps: RemoteDeps, call: A2aCall, params: SendMessageRequest): Promise<SessionRecord> {
  const parsed = sourceMetadata.safeParse({ ...(params.metadata ?? {}), ...(params.message?.metadata ?? {}) });
  if (!parsed.success) throw new UserError(`The message's metadata is not valid: ${parsed.error.issues[0]?.message ?? 'unknown'}.`);
  const { gitUrl, ref, ...rest } = parsed.data;
  const source: RemoteSource = { ...rest, ...(gitUrl ? { git: { url: gitUrl, ...(ref ? { ref } : {}) } } : {}) };
  return openRemoteSession(deps, call.tenantId, source);
}
