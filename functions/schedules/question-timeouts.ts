import type { Deps, DepsOf } from '../deps/deps.ts';
import { ConflictError, errorMessage } from '../shared/errors.ts';
import { waitsForPerson } from '../stores/approval-store.ts';
import type { TurnSummary } from '../stores/session-store.ts';
import { startTurn } from '../turn/turn.ts';
import { expireQuestions } from '../session/answer-question.ts';
import { handResumedTurnToGithub, type ResumedRunDeps } from '../github/resumed-run.ts';

export type QuestionTimeoutDeps = Pick<Deps, 'approvals' | 'sessions' | 'clock' | 'log'> & DepsOf<typeof startTurn> & ResumedRunDeps;

/**
 * Closes the session's questions whose time ran out without an answer, then, when nothing
 * waits for a person any more, resumes the turn (the calls run with "no answer"). A turn
 * already resuming, or a session with nothing closed, is left alone: the first resume wins.
 * When this call closed the last wait of a GitHub run's session, the worker follows the turn
 * (whoever resumed it) and publishes it.
 */
export async function resumeExpiredQuestions(deps: QuestionTimeoutDeps, sessionId: string, deadlineAt?: number): Promise<TurnSummary | undefined> {
  const record = await deps.sessions.get(sessionId);
  if (!record) return undefined;
  const expired = await expireQuestions(deps, sessionId);
  const pending = await deps.approvals.listForSession(sessionId);
  if (pending.length === 0 || pending.some(waitsForPerson)) return undefined;
  let turn: Awaited<ReturnType<typeof startTurn>> | undefined;
  try {
    turn = await startTurn(deps, { sessionId, tenantId: record.tenantId, resume: true, deadlineAt });
  } catch (err) {
    // Another instance resumed it first (busy, or nothing left to resume).
    if (!(err instanceof ConflictError)) throw err;
  }
  if (expired.length > 0) await handResumedTurnToGithub(deps, sessionId, expired[0]!);
  return turn?.done;
}

/** Every session with a question to go on from (each tick of the local scheduler). */
export async function sweepExpiredQuestions(deps: QuestionTimeoutDeps): Promise<void> {
  for (const sessionId of await deps.approvals.sessionsWithQuestionsToResume(deps.clock())) {
    await resumeExpiredQuestions(deps, sessionId).catch((err: unknown) =>
      deps.log.error('resuming after a question timed out failed', { sessionId, error: errorMessage(err) }),
    );
  }
}
