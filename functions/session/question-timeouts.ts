import type { Deps, DepsOf } from '../deps/deps.ts';
import { ConflictError, errorMessage } from '../shared/errors.ts';
import { waitsForPerson } from '../stores/approval-store.ts';
import type { TurnSummary } from '../stores/session-store.ts';
import { startTurn } from '../turn/turn.ts';
import { expireQuestions } from './answer-question.ts';

export type QuestionTimeoutDeps = Pick<Deps, 'approvals' | 'sessions' | 'clock' | 'log'> & DepsOf<typeof startTurn>;

/**
 * Closes the session's questions whose time ran out without an answer, then, when nothing
 * waits for a person any more, resumes the turn (the calls run with "no answer"). A turn
 * already resuming, or a session with nothing closed, is left alone: the first resume wins.
 */
export async function resumeExpiredQuestions(deps: QuestionTimeoutDeps, sessionId: string, deadlineAt?: number): Promise<TurnSummary | undefined> {
  const record = await deps.sessions.get(sessionId);
  if (!record) return undefined;
  await expireQuestions(deps, sessionId);
  const pending = await deps.approvals.listForSession(sessionId);
  if (pending.length === 0 || pending.some(waitsForPerson)) return undefined;
  try {
    const turn = await startTurn(deps, { sessionId, tenantId: record.tenantId, resume: true, deadlineAt });
    return await turn.done;
  } catch (err) {
    // Another instance resumed it first (busy, or nothing left to resume).
    if (err instanceof ConflictError) return undefined;
    throw err;
  }
}

/** Every session with a question to go on from (each tick of the local scheduler). */
export async function sweepExpiredQuestions(deps: QuestionTimeoutDeps): Promise<void> {
  for (const sessionId of await deps.approvals.sessionsWithQuestionsToResume(deps.clock())) {
    await resumeExpiredQuestions(deps, sessionId).catch((err: unknown) =>
      deps.log.error('resuming after a question timed out failed', { sessionId, error: errorMessage(err) }),
    );
  }
}
