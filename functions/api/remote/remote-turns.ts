import { withDeadLeaseFreed } from '../../turn/crashed-turn.ts';
import { followTurn } from '../../turn/follow-turn.ts';
import { interruptTurn, type InterruptOutcome } from '../../turn/interrupt-turn.ts';
import { startTurn, type TurnHandle } from '../../turn/turn.ts';
import { ConflictError, NotFoundError } from '../../shared/errors.ts';
import type { PendingApproval } from '../../stores/approval-store.ts';
import type { StoredTurnEvent } from '../../stores/event-store.ts';
import type { SessionRecord } from '../../stores/session-store.ts';
import type { RemoteDeps } from './remote-sessions.ts';

/** A session as a remote caller sees it: freed first if the turn holding it died. */
export async function remoteSession(deps: RemoteDeps, sessionId: string, tenantId: string): Promise<SessionRecord> {
  return withDeadLeaseFreed(deps, await deps.sessions.getForTenant(sessionId, tenantId));
}

/** The calls that wait for a person's answer (`ask`); `deferred` ones run once those are answered. */
export async function pendingAsks(deps: RemoteDeps, sessionId: string): Promise<PendingApproval[]> {
  return (await deps.approvals.listForSession(sessionId)).filter((p) => p.kind === 'ask' && p.decision === undefined);
}

export interface PermissionAnswer {
  /** One waiting call; without it, every waiting call gets the same answer. */
  toolUseId?: string;
  decision: 'allow' | 'deny';
  /** Deny only: what the model is told instead. */
  message?: string;
}

/**
 * Answers waiting calls as POST …/permissions/:toolUseId does. When none waits any more the
 * turn resumes (its handle is returned); until then, undefined.
 */
export async function answerPermission(
  deps: RemoteDeps,
  at: { sessionId: string; tenantId: string; deadlineAt?: number },
  answer: PermissionAnswer,
): Promise<TurnHandle | undefined> {
  await deps.sessions.getForTenant(at.sessionId, at.tenantId);
  const waiting = await pendingAsks(deps, at.sessionId);
  const chosen = answer.toolUseId === undefined ? waiting : waiting.filter((p) => p.toolUseId === answer.toolUseId);
  if (chosen.length === 0) {
    if (answer.toolUseId === undefined) throw new ConflictError(`Session ${at.sessionId} has no tool calls waiting for answers.`, 'nothing_to_resume');
    throw new NotFoundError(`No tool call ${answer.toolUseId} is waiting for permission in session ${at.sessionId}.`);
  }
  const decidedAt = new Date(deps.clock()).toISOString();
  for (const p of chosen) {
    const feedback = answer.decision === 'deny' && answer.message ? { feedback: answer.message } : {};
    await deps.approvals.decide(at.sessionId, p.toolUseId, { decision: answer.decision, remember: false, decidedAt, ...feedback });
  }
  if ((await pendingAsks(deps, at.sessionId)).length > 0) return undefined;
  return startTurn(deps, { sessionId: at.sessionId, tenantId: at.tenantId, resume: true, ...(at.deadlineAt ? { deadlineAt: at.deadlineAt } : {}) });
}

/** Stops the session's running turn (409 `turn_not_running` when none runs). */
export async function interruptRunning(deps: RemoteDeps, sessionId: string, tenantId: string): Promise<InterruptOutcome> {
  const record = await remoteSession(deps, sessionId, tenantId);
  const turnId = record.lease?.turnId;
  if (!turnId?.startsWith('turn_')) throw new ConflictError(`Session ${sessionId} has no running turn.`, 'turn_not_running');
  return interruptTurn(deps, { sessionId, tenantId, turnId });
}

/**
 * A turn's events as they happen, ending with its turn_end: the live feed of a turn this
 * process runs, then (a turn that continued in another invocation) its durable log, while
 * `keepGoing` allows.
 */
export async function* turnEventsOf(deps: RemoteDeps, turn: TurnHandle, keepGoing: () => boolean): AsyncGenerator<StoredTurnEvent> {
  let last = -1;
  for await (const stored of turn.events.live.read()) {
    last = stored.seq;
    yield stored;
    if (stored.event.type === 'turn_end') return;
  }
  await turn.done;
  yield* followTurn(deps, turn.sessionId, turn.turnId, last, keepGoing);
}
